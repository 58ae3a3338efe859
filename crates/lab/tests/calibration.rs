//! Calibration: each catalog device, preconditioned at 16T/16Q,
//! reproduces the reviewers' steady-state 4K random write and read IOPS
//! within 10% and their average latencies within 15%, on a scaled device.
//!
//! Scale 16 keeps every card's dies, channels and timings and at least 64
//! superblocks, enough that greedy GC's write amplification is within a few
//! percent of the full-size device's (see ARCHITECTURE.md, "Scaling").

use lab::calibrate::calibrate;

fn check(id: &str) {
    let profile = accel::profile_load(id).unwrap();
    let c = calibrate(&profile, &profile.default_format, 16, 1, 5, &mut |_| {}).unwrap();
    let ss = c.precondition.steady_state.as_ref().unwrap();
    assert!(ss.reached, "{id}: steady state not reached after {} drive writes", ss.drive_writes);
    let mut compared = 0;
    for f in &c.figures {
        println!("{id}: {} published {:?} simulated {:.3} error {:?}%", f.metric, f.published, f.simulated, f.error_percent);
        if f.published.is_some() {
            compared += 1;
        }
        assert!(f.within(), "{id}: {} is {:.1}% off the published {:?} (tolerance {}%)", f.metric, f.error_percent.unwrap(), f.published, f.tolerance_percent);
    }
    assert!(compared >= 3, "{id}: too few published figures compared");
}

#[test]
fn flashmax2_reproduces_its_review() {
    check("flashmax2");
}

#[test]
fn iodrive2_duo_reproduces_its_review() {
    check("iodrive2-duo");
}

#[test]
fn p420m_reproduces_its_review() {
    check("p420m");
}

#[test]
fn mx6300_reproduces_its_review() {
    check("mx6300");
}
