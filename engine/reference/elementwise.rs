//! Reference broadcasting elementwise ops, computed in f64 and rounded once to f32.

use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip};

use crate::error::{Error, Result};
use crate::ops::broadcast::broadcast_shape;
use crate::ops::{BinaryOp, UnaryOp};

/// `op(a, b)` with numpy broadcasting.
pub fn binary(op: BinaryOp, a: &ArrayViewD<f32>, b: &ArrayViewD<f32>) -> Result<ArrayD<f32>> {
    let name = format!("{op:?}").to_lowercase();
    let shape = broadcast_shape("reference::binary", a.shape(), b.shape())?;
    let (Some(a), Some(b)) = (a.broadcast(IxDyn(&shape)), b.broadcast(IxDyn(&shape))) else {
        return Err(Error::Unsupported {
            op: "reference::binary",
            message: format!("{name}: cannot broadcast"),
        });
    };
    let mut out = ArrayD::zeros(IxDyn(&shape));
    Zip::from(&mut out)
        .and(&a)
        .and(&b)
        .for_each(|o, &x, &y| *o = op.apply(x as f64, y as f64) as f32);
    Ok(out)
}

/// `op(x)` elementwise.
pub fn unary(op: UnaryOp, x: &ArrayViewD<f32>) -> ArrayD<f32> {
    x.mapv(|v| op.apply(v as f64) as f32)
}
