//! Garbage collection: a victim superblock's valid slots are read a
//! multi-plane page at a time and moved to the GC writer, paced against
//! host writes by credit (each host slot earns the victim's ratio of valid
//! to invalid slots), then the victim is erased and freed. Which superblock
//! is the victim is [`crate::policy`]'s choice.

use crate::map::valid_bit;
use crate::superblock::SB_NONE;
use crate::writer::WriterId;
use crate::{Ftl, FtlError, ONE};
use nand::{Media, OpTag};
use units::{prefetch_read, Ppa, PPA_INVALID, SLOT_BYTES};

/// Garbage collection's state: the victim being emptied, its pace, the
/// superblocks queued for read reclaim and the stripes to move after a
/// failed program.
#[derive(Clone)]
pub(crate) struct Gc {
    pub(crate) victim: Option<Victim>,
    /// Credit in 1/65536 slots.
    pub(crate) credit: u64,
    pub(crate) rate: u64,
    /// Superblocks queued for read reclaim, oldest first.
    pub(crate) reclaim: Vec<u32>,
    /// Stripes sealed without a page whose program failed (superblock,
    /// row, a die of the stripe): their slots to move at once.
    pub(crate) retired_stripes: Vec<(u32, u32, u32)>,
    /// The victim page GC last read (data-holding media only); apart from
    /// the host read's page so that host reads between moves do not
    /// clobber it.
    pub(crate) scratch: Vec<u8>,
}

impl Gc {
    pub(crate) fn new(data: bool, mpage_bytes: usize) -> Gc {
        Gc { victim: None, credit: 0, rate: 0, reclaim: Vec::new(), retired_stripes: Vec::new(), scratch: if data { vec![0; mpage_bytes] } else { Vec::new() } }
    }
}

#[derive(Clone)]
pub(crate) struct Victim {
    pub(crate) sb: u32,
    /// Next victim position to scan: the start of the page after the one
    /// being moved.
    pub(crate) cursor: u32,
    /// Next victim position whose L2P entry is to be prefetched; runs
    /// `GC_PREFETCH_AHEAD` positions ahead of `cursor`.
    pub(crate) prefetch: u32,
    /// The multi-plane page being moved: one read brought every slot of it
    /// that was valid then; `mask` holds those not yet moved.
    pub(crate) page_first: Ppa,
    pub(crate) mask: u32,
}

/// Superblocks above its paced level up to which GC paced by host writes
/// takes its next victim (`Ftl::gc_rest_level`).
const GC_REST_ABOVE_PACED: u32 = 1;
/// How far ahead of the GC cursor L2P entries are prefetched, in slots.
const GC_PREFETCH_AHEAD: u32 = 64;
/// Positions prefetched per burst: small enough that the burst fits the
/// core's outstanding-miss slots, large enough that page walks overlap.
const GC_PREFETCH_BURST: u32 = 8;

impl<M: Media> Ftl<M> {
    /// GC's share for `slots` slots written, at the victim's own ratio of
    /// valid to invalid slots (which keeps the pool level), scaled up by
    /// how far the pool has fallen below its paced level (the reserve plus
    /// one). It takes a next victim while the pool is at or below its rest
    /// level, a superblock above the paced level, and rests only above
    /// that: with the rest level at the paced level itself, GC stopped and
    /// started once per victim, and the writes while its queue drained
    /// passed any pacing unheld, in bursts whose rate followed the size of
    /// a superblock (and so the scale).
    #[inline]
    pub(crate) fn gc_pace(&mut self, slots: u64) -> Result<(), FtlError> {
        let target = self.gc_paced_level();
        let free = self.sbs.free.len() as u32;
        if self.gc.victim.is_none() {
            if free > self.gc_rest_level() {
                self.gc.credit = 0;
                return Ok(());
            }
            if !self.victim_select(false) {
                return Ok(());
            }
        }
        let urgency = 1 + target.saturating_sub(free) as u64;
        self.gc.credit += self.gc.rate * urgency * slots;
        while self.gc.credit >= ONE {
            self.gc.credit -= ONE;
            if !self.gc_step()? {
                self.gc.credit = 0;
                break;
            }
        }
        Ok(())
    }

    /// The free superblocks GC paced by host writes keeps: the reserve and
    /// one more.
    #[inline]
    pub fn gc_paced_level(&self) -> u32 {
        self.cfg.reserve_superblocks + 1
    }

    /// The free superblocks above which GC paced by host writes rests
    /// (`gc_pace`): background GC's marks are counted from here.
    #[inline]
    pub fn gc_rest_level(&self) -> u32 {
        self.gc_paced_level() + GC_REST_ABOVE_PACED
    }

    /// Background GC: up to `slots` moves (an erase counts as one) while
    /// the free pool is under `free_mark` superblocks, on a victim that
    /// frees something (the GC policy's choice, holding at least one
    /// invalid slot). The caller runs it while a GC thread has nothing
    /// else to do. Returns the steps taken: 0 when the pool is at its mark
    /// or nothing is worth collecting.
    pub fn gc_background(&mut self, free_mark: u32, slots: u32) -> Result<u32, FtlError> {
        if self.gc.victim.is_none() && (self.sbs.free.len() as u32 >= free_mark || !self.victim_select_background()) {
            return Ok(0);
        }
        let mut steps = 0;
        while steps < slots && self.gc.victim.is_some() {
            self.gc_step()?;
            steps += 1;
        }
        Ok(steps)
    }

    /// Moves one valid slot out of the victim, or erases the victim once it
    /// holds none. Returns false when there is no victim.
    pub(crate) fn gc_step(&mut self) -> Result<bool, FtlError> {
        let Some(v) = self.gc.victim.as_mut() else { return Ok(false) };
        if self.sbs.meta[v.sb as usize].valid == 0 {
            v.cursor = self.layout.slots_per_superblock;
            v.mask = 0;
        }
        let mut ppa = self.victim_next_in_page()?;
        if ppa == PPA_INVALID {
            if !self.victim_seek_page() {
                self.victim_erase()?;
                return Ok(true);
            }
            ppa = self.victim_page_read()?;
            self.victim_prefetch_ahead();
        }
        self.gc_move(ppa)?;
        Ok(true)
    }

    /// The next slot of the page in hand that is still valid, or
    /// `PPA_INVALID`. A slot a host write replaced since the page was read
    /// leaves its place in the GC writer empty, as a controller copying
    /// the page it read would: the page's other slots keep their places in
    /// their plane pages (an 8 KiB write's two slots stay in one) however
    /// host writes race GC.
    #[inline]
    fn victim_next_in_page(&mut self) -> Result<Ppa, FtlError> {
        loop {
            let v = self.gc.victim.as_mut().expect("a victim");
            if v.mask == 0 {
                return Ok(PPA_INVALID);
            }
            let s = v.mask.trailing_zeros();
            v.mask &= v.mask - 1;
            let p = v.page_first + s;
            if valid_bit(&self.map.valid, p) {
                return Ok(p);
            }
            self.counters.gc_slots_padded += 1;
            self.writer_pad_slot(WriterId::Gc)?;
        }
    }

    /// Moves the cursor to the next slot holding valid data, skipping
    /// invalid slots a bitmap word at a time; false when none is left.
    fn victim_seek_page(&mut self) -> bool {
        let sps = self.layout.slots_per_superblock;
        let v = self.gc.victim.as_mut().expect("a victim");
        let base = v.sb * sps;
        while v.cursor < sps {
            let p = base + v.cursor;
            let word = self.map.valid[p as usize / 64] >> (p % 64);
            if word & 1 != 0 {
                break;
            }
            v.cursor += if word == 0 { 64 - p % 64 } else { word.trailing_zeros() };
        }
        v.cursor = v.cursor.min(sps);
        v.cursor < sps
    }

    /// Erases the emptied victim's blocks; it rejoins the free pool.
    fn victim_erase(&mut self) -> Result<(), FtlError> {
        // Where the media hold data, the victim's last copies must be on
        // the media before it is erased: a cut must not lose what was safe.
        // Without power-loss protection, so must the user writer's open
        // page: its writes made the victim's copies stale, and a cut that
        // lost them would find neither.
        if self.data {
            self.writer_pad(WriterId::Gc)?;
            if !self.cfg.power_loss_protection {
                self.writer_pad(WriterId::User)?;
            }
        }
        let sb = self.gc.victim.take().expect("a victim").sb;
        self.superblock_erase(sb, OpTag::Gc)?;
        debug_assert_eq!(self.sbs.meta[sb as usize].valid, 0);
        self.superblock_erased(sb);
        self.counters.gc_victims += 1;
        Ok(())
    }

    /// One read brings every valid slot of the cursor's page; returns the
    /// cursor's slot (valid) and leaves the page's others in `mask`.
    fn victim_page_read(&mut self) -> Result<Ppa, FtlError> {
        let v = self.gc.victim.as_ref().expect("a victim");
        let base = v.sb * self.layout.slots_per_superblock;
        let ppa = base + v.cursor;
        let a = self.layout.addr(ppa);
        let spm = self.layout.slots_per_mpage;
        let first = ppa - a.slot;
        // The page's bits lie in one bitmap word when its slot count
        // divides 64 (pages start on a multiple of it).
        let mask = if 64 % spm == 0 {
            ((self.map.valid[first as usize / 64] >> (first % 64)) & ((1u64 << spm) - 1)) as u32
        } else {
            (a.slot..spm).fold(0u32, |mask, s| mask | (valid_bit(&self.map.valid, first + s) as u32) << s)
        };
        // (Slots before the cursor's are invalid: the scan passed them.)
        debug_assert_eq!(mask & ((1 << a.slot) - 1), 0);
        let mut scratch = std::mem::take(&mut self.gc.scratch);
        let r = self.page_read_any(a, mask, OpTag::Gc, self.data.then_some(&mut scratch[..]));
        self.gc.scratch = scratch;
        r?;
        let v = self.gc.victim.as_mut().expect("a victim");
        v.page_first = first;
        v.mask = mask & !(1 << a.slot);
        v.cursor = first - base + spm;
        Ok(ppa)
    }

    /// Each move updates the L2P entry of its slot, at a random place in
    /// the map: prefetches those of the valid slots ahead of the cursor, in
    /// bursts so that their page walks overlap.
    #[inline]
    fn victim_prefetch_ahead(&mut self) {
        let sps = self.layout.slots_per_superblock;
        let v = self.gc.victim.as_mut().expect("a victim");
        if v.prefetch >= v.cursor + GC_PREFETCH_AHEAD - GC_PREFETCH_BURST {
            return;
        }
        let base = v.sb * sps;
        let horizon = (v.cursor + GC_PREFETCH_AHEAD).min(sps);
        v.prefetch = v.prefetch.max(v.cursor);
        // A bitmap word at a time, valid slots only.
        while v.prefetch < horizon {
            let p = base + v.prefetch;
            let n = (64 - p % 64).min(horizon - v.prefetch);
            let mut word = (self.map.valid[p as usize / 64] >> (p % 64)) & (u64::MAX >> (64 - n));
            while word != 0 {
                let q = p + word.trailing_zeros();
                word &= word - 1;
                prefetch_read(&self.map.l2p[self.map.p2l[q as usize] as usize]);
            }
            v.prefetch += n;
        }
    }

    /// Moves the valid victim slot `ppa` to the GC writer.
    fn gc_move(&mut self, ppa: Ppa) -> Result<(), FtlError> {
        let v = self.gc.victim.as_ref().expect("a victim");
        let (slot, sb) = (ppa - v.page_first, v.sb);
        let lba = self.map.p2l[ppa as usize];
        // The slot is valid, so the map points here: invalidate it without
        // loading the map entry (a random access the append only stores to).
        // The writer first: should it find no room, the slot stays mapped.
        if self.writers[WriterId::Gc].sb == SB_NONE {
            self.writer_open(WriterId::Gc)?;
        }
        self.invalidate(ppa, sb);
        if self.data {
            let s = slot as usize * SLOT_BYTES as usize;
            let a = self.layout.addr(ppa);
            let (_, seq) = self.oob_of(a)?;
            let page = std::mem::take(&mut self.gc.scratch);
            let r = self.append(WriterId::Gc, lba, Some(&page[s..s + SLOT_BYTES as usize]), seq);
            self.gc.scratch = page;
            r?;
        } else {
            self.append(WriterId::Gc, lba, None, 0)?;
        }
        self.counters.gc_slots_moved += 1;
        Ok(())
    }
}
