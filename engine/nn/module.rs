//! [`Param`] (a named tensor) and [`Module`] (what lists them): the one list the optimiser,
//! the checkpoint and a [`Pass`](super::Pass) read.

use crate::error::Result;
use crate::tensor::Tensor;
use crate::train::ParamStore;

/// One parameter of a layer: its full dotted name and its dense F32 tensor (shared with the
/// [`ParamStore`] that made it, so an optimiser's in-place step is seen by the layer).
#[derive(Clone, Debug)]
pub struct Param {
    name: String,
    tensor: Tensor,
}

impl Param {
    pub(crate) fn new(name: String, tensor: Tensor) -> Self {
        Param { name, tensor }
    }

    /// The full name, e.g. `h.0.mlp.c_fc.weight`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value.
    pub fn tensor(&self) -> &Tensor {
        &self.tensor
    }

    /// The value's dimensions.
    pub fn shape(&self) -> &[usize] {
        self.tensor.shape()
    }
}

/// Something with named parameters: a layer, a model, a list of layers, a [`ParamStore`].
pub trait Module {
    /// Every parameter, submodules' included, in creation order.
    fn params(&self) -> Vec<Param>;

    /// The parameters' names, in [`Module::params`] order.
    fn param_names(&self) -> Vec<String> {
        self.params().into_iter().map(|p| p.name).collect()
    }

    /// Number of scalar parameters.
    fn size(&self) -> usize {
        self.params().iter().map(|p| p.tensor.len()).sum()
    }

    /// The parameters as a store sharing their tensors: `tensors()` for an optimiser, and a
    /// checkpoint with `to_bytes` / `save`, reloaded in place with `load_into`.
    fn store(&self) -> Result<ParamStore> {
        let mut s = ParamStore::new();
        for p in self.params() {
            s.insert(p.name, p.tensor)?;
        }
        Ok(s)
    }
}

impl Module for ParamStore {
    fn params(&self) -> Vec<Param> {
        self.names()
            .into_iter()
            .zip(self.tensors())
            .map(|(n, t)| Param::new(n.to_string(), t.clone()))
            .collect()
    }
}

impl<M: Module> Module for [M] {
    fn params(&self) -> Vec<Param> {
        self.iter().flat_map(Module::params).collect()
    }
}

impl<M: Module> Module for Vec<M> {
    fn params(&self) -> Vec<Param> {
        self.as_slice().params()
    }
}

impl<M: Module> Module for Option<M> {
    fn params(&self) -> Vec<Param> {
        self.iter().flat_map(Module::params).collect()
    }
}
