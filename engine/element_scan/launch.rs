//! Running one element scan: the generated kernel on a GPU context, the interpreter on the
//! CPU context.
//!
//! On a GPU the walk goes through the one recurrence launch (`crate::recurrence::launch`)
//! as lane walks (a body is not associative, so never chunked): on the software adapters that
//! end a shader's loops after 65,535 iterations the trips are split into dispatches that stay
//! under that limit, each resuming from the state the previous one stored.

use std::borrow::Cow;

use super::codegen;
use super::interp;
use super::layout::ScanLayout;
use crate::error::{Error, Result};
use crate::expr::Body;
use crate::kernel::{push_dims, Binding, KernelKey, KernelSource, Params};
use crate::recurrence::launch::{Columns, Launch};
use crate::recurrence::strategy::{Cost, Strategy};
use crate::shape::MAX_RANK;
use crate::tensor::Tensor;

const OP: &str = "element_scan";

/// The states after every trip. `inputs[0]` is the initial state (out shape without the trip
/// axis), `inputs[1..]` the sequences (out shape, size-1 axes broadcast); all on one context.
pub(crate) fn run(
    body: &Body,
    axis: usize,
    vector: bool,
    reverse: bool,
    out_shape: &[usize],
    inputs: &[&Tensor],
) -> Result<Tensor> {
    let ctx = inputs[0].context();
    for t in inputs {
        t.expect_context(ctx, OP, "input")?;
        t.expect_dtype(OP, "input", &[crate::DType::F32])?;
    }
    let Some(gpu) = ctx.gpu() else {
        let host: Vec<Vec<f32>> = inputs
            .iter()
            .map(|t| t.host(OP).map(|a| a.iter().copied().collect()))
            .collect::<Result<_>>()?;
        let dense: Vec<crate::tensor::Layout> = inputs
            .iter()
            .map(|t| crate::tensor::Layout::contiguous(t.shape()))
            .collect();
        let layout = ScanLayout::new(out_shape, axis, vector, reverse, &dense.iter().collect::<Vec<_>>());
        let refs: Vec<&[f32]> = host.iter().map(|v| v.as_slice()).collect();
        let out = interp::run(body, &layout, &refs)?;
        let a =
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(out_shape), out).map_err(|e| Error::Map(e.to_string()))?;
        return Tensor::from_host(ctx, a);
    };
    let layout = ScanLayout::new(
        out_shape,
        axis,
        vector,
        reverse,
        &inputs.iter().map(|t| t.layout()).collect::<Vec<_>>(),
    );
    if layout.lane_shape.len() > MAX_RANK {
        return Err(Error::Unsupported {
            op: OP,
            message: format!(
                "{} lane axes; the kernel addresses at most {MAX_RANK}",
                layout.lane_shape.len()
            ),
        });
    }
    let buffers_needed = inputs.len() as u32 + 1;
    if buffers_needed > gpu.info.max_storage_buffers {
        return Err(Error::Fallback {
            op: OP,
            reason: format!(
                "the kernel binds {buffers_needed} storage buffers (initial state, {} sequences, output); this adapter allows {}",
                inputs.len() - 1,
                gpu.info.max_storage_buffers
            ),
        });
    }
    let out = Tensor::uninit(ctx, out_shape, OP)?;
    if out.is_empty() {
        return Ok(out);
    }
    let key = KernelKey {
        name: Cow::Owned(codegen::kernel_name(body, reverse)),
        entry: Cow::Borrowed("element_scan"),
        constants: vec![],
    };
    let kernel = gpu.kernels.get(&gpu.device, &key, || {
        let mut bindings = vec![Binding::Uniform];
        bindings.extend(inputs.iter().map(|_| Binding::Read));
        bindings.push(Binding::ReadWrite);
        Ok(KernelSource {
            wgsl: Cow::Owned(codegen::wgsl(body, reverse)),
            bindings,
        })
    })?;
    // One loop trip per trip of the walk; the lane addressing loops once per lane axis and
    // view before it, far inside the budget's margin under the software adapters' limit.
    let cost = Cost { step: 1, carry: 1 };
    let columns = Columns { walk: 1, reduce: 1 };
    let launch = Launch::new(
        gpu,
        Strategy::Lanes,
        layout.lanes(),
        layout.trips,
        reverse,
        columns,
        cost,
    );
    let mut tail = Params::new().usize(layout.lane_shape.len()).u32(0).u32(0).u32(0);
    tail = push_dims(tail, &layout.lane_shape);
    for v in &layout.views {
        tail = push_dims(tail.usize(v.offset).usize(v.trip).usize(v.comp).u32(0), &v.lane);
    }
    let mut buffers: Vec<&wgpu::Buffer> = inputs.iter().map(|t| t.gpu_buffer(OP)).collect::<Result<_>>()?;
    buffers.push(out.gpu_buffer(OP)?);
    launch.run(gpu, |_| Ok(kernel.clone()), &tail, &buffers)?;
    Ok(out)
}
