//! Parity cases of the four scans, forward and backward, across the envelope: every (k, v)
//! in {1, 2, 4, 8, 16}^2, T in {1, 2, 3, 7, 64, 65, 257, 1000, 1024, 4099}, batch 1 and more,
//! both strategies. Inputs are drawn so values stay O(1): transitions contract (spectral norm
//! below about 0.7 for the matrices, |a| < 0.9 for the channels, minGRU-style log coefficients
//! -softplus(x)), so a long T neither explodes nor vanishes into the gate.
//!
//! Half rows ([`half_cases`]): the channel scans with F16 and BF16 inputs and outputs. Their
//! inputs are the same draws rounded to the dtype on the host, the reference runs in f64 on
//! those widened values, and a backward row feeds both sides the reference forward output
//! rounded to the dtype as h (the value a caller would pass), so the two compute from the
//! same inputs and the gate ([`gates::half_scan`](crate::check::gates::half_scan)) is the f32
//! gate plus one output rounding.
//!
//! This file holds the case type and the envelope's axes; `cases` the case lists, `run` the
//! seeded inputs and the run of one case against the reference.

mod cases;
mod run;

pub use cases::{half_cases, scan_cases, specialised_cases};
pub use run::{inputs, run_case};

use crate::reference::scan::AffineShape;
use crate::scan::Strategy;
use crate::shape::DType;

/// Which scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanOp {
    /// `linear_scan`.
    Linear,
    /// `parallel_scan_log`.
    Log,
    /// `matrix_scan`.
    Matrix,
    /// `matrix_affine_scan`.
    Affine,
}

impl ScanOp {
    /// The op's name, e.g. `linear_scan`.
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Linear => "linear_scan",
            ScanOp::Log => "parallel_scan_log",
            ScanOp::Matrix => "matrix_scan",
            ScanOp::Affine => "matrix_affine_scan",
        }
    }
}

/// One scan case: `n` is D for the channel scans, N for the matrix scans.
#[derive(Clone, Debug, PartialEq)]
pub struct ScanCase {
    /// Which scan.
    pub op: ScanOp,
    /// Check the gradients instead of the output.
    pub backward: bool,
    /// Batch B.
    pub b: usize,
    /// Time steps T.
    pub t: usize,
    /// Channels D (channel scans) or state blocks N (matrix scans).
    pub n: usize,
    /// Block rows k (`matrix_affine_scan`).
    pub k: usize,
    /// Block columns v (`matrix_affine_scan`).
    pub v: usize,
    /// Pass an initial state (the log scan always has one: log_values[:, 0]).
    pub h0: bool,
    /// How the kernel walks T.
    pub strategy: Strategy,
    /// Seed of the inputs.
    pub seed: u64,
    /// The dtype of every input and output (F16 and BF16: the channel scans).
    pub dtype: DType,
}

impl ScanCase {
    /// The case's dimensions as the parity table prints them.
    pub fn shape(&self) -> String {
        let dims = match self.op {
            ScanOp::Linear | ScanOp::Log => format!("B={} T={} D={}", self.b, self.t, self.n),
            ScanOp::Matrix => format!("B={} T={} N={}", self.b, self.t, self.n),
            ScanOp::Affine => format!("B={} T={} N={} k={} v={}", self.b, self.t, self.n, self.k, self.v),
        };
        match self.dtype {
            DType::F32 => dims,
            d => format!("{dims} {d}"),
        }
    }

    fn affine_shape(&self) -> AffineShape {
        AffineShape {
            b: self.b,
            t: self.t,
            n: self.n,
            k: self.k,
            v: self.v,
        }
    }
}

/// Pushes `case` forward and backward onto `out`, each with the next seed.
fn both_directions(out: &mut Vec<ScanCase>, seed: &mut u64, case: ScanCase) {
    for backward in [false, true] {
        *seed += 1;
        out.push(ScanCase {
            backward,
            seed: *seed,
            ..case.clone()
        });
    }
}

/// T values of the envelope.
pub const T_VALUES: [usize; 10] = [1, 2, 3, 7, 64, 65, 257, 1000, 1024, 4099];

/// A chunk length that gives several chunks even at small T (a ragged last one when T is odd).
pub fn test_chunk(t: usize) -> usize {
    if t >= 64 {
        crate::recurrence::strategy::auto_chunk(t)
    } else {
        t.div_ceil(3).max(1)
    }
}

/// The two strategies a case list covers, for T.
pub fn strategies(t: usize) -> [Strategy; 2] {
    [
        Strategy::Lanes,
        Strategy::Chunked {
            chunk: Some(test_chunk(t)),
        },
    ]
}
