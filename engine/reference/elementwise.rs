//! Reference broadcasting elementwise ops, computed in f64 by the IR's op values
//! ([`Unary::eval`], [`Binary::eval`], the interpreter's) and rounded once to f32.

use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip};

use crate::error::{Error, Result};
use crate::expr::{Binary, Unary};
use crate::shape::broadcast_shape;

/// `op(a, b)` with numpy broadcasting.
pub fn binary(op: Binary, a: &ArrayViewD<f32>, b: &ArrayViewD<f32>) -> Result<ArrayD<f32>> {
    let name = op.name();
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
        .for_each(|o, &x, &y| *o = op.eval(x as f64, y as f64) as f32);
    Ok(out)
}

/// `op(x)` elementwise.
pub fn unary(op: Unary, x: &ArrayViewD<f32>) -> ArrayD<f32> {
    x.mapv(|v| op.eval(v as f64) as f32)
}
