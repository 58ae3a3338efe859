//! The writers: user data and GC data each fill an open superblock of their
//! own, one multi-plane page at a time (the write buffer's unit), across
//! the dies of a row and then down the pages; a stripe's parity page is
//! programmed once its data pages are.

use crate::layout::SlotAddr;
use crate::superblock::{narrowing_in, SbState, SB_NONE};
use crate::{Ftl, FtlError};
use nand::{Media, NandError, OpTag};
use std::cmp::Reverse;
use units::{Ppa, SlotLba, LBA_UNMAPPED, PPA_INVALID, SLOT_BYTES};

/// Which writer: the host's data, or GC's moves (read reclaim, rebuild and
/// the slots a mount writes again move with GC's). Each fills an open
/// superblock of its own, so that data of like lifetimes share blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriterId {
    User = 0,
    Gc = 1,
}

impl WriterId {
    pub(crate) fn name(self) -> &'static str {
        match self {
            WriterId::User => "user",
            WriterId::Gc => "GC",
        }
    }
}

/// Both writers, by id.
#[derive(Clone)]
pub(crate) struct Writers([Writer; 2]);

impl Writers {
    pub(crate) fn new(spm: u32, mpage_bytes: usize, data: bool) -> Writers {
        Writers([Writer::new(OpTag::User, spm, mpage_bytes, data), Writer::new(OpTag::Gc, spm, mpage_bytes, data)])
    }
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Writer> {
        self.0.iter()
    }
}

impl std::ops::Index<WriterId> for Writers {
    type Output = Writer;
    #[inline(always)]
    fn index(&self, id: WriterId) -> &Writer {
        &self.0[id as usize]
    }
}

impl std::ops::IndexMut<WriterId> for Writers {
    #[inline(always)]
    fn index_mut(&mut self, id: WriterId) -> &mut Writer {
        &mut self.0[id as usize]
    }
}

/// One open superblock being filled in write order.
#[derive(Clone)]
pub(crate) struct Writer {
    pub(crate) tag: OpTag,
    pub(crate) sb: u32,
    pub(crate) page: u32,
    pub(crate) die: u32,
    pub(crate) slot: u32,
    /// The physical address of the open page's first slot.
    pub(crate) page_ppa: Ppa,
    /// LBAs of the slots of the open multi-plane page (its OOB).
    pub(crate) oob: Vec<u32>,
    /// Write sequence numbers of those slots (data-holding media only).
    pub(crate) seqs: Vec<u64>,
    /// Data of the open multi-plane page (data-holding media only).
    pub(crate) buf: Vec<u8>,
    /// XOR of the stripe's data pages so far, and of their OOB LBAs and
    /// sequence numbers (data-holding media only).
    pub(crate) parity: Vec<u8>,
    pub(crate) parity_oob: Vec<u32>,
    pub(crate) parity_seqs: Vec<u64>,
    /// A program of the stripe under way failed: once it is sealed, its
    /// slots are moved ([`crate::retire`]).
    pub(crate) stripe_failed: bool,
}

impl Writer {
    pub(crate) fn new(tag: OpTag, spm: u32, mpage_bytes: usize, data: bool) -> Writer {
        Writer {
            tag,
            sb: SB_NONE,
            page: 0,
            die: 0,
            slot: 0,
            page_ppa: 0,
            oob: vec![LBA_UNMAPPED; spm as usize],
            seqs: if data { vec![0; spm as usize] } else { Vec::new() },
            buf: if data { vec![0; mpage_bytes] } else { Vec::new() },
            parity: if data { vec![0; mpage_bytes] } else { Vec::new() },
            parity_oob: if data { vec![0; spm as usize] } else { Vec::new() },
            parity_seqs: if data { vec![0; spm as usize] } else { Vec::new() },
            stripe_failed: false,
        }
    }
    /// The open page joins its stripe's parity (bytes and OOB).
    fn parity_accumulate(&mut self) {
        self.parity.iter_mut().zip(&self.buf).for_each(|(p, b)| *p ^= *b);
        self.parity_oob.iter_mut().zip(&self.oob).for_each(|(p, b)| *p ^= *b);
        self.parity_seqs.iter_mut().zip(&self.seqs).for_each(|(p, b)| *p ^= *b);
    }
    /// Slot `s` of the open page holds no data.
    fn pad(&mut self, s: u32, data: bool) {
        self.oob[s as usize] = LBA_UNMAPPED;
        if data {
            self.seqs[s as usize] = 0;
            self.buf[s as usize * SLOT_BYTES as usize..(s as usize + 1) * SLOT_BYTES as usize].fill(0);
        }
    }
    pub(crate) fn parity_clear(&mut self) {
        self.parity.fill(0);
        self.parity_oob.fill(0);
        self.parity_seqs.fill(0);
    }
    #[inline]
    pub(crate) fn holds(&self, a: &SlotAddr) -> bool {
        self.sb == a.superblock && self.page == a.page && self.die == a.die
    }
    /// The first slot of the open page (`PPA_INVALID` when none is open):
    /// [`Writer::holds`] for an address known only by its page's first slot.
    #[inline]
    pub(crate) fn open_page_first(&self) -> Ppa {
        if self.sb == SB_NONE {
            PPA_INVALID
        } else {
            self.page_ppa
        }
    }
}

impl<M: Media> Ftl<M> {
    /// Places `lba` at the writer's next slot and programs the page (and the
    /// stripe's parity) when it is full.
    #[inline(always)]
    /// `seq` is the data's write sequence number, kept in the slot's OOB on
    /// data-holding media (a GC move keeps the original write's).
    pub(crate) fn append(&mut self, id: WriterId, lba: SlotLba, data: Option<&[u8]>, seq: u64) -> Result<(), FtlError> {
        let w = &self.writers[id];
        let (ppa, sb) = (w.page_ppa + w.slot, w.sb);
        debug_assert_eq!(ppa, self.layout.ppa(SlotAddr { superblock: w.sb, page: w.page, die: w.die, slot: w.slot }));
        self.map_set(lba, ppa, sb);
        let w = &mut self.writers[id];
        w.oob[w.slot as usize] = lba;
        if self.data {
            w.seqs[w.slot as usize] = seq;
            let s = w.slot as usize * SLOT_BYTES as usize;
            match data {
                Some(d) => w.buf[s..s + SLOT_BYTES as usize].copy_from_slice(&d[..SLOT_BYTES as usize]),
                None => w.buf[s..s + SLOT_BYTES as usize].fill(0),
            }
            if id == WriterId::User && self.cfg.power_loss_protection {
                self.media.slot_stage(w.die, w.sb, w.page, w.slot, (lba, seq), &w.buf[s..s + SLOT_BYTES as usize])?;
            }
        }
        w.slot += 1;
        self.seq += 1;
        if w.slot == self.layout.slots_per_mpage {
            self.writer_program(id)?;
        }
        Ok(())
    }

    /// Pads a writer's open page (slots with no LBA, zeros) and programs it:
    /// every slot appended before is then on the media.
    pub(crate) fn writer_pad(&mut self, id: WriterId) -> Result<(), FtlError> {
        // A failed program writes its slots again: pad until none is left.
        loop {
            let w = &self.writers[id];
            if w.sb == SB_NONE || w.slot == 0 {
                return Ok(());
            }
            self.writer_pad_page(id)?;
        }
    }

    /// Pads the rest of a writer's open page, however full (an empty one
    /// becomes a page of padding), and programs it.
    pub(crate) fn writer_pad_page(&mut self, id: WriterId) -> Result<(), FtlError> {
        let w = &mut self.writers[id];
        debug_assert!(w.sb != SB_NONE, "a writer pads only an open superblock");
        let spm = self.layout.slots_per_mpage;
        for s in w.slot..spm {
            w.pad(s, self.data);
        }
        w.slot = spm;
        self.writer_program(id)
    }

    /// Leaves the writer's next slot empty (no LBA, zeros), programming
    /// the page if that fills it.
    pub(crate) fn writer_pad_slot(&mut self, id: WriterId) -> Result<(), FtlError> {
        if self.writers[id].sb == SB_NONE {
            self.writer_open(id)?;
        }
        let w = &mut self.writers[id];
        w.pad(w.slot, self.data);
        w.slot += 1;
        if w.slot == self.layout.slots_per_mpage {
            self.writer_program(id)?;
        }
        Ok(())
    }

    /// Programs a writer's full page, then its stripe's parity if due, and
    /// moves the writer to its next data page (closing a full superblock).
    /// A program that fails (a worn-out block) retires its block: the
    /// failed page's slots are written again, and the superblock's rows
    /// after it leave the block out ([`crate::retire`]).
    #[inline(never)]
    fn writer_program(&mut self, id: WriterId) -> Result<(), FtlError> {
        if let Some(failed) = self.writer_program_page(id)? {
            self.program_failed(id, failed)?;
        }
        if !self.gc.retired_stripes.is_empty() {
            self.retired_stripes_move()?;
        }
        Ok(())
    }

    /// [`Ftl::writer_program`] but for what a failed program asks: returns
    /// the programs that failed, the failed data page's slots with them.
    fn writer_program_page(&mut self, id: WriterId) -> Result<Option<Vec<FailedProgram>>, FtlError> {
        let data = self.data;
        let w = &self.writers[id];
        let (sb, row) = (w.sb, w.page);
        let n = narrowing_in(&self.sbs.narrows, &self.sbs.row_narrows, sb, row);
        let layout = &self.layout;
        let w = &mut self.writers[id];
        let mut failed = None;
        if data {
            self.media.oob_seqs_set(w.die, w.sb, w.page, &w.seqs);
        }
        match self.media.page_program(w.die, w.sb, w.page, w.tag, &w.oob, data.then_some(&w.buf[..])) {
            Ok(()) if layout.stripe_width > 1 && data => w.parity_accumulate(),
            Ok(()) => {}
            Err(NandError::ProgramFailed { .. }) => failed = Some(vec![FailedProgram::page_of(w, data)]),
            Err(e) => return Err(e.into()),
        }
        let mut stripe_sealed = layout.stripe_width <= 1;
        if layout.stripe_width > 1 && w.die == layout.stripe_last_data_die_in(n, w.page, w.die) {
            let pd = layout.parity_die_in(n, w.page, w.die).expect("a data page's stripe has parity");
            let tag = if w.tag == OpTag::Gc { OpTag::GcParity } else { OpTag::Parity };
            let r = if data {
                // The parity page's OOB is the XOR of its data pages'
                // (a dead die's OOB is rebuilt as its bytes are).
                self.media.oob_seqs_set(pd, w.sb, w.page, &w.parity_seqs);
                let r = self.media.page_program(pd, w.sb, w.page, tag, &w.parity_oob, Some(&w.parity[..]));
                w.parity_clear();
                r
            } else {
                let oob = [LBA_UNMAPPED; 32];
                self.media.page_program(pd, w.sb, w.page, tag, &oob[..layout.slots_per_mpage as usize], None)
            };
            match r {
                Ok(()) => {}
                Err(NandError::ProgramFailed { .. }) => failed.get_or_insert_with(Vec::new).push(FailedProgram::parity(pd, w.sb, w.page)),
                Err(e) => return Err(e.into()),
            }
            stripe_sealed = true;
        }
        if failed.is_some() {
            w.stripe_failed = true;
        }
        w.slot = 0;
        w.oob.fill(LBA_UNMAPPED);
        if w.stripe_failed && stripe_sealed {
            // The stripe holding a failure is sealed: its slots to move.
            w.stripe_failed = false;
            self.gc.retired_stripes.push((w.sb, w.page, w.die));
        }
        for f in failed.iter().flatten() {
            self.row_narrow_after(sb, f.die(), row);
        }
        self.writer_advance(id);
        Ok(failed)
    }

    /// Moves a writer to its next data page, closing its superblock when
    /// none is left.
    fn writer_advance(&mut self, id: WriterId) {
        let layout = &self.layout;
        let w = &mut self.writers[id];
        // The row's narrowing, looked up again only when the row changes.
        let mut n = narrowing_in(&self.sbs.narrows, &self.sbs.row_narrows, w.sb, w.page);
        loop {
            w.die += 1;
            if w.die == layout.dies {
                w.die = 0;
                w.page += 1;
                if w.page == layout.pages_per_block {
                    let sb = w.sb as usize;
                    w.sb = SB_NONE;
                    let m = &mut self.sbs.meta[sb];
                    m.become_state(SbState::Closed);
                    m.close_seq = self.seq;
                    return;
                }
                n = narrowing_in(&self.sbs.narrows, &self.sbs.row_narrows, w.sb, w.page);
            }
            if layout.is_data_in(n, w.page, w.die) {
                w.page_ppa = layout.ppa(SlotAddr { superblock: w.sb, page: w.page, die: w.die, slot: 0 });
                return;
            }
        }
    }

    /// Opens a free superblock (the least worn) for a writer, at the
    /// narrowing of the dies failed so far and its own bad blocks.
    pub(crate) fn writer_open(&mut self, id: WriterId) -> Result<(), FtlError> {
        let Some(Reverse((_, sb))) = self.sbs.free.pop() else {
            return Err(self.no_space(&format!("the {} writer found no free superblock", id.name())));
        };
        let narrow = self.narrowing_fresh(sb);
        let m = &mut self.sbs.meta[sb as usize];
        debug_assert_eq!(m.valid, 0);
        m.become_state(SbState::Open);
        debug_assert!(self.sbs.row_narrows[sb as usize].is_empty(), "an erased superblock has no row narrowing");
        let changed = self.sbs.narrows[sb as usize] != narrow;
        self.sbs.narrows[sb as usize] = narrow;
        let n = self.sbs.narrows[sb as usize].as_ref();
        let layout = &self.layout;
        let w = &mut self.writers[id];
        w.sb = sb;
        w.page = 0;
        w.die = 0;
        w.slot = 0;
        w.oob.fill(LBA_UNMAPPED);
        w.parity_clear();
        w.stripe_failed = false;
        while !layout.is_data_in(n, 0, w.die) {
            w.die += 1;
            if w.die == layout.dies {
                return Err(FtlError::NoSpace("no die is left to write to".into()));
            }
        }
        w.page_ppa = layout.ppa(SlotAddr { superblock: sb, page: 0, die: w.die, slot: 0 });
        if changed {
            self.system_save()?;
        }
        Ok(())
    }
}

/// A program that failed, and for a data page what it held.
pub(crate) struct FailedProgram {
    pub(crate) die: u32,
    pub(crate) sb: u32,
    pub(crate) page: u32,
    pub(crate) slots: Option<FailedSlots>,
}

/// A failed data page's slots: its first physical slot, their LBAs,
/// sequence numbers and bytes (data-holding media only).
pub(crate) struct FailedSlots {
    pub(crate) first: Ppa,
    pub(crate) oob: Vec<u32>,
    pub(crate) seqs: Vec<u64>,
    pub(crate) buf: Vec<u8>,
}

impl FailedProgram {
    /// The writer's open page, whose program failed.
    pub(crate) fn page_of(w: &Writer, data: bool) -> FailedProgram {
        let slots = FailedSlots { first: w.page_ppa, oob: w.oob.clone(), seqs: w.seqs.clone(), buf: if data { w.buf.clone() } else { Vec::new() } };
        FailedProgram { die: w.die, sb: w.sb, page: w.page, slots: Some(slots) }
    }

    /// The die whose program failed.
    pub(crate) fn die(&self) -> u32 {
        self.die
    }

    /// A stripe's parity page, whose program failed.
    pub(crate) fn parity(die: u32, sb: u32, page: u32) -> FailedProgram {
        FailedProgram { die, sb, page, slots: None }
    }
}

impl<M: Media> Ftl<M> {
    /// The user writer may not take the last free superblock: that one is
    /// GC's, so that cleaning can always make progress. Below that, GC runs
    /// unpaced (a forced collection) until a superblock is freed.
    pub(crate) fn user_superblock_take(&mut self) -> Result<(), FtlError> {
        let mut steps: u64 = 0;
        let limit = 4 * self.layout.slots_per_superblock as u64 * self.layout.superblocks as u64;
        while self.sbs.free.len() <= 1 || !self.free_pool_holds_two() {
            let stuck = if self.gc.victim.is_none() && !self.victim_select(true) {
                "no closed superblock to collect"
            } else if steps > limit {
                "garbage collection made no progress"
            } else {
                self.gc_step()?;
                self.counters.forced_gc_slots += 1;
                steps += 1;
                continue;
            };
            return Err(self.no_space(stuck));
        }
        self.writer_open(WriterId::User)
    }
}

#[cfg(test)]
mod tests {
    use crate::retire::tests::{config, geometry};
    use crate::writer::WriterId;
    use crate::{Ftl, FtlError};
    use nand::Array;
    use units::SLOT_BYTES;

    /// A write the card refuses because it finds no superblock to take
    /// (it turns read-only there) keeps the LBA's old data: the superblock
    /// is taken before the old copy is unmapped (it read as zeros).
    #[test]
    fn a_write_refused_for_want_of_a_superblock_keeps_the_old_data() {
        let mut ftl = Ftl::format(Array::new(geometry(), true), config()).unwrap();
        let old = vec![7u8; SLOT_BYTES as usize];
        ftl.write(0, Some(&old)).unwrap();
        ftl.die_fail(7).unwrap();
        // The user writer's superblock is full and none is left to take,
        // nor any closed one to collect.
        ftl.writers[WriterId::User].sb = super::SB_NONE;
        ftl.sbs.free.clear();
        assert!(matches!(ftl.write(0, Some(&[9u8; SLOT_BYTES as usize])), Err(FtlError::ReadOnly(_))));
        let mut out = vec![0u8; SLOT_BYTES as usize];
        ftl.read(0, Some(&mut out)).unwrap();
        assert_eq!(out, old, "the refused write's LBA keeps its old data");
    }
}
