//! A bounded pool of device buffers, reused by size class.
//!
//! Sizes round up to one of four classes per power of two (at most 25% slack; every size a
//! multiple of 16 bytes, which vec4 kernels rely on), so a freed
//! buffer serves any later request of its class. Freed buffers are kept while the bytes held
//! idle stay under the bound (`ENGINE_POOL_BYTES`, default 1 GiB); a freed buffer that would
//! pass it makes room by releasing the largest idle buffers first, so that one stale large
//! buffer (a 1 GiB benchmark copy, say) cannot stop every later small one from being kept.
//! The pool counts bytes in use and their peak, the figure benchmarks report as peak memory.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Smallest buffer handed out, in bytes.
const MIN_BYTES: u64 = 256;
/// Default bound on idle bytes kept for reuse.
const DEFAULT_IDLE_BOUND: u64 = 1 << 30;

/// Byte counts of a context's buffer pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes in buffers held by live tensors now.
    pub in_use: u64,
    /// Largest `in_use` since the context was made or the peak was reset.
    pub peak_in_use: u64,
    /// Bytes in idle buffers kept for reuse.
    pub idle: u64,
    /// Buffers created by the device so far (misses).
    pub created: u64,
    /// Requests served from idle buffers (hits).
    pub reused: u64,
}

struct Shelves<B = wgpu::Buffer> {
    /// Idle buffers by size class, smallest class first.
    idle: BTreeMap<u64, Vec<B>>,
    stats: PoolStats,
}

impl<B> Default for Shelves<B> {
    fn default() -> Self {
        Shelves {
            idle: BTreeMap::new(),
            stats: PoolStats::default(),
        }
    }
}

impl<B> Shelves<B> {
    /// Keeps a freed buffer of `class` bytes idle if it fits under `bound`, releasing idle
    /// buffers of the largest classes first to make room. Returns what was released.
    fn keep(&mut self, buffer: B, class: u64, bound: u64) -> Vec<B> {
        let mut released = Vec::new();
        if class > bound {
            released.push(buffer);
            return released;
        }
        while self.stats.idle + class > bound {
            let Some(mut largest) = self.idle.last_entry() else {
                break;
            };
            if let Some(b) = largest.get_mut().pop() {
                self.stats.idle -= *largest.key();
                released.push(b);
            }
            if largest.get().is_empty() {
                largest.remove();
            }
        }
        self.stats.idle += class;
        self.idle.entry(class).or_default().push(buffer);
        released
    }
}

pub(crate) struct BufferPool {
    device: wgpu::Device,
    shelves: Arc<Mutex<Shelves>>,
    max_buffer: u64,
    idle_bound: u64,
}

/// A buffer on loan from the pool; it goes back to the pool when dropped.
pub(crate) struct PooledBuffer {
    buffer: Option<wgpu::Buffer>,
    class: u64,
    shelves: Arc<Mutex<Shelves>>,
    idle_bound: u64,
    /// For a buffer of a plan capture's pool: set once the plan has replayed, before which
    /// the buffer holds nothing the plan wrote (`None` for eager buffers).
    replayed: Option<Arc<AtomicBool>>,
}

impl PooledBuffer {
    /// This buffer, marked as a plan's: unwritten until `replayed` is set.
    pub fn for_plan(mut self, replayed: Arc<AtomicBool>) -> Self {
        self.replayed = Some(replayed);
        self
    }

    /// True for a plan's buffer before the plan's first replay.
    pub fn awaiting_replay(&self) -> bool {
        self.replayed.as_ref().is_some_and(|r| !r.load(Ordering::Acquire))
    }

    #[allow(clippy::expect_used, reason = "the Option is taken only in Drop, after the last use")]
    pub fn buffer(&self) -> &wgpu::Buffer {
        self.buffer.as_ref().expect("present until drop")
    }
}

impl Drop for PooledBuffer {
    fn drop(&mut self) {
        let Some(buffer) = self.buffer.take() else { return };
        let mut s = self.shelves.lock().unwrap_or_else(|p| p.into_inner());
        s.stats.in_use -= self.class;
        let released = s.keep(buffer, self.class, self.idle_bound);
        drop(s);
        // Dropping a wgpu buffer frees it once the device is done with it.
        drop(released);
    }
}

/// The size class of a request: the next of 1, 1.25, 1.5, 1.75 times a power of two.
fn size_class(bytes: u64) -> u64 {
    if bytes <= MIN_BYTES {
        return MIN_BYTES;
    }
    let step = 1u64 << (63 - bytes.leading_zeros()).saturating_sub(2);
    bytes.div_ceil(step) * step
}

/// The idle bound `ENGINE_POOL_BYTES` asks for (a decimal byte count; unset: 1 GiB). A value
/// that is not a non-negative integer (`abc`, `-1`, `1e9`, non-UTF-8) is an error.
pub(crate) fn idle_bound_from_env() -> crate::error::Result<u64> {
    match std::env::var_os("ENGINE_POOL_BYTES") {
        None => Ok(DEFAULT_IDLE_BOUND),
        Some(v) => v.to_str().and_then(|s| s.trim().parse::<u64>().ok()).ok_or_else(|| {
            crate::error::Error::value(
                "Context::new",
                "ENGINE_POOL_BYTES",
                "a byte count (a non-negative decimal integer)",
                format!("{v:?}"),
            )
        }),
    }
}

impl BufferPool {
    pub fn new(device: wgpu::Device, max_buffer: u64) -> Self {
        // Contexts check the variable before they get here (`Context::from_adapter` fails on
        // a bad value); a device handed over by the application warns instead.
        let idle_bound = idle_bound_from_env().unwrap_or_else(|e| {
            log::warn!("{e}; keeping the default");
            eprintln!("engine: {e}; keeping the default");
            DEFAULT_IDLE_BOUND
        });
        BufferPool {
            device,
            shelves: Arc::default(),
            max_buffer,
            idle_bound,
        }
    }

    /// A pool that keeps every freed buffer (a plan capture's private pool).
    pub fn unbounded(device: wgpu::Device, max_buffer: u64) -> Self {
        BufferPool {
            device,
            shelves: Arc::default(),
            max_buffer,
            idle_bound: u64::MAX,
        }
    }

    /// A storage buffer of at least `bytes` bytes (contents unspecified).
    pub fn acquire(&self, bytes: u64) -> PooledBuffer {
        // Near the device limit, allocate exactly rather than round past it, still to a whole
        // number of 16-byte words: vec4 kernels address a view's last, partial vec4.
        let class = match size_class(bytes) {
            c if c > self.max_buffer => bytes.max(16).next_multiple_of(16).min(self.max_buffer),
            c => c,
        };
        let mut s = self.shelves.lock().unwrap_or_else(|p| p.into_inner());
        let reused = s.idle.get_mut(&class).and_then(|v| v.pop());
        if s.idle.get(&class).is_some_and(|v| v.is_empty()) {
            s.idle.remove(&class);
        }
        let buffer = match reused {
            Some(b) => {
                s.stats.idle -= class;
                s.stats.reused += 1;
                b
            }
            None => {
                s.stats.created += 1;
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("engine tensor"),
                    size: class,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            }
        };
        s.stats.in_use += class;
        s.stats.peak_in_use = s.stats.peak_in_use.max(s.stats.in_use);
        PooledBuffer {
            buffer: Some(buffer),
            class,
            shelves: self.shelves.clone(),
            idle_bound: self.idle_bound,
            replayed: None,
        }
    }

    pub fn stats(&self) -> PoolStats {
        self.shelves.lock().unwrap_or_else(|p| p.into_inner()).stats
    }

    pub fn reset_peak(&self) {
        let mut s = self.shelves.lock().unwrap_or_else(|p| p.into_inner());
        s.stats.peak_in_use = s.stats.in_use;
    }

    /// Releases every idle buffer.
    pub fn trim(&self) {
        let mut s = self.shelves.lock().unwrap_or_else(|p| p.into_inner());
        s.idle.clear();
        s.stats.idle = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::{size_class, Shelves};

    #[test]
    fn a_freed_buffer_past_the_bound_releases_the_largest_idle_ones() {
        let mut s = Shelves::<u32>::default();
        assert!(s.keep(1, 1000, 1000).is_empty());
        // A small buffer returned while the bound is full of one stale large one: the large
        // one goes, the small one stays.
        assert_eq!(s.keep(2, 300, 1000), vec![1]);
        assert_eq!((s.stats.idle, s.idle.len()), (300, 1));
        assert!(s.keep(3, 300, 1000).is_empty());
        assert!(s.keep(4, 256, 1000).is_empty());
        assert_eq!(s.stats.idle, 856);
        // Room for 512 more: both 300s go (largest class first), the 256 stays.
        assert_eq!(s.keep(5, 512, 1000), vec![3, 2]);
        assert_eq!(s.stats.idle, 256 + 512);
        assert_eq!(s.idle.keys().copied().collect::<Vec<_>>(), vec![256, 512]);
        // A buffer larger than the bound is never kept.
        assert_eq!(s.keep(6, 2000, 1000), vec![6]);
    }

    #[test]
    fn size_classes_round_up_by_at_most_a_quarter() {
        assert_eq!(size_class(1), 256);
        assert_eq!(size_class(256), 256);
        assert_eq!(size_class(257), 320);
        assert_eq!(size_class(1024), 1024);
        assert_eq!(size_class(1025), 1280);
        for b in [300u64, 1000, 4097, 123_457, 10_000_000] {
            let c = size_class(b);
            assert!(c >= b && c <= b + b / 4 + 64, "{b} -> {c}");
            assert_eq!(size_class(c), c, "a class is its own class");
        }
    }
}
