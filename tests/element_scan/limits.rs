//! Element scans at the adapter's limits: storage buffers per kernel and the software
//! adapters' loop limit.

use wgsl_compute::check::Rng;
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::Error;

use super::{cpu, random, tanh_scan_bindings, GATE, TANH_SCAN};
use crate::common::{assert_close, each_adapter};

#[test]
fn element_scan_past_the_storage_buffer_limit_is_a_fallback() {
    // 15 sequences: the kernel binds 17 storage buffers (initial, 15 sequences, output).
    let names: Vec<String> = (1..=15).map(|i| format!("s{i}")).collect();
    let text = format!(
        "(element-scan (lambda (h {}) (tanh (+ (* 0.5 h) {}))) initial (list {}) :axis 0)",
        names.join(" "),
        names.join(" "),
        names.join(" ")
    );
    let mut rng = Rng::new(514);
    let mut bind = Bindings::new().tensor("initial", random(&mut rng, &[3], -1.0, 1.0));
    for n in &names {
        bind = bind.tensor(n, random(&mut rng, &[4, 3], -0.2, 0.2));
    }
    let scan = ElementScan::from_sexpr(&text, &bind).unwrap();
    let want = scan.run(&cpu()).unwrap().to_vec().unwrap();
    each_adapter(|ctx| match scan.run(ctx) {
        Ok(t) => {
            assert!(ctx.info().max_storage_buffers >= 17);
            assert_close(ctx, "15 sequences", &t.to_vec().unwrap(), &want, GATE);
        }
        Err(Error::Fallback { reason, .. }) => {
            assert!(ctx.info().max_storage_buffers < 17, "{reason}");
            assert!(reason.contains("17 storage buffers"), "{reason}");
        }
        Err(e) => panic!("{e}"),
    });
}

#[test]
fn element_scan_longer_than_the_software_loop_limit_is_correct() {
    // Mesa's software adapters stop a shader's loops after 65,535 iterations without a word;
    // the launch splits a 70,000-trip walk into segments, so every adapter gets it right.
    let mut rng = Rng::new(70);
    let scan = ElementScan::from_sexpr(TANH_SCAN, &tanh_scan_bindings(&mut rng, 1, 70_000, 2)).unwrap();
    let want = scan.run(&cpu()).unwrap().to_vec().unwrap();
    each_adapter(|ctx| {
        let got = scan.run(ctx).unwrap().to_vec().unwrap();
        assert_close(ctx, "T = 70,000", &got, &want, GATE);
    });
}
