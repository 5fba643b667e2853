//! The data helpers of training (issue 45): seeded shuffled mini-batches (`train::Batches`),
//! gathering a batch's rows (`train::gather_rows`) and the learning-rate schedules
//! (`train::LrSchedule`), with their bad inputs. Host only: nothing here touches a device.

use wgsl_compute::train::{gather_rows, Batches, LrSchedule};
use wgsl_compute::Error;

#[test]
fn data_batches_cover_every_example_once_per_epoch_in_a_seeded_order() {
    for (len, batch) in [(1, 1), (10, 4), (63, 64), (64, 64), (65, 64), (1001, 32)] {
        let b = Batches::new(len, batch, 11).unwrap();
        assert_eq!(b.per_epoch(), len.div_ceil(batch));
        let mut seen: Vec<usize> = b.epoch(0).concat();
        assert_eq!(b.epoch(0).len(), b.per_epoch());
        assert!(b.epoch(0).iter().all(|c| !c.is_empty() && c.len() <= batch));
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..len).collect::<Vec<_>>(),
            "({len}, {batch}): each example once"
        );
        // Seeded: the same seed and epoch give the same batches, another epoch or seed not.
        assert_eq!(b.epoch(3), Batches::new(len, batch, 11).unwrap().epoch(3));
        if len > 8 {
            assert_ne!(b.order(0), b.order(1), "({len}, {batch}): a new order each epoch");
            assert_ne!(b.order(0), Batches::new(len, batch, 12).unwrap().order(0));
            assert_ne!(b.order(0), (0..len).collect::<Vec<_>>(), "shuffled");
        }
        // drop_last: only full batches; in_order: 0..len.
        let full = b.clone().drop_last(true);
        assert_eq!(full.per_epoch(), len / batch);
        assert!(full.epoch(2).iter().all(|c| c.len() == batch));
        let ordered = b.clone().in_order().epoch(5).concat();
        assert_eq!(ordered, (0..len).collect::<Vec<_>>());
    }
    // The known order of a small case does not drift between releases (a resumed run must
    // see the batches the first run saw).
    let b = Batches::new(6, 3, 1).unwrap();
    assert_eq!(b.epoch(0), Batches::new(6, 3, 1).unwrap().epoch(0));
    for bad in [Batches::new(0, 4, 1), Batches::new(4, 0, 1)] {
        assert!(matches!(bad, Err(Error::Value { op: "Batches::new", .. })), "{bad:?}");
    }
}

#[test]
fn data_gather_rows_builds_a_batch_and_names_bad_indices() {
    let data: Vec<f32> = (0..12).map(|v| v as f32).collect(); // 4 rows of 3
    assert_eq!(
        gather_rows(&data, 3, &[2, 0, 2]).unwrap(),
        vec![6., 7., 8., 0., 1., 2., 6., 7., 8.]
    );
    assert_eq!(gather_rows(&data, 3, &[]).unwrap(), Vec::<f32>::new());
    let e = gather_rows(&data, 3, &[1, 4]).unwrap_err().to_string();
    assert!(
        e.contains("gather_rows") && e.contains("below 4") && e.contains("is 4"),
        "{e}"
    );
    for row in [0, 5] {
        let e = gather_rows(&data, row, &[0]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Value {
                    op: "gather_rows",
                    arg: "row",
                    ..
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn data_lr_schedules_warm_up_then_decay_along_a_cosine() {
    let s = LrSchedule::warmup_cosine(1e-3, 10, 110, 1e-4).unwrap();
    // Linear warm-up: (s + 1) / 10 of the peak, the peak at step 9.
    for step in 0..10u64 {
        let want = 1e-3 * (step + 1) as f64 / 10.0;
        assert!(
            (f64::from(s.lr(step)) - want).abs() < 1e-9,
            "step {step}: {}",
            s.lr(step)
        );
    }
    assert_eq!(s.lr(10), 1e-3, "the decay starts at the peak");
    // Half way through the decay: the mean of peak and floor; monotone down to the floor.
    assert!((s.lr(60) - 5.5e-4).abs() < 1e-9, "{}", s.lr(60));
    let decay: Vec<f32> = (10..=110).map(|k| s.lr(k)).collect();
    assert!(decay.windows(2).all(|w| w[1] <= w[0]), "monotone: {decay:?}");
    assert_eq!(s.lr(110), 1e-4);
    assert_eq!(s.lr(10_000), 1e-4, "the floor after the end");
    // Warm-up only, constant, and a zero-length warm-up.
    let w = LrSchedule::warmup(2e-3, 4).unwrap();
    assert_eq!((w.lr(0), w.lr(3), w.lr(1000)), (5e-4, 2e-3, 2e-3));
    assert_eq!(LrSchedule::constant(0.1).unwrap().lr(77), 0.1);
    assert_eq!(LrSchedule::warmup_cosine(1.0, 0, 0, 0.5).unwrap().lr(0), 0.5);
    // Bad settings name themselves.
    let bad = [
        (LrSchedule::warmup_cosine(1e-3, 20, 10, 0.0), "warmup"),
        (LrSchedule::warmup_cosine(1e-3, 0, 10, 1e-2), "floor"),
        (LrSchedule::warmup_cosine(f32::NAN, 0, 10, 0.0), "peak"),
        (LrSchedule::warmup(-1.0, 3), "peak"),
        (LrSchedule::constant(f32::INFINITY), "lr"),
    ];
    for (r, arg) in bad {
        let e = r.unwrap_err();
        assert!(matches!(e, Error::Value { arg: a, .. } if a == arg), "{arg}: {e}");
    }
}
