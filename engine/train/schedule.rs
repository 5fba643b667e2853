//! Learning-rate schedules: the rate of each step, from a linear warm-up and a cosine
//! decay (the GPT-2 / nanoGPT recipe), for an eager loop to set on its optimiser before each
//! step (`adam.lr = schedule.lr(step)`). A [`crate::train::CompiledStep`] captures the rate
//! it was captured with, so a schedule drives eager steps.
//!
//! ```
//! use wgsl_compute::train::LrSchedule;
//! let s = LrSchedule::warmup_cosine(1e-3, 10, 100, 1e-4)?;   // peak, warm-up, total, floor
//! assert!((s.lr(0) - 1e-4).abs() < 1e-9);                    // (0 + 1) / 10 of the peak
//! assert_eq!(s.lr(9), 1e-3);                                  // the peak at the warm-up's end
//! assert!(s.lr(50) < 1e-3 && s.lr(50) > 1e-4);                // decaying
//! assert_eq!(s.lr(100), 1e-4);                                // the floor from `total` on
//! # Ok::<(), wgsl_compute::Error>(())
//! ```

use crate::error::{Error, Result};

/// The learning rate as a function of the step (0-based).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LrSchedule {
    peak: f32,
    warmup: u64,
    /// Steps until the floor; None: no decay (warm-up, then the peak).
    total: Option<u64>,
    floor: f32,
}

/// A rate that must be finite and >= 0.
fn check_rate(op: &'static str, name: &'static str, v: f32) -> Result<()> {
    if !(v >= 0.0 && v.is_finite()) {
        return Err(Error::value(op, name, "a finite learning rate >= 0", v));
    }
    Ok(())
}

impl LrSchedule {
    /// `lr` at every step.
    pub fn constant(lr: f32) -> Result<Self> {
        check_rate("LrSchedule::constant", "lr", lr)?;
        Ok(LrSchedule {
            peak: lr,
            warmup: 0,
            total: None,
            floor: lr,
        })
    }

    /// A linear warm-up over `warmup` steps to `peak` (step s < warmup gets
    /// `peak (s + 1) / warmup`, so the first step moves), then `peak`.
    pub fn warmup(peak: f32, warmup: u64) -> Result<Self> {
        check_rate("LrSchedule::warmup", "peak", peak)?;
        Ok(LrSchedule {
            peak,
            warmup,
            total: None,
            floor: peak,
        })
    }

    /// [`LrSchedule::warmup`], then a cosine decay from `peak` at step `warmup` to `floor`
    /// at step `total` (`floor + (peak - floor) (1 + cos(pi p)) / 2`, p the decay's
    /// progress), and `floor` after. Needs `warmup <= total` and `floor <= peak`.
    pub fn warmup_cosine(peak: f32, warmup: u64, total: u64, floor: f32) -> Result<Self> {
        let op = "LrSchedule::warmup_cosine";
        check_rate(op, "peak", peak)?;
        check_rate(op, "floor", floor)?;
        if floor > peak {
            return Err(Error::value(op, "floor", format!("at most the peak {peak}"), floor));
        }
        if warmup > total {
            return Err(Error::value(
                op,
                "warmup",
                format!("at most the total of {total} steps"),
                warmup,
            ));
        }
        Ok(LrSchedule {
            peak,
            warmup,
            total: Some(total),
            floor,
        })
    }

    /// The rate of step `step` (0-based).
    pub fn lr(&self, step: u64) -> f32 {
        if step < self.warmup {
            return (f64::from(self.peak) * (step + 1) as f64 / self.warmup as f64) as f32;
        }
        let Some(total) = self.total else { return self.peak };
        if step >= total {
            return self.floor;
        }
        let span = (total - self.warmup).max(1) as f64;
        let p = (step - self.warmup) as f64 / span;
        let (peak, floor) = (f64::from(self.peak), f64::from(self.floor));
        (floor + (peak - floor) * 0.5 * (1.0 + (std::f64::consts::PI * p).cos())) as f32
    }
}
