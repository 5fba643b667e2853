//! The element scan on the CPU: each trip of each lane is one call of the f64 interpreter of
//! the IR ([`crate::expr::Interp`]). The reference of every element-scan test and the CPU
//! context's implementation.

use super::layout::ScanLayout;
use crate::error::Result;
use crate::expr::{Body, Interp};

/// Runs the scan on host data. `inputs[0]` is the initial state, `inputs[1..]` the
/// sequences, each a dense row-major buffer read through `layout`'s views; returns the
/// dense output (the state after every trip).
pub(crate) fn run(body: &Body, layout: &ScanLayout, inputs: &[&[f32]]) -> Result<Vec<f32>> {
    let mut interp = Interp::new(body);
    let mut out = vec![0.0f32; layout.out_len()];
    let widths: Vec<usize> = body.params.iter().map(|t| t.lanes()).collect();
    let mut args: Vec<Vec<f64>> = widths.iter().map(|w| vec![0.0; *w]).collect();
    let n = widths[0];
    for lane in 0..layout.lanes() {
        let bases: Vec<usize> = layout.views.iter().map(|v| v.base(&layout.lane_shape, lane)).collect();
        let ov = &layout.views[layout.views.len() - 1];
        let iv = &layout.views[0];
        for j in 0..n {
            args[0][j] = inputs[0][bases[0] + j * iv.comp] as f64;
        }
        for i in 0..layout.trips {
            let t = if layout.reverse { layout.trips - 1 - i } else { i };
            for s in 1..inputs.len() {
                let v = &layout.views[s];
                for j in 0..widths[s] {
                    args[s][j] = inputs[s][bases[s] + t * v.trip + j * v.comp] as f64;
                }
            }
            let refs: Vec<&[f64]> = args.iter().map(|a| a.as_slice()).collect();
            let h = interp.call(&refs)?.to_vec();
            for j in 0..n {
                let hj = h[if h.len() == 1 { 0 } else { j }];
                out[bases[bases.len() - 1] + t * ov.trip + j * ov.comp] = hj as f32;
                args[0][j] = hj;
            }
        }
    }
    Ok(out)
}
