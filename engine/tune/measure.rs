//! Choosing the fastest candidate from timed runs.
//!
//! Each candidate runs once to warm up (pipelines built, buffers in the pool, caches warm),
//! then a few times timed; its figure is the fastest of those runs (the least disturbed by
//! the host or other work). A candidate whose run fails is skipped. The winner is the
//! fastest figure; a later candidate must beat an earlier one by more than [`MARGIN`], so the
//! hand rule (candidate 0) stays unless another path is measurably faster.

// In a browser nothing is timed (the waits would block), so nothing here is called.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use crate::error::Result;

/// The fraction by which a later candidate must be faster to displace an earlier one: below
/// it, timer noise would flip choices between runs.
pub(crate) const MARGIN: f64 = 0.02;

/// Timed repeats after the warm-up, at most.
pub(crate) const REPEATS: usize = 3;

/// Seconds of timed runs one candidate may take: a slow candidate (a large product on a
/// software adapter) is timed fewer times, at least once.
const BUDGET: f64 = 0.25;

/// What the runs of every candidate gave.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Outcome {
    /// The index of the chosen candidate (0, the hand rule, when every run failed).
    pub chosen: usize,
    /// Each candidate's fastest timed run in seconds; `None` where a run failed.
    pub seconds: Vec<Option<f64>>,
}

/// Runs candidates `0..n` through `time` (which runs candidate `i` once and returns its
/// duration in seconds) and picks the fastest.
pub(crate) fn measure(n: usize, mut time: impl FnMut(usize) -> Result<f64>) -> Outcome {
    let mut seconds = Vec::with_capacity(n);
    for i in 0..n {
        let figure = (|| {
            let warm = time(i)?;
            let repeats = ((BUDGET / warm.max(1e-9)) as usize).clamp(1, REPEATS);
            let mut best = f64::INFINITY;
            for _ in 0..repeats {
                best = best.min(time(i)?);
            }
            Ok::<f64, crate::error::Error>(best)
        })();
        seconds.push(figure.ok());
    }
    Outcome {
        chosen: fastest(&seconds),
        seconds,
    }
}

/// The index of the fastest figure, earlier ones winning within [`MARGIN`]; 0 when none.
fn fastest(seconds: &[Option<f64>]) -> usize {
    let mut best: Option<(usize, f64)> = None;
    for (i, s) in seconds.iter().enumerate() {
        let Some(s) = *s else { continue };
        match best {
            Some((_, b)) if s >= b * (1.0 - MARGIN) => {}
            _ => best = Some((i, s)),
        }
    }
    best.map_or(0, |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::{measure, Outcome};
    use crate::error::Error;

    #[test]
    fn the_fastest_candidate_wins_failures_are_skipped_and_ties_keep_the_hand_rule() {
        // Candidate 1 fails, 2 is fastest.
        let times = [3.0, -1.0, 1.0];
        let run = |i: usize| {
            if times[i] < 0.0 {
                Err(Error::Fallback {
                    op: "test",
                    reason: "refused".into(),
                })
            } else {
                Ok(times[i])
            }
        };
        assert_eq!(
            measure(3, run),
            Outcome {
                chosen: 2,
                seconds: vec![Some(3.0), None, Some(1.0)]
            }
        );
        // Within the margin the earlier candidate stays.
        assert_eq!(measure(2, |i| Ok([1.0, 0.99][i])).chosen, 0);
        // Every run failing leaves the hand rule.
        let fail = |_| -> crate::Result<f64> { Err(Error::Map("x".into())) };
        assert_eq!(measure(2, fail).chosen, 0);
    }

    #[test]
    fn each_candidate_warms_up_once_then_runs_at_most_the_repeats() {
        let mut calls = [0usize; 2];
        measure(2, |i| {
            calls[i] += 1;
            Ok(1e-3)
        });
        assert_eq!(calls, [1 + super::REPEATS; 2]);
        // A slow candidate (over the budget) is timed once after its warm-up.
        let mut slow = 0;
        measure(1, |_| {
            slow += 1;
            Ok(1.0)
        });
        assert_eq!(slow, 2);
    }
}
