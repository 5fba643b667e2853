//! # The tuner: measured choices between an op's correct paths, remembered per adapter
//!
//! An op with more than one correct path for a shape (a matmul's tile kernels, a channel
//! scan's channels per invocation) names its candidates, the hand rule first, and a bucketed
//! shape key (`key`). On the first call with a key this context does not know, the device
//! glue (`crate::context`'s tuning seam) runs each candidate once to warm up and a few times
//! timed (`measure`), keeps the fastest and records it here; later calls with the key take
//! it without timing. Every candidate an op offers computes the same bits as the hand rule
//! (its own contract), so a tuning call changes speed only, never a result. The one
//! exception is asked for by name: a scan called with `Strategy::Tuned` lets the tuner pick
//! its walk ([`Family::ScanWalk`]) and a k x v scan its kernels too ([`Family::MatrixScan`]),
//! whose candidates agree within the scan's gate.
//!
//! This layer holds no device: the mode ([`TuneMode`], `ENGINE_TUNE`), the entries
//! ([`TuneEntry`]) in memory per context, the time spent per family, and natively the JSON
//! file they persist to ([`file`], `ENGINE_TUNE_CACHE`). It sits below `context`, which owns
//! one `Tuner` per GPU context.

pub(crate) mod file;
pub(crate) mod key;
pub(crate) mod measure;
mod mode;
mod state;

pub use mode::TuneMode;
pub(crate) use state::Tuner;
pub use state::{TuneEntry, TuneTime};

/// `Sync` natively, where the candidates' warm-ups run side by side on threads; nothing in
/// wasm, where wgpu's types are not `Sync` and the tuner never times (a browser's waits would
/// block), so the ops' runs need not be.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSync: Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Sync + ?Sized> MaybeSync for T {}
/// `Sync` natively; nothing in wasm (see the native definition).
#[cfg(target_arch = "wasm32")]
pub trait MaybeSync {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSync for T {}

/// An op family whose path the tuner chooses. The name is what the cache file stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// `ops::matmul` and the linear layers under `MatmulPath::Auto`: which tile kernel
    /// (`tiled16`, `register_tiled`, `large_tile`) computes a product the hand rule gives to
    /// one of them. All walk K in order with one fused multiply-add per step per output.
    Matmul,
    /// The channel-wise scans (`linear_scan`, `parallel_scan_log`, forward and backward):
    /// how many adjacent channels one invocation carries (`scalar`, `vec2`, `vec4`) under the
    /// strategy plan the hand rule made. Every channel walks the same steps either way.
    ChannelScan,
    /// The elementwise kernels (`ops::unary`, `ops::binary`, `fused::run`, GELU) where every
    /// operand can be read four elements at a time: the `vec4` form (the rule) or the
    /// `scalar` form, one element per invocation. Both evaluate the one body on each element.
    Elementwise,
    /// The walk of a channel scan (`linear_scan`, `parallel_scan_log`) called with
    /// `Strategy::Tuned`: `auto` (the hand rule: lane walks or chunked passes), `lookback` (one
    /// pass, carries by decoupled look-back), `lanes` or `chunked`. The one family whose
    /// candidates round differently: the walks combine the steps in different orders, so
    /// their results agree within the scan's gate, not bit for bit. It is tuned only where
    /// the caller asks for it; `Strategy::Auto` keeps the hand rule's walk.
    ScanWalk,
    /// The k x v scans (`matrix_scan`, `matrix_affine_scan` past k = v = 1, forward and the
    /// backward's adjoint scan) called with `Strategy::Tuned`: which kernel set (`generic`,
    /// or the specialisation the shape has: `affine8` at k = 8, `matrix2` at (2, 1)) under
    /// which walk (`auto`, `lanes`, `chunked`), e.g. `affine8 auto`. The kernels sum a row's k
    /// products in different orders (two vec4 dot products, or one by one) and the walks
    /// combine carries differently, so like [`Family::ScanWalk`] the candidates agree within
    /// the scan's gate, and only a caller who asks for `Strategy::Tuned` gets them.
    MatrixScan,
    /// Which context a program's workload runs on where every adapter is a software one
    /// (`Context::fastest_for`): `cpu` (the CPU reference) or a software adapter's backend
    /// (`vulkan`, `gl`). The key is the workload's name. The candidates run the same ops in
    /// different precisions (the CPU reference sums in f64), so only a program that asks for
    /// it gets this choice.
    Context,
}

impl Family {
    /// Every family, in the order reports list them.
    pub const ALL: [Family; 6] = [
        Family::Matmul,
        Family::ChannelScan,
        Family::Elementwise,
        Family::ScanWalk,
        Family::MatrixScan,
        Family::Context,
    ];

    /// The name in the cache file and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Family::Matmul => "matmul",
            Family::ChannelScan => "channel_scan",
            Family::Elementwise => "elementwise",
            Family::ScanWalk => "scan_walk",
            Family::MatrixScan => "matrix_scan",
            Family::Context => "context",
        }
    }

    /// The family named `name` (as [`Family::name`] writes it).
    pub fn from_name(name: &str) -> Option<Family> {
        Family::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Reads a tune cache file's text as a context does (`file::from_json`), for the adapter of
/// the format's documented example (llvmpipe, Vulkan, this engine version): the entries, or
/// why the file is refused. The fuzz targets' entry point (`fuzz/entry.rs`); never panics.
#[doc(hidden)]
pub fn parse_cache_text(text: &str) -> Result<Vec<TuneEntry>, String> {
    let identity = Identity {
        adapter: "llvmpipe (LLVM 19.1.7, 256 bits)".into(),
        vendor: 65541,
        device: 0,
        driver: "llvmpipe Mesa 25.0.7".into(),
        backend: "Vulkan".into(),
        engine: env!("CARGO_PKG_VERSION").into(),
    };
    file::from_json(text, &identity)
}

/// Who a context's tuned entries belong to: the key of its section of the cache file; the
/// sections of another adapter, driver, backend or engine version are kept, never used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    pub adapter: String,
    pub vendor: u32,
    pub device: u32,
    pub driver: String,
    pub backend: String,
    /// `CARGO_PKG_VERSION`: kernels change between versions, and with them the timings.
    pub engine: String,
}
