//! GPT-2 weights in host memory, loaded from the Hugging Face safetensors layout.
//!
//! Keys: `wte.weight` (V, C), `wpe.weight` (P, C), `h.{i}.ln_1.{weight,bias}` (C),
//! `h.{i}.attn.c_attn.{weight (C, 3C), bias (3C)}`, `h.{i}.attn.c_proj.{weight (C, C), bias}`,
//! `h.{i}.ln_2.*`, `h.{i}.mlp.c_fc.{weight (C, 4C), bias (4C)}`,
//! `h.{i}.mlp.c_proj.{weight (4C, C), bias (C)}`, `ln_f.*`, each with or without a
//! `transformer.` prefix. Linear weights are HF `Conv1D`s, stored (in, out), so `x @ w`
//! applies them. `lm_head.weight` is tied to `wte`: absent, or equal to it. F32, F16 and BF16
//! tensors are held as their exact f32 values (the f64 reference reads them) and
//! [`Weights::dtype`] records the dtype they were stored in, which `Gpt2::new` uploads them
//! in; every shape is checked against the config.

use std::collections::BTreeMap;
use std::path::Path;

use ndarray::{Array1, Array2};

use super::config::Config;
use crate::error::{Error, Result};
use crate::io::safetensors::{self, TensorBytes};
use crate::shape::DType;

/// One transformer block's parameters.
#[derive(Clone, Debug)]
pub struct Block {
    /// First layer norm's scale (C,).
    pub ln_1_weight: Array1<f32>,
    /// First layer norm's shift (C,).
    pub ln_1_bias: Array1<f32>,
    /// Query, key and value projection (C, 3C): q | k | v.
    pub attn_weight: Array2<f32>,
    /// Its bias (3C,).
    pub attn_bias: Array1<f32>,
    /// Attention output projection (C, C).
    pub attn_proj_weight: Array2<f32>,
    /// Its bias (C,).
    pub attn_proj_bias: Array1<f32>,
    /// Second layer norm's scale (C,).
    pub ln_2_weight: Array1<f32>,
    /// Second layer norm's shift (C,).
    pub ln_2_bias: Array1<f32>,
    /// MLP expansion (C, 4C).
    pub fc_weight: Array2<f32>,
    /// Its bias (4C,).
    pub fc_bias: Array1<f32>,
    /// MLP projection back (4C, C).
    pub mlp_proj_weight: Array2<f32>,
    /// Its bias (C,).
    pub mlp_proj_bias: Array1<f32>,
}

/// A whole GPT-2 checkpoint in f32 host arrays.
#[derive(Clone, Debug)]
pub struct Weights {
    /// Sizes and layer-norm epsilon from `config.json`.
    pub config: Config,
    /// Token embeddings (V, C), also the output projection.
    pub wte: Array2<f32>,
    /// Position embeddings (P, C).
    pub wpe: Array2<f32>,
    /// The transformer blocks, input to output.
    pub blocks: Vec<Block>,
    /// Final layer norm's scale (C,).
    pub ln_f_weight: Array1<f32>,
    /// Final layer norm's shift (C,).
    pub ln_f_bias: Array1<f32>,
    /// The dtype the matrices (wte, wpe and each block's four) were stored in, F32 when they
    /// differ: every matrix value above is exactly one of this dtype's.
    pub dtype: DType,
}

impl Weights {
    /// Loads `dir/config.json` and `dir/model.safetensors`.
    pub fn load(dir: &Path) -> Result<Weights> {
        let config = Config::read(&dir.join("config.json"))?;
        // A regular file, read whole (its size is what the checkpoint needs).
        let bytes = crate::io::read_bounded(&dir.join("model.safetensors"), u64::MAX - 1)?;
        Weights::from_safetensors(config, &bytes, &dir.join("model.safetensors").display().to_string())
    }

    /// Parses a safetensors file held in memory (`what` names it in errors).
    pub fn from_safetensors(config: Config, bytes: &[u8], what: &str) -> Result<Weights> {
        let file = safetensors::parse(bytes, what)?;
        let get = Getter {
            file: &file,
            what,
            matrix_dtypes: Default::default(),
        };
        let (c, v, p) = (config.n_embd, config.vocab_size, config.n_positions);
        let blocks = (0..config.n_layer)
            .map(|i| {
                let k = |s: &str| format!("h.{i}.{s}");
                Ok(Block {
                    ln_1_weight: get.vector(&k("ln_1.weight"), c)?,
                    ln_1_bias: get.vector(&k("ln_1.bias"), c)?,
                    attn_weight: get.matrix(&k("attn.c_attn.weight"), c, 3 * c)?,
                    attn_bias: get.vector(&k("attn.c_attn.bias"), 3 * c)?,
                    attn_proj_weight: get.matrix(&k("attn.c_proj.weight"), c, c)?,
                    attn_proj_bias: get.vector(&k("attn.c_proj.bias"), c)?,
                    ln_2_weight: get.vector(&k("ln_2.weight"), c)?,
                    ln_2_bias: get.vector(&k("ln_2.bias"), c)?,
                    fc_weight: get.matrix(&k("mlp.c_fc.weight"), c, 4 * c)?,
                    fc_bias: get.vector(&k("mlp.c_fc.bias"), 4 * c)?,
                    mlp_proj_weight: get.matrix(&k("mlp.c_proj.weight"), 4 * c, c)?,
                    mlp_proj_bias: get.vector(&k("mlp.c_proj.bias"), c)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let wte = get.matrix("wte.weight", v, c)?;
        if file.contains_key("lm_head.weight") {
            let head = get.matrix("lm_head.weight", v, c)?;
            if head != wte {
                return Err(Error::Io {
                    what: format!("{what}: tensor `lm_head.weight`"),
                    message: "differs from wte.weight; only tied output embeddings are supported".into(),
                });
            }
        }
        let wpe = get.matrix("wpe.weight", p, c)?;
        let dtype = match get.matrix_dtypes.borrow().iter().collect::<Vec<_>>().as_slice() {
            [one] => **one,
            _ => DType::F32,
        };
        Ok(Weights {
            wpe,
            wte,
            blocks,
            ln_f_weight: get.vector("ln_f.weight", c)?,
            ln_f_bias: get.vector("ln_f.bias", c)?,
            config,
            dtype,
        })
    }
}

impl Weights {
    /// These weights with the matrices rounded to `dtype` (nearest even, as the device's
    /// `Tensor::to_dtype` rounds): the values a model converted to `dtype` holds, for the
    /// f64 reference. Unchanged for F32 or the dtype they were stored in.
    pub fn rounded(&self, dtype: DType) -> Weights {
        let mut w = self.clone();
        if !dtype.is_half() || dtype == self.dtype {
            return w;
        }
        let round = |a: &mut Array2<f32>| {
            a.mapv_inplace(|x| match dtype {
                DType::BF16 => half::bf16::from_f32(x).to_f32(),
                _ => half::f16::from_f32(x).to_f32(),
            })
        };
        round(&mut w.wte);
        round(&mut w.wpe);
        for b in &mut w.blocks {
            for m in [
                &mut b.attn_weight,
                &mut b.attn_proj_weight,
                &mut b.fc_weight,
                &mut b.mlp_proj_weight,
            ] {
                round(m);
            }
        }
        w.dtype = dtype;
        w
    }

    /// Checks every array against the config (the fields are public, so a caller may have
    /// built or edited them): `Gpt2::new` calls it, so a mismatch is an error, not a panic.
    pub fn validate(&self) -> Result<()> {
        let op = "Weights::validate";
        let cfg = &self.config;
        cfg.validate()
            .map_err(|m| Error::value(op, "config", "a valid GPT-2 config", m))?;
        let (c, v, p) = (cfg.n_embd, cfg.vocab_size, cfg.n_positions);
        let check = |arg: &'static str, got: &[usize], want: &[usize]| {
            if got == want {
                Ok(())
            } else {
                Err(Error::shape(op, arg, format!("{want:?} from the config"), got))
            }
        };
        check("wte", self.wte.shape(), &[v, c])?;
        check("wpe", self.wpe.shape(), &[p, c])?;
        check("ln_f_weight", self.ln_f_weight.shape(), &[c])?;
        check("ln_f_bias", self.ln_f_bias.shape(), &[c])?;
        if self.blocks.len() != cfg.n_layer {
            return Err(Error::value(
                op,
                "blocks",
                format!("n_layer = {}", cfg.n_layer),
                self.blocks.len(),
            ));
        }
        for b in &self.blocks {
            check("ln_1_weight", b.ln_1_weight.shape(), &[c])?;
            check("ln_1_bias", b.ln_1_bias.shape(), &[c])?;
            check("attn_weight", b.attn_weight.shape(), &[c, 3 * c])?;
            check("attn_bias", b.attn_bias.shape(), &[3 * c])?;
            check("attn_proj_weight", b.attn_proj_weight.shape(), &[c, c])?;
            check("attn_proj_bias", b.attn_proj_bias.shape(), &[c])?;
            check("ln_2_weight", b.ln_2_weight.shape(), &[c])?;
            check("ln_2_bias", b.ln_2_bias.shape(), &[c])?;
            check("fc_weight", b.fc_weight.shape(), &[c, 4 * c])?;
            check("fc_bias", b.fc_bias.shape(), &[4 * c])?;
            check("mlp_proj_weight", b.mlp_proj_weight.shape(), &[4 * c, c])?;
            check("mlp_proj_bias", b.mlp_proj_bias.shape(), &[c])?;
        }
        Ok(())
    }
}

/// Looks tensors up by name (with or without `transformer.`), checks shapes, widens to f32.
struct Getter<'f, 'a> {
    file: &'f BTreeMap<String, TensorBytes<'a>>,
    what: &'f str,
    /// The stored dtypes of the matrices read so far.
    matrix_dtypes: std::cell::RefCell<std::collections::BTreeSet<DType>>,
}

impl Getter<'_, '_> {
    fn raw(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        self.raw_typed(name, shape).map(|(v, _)| v)
    }

    fn raw_typed(&self, name: &str, shape: &[usize]) -> Result<(Vec<f32>, DType)> {
        let what = format!("{}: tensor `{name}`", self.what);
        let t = self
            .file
            .get(name)
            .or_else(|| self.file.get(&format!("transformer.{name}")))
            .ok_or_else(|| Error::Io {
                what: what.clone(),
                message: "missing from the file".into(),
            })?;
        if t.shape != shape {
            return Err(Error::Io {
                what,
                message: format!("has shape {:?}, the config needs {shape:?}", t.shape),
            });
        }
        Ok((t.to_f32(&what)?, t.dtype(&what)?))
    }

    fn vector(&self, name: &str, n: usize) -> Result<Array1<f32>> {
        Ok(Array1::from_vec(self.raw(name, &[n])?))
    }

    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Array2<f32>> {
        let (v, dtype) = self.raw_typed(name, &[rows, cols])?;
        self.matrix_dtypes.borrow_mut().insert(dtype);
        Array2::from_shape_vec((rows, cols), v).map_err(|e| Error::Io {
            what: format!("{}: tensor `{name}`", self.what),
            message: e.to_string(),
        })
    }
}
