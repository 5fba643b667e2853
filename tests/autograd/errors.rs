//! Bad input to the tape, each a clear error: a non-scalar loss without a seed, a variable
//! from another context, an op without a gradient, a second backward over a freed tape;
//! and what turns recording off (constants, detach, no_grad).

use wgsl_compute::autograd::{no_grad, Tape, Var};
use wgsl_compute::{Context, Error, Tensor};

fn tensor(ctx: &Context, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|i| 0.25 + i as f32 * 0.5).collect();
    Tensor::from_slice(ctx, shape, &data).unwrap()
}

#[test]
fn autograd_backward_of_a_non_scalar_loss_needs_a_seed() {
    let ctx = Context::cpu();
    let tape = Tape::new(&ctx);
    let x = tape.var(&tensor(&ctx, &[3, 5])).unwrap();
    let y = x.exp().unwrap();
    let err = y.backward().unwrap_err();
    assert!(
        matches!(
            err,
            Error::Shape {
                op: "backward",
                arg: "loss",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("[3, 5]"), "{err}");
    // With a seed of the loss's shape it runs; a seed of another shape is refused.
    let bad = y.backward_with(&tensor(&ctx, &[5, 3])).unwrap_err();
    assert!(matches!(bad, Error::ShapeMismatch { op: "backward", .. }), "{bad}");
    let g = y.backward_with(&tensor(&ctx, &[3, 5])).unwrap();
    assert_eq!(g.get(&x).unwrap().shape(), &[3, 5]);
}

#[test]
fn autograd_variables_of_another_context_are_refused() {
    let (a, b) = (Context::cpu(), Context::cpu());
    let tape = Tape::new(&a);
    let err = tape.var(&tensor(&b, &[3])).unwrap_err();
    assert!(matches!(err, Error::WrongContext { op: "Tape::var", .. }), "{err}");
    let x = tape.var(&tensor(&a, &[3])).unwrap();
    let other = Var::constant(&tensor(&b, &[3]));
    let err = x.mul(&other).unwrap_err();
    assert!(matches!(err, Error::WrongContext { op: "mul", .. }), "{err}");
    // Two tapes on one context do not meet either.
    let y = Tape::new(&a).var(&tensor(&a, &[3])).unwrap();
    let err = x.add(&y).unwrap_err();
    assert!(err.to_string().contains("variables of one tape"), "{err}");
}

#[test]
fn autograd_an_op_without_a_gradient_is_named() {
    let ctx = Context::cpu();
    let tape = Tape::new(&ctx);
    let x = tape.var(&tensor(&ctx, &[3, 5])).unwrap();
    let i = x.argmax_last().unwrap(); // recorded, without a rule
    assert!(i.is_variable());
    let loss = i.mul(&x.sum_last().unwrap()).unwrap().sum_all().unwrap();
    let err = loss.backward().unwrap_err();
    assert!(matches!(err, Error::NoGradient { op: "argmax_last" }), "{err}");
    assert!(err.to_string().contains("argmax_last"), "{err}");
    // Detached, the index is a constant and the gradient flows around it.
    let loss = i.detach().mul(&x.sum_last().unwrap()).unwrap().sum_all().unwrap();
    assert!(loss.backward().unwrap().get(&x).is_some());
}

#[test]
fn autograd_a_second_backward_over_a_freed_tape_fails() {
    let ctx = Context::cpu();
    let tape = Tape::new(&ctx);
    let x = tape.var(&tensor(&ctx, &[4])).unwrap();
    let loss = x.tanh().unwrap().sum_all().unwrap();
    let first = loss.backward_retained(None).unwrap();
    let second = loss.backward().unwrap(); // the retained tape allows one more
    assert_eq!(
        first.get(&x).unwrap().to_vec().unwrap(),
        second.get(&x).unwrap().to_vec().unwrap()
    );
    let err = loss.backward().unwrap_err();
    assert!(matches!(err, Error::TapeFreed { op: "backward", .. }), "{err}");
    // The leaves survive: a new loss over them records and differentiates.
    let again = x.exp().unwrap().sum_all().unwrap().backward().unwrap();
    assert!(again.get(&x).is_some());
}

#[test]
fn autograd_records_nothing_unless_asked() {
    let ctx = Context::cpu();
    let tape = Tape::new(&ctx);
    let x = tape.var(&tensor(&ctx, &[3])).unwrap();
    let c = Var::constant(&tensor(&ctx, &[3]));
    let before = tape.len();
    assert!(!c.exp().unwrap().is_variable(), "ops on constants return constants");
    let y = no_grad(|| x.exp()).unwrap();
    assert!(!y.is_variable(), "no_grad turns recording off");
    assert!(!x.detach().exp().unwrap().is_variable());
    assert_eq!(tape.len(), before, "nothing was recorded");
    let err = y.sum_all().unwrap().backward().unwrap_err();
    assert!(matches!(err, Error::Value { op: "backward", .. }), "{err}");
    assert!(x.exp().unwrap().is_variable(), "recording is back on after the scope");
}

#[test]
fn autograd_means_of_empty_variables_are_refused_as_the_ops_refuse_them() {
    // Issue 41, item 7: `Var::mean_all` / `mean_last` of empty variables gave -0.0 where
    // `ops::mean_all` / `mean_last` refuse them.
    let check = |ctx: &Context| {
        let tape = Tape::new(ctx);
        for shape in [&[0usize][..], &[3, 0], &[0, 4]] {
            let t = Tensor::zeros(ctx, shape).unwrap();
            let x = tape.var(&t).unwrap();
            let err = x.mean_all().unwrap_err();
            assert!(matches!(err, Error::Shape { op: "mean_all", .. }), "{shape:?}: {err}");
            assert!(matches!(
                wgsl_compute::ops::mean_all(&t),
                Err(Error::Shape { op: "mean_all", .. })
            ));
        }
        for shape in [&[0usize][..], &[3, 0], &[]] {
            let t = Tensor::zeros(ctx, shape).unwrap();
            let x = tape.var(&t).unwrap();
            let err = x.mean_last().unwrap_err();
            assert!(matches!(err, Error::Shape { op: "mean_last", .. }), "{shape:?}: {err}");
            assert!(wgsl_compute::ops::mean_last(&t).is_err(), "{shape:?}");
        }
        // An empty leading axis is a mean over rows that exist: (0, 4) -> (0,), as the op.
        let t = Tensor::zeros(ctx, &[0, 4]).unwrap();
        assert_eq!(tape.var(&t).unwrap().mean_last().unwrap().shape(), &[0]);
        assert_eq!(wgsl_compute::ops::mean_last(&t).unwrap().shape(), &[0]);
        let x = tape.var(&tensor(ctx, &[2, 3])).unwrap();
        assert_eq!(x.mean_all().unwrap().tensor().to_vec().unwrap(), vec![1.5]);
    };
    check(&Context::cpu());
    crate::common::each_adapter(check);
}

/// A backward through freed entries names the op the caller called, not the op it is made
/// of (issue 45: `sum_all` was reported as `sum_last`), on the CPU context and every adapter.
#[test]
fn autograd_errors_name_the_op_the_caller_called() {
    let check = |ctx: &Context| {
        type Loss = fn(&Var) -> wgsl_compute::Result<Var>;
        let cases: [(&str, Loss); 5] = [
            ("sum_all", |x| x.mul(x)?.sum_all()),
            ("mean_all", |x| x.tanh()?.mean_all()),
            ("mean_last", |x| x.exp()?.sum_last()?.reshape(&[1, 2])?.mean_last()),
            ("gelu", |x| x.sum_all()?.gelu()),
            ("rsub_scalar", |x| 1.0 - &x.sum_all()?),
        ];
        for (name, loss) in cases {
            let tape = Tape::new(ctx);
            let x = tape.var(&tensor(ctx, &[2, 3])).unwrap();
            let loss = loss(&x).unwrap();
            loss.backward().unwrap();
            let err = loss.backward().unwrap_err();
            let want = name;
            assert!(
                matches!(err, Error::TapeFreed { op: "backward", entry } if entry == want),
                "{name}: {err}"
            );
            assert!(err.to_string().contains(&format!("`{want}`")), "{err}");
        }
    };
    check(&Context::cpu());
    crate::common::each_adapter(check);
}

/// `item()` reads a one-element variable back and refuses any other size; the operators
/// return the op's error (no panic) when shapes do not broadcast.
#[test]
fn autograd_item_and_operators_refuse_bad_shapes() {
    let check = |ctx: &Context| {
        let tape = Tape::new(ctx);
        let x = tape.var(&tensor(ctx, &[2, 3])).unwrap();
        let s = x.sum_all().unwrap();
        let want: f32 = (0..6).map(|i| 0.25 + i as f32 * 0.5).sum();
        assert!((s.item().unwrap() - want).abs() < 1e-5);
        assert_eq!(x.reshape(&[6]).unwrap().narrow(0, 2, 3).unwrap().item().unwrap(), 1.25);
        let err = x.item().unwrap_err();
        assert!(matches!(err, Error::Shape { op: "item", .. }), "{err}");
        assert!(err.to_string().contains("[2, 3]"), "{err}");
        let y = tape.var(&tensor(ctx, &[4])).unwrap();
        for r in [&x + &y, &x - &y, &x * &y, &x / &y] {
            let err = r.unwrap_err();
            assert!(
                err.to_string().contains("[2, 3]") && err.to_string().contains("[4]"),
                "{err}"
            );
        }
        // Operands of two tapes are refused too.
        let other = Tape::new(ctx).var(&tensor(ctx, &[2, 3])).unwrap();
        assert!((&x + &other).unwrap_err().to_string().contains("two tapes"));
    };
    check(&Context::cpu());
    crate::common::each_adapter(check);
}

#[test]
fn autograd_packed_attention_names_its_argument_and_the_expected_shape() {
    let ctx = Context::cpu();
    let tape = Tape::new(&ctx);
    for (shape, batch, heads, says) in [
        (&[6, 12, 1][..], 2, 2, "(B T, 3C)"),
        (&[6, 13][..], 2, 2, "multiple of heads = 2"),
        (&[6, 12][..], 2, 3, "multiple of heads = 3"),
        (&[6, 12][..], 4, 2, "B = batch = 4"),
        (&[6, 12][..], 0, 2, "B = batch = 0"),
    ] {
        let qkv = tape.var(&tensor(&ctx, shape)).unwrap();
        let err = Var::packed_attention(&qkv, batch, heads).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Shape {
                    op: "packed_attention",
                    arg: "qkv",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains(says), "{shape:?} {batch} {heads}: {err}");
    }
    let qkv = tape.var(&tensor(&ctx, &[6, 12])).unwrap();
    assert_eq!(Var::packed_attention(&qkv, 2, 2).unwrap().shape(), &[6, 4]);
}
