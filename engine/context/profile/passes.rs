//! A profiled dispatch's or plan replay's compute pass: which timestamps it writes, at its
//! beginning and end or (a plan's, where the adapter allows it) around each dispatch inside.

use std::time::Instant;

/// A dispatch being profiled: where its pass writes its timestamps, or when it started.
pub(crate) enum ProfiledPass {
    Timestamps { set: wgpu::QuerySet, pass: u32 },
    WallClock { kernel: usize, start: Instant },
}

impl ProfiledPass {
    /// The `timestamp_writes` of the dispatch's compute pass.
    pub(crate) fn timestamp_writes(&self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        match self {
            ProfiledPass::Timestamps { set, pass } => Some(wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(2 * pass),
                end_of_pass_write_index: Some(2 * pass + 1),
            }),
            ProfiledPass::WallClock { .. } => None,
        }
    }
}

/// A compiled plan's pass being profiled.
pub(crate) enum ProfiledPlan {
    /// A timestamp before and after each dispatch inside the pass: dispatch i uses pass slot
    /// `first + i`.
    Dispatches { set: wgpu::QuerySet, first: u32 },
    /// The whole pass as one row.
    Whole(ProfiledPass),
}

impl ProfiledPlan {
    /// The `timestamp_writes` of one of the plan's compute passes (a plan may replay in
    /// several): the whole-plan row begins with the first pass and ends with the last.
    pub(crate) fn timestamp_writes(&self, first: bool, last: bool) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        match self {
            ProfiledPlan::Whole(ProfiledPass::Timestamps { set, pass }) if first || last => {
                Some(wgpu::ComputePassTimestampWrites {
                    query_set: set,
                    beginning_of_pass_write_index: first.then_some(2 * pass),
                    end_of_pass_write_index: last.then_some(2 * pass + 1),
                })
            }
            _ => None,
        }
    }

    /// Called just before the plan's dispatch `i` is recorded into `pass`.
    pub(crate) fn before(&self, pass: &mut wgpu::ComputePass<'_>, i: usize) {
        if let ProfiledPlan::Dispatches { set, first } = self {
            pass.write_timestamp(set, 2 * (first + i as u32));
        }
    }

    /// Called just after the plan's dispatch `i` is recorded into `pass`.
    pub(crate) fn after(&self, pass: &mut wgpu::ComputePass<'_>, i: usize) {
        if let ProfiledPlan::Dispatches { set, first } = self {
            pass.write_timestamp(set, 2 * (first + i as u32) + 1);
        }
    }
}
