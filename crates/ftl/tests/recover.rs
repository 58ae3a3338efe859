//! Power cuts: the FTL is dropped at a random point of a random workload
//! (writes, trims, flushes; GC running) and mounted again from its media
//! alone. The generation oracle: every slot reads its own LBA with a
//! generation no older than the last one a flush made durable and no newer
//! than the last one written, or zeros where no durable write is owed; the
//! invariant checker passes; and the mounted card takes more writes.

use ftl::{Ftl, FtlConfig, GcPolicy};
use nand::{Array, Geometry};
use proptest::prelude::*;
use units::SLOT_BYTES;

fn geometry() -> Geometry {
    Geometry { channels: 2, dies_per_channel: 2, planes_per_die: 2, blocks_per_plane: 12, pages_per_block: 4, page_size_bytes: 4096, oob_bytes: 224 }
}

/// A slot stamped with its LBA and generation.
fn stamp(lba: u32, generation: u32) -> Vec<u8> {
    let mut v = vec![(generation % 251) as u8; SLOT_BYTES as usize];
    v[..4].copy_from_slice(&lba.to_le_bytes());
    v[4..8].copy_from_slice(&generation.to_le_bytes());
    v
}

/// Per LBA: the newest generation written, and the newest a flush made
/// durable (0: none; a trim resets what is owed).
#[derive(Clone, Copy, Default)]
struct Owed {
    written: u32,
    durable: u32,
}

fn cut_and_mount(stripe_width: u32, ops: Vec<(u8, u32)>) -> Result<(), TestCaseError> {
    let g = geometry();
    let layout = ftl::Layout::new(&g, stripe_width);
    let user_slots = Ftl::<Array>::user_slots_max(&layout, 1) * 3 / 4;
    let cfg = FtlConfig { stripe_width, user_slots, reserve_superblocks: 1, gc_policy: GcPolicy::Greedy, wear_spread_max: 8 };
    let mut ftl = Ftl::format(Array::new(g, true), cfg.clone()).unwrap();
    let mut owed = vec![Owed::default(); user_slots as usize];
    let mut generation = 0;
    for (kind, x) in ops {
        let lba = x % user_slots as u32;
        match kind % 16 {
            0 => {
                ftl.flush().unwrap();
                for o in owed.iter_mut() {
                    o.durable = o.written;
                }
            }
            1 => {
                ftl.trim(lba).unwrap();
                owed[lba as usize] = Owed::default();
            }
            _ => {
                generation += 1;
                ftl.write(lba, Some(&stamp(lba, generation))).unwrap();
                owed[lba as usize].written = generation;
            }
        }
    }
    // The cut: all that is left is the media.
    let (mut mounted, report) = Ftl::mount(ftl.into_media(), cfg).unwrap();
    prop_assert!(mounted.check().is_ok(), "{:?}", mounted.check());
    let mut out = vec![0u8; SLOT_BYTES as usize];
    for (lba, o) in owed.iter().enumerate() {
        mounted.read(lba as u32, Some(&mut out)).unwrap();
        let got_lba = u32::from_le_bytes(out[..4].try_into().unwrap());
        let got = u32::from_le_bytes(out[4..8].try_into().unwrap());
        if out.iter().all(|&b| b == 0) {
            prop_assert!(o.durable == 0, "lba {lba}: reads zeros, but generation {} was flushed", o.durable);
            continue;
        }
        prop_assert_eq!(got_lba, lba as u32, "slot {} holds another LBA's data", lba);
        prop_assert_eq!(&out[..], &stamp(lba as u32, got)[..], "slot {} is torn", lba);
        prop_assert!(got >= o.durable, "lba {lba}: generation {got} read, {} was flushed", o.durable);
        if o.written > 0 {
            prop_assert!(got <= o.written, "lba {lba}: generation {got} read, newest written {}", o.written);
        }
    }
    prop_assert!(report.slots_mapped <= user_slots);
    // The card goes on: more writes than it holds, then every slot reads back.
    for round in 0..3 {
        for lba in 0..user_slots as u32 {
            mounted.write(lba, Some(&stamp(lba, 1_000_000 + round))).unwrap();
        }
    }
    for lba in 0..user_slots as u32 {
        mounted.read(lba, Some(&mut out)).unwrap();
        prop_assert_eq!(&out[..], &stamp(lba, 1_000_002)[..]);
    }
    prop_assert!(mounted.check().is_ok(), "{:?}", mounted.check());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_cut_anywhere_loses_nothing_flushed_with_parity(ops in proptest::collection::vec((any::<u8>(), any::<u32>()), 0..1500)) {
        cut_and_mount(4, ops)?;
    }

    #[test]
    fn a_cut_anywhere_loses_nothing_flushed_without_parity(ops in proptest::collection::vec((any::<u8>(), any::<u32>()), 0..1500)) {
        cut_and_mount(1, ops)?;
    }
}
