//! A mixer layer: input projection, the mixer's recurrence, output projection, with an
//! explicit backward that returns every parameter's gradient and the input's.
//!
//!   pre = x W_in + b_in   (B, T, 2D)
//!   h   = mixer(pre)      (B, T, D)
//!   y   = h W_out         (B, T, Dm)

use super::kind::{MixerKind, MixerPath};
use super::scan::{mixer_scan, mixer_scan_backward, MixerScan};
use crate::check::Rng;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::ops::{linear, matmul, sum_last};
use crate::tensor::Tensor;

/// The parameters of one mixer layer.
#[derive(Clone, Debug)]
pub struct MixerLayer {
    /// Which mixer.
    pub kind: MixerKind,
    /// Materialised or angle-fused scan (rotation family).
    pub path: MixerPath,
    /// (Dm, 2D): model width to the mixer's pre-activations (layout in [`MixerKind`]).
    pub w_in: Tensor,
    /// (2D,).
    pub b_in: Tensor,
    /// (D, Dm): states back to the model width.
    pub w_out: Tensor,
}

/// What [`MixerLayer::forward`] keeps for the backward.
#[derive(Clone, Debug)]
pub struct MixerTape {
    x: Tensor,
    pre: Tensor,
    scan: MixerScan,
}

impl MixerTape {
    /// The mixer's states h (B, T, D).
    pub fn states(&self) -> &Tensor {
        &self.scan.h
    }
}

/// Gradients of a layer's loss with respect to its input and parameters (their shapes).
#[derive(Clone, Debug)]
pub struct MixerGrads {
    /// dL/dx (B, T, Dm).
    pub x: Tensor,
    /// dL/dw_in (Dm, 2D).
    pub w_in: Tensor,
    /// dL/db_in (2D,).
    pub b_in: Tensor,
    /// dL/dw_out (D, Dm).
    pub w_out: Tensor,
}

impl MixerGrads {
    /// The parameter gradients in [`MixerLayer::params`] order.
    pub fn params(&self) -> [&Tensor; 3] {
        [&self.w_in, &self.b_in, &self.w_out]
    }
}

impl MixerLayer {
    /// A layer from its parameters, shapes checked: w_in (Dm, 2D), b_in (2D), w_out (D, Dm).
    pub fn new(kind: MixerKind, path: MixerPath, w_in: Tensor, b_in: Tensor, w_out: Tensor) -> Result<Self> {
        let op = kind.name_static();
        if w_in.rank() != 2 || !w_in.shape()[1].is_multiple_of(2) {
            return Err(Error::shape(op, "w_in", "(Dm, 2D)", w_in.shape()));
        }
        let (dm, d) = (w_in.shape()[0], w_in.shape()[1] / 2);
        kind.blocks(d)?;
        path.fused(kind)?;
        if b_in.shape() != [2 * d] {
            return Err(Error::shape(
                op,
                "b_in",
                format!("[{}] (2D for w_in {:?})", 2 * d, w_in.shape()),
                b_in.shape(),
            ));
        }
        if w_out.shape() != [d, dm] {
            return Err(Error::shape(
                op,
                "w_out",
                format!("[{d}, {dm}] (D, Dm for w_in {:?})", w_in.shape()),
                w_out.shape(),
            ));
        }
        let ctx = w_in.context();
        b_in.expect_context(ctx, op, "b_in")?;
        w_out.expect_context(ctx, op, "w_out")?;
        Ok(MixerLayer {
            kind,
            path,
            w_in,
            b_in,
            w_out,
        })
    }

    /// A fresh layer of model width `d_model` and state width `d`: weights uniform in
    /// +-1/sqrt(fan in), biases zero.
    ///
    /// Errors: d not a positive multiple of the block size, or (Dm, 2D) over the element
    /// limit ([`crate::shape::MAX_ELEMENTS`]) or more than the allocator grants.
    pub fn init(ctx: &Context, kind: MixerKind, d_model: usize, d: usize, rng: &mut Rng) -> Result<Self> {
        let op = kind.name_static();
        kind.blocks(d)?;
        // Checked before any host vector exists: the sizes are the caller's.
        let two_d = crate::shape::mul(op, "d (state width)", d, 2)?;
        let n = crate::shape::numel(op, "d_model, d", &[d_model, two_d])?;
        let (si, so) = (1.0 / (d_model as f32).sqrt(), 1.0 / (d as f32).sqrt());
        let mut uniform = |count: usize, scale: f32, arg| -> Result<Vec<f32>> {
            let mut v = crate::tensor::host_vec(op, arg, count)?;
            v.extend((0..count).map(|_| rng.range(-1.0, 1.0) as f32 * scale));
            Ok(v)
        };
        // w_in's values first, then w_out's (D Dm of them), as Rng::vec_range drew them.
        let w_in = uniform(n, si, "w_in")?;
        let w_out = uniform(n / 2, so, "w_out")?;
        MixerLayer::new(
            kind,
            MixerPath::Auto,
            Tensor::from_slice(ctx, &[d_model, 2 * d], &w_in)?,
            Tensor::zeros(ctx, &[2 * d])?,
            Tensor::from_slice(ctx, &[d, d_model], &w_out)?,
        )
    }

    /// (Dm, D).
    pub fn widths(&self) -> (usize, usize) {
        (self.w_in.shape()[0], self.w_out.shape()[0])
    }

    /// The parameters, in the order [`MixerGrads::params`] returns their gradients.
    pub fn params(&self) -> [&Tensor; 3] {
        [&self.w_in, &self.b_in, &self.w_out]
    }

    /// y (B, T, Dm) from x (B, T, Dm), and the tape for [`MixerLayer::backward`].
    pub fn forward(&self, x: &Tensor) -> Result<(Tensor, MixerTape)> {
        let op = self.kind.name_static();
        let (dm, _) = self.widths();
        if x.rank() != 3 || x.shape()[2] != dm {
            return Err(Error::shape(op, "x", format!("(B, T, {dm}) (Dm of w_in)"), x.shape()));
        }
        let pre = linear(x, &self.w_in, Some(&self.b_in))?;
        let scan = mixer_scan(self.kind, self.path, &pre)?;
        let y = linear(&scan.h, &self.w_out, None)?;
        Ok((
            y,
            MixerTape {
                x: x.clone(),
                pre,
                scan,
            },
        ))
    }

    /// Gradients from the forward's tape and dL/dy (B, T, Dm).
    pub fn backward(&self, tape: &MixerTape, grad_y: &Tensor) -> Result<MixerGrads> {
        let op = self.kind.name_static();
        let x = &tape.x;
        if grad_y.shape() != x.shape() {
            return Err(Error::mismatch(op, "grad_y", grad_y.shape(), "x", x.shape()));
        }
        let (b, t, dm) = (x.shape()[0], x.shape()[1], x.shape()[2]);
        let (_, d) = self.widths();
        let rows = b * t;
        let rows_of = |a: &Tensor, cols: usize| a.contiguous()?.reshape(&[rows, cols]);
        let dy = rows_of(grad_y, dm)?;
        let h = rows_of(&tape.scan.h, d)?;
        let w_out = matmul(&h.transpose(0, 1)?, &dy)?;
        let dh = matmul(&dy, &self.w_out.transpose(0, 1)?)?.reshape(&[b, t, d])?;
        let dpre = rows_of(&mixer_scan_backward(&tape.pre, &tape.scan, &dh)?, 2 * d)?;
        let x2 = rows_of(x, dm)?;
        let w_in = matmul(&x2.transpose(0, 1)?, &dpre)?;
        let b_in = sum_last(&dpre.transpose(0, 1)?)?;
        let dx = matmul(&dpre, &self.w_in.transpose(0, 1)?)?.reshape(&[b, t, dm])?;
        Ok(MixerGrads {
            x: dx,
            w_in,
            b_in,
            w_out,
        })
    }
}
