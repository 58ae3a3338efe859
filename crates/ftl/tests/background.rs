//! Background GC: once host writes stop, GC with time to spare frees
//! superblocks up to the mark it is given, and no further; it never moves
//! a superblock whose every slot is valid (that would free nothing).

use ftl::{Ftl, FtlConfig, GcPolicy};
use nand::{Array, Geometry};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn tiny() -> (Ftl<Array>, u32) {
    let g = Geometry { channels: 4, dies_per_channel: 1, planes_per_die: 2, blocks_per_plane: 64, pages_per_block: 32, page_size_bytes: 8192, oob_bytes: 448 };
    let layout = ftl::Layout::new(&g, 1);
    let user_slots = layout.total_slots() * 3 / 4;
    let cfg = FtlConfig { stripe_width: 1, user_slots, reserve_superblocks: 2, gc_policy: GcPolicy::Greedy, wear_spread_max: 0, power_loss_protection: false };
    (Ftl::format(Array::new(g, false), cfg).unwrap(), user_slots as u32)
}

#[test]
fn background_gc_frees_superblocks_up_to_its_mark_and_stops() {
    let (mut ftl, slots) = tiny();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    for lba in 0..slots {
        ftl.write(lba, None).unwrap();
    }
    for _ in 0..10 * slots {
        ftl.write(rng.gen_range(0..slots), None).unwrap();
    }
    // Paced GC holds the pool just above its reserve of 2.
    let paced = ftl.free_superblocks();
    assert!(paced <= 4, "paced GC keeps the pool low: {paced} free");
    let mark = paced + 6;
    let moved = ftl.counters().gc_slots_moved;
    let mut steps = 0u64;
    loop {
        let s = ftl.gc_background(mark, 4).unwrap();
        if s == 0 {
            break;
        }
        steps += s as u64;
        assert!(steps < 100 * slots as u64, "background GC ends");
    }
    ftl.check().unwrap();
    assert!(ftl.free_superblocks() >= mark, "the pool reached the mark: {} free, mark {mark}", ftl.free_superblocks());
    assert!(ftl.free_superblocks() <= mark + 1, "and went no further than the victim in hand: {} free", ftl.free_superblocks());
    assert!(ftl.counters().gc_slots_moved > moved, "it moved data");
    assert_eq!(ftl.gc_background(mark, 4).unwrap(), 0, "at the mark it does nothing");
    for lba in 0..slots {
        assert!(ftl.lookup(lba).is_some(), "LBA {lba} still mapped");
    }
}

#[test]
fn background_gc_leaves_superblocks_that_would_free_nothing() {
    let (mut ftl, slots) = tiny();
    // Written once, in order: every closed superblock holds only valid data.
    for lba in 0..slots {
        ftl.write(lba, None).unwrap();
    }
    let moved = ftl.counters().gc_slots_moved;
    assert_eq!(ftl.gc_background(u32::MAX, 4).unwrap(), 0, "nothing worth collecting");
    assert_eq!(ftl.counters().gc_slots_moved, moved);
}
