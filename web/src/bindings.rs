//! The wasm-bindgen exports: what `web/main.js` calls. Every call that touches the device
//! returns a promise; an engine error rejects it with a JS `Error` carrying the message.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Mutex;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};
use wgsl_compute::plan::Plan;
use wgsl_compute::{Context, Tensor};

use crate::gpt2;
use crate::js::{error, object};
use crate::suite::{self, Case, Row};
use crate::train;

/// Seed of parity case `i`: fixed, so a failing row reproduces.
const SEED_BASE: u64 = 0x5eed_0000;

/// The message of the last panic, for the page to show next to the exception it caused.
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str);
}

/// Runs when the module is instantiated: panics go to the console and to [`last_panic`].
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let message = format!("engine-web panicked: {info}");
        console_error(&message);
        *LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()) = Some(message);
    }));
}

/// The message of the last Rust panic (a wasm `RuntimeError: unreachable` in JS), if any.
#[wasm_bindgen(js_name = lastPanic)]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The page's sampling defaults, `{temperature, topK, seed}`: the `gpt2` example's
/// (`Sampling::recommended(Sampling::DEFAULT_SEED)`).
#[wasm_bindgen(js_name = gpt2Defaults)]
pub fn gpt2_defaults() -> JsValue {
    use wgsl_compute::generate::Sampling;
    object(&[
        ("temperature", Sampling::DEFAULT_TEMPERATURE.into()),
        ("topK", (Sampling::DEFAULT_TOP_K as u32).into()),
        ("seed", (Sampling::DEFAULT_SEED as u32).into()),
    ])
}

/// One line on GPT-2 support in this build.
#[wasm_bindgen(js_name = gpt2Status)]
pub fn gpt2_status() -> String {
    gpt2::STATUS.into()
}

/// A context on the browser's WebGPU adapter (or, if allowed, the CPU reference), and the
/// parity suite's case list.
#[wasm_bindgen]
pub struct Engine {
    ctx: Context,
    cases: Rc<Vec<Case>>,
}

#[wasm_bindgen]
impl Engine {
    /// Opens the browser's WebGPU adapter (`Promise<Engine>`). Without one, rejects with a
    /// message, or with `allowCpu` runs every op on the CPU reference in wasm.
    pub async fn create(#[wasm_bindgen(js_name = allowCpu)] allow_cpu: bool) -> Result<Engine, JsValue> {
        let ctx = Context::new_async().await.map_err(error)?;
        if !ctx.is_gpu() && !allow_cpu {
            return Err(error(
                "no WebGPU adapter: navigator.gpu.requestAdapter() returned none (enable WebGPU, e.g. \
                 chrome://flags/#enable-unsafe-webgpu, or start Chromium with --enable-unsafe-webgpu)",
            ));
        }
        Ok(Engine {
            ctx,
            cases: Rc::new(suite::cases()),
        })
    }

    /// A context on the CPU reference compiled into the page, beside a WebGPU one: where the
    /// adapter is a software fallback (SwiftShader), the page runs GPT-2 and training here,
    /// several times faster.
    pub fn cpu() -> Engine {
        Engine {
            ctx: Context::cpu(),
            cases: Rc::new(suite::cases()),
        }
    }

    /// The adapter: `{ name, backend, deviceType, driver, isGpu, subgroups, shaderF16,
    /// maxStorageBinding, maxWorkgroupMemory, maxInvocations, summary }`.
    pub fn info(&self) -> JsValue {
        let i = self.ctx.info();
        object(&[
            ("name", i.name.as_str().into()),
            ("backend", format!("{:?}", i.backend).into()),
            ("deviceType", i.device_type.as_str().into()),
            ("driver", i.driver.as_str().into()),
            ("isGpu", self.ctx.is_gpu().into()),
            ("subgroups", i.subgroups.into()),
            ("shaderF16", i.shader_f16.into()),
            ("maxStorageBinding", (i.max_storage_binding as f64).into()),
            ("maxWorkgroupMemory", i.max_workgroup_memory.into()),
            ("maxInvocations", i.max_invocations.into()),
            ("summary", i.to_string().into()),
        ])
    }

    /// The parity cases in table order: `[{ index, suite, op, direction, shape }]`.
    #[wasm_bindgen(js_name = parityCases)]
    pub fn parity_cases(&self) -> js_sys::Array {
        self.cases
            .iter()
            .enumerate()
            .map(|(i, c)| {
                object(&[
                    ("index", (i as u32).into()),
                    ("suite", c.suite().into()),
                    ("op", c.op().into()),
                    ("direction", c.direction().into()),
                    ("shape", c.shape().into()),
                ])
            })
            .collect()
    }

    /// Runs parity case `index` (`Promise<row>`), row = `{ suite, op, direction, shape,
    /// strategy, maxAbsErr, gate, passed, detail }`. An op error is a failed row, not a
    /// rejection; an index out of range rejects.
    #[wasm_bindgen(js_name = runParityCase)]
    pub fn run_parity_case(&self, index: u32) -> js_sys::Promise {
        let (ctx, cases) = (self.ctx.clone(), self.cases.clone());
        future_to_promise(async move {
            let case = cases.get(index as usize).ok_or_else(|| {
                error(format!(
                    "parity case {index} does not exist (there are {})",
                    cases.len()
                ))
            })?;
            Ok(row_to_js(&suite::run_case(&ctx, case, SEED_BASE + index as u64).await))
        })
    }

    /// Loads GPT-2 from `config.json` text and `model.safetensors` bytes (`Promise<Gpt2>`),
    /// its matrices in `dtype` (`f16`, `bf16`, `f32`; absent or empty: as the checkpoint
    /// stores them, F16 for the shipped model). Another dtype name throws.
    #[wasm_bindgen(js_name = loadGpt2)]
    pub fn load_gpt2(&self, config_json: String, weights: Vec<u8>, dtype: Option<String>) -> js_sys::Promise {
        let ctx = self.ctx.clone();
        future_to_promise(async move {
            let dtype = match dtype.as_deref().map(str::trim) {
                None | Some("") => None,
                Some(d) => Some(
                    wgsl_compute::DType::parse(d)
                        .ok_or_else(|| error(format!("dtype `{d}` is not f16, bf16 or f32")))?,
                ),
            };
            let model = gpt2::Model::load(&ctx, &config_json, &weights, dtype).map_err(error)?;
            Ok(Gpt2 { model }.into())
        })
    }
}

#[wasm_bindgen]
impl Engine {
    /// A plan of `dispatches` dependent one-element dispatches (`Plan::dispatch_floor`), to
    /// measure what a dispatch costs on this adapter: time [`DispatchFloor::run`] from JS.
    #[wasm_bindgen(js_name = dispatchFloor)]
    pub fn dispatch_floor(&self, dispatches: u32) -> Result<DispatchFloor, JsValue> {
        let (plan, out) = Plan::dispatch_floor(&self.ctx, dispatches as usize).map_err(error)?;
        Ok(DispatchFloor {
            ctx: self.ctx.clone(),
            plan: Rc::new(plan),
            out,
        })
    }
}

#[wasm_bindgen]
impl Engine {
    /// A GPT-2-shaped model with random weights (`Promise<Gpt2>`): `nLayer` layers, width
    /// `nEmbd`, `nHead` heads, matrices in `dtype` (`f32`, `f16`, `bf16`); 12, 768, 12 is the
    /// 124M shape.
    #[wasm_bindgen(js_name = randomGpt2)]
    pub fn random_gpt2(
        &self,
        #[wasm_bindgen(js_name = nLayer)] n_layer: u32,
        #[wasm_bindgen(js_name = nEmbd)] n_embd: u32,
        #[wasm_bindgen(js_name = nHead)] n_head: u32,
        dtype: String,
    ) -> js_sys::Promise {
        let ctx = self.ctx.clone();
        future_to_promise(async move {
            let dtype = wgsl_compute::DType::parse(dtype.trim())
                .ok_or_else(|| error(format!("dtype `{dtype}` is not f16, bf16 or f32")))?;
            let model =
                gpt2::Model::random(&ctx, n_layer as usize, n_embd as usize, n_head as usize, dtype).map_err(error)?;
            Ok(Gpt2 { model }.into())
        })
    }
}

/// The dispatch-floor plan of [`Engine::dispatch_floor`].
#[wasm_bindgen]
pub struct DispatchFloor {
    ctx: Context,
    plan: Rc<Plan>,
    /// (1, 1): the plan's result, read back to wait for the device.
    out: Tensor,
}

#[wasm_bindgen]
impl DispatchFloor {
    /// Replays the plan `reps` times, each replay submitted on its own (with `oneSubmit`,
    /// all of them in one submission), then reads the result back (`Promise<number>`, the
    /// value). The time from the call to the promise's settling, over `reps` replays, is the
    /// time of one replay.
    pub fn run(&self, reps: u32, #[wasm_bindgen(js_name = oneSubmit)] one_submit: Option<bool>) -> js_sys::Promise {
        let (ctx, plan, out) = (self.ctx.clone(), self.plan.clone(), self.out.clone());
        let each = !one_submit.unwrap_or(false);
        future_to_promise(async move {
            for _ in 0..reps {
                plan.replay(&ctx).map_err(error)?;
                if each {
                    ctx.submit();
                }
            }
            let v = out.to_vec_async().await.map_err(error)?;
            Ok(JsValue::from_f64(v.first().copied().unwrap_or(f32::NAN) as f64))
        })
    }
}

#[wasm_bindgen]
impl Engine {
    /// A fresh character-level model of `mixer` (`mingru`, `signed`, `rotation`, `givens`,
    /// `givens:K`) and `width` on `text`, trained on `batch` rows a step, seeded by `seed`
    /// (a bad mixer name, width or a too-short text throws).
    pub fn trainer(&self, text: &str, mixer: &str, width: u32, batch: u32, seed: u32) -> Result<Trainer, JsValue> {
        let t =
            train::Trainer::new(&self.ctx, text, mixer, width as usize, batch as usize, seed as u64).map_err(error)?;
        Ok(Trainer {
            inner: Rc::new(RefCell::new(t)),
        })
    }
}

#[wasm_bindgen]
impl Engine {
    /// A fine-tune of the checkpoint (`config.json` text, `model.safetensors` bytes) on the
    /// first `corpus` tokens of `text` (`gpt2::Tuner`: GPT-2 on the autograd tape, Adam).
    #[wasm_bindgen(js_name = gpt2Tuner)]
    pub fn gpt2_tuner(
        &self,
        config_json: &str,
        weights: Vec<u8>,
        text: &str,
        corpus: u32,
    ) -> Result<Gpt2Tuner, JsValue> {
        let t = gpt2::Tuner::new(&self.ctx, config_json, &weights, text, corpus as usize).map_err(error)?;
        Ok(Gpt2Tuner {
            inner: Rc::new(RefCell::new(t)),
        })
    }
}

/// What the page's training buttons drive: one step, its loss.
pub trait Steps {
    /// One training step; its loss.
    fn step(&mut self) -> impl std::future::Future<Output = wgsl_compute::Result<f32>>;
}

impl Steps for gpt2::Tuner {
    fn step(&mut self) -> impl std::future::Future<Output = wgsl_compute::Result<f32>> {
        gpt2::Tuner::step(self)
    }
}

impl Steps for train::Trainer {
    fn step(&mut self) -> impl std::future::Future<Output = wgsl_compute::Result<f32>> {
        train::Trainer::step(self)
    }
}

/// One step of `inner` as a `Promise<number>` (its loss); rejects with `busy` while another
/// call holds it.
fn step_promise<T: Steps + 'static>(inner: &Rc<RefCell<T>>, busy: &'static str) -> js_sys::Promise {
    let inner = inner.clone();
    future_to_promise(async move {
        let mut t = inner.try_borrow_mut().map_err(|_| error(busy))?;
        let loss = t.step().await.map_err(error)?;
        Ok(JsValue::from_f64(loss as f64))
    })
}

/// A GPT-2 being fine-tuned in the page.
#[wasm_bindgen]
pub struct Gpt2Tuner {
    inner: Rc<RefCell<gpt2::Tuner>>,
}

#[wasm_bindgen]
impl Gpt2Tuner {
    /// Parameters, text, batch shape, learning rate.
    pub fn describe(&self) -> String {
        self.inner.borrow().describe()
    }

    /// One fine-tuning step (`Promise<number>`, its loss). Rejects while another step of this
    /// tuner is still running.
    pub fn step(&self) -> js_sys::Promise {
        step_promise(&self.inner, "a fine-tuning step of this tuner is still running")
    }

    /// The tuned model, to generate with (`Promise<Gpt2>`).
    pub fn model(&self) -> js_sys::Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let t = inner
                .try_borrow()
                .map_err(|_| error("a fine-tuning step of this tuner is still running"))?;
            let model = t.model().await.map_err(error)?;
            Ok(Gpt2 { model }.into())
        })
    }
}

/// A character-level minGRU model being trained in the page.
#[wasm_bindgen]
pub struct Trainer {
    inner: Rc<RefCell<train::Trainer>>,
}

#[wasm_bindgen]
impl Trainer {
    /// Model, widths, parameters, vocabulary, batch shape.
    pub fn describe(&self) -> String {
        self.inner.borrow().describe()
    }

    /// One training step (`Promise<number>`, its loss). Rejects while another step or a
    /// sample of this trainer is still running.
    pub fn step(&self) -> js_sys::Promise {
        step_promise(
            &self.inner,
            "a training step or sample of this trainer is still running",
        )
    }

    /// `n` characters after `prompt` at `temperature` (`Promise<string>`).
    pub fn sample(&self, prompt: String, n: u32, temperature: f32) -> js_sys::Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let mut t = inner
                .try_borrow_mut()
                .map_err(|_| error("a training step or sample of this trainer is still running"))?;
            let text = t.sample(&prompt, n as usize, temperature).await.map_err(error)?;
            Ok(text.into())
        })
    }
}

/// A loaded GPT-2 model.
#[wasm_bindgen]
pub struct Gpt2 {
    model: gpt2::Model,
}

#[wasm_bindgen]
impl Gpt2 {
    /// One line on the model: layers, heads, width, context, vocabulary.
    pub fn describe(&self) -> String {
        self.model.describe()
    }

    /// Ends the running generation after the token it is on: its promise resolves with the
    /// ids written so far (the page's Stop button).
    pub fn stop(&self) {
        self.model.stop.request();
    }

    /// Generation of `nTokens` tokens after `prompt` (`Promise<Uint32Array>` of the generated
    /// ids, fewer after `stop()`); `onToken(id, text)` is called as each token is chosen. With `temperature` > 0 it
    /// samples among the `topK` most likely tokens (0: all; default 40) from a generator
    /// seeded with `seed` (default 0); without it, or at 0, it takes the arg-max (greedy).
    pub fn generate(
        &self,
        prompt: String,
        #[wasm_bindgen(js_name = nTokens)] n_tokens: u32,
        #[wasm_bindgen(js_name = onToken)] on_token: js_sys::Function,
        temperature: Option<f32>,
        #[wasm_bindgen(js_name = topK)] top_k: Option<u32>,
        seed: Option<u32>,
    ) -> js_sys::Promise {
        use wgsl_compute::generate::Sampling;
        let model = self.model.clone();
        let sampling = match temperature {
            Some(t) if t > 0.0 => Sampling::TopK {
                temperature: t,
                k: top_k.map(|k| k as usize).unwrap_or(Sampling::DEFAULT_TOP_K),
                seed: seed.unwrap_or(0).into(),
            },
            _ => Sampling::Greedy,
        };
        future_to_promise(async move {
            let callback = |id: u32, text: &str| {
                // A throwing callback must not abort generation half-way; it is logged.
                if let Err(e) = on_token.call2(&JsValue::NULL, &id.into(), &text.into()) {
                    console_error(&format!("onToken threw: {e:?}"));
                }
            };
            let ids = model
                .generate(&prompt, n_tokens as usize, sampling, next_task, callback)
                .await
                .map_err(error)?;
            Ok(js_sys::Uint32Array::from(&ids[..]).into())
        })
    }
}

#[wasm_bindgen]
impl Gpt2 {
    /// `nTokens` greedy tokens after the prompt's token ids (`Promise<Uint32Array>`), through
    /// the same kept plans as `Gpt2::generate` (`generate::Generate`): what the Dawn runner times.
    #[wasm_bindgen(js_name = generateIds)]
    pub fn generate_ids(&self, prompt: Vec<u32>, #[wasm_bindgen(js_name = nTokens)] n_tokens: u32) -> js_sys::Promise {
        use wgsl_compute::generate::Sampling;
        let model = self.model.clone();
        future_to_promise(async move {
            let ids = model
                .generate_ids(&prompt, n_tokens as usize, Sampling::Greedy, next_task, |_| {})
                .await
                .map_err(error)?;
            Ok(js_sys::Uint32Array::from(&ids[..]).into())
        })
    }

    /// Decode steps a submission from now on (the library's default: 8). Throws while a
    /// generation runs.
    #[wasm_bindgen(js_name = setChunk)]
    pub fn set_chunk(&self, chunk: u32) -> Result<(), JsValue> {
        self.model.set_chunk(chunk as usize).map_err(error)
    }
}

/// Resolves on the next macrotask (`setTimeout(0)`): awaited between the CPU reference's
/// tokens, whose futures are ready at once, so that the page repaints and hears a Stop click.
/// Where there is no `setTimeout` it resolves at once.
async fn next_task() {
    let mut schedule = |resolve: js_sys::Function, _reject: js_sys::Function| {
        let timer = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("setTimeout"))
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        let queued = timer.is_some_and(|t| t.call2(&JsValue::NULL, &resolve, &JsValue::from(0)).is_ok());
        if !queued {
            let _ = resolve.call0(&JsValue::NULL);
        }
    };
    // A resolved or rejected timer promise both mean "go on".
    let _ = JsFuture::from(js_sys::Promise::new(&mut schedule)).await;
}

fn row_to_js(row: &Row) -> JsValue {
    object(&[
        ("suite", row.suite.into()),
        ("op", row.op.as_str().into()),
        ("direction", row.direction.into()),
        ("shape", row.shape.as_str().into()),
        ("strategy", row.strategy.as_str().into()),
        ("maxAbsErr", row.max_abs_err.into()),
        ("gate", row.gate.to_string().into()),
        ("passed", row.passed.into()),
        ("detail", row.detail.as_str().into()),
    ])
}
