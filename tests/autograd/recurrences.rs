//! The recurrences' rules, which are their hand-written backward: against finite
//! differences, and the GPU tape against the CPU tape (the f64 reference backward) within
//! each family's gate.

use wgsl_compute::autograd::Var;
use wgsl_compute::check::gates;
use wgsl_compute::element_scan::spec_programs::TANH_SCAN;
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::mixer::{MixerKind, MixerPath};

use super::{check, input, input_away};

#[test]
fn autograd_affine_scans_agree_with_their_backward() {
    let g = gates::SCAN_AFFINE_BACKWARD;
    let lin = [
        input(&[2, 5, 3], 0.2, 0.9),
        input(&[2, 5, 3], -1.0, 1.0),
        input(&[2, 3], -1.0, 1.0),
    ];
    check("linear_scan", 1000, &lin, g, |v| {
        Var::linear_scan(&v[0], &v[1], Some(&v[2]))
    });
    check("linear_scan, no h0", 1001, &lin[..2], g, |v| {
        Var::linear_scan(&v[0], &v[1], None)
    });
    let mat = [
        input(&[1, 5, 3, 2, 2], -0.6, 0.6),
        input(&[1, 5, 3, 2], -1.0, 1.0),
        input(&[1, 3, 2], -1.0, 1.0),
    ];
    check("matrix_scan", 1002, &mat, g, |v| {
        Var::matrix_scan(&v[0], &v[1], Some(&v[2]))
    });
    let aff = [
        input(&[1, 5, 3, 2, 2], -0.6, 0.6),
        input(&[1, 5, 3, 2, 3], -1.0, 1.0),
        input(&[1, 3, 2, 3], -1.0, 1.0),
    ];
    check("matrix_affine_scan", 1003, &aff, g, |v| {
        Var::matrix_affine_scan(&v[0], &v[1], Some(&v[2]))
    });
    let log = [input(&[2, 5, 3], -1.0, -0.1), input(&[2, 6, 3], -1.0, 1.0)];
    check("parallel_scan_log", 1004, &log, gates::SCAN_LOG_BACKWARD, |v| {
        Var::parallel_scan_log(&v[0], &v[1])
    });
}

#[test]
fn autograd_mixer_scans_agree_with_their_backward() {
    let kinds = [
        (MixerKind::MinGru, 6),
        (MixerKind::SignedMinGru, 6),
        (MixerKind::RotationMinGru, 8),
        (MixerKind::GivensMinGru { k: 4 }, 8),
    ];
    for (i, (kind, width)) in kinds.into_iter().enumerate() {
        for path in [MixerPath::Auto, MixerPath::Materialized] {
            // MinGRU's value map has a kink at 0.
            let pre = [input_away(&[2, 5, width], -1.0, 1.0, 0.05)];
            check(&kind.name(), 1100 + i as u64, &pre, gates::MIXER_BACKWARD, |v| {
                Var::mixer_scan(kind, path, &v[0])
            });
        }
    }
}

#[test]
fn autograd_element_scan_agrees_with_its_backward() {
    let bindings = Bindings::new()
        .tensor("x", ndarray::ArrayD::zeros(ndarray::IxDyn(&[2, 5, 3])))
        .tensor("decay", ndarray::ArrayD::zeros(ndarray::IxDyn(&[5, 3])))
        .tensor("initial", ndarray::ArrayD::zeros(ndarray::IxDyn(&[2, 3])))
        .number("time", 5.0);
    let program = ElementScan::from_sexpr(TANH_SCAN, &bindings).unwrap();
    let inputs = [
        input(&[2, 5, 3], -1.0, 1.0),
        input(&[5, 3], 0.2, 1.0),
        input(&[2, 3], -1.0, 1.0),
    ];
    check(
        "element_scan TANH_SCAN",
        1201,
        &inputs,
        gates::ELEMENT_SCAN_BACKWARD,
        |v| Var::element_scan(&program, &[("x", &v[0]), ("decay", &v[1]), ("initial", &v[2])]),
    );
}
