//! The host's I/O on the FTL: writes (one slot, or a slot of a host write
//! whose slots GC never splits), reads (one slot, a merge's read, spans
//! of slots with their bytes), flush and trim.

use crate::superblock::SB_NONE;
use crate::writer::WriterId;
use crate::{Ftl, FtlError, ReadFrom, SlotAddr};
use nand::{Media, NandError, OpTag};
use units::{Ppa, SlotLba, PPA_INVALID, SLOT_BYTES};

impl<M: Media> Ftl<M> {
    /// Writes one logical slot. `data` is `SLOT_BYTES` long on data-holding
    /// media and ignored otherwise.
    pub fn write(&mut self, lba: SlotLba, data: Option<&[u8]>) -> Result<(), FtlError> {
        self.write_in_io(lba, data, (lba, lba))
    }

    /// Writes slot `lba` of a host write of slots `first..=last`. GC takes
    /// its share of the whole write once its last slot is in, never between
    /// its slots (a controller takes a command's slots into its buffer
    /// together): GC never finds half a write, so it never splits the
    /// slots of one write that share a plane page.
    pub fn write_in_io(&mut self, lba: SlotLba, data: Option<&[u8]>, (first, last): (SlotLba, SlotLba)) -> Result<(), FtlError> {
        let r = self.slot_write(lba, data, (first, last));
        if r.is_err() {
            return self.write_failed(r);
        }
        Ok(())
    }

    /// A write's error, the card turned read-only where the store failed.
    #[cold]
    #[inline(never)]
    fn write_failed(&mut self, r: Result<(), FtlError>) -> Result<(), FtlError> {
        match r {
            Err(FtlError::Nand(NandError::Store { why, full })) => Err(self.store_failed(&why, full)),
            r => r,
        }
    }

    #[inline(always)]
    fn slot_write(&mut self, lba: SlotLba, data: Option<&[u8]>, (first, last): (SlotLba, SlotLba)) -> Result<(), FtlError> {
        debug_assert!(first <= lba && lba <= last, "slot {lba} outside the write's {first}..={last}");
        self.lba_check(lba)?;
        if self.faults.faulted {
            if let Some(why) = &self.faults.read_only {
                return Err(FtlError::ReadOnly(why.clone()));
            }
            self.lost_clear(lba);
        }
        // The superblock first: a card that turns read-only here refuses
        // the write with the old data still mapped.
        if self.writers[WriterId::User].sb == SB_NONE {
            self.user_superblock_take()?;
        }
        self.unmap(lba);
        self.host_seq += 1;
        self.append(WriterId::User, lba, data, self.host_seq)?;
        debug_assert_eq!(self.map.p2l[self.map.l2p[lba as usize] as usize], lba, "the map holds a written slot both ways");
        self.counters.host_slots_written += 1;
        if lba != last {
            return Ok(());
        }
        match self.gc_pace((last - first + 1) as u64) {
            // The write is in: GC found the card worn out after it, and
            // the next write is refused.
            Err(FtlError::ReadOnly(_)) => Ok(()),
            r => r,
        }
    }

    /// Reads one logical slot into `out` (`SLOT_BYTES`, data-holding media
    /// only; zeros where unmapped).
    pub fn read(&mut self, lba: SlotLba, out: Option<&mut [u8]>) -> Result<ReadFrom, FtlError> {
        self.lba_check(lba)?;
        self.counters.host_slots_read += 1;
        self.slot_read(lba, out)
    }

    /// Reads the rest of a slot a write covers in part, to merge with it
    /// in the write buffer: the media read a host read makes, but not a
    /// host read.
    pub fn read_for_merge(&mut self, lba: SlotLba, out: Option<&mut [u8]>) -> Result<ReadFrom, FtlError> {
        self.lba_check(lba)?;
        self.slot_read(lba, out)
    }

    fn slot_read(&mut self, lba: SlotLba, out: Option<&mut [u8]>) -> Result<ReadFrom, FtlError> {
        debug_assert!(out.as_ref().is_none_or(|o| o.len() >= SLOT_BYTES as usize), "a slot's read needs a slot of room");
        let ppa = self.map.l2p[lba as usize];
        if ppa == PPA_INVALID {
            self.lost_check(lba)?;
            if let Some(out) = out {
                out[..SLOT_BYTES as usize].fill(0);
            }
            return Ok(ReadFrom::Unmapped);
        }
        let a = self.layout.addr(ppa);
        let s = a.slot as usize * SLOT_BYTES as usize..(a.slot as usize + 1) * SLOT_BYTES as usize;
        for w in self.writers.iter() {
            if w.holds(&a) {
                if let (Some(out), true) = (out, self.data) {
                    out[..SLOT_BYTES as usize].copy_from_slice(&w.buf[s]);
                }
                return Ok(ReadFrom::Buffer);
            }
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let r = self.page_read_any(a, 1 << a.slot, OpTag::User, self.data.then_some(&mut scratch[..]));
        self.scratch = scratch;
        r?;
        if let (Some(out), true) = (out, self.data) {
            out[..SLOT_BYTES as usize].copy_from_slice(&self.scratch[s]);
        }
        Ok(ReadFrom::Media)
    }

    /// Puts every slot written so far on the media: the writers' open pages
    /// are padded and programmed (what a FLUSH asks of a card without
    /// power-loss protection).
    pub fn flush(&mut self) -> Result<(), FtlError> {
        self.writer_pad(WriterId::User)?;
        self.writer_pad(WriterId::Gc)?;
        debug_assert_eq!(self.user_pad_slots(), 0, "a flush leaves no written slot off the media");
        Ok(())
    }

    /// The slots a flush would pad in the user writer's open page (0 when
    /// none is open or it is empty).
    pub fn user_pad_slots(&self) -> u32 {
        if self.writers[WriterId::User].sb == SB_NONE || self.writers[WriterId::User].slot == 0 {
            0
        } else {
            self.layout.slots_per_mpage - self.writers[WriterId::User].slot
        }
    }

    /// The media, taken back (a power cut in tests: what is on them is all
    /// that is left).
    pub fn into_media(self) -> M {
        self.media
    }

    /// Copies a logical slot's current bytes into `out` (`SLOT_BYTES`):
    /// from a writer's page, the media, or zeros where unmapped. Counts
    /// nothing and issues no media operation: a data-holding device times
    /// its reads with `read_span` and takes the bytes from here.
    pub fn slot_copy(&self, lba: SlotLba, out: &mut [u8]) -> Result<(), FtlError> {
        self.lba_check(lba)?;
        assert!(self.data, "slot_copy needs data-holding media");
        let out = &mut out[..SLOT_BYTES as usize];
        let ppa = self.map.l2p[lba as usize];
        if ppa == PPA_INVALID {
            self.lost_check(lba)?;
            out.fill(0);
            return Ok(());
        }
        let a = self.layout.addr(ppa);
        let s = a.slot as usize * SLOT_BYTES as usize..(a.slot as usize + 1) * SLOT_BYTES as usize;
        if let Some(w) = self.writers.iter().find(|w| w.holds(&a)) {
            out.copy_from_slice(&w.buf[s]);
            return Ok(());
        }
        self.slot_peek(a, out)
    }

    /// The slots of the last `read_span` (or `read_span_bytes`) that no
    /// page held: never written, or trimmed, read as zeros from no flash.
    pub fn span_unmapped(&self) -> u32 {
        self.span_unmapped
    }

    /// The die of the host writer's open page (where the next host slot
    /// goes), or `None` before a superblock is open for host writes.
    #[inline]
    pub fn user_open_die(&self) -> Option<u32> {
        let w = &self.writers[crate::writer::WriterId::User];
        (w.sb != crate::SB_NONE).then_some(w.die)
    }

    /// Reads logical slots `first..=last` without moving their bytes (the
    /// simulator's path): the slots of one multi-plane page that follow one
    /// another are one page read, as a controller issues it, and slots
    /// that are unmapped or still in a writer's page need none.
    pub fn read_span(&mut self, first: SlotLba, last: SlotLba) -> Result<(), FtlError> {
        self.span_read::<false>(first, last, &mut [])
    }

    /// `read_span` on data-holding media, the slots' bytes riding on its
    /// page reads into `out` (`SLOT_BYTES` a slot of the span): zeros
    /// where unmapped, the write buffer's where still there.
    pub fn read_span_bytes(&mut self, first: SlotLba, last: SlotLba, out: &mut [u8]) -> Result<(), FtlError> {
        assert!(self.data, "read_span_bytes needs data-holding media");
        assert_eq!(out.len(), (last as usize + 1 - first as usize) * SLOT_BYTES as usize, "a slot of bytes for each slot of the span");
        self.span_read::<true>(first, last, out)
    }

    /// The one walk of a span, with its bytes (`BYTES`) or without; always
    /// inlined, so that the simulator's walk carries nothing of the bytes.
    #[inline(always)]
    fn span_read<const BYTES: bool>(&mut self, first: SlotLba, last: SlotLba, out: &mut [u8]) -> Result<(), FtlError> {
        debug_assert!(first <= last);
        self.lba_check(last)?;
        self.counters.host_slots_read += (last - first) as u64 + 1;
        self.span_unmapped = 0;
        let (user_page, gc_page) = (self.writers[WriterId::User].open_page_first(), self.writers[WriterId::Gc].open_page_first());
        let mut page = PPA_INVALID;
        let mut mask = 0u32;
        // With bytes: each slot of the page being gathered, its place in
        // the span.
        let mut places = [0u32; 32];
        for lba in first..last + 1 {
            let ppa = self.map.l2p[lba as usize];
            let at = (lba - first) as usize;
            if ppa == PPA_INVALID {
                self.lost_check(lba)?;
                self.span_unmapped += 1;
                if BYTES {
                    slot_of(out, at).fill(0);
                }
                continue;
            }
            let first_slot = self.layout.mpage_first(ppa);
            let slot = ppa - first_slot;
            if first_slot == user_page || first_slot == gc_page {
                if BYTES {
                    let w = if first_slot == user_page { WriterId::User } else { WriterId::Gc };
                    slot_of(out, at).copy_from_slice(slot_in(&self.writers[w].buf, slot as usize));
                }
                continue;
            }
            if first_slot != page {
                if mask != 0 {
                    self.page_read_user::<BYTES>(page, mask, out, &places)?;
                }
                page = first_slot;
                mask = 0;
            }
            mask |= 1 << slot;
            if BYTES {
                places[slot as usize] = at as u32;
            }
        }
        if mask != 0 {
            self.page_read_user::<BYTES>(page, mask, out, &places)?;
        }
        Ok(())
    }

    /// A host read of slots `mask` of the page at `first_slot`; with
    /// bytes, each slot's to its place in the span (`places`).
    #[inline(always)]
    fn page_read_user<const BYTES: bool>(&mut self, first_slot: Ppa, mask: u32, out: &mut [u8], places: &[u32; 32]) -> Result<(), FtlError> {
        let a = self.layout.addr(first_slot);
        if !BYTES {
            return self.page_read_any(a, mask, OpTag::User, None);
        }
        self.page_read_gather(a, mask, out, places)
    }

    #[inline(never)]
    fn page_read_gather(&mut self, a: SlotAddr, mask: u32, out: &mut [u8], places: &[u32; 32]) -> Result<(), FtlError> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let r = self.page_read_any(a, mask, OpTag::User, Some(&mut scratch[..]));
        if r.is_ok() {
            for slot in (0..32).filter(|i| mask >> i & 1 != 0) {
                slot_of(out, places[slot] as usize).copy_from_slice(slot_in(&scratch, slot));
            }
        }
        self.scratch = scratch;
        r
    }

    /// Unmaps one logical slot (TRIM / discard). On data-holding media the
    /// trim is recorded with a sequence number of its own, so that a mount
    /// does not bring back the copies it unmapped.
    pub fn trim(&mut self, lba: SlotLba) -> Result<(), FtlError> {
        self.lba_check(lba)?;
        if self.faults.faulted {
            // A read-only card changes nothing, a trim no more than a write.
            if let Some(why) = &self.faults.read_only {
                return Err(FtlError::ReadOnly(why.clone()));
            }
            self.lost_clear(lba);
        }
        if self.map.l2p[lba as usize] != PPA_INVALID {
            self.counters.host_slots_trimmed += 1;
        }
        self.unmap(lba);
        debug_assert_eq!(self.map.l2p[lba as usize], PPA_INVALID, "a trimmed slot is unmapped");
        if self.data {
            self.host_seq += 1;
            self.media.trim_record(lba, self.host_seq);
        }
        Ok(())
    }
}

/// Slot `i` of a run of slots.
#[inline]
fn slot_of(slots: &mut [u8], i: usize) -> &mut [u8] {
    let s = SLOT_BYTES as usize;
    &mut slots[i * s..(i + 1) * s]
}

/// Slot `i` of a run of slots, to read.
#[inline]
fn slot_in(slots: &[u8], i: usize) -> &[u8] {
    let s = SLOT_BYTES as usize;
    &slots[i * s..(i + 1) * s]
}
