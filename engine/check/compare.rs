//! Elementwise comparison under an `(atol, rtol)` gate, reporting the worst element.

use std::fmt;

/// A tolerance gate: `|got - want| <= atol + rtol * |want|`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gate {
    /// Absolute tolerance.
    pub atol: f64,
    /// Tolerance relative to `|want|`.
    pub rtol: f64,
}

impl Gate {
    /// A gate of `atol + rtol * |want|`.
    pub const fn new(atol: f64, rtol: f64) -> Self {
        Gate { atol, rtol }
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({:.0e}, {:.0e})", self.atol, self.rtol)
    }
}

/// The outcome of comparing two arrays.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// Largest `|got - want|` (infinite when a value is non-finite or lengths differ).
    pub max_abs: f64,
    /// Index of the element that violates the gate the most (or of `max_abs`).
    pub worst: usize,
    /// The value computed at `worst`.
    pub got: f64,
    /// The reference value at `worst`.
    pub want: f64,
    /// The gate the elements were held to.
    pub gate: Gate,
    /// Every element within the gate, lengths equal, nothing NaN.
    pub ok: bool,
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "max |err| {:.3e} (gate {}); worst at [{}]: got {} want {}",
            self.max_abs, self.gate, self.worst, self.got, self.want
        )
    }
}

/// Compares `got` with `want` elementwise under `gate`. A NaN or a length mismatch fails.
pub fn compare(got: &[f32], want: &[f32], gate: Gate) -> Comparison {
    if got.len() != want.len() {
        return Comparison {
            max_abs: f64::INFINITY,
            worst: got.len().min(want.len()),
            got: f64::NAN,
            want: f64::NAN,
            gate,
            ok: false,
        };
    }
    let mut c = Comparison {
        max_abs: 0.0,
        worst: 0,
        got: 0.0,
        want: 0.0,
        gate,
        ok: true,
    };
    let mut worst_ratio = -1.0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (g as f64, w as f64);
        let err = (g - w).abs();
        let bound = gate.atol + gate.rtol * w.abs();
        // NaN never passes, even against a NaN reference: it is always a bug in a kernel here.
        let ratio = if err.is_nan() || g.is_nan() {
            f64::INFINITY
        } else {
            err / bound.max(f64::MIN_POSITIVE)
        };
        if err.is_nan() || err > c.max_abs {
            c.max_abs = if err.is_nan() { f64::INFINITY } else { err };
        }
        if ratio > worst_ratio {
            worst_ratio = ratio;
            c.worst = i;
            c.got = g;
            c.want = w;
        }
        if err.is_nan() || err > bound {
            c.ok = false;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_and_worst_element() {
        let c = compare(&[1.0, 2.0, 3.5], &[1.0, 2.0, 3.0], Gate::new(0.1, 0.0));
        assert!(!c.ok);
        assert_eq!(c.worst, 2);
        assert!((c.max_abs - 0.5).abs() < 1e-12);
        assert!(compare(&[1.0, 2.0], &[1.0, 2.05], Gate::new(0.0, 0.05)).ok);
        assert!(!compare(&[f32::NAN], &[f32::NAN], Gate::new(1.0, 1.0)).ok);
        assert!(!compare(&[1.0], &[1.0, 2.0], Gate::new(1.0, 1.0)).ok);
    }
}
