//! Superblocks (one block of every die at the same index, the unit GC
//! erases) and their life cycle: Free -> Open -> Closed -> Victim ->
//! (erase) -> Free. The free pool hands out the least-worn superblock first.

use crate::layout::{Layout, Narrowing};
use crate::{Ftl, FtlError};
use nand::Media;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The superblock life cycle: Free -> Open -> Closed -> Victim -> (erase) -> Free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SbState {
    Free,
    Open,
    Closed,
    Victim,
}

impl SbState {
    /// Whether `self -> to` is a step of the life cycle: a writer opens a
    /// free superblock and closes it full (or short, on a failure); GC
    /// takes a closed one as its victim; the victim's erase frees it.
    pub(crate) fn may_become(self, to: SbState) -> bool {
        use SbState::*;
        matches!((self, to), (Free, Open) | (Open, Closed) | (Closed, Victim) | (Victim, Free))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct SbMeta {
    pub(crate) state: SbState,
    pub(crate) valid: u32,
    /// Writer sequence number when it was closed (its age for cost-benefit).
    pub(crate) close_seq: u64,
    pub(crate) erase_count: u32,
    /// Closed before it was full: the open superblock of a recovered card,
    /// whose remaining pages stay unprogrammed until GC erases it.
    pub(crate) short: bool,
}

impl SbMeta {
    /// Moves the superblock one step along its life cycle: every
    /// transition goes through here, asserted (`SbState::may_become`).
    #[inline]
    pub(crate) fn become_state(&mut self, to: SbState) {
        assert!(self.state.may_become(to), "a superblock cannot go from {:?} to {to:?}", self.state);
        self.state = to;
    }

    /// The state a mount finds (from the media or a checkpoint) or a
    /// secure erase leaves (every superblock free): set, not stepped.
    #[inline]
    pub(crate) fn found_state(&mut self, state: SbState) {
        debug_assert!(matches!(state, SbState::Free | SbState::Closed), "a mount or an erase leaves a superblock free or closed, not {state:?}");
        self.state = state;
    }
}

pub(crate) const SB_NONE: u32 = u32::MAX;

/// The superblocks: each one's state, the free pool, how each is narrowed
/// (dead dies, bad blocks, blocks retired from a row on) and the
/// bad-block table.
#[derive(Clone)]
pub(crate) struct Superblocks {
    pub(crate) meta: Vec<SbMeta>,
    /// Free superblocks, least worn first (erase count, superblock).
    pub(crate) free: BinaryHeap<Reverse<(u32, u32)>>,
    /// Each superblock's narrowing, set when it is opened (none: the full
    /// width): the dead dies and its bad blocks left out.
    pub(crate) narrows: Vec<Option<Narrowing>>,
    /// Narrowings that take effect from a row on (the row, the narrowing),
    /// in row order: a block retired by a failed program is left out of
    /// its superblock's rows after the failure ([`crate::retire`]).
    pub(crate) row_narrows: Vec<Vec<(u32, Narrowing)>>,
    /// One bit a die block (superblock-major): bad.
    pub(crate) bad: Vec<u64>,
    pub(crate) bad_counts: BadBlocks,
}

impl Superblocks {
    /// Every superblock free and unworn, no block bad (the free pool is
    /// filled by the format).
    pub(crate) fn new(layout: &Layout) -> Superblocks {
        let n = layout.superblocks as usize;
        Superblocks {
            meta: vec![SbMeta { state: SbState::Free, valid: 0, close_seq: 0, erase_count: 0, short: false }; n],
            free: BinaryHeap::with_capacity(n),
            narrows: vec![None; n],
            row_narrows: vec![Vec::new(); n],
            bad: vec![0; (n * layout.dies as usize).div_ceil(64)],
            bad_counts: BadBlocks::default(),
        }
    }
}

/// The first superblock of `queue` still closed, taken off it with those
/// before it (a queued superblock GC has taken since is dropped).
pub(crate) fn queue_take_closed(queue: &mut Vec<u32>, sbs: &[SbMeta]) -> Option<u32> {
    while !queue.is_empty() {
        let sb = queue.remove(0);
        if sbs[sb as usize].state == SbState::Closed {
            return Some(sb);
        }
    }
    None
}

impl<M: Media> Ftl<M> {
    #[inline]
    pub fn free_superblocks(&self) -> u32 {
        self.sbs.free.len() as u32
    }
    /// Physical data slots not available to hold valid data right now: the
    /// free pool and the unfilled rest of the open writers' superblocks.
    /// This is the spare that a free-block reserve takes out of the
    /// over-provisioning.
    pub fn spare_slots_in_hand(&self) -> u64 {
        let l = &self.layout;
        let mut s = self.sbs.free.len() as u64 * l.data_slots_per_superblock as u64;
        for w in self.writers.iter() {
            if w.sb != SB_NONE {
                let written = (w.page as u64 * l.slots_per_row as u64 + w.die as u64 * l.slots_per_mpage as u64 + w.slot as u64)
                    * (l.stripe_width as u64 - 1).max(1)
                    / l.stripe_width.max(1) as u64;
                s += l.data_slots_per_superblock as u64 - written.min(l.data_slots_per_superblock as u64);
            }
        }
        s
    }
    pub fn superblock_state(&self, sb: u32) -> SbState {
        self.sbs.meta[sb as usize].state
    }
    /// Logical slots that hold data (mapped), over every superblock.
    pub fn slots_mapped(&self) -> u64 {
        self.sbs.meta.iter().map(|m| m.valid as u64).sum()
    }
    pub fn superblock_valid(&self, sb: u32) -> u32 {
        self.sbs.meta[sb as usize].valid
    }
    pub fn superblock_erase_count(&self, sb: u32) -> u32 {
        self.sbs.meta[sb as usize].erase_count
    }

    /// A superblock's erase count as the media keep it: the most erases of
    /// its blocks (dead dies and bad blocks, left out of erases, have
    /// fewer). The media own each block's count; the superblock meta keeps
    /// this figure, read at mount and advanced with each erase, as the free
    /// pool's and wear leveling's key (`check` holds the two equal).
    pub(crate) fn media_superblock_erases(&self, sb: u32) -> u32 {
        (0..self.layout.dies).map(|die| self.media.block_erase_count(die, sb)).max().unwrap_or(0)
    }
    /// A victim (or, at a secure erase, any superblock) has just been
    /// erased: it rejoins the free pool, one erase older.
    pub(crate) fn superblock_erased(&mut self, sb: u32) {
        let m = &mut self.sbs.meta[sb as usize];
        m.become_state(SbState::Free);
        m.valid = 0;
        m.short = false;
        m.erase_count += 1;
        self.sbs.row_narrows[sb as usize].clear();
        let erases = m.erase_count;
        if self.sb_usable(sb) {
            self.sbs.free.push(Reverse((erases, sb)));
        }
    }

    /// Whether the free pool holds the data slots of two full-width
    /// superblocks: one for the user writer to take and one for GC to
    /// empty any victim into. Superblocks narrowed by bad blocks or dead
    /// dies hold less; with none, two superblocks in the pool are that.
    pub(crate) fn free_pool_holds_two(&self) -> bool {
        if self.faults.dead.is_empty() && self.sbs.bad_counts.total() == 0 {
            return true;
        }
        let slots: u64 = self.sbs.free.iter().map(|std::cmp::Reverse((_, sb))| self.data_slots_fresh(*sb)).sum();
        slots >= 2 * self.layout.data_slots_per_superblock as u64
    }

    /// GC cannot free space: on a card whose bad blocks or dead dies took
    /// its spare, it turns read-only (no write it took is lost); on a
    /// whole card this is a fault of the FTL's own.
    pub(crate) fn no_space(&mut self, why: &str) -> FtlError {
        if self.faults.dead.is_empty() && self.sbs.bad_counts.total() == 0 {
            return FtlError::NoSpace(why.into());
        }
        let msg = format!(
            "{} dies failed and {} blocks are bad ({} from the factory, {} worn out): garbage collection can no longer free space ({why})",
            self.faults.dead.len(),
            self.sbs.bad_counts.total(),
            self.sbs.bad_counts.factory,
            self.sbs.bad_counts.grown
        );
        self.faults.read_only = Some(msg.clone());
        self.faults.faulted = true;
        FtlError::ReadOnly(msg)
    }
}

/// Bad blocks so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadBlocks {
    /// Marked at the factory (found at format).
    pub factory: u32,
    /// Retired since: their erase or a program failed.
    pub grown: u32,
    /// Of those, the blocks whose program failed.
    #[serde(default)]
    pub grown_program: u32,
}

impl BadBlocks {
    pub fn total(&self) -> u32 {
        self.factory + self.grown
    }
    /// Sums another member's counts into these.
    pub fn add(&mut self, o: &BadBlocks) {
        self.factory += o.factory;
        self.grown += o.grown;
        self.grown_program += o.grown_program;
    }
}

/// The narrowing of superblock `sb`'s row `row`, from the narrowings it
/// was opened with and those that take effect from a row on (a free
/// function, for callers that hold a writer).
#[inline]
pub(crate) fn narrowing_in<'a>(base: &'a [Option<Narrowing>], rows: &'a [Vec<(u32, Narrowing)>], sb: u32, row: u32) -> Option<&'a Narrowing> {
    let later = &rows[sb as usize];
    if later.is_empty() {
        return base[sb as usize].as_ref();
    }
    match later.iter().rev().find(|(from, _)| *from <= row) {
        Some((_, n)) => Some(n),
        None => base[sb as usize].as_ref(),
    }
}

#[cfg(test)]
mod tests {
    /// The life cycle has four steps and no other: Free -> Open -> Closed
    /// -> Victim -> Free.
    #[test]
    fn a_superblock_steps_only_along_its_life_cycle() {
        use super::SbState::{self, *};
        let all = [Free, Open, Closed, Victim];
        let steps: Vec<(SbState, SbState)> = all.iter().flat_map(|&a| all.iter().map(move |&b| (a, b))).filter(|&(a, b)| a.may_become(b)).collect();
        assert_eq!(steps, [(Free, Open), (Open, Closed), (Closed, Victim), (Victim, Free)]);
    }

    #[test]
    #[should_panic(expected = "cannot go from Free to Victim")]
    fn a_step_off_the_life_cycle_is_refused() {
        use super::SbState::*;
        let mut m = super::SbMeta { state: Free, valid: 0, close_seq: 0, erase_count: 0, short: false };
        m.become_state(Victim);
    }
}
