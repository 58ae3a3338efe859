//! The FTL against a plain reference model (a map of LBA -> data), on
//! data-holding media, after random sequences of writes, reads, trims and
//! formats; the invariant checker runs after every step.

use ftl::{Ftl, FtlConfig, FtlError, GcPolicy};
use nand::{Array, Geometry};
use proptest::prelude::*;
use testkit::model::Slots;
use units::SLOT_BYTES;

#[derive(Debug, Clone)]
enum Op {
    Write(u32, u8),
    Read(u32),
    Trim(u32),
    Reformat(u8),
}

fn slot(lba: u32, version: u8) -> Vec<u8> {
    let mut v = vec![version; SLOT_BYTES as usize];
    v[..4].copy_from_slice(&lba.to_le_bytes());
    v
}

fn geometry(channels: u32, dies_per_channel: u32, planes: u32, blocks: u32, pages: u32) -> Geometry {
    Geometry { channels, dies_per_channel, planes_per_die: planes, blocks_per_plane: blocks, pages_per_block: pages, page_size_bytes: 4096, oob_bytes: 224 }
}

fn run(g: Geometry, stripe_width: u32, policy: GcPolicy, fill_percent: u64, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let layout = ftl::Layout::new(&g, stripe_width);
    let max = Ftl::<Array>::user_slots_max(&layout, 1);
    let user_slots = (max * fill_percent / 100).max(1);
    let cfg = FtlConfig { stripe_width, user_slots, reserve_superblocks: 1, gc_policy: policy, wear_spread_max: 8, power_loss_protection: false };
    let mut ftl = Ftl::format(Array::new(g, true), cfg).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut model = Slots::new(SLOT_BYTES as usize);
    let mut out = vec![0u8; SLOT_BYTES as usize];
    for op in ops {
        match op {
            Op::Write(l, v) => {
                let l = l % ftl.user_slots() as u32;
                ftl.write(l, Some(&slot(l, v))).map_err(|e| TestCaseError::fail(e.to_string()))?;
                model.write(l as u64, &slot(l, v));
            }
            Op::Read(l) => {
                let l = l % ftl.user_slots() as u32;
                ftl.read(l, Some(&mut out)).map_err(|e| TestCaseError::fail(e.to_string()))?;
                model.check(l as u64, &out).map_err(|e| TestCaseError::fail(e.to_string()))?;
            }
            Op::Trim(l) => {
                let l = l % ftl.user_slots() as u32;
                ftl.trim(l).map_err(|e| TestCaseError::fail(e.to_string()))?;
                model.trim(l as u64);
            }
            Op::Reformat(p) => {
                let slots = (max * (20 + p as u64 % 80) / 100).max(1);
                ftl.reformat(slots).map_err(|e| TestCaseError::fail(e.to_string()))?;
                model.clear();
            }
        }
        if let Err(e) = ftl.check() {
            return Err(TestCaseError::fail(e.to_string()));
        }
    }
    // Everything acknowledged reads back at the end.
    for l in model.written() {
        ftl.read(l as u32, Some(&mut out)).unwrap();
        model.check(l, &out).map_err(|e| TestCaseError::fail(format!("at the end: {e}")))?;
    }
    Ok(())
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            12 => (any::<u32>(), any::<u8>()).prop_map(|(l, v)| Op::Write(l, v)),
            4 => any::<u32>().prop_map(Op::Read),
            2 => any::<u32>().prop_map(Op::Trim),
            1 => any::<u8>().prop_map(Op::Reformat),
        ],
        1..600,
    )
}

proptest! {
    #![proptest_config(testkit::props::config(128))]

    #[test]
    fn ftl_matches_reference_model_with_parity(
        groups in 1u32..3, planes in 1u32..3, blocks in 7u32..12, pages in 2u32..6,
        fill in 30u64..100, cost_benefit in any::<bool>(), ops in ops())
    {
        // Stripes of 4 dies (3+1) on 4 or 8 dies, on one or two channels.
        let g = geometry(2, 2 * groups, planes, blocks, pages);
        let policy = if cost_benefit { GcPolicy::CostBenefit } else { GcPolicy::Greedy };
        run(g, 4, policy, fill, ops)?;
    }

    #[test]
    fn ftl_matches_reference_model_without_parity(
        dies in 1u32..4, blocks in 6u32..10, pages in 2u32..5, fill in 50u64..100, ops in ops())
    {
        run(geometry(dies, 1, 2, blocks, pages), 1, GcPolicy::Greedy, fill, ops)?;
    }
}

/// A full device under sustained overwrites keeps working: GC always frees
/// space, no write is refused, and the data is intact.
#[test]
fn full_device_sustains_overwrites() {
    let g = geometry(2, 2, 2, 8, 4);
    let layout = ftl::Layout::new(&g, 4);
    let max = Ftl::<Array>::user_slots_max(&layout, 1);
    let cfg =
        FtlConfig { stripe_width: 4, user_slots: max, reserve_superblocks: 1, gc_policy: GcPolicy::Greedy, wear_spread_max: 0, power_loss_protection: false };
    let mut ftl = Ftl::format(Array::new(g, true), cfg).unwrap();
    let n = ftl.user_slots() as u32;
    for round in 0..20u32 {
        for i in 0..n {
            let l = (i * 7 + round) % n;
            ftl.write(l, Some(&slot(l, round as u8))).unwrap();
        }
        ftl.check().unwrap();
    }
    assert!(ftl.counters().gc_victims > 0);
    let mut out = vec![0; SLOT_BYTES as usize];
    for l in 0..n {
        ftl.read(l, Some(&mut out)).unwrap();
        assert_eq!(out[..4], l.to_le_bytes());
    }
}

#[test]
fn bad_input_is_refused_with_the_field_named() {
    let g = geometry(2, 2, 2, 8, 4);
    let cfg = |w, slots, reserve| FtlConfig {
        stripe_width: w,
        user_slots: slots,
        reserve_superblocks: reserve,
        gc_policy: GcPolicy::Greedy,
        wear_spread_max: 0,
        power_loss_protection: false,
    };
    let e = Ftl::format(Array::new(g.clone(), false), cfg(3, 10, 1)).err().unwrap().to_string();
    assert!(e.contains("stripe_width = 3"), "{e}");
    let e = Ftl::format(Array::new(g.clone(), false), cfg(4, 10_000_000, 1)).err().unwrap().to_string();
    assert!(e.contains("usable capacity") && e.contains("1..="), "{e}");
    let e = Ftl::format(Array::new(g.clone(), false), cfg(4, 10, 0)).err().unwrap().to_string();
    assert!(e.contains("reserve_superblocks"), "{e}");
    let mut ftl = Ftl::format(Array::new(g, false), cfg(4, 10, 1)).unwrap();
    assert!(matches!(ftl.write(10, None), Err(FtlError::LbaOutOfRange { lba: 10, user_slots: 10 })));
    assert!(matches!(ftl.read(99, None), Err(FtlError::LbaOutOfRange { .. })));
}

/// `read_span` senses each multi-plane page once for the slots of it that
/// follow one another, reads nothing for unmapped or still-buffered slots,
/// and refuses a span past the end.
#[test]
fn read_span_reads_each_page_once() {
    use nand::Nand;
    // 2 planes of 4 KiB pages: 2 slots a multi-plane page; 4 dies.
    let g = geometry(2, 2, 2, 8, 4);
    let cfg =
        FtlConfig { stripe_width: 1, user_slots: 64, reserve_superblocks: 1, gc_policy: GcPolicy::Greedy, wear_spread_max: 0, power_loss_protection: false };
    let mut ftl = Ftl::format(Array::new(g, false), cfg).unwrap();
    // Slots 0..16 written in order fill 8 pages (2 rows of 4 dies); slot 16
    // stays in the open writer's page.
    for lba in 0..17 {
        ftl.write(lba, None).unwrap();
    }
    let reads = |f: &Ftl<Array>| f.media().counters().page_reads_user;
    let before = reads(&ftl);
    ftl.read_span(0, 7).unwrap();
    assert_eq!(reads(&ftl) - before, 4, "8 slots in 4 pages");
    let before = reads(&ftl);
    ftl.read_span(3, 4).unwrap();
    assert_eq!(reads(&ftl) - before, 2, "slots 3 and 4 lie in two pages");
    let before = reads(&ftl);
    ftl.read_span(16, 20).unwrap();
    assert_eq!(reads(&ftl) - before, 0, "buffered and unmapped slots need no page read");
    // The same slots one at a time: one page read each.
    let before = reads(&ftl);
    for lba in 0..8 {
        ftl.read(lba, None).unwrap();
    }
    assert_eq!(reads(&ftl) - before, 8);
    assert_eq!(ftl.counters().host_slots_read, 8 + 2 + 5 + 8);
    assert!(matches!(ftl.read_span(60, 64), Err(FtlError::LbaOutOfRange { lba: 64, .. })));
    ftl.check().unwrap();
}
