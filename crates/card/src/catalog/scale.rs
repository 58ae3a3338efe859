//! Scaling: a card `N` times smaller that settles where the full-size card
//! does, and every rule that follows from the scale.
//!
//! A scaled card keeps its dies, channels, planes, page size and timings,
//! and so its parallelism. What shrinks first is the pages of each block
//! (`pages_div`, the largest common divisor of the scale and the pages per
//! block): the card keeps its full count of superblocks, each `pages_div`
//! times smaller, so greedy GC chooses among as many candidates as on the
//! full-size card and its write amplification is the full-size one (with
//! 32 superblocks instead of 2,048 it was ~13% higher). Only a scale beyond
//! that also divides the blocks of each plane (`blocks_div`).
//!
//! A scaled block holds `pages_div` times fewer pages, so it is erased
//! `pages_div` times as often per byte written; one erase of a die in
//! `pages_div` takes the whole tBERS and the others none
//! ([`Scaling::erase_takes_time`], the dies in step), which keeps the die
//! time spent erasing per page written (and so throughput) as at full size,
//! and each stall as long and as frequent as at full size (a read or a
//! program that meets an erase waits what it would on the full-size card).
//! In step, one superblock erase in `pages_div` times every die it erases,
//! as every superblock's erase does at full size, so what waits for a
//! superblock's dies one after another meets its erases as often a second
//! as there. Erase counts per block per drive write are the full-size ones (a
//! block holds `pages_div` times less and a drive write is `pages_div`
//! times smaller), so wear and its leveling need no scaling.
//!
//! The write buffer shrinks by `pages_div` too, down to a floor of a few
//! pages per die: it fills in the first moments of a fresh card's first
//! round, and a full-size buffer would be `pages_div` times its share of a
//! scaled round (at scale 64 it added ~8% to the FlashMAX II's first-round
//! burst). Below the floor it would no longer keep every die's program
//! queue fed, and the steady state would change.

use nand::Geometry;
use units::{Ns, NS_PER_SEC};

/// The least a scaled write buffer holds, in multi-plane pages per die:
/// the buffer is also each die's queue of programs, and with fewer the dies
/// starve while GC holds their turns (the ioDrive2 Duo at scale 16, with its
/// 64 MiB buffer divided by 16, about 1.5 pages per die, settled 11% under
/// its full-buffer steady state after the reviewers' 12 hours; at 4 pages per
/// die, 0.3%).
pub const BUFFER_MPAGES_PER_DIE: u64 = 4;

/// A round (interval) of the reviewers' procedure on the full-size card.
pub const ROUND_FULL_SIZE_S: u64 = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scaling {
    pub scale: u32,
    /// Pages of each block divided by this.
    pub pages_div: u32,
    /// Blocks of each plane divided by this (`scale / pages_div`).
    pub blocks_div: u32,
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Scaling {
    /// How `scale` divides a geometry (`scale >= 1`).
    pub fn new(full: &Geometry, scale: u32) -> Scaling {
        assert!(scale >= 1, "a scale divides: it is at least 1");
        let pages_div = gcd(scale, full.pages_per_block);
        Scaling { scale, pages_div, blocks_div: scale / pages_div }
    }

    /// The scaled geometry.
    pub fn geometry(&self, full: &Geometry) -> Geometry {
        debug_assert_eq!(full.pages_per_block % self.pages_div, 0);
        Geometry { pages_per_block: full.pages_per_block / self.pages_div, blocks_per_plane: full.blocks_per_plane / self.blocks_div, ..full.clone() }
    }

    /// Whether a die's `n`th erase (from 0) takes the whole tBERS: one in
    /// `pages_div`, the others none, so that the die time per page erased
    /// and each erase's stall are the full-size card's. Every die counts
    /// alike, so the dies of a superblock time its erase together, as at
    /// full size: a superblock's erase is one stall, whoever meets it.
    /// Staggered (die `d` timing its erases `d` apart, every superblock's
    /// erase timing `1 / pages_div` of its dies), a die-by-die visitor of
    /// the card (a host groomer reading a victim, reads holding a few
    /// hardware read places) met `pages_div` times as many erases a second
    /// as at full size: the ioDrive2 Duo's 8K 70/30 settled 3.8% under its
    /// full-size figure at scale 64, 2.5% at 16 (in step 0.3% and 0.0%).
    /// In step, a backlog of a few superblocks (a read test's background
    /// GC) times all its dies' erases or, more often, none: the maximum of
    /// such a test at scale may miss the erase.
    #[inline]
    pub fn erase_takes_time(&self, n: u32) -> bool {
        n.is_multiple_of(self.pages_div)
    }

    /// A scaled member's write buffer: the full-size one divided like the
    /// pages of a block, so that it holds the same share of a round as at
    /// full size, but never under [`BUFFER_MPAGES_PER_DIE`] multi-plane
    /// pages per die nor under `floor` (the profile's least), and never
    /// over the full-size buffer.
    pub fn buffer_bytes(&self, full_bytes: u64, mpage_bytes: u64, dies: u32, floor: u64) -> u64 {
        let queue_floor = BUFFER_MPAGES_PER_DIE * mpage_bytes * dies as u64;
        (full_bytes / self.pages_div as u64).max(queue_floor).max(floor).min(full_bytes)
    }

    /// One round: 60 s of the full-size card, shortened with the capacity,
    /// so that a round is the same share of a drive write at every scale.
    /// A superblock is the unit GC works in; scaling by pages shrinks it
    /// with the capacity, so a round spans as many GC cycles as at full
    /// size. Where blocks are divided too, superblocks are no smaller than
    /// at `pages_div` and the round stays as long as there.
    pub fn round_ns(&self) -> Ns {
        ROUND_FULL_SIZE_S * NS_PER_SEC / self.pages_div as u64
    }

    /// The same, in virtual seconds.
    pub fn round_s(&self) -> f64 {
        self.round_ns() as f64 / NS_PER_SEC as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flashmax2() -> Geometry {
        Geometry { channels: 32, dies_per_channel: 12, planes_per_die: 2, blocks_per_plane: 2048, pages_per_block: 256, page_size_bytes: 8192, oob_bytes: 744 }
    }

    #[test]
    fn pages_shrink_first_and_blocks_only_beyond() {
        let g = flashmax2();
        let s = Scaling::new(&g, 64);
        assert_eq!((s.pages_div, s.blocks_div), (64, 1));
        let sg = s.geometry(&g);
        assert_eq!((sg.pages_per_block, sg.blocks_per_plane), (4, 2048));
        assert_eq!(sg.raw_bytes() * 64, g.raw_bytes());
        let s = Scaling::new(&g, 1024);
        assert_eq!((s.pages_div, s.blocks_div), (256, 4));
        assert_eq!(s.geometry(&g).blocks_per_plane, 512);
        // A scale that shares no factor with the pages divides blocks only.
        let s = Scaling::new(&g, 3);
        assert_eq!((s.pages_div, s.blocks_div), (1, 3));
    }

    #[test]
    fn erase_time_per_page_and_rounds_follow_the_pages() {
        let g = flashmax2();
        let s = Scaling::new(&g, 16);
        assert_eq!((0..64).filter(|&n| s.erase_takes_time(n)).count(), 4, "one erase in 16");
        assert!(Scaling::new(&g, 1).erase_takes_time(7), "every erase at full size");
        assert_eq!(s.round_ns(), 3_750_000_000);
        assert_eq!(Scaling::new(&g, 1).round_ns(), 60 * NS_PER_SEC);
        // Blocks divided as well: the round follows the pages only.
        assert_eq!(Scaling::new(&g, 512).round_ns(), 60 * NS_PER_SEC / 256);
        // The write buffer keeps its share of a round, down to its floors,
        // never above the full-size one.
        let mp = 16 << 10;
        assert_eq!(s.buffer_bytes(256 << 20, mp, 384, 256 << 10), 24 << 20, "4 pages per die");
        assert_eq!(s.buffer_bytes(1 << 30, mp, 384, 256 << 10), 64 << 20, "divided by 16");
        assert_eq!(s.buffer_bytes(1 << 30, mp, 384, 128 << 20), 128 << 20, "the profile's floor");
        assert_eq!(s.buffer_bytes(8 << 20, mp, 384, 256 << 10), 8 << 20, "at most the full-size one");
    }
}
