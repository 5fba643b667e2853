//! The vec4 forms of the copy and elementwise kernels against the f64 reference: sizes around
//! the vec4 boundary (1, 3, 4, 5, 1023, 4096 + 3), view offsets on and off the 16-byte grid,
//! broadcasts read as vec4s or splatted scalars, fused chains, copies into views; and which
//! form ran, from the profiler's kernel names. Outputs are poisoned (NaN) before every op by
//! the test contexts, so an element no form writes fails.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::{Gate, Rng};
use wgsl_compute::fused::{self, Graph};
use wgsl_compute::ops;
use wgsl_compute::shape::Vec4Read;
use wgsl_compute::{reference, Context, Tensor};
use wgsl_compute::{Binary, Unary};

use crate::common::{assert_close, each_adapter, each_adapter_alone};

const GATE: Gate = Gate::new(1e-6, 1e-5);
const SIZES: [usize; 6] = [1, 3, 4, 5, 1023, 4096 + 3];

fn random(rng: &mut Rng, shape: &[usize], lo: f64, hi: f64) -> ArrayD<f32> {
    let n = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), rng.vec_range(n, lo, hi)).unwrap()
}

fn flat(a: &ArrayD<f32>) -> Vec<f32> {
    a.iter().copied().collect()
}

/// `data` uploaded with `pad` elements before it, and the view of it that starts at `pad`:
/// a view whose offset is on the 16-byte grid when `pad % 4 == 0`.
fn at_offset(ctx: &Context, data: &ArrayD<f32>, pad: usize) -> Tensor {
    let mut shape = data.shape().to_vec();
    let row: usize = shape[1..].iter().product();
    assert_eq!(pad % row.max(1), 0, "whole rows of padding");
    let rows = pad / row.max(1);
    let mut v = vec![7.0f32; pad];
    v.extend(data.iter());
    shape[0] += rows;
    Tensor::from_slice(ctx, &shape, &v)
        .unwrap()
        .narrow(0, rows, shape[0])
        .unwrap()
}

#[test]
fn vec4_unary_ops_at_sizes_around_the_vec4_boundary() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(41);
        for op in Unary::ALL {
            for n in SIZES {
                let (lo, hi) = match op {
                    Unary::Log | Unary::Sqrt => (0.1, 4.0),
                    _ => (-4.0, 4.0),
                };
                let x = random(&mut rng, &[n], lo, hi);
                let want = flat(&reference::elementwise::unary(op, &x.view()));
                let got = ops::unary(op, &Tensor::from_array(ctx, &x).unwrap()).unwrap();
                assert_close(ctx, &format!("{op:?} n={n}"), &got.to_vec().unwrap(), &want, GATE);
            }
        }
    });
}

#[test]
fn vec4_unary_ops_read_views_on_and_off_the_16_byte_grid() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(42);
        for n in SIZES {
            for pad in [1usize, 2, 3, 4, 8] {
                let x = random(&mut rng, &[n], -2.0, 2.0);
                let view = at_offset(ctx, &x, pad);
                assert_eq!(view.layout().offset, pad);
                for op in [Unary::Identity, Unary::Exp] {
                    let want = flat(&reference::elementwise::unary(op, &x.view()));
                    let got = ops::unary(op, &view).unwrap().to_vec().unwrap();
                    assert_close(ctx, &format!("{op:?} n={n} offset {pad}"), &got, &want, GATE);
                }
                let c = view.contiguous().unwrap().to_vec().unwrap();
                assert_eq!(c, flat(&x), "contiguous n={n} offset {pad}");
            }
        }
    });
}

#[test]
fn vec4_binary_ops_same_shape_and_broadcast() {
    // (a, b): same shapes at every size, rows broadcast as vec4s (b dense along the last
    // axis), scalars per row or in all splatted, offsets off the grid, and rows of odd length
    // (the scalar form) between them.
    let cases: &[(&[usize], &[usize], usize, usize)] = &[
        (&[1], &[1], 0, 0),
        (&[1], &[1], 3, 2), // one element: rank 0 once collapsed, read at the offsets
        (&[3], &[3], 0, 0),
        (&[4], &[4], 0, 0),
        (&[5], &[5], 0, 0),
        (&[1023], &[1023], 0, 0),
        (&[4099], &[4099], 0, 0),
        (&[4099], &[4099], 4, 1),
        (&[1023], &[1], 0, 0),
        (&[5, 8], &[8], 0, 0),
        (&[33, 64], &[64], 64, 4),
        (&[33, 64], &[64], 0, 3),
        (&[6, 12], &[6, 1], 0, 0),
        (&[6, 12], &[6, 1], 12, 1),
        (&[3, 4, 8], &[3, 1, 8], 0, 0),
        (&[2, 7, 16], &[1], 0, 0),
        (&[4, 1, 8], &[5, 1], 0, 0),
        (&[5, 7], &[7], 0, 0),
        (&[5, 6], &[5, 1], 0, 0),
    ];
    each_adapter(|ctx| {
        let mut rng = Rng::new(43);
        for op in Binary::ALL {
            for (sa, sb, pa, pb) in cases {
                let a = random(&mut rng, sa, 0.5, 2.0);
                let b = random(&mut rng, sb, 0.5, 2.0);
                let want = flat(&reference::elementwise::binary(op, &a.view(), &b.view()).unwrap());
                let got = ops::binary(op, &at_offset(ctx, &a, *pa), &at_offset(ctx, &b, *pb)).unwrap();
                assert_close(
                    ctx,
                    &format!("{op:?} {sa:?} (offset {pa}) {sb:?} (offset {pb})"),
                    &got.to_vec().unwrap(),
                    &want,
                    GATE,
                );
            }
        }
    });
}

/// `gelu_tanh(x)` in f64, as the reference's GELU.
fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

#[test]
fn vec4_fused_chains_match_the_reference() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(44);
        // y = exp(-x) * b + x, b broadcast along the rows: a chain of four nodes.
        let mut g = Graph::new();
        let (x, b) = (g.input(), g.input());
        let e = g.unary(Unary::Neg, x);
        let e = g.unary(Unary::Exp, e);
        let m = g.mul(e, b);
        g.add(m, x);
        for (rows, cols, pad) in [
            (1, 4, 0),
            (3, 8, 0),
            (5, 16, 16),
            (7, 12, 12),
            (2, 1024 + 4, 0),
            (3, 5, 0),
        ] {
            let xa = random(&mut rng, &[rows, cols], -2.0, 2.0);
            let ba = random(&mut rng, &[cols], -2.0, 2.0);
            let want: Vec<f32> = xa
                .indexed_iter()
                .map(|(i, &v)| {
                    let v = v as f64;
                    ((-v).exp() * ba[[i[1]]] as f64 + v) as f32
                })
                .collect();
            let tx = at_offset(ctx, &xa, pad);
            let tb = Tensor::from_array(ctx, &ba).unwrap();
            let got = fused::run(&g, &[&tx, &tb]).unwrap().to_vec().unwrap();
            assert_close(ctx, &format!("chain ({rows}, {cols}) offset {pad}"), &got, &want, GATE);
        }
        // The model's own chains: bias + GELU and the residual add with its bias.
        for n in [4usize, 5, 1023, 4096 + 3] {
            let xa = random(&mut rng, &[2, n], -3.0, 3.0);
            let ya = random(&mut rng, &[2, n], -3.0, 3.0);
            let ba = random(&mut rng, &[n], -1.0, 1.0);
            let (tx, ty, tb) = (
                Tensor::from_array(ctx, &xa).unwrap(),
                Tensor::from_array(ctx, &ya).unwrap(),
                Tensor::from_array(ctx, &ba).unwrap(),
            );
            let want: Vec<f32> = xa
                .indexed_iter()
                .map(|(i, &v)| gelu(v as f64 + ba[[i[1]]] as f64) as f32)
                .collect();
            let got = fused::run(&fused::bias_gelu_graph(), &[&tx, &tb])
                .unwrap()
                .to_vec()
                .unwrap();
            assert_close(ctx, &format!("bias_gelu n={n}"), &got, &want, Gate::new(1e-5, 1e-5));
            let want: Vec<f32> = xa
                .indexed_iter()
                .map(|(i, &v)| (v as f64 + ya[i.clone()] as f64 + ba[[i[1]]] as f64) as f32)
                .collect();
            let got = fused::run(&fused::residual_bias_graph(), &[&tx, &ty, &tb])
                .unwrap()
                .to_vec()
                .unwrap();
            assert_close(ctx, &format!("residual_bias n={n}"), &got, &want, GATE);
        }
    });
}

#[test]
fn vec4_copies_into_views_write_the_view_and_nothing_else() {
    each_adapter(|ctx| {
        let mut rng = Rng::new(45);
        // (dst rows, row length, first row written, rows written): aligned rows (vec4), one
        // axis with a tail, and rows that start off the grid (scalar).
        for (rows, cols, start, count) in [
            (10, 8, 2, 3),
            (4, 1023, 1, 2),
            (1, 4099, 0, 1),
            (6, 5, 1, 4),
            (9, 4, 3, 1),
        ] {
            let before = rng.vec_range(rows * cols, -1.0, 1.0);
            let dst = Tensor::from_slice(ctx, &[rows, cols], &before).unwrap();
            let src_data = random(&mut rng, &[count, cols], -1.0, 1.0);
            let src = Tensor::from_array(ctx, &src_data).unwrap();
            wgsl_compute::tensor::copy_into(&dst.narrow(0, start, start + count).unwrap(), &src).unwrap();
            let mut want = before.clone();
            want[start * cols..(start + count) * cols].copy_from_slice(&flat(&src_data));
            assert_eq!(
                dst.to_vec().unwrap(),
                want,
                "copy_into ({rows}, {cols}) rows {start}..{} on {}",
                start + count,
                ctx.info().name
            );
        }
        // One axis: a view of 1023 (a tail of 3) at offsets 4 (vec4) and 1 (scalar).
        for offset in [4usize, 1] {
            let before = rng.vec_range(1100, -1.0, 1.0);
            let dst = Tensor::from_slice(ctx, &[1100], &before).unwrap();
            let src_data = rng.vec_range(1023, -1.0, 1.0);
            let src = Tensor::from_slice(ctx, &[1023], &src_data).unwrap();
            wgsl_compute::tensor::copy_into(&dst.narrow(0, offset, offset + 1023).unwrap(), &src).unwrap();
            let mut want = before.clone();
            want[offset..offset + 1023].copy_from_slice(&src_data);
            assert_eq!(dst.to_vec().unwrap(), want, "copy_into offset {offset}");
        }
        // A column block: rows of 4 from element 4 of rows of 16 (vec4), and from element 1.
        for first in [4usize, 1] {
            let a = random(&mut rng, &[6, 16], -1.0, 1.0);
            let view = Tensor::from_array(ctx, &a)
                .unwrap()
                .narrow(1, first, first + 4)
                .unwrap();
            let want = flat(&a.slice(ndarray::s![.., first..first + 4]).to_owned().into_dyn());
            assert_eq!(
                view.contiguous().unwrap().to_vec().unwrap(),
                want,
                "columns from {first}"
            );
        }
    });
}

#[test]
fn the_vec4_form_runs_where_the_layout_allows_it() {
    each_adapter_alone(|ctx| {
        let run = |f: &dyn Fn() -> Tensor| -> Vec<String> {
            ctx.reset_profile().unwrap();
            ctx.set_profiling(true);
            f().to_vec().unwrap();
            let p = ctx.profile().unwrap();
            ctx.set_profiling(false);
            ctx.reset_profile().unwrap();
            p.kernels.iter().map(|k| k.name.clone()).collect()
        };
        let x = Tensor::from_slice(ctx, &[8, 16], &[0.5; 128]).unwrap();
        let row = Tensor::from_slice(ctx, &[16], &[0.25; 16]).unwrap();
        let col = Tensor::from_slice(ctx, &[8, 1], &[0.25; 8]).unwrap();
        let odd = Tensor::from_slice(ctx, &[8, 15], &[0.5; 120]).unwrap();
        let odd_row = Tensor::from_slice(ctx, &[15], &[0.25; 15]).unwrap();
        let expect = |names: Vec<String>, want: &str| {
            assert!(
                names.iter().any(|n| n.contains(want)),
                "{want} not among {names:?} on {}",
                ctx.info().name
            );
        };
        expect(
            run(&|| ops::unary(Unary::Identity, &x).unwrap()),
            "elementwise/identity/vec4_v",
        );
        expect(run(&|| ops::add(&x, &row).unwrap()), "elementwise/add/vec4_vv");
        expect(run(&|| ops::mul(&x, &col).unwrap()), "elementwise/mul/vec4_vs");
        // Dense rows of 15 merge into one axis: vec4 with a tail.
        expect(run(&|| ops::exp(&odd).unwrap()), "elementwise/exp/vec4_v");
        // Off the grid, a transposed view, rows of 15 under a broadcast: the scalar form.
        let shifted = x.narrow(1, 1, 9).unwrap();
        for (names, op) in [
            (run(&|| ops::exp(&shifted).unwrap()), "elementwise/exp"),
            (
                run(&|| ops::exp(&x.transpose(0, 1).unwrap()).unwrap()),
                "elementwise/exp",
            ),
            (run(&|| ops::add(&odd, &odd_row).unwrap()), "elementwise/add"),
        ] {
            assert!(
                names.iter().any(|n| n.contains(op)) && !names.iter().any(|n| n.contains("vec4")),
                "{names:?}"
            );
        }
        expect(
            run(&|| x.narrow(1, 4, 12).unwrap().contiguous().unwrap()),
            "copy_into_vec4",
        );
        let names = run(&|| shifted.contiguous().unwrap());
        assert!(
            names.iter().any(|n| n.contains("copy_into")) && !names.iter().any(|n| n.contains("vec4")),
            "{names:?}"
        );
    });
}

#[test]
fn vec4_reads_accept_exactly_the_layouts_the_kernel_serves() {
    use wgsl_compute::shape::vec4_reads;
    let (v, s) = (Vec4Read::Vec4, Vec4Read::Splat);
    // One axis: any length (the tail), dense from an aligned offset or a scalar.
    assert_eq!(vec4_reads(&[1023], &[vec![1], vec![0]], &[0, 5]), Some(vec![v, s]));
    assert_eq!(vec4_reads(&[1023], &[vec![1]], &[2]), None);
    assert_eq!(vec4_reads(&[1023], &[vec![2]], &[0]), None);
    // One element: read as a row of one when aligned.
    assert_eq!(vec4_reads(&[1], &[vec![0]], &[8]), Some(vec![v]));
    // Rows: the last axis a multiple of 4, other strides multiples of 4.
    assert_eq!(
        vec4_reads(&[5, 8], &[vec![8, 1], vec![0, 1]], &[0, 4]),
        Some(vec![v, v])
    );
    assert_eq!(
        vec4_reads(&[5, 8], &[vec![8, 1], vec![1, 0]], &[0, 3]),
        Some(vec![v, s])
    );
    assert_eq!(vec4_reads(&[5, 8], &[vec![10, 1]], &[0]), None);
    assert_eq!(vec4_reads(&[5, 6], &[vec![6, 1]], &[0]), None);
    assert_eq!(vec4_reads(&[8, 4], &[vec![1, 8]], &[0]), None);
}

#[test]
fn vec4_forms_of_generated_kernels_name_their_reads() {
    let g = fused::bias_gelu_graph();
    let w = fused::wgsl_vec4(&g, &[Vec4Read::Vec4, Vec4Read::Splat]).unwrap();
    assert!(
        w.contains("in_0: array<vec4<f32>>") && w.contains("in_1: array<f32>") && w.contains("out: array<vec4<f32>>"),
        "{w}"
    );
    assert!(w.contains("fn f4(") && w.contains("fn f1("), "{w}");
    assert!(fused::wgsl_vec4(&g, &[Vec4Read::Vec4]).is_err());
}
