//! The catalog loads, and malformed or inconsistent profiles are refused
//! with the field and its allowed range named.

use accel::{catalog, profile_load, Profile};

#[test]
fn catalog_loads_and_every_format_fits() {
    let c = catalog().unwrap();
    assert_eq!(c.len(), 4);
    for p in &c {
        for (name, &bytes) in &p.formats {
            assert!(bytes <= p.usable_bytes_max(), "{} {name}", p.id);
            accel::Device::new(p, name, 64).unwrap();
        }
        assert!(!p.published.is_empty(), "{} has calibration targets", p.id);
    }
    assert!(profile_load("nonesuch").unwrap_err().contains("unknown device 'nonesuch'"));
}

fn edited(from: &str, to: &str) -> String {
    let text = accel::CATALOG.iter().find(|(id, _)| *id == "flashmax2").unwrap().1;
    assert!(text.contains(from), "{from}");
    text.replacen(from, to, 1)
}

fn refused(from: &str, to: &str) -> String {
    match Profile::parse("edited.toml", &edited(from, to)) {
        Ok(_) => panic!("accepted {to}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_profiles_are_refused_naming_the_field() {
    let e = refused("channels = 32", "channels = 0");
    assert!(e.contains("nand.geometry.channels = 0") && e.contains("1..=1024"), "{e}");
    let e = refused("dies_per_channel = 12", "dies_per_channel = 0");
    assert!(e.contains("dies_per_channel = 0"), "{e}");
    // Usable capacity above raw.
    let e = refused("stock = 2_222_000_000_000", "stock = 4_000_000_000_000");
    assert!(e.contains("formats.stock") && e.contains("raw"), "{e}");
    // An over-provisioning that leaves no spare superblock for GC.
    let e = refused("stock = 2_222_000_000_000", "stock = 2_884_000_000_000");
    assert!(e.contains("formats.stock = 2884000000000: must be in 1..="), "{e}");
    let e = refused("stripe_width = 8", "stripe_width = 7");
    assert!(e.contains("ftl.stripe_width = 7"), "{e}");
    let e = refused("reserve_superblocks = 2", "reserve_superblocks = 0");
    assert!(e.contains("ftl.reserve_superblocks = 0"), "{e}");
    let e = refused("read_ns = 60_000", "read_ns = 5");
    assert!(e.contains("nand.timings.read_ns = 5"), "{e}");
    let e = refused("default_format = \"stock\"", "default_format = \"fast\"");
    assert!(e.contains("default_format = fast"), "{e}");
    let e = refused("gc_threads = 1", "gc_threads = 0");
    assert!(e.contains("ftl.gc_threads = 0"), "{e}");
    let e = refused("count = 2", "count = 3");
    assert!(e.contains("controller.count = 3"), "{e}");
    // Syntax errors and unknown fields name the place.
    let e = refused("cell = \"mlc\"", "cell = \"mlc\"\nwarp_drive = true");
    assert!(e.contains("warp_drive"), "{e}");
    let e = refused("page_size_bytes = 8192", "page_size_bytes = \"big\"");
    assert!(e.contains("page_size_bytes"), "{e}");
}
