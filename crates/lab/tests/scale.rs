//! A scaled card settles where the full-size card does: the FlashMAX II
//! (host-managed) and the MX6300 (card-managed, its writes paced against
//! GC, background GC). Heavy (four full-size runs, ~5.4 GB each, about an
//! hour on two cores), so ignored by default:
//!
//! `cargo test --release -p lab --test scale -- --ignored --nocapture`

use lab::{run, RunSpec};

/// Steady-state IOPS of `workload` at 16T/16Q after SNIA preconditioning.
fn steady_iops(device: &str, workload: &str, scale: u32) -> f64 {
    let profile = card::profile_load(device).unwrap();
    let mut spec = RunSpec::new(&profile, "stock", workload, scale, 1);
    spec.precondition = true;
    let r = run(&profile, &spec, &mut |_| {}).unwrap();
    let main = r.phases.last().expect("a main phase");
    main.summary.all.iops
}

/// At scale 16 and 64 the steady-state 4K random write and 8K 70/30 IOPS
/// are within 3% of the full-size card's.
fn settles_where_the_full_size_card_does(device: &str) {
    for workload in ["4k-write", "8k-7030"] {
        let [full, s16, s64] = std::thread::scope(|sc| {
            let h: Vec<_> = [1, 16, 64].map(|n| sc.spawn(move || steady_iops(device, workload, n))).into_iter().collect();
            let v: Vec<f64> = h.into_iter().map(|h| h.join().unwrap()).collect();
            [v[0], v[1], v[2]]
        });
        for (scale, iops) in [(16, s16), (64, s64)] {
            let err = (iops / full - 1.0) * 100.0;
            println!("{device} {workload}: full size {full:.0} IOPS, scale {scale} {iops:.0} ({err:+.1}%)");
            assert!(err.abs() <= 3.0, "{device} {workload} at scale {scale}: {iops:.0} IOPS, {err:+.1}% from the full-size {full:.0}");
        }
    }
}

#[test]
#[ignore]
fn a_scaled_flashmax2_settles_where_the_full_size_card_does() {
    settles_where_the_full_size_card_does("flashmax2");
}

#[test]
#[ignore]
fn a_scaled_mx6300_settles_where_the_full_size_card_does() {
    settles_where_the_full_size_card_does("mx6300");
}
