//! Mixed precision on the tape, the way `torch.autocast` is used: the products recorded
//! inside [`autocast`]`(dtype, f)` (`matmul`, `linear`, `linear_gelu`, `linear_residual`)
//! read both operands in `dtype` (F16 or BF16, converted at the op), accumulate in f32 and
//! return f32; their backward products take the output gradient in the same dtype. Ops built
//! from these products follow them (`Var::attention`'s two products, `Var::head_cross_entropy`'s
//! three); every other op (layer norm, softmax, cross-entropy, the optimiser) stays f32, and so do the
//! parameters: the master weights an optimiser updates. With F16 gradients can
//! underflow, so a step scales the loss first (`train::LossScaler`); BF16 has f32's range and
//! needs no scaling.

use std::cell::Cell;

use crate::error::Result;
use crate::shape::DType;
use crate::tensor::Tensor;

thread_local! {
    /// The dtype of the innermost open [`autocast`] scope on this thread (None: f32).
    static AUTOCAST: Cell<Option<DType>> = const { Cell::new(None) };
}

/// Runs `f` with the products recorded inside it in `dtype` (F16 or BF16; F32 turns an
/// outer scope off, as `autocast(enabled=False)` does). Scopes nest; the innermost wins, and
/// the outer one's dtype is back when `f` returns (or panics).
///
/// ```
/// use wgsl_compute::autograd::{autocast, Tape, Var};
/// use wgsl_compute::{Context, DType, Tensor};
/// let ctx = Context::cpu();
/// let tape = Tape::new(&ctx);
/// let x = Var::constant(&Tensor::from_slice(&ctx, &[1, 2], &[1.0, 2.0])?); // (1, 2)
/// let w = tape.var(&Tensor::from_slice(&ctx, &[2, 1], &[0.5, 0.25])?)?;    // (2, 1), f32
/// let y = autocast(DType::BF16, || x.matmul(&w))?;  // the product in bf16, y f32
/// assert_eq!(y.tensor().dtype(), DType::F32);
/// let grads = y.sum_all()?.backward()?;
/// assert_eq!(grads.get(&w).unwrap().dtype(), DType::F32); // the master weight's gradient
/// # Ok::<(), wgsl_compute::Error>(())
/// ```
pub fn autocast<R>(dtype: DType, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<DType>);
    impl Drop for Restore {
        fn drop(&mut self) {
            AUTOCAST.with(|d| d.set(self.0));
        }
    }
    let inner = (dtype != DType::F32).then_some(dtype);
    let _restore = Restore(AUTOCAST.with(|d| d.replace(inner)));
    f()
}

/// The dtype products take on this thread now: Some(F16 or BF16) inside [`autocast`].
pub(crate) fn product_dtype() -> Option<DType> {
    AUTOCAST.with(Cell::get)
}

/// `t` as a product operand in `dtype` (unchanged when None or already in it).
pub(crate) fn operand(t: &Tensor, dtype: Option<DType>) -> Result<Tensor> {
    match dtype {
        Some(d) if t.dtype() != d => t.to_dtype(d),
        _ => Ok(t.clone()),
    }
}
