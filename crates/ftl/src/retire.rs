//! A block that fails a program (worn out: [`nand::Endurance`]) is retired
//! at once, as controllers do on a program status failure:
//!
//! - the failed page holds nothing: its slots, still in the writer's
//!   buffer, are written again at the writer's next page (with their
//!   original sequence numbers, so a mount tells them apart as it does GC's
//!   moves);
//! - the block is marked grown bad (kept in the system area);
//! - its superblock is closed short once the stripe under way is sealed
//!   (its parity over the pages that did program), and garbage collection
//!   takes it before any other victim: its valid slots move to whole
//!   stripes, and its erase leaves the bad block out (the pages the block
//!   programmed before the failure stay readable until then);
//! - the stripe holding the failure lacks the failed page, so it could not
//!   rebuild its other pages should a die fail: once it is sealed, its
//!   valid slots are moved at once (GC's writer) to a whole stripe. Until
//!   then a read through it is an error, never other bytes (the failed
//!   die's next page is the failed one: [`Ftl::stripe_others`] finds the
//!   stripe incomplete), and a mount after a cut moves them as it does
//!   those of a stripe a cut left incomplete.
//!
//! A failed parity page retires its block the same way; no slot needs
//! writing again.

use crate::layout::SlotAddr;
use crate::superblock::{SbState, SB_NONE};
use crate::writer::Writer;
use crate::{Ftl, FtlError};
use nand::Media;
use units::{Ppa, LBA_UNMAPPED, SLOT_BYTES};

/// A program that failed, and for a data page what it held.
pub(crate) struct FailedProgram {
    die: u32,
    sb: u32,
    page: u32,
    slots: Option<FailedSlots>,
}

/// A failed data page's slots: its first physical slot, their LBAs,
/// sequence numbers and bytes (data-holding media only).
struct FailedSlots {
    first: Ppa,
    oob: Vec<u32>,
    seqs: Vec<u64>,
    buf: Vec<u8>,
}

impl FailedProgram {
    /// The writer's open page, whose program failed.
    pub(crate) fn page_of(w: &Writer, data: bool) -> FailedProgram {
        let slots = FailedSlots { first: w.page_ppa, oob: w.oob.clone(), seqs: w.seqs.clone(), buf: if data { w.buf.clone() } else { Vec::new() } };
        FailedProgram { die: w.die, sb: w.sb, page: w.page, slots: Some(slots) }
    }

    /// A stripe's parity page, whose program failed.
    pub(crate) fn parity(die: u32, sb: u32, page: u32) -> FailedProgram {
        FailedProgram { die, sb, page, slots: None }
    }
}

impl<M: Media> Ftl<M> {
    /// Closes a writer's superblock short after a failed program and
    /// queues it for garbage collection ahead of every other victim.
    pub(crate) fn superblock_retire(&mut self, sb: u32) {
        let m = &mut self.sbs[sb as usize];
        debug_assert_eq!(m.state, SbState::Open);
        m.state = SbState::Closed;
        m.short = true;
        m.close_seq = self.seq;
        if !self.retiring.contains(&sb) {
            self.retiring.push(sb);
        }
    }

    /// Retires the blocks whose programs failed and writes a failed data
    /// page's slots again, on `user`'s writer.
    pub(crate) fn program_failed(&mut self, user: bool, failed: Vec<FailedProgram>) -> Result<(), FtlError> {
        for f in &failed {
            if !self.is_bad(f.die, f.sb) {
                self.bad_mark(f.die, f.sb, true);
                self.bad_counts.grown_program += 1;
            }
        }
        self.capacity_check();
        self.system_save()?;
        for f in failed {
            if let Some(slots) = f.slots {
                self.failed_slots_rewrite(user, f.sb, slots)?;
                // Staged again at their new place: the failed page's
                // staged copies go (a cut before this leaves both, the
                // same writes: a mount keeps one).
                self.media.page_unstage(f.die, f.sb, f.page);
            }
        }
        Ok(())
    }

    /// Appends again each slot of a failed page still the live copy of its
    /// LBA (a write since, or a trim, made it stale: nothing to keep).
    fn failed_slots_rewrite(&mut self, user: bool, sb: u32, s: FailedSlots) -> Result<(), FtlError> {
        for (i, &lba) in s.oob.iter().enumerate() {
            let ppa = s.first + i as u32;
            if lba == LBA_UNMAPPED || !self.is_valid(ppa) {
                continue;
            }
            debug_assert_eq!(self.l2p[lba as usize], ppa);
            // The writer first: should it find no room, the slot stays
            // mapped (and reads fail: its page holds nothing).
            if (if user { self.user.sb } else { self.gc.sb }) == SB_NONE {
                self.writer_open(user)?;
            }
            self.invalidate(ppa, sb);
            let seq = if self.data { s.seqs[i] } else { 0 };
            let slot = SLOT_BYTES as usize;
            self.append(user, lba, self.data.then(|| &s.buf[i * slot..(i + 1) * slot]), seq)?;
            self.fault_counters.slots_rewritten += 1;
        }
        Ok(())
    }

    /// Moves the valid slots of the stripes sealed without a failed page.
    pub(crate) fn retired_stripes_move(&mut self) -> Result<(), FtlError> {
        for (sb, row, die) in std::mem::take(&mut self.retired_stripes) {
            let n = self.narrowing(sb).cloned();
            for m in self.layout.stripe_members(n.as_ref(), die) {
                let programmed = self.media.block_next_page(m, sb) > row;
                if !self.is_dead(m) && programmed && self.layout.is_data_in(n.as_ref(), row, m) {
                    let moved = self.page_move(SlotAddr { superblock: sb, page: row, die: m, slot: 0 }, false)?;
                    self.fault_counters.slots_reprotected += moved;
                }
            }
        }
        Ok(())
    }

    /// The next superblock a failed program retired that still holds data,
    /// taken off the queue.
    pub(crate) fn retire_victim(&mut self) -> Option<u32> {
        let sb = crate::superblock::queue_take_closed(&mut self.retiring, &self.sbs)?;
        self.counters.retire_victims += 1;
        Some(sb)
    }

    /// After a mount: closed superblocks that hold a block retired since
    /// they were opened (a failed program, its superblock not yet moved)
    /// are queued again.
    pub(crate) fn retire_requeue(&mut self) {
        for sb in 0..self.layout.superblocks {
            if self.sbs[sb as usize].state != SbState::Closed {
                continue;
            }
            let n = self.narrowing(sb);
            let holds_bad = (0..self.layout.dies).any(|d| self.is_bad(d, sb) && !self.layout.is_unused_in(n, d));
            if holds_bad && !self.retiring.contains(&sb) {
                self.retiring.push(sb);
            }
        }
    }
}
