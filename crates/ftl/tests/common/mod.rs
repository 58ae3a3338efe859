//! The small fault card of the FTL's failure tests: its geometry, its
//! data-holding array (worn as asked), its configuration, the slots'
//! stamps.

#![allow(dead_code)] // not every test binary uses every helper

use ftl::{Ftl, FtlConfig, GcPolicy};
use nand::{Array, Endurance, Geometry};

/// 8 dies in two stripe groups of 4 (3+1).
pub fn geometry() -> Geometry {
    Geometry { channels: 4, dies_per_channel: 2, planes_per_die: 2, blocks_per_plane: 12, pages_per_block: 8, page_size_bytes: 8192, oob_bytes: 224 }
}

pub const WIDTH: u32 = 4;

pub fn stamp(lba: u32, generation: u32) -> Vec<u8> {
    testkit::oracle::stamp(lba as u64, generation as u64)
}

/// An array on `store` (a fresh one if none) whose blocks wear out as
/// `wear` says.
pub fn array(store: Option<nand::PageStore>, wear: Option<(f64, f64)>) -> Array {
    let mut a = match store {
        Some(s) => Array::with_store(geometry(), Some(s)),
        None => Array::new(geometry(), true),
    };
    a.endurance_set(wear.map(|(factory, scale)| Endurance {
        factory_bad_fraction: factory,
        scale_cycles: scale,
        shape: 2.0,
        cycles_per_erase: 1,
        program_fail_share: 0.5,
        seed: 11,
    }));
    a
}

pub fn config(plp: bool) -> FtlConfig {
    let layout = ftl::Layout::new(&geometry(), WIDTH);
    FtlConfig {
        stripe_width: WIDTH,
        user_slots: Ftl::<Array>::user_slots_max(&layout, 1) * 3 / 5,
        reserve_superblocks: 1,
        gc_policy: GcPolicy::Greedy,
        wear_spread_max: 8,
        power_loss_protection: plp,
    }
}
