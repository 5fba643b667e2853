//! GELU (tanh form) as one fused elementwise launch (see [`crate::fused`]).

use std::sync::OnceLock;

use crate::error::Result;
use crate::fused::{self, Graph};
use crate::tensor::Tensor;

/// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, one launch. x (...) -> (...).
pub fn gelu(x: &Tensor) -> Result<Tensor> {
    x.expect_dtype("gelu", "x", &[crate::DType::F32])?;
    static GRAPH: OnceLock<Graph> = OnceLock::new();
    fused::run(GRAPH.get_or_init(fused::gelu_graph), &[x])
}
