//! The block-device conformance suite (`testkit::conformance`) on the
//! simulated device's block API: the same checks a card served over NBD
//! passes (`crates/cli/tests/conformance.rs`), here driven through garbage
//! collection, with the FTL's invariants checked after.

use card::{Backing, Device};

/// A small data-holding card: the P420m at its largest scale.
fn card() -> Device {
    let p = card::profile_load("p420m").unwrap();
    let scale = (1..=4096).rev().find(|&s| Device::validate(&p, "stock", s).is_ok()).unwrap();
    Device::with_backing(&p, "stock", scale, &Backing::Memory).unwrap()
}

#[test]
fn the_simulated_device_is_a_conforming_block_device() {
    let mut t = testkit::OnDevice::new(card());
    let bytes = t.device.capacity_bytes() * 3;
    testkit::conformance::run(&mut t, bytes, 7).unwrap_or_else(|e| panic!("{e}"));
    assert!(t.device.counters().gc_slots_moved > 0, "GC ran");
    t.device.check().unwrap();
}
