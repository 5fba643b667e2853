//! Element-scan kernels: the IR dump, the cache keyed by the body's hash, and generated WGSL
//! translated by naga for Metal and DX12.

use ndarray::{ArrayD, IxDyn};
use wgsl_compute::check::Rng;
use wgsl_compute::element_scan::ElementScan;
use wgsl_compute::Context;

use super::{
    cpu, max_plus_reverse_scan_bindings, norm_capped_scan_bindings, tanh_scan_bindings, MAX_PLUS_REVERSE_SCAN,
    NORM_CAPPED_SCAN, TANH_SCAN,
};

#[test]
fn element_scan_ir_lists_the_body_under_an_element_scan_node() {
    let mut rng = Rng::new(508);
    let scan = ElementScan::from_sexpr(NORM_CAPPED_SCAN, &norm_capped_scan_bindings(&mut rng, 1, 2, 1)).unwrap();
    let ir = scan.ir();
    let at = ir.find("element_scan(").expect("an element_scan node");
    let body = &ir[at..];
    for op in ["state", "mul", "add", "sum", "sqrt", "max", "div", "f32[16]"] {
        assert!(body.contains(op), "{op} missing from\n{ir}");
    }
    // The kernel's WGSL validates (naga) and is shared by equal bodies.
    for w in scan.wgsl() {
        wgsl_compute::context::check_wgsl(&cpu(), "element_scan", &w).unwrap();
    }
}

#[test]
fn element_scan_kernels_are_cached_by_the_body_hash() {
    let mut rng = Rng::new(515);
    let kernel = |scan: &ElementScan| {
        let ir = scan.ir();
        let at = ir.find("kernel=").expect("a kernel name");
        ir[at..].split_whitespace().next().unwrap().to_string()
    };
    let small = ElementScan::from_sexpr(TANH_SCAN, &tanh_scan_bindings(&mut rng, 1, 2, 3)).unwrap();
    let large = ElementScan::from_sexpr(TANH_SCAN, &tanh_scan_bindings(&mut rng, 4, 9, 70)).unwrap();
    let other = ElementScan::from_sexpr(
        &TANH_SCAN.replace("tanh", "sigmoid"),
        &tanh_scan_bindings(&mut rng, 1, 2, 3),
    )
    .unwrap();
    assert_eq!(kernel(&small), kernel(&large));
    assert_ne!(kernel(&small), kernel(&other));
    // On a fresh context, a second shape builds no new pipeline.
    let Some(ctx) = pollster::block_on(Context::each_adapter()).unwrap().into_iter().next() else {
        assert!(
            !wgsl_compute::context::require_gpu(),
            "ENGINE_REQUIRE_GPU=1 but no adapter"
        );
        return;
    };
    small.run(&ctx).unwrap().to_vec().unwrap();
    let built = ctx.pipelines_built();
    assert!(built >= 1);
    large.run(&ctx).unwrap().to_vec().unwrap();
    assert_eq!(ctx.pipelines_built(), built);
    other.run(&ctx).unwrap().to_vec().unwrap();
    assert_eq!(ctx.pipelines_built(), built + 1);
}

/// Translates generated WGSL to MSL and HLSL with naga (Metal and DX12 are not on this
/// machine), so a backend problem in the code generator shows up here.
fn translate_for_metal_and_dx12(wgsl: &str) -> Result<(), String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let mut validator =
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
    let info = validator.validate(&module).map_err(|e| e.emit_to_string(wgsl))?;
    let msl_pipeline = naga::back::msl::PipelineOptions::default();
    naga::back::msl::write_string(&module, &info, &naga::back::msl::Options::default(), &msl_pipeline)
        .map_err(|e| format!("MSL: {e}"))?;
    let mut hlsl = String::new();
    naga::back::hlsl::Writer::new(
        &mut hlsl,
        &naga::back::hlsl::Options::default(),
        &naga::back::hlsl::PipelineOptions::default(),
    )
    .write(&module, &info, None)
    .map_err(|e| format!("HLSL: {e}"))?;
    Ok(())
}

#[test]
fn element_scan_generated_kernels_translate_for_metal_and_dx12() {
    let mut rng = Rng::new(516);
    let programs = [
        ElementScan::from_sexpr(TANH_SCAN, &tanh_scan_bindings(&mut rng, 1, 2, 3)).unwrap(),
        ElementScan::from_sexpr(NORM_CAPPED_SCAN, &norm_capped_scan_bindings(&mut rng, 1, 2, 1)).unwrap(),
        ElementScan::from_sexpr(
            MAX_PLUS_REVERSE_SCAN,
            &max_plus_reverse_scan_bindings(&mut rng, 1, 2, 3),
        )
        .unwrap(),
    ];
    for p in &programs {
        // The forward kernels and the gradient's (a second-order program holds both).
        let seed = ArrayD::ones(IxDyn(p.shape()));
        let grad = p.grad_program(p.inputs()[0], &seed).unwrap();
        for w in p.wgsl().iter().chain(&grad.wgsl()) {
            translate_for_metal_and_dx12(w).unwrap_or_else(|e| panic!("{e}\n{w}"));
        }
        assert!(grad.wgsl().len() > p.wgsl().len());
    }
}
