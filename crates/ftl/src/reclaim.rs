//! Read reclaim: a superblock whose reads come close to what the ECC can
//! correct (the card's error model decides: `card`'s reads that needed a
//! retry) has its valid data moved before it decays further. Requests
//! queue; the caller paces the work ([`Ftl::reclaim_step`]), which runs
//! GC on the queued superblocks first: their valid slots go to the GC
//! writer (fresh data in other blocks) and the emptied superblock is
//! erased, resetting its reads and its data's age.

use crate::superblock::SbState;
use crate::{Ftl, FtlError};
use nand::Media;

impl<M: Media> Ftl<M> {
    /// Asks for superblock `sb`'s data to be moved (a closed superblock
    /// not already queued; others are ignored: an open one is being
    /// written, a victim is being emptied).
    pub fn reclaim_request(&mut self, sb: u32) {
        debug_assert!(sb < self.layout.superblocks);
        if self.sbs.meta[sb as usize].state == SbState::Closed && !self.gc.reclaim.contains(&sb) {
            self.gc.reclaim.push(sb);
        }
    }

    /// Whether reclaim work is waiting.
    #[inline(always)]
    pub fn reclaiming(&self) -> bool {
        !self.gc.reclaim.is_empty()
    }

    /// Superblocks queued for reclaim.
    pub fn reclaim_queued(&self) -> &[u32] {
        &self.gc.reclaim
    }

    /// The next queued superblock still closed, taken off the queue.
    pub(crate) fn reclaim_victim(&mut self) -> Option<u32> {
        let sb = crate::superblock::queue_take_closed(&mut self.gc.reclaim, &self.sbs.meta)?;
        self.counters.reclaim_victims += 1;
        Some(sb)
    }

    /// Moves up to `budget` slots out of the queued superblocks (GC steps:
    /// the victim under way first, which the queue then follows). Returns
    /// the GC steps taken.
    pub fn reclaim_step(&mut self, budget: u64) -> Result<u64, FtlError> {
        let mut steps = 0;
        while steps < budget {
            if self.gc.victim.is_none() {
                let Some(sb) = self.reclaim_victim() else { break };
                self.victim_begin(sb);
            }
            if !self.gc_step()? {
                break;
            }
            steps += 1;
        }
        Ok(steps)
    }
}
