//! The two slots of an 8 KiB write share a plane page when written, and GC
//! keeps them together however host writes race it: a later 8 KiB read of
//! them senses one plane page, on a small card as on a large one (a small
//! card's host writes race GC far more often).

use ftl::{Ftl, FtlConfig, GcPolicy};
use nand::{Array, Geometry};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[test]
fn gc_keeps_an_8k_writes_slots_in_one_plane_page() {
    // 8 KiB pages of two 4 KiB slots, two planes: 4 slots a multi-plane
    // page, a plane page of 2.
    let g = Geometry { channels: 4, dies_per_channel: 1, planes_per_die: 2, blocks_per_plane: 64, pages_per_block: 32, page_size_bytes: 8192, oob_bytes: 448 };
    let layout = ftl::Layout::new(&g, 1);
    let user_slots = (layout.total_slots() * 3 / 4) & !1;
    let cfg = FtlConfig { stripe_width: 1, user_slots, reserve_superblocks: 2, gc_policy: GcPolicy::Greedy, wear_spread_max: 0, power_loss_protection: false };
    let mut ftl = Ftl::format(Array::new(g, false), cfg).unwrap();
    let pairs = (user_slots / 2) as u32;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    for _ in 0..20 * pairs {
        let lba = 2 * rng.gen_range(0..pairs);
        ftl.write_in_io(lba, None, (lba, lba + 1)).unwrap();
        ftl.write_in_io(lba + 1, None, (lba, lba + 1)).unwrap();
    }
    ftl.check().unwrap();
    let c = ftl.counters();
    assert!(c.gc_slots_moved > 10 * user_slots, "GC ran: {} slots moved", c.gc_slots_moved);
    assert!(c.gc_slots_padded > 0, "host writes raced GC (the case under test)");
    assert!(c.gc_slots_padded * 100 < c.gc_slots_moved, "padding is rare: {} of {} moves", c.gc_slots_padded, c.gc_slots_moved);
    let split = (0..pairs)
        .filter(|&p| {
            let (a, b) = (ftl.lookup(2 * p).unwrap(), ftl.lookup(2 * p + 1).unwrap());
            (a.superblock, a.page, a.die, a.slot / 2) != (b.superblock, b.page, b.die, b.slot / 2)
        })
        .count();
    assert_eq!(split, 0, "8 KiB writes split over two plane pages, of {pairs}");
}
