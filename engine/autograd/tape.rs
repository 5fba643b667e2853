//! The tape: the ops recorded on one context, in the order they ran, each with the backward
//! rule that maps its output's gradient to its inputs' gradients. Appending in execution
//! order makes the tape a topological order, so [`backward`] is one reverse sweep.
//!
//! An entry holds its rule (and through it the tensors the rule saved) until a backward
//! frees it; a later backward that reaches a freed entry fails with [`Error::TapeFreed`].

use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::context::op_scope::in_backward_of;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::ops;
use crate::tensor::Tensor;

/// A backward rule: from dL/d output and which inputs want a gradient (`need[k]`), the
/// gradient of each input (None for an input that wants none or gets none), each of its
/// input's shape. `Send + Sync` natively (a tape may cross threads); on wasm, where tensors
/// are neither, not.
#[cfg(not(target_arch = "wasm32"))]
pub type Rule = Arc<dyn Fn(&Tensor, &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync>;
/// A backward rule (see the native form).
#[cfg(target_arch = "wasm32")]
pub type Rule = Arc<dyn Fn(&Tensor, &[bool]) -> Result<Vec<Option<Tensor>>>>;

/// What [`rule`](super::rule) takes: a closure that can be a [`Rule`].
#[cfg(not(target_arch = "wasm32"))]
pub trait RuleFn: Fn(&Tensor, &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static {}
#[cfg(not(target_arch = "wasm32"))]
impl<F: Fn(&Tensor, &[bool]) -> Result<Vec<Option<Tensor>>> + Send + Sync + 'static> RuleFn for F {}
/// What [`rule`](super::rule) takes: a closure that can be a [`Rule`].
#[cfg(target_arch = "wasm32")]
pub trait RuleFn: Fn(&Tensor, &[bool]) -> Result<Vec<Option<Tensor>>> + 'static {}
#[cfg(target_arch = "wasm32")]
impl<F: Fn(&Tensor, &[bool]) -> Result<Vec<Option<Tensor>>> + 'static> RuleFn for F {}

/// What an entry of the tape can still do.
#[derive(Clone)]
enum Step {
    /// A variable made by [`Tape::var`]: gradients stop here.
    Leaf,
    /// An op with its rule.
    Op(Rule),
    /// An op recorded without a rule: a gradient reaching it is [`Error::NoGradient`].
    NoRule,
    /// An op whose rule an earlier backward dropped.
    Freed,
}

#[derive(Clone)]
struct Entry {
    op: &'static str,
    /// The tape index of each input that is a variable (None: a constant).
    inputs: Vec<Option<usize>>,
    /// The output's shape, which its gradient must have.
    shape: Vec<usize>,
    step: Step,
}

struct Inner {
    ctx: Context,
    entries: Vec<Entry>,
}

/// A record of ops on one context. Cloning shares the record.
///
/// ```
/// use wgsl_compute::autograd::Tape;
/// use wgsl_compute::{Context, Tensor};
/// let ctx = Context::cpu();
/// let tape = Tape::new(&ctx);
/// let x = tape.var(&Tensor::from_slice(&ctx, &[3], &[1., 2., 3.])?)?; // (3,)
/// let loss = x.mul(&x)?.sum_all()?;                                  // sum x^2, ()
/// assert_eq!(loss.backward()?.get(&x).unwrap().to_vec()?, vec![2., 4., 6.]);
/// # Ok::<(), wgsl_compute::Error>(())
/// ```
#[derive(Clone)]
pub struct Tape {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Tape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        write!(f, "Tape({} entries on {:?})", inner.entries.len(), inner.ctx)
    }
}

thread_local! {
    /// Depth of nested [`no_grad`] scopes on this thread.
    static NO_GRAD: Cell<usize> = const { Cell::new(0) };
}

/// Runs `f` with recording off on this thread: ops on variables inside return constants.
pub fn no_grad<R>(f: impl FnOnce() -> R) -> R {
    struct Scope;
    impl Drop for Scope {
        fn drop(&mut self) {
            NO_GRAD.with(|d| d.set(d.get() - 1));
        }
    }
    NO_GRAD.with(|d| d.set(d.get() + 1));
    let _scope = Scope;
    f()
}

/// True when ops are recorded on this thread (no [`no_grad`] scope is open).
pub fn is_recording() -> bool {
    NO_GRAD.with(|d| d.get() == 0)
}

impl Tape {
    /// An empty tape on `ctx`.
    pub fn new(ctx: &Context) -> Self {
        Tape {
            inner: Arc::new(Mutex::new(Inner {
                ctx: ctx.clone(),
                entries: vec![],
            })),
        }
    }

    /// The context every variable of this tape lives on.
    pub fn context(&self) -> Context {
        self.lock().ctx.clone()
    }

    /// Entries recorded so far (leaves included).
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// True before anything is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a leaf holding `t` (checked to live on this tape's context); returns its
    /// index. `Tape::var` (beside `Var`, in `var.rs`) wraps it in a variable.
    pub(super) fn push_leaf(&self, t: &Tensor) -> Result<usize> {
        let mut inner = self.lock();
        t.expect_context(&inner.ctx, "Tape::var", "t")?;
        let index = inner.entries.len();
        inner.entries.push(Entry {
            op: "var",
            inputs: vec![],
            shape: t.shape().to_vec(),
            step: Step::Leaf,
        });
        Ok(index)
    }

    /// True when `other` is this tape (not a copy of its contents).
    pub fn same(&self, other: &Tape) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends op `op` with output `out`, inputs at `inputs` and `rule` (None: no gradient);
    /// returns the output's index.
    pub(crate) fn push(&self, op: &'static str, inputs: Vec<Option<usize>>, out: &Tensor, rule: Option<Rule>) -> usize {
        let mut inner = self.lock();
        let index = inner.entries.len();
        inner.entries.push(Entry {
            op,
            inputs,
            shape: out.shape().to_vec(),
            step: rule.map_or(Step::NoRule, Step::Op),
        });
        index
    }
}

/// The gradients of one backward, keyed by variable (`Grads::get`, beside the variables in
/// `var.rs`): every leaf of the tape that the loss depends on (`Tape::var`), and with
/// `Var::backward_retained` every intermediate too (a backward that frees drops an
/// intermediate's gradient once its rule has used it).
pub struct Grads {
    pub(super) tape: Tape,
    pub(super) grads: Vec<Option<Tensor>>,
}

impl std::fmt::Debug for Grads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.grads.iter().filter(|g| g.is_some()).count();
        write!(f, "Grads({n} variables)")
    }
}

/// dL/d every entry the entry `root` of `tape` depends on, seeded with `seed` (checked by
/// the caller to live on the tape's context with the root's shape); frees the entries it
/// passes through unless `retain`.
pub(crate) fn backward(tape: Tape, root: usize, seed: &Tensor, retain: bool) -> Result<Grads> {
    // The entries up to the root, copied out so that no lock is held while rules run. A
    // backward that frees takes their rules out of the tape as well, so that each rule and
    // the tensors it saved are dropped as soon as it has run (the activations go as the
    // sweep passes them, as in other frameworks), not when the sweep ends.
    let mut steps: Vec<Entry> = {
        let mut inner = tape.lock();
        let entries = &mut inner.entries[..=root];
        let copy = entries.to_vec();
        if !retain {
            for e in entries.iter_mut().filter(|e| matches!(e.step, Step::Op(_))) {
                e.step = Step::Freed;
            }
        }
        copy
    };
    let mut grads: Vec<Option<Tensor>> = vec![None; root + 1];
    grads[root] = Some(seed.clone());
    let mut visited = vec![false; root + 1];
    let result = sweep(&mut steps, &mut grads, &mut visited, retain);
    if !retain {
        // Give back the rules the sweep did not reach (another loss may still need them).
        let mut inner = tape.lock();
        for (i, e) in steps.into_iter().enumerate() {
            if !visited[i] && matches!(e.step, Step::Op(_)) {
                inner.entries[i].step = e.step;
            }
        }
    }
    result?;
    Ok(Grads { tape, grads })
}

/// The reverse sweep of [`backward`] over `steps` (the entries up to the root, whose
/// gradient `grads[root]` holds the seed). Without `retain`, each entry's rule is dropped
/// once it has run, and an intermediate's gradient once its rule has used it; a leaf's is
/// kept for the result.
fn sweep(steps: &mut [Entry], grads: &mut [Option<Tensor>], visited: &mut [bool], retain: bool) -> Result<()> {
    for i in (0..steps.len()).rev() {
        let Some(g) = grads[i].clone() else { continue };
        visited[i] = true;
        let rule = match &steps[i].step {
            Step::Leaf => continue,
            Step::Op(rule) => rule.clone(),
            Step::NoRule => return Err(Error::NoGradient { op: steps[i].op }),
            Step::Freed => {
                return Err(Error::TapeFreed {
                    op: "backward",
                    entry: steps[i].op,
                })
            }
        };
        if !retain {
            steps[i].step = Step::Freed;
            grads[i] = None;
        }
        let need: Vec<bool> = steps[i].inputs.iter().map(Option::is_some).collect();
        let got = in_backward_of(steps[i].op, || rule(&g, &need))?;
        drop((rule, g));
        let (name, inputs) = (steps[i].op, steps[i].inputs.clone());
        for (k, input) in inputs.iter().enumerate() {
            let (Some(j), Some(Some(d))) = (input, got.get(k)) else {
                continue;
            };
            let want = &steps[*j].shape;
            if d.shape() != want.as_slice() {
                return Err(Error::mismatch(
                    name,
                    "gradient of an input",
                    d.shape(),
                    "the input",
                    want,
                ));
            }
            grads[*j] = Some(match grads[*j].take() {
                Some(prev) => ops::add(&prev, d)?,
                None => d.clone(),
            });
        }
    }
    Ok(())
}
