//! Which mixer, and which GPU path runs its scan.

use crate::error::{Error, Result};

/// The four minGRU-style mixers. Each maps its pre-activations `pre` (B, T, 2D) (the input
/// projection's output) to states h (B, T, D) by h_t = A_t h_{t-1} + b_t from h_{-1} = 0,
/// with D = N blocks of `block()` values:
///
/// | kind | pre per step | A_t | b_t | scan |
/// | --- | --- | --- | --- | --- |
/// | `MinGru` | [k, v] (D each) | 1 - sigmoid(k) | sigmoid(k) g(v) | `parallel_scan_log` |
/// | `SignedMinGru` | [r, v] | tanh(r) (signed) | (1 - tanh(r)^2) v | `linear_scan` |
/// | `RotationMinGru` | [v (D), decay (N), angle (N)] | lambda R(theta) (2 x 2) | (1 - lambda) v | `matrix_scan` |
/// | `GivensMinGru { k }` | [v (D), decay (N), angles (N (k-1))] | lambda R_{k-2} .. R_0 (k x k) | (1 - lambda) v | `matrix_affine_scan` |
///
/// g(v) = v + 0.5 for v >= 0, sigmoid(v) below (minGRU's positive value map); lambda =
/// sigmoid(decay); R_j rotates coordinates (j, j + 1) of a block by theta_j.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MixerKind {
    /// minGRU: `parallel_scan_log` over a sigmoid gate and g(v) per channel.
    MinGru,
    /// A signed decay tanh(r) per channel: `linear_scan`.
    SignedMinGru,
    /// 2 x 2 rotations scaled by a decay per pair of channels: `matrix_scan`.
    RotationMinGru,
    /// k x k products of Givens rotations scaled by a decay per block: `matrix_affine_scan`.
    GivensMinGru {
        /// Block size k.
        k: usize,
    },
}

impl MixerKind {
    /// Values per state block: 1 for the scalar mixers, 2 for rotations, k for Givens.
    pub fn block(&self) -> usize {
        match self {
            MixerKind::MinGru | MixerKind::SignedMinGru => 1,
            MixerKind::RotationMinGru => 2,
            MixerKind::GivensMinGru { k } => *k,
        }
    }

    /// Whether the transitions are rotations scaled by a decay (the angle-fused kernel's family).
    pub fn is_rotation(&self) -> bool {
        matches!(self, MixerKind::RotationMinGru | MixerKind::GivensMinGru { .. })
    }

    /// The name the parity table and the examples print, e.g. `GivensMinGRU(k=8)`.
    pub fn name(&self) -> String {
        match self {
            MixerKind::MinGru => "MinGRU".into(),
            MixerKind::SignedMinGru => "SignedMinGRU".into(),
            MixerKind::RotationMinGru => "RotationMinGRU".into(),
            MixerKind::GivensMinGru { k } => format!("GivensMinGRU(k={k})"),
        }
    }

    /// Parses `mingru`, `signed`, `rotation` or `givens` / `givens:K` (K defaults to 4).
    pub fn parse(s: &str) -> Result<Self> {
        let kind = match s.split_once(':') {
            None if s == "mingru" => MixerKind::MinGru,
            None if s == "signed" => MixerKind::SignedMinGru,
            None if s == "rotation" => MixerKind::RotationMinGru,
            None if s == "givens" => MixerKind::GivensMinGru { k: 4 },
            Some(("givens", k)) => MixerKind::GivensMinGru {
                k: k.parse()
                    .map_err(|_| Error::value("mixer", "kind", "givens:K with K in {2, 4, 8, 16}", s))?,
            },
            _ => {
                return Err(Error::value(
                    "mixer",
                    "kind",
                    "mingru, signed, rotation, givens or givens:K",
                    s,
                ))
            }
        };
        kind.check_block()?;
        Ok(kind)
    }

    fn check_block(&self) -> Result<()> {
        if let MixerKind::GivensMinGru { k } = self {
            if ![2, 4, 8, 16].contains(k) {
                return Err(Error::value(self.name_static(), "k", "one of 2, 4, 8, 16", k));
            }
        }
        Ok(())
    }

    /// The op name errors carry.
    pub(crate) fn name_static(&self) -> &'static str {
        match self {
            MixerKind::MinGru => "MinGRU",
            MixerKind::SignedMinGru => "SignedMinGRU",
            MixerKind::RotationMinGru => "RotationMinGRU",
            MixerKind::GivensMinGru { .. } => "GivensMinGRU",
        }
    }

    /// Checks the state width D against the block size; returns the block count N.
    pub fn blocks(&self, d: usize) -> Result<usize> {
        self.check_block()?;
        let k = self.block();
        if d == 0 || !d.is_multiple_of(k) {
            return Err(Error::value(
                self.name_static(),
                "d (state width)",
                format!("a positive multiple of the block size {k}"),
                d,
            ));
        }
        Ok(d / k)
    }
}

impl std::fmt::Display for MixerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// How a rotation-family mixer runs its scan on the GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MixerPath {
    /// The angle-fused kernel for the rotation family; gates + scan op for the others.
    #[default]
    Auto,
    /// One kernel builds each step's transition from its angles inside the scan (rotation
    /// family only); the backward recomputes from the stored states.
    AngleFused,
    /// Gates kernel -> the mixer's scan op -> its backward -> gates backward: every step's
    /// transition (k x k for Givens) is materialised in device memory.
    Materialized,
}

impl MixerPath {
    /// Whether `kind` takes the angle-fused kernel on this path; an error for a scalar mixer
    /// asked for it.
    pub fn fused(self, kind: MixerKind) -> Result<bool> {
        match self {
            MixerPath::Auto => Ok(kind.is_rotation()),
            MixerPath::Materialized => Ok(false),
            MixerPath::AngleFused if kind.is_rotation() => Ok(true),
            MixerPath::AngleFused => Err(Error::Unsupported {
                op: kind.name_static(),
                message: "the angle-fused path serves RotationMinGRU and GivensMinGRU only".into(),
            }),
        }
    }
}
