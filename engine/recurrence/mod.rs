//! # The recurrence layer
//!
//! Everything a recurrence kernel shares, below its users (the scans, the mixers' fused
//! scans, generated element scans): how a walk of T is planned on a device, how its passes
//! are recorded, and the WGSL every recurrence kernel opens with.
//!
//! | file | what | shaders |
//! | --- | --- | --- |
//! | `strategy` | the [`Strategy`] a caller asks for, the walk it resolves to on a device (lanes in segments, or chunked), the loop budget of software adapters | |
//! | `lookback` | the one-pass look-back protocol: when it is offered, its chunk length, its `side` words, its poll budget | `shaders/recurrence/lookback.wgsl`, `width_*.wgsl` |
//! | `launch` | the one launch: plans the walk, writes the uniform header, records each pass | `shaders/recurrence/launch.wgsl` |
//! | | the chunk/carry skeleton of the channel scans' walks (lanes, chunk reduce, carries, fix-up), each walk bringing its step and combine, and their four entry points | `shaders/recurrence/chunk_walk.wgsl`, `channel_entries.wgsl` |
//!
//! A new scan kernel's launch lives here: it describes its walk (`launch::Launch`: lanes,
//! T, direction, invocations per lane, loop cost) and hands its entry points
//! (`launch::Passes`) to `Launch::run_passes`; its WGSL opens with the prelude
//! `recurrence/launch.wgsl` (and, for a chunked channel walk, the skeleton). Nothing here
//! knows a scan's arithmetic.

pub(crate) mod launch;
pub mod lookback;
pub mod strategy;

pub use strategy::Strategy;
