//! Which op the caller called, for messages raised far below it: a per-thread stack of op
//! names. The autograd tape pushes the op it records (and, during a backward, the op whose
//! rule runs); the tensor constructors push themselves around an upload. An upload inside a
//! plan capture ([`super::Gpu::write`]) then names the outermost op (what the user called)
//! and the innermost (what uploaded), instead of "an op".

use std::cell::RefCell;

/// One entry: an op's name, and whether it is that op's backward rule that runs.
#[derive(Clone, Copy)]
struct Frame {
    op: &'static str,
    backward: bool,
}

thread_local! {
    static STACK: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
}

/// Pops its frame when dropped, so a scope ends even when `f` returns early or panics.
struct Pop;

impl Drop for Pop {
    fn drop(&mut self) {
        STACK.with(|s| s.borrow_mut().pop());
    }
}

fn scoped<R>(frame: Frame, f: impl FnOnce() -> R) -> R {
    STACK.with(|s| s.borrow_mut().push(frame));
    let _pop = Pop;
    f()
}

/// Runs `f` with `op` named as the op running on this thread.
pub(crate) fn in_op<R>(op: &'static str, f: impl FnOnce() -> R) -> R {
    scoped(Frame { op, backward: false }, f)
}

/// Runs `f` (the backward rule of `op`) with it named as running on this thread.
pub(crate) fn in_backward_of<R>(op: &'static str, f: impl FnOnce() -> R) -> R {
    scoped(Frame { op, backward: true }, f)
}

fn describe_frame(f: Frame) -> String {
    match f.backward {
        true => format!("the backward of `{}`", f.op),
        false => format!("`{}`", f.op),
    }
}

/// The running op for a message: "`outer`", or "`outer` (in `inner`)" when the op that
/// raised it runs inside another; None outside every op.
pub(crate) fn describe() -> Option<String> {
    STACK.with(|s| {
        let s = s.borrow();
        let outer = *s.first()?;
        let inner = *s.last()?;
        let same = outer.op == inner.op && outer.backward == inner.backward;
        Some(match same {
            true => describe_frame(outer),
            false => format!("{} (in {})", describe_frame(outer), describe_frame(inner)),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outer_and_inner_ops_are_named_and_popped() {
        assert_eq!(describe(), None);
        in_op("sum_all", || {
            assert_eq!(describe().as_deref(), Some("`sum_all`"));
            in_op("Tensor::full", || {
                assert_eq!(describe().as_deref(), Some("`sum_all` (in `Tensor::full`)"));
            });
        });
        in_backward_of("where", || {
            assert_eq!(describe().as_deref(), Some("the backward of `where`"));
        });
        assert_eq!(describe(), None);
    }
}
