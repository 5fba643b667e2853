//! The rules of `Var::cat`, `Var::where_`, `Var::mean_all` and `Var::mean_last`.

use wgsl_compute::autograd::Var;
use wgsl_compute::Tensor;

use super::{check, input, CROSS};

#[test]
fn autograd_cat_where_and_means_match_finite_differences() {
    let inputs = [input(&[2, 3], -1.0, 1.0), input(&[2, 5], -1.0, 1.0)];
    check("cat axis 1", 500, &inputs, CROSS, |v| Var::cat(&[&v[0], &v[1]], 1));
    let inputs = [
        input(&[2, 3], -1.0, 1.0),
        input(&[4, 3], -1.0, 1.0),
        input(&[1, 3], -1.0, 1.0),
    ];
    check("cat axis 0, three", 501, &inputs, CROSS, |v| {
        Var::cat(&[&v[0], &v[1], &v[2]], 0)
    });
    // A mask of the input's context, the second branch broadcast over the rows.
    let inputs = [input(&[3, 5], -1.0, 1.0), input(&[1, 5], -1.0, 1.0)];
    check("where_", 502, &inputs, CROSS, |v| {
        let mask: Vec<f32> = (0..15).map(|i| (i % 3 == 0) as u8 as f32).collect();
        let cond = Tensor::from_slice(v[0].tensor().context(), &[3, 5], &mask)?;
        v[0].where_(&cond, &v[1])
    });
    check("mean_all", 503, &[input(&[3, 5], -1.0, 1.0)], CROSS, |v| {
        v[0].mean_all()
    });
    check("mean_last", 504, &[input(&[2, 3, 7], -1.0, 1.0)], CROSS, |v| {
        v[0].mean_last()
    });
}
