//! Bad blocks: a die's block (every plane of it at one index) that the card
//! no longer uses.
//!
//! - **Factory bad blocks** carry the factory's mark; a format reads the
//!   marks ([`nand::Media::block_factory_bad`]) and never uses those blocks.
//! - **Grown bad blocks** are blocks whose erase or program failed its
//!   status check (worn out). The block is retired at once. What a block
//!   whose erase failed held had already been moved (an erase only ever
//!   follows garbage collection); a failed program is written again and
//!   its superblock emptied ([`crate::retire`]). Nothing is lost.
//!
//! A superblock is opened with its bad blocks left out, as it is with dead
//! dies ([`crate::Narrowing`]): a stripe group with a bad block is one die
//! narrower (7+1 becomes 6+1), and the card's spare shrinks by the block's
//! share (what skipping bad erase blocks inside a logical erase block, or
//! Variable Stripe RAID, does). When the good blocks no longer hold the
//! format beyond what garbage collection needs, the card turns read-only
//! and says so: enterprise cards stop taking writes rather than lose data.
//! The bad-block table is kept in the system area, and a secure erase
//! keeps it.

use crate::layout::Narrowing;
use crate::superblock::{BadBlocks, SbState};
use crate::{Ftl, FtlError};
use nand::{Media, NandError, OpTag};

impl<M: Media> Ftl<M> {
    /// Whether die `die`'s block of superblock `sb` is bad.
    #[inline]
    pub fn is_bad(&self, die: u32, sb: u32) -> bool {
        let i = sb as usize * self.layout.dies as usize + die as usize;
        self.sbs.bad[i / 64] >> (i % 64) & 1 != 0
    }

    pub fn bad_blocks(&self) -> &BadBlocks {
        &self.sbs.bad_counts
    }

    /// Marks a block bad; `grown`: retired in service, else found at
    /// format.
    pub(crate) fn bad_mark(&mut self, die: u32, sb: u32, grown: bool) {
        debug_assert!(!self.is_bad(die, sb));
        let i = sb as usize * self.layout.dies as usize + die as usize;
        self.sbs.bad[i / 64] |= 1 << (i % 64);
        if grown {
            self.sbs.bad_counts.grown += 1;
        } else {
            self.sbs.bad_counts.factory += 1;
        }
    }

    /// Reads the factory's marks (a fresh format): every marked block is
    /// bad from now on.
    pub(crate) fn factory_scan(&mut self) {
        for sb in 0..self.layout.superblocks {
            for die in 0..self.layout.dies {
                if !self.is_bad(die, sb) && self.media.block_factory_bad(die, sb) {
                    self.bad_mark(die, sb, false);
                }
            }
        }
    }

    /// The dies superblock `sb` leaves out if opened now: the dead dies
    /// and its bad blocks, in order.
    pub(crate) fn dies_out(&self, sb: u32) -> Vec<u32> {
        let mut out: Vec<u32> = self.bad_dies(sb).collect();
        if !self.faults.dead.is_empty() {
            out.extend(&self.faults.dead);
            out.sort_unstable();
            out.dedup();
        }
        out
    }

    /// The dies whose block of superblock `sb` is bad, in order: the set
    /// bits of its run in the bad-block bitmap, a word at a time.
    fn bad_dies(&self, sb: u32) -> impl Iterator<Item = u32> + '_ {
        let (n, base) = (self.layout.dies as usize, sb as usize * self.layout.dies as usize);
        (base / 64..(base + n).div_ceil(64)).flat_map(move |w| {
            let (lo, hi) = (base.saturating_sub(w * 64), (base + n - w * 64).min(64));
            let mut bits = self.sbs.bad[w] & (u64::MAX << lo) & (u64::MAX >> (64 - hi));
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    (w * 64 + b - base) as u32
                })
            })
        })
    }

    /// The narrowing superblock `sb` takes if opened now (none: full width).
    pub(crate) fn narrowing_fresh(&self, sb: u32) -> Option<Narrowing> {
        let out = self.dies_out(sb);
        (!out.is_empty()).then(|| Narrowing::new(&self.layout, &out))
    }

    /// Data slots superblock `sb` offers if opened now.
    pub(crate) fn data_slots_fresh(&self, sb: u32) -> u64 {
        self.layout.data_slots_in(self.narrowing_fresh(sb).as_ref()) as u64
    }

    /// Erases a superblock's block on every die that works and is not bad.
    /// A block whose erase fails is retired; the card turns read-only if
    /// the good blocks no longer hold the format. A bad block that still
    /// holds pages (retired by a failed program) is erased too, whatever
    /// its status says, so that no stale copy in it can come back at a
    /// mount; it is never programmed again. It is erased last: until then
    /// its next page is the row its program failed in, which a mount after
    /// a cut in the middle needs to find the superblock's stripes (the row
    /// narrowings) for the rows other blocks still hold.
    pub(crate) fn superblock_erase(&mut self, sb: u32, tag: OpTag) -> Result<(), FtlError> {
        // The good blocks first; those that fail now are retired but not
        // erased again below (`grown_dies`, empty but for a failure).
        let mut grown_dies: Vec<u32> = Vec::new();
        for die in 0..self.layout.dies {
            if self.is_dead(die) || self.is_bad(die, sb) {
                continue;
            }
            match self.media.block_erase(die, sb, tag) {
                Ok(()) => {}
                Err(NandError::EraseFailed { .. }) => {
                    self.bad_mark(die, sb, true);
                    grown_dies.push(die);
                }
                Err(e) => return Err(e.into()),
            }
        }
        let grown = !grown_dies.is_empty();
        for die in 0..self.layout.dies {
            if self.is_dead(die) || !self.is_bad(die, sb) || grown_dies.contains(&die) || self.media.block_next_page(die, sb) == 0 {
                continue;
            }
            match self.media.block_erase(die, sb, tag) {
                Ok(()) | Err(NandError::EraseFailed { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        if grown {
            self.capacity_check();
            self.system_save()?;
        }
        Ok(())
    }

    /// Finishes the erases a cut interrupted among the retired blocks: a
    /// superblock whose good blocks are all erased while a block retired
    /// by a failed program still holds pages (erased last, above). Nothing
    /// in it is live (an erase follows GC, a format or a secure erase),
    /// and once one of two retired blocks is erased the other's failed row
    /// no longer tells the rows' stripes apart (a mount took a parity page
    /// for data: found by the fault property test). Run at a mount, before
    /// the scan.
    pub(crate) fn erases_finish(&mut self) -> Result<(), FtlError> {
        for sb in 0..self.layout.superblocks {
            let live: Vec<u32> = (0..self.layout.dies).filter(|&d| !self.is_dead(d) && self.media.block_next_page(d, sb) > 0).collect();
            let (retired, good): (Vec<u32>, Vec<u32>) = live.into_iter().partition(|&d| self.is_bad(d, sb));
            if retired.is_empty() || !good.is_empty() {
                continue;
            }
            for die in retired {
                match self.media.block_erase(die, sb, OpTag::Gc) {
                    Ok(()) | Err(NandError::EraseFailed { .. }) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            self.sbs.row_narrows[sb as usize].clear();
        }
        Ok(())
    }

    /// Whether a free superblock can hold data (some stripe group of it
    /// keeps two good dies); one that cannot stays out of the free pool.
    pub(crate) fn sb_usable(&self, sb: u32) -> bool {
        debug_assert_eq!(self.sbs.meta[sb as usize].state, SbState::Free);
        self.data_slots_fresh(sb) > 0
    }

    /// Drops from the free pool the superblocks that can no longer hold
    /// data (after a die failure).
    pub(crate) fn free_pool_usable(&mut self) {
        let pool = std::mem::take(&mut self.sbs.free).into_vec();
        self.sbs.free = pool.into_iter().filter(|std::cmp::Reverse((_, sb))| self.sb_usable(*sb)).collect();
    }

    /// Slots of 4 KiB the good blocks hold beyond what garbage collection
    /// needs (every superblock at the width it would open with now, less
    /// the reserve, the two open ones and two more, the largest taken).
    /// Data slots of every superblock's good blocks on live dies, as if
    /// opened now: the flash the card has to hold its format and GC's
    /// working room.
    pub fn data_slots_good(&self) -> u64 {
        (0..self.layout.superblocks).map(|sb| self.data_slots_fresh(sb)).sum()
    }

    pub fn usable_slots(&self) -> u64 {
        let mut per_sb: Vec<u64> = (0..self.layout.superblocks).map(|sb| self.data_slots_fresh(sb)).collect();
        per_sb.sort_unstable();
        let keep = per_sb.len().saturating_sub(self.cfg.reserve_superblocks as usize + 4);
        per_sb[..keep].iter().sum()
    }

    /// Whether the format still fits the good blocks of the live dies;
    /// sets read-only if not.
    pub(crate) fn capacity_check(&mut self) -> Option<String> {
        if self.faults.read_only.is_some() {
            return self.faults.read_only.clone();
        }
        let usable = self.usable_slots();
        if self.cfg.user_slots <= usable {
            return None;
        }
        let why = format!(
            "{} dies failed and {} blocks are bad ({} from the factory, {} worn out): the good blocks hold {} slots of 4 KiB beyond what garbage collection needs, the format {}",
            self.faults.dead.len(),
            self.sbs.bad_counts.total(),
            self.sbs.bad_counts.factory,
            self.sbs.bad_counts.grown,
            usable,
            self.cfg.user_slots
        );
        self.faults.read_only = Some(why.clone());
        // Writes look at the read-only state on the fault path.
        self.faults.faulted = true;
        Some(why)
    }
}

#[cfg(test)]
mod tests {
    use crate::layout::Layout;
    use crate::retire::tests::{config, geometry};
    use crate::{Ftl, FtlConfig};
    use nand::{Array, Geometry};

    /// A superblock's dies out, read from the bad-block bitmap a word at a
    /// time, are the dead dies and the dies whose block is bad, die by die
    /// (runs that cross a word's edge included).
    #[test]
    fn the_dies_out_of_a_superblock_are_its_bad_blocks_and_the_dead_dies() {
        // Six dies a superblock: its run in the bitmap crosses a word's edge.
        let g = Geometry { channels: 3, ..geometry() };
        let layout = Layout::new(&g, 3);
        let cfg = FtlConfig { stripe_width: 3, user_slots: Ftl::<Array>::user_slots_max(&layout, 1) / 2, ..config() };
        let mut ftl = Ftl::format(Array::new(g, true), cfg).unwrap();
        let (dies, sbs) = (ftl.layout.dies, ftl.layout.superblocks);
        assert!(sbs as usize * dies as usize > 64 && 64 % dies != 0);
        let each = |ftl: &Ftl<Array>| {
            (0..sbs).map(|sb| (0..dies).filter(|&d| ftl.faults.dead.contains(&d) || ftl.is_bad(d, sb)).collect::<Vec<u32>>()).collect::<Vec<_>>()
        };
        for (sb, die) in (0..sbs).flat_map(|sb| (0..dies).map(move |d| (sb, d))).filter(|&(sb, d)| (sb * 7 + d * 3) % 5 == 0) {
            if !ftl.is_bad(die, sb) {
                ftl.bad_mark(die, sb, true);
            }
        }
        let want = each(&ftl);
        assert!(want.iter().any(|out| out.len() > 1));
        assert_eq!((0..sbs).map(|sb| ftl.dies_out(sb)).collect::<Vec<_>>(), want);
        ftl.faults.dead.push(5);
        ftl.faults.dead.push(0);
        let want = each(&ftl);
        assert!(want.iter().all(|out| out.contains(&0) && out.contains(&5)));
        assert_eq!((0..sbs).map(|sb| ftl.dies_out(sb)).collect::<Vec<_>>(), want);
    }
}
