//! Choosing the fastest candidate from timed runs.
//!
//! Each candidate runs once to warm up (pipelines built, buffers in the pool, caches warm;
//! the tuner runs the warm-ups side by side, so the candidates' pipelines compile in
//! parallel, except on GL), then the candidates are timed in rounds, one run each per round, interleaved (A B C A B C)
//! so a drift of the device's clocks falls on all of them alike. A candidate's figure is its
//! fastest timed run (the least disturbed by the host or other work). The rounds stop early:
//! - after the first round, a candidate more than [`CLEAR`] slower than the fastest is
//!   dropped: at that distance no further run turns it into the winner, so it is not timed
//!   again;
//! - when one candidate is left, or after [`REPEATS`] rounds;
//! - when the key's timed runs have taken [`BUDGET`] seconds (every candidate is timed at
//!   least once).
//!
//! A candidate whose run fails is skipped. The winner is the fastest figure; a later
//! candidate must beat an earlier one by more than [`MARGIN`], so the hand rule (candidate 0)
//! stays unless another path is measurably faster.

// In a browser nothing is timed (the waits would block), so nothing here is called.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use crate::error::Result;

/// The fraction by which a later candidate must be faster to displace an earlier one: below
/// it, timer noise would flip choices between runs.
pub(crate) const MARGIN: f64 = 0.02;

/// Timed rounds after the warm-up, at most.
pub(crate) const REPEATS: usize = 3;

/// The fraction by which a candidate's first timed run may be slower than the fastest first
/// run and still be timed again. On the H200 the channel-scan widths that lost, lost by 1.2x
/// to 3x on their first run as on their best, and repeats of one candidate spread by a few
/// percent: a quarter is far outside the noise and far above [`MARGIN`].
pub(crate) const CLEAR: f64 = 0.25;

/// Seconds of timed runs one key may take: slow candidates (a large product on a software
/// adapter) get fewer rounds, each candidate at least one.
pub(crate) const BUDGET: f64 = 0.25;

/// What the runs of every candidate gave.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Outcome {
    /// The index of the chosen candidate (0, the hand rule, when every run failed).
    pub chosen: usize,
    /// Each candidate's fastest timed run in seconds; `None` where a run failed.
    pub seconds: Vec<Option<f64>>,
    /// Timed runs of each candidate (0 where its warm-up failed).
    pub runs: Vec<usize>,
}

/// Warms candidates `0..n` up through `time` itself, then [`measure_warm`]. (The tuner warms
/// its candidates up side by side instead: `crate::context`'s tuning seam.)
#[cfg(test)]
pub(crate) fn measure(n: usize, mut time: impl FnMut(usize) -> Result<f64>) -> Outcome {
    let warmed: Vec<bool> = (0..n).map(|i| time(i).is_ok()).collect();
    measure_warm(&warmed, time)
}

/// Times the candidates whose warm-up ran (`warmed[i]`) through `time` (which runs candidate
/// `i` once and returns its duration in seconds) and picks the fastest.
pub(crate) fn measure_warm(warmed: &[bool], mut time: impl FnMut(usize) -> Result<f64>) -> Outcome {
    let n = warmed.len();
    let mut seconds: Vec<Option<f64>> = vec![None; n];
    let mut runs = vec![0; n];
    // Candidates still timed: those whose warm-up ran.
    let mut live: Vec<usize> = (0..n).filter(|&i| warmed[i]).collect();
    let mut spent = 0.0;
    for round in 0..REPEATS {
        let mut next = vec![];
        for &i in &live {
            match time(i) {
                Ok(s) => {
                    spent += s;
                    runs[i] += 1;
                    seconds[i] = Some(seconds[i].map_or(s, |b: f64| b.min(s)));
                    next.push(i);
                }
                // A run that fails once is not trusted again.
                Err(_) => seconds[i] = None,
            }
        }
        live = next;
        if round == 0 {
            let best = live.iter().filter_map(|&i| seconds[i]).fold(f64::INFINITY, f64::min);
            live.retain(|&i| seconds[i].is_some_and(|s| s <= best * (1.0 + CLEAR)));
        }
        if live.len() <= 1 || spent >= BUDGET {
            break;
        }
    }
    Outcome {
        chosen: fastest(&seconds),
        seconds,
        runs,
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
        // Candidate 1 fails, 2 is fastest; 0 is clearly slower and timed once.
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
                seconds: vec![Some(3.0), None, Some(1.0)],
                runs: vec![1, 0, 1],
            }
        );
        // Within the margin the earlier candidate stays.
        assert_eq!(measure(2, |i| Ok([1e-3, 0.99e-3][i])).chosen, 0);
        // Every run failing leaves the hand rule.
        let fail = |_| -> crate::error::Result<f64> { Err(Error::Map("x".into())) };
        assert_eq!(measure(2, fail).chosen, 0);
    }

    #[test]
    fn close_candidates_run_every_round_interleaved_clear_losers_once() {
        // Two close candidates and a clear loser (2x): the close ones alternate for every
        // round, the loser is timed once after its warm-up.
        let mut order = vec![];
        let out = measure(3, |i| {
            order.push(i);
            Ok([1e-3, 1.1e-3, 2e-3][i])
        });
        assert_eq!(out.runs, vec![super::REPEATS, super::REPEATS, 1]);
        // Warm-ups, the first round, then 0 and 1 alternating.
        let mut want = vec![0, 1, 2, 0, 1, 2];
        for _ in 1..super::REPEATS {
            want.extend([0, 1]);
        }
        assert_eq!(order, want);
        // A slow key (over the budget after one round) is timed once per candidate.
        let mut calls = [0usize; 2];
        measure(2, |i| {
            calls[i] += 1;
            Ok(0.2)
        });
        assert_eq!(calls, [2, 2]);
        // A candidate whose timed run fails is dropped, the others go on.
        let mut first = true;
        let out = measure(2, |i| {
            if i == 1 && !std::mem::replace(&mut first, false) {
                return Err(Error::Map("x".into()));
            }
            Ok(1e-3)
        });
        assert_eq!((out.chosen, out.seconds[1], out.runs[0]), (0, None, 1));
    }
}
