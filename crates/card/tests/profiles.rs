//! The catalog loads, and malformed or inconsistent profiles are refused
//! with the field and its allowed range named.

use card::{catalog, profile_load, Profile};

#[test]
fn catalog_loads_and_every_format_fits() {
    let c = catalog().unwrap();
    let ids: Vec<&str> = c.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, card::CATALOG.iter().map(|(id, _)| *id).collect::<Vec<_>>(), "every catalog card loads, under its own id");
    for p in &c {
        for (name, &bytes) in &p.formats {
            assert!(bytes <= p.usable_bytes_max(), "{} {name}", p.id);
            let d = card::Device::new(p, name, 64).unwrap();
            assert_eq!(d.raw_bytes(), p.raw_bytes() / 64, "{} {name}: a scale-64 card has 1/64 of the raw flash", p.id);
            let maps = card::Device::map_bytes(p, name, 64).unwrap();
            let per_4k = maps as f64 / (d.raw_bytes() / 4096) as f64;
            assert!((4.0..=8.2).contains(&per_4k), "{} {name}: maps of {per_4k:.2} B per 4 KiB of raw flash", p.id);
        }
        assert!(!p.published.is_empty(), "{} has calibration targets", p.id);
        assert!(p.nand.errors.is_some(), "{} has an error model", p.id);
    }
    assert!(profile_load("nonesuch").unwrap_err().to_string().contains("unknown device 'nonesuch'"));
}

/// A profile's version (its CRC) names its figures: the same for the
/// same profile, another for another card or a changed figure.
#[test]
fn a_profile_version_changes_with_its_figures() {
    let a = profile_load("p420m").unwrap();
    assert_eq!(a.crc(), profile_load("p420m").unwrap().crc());
    assert_eq!(a.crc().len(), 8);
    assert_ne!(a.crc(), profile_load("flashmax2").unwrap().crc());
    let mut b = a.clone();
    b.nand.timings.program_ns += 1000;
    assert_ne!(a.crc(), b.crc(), "tPROG is part of the model");
}

fn edited(from: &str, to: &str) -> String {
    let text = card::CATALOG.iter().find(|(id, _)| *id == "flashmax2").unwrap().1;
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
    // (text in the FlashMAX II profile, its replacement, what the error must say)
    let cases = [
        ("channels = 32", "channels = 0", "nand.geometry.channels = 0: must be in 1..=1024"),
        ("dies_per_channel = 12", "dies_per_channel = 0", "dies_per_channel = 0"),
        // Usable capacity above raw.
        ("stock = 2_222_000_000_000", "stock = 4_000_000_000_000", "raw"),
        // An over-provisioning that leaves no spare superblock for GC.
        ("stock = 2_222_000_000_000", "stock = 2_884_000_000_000", "formats.stock = 2884000000000: must be in 1..="),
        ("stripe_width = 8", "stripe_width = 7", "ftl.stripe_width = 7"),
        ("reserve_superblocks = 2", "reserve_superblocks = 0", "ftl.reserve_superblocks = 0"),
        ("read_ns = 60_000", "read_ns = 5", "nand.timings.read_ns = 5"),
        // An upper page faster than the mean, or one that leaves the
        // lower page no time.
        ("upper_page_program_ns = 1_900_000", "upper_page_program_ns = 1_000_000", "nand.timings.upper_page_program_ns = 1000000: must be in program_ns..="),
        ("upper_page_program_ns = 1_900_000", "upper_page_program_ns = 2_600_000", "nand.timings.upper_page_program_ns = 2600000"),
        ("default_format = \"stock\"", "default_format = \"fast\"", "default_format = fast"),
        // A slow block's erase no slower than a typical one, or beyond what
        // the erase loops allow; a share outside (0, 1]; one without the other.
        ("erase_max_ns = 10_000_000", "erase_max_ns = 3_000_000", "nand.timings.erase_max_ns = 3000000: must be in erase_ns (exclusive)..=10 x erase_ns"),
        ("erase_max_ns = 10_000_000", "erase_max_ns = 40_000_000", "nand.timings.erase_max_ns = 40000000"),
        ("erase_slow_share = 0.1", "erase_slow_share = 0.0", "nand.timings.erase_slow_share = 0: must be in (0, 1]"),
        ("erase_slow_share = 0.1", "", "erase_max_ns and timings.erase_slow_share go together"),
        ("gc_threads = 1", "gc_threads = 0", "ftl.gc_threads = 0"),
        ("gc_threads = 1", "gc_threads = 1\ngc_background_superblocks = 4\ngc_background_share = 1.0", "ftl.gc_background_share = 1: must be in 0..=0.9"),
        ("gc_threads = 1", "gc_threads = 1\ngc_background_share = 0.1", "ftl.gc_background_share = 0.1: must be 0 without ftl.gc_background_superblocks"),
        ("cpu_ns_per_slot = 200", "cpu_ns_per_slot = 200\ncommand_slots = 0", "host.command_slots = 0: must be in 1..=1048576"),
        // The host's own values are the host file's, not the card's.
        ("cpu_ns_per_slot = 200", "cpu_ns_per_slot = 200\nos_submit_ns = 2_000", "host.os_submit_ns belong to the host the card runs on"),
        ("count = 2", "count = 3", "controller.count = 3"),
        // A bank worked in lockstep is a parity stripe of one die a channel.
        ("count = 2", "count = 2\nlockstep_banks = true", "ftl.stripe_width = 8: must be equal to nand.channels (32) when controller.lockstep_banks is set"),
        ("ecc_bits = 40", "ecc_bits = 0", "nand.errors.ecc_bits = 0: must be in 1..=200"),
        ("retry_retention_left = 0.5", "retry_retention_left = 1.5", "nand.errors.retry_retention_left = 1.5"),
        ("e = 8.34e-5", "e = -1.0", "nand.errors.rber.e = -1"),
        ("retry_retention_left = 0.5", "retry_retention_left = 0.5\nuber_rated = 2.0", "nand.errors.uber_rated = 2"),
        ("rebuild_bytes_per_sec = 200_000_000", "rebuild_bytes_per_sec = 5", "ftl.rebuild_bytes_per_sec = 5"),
        ("rated_pe_cycles = 3000", "rated_pe_cycles = 3", "nand.endurance.rated_pe_cycles = 3: must be 100..=1000000 cycles"),
        ("valid_blocks_min = 0.9609", "valid_blocks_min = 1.5", "nand.endurance.valid_blocks_min = 1.5"),
        ("rated_petabytes_written = 33.0", "rated_petabytes_written = -1.0", "nand.endurance.rated_petabytes_written = -1"),
        // Each field names itself and a range it can take: no room for a
        // slot's out-of-band record, a wear spread of nothing, too few
        // blocks for the FTL's superblocks.
        ("oob_bytes = 744", "oob_bytes = 0", "nand.geometry.oob_bytes = 0: must be in 48..=65536"),
        ("wear_spread_max = 64", "wear_spread_max = 0", "ftl.wear_spread_max = 0: must be in 1..=65536"),
        ("blocks_per_plane = 2048", "blocks_per_plane = 1", "nand.geometry.blocks_per_plane = 1: must be at least 4"),
        // An id names result files and report rows: no path characters.
        ("id = \"flashmax2\"", "id = \"../x\"", "id: must be 1 to 40 letters"),
        // Syntax errors and unknown fields name the place.
        ("cell = \"mlc\"", "cell = \"mlc\"\nwarp_drive = true", "warp_drive"),
        ("page_size_bytes = 8192", "page_size_bytes = \"big\"", "page_size_bytes"),
    ];
    for (from, to, needle) in cases {
        let e = refused(from, to);
        assert!(e.contains(needle), "{to}: expected '{needle}' in: {e}");
    }
}
