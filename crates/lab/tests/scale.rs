//! A scaled card settles where the full-size card does: the FlashMAX II
//! (host-managed, its driver's map checkpoints), the MX6300 (card-managed,
//! its writes paced against GC, background GC), the P420m (its firmware's
//! write path and background GC's time slice) and the ioDrive2 Duo (two
//! members, the hardware's read places, die order). Heavy (each card four
//! full-size runs, ~5.4 GB each, about an hour on two cores), so ignored
//! by default:
//!
//! `cargo test --release -p lab --test scale -- --ignored --nocapture`

use lab::{run, RunSpec};

/// Steady-state IOPS, latency standard deviation and maximum (ms) of
/// `workload` at 16T/16Q after SNIA preconditioning.
fn steady(device: &str, workload: &str, scale: u32) -> [f64; 3] {
    let profile = card::profile_load(device).unwrap();
    let mut spec = RunSpec::new(&profile, "stock", workload, scale, 1);
    spec.precondition = true;
    let r = run(&profile, &spec, &mut |_| {}).unwrap();
    let all = &r.phases.last().expect("a main phase").summary.all;
    [all.iops, all.latency_std_ms, all.latency_max_ms]
}

/// At scale 16 and 64 the steady-state 4K random write and 8K 70/30 IOPS
/// are within 3% of the full-size card's, and their latency spread and
/// maximum (a host driver's stalls meet a scaled card as often a second)
/// within the 25% a tail is judged by.
fn settles_where_the_full_size_card_does(device: &str) {
    for workload in ["4k-write", "8k-7030"] {
        let [full, s16, s64] = std::thread::scope(|sc| {
            let h: Vec<_> = [1, 16, 64].map(|n| sc.spawn(move || steady(device, workload, n))).into_iter().collect();
            let v: Vec<[f64; 3]> = h.into_iter().map(|h| h.join().unwrap()).collect();
            [v[0], v[1], v[2]]
        });
        for (scale, at) in [(16, s16), (64, s64)] {
            let err = |i: usize| (at[i] / full[i] - 1.0) * 100.0;
            println!(
                "{device} {workload}: full size {:.0} IOPS, std {:.3} ms, max {:.2} ms; scale {scale} {:.0} ({:+.1}%), {:.3} ({:+.1}%), {:.2} ({:+.1}%)",
                full[0],
                full[1],
                full[2],
                at[0],
                err(0),
                at[1],
                err(1),
                at[2],
                err(2)
            );
            assert!(err(0).abs() <= 3.0, "{device} {workload} at scale {scale}: {:.0} IOPS, {:+.1}% from the full-size {:.0}", at[0], err(0), full[0]);
            for (i, what) in [(1, "standard deviation"), (2, "maximum")] {
                assert!(
                    err(i).abs() <= 25.0,
                    "{device} {workload} at scale {scale}: latency {what} {:.3} ms, {:+.1}% from the full-size {:.3}",
                    at[i],
                    err(i),
                    full[i]
                );
            }
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

#[test]
#[ignore]
fn a_scaled_p420m_settles_where_the_full_size_card_does() {
    settles_where_the_full_size_card_does("p420m");
}

#[test]
#[ignore]
fn a_scaled_iodrive2_duo_settles_where_the_full_size_card_does() {
    settles_where_the_full_size_card_does("iodrive2-duo");
}
