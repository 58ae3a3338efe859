//! The host flash translation layer.
//!
//! Page-level mapping at 4 KiB: an L2P array (4 bytes a user slot) and a P2L
//! array (4 bytes a physical slot, which also serves as the valid bitmap).
//! User and GC data go to two open superblocks through two writers; each
//! writer fills one multi-plane page at a time (the write buffer's unit) and
//! programs a stripe's parity page when the stripe's data pages are done.
//! Garbage collection is paced against user writes: each user slot earns GC
//! credit in proportion to the victim's valid share, so that free space stays
//! level and no write waits for a whole victim to be cleaned.
//!
//! The FTL reaches the media only through [`nand::Media`] and never reads a
//! clock: the simulator times the operations it issues, the emulator runs
//! them on real bytes.

mod check;
mod layout;

pub use layout::{Layout, SlotAddr};

use nand::{Media, NandError, OpTag};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use units::{prefetch_read, Ppa, SlotLba, LBA_UNMAPPED, PPA_INVALID, SLOT_BYTES};

/// How a victim superblock is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// The closed superblock with the fewest valid slots.
    Greedy,
    /// Rosenblum and Ousterhout's cost-benefit: the most `(1 - u) * age / 2u`,
    /// which leaves cold, slowly emptying superblocks alone for longer.
    CostBenefit,
}

impl std::str::FromStr for GcPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "greedy" => Ok(GcPolicy::Greedy),
            "cost-benefit" => Ok(GcPolicy::CostBenefit),
            _ => Err(format!("unknown GC policy '{s}': expected greedy or cost-benefit")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FtlConfig {
    /// Dies per parity stripe including the parity die (8 for 7+1); 1 for none.
    pub stripe_width: u32,
    /// Usable capacity in 4 KiB slots (set by the format).
    pub user_slots: u64,
    /// Free superblocks GC keeps in hand beyond the two open ones.
    pub reserve_superblocks: u32,
    pub gc_policy: GcPolicy,
    /// Static wear leveling: when the erase counts of superblocks spread by
    /// more than this, the coldest superblock is collected. 0 turns it off.
    pub wear_spread_max: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FtlError {
    #[error("LBA slot {lba} is out of range: the device has {user_slots} slots of 4 KiB")]
    LbaOutOfRange { lba: u64, user_slots: u64 },
    #[error("format: {0}")]
    Config(String),
    #[error("device full: no free superblock could be reclaimed ({0})")]
    NoSpace(String),
    #[error("media: {0}")]
    Nand(#[from] NandError),
}

/// The superblock life cycle: Free -> Open -> Closed -> Victim -> (erase) -> Free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SbState {
    Free,
    Open,
    Closed,
    Victim,
}

#[derive(Debug, Clone)]
struct SbMeta {
    state: SbState,
    valid: u32,
    /// Writer sequence number when it was closed (its age for cost-benefit).
    close_seq: u64,
    erase_count: u32,
}

const SB_NONE: u32 = u32::MAX;

/// One open superblock being filled in write order.
struct Writer {
    tag: OpTag,
    sb: u32,
    page: u32,
    die: u32,
    slot: u32,
    /// The physical address of the open page's first slot.
    page_ppa: Ppa,
    /// LBAs of the slots of the open multi-plane page (its OOB).
    oob: Vec<u32>,
    /// Data of the open multi-plane page (data-holding media only).
    buf: Vec<u8>,
    /// XOR of the stripe's data pages so far (data-holding media only).
    parity: Vec<u8>,
}

impl Writer {
    fn new(tag: OpTag, spm: u32, mpage_bytes: usize, data: bool) -> Writer {
        Writer {
            tag,
            sb: SB_NONE,
            page: 0,
            die: 0,
            slot: 0,
            page_ppa: 0,
            oob: vec![LBA_UNMAPPED; spm as usize],
            buf: if data { vec![0; mpage_bytes] } else { Vec::new() },
            parity: if data { vec![0; mpage_bytes] } else { Vec::new() },
        }
    }
    #[inline]
    fn holds(&self, a: &SlotAddr) -> bool {
        self.sb == a.superblock && self.page == a.page && self.die == a.die
    }
    /// The first slot of the open page (`PPA_INVALID` when none is open):
    /// [`Writer::holds`] for an address known only by its page's first slot.
    #[inline]
    fn open_page_first(&self) -> Ppa {
        if self.sb == SB_NONE {
            PPA_INVALID
        } else {
            self.page_ppa
        }
    }
}

struct Victim {
    sb: u32,
    /// Next victim position to scan: the start of the page after the one
    /// being moved.
    cursor: u32,
    /// Next victim position whose L2P entry is to be prefetched; runs
    /// `GC_PREFETCH_AHEAD` positions ahead of `cursor`.
    prefetch: u32,
    /// The multi-plane page being moved: one read brought every slot of it
    /// that was valid then; `mask` holds those not yet moved.
    page_first: Ppa,
    mask: u32,
}

/// What the FTL has done, in slots of 4 KiB.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FtlCounters {
    pub host_slots_written: u64,
    pub host_slots_read: u64,
    pub host_slots_trimmed: u64,
    pub gc_slots_moved: u64,
    pub gc_victims: u64,
    pub wear_level_victims: u64,
    pub forced_gc_slots: u64,
}

/// Where a read was served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    Unmapped,
    Buffer,
    Media,
}

pub struct Ftl<M: Media> {
    media: M,
    layout: Layout,
    cfg: FtlConfig,
    l2p: Vec<Ppa>,
    /// The LBA last written at each physical slot (its OOB), written in
    /// write order and read in GC's scan order: never touched at random.
    p2l: Vec<SlotLba>,
    /// One bit a physical slot: whether it holds the live copy of its LBA.
    /// Kept apart from the P2L so that invalidating an old copy touches
    /// 1/32 of the memory: the maps' random footprint then fits the TLB.
    valid: Vec<u64>,
    sbs: Vec<SbMeta>,
    free: BinaryHeap<Reverse<(u32, u32)>>,
    user: Writer,
    gc: Writer,
    victim: Option<Victim>,
    /// GC credit in 1/65536 slots.
    gc_credit: u64,
    gc_rate: u64,
    seq: u64,
    data: bool,
    /// A host read's page (data-holding media only).
    scratch: Vec<u8>,
    /// The victim page GC last read (data-holding media only); apart from
    /// `scratch` so that host reads between GC moves do not clobber it.
    gc_scratch: Vec<u8>,
    counters: FtlCounters,
}

const ONE: u64 = 1 << 16;

/// How far ahead of the GC cursor L2P entries are prefetched, in slots.
const GC_PREFETCH_AHEAD: u32 = 64;
/// Positions prefetched per burst: small enough that the burst fits the
/// core's outstanding-miss slots, large enough that page walks overlap.
const GC_PREFETCH_BURST: u32 = 8;

/// A vector of `n` copies of `value` whose memory the kernel is asked to
/// back with huge pages: the maps are read at random, and with 4 KiB pages
/// nearly every access would also miss the TLB. A hint only; where it is not
/// granted, the vector is an ordinary one.
fn vec_huge<T: Copy>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    #[cfg(target_os = "linux")]
    {
        let bytes = n * std::mem::size_of::<T>();
        if bytes >= 4 << 20 {
            let page = 4096usize;
            let start = (v.as_mut_ptr() as usize).div_ceil(page) * page;
            let end = (v.as_mut_ptr() as usize + bytes) / page * page;
            if end > start {
                // SAFETY: the range lies inside the vector's own allocation,
                // which is not yet touched; MADV_HUGEPAGE only advises.
                unsafe {
                    libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
                }
            }
        }
    }
    v.resize(n, value);
    v
}

/// Bit `ppa` of a validity bitmap.
#[inline(always)]
fn valid_bit(valid: &[u64], ppa: Ppa) -> bool {
    valid[ppa as usize / 64] >> (ppa % 64) & 1 != 0
}

impl<M: Media> Ftl<M> {
    /// The largest usable capacity, in slots, that leaves GC room to work:
    /// every superblock but the reserve, the two open ones and two more.
    pub fn user_slots_max(layout: &Layout, reserve_superblocks: u32) -> u64 {
        let sbs = layout.superblocks as u64;
        sbs.saturating_sub(reserve_superblocks as u64 + 4) * layout.data_slots_per_superblock as u64
    }

    /// Formats `media` (every block erased) to the usable capacity in `cfg`.
    pub fn format(media: M, cfg: FtlConfig) -> Result<Ftl<M>, FtlError> {
        let g = media.geometry().clone();
        g.validate().map_err(|e| FtlError::Config(e.to_string()))?;
        if cfg.stripe_width == 0 || !g.dies().is_multiple_of(cfg.stripe_width) {
            return Err(FtlError::Config(format!("stripe_width = {}: must be at least 1 and divide the {} dies", cfg.stripe_width, g.dies())));
        }
        if cfg.reserve_superblocks == 0 {
            return Err(FtlError::Config("reserve_superblocks = 0: GC needs at least 1 free superblock in reserve".into()));
        }
        let layout = Layout::new(&g, cfg.stripe_width);
        let max = Self::user_slots_max(&layout, cfg.reserve_superblocks);
        if cfg.user_slots == 0 || cfg.user_slots > max {
            return Err(FtlError::Config(format!(
                "usable capacity of {} slots ({} bytes) must be in 1..={} slots: {} superblocks of {} data slots, less {} in reserve and 4 for the open writers and GC",
                cfg.user_slots,
                cfg.user_slots * SLOT_BYTES,
                max,
                layout.superblocks,
                layout.data_slots_per_superblock,
                cfg.reserve_superblocks
            )));
        }
        let data = media.holds_data();
        let spm = layout.slots_per_mpage;
        let mpage_bytes = g.mpage_bytes() as usize;
        let mut ftl = Ftl {
            l2p: vec_huge(cfg.user_slots as usize, PPA_INVALID),
            p2l: vec_huge(layout.total_slots() as usize, LBA_UNMAPPED),
            valid: vec_huge((layout.total_slots() as usize).div_ceil(64), 0u64),
            sbs: vec![SbMeta { state: SbState::Free, valid: 0, close_seq: 0, erase_count: 0 }; layout.superblocks as usize],
            free: BinaryHeap::with_capacity(layout.superblocks as usize),
            user: Writer::new(OpTag::User, spm, mpage_bytes, data),
            gc: Writer::new(OpTag::Gc, spm, mpage_bytes, data),
            victim: None,
            gc_credit: 0,
            gc_rate: 0,
            seq: 0,
            data,
            scratch: if data { vec![0; mpage_bytes] } else { Vec::new() },
            gc_scratch: if data { vec![0; mpage_bytes] } else { Vec::new() },
            counters: FtlCounters::default(),
            media,
            layout,
            cfg,
        };
        ftl.secure_erase()?;
        Ok(ftl)
    }

    /// Erases every block and empties the map, as a vendor secure erase does.
    pub fn secure_erase(&mut self) -> Result<(), FtlError> {
        for sb in 0..self.layout.superblocks {
            for die in 0..self.layout.dies {
                self.media.block_erase(die, sb, OpTag::Format)?;
            }
            let m = &mut self.sbs[sb as usize];
            m.erase_count += 1;
            m.state = SbState::Free;
            m.valid = 0;
        }
        self.l2p.fill(PPA_INVALID);
        self.p2l.fill(LBA_UNMAPPED);
        self.valid.fill(0);
        self.free.clear();
        for (i, m) in self.sbs.iter().enumerate() {
            self.free.push(Reverse((m.erase_count, i as u32)));
        }
        self.user.sb = SB_NONE;
        self.gc.sb = SB_NONE;
        self.victim = None;
        self.gc_credit = 0;
        self.gc_rate = 0;
        Ok(())
    }

    /// Re-formats to a new usable capacity (secure erase included).
    pub fn reformat(&mut self, user_slots: u64) -> Result<(), FtlError> {
        let max = Self::user_slots_max(&self.layout, self.cfg.reserve_superblocks);
        if user_slots == 0 || user_slots > max {
            return Err(FtlError::Config(format!("usable capacity of {user_slots} slots must be in 1..={max}")));
        }
        self.cfg.user_slots = user_slots;
        self.l2p = vec_huge(user_slots as usize, PPA_INVALID);
        self.secure_erase()
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    pub fn config(&self) -> &FtlConfig {
        &self.cfg
    }
    pub fn media(&self) -> &M {
        &self.media
    }
    pub fn media_mut(&mut self) -> &mut M {
        &mut self.media
    }
    pub fn counters(&self) -> &FtlCounters {
        &self.counters
    }
    pub fn user_slots(&self) -> u64 {
        self.cfg.user_slots
    }
    pub fn free_superblocks(&self) -> u32 {
        self.free.len() as u32
    }
    /// Physical data slots not available to hold valid data right now: the
    /// free pool and the unfilled rest of the open writers' superblocks.
    /// This is the spare that a free-block reserve takes out of the
    /// over-provisioning.
    pub fn spare_slots_in_hand(&self) -> u64 {
        let l = &self.layout;
        let mut s = self.free.len() as u64 * l.data_slots_per_superblock as u64;
        for w in [&self.user, &self.gc] {
            if w.sb != SB_NONE {
                let written = (w.page as u64 * l.slots_per_row as u64 + w.die as u64 * l.slots_per_mpage as u64 + w.slot as u64)
                    * (l.stripe_width as u64 - 1).max(1)
                    / l.stripe_width.max(1) as u64;
                s += l.data_slots_per_superblock as u64 - written.min(l.data_slots_per_superblock as u64);
            }
        }
        s
    }
    /// Slots of valid data held (user data, wherever it is).
    pub fn valid_slots(&self) -> u64 {
        self.sbs.iter().map(|m| m.valid as u64).sum()
    }
    pub fn superblock_state(&self, sb: u32) -> SbState {
        self.sbs[sb as usize].state
    }
    pub fn superblock_valid(&self, sb: u32) -> u32 {
        self.sbs[sb as usize].valid
    }
    pub fn superblock_erase_count(&self, sb: u32) -> u32 {
        self.sbs[sb as usize].erase_count
    }
    /// Where a logical slot is mapped, if anywhere.
    pub fn lookup(&self, lba: SlotLba) -> Option<SlotAddr> {
        let ppa = *self.l2p.get(lba as usize)?;
        (ppa != PPA_INVALID).then(|| self.layout.addr(ppa))
    }
    /// Whether a physical location is still in an open writer's page (the
    /// write buffer) rather than on the media.
    pub fn is_buffered(&self, a: &SlotAddr) -> bool {
        self.user.holds(a) || self.gc.holds(a)
    }

    /// Prefetches what a host write or read of `lba` will touch: stage 0
    /// the L2P entry; stage 1 (later, when that entry is likely cached)
    /// what its current place needs: for a write the validity word it
    /// clears, for a read the media's state of the block it reads. Changes
    /// nothing.
    #[inline]
    pub fn prefetch(&self, lba: SlotLba, stage: u8, write: bool) {
        let Some(entry) = self.l2p.get(lba as usize) else { return };
        if stage == 0 {
            // Not a load: the entry is not there yet.
            prefetch_read(entry);
            return;
        }
        let e = *entry;
        if e == PPA_INVALID {
            return;
        }
        if write {
            if let Some(w) = self.valid.get(e as usize / 64) {
                prefetch_read(w);
            }
        } else {
            let a = self.layout.addr(e);
            self.media.prefetch_block(a.die, a.superblock);
        }
    }

    #[inline]
    fn lba_check(&self, lba: SlotLba) -> Result<(), FtlError> {
        if (lba as u64) < self.cfg.user_slots {
            Ok(())
        } else {
            Err(FtlError::LbaOutOfRange { lba: lba as u64, user_slots: self.cfg.user_slots })
        }
    }

    /// Writes one logical slot. `data` is `SLOT_BYTES` long on data-holding
    /// media and ignored otherwise.
    pub fn write(&mut self, lba: SlotLba, data: Option<&[u8]>) -> Result<(), FtlError> {
        self.lba_check(lba)?;
        self.unmap(lba);
        if self.user.sb == SB_NONE {
            self.user_superblock_take()?;
        }
        self.append(true, lba, data)?;
        self.counters.host_slots_written += 1;
        self.gc_pace()
    }

    /// Reads one logical slot into `out` (`SLOT_BYTES`, data-holding media
    /// only; zeros where unmapped).
    pub fn read(&mut self, lba: SlotLba, out: Option<&mut [u8]>) -> Result<ReadFrom, FtlError> {
        self.lba_check(lba)?;
        self.counters.host_slots_read += 1;
        let ppa = self.l2p[lba as usize];
        if ppa == PPA_INVALID {
            if let Some(out) = out {
                out[..SLOT_BYTES as usize].fill(0);
            }
            return Ok(ReadFrom::Unmapped);
        }
        let a = self.layout.addr(ppa);
        let s = a.slot as usize * SLOT_BYTES as usize..(a.slot as usize + 1) * SLOT_BYTES as usize;
        for w in [&self.user, &self.gc] {
            if w.holds(&a) {
                if let (Some(out), true) = (out, self.data) {
                    out[..SLOT_BYTES as usize].copy_from_slice(&w.buf[s]);
                }
                return Ok(ReadFrom::Buffer);
            }
        }
        let scratch = if self.data { Some(&mut self.scratch[..]) } else { None };
        self.media.page_read(a.die, a.superblock, a.page, 1 << a.slot, OpTag::User, scratch)?;
        if let (Some(out), true) = (out, self.data) {
            out[..SLOT_BYTES as usize].copy_from_slice(&self.scratch[s]);
        }
        Ok(ReadFrom::Media)
    }

    /// Reads logical slots `first..=last` on media that holds no data (the
    /// simulator's path): the slots of one multi-plane page that follow one
    /// another are one page read, as a controller issues it, and slots
    /// that are unmapped or still in a writer's page need none.
    pub fn read_span(&mut self, first: SlotLba, last: SlotLba) -> Result<(), FtlError> {
        debug_assert!(!self.data && first <= last);
        self.lba_check(last)?;
        self.counters.host_slots_read += (last - first) as u64 + 1;
        let (user_page, gc_page) = (self.user.open_page_first(), self.gc.open_page_first());
        let mut page = PPA_INVALID;
        let mut mask = 0u32;
        for lba in first..last + 1 {
            let ppa = self.l2p[lba as usize];
            if ppa == PPA_INVALID {
                continue;
            }
            let first_slot = self.layout.mpage_first(ppa);
            let slot = ppa - first_slot;
            if first_slot == user_page || first_slot == gc_page {
                continue;
            }
            if first_slot != page {
                if mask != 0 {
                    self.page_read_user(page, mask)?;
                }
                page = first_slot;
                mask = 0;
            }
            mask |= 1 << slot;
        }
        if mask != 0 {
            self.page_read_user(page, mask)?;
        }
        Ok(())
    }

    fn page_read_user(&mut self, first_slot: Ppa, mask: u32) -> Result<(), FtlError> {
        let a = self.layout.addr(first_slot);
        Ok(self.media.page_read(a.die, a.superblock, a.page, mask, OpTag::User, None)?)
    }

    /// Unmaps one logical slot (TRIM / discard).
    pub fn trim(&mut self, lba: SlotLba) -> Result<(), FtlError> {
        self.lba_check(lba)?;
        if self.l2p[lba as usize] != PPA_INVALID {
            self.counters.host_slots_trimmed += 1;
        }
        self.unmap(lba);
        Ok(())
    }

    /// Whether a physical slot holds the live copy of its LBA.
    #[inline]
    pub fn is_valid(&self, ppa: Ppa) -> bool {
        valid_bit(&self.valid, ppa)
    }

    #[inline]
    fn unmap(&mut self, lba: SlotLba) {
        let old = self.l2p[lba as usize];
        if old != PPA_INVALID {
            debug_assert_eq!(self.p2l[old as usize], lba);
            debug_assert!(self.is_valid(old));
            self.valid[old as usize / 64] &= !(1u64 << (old % 64));
            let sb = self.layout.superblock_of(old) as usize;
            self.sbs[sb].valid -= 1;
            self.l2p[lba as usize] = PPA_INVALID;
        }
    }

    /// Places `lba` at the writer's next slot and programs the page (and the
    /// stripe's parity) when it is full.
    #[inline(always)]
    fn append(&mut self, user: bool, lba: SlotLba, data: Option<&[u8]>) -> Result<(), FtlError> {
        let w = if user { &mut self.user } else { &mut self.gc };
        let ppa = w.page_ppa + w.slot;
        debug_assert_eq!(ppa, self.layout.ppa(SlotAddr { superblock: w.sb, page: w.page, die: w.die, slot: w.slot }));
        debug_assert!(!valid_bit(&self.valid, ppa));
        self.p2l[ppa as usize] = lba;
        self.valid[ppa as usize / 64] |= 1u64 << (ppa % 64);
        self.l2p[lba as usize] = ppa;
        self.sbs[w.sb as usize].valid += 1;
        w.oob[w.slot as usize] = lba;
        if self.data {
            let s = w.slot as usize * SLOT_BYTES as usize;
            match data {
                Some(d) => w.buf[s..s + SLOT_BYTES as usize].copy_from_slice(&d[..SLOT_BYTES as usize]),
                None => w.buf[s..s + SLOT_BYTES as usize].fill(0),
            }
        }
        w.slot += 1;
        self.seq += 1;
        if w.slot == self.layout.slots_per_mpage {
            self.writer_program(user)?;
        }
        Ok(())
    }

    /// Programs a writer's full page, then its stripe's parity if due, and
    /// moves the writer to its next data page (closing a full superblock).
    #[inline(never)]
    fn writer_program(&mut self, user: bool) -> Result<(), FtlError> {
        let data = self.data;
        let layout = &self.layout;
        let w = if user { &mut self.user } else { &mut self.gc };
        self.media.page_program(w.die, w.sb, w.page, w.tag, &w.oob, data.then_some(&w.buf[..]))?;
        if layout.stripe_width > 1 {
            if data {
                for (p, b) in w.parity.iter_mut().zip(&w.buf) {
                    *p ^= *b;
                }
            }
            if w.die == layout.stripe_last_data_die(w.page, w.die) {
                let pd = layout.parity_die(w.page, w.die);
                let oob = [LBA_UNMAPPED; 32];
                let tag = if w.tag == OpTag::Gc { OpTag::GcParity } else { OpTag::Parity };
                self.media.page_program(pd, w.sb, w.page, tag, &oob[..layout.slots_per_mpage as usize], data.then_some(&w.parity[..]))?;
                if data {
                    w.parity.fill(0);
                }
            }
        }
        w.slot = 0;
        w.oob.fill(LBA_UNMAPPED);
        loop {
            w.die += 1;
            if w.die == layout.dies {
                w.die = 0;
                w.page += 1;
                if w.page == layout.pages_per_block {
                    let sb = w.sb as usize;
                    w.sb = SB_NONE;
                    let m = &mut self.sbs[sb];
                    debug_assert_eq!(m.state, SbState::Open);
                    m.state = SbState::Closed;
                    m.close_seq = self.seq;
                    return Ok(());
                }
            }
            if !layout.is_parity(w.page, w.die) {
                w.page_ppa = layout.ppa(SlotAddr { superblock: w.sb, page: w.page, die: w.die, slot: 0 });
                return Ok(());
            }
        }
    }

    /// Opens a free superblock (the least worn) for a writer.
    fn writer_open(&mut self, user: bool) -> Result<(), FtlError> {
        let Some(Reverse((_, sb))) = self.free.pop() else {
            return Err(FtlError::NoSpace(format!("{} writer found no free superblock", if user { "user" } else { "GC" })));
        };
        let m = &mut self.sbs[sb as usize];
        debug_assert_eq!(m.state, SbState::Free);
        debug_assert_eq!(m.valid, 0);
        m.state = SbState::Open;
        let layout = &self.layout;
        let w = if user { &mut self.user } else { &mut self.gc };
        w.sb = sb;
        w.page = 0;
        w.die = 0;
        w.slot = 0;
        w.oob.fill(LBA_UNMAPPED);
        w.parity.fill(0);
        while layout.is_parity(0, w.die) {
            w.die += 1;
        }
        w.page_ppa = layout.ppa(SlotAddr { superblock: sb, page: 0, die: w.die, slot: 0 });
        Ok(())
    }

    /// The user writer may not take the last free superblock: that one is
    /// GC's, so that cleaning can always make progress. Below that, GC runs
    /// unpaced (a forced collection) until a superblock is freed.
    fn user_superblock_take(&mut self) -> Result<(), FtlError> {
        let mut steps: u64 = 0;
        let limit = 4 * self.layout.slots_per_superblock as u64 * self.layout.superblocks as u64;
        while self.free.len() <= 1 {
            if self.victim.is_none() && !self.victim_select(true) {
                return Err(FtlError::NoSpace("no closed superblock to collect".into()));
            }
            self.gc_step()?;
            self.counters.forced_gc_slots += 1;
            steps += 1;
            if steps > limit {
                return Err(FtlError::NoSpace("garbage collection made no progress".into()));
            }
        }
        self.writer_open(true)
    }

    /// GC runs while the free pool is at or below the reserve plus one, at
    /// the victim's own ratio of valid to invalid slots (which keeps the pool
    /// level), scaled up by how far the pool has fallen below that mark.
    #[inline]
    fn gc_pace(&mut self) -> Result<(), FtlError> {
        let target = self.cfg.reserve_superblocks + 1;
        let free = self.free.len() as u32;
        if self.victim.is_none() {
            if free > target {
                self.gc_credit = 0;
                return Ok(());
            }
            if !self.victim_select(false) {
                return Ok(());
            }
        }
        let urgency = 1 + target.saturating_sub(free) as u64;
        self.gc_credit += self.gc_rate * urgency;
        while self.gc_credit >= ONE {
            self.gc_credit -= ONE;
            if !self.gc_step()? {
                self.gc_credit = 0;
                break;
            }
        }
        Ok(())
    }

    /// Chooses the next victim. Returns false when no superblock is closed.
    fn victim_select(&mut self, forced: bool) -> bool {
        debug_assert!(self.victim.is_none());
        let s = self.layout.data_slots_per_superblock as u64;
        let mut best: Option<(u32, u128, u128)> = None; // sb, score numerator, denominator
        let mut wear = false;
        if !forced && self.cfg.wear_spread_max > 0 {
            let (lo, hi) = self.sbs.iter().fold((u32::MAX, 0), |(lo, hi), m| (lo.min(m.erase_count), hi.max(m.erase_count)));
            if hi - lo > self.cfg.wear_spread_max {
                // Static wear leveling: move the coldest closed superblock's
                // data so its blocks rejoin the rotation.
                let coldest = self.sbs.iter().enumerate().filter(|(_, m)| m.state == SbState::Closed).min_by_key(|(i, m)| (m.erase_count, *i));
                if let Some((i, m)) = coldest {
                    if m.erase_count == lo {
                        best = Some((i as u32, 0, 1));
                        wear = true;
                    }
                }
            }
        }
        if best.is_none() {
            let policy = if forced { GcPolicy::Greedy } else { self.cfg.gc_policy };
            for (i, m) in self.sbs.iter().enumerate() {
                if m.state != SbState::Closed {
                    continue;
                }
                let v = m.valid as u64;
                // Every policy is a ratio num/den to maximise.
                let (num, den) = match policy {
                    GcPolicy::Greedy => ((s - v) as u128, 1u128),
                    GcPolicy::CostBenefit => {
                        let age = (self.seq - m.close_seq + 1) as u128;
                        ((s - v) as u128 * age, 2 * v.max(1) as u128)
                    }
                };
                let better = match best {
                    None => true,
                    Some((_, bn, bd)) => num * bd > bn * den,
                };
                if better {
                    best = Some((i as u32, num, den));
                }
            }
        }
        let Some((sb, _, _)) = best else { return false };
        let m = &mut self.sbs[sb as usize];
        m.state = SbState::Victim;
        let v = m.valid as u64;
        self.gc_rate = if v >= s { 64 * ONE } else { (v * ONE).div_ceil(s - v).min(64 * ONE) };
        if wear {
            self.counters.wear_level_victims += 1;
        }
        self.victim = Some(Victim { sb, cursor: 0, prefetch: 0, page_first: 0, mask: 0 });
        true
    }

    /// Moves one valid slot out of the victim, or erases the victim once it
    /// holds none. Returns false when there is no victim.
    fn gc_step(&mut self) -> Result<bool, FtlError> {
        let Some(v) = self.victim.as_mut() else { return Ok(false) };
        let sps = self.layout.slots_per_superblock;
        let base = v.sb * sps;
        if self.sbs[v.sb as usize].valid == 0 {
            v.cursor = sps;
            v.mask = 0;
        }
        // The next slot of the page in hand that is still valid (a host
        // write may have replaced it since the page was read).
        let mut ppa = PPA_INVALID;
        while v.mask != 0 {
            let s = v.mask.trailing_zeros();
            v.mask &= v.mask - 1;
            let p = v.page_first + s;
            if valid_bit(&self.valid, p) {
                ppa = p;
                break;
            }
        }
        if ppa == PPA_INVALID {
            // The next page holding a valid slot: skip invalid slots a
            // bitmap word at a time.
            while v.cursor < sps {
                let p = base + v.cursor;
                let word = self.valid[p as usize / 64] >> (p % 64);
                if word & 1 != 0 {
                    break;
                }
                v.cursor += if word == 0 { 64 - p % 64 } else { word.trailing_zeros() };
            }
            v.cursor = v.cursor.min(sps);
            if v.cursor == sps {
                let sb = v.sb;
                self.victim = None;
                for die in 0..self.layout.dies {
                    self.media.block_erase(die, sb, OpTag::Gc)?;
                }
                let m = &mut self.sbs[sb as usize];
                debug_assert_eq!(m.valid, 0);
                m.state = SbState::Free;
                m.erase_count += 1;
                self.free.push(Reverse((m.erase_count, sb)));
                self.counters.gc_victims += 1;
                return Ok(true);
            }
            // One read brings every valid slot of the page.
            ppa = base + v.cursor;
            let a = self.layout.addr(ppa);
            let spm = self.layout.slots_per_mpage;
            let first = ppa - a.slot;
            // The page's bits lie in one bitmap word when its slot count
            // divides 64 (pages start on a multiple of it).
            let mask = if 64 % spm == 0 {
                ((self.valid[first as usize / 64] >> (first % 64)) & ((1u64 << spm) - 1)) as u32
            } else {
                let mut mask = 0u32;
                for s in a.slot..spm {
                    mask |= (valid_bit(&self.valid, first + s) as u32) << s;
                }
                mask
            };
            // (Slots before the cursor's are invalid: the scan passed them.)
            debug_assert_eq!(mask & ((1 << a.slot) - 1), 0);
            let scratch = if self.data { Some(&mut self.gc_scratch[..]) } else { None };
            self.media.page_read(a.die, a.superblock, a.page, mask, OpTag::Gc, scratch)?;
            v.page_first = first;
            v.mask = mask & !(1 << a.slot);
            v.cursor = first - base + spm;
            // Each move updates the L2P entry of its slot, at a random place
            // in the map: prefetch those of the valid slots ahead, in bursts
            // so that their page walks overlap.
            if v.prefetch < v.cursor + GC_PREFETCH_AHEAD - GC_PREFETCH_BURST {
                let horizon = (v.cursor + GC_PREFETCH_AHEAD).min(sps);
                v.prefetch = v.prefetch.max(v.cursor);
                // A bitmap word at a time, valid slots only.
                while v.prefetch < horizon {
                    let p = base + v.prefetch;
                    let n = (64 - p % 64).min(horizon - v.prefetch);
                    let mut word = (self.valid[p as usize / 64] >> (p % 64)) & (u64::MAX >> (64 - n));
                    while word != 0 {
                        let q = p + word.trailing_zeros();
                        word &= word - 1;
                        prefetch_read(&self.l2p[self.p2l[q as usize] as usize]);
                    }
                    v.prefetch += n;
                }
            }
        }
        let slot = ppa - v.page_first;
        let sb = v.sb;
        let lba = self.p2l[ppa as usize];
        // The slot is valid, so the map points here: invalidate it without
        // loading the map entry (a random access the append only stores to).
        debug_assert_eq!(self.l2p[lba as usize], ppa);
        self.valid[ppa as usize / 64] &= !(1u64 << (ppa % 64));
        self.sbs[sb as usize].valid -= 1;
        if self.gc.sb == SB_NONE {
            self.writer_open(false)?;
        }
        if self.data {
            let s = slot as usize * SLOT_BYTES as usize;
            let page = std::mem::take(&mut self.gc_scratch);
            let r = self.append(false, lba, Some(&page[s..s + SLOT_BYTES as usize]));
            self.gc_scratch = page;
            r?;
        } else {
            self.append(false, lba, None)?;
        }
        self.counters.gc_slots_moved += 1;
        Ok(true)
    }
}

/// Write amplification of greedy (or FIFO) cleaning with very large blocks
/// under uniform random writes, the validation oracle of
/// (Xiang and Kurkoski, "An improved analytic expression for write
/// amplification in NAND flash", 2011): the victim's valid share `u`
/// solves `u = exp(-alpha * (1 - u))` with `alpha = 1 + rho`, and
/// `WA = 1 / (1 - u)`.
pub fn wa_greedy_large_block(rho: f64) -> f64 {
    assert!(rho > 0.0, "over-provisioning must be positive");
    let alpha = 1.0 + rho;
    // Bisection on f(u) = u - exp(-alpha (1 - u)) over (0, 1): f < 0 just
    // below the non-trivial root and > 0 just below u = 1.
    let (mut lo, mut hi) = (0.0f64, 1.0 - 1e-12);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid - (-alpha * (1.0 - mid)).exp() < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    1.0 / (1.0 - lo)
}

#[cfg(test)]
mod oracle_tests {
    #[test]
    fn oracle_matches_the_reference_table() {
        // The large-block formula's values at these over-provisionings.
        for (rho, wa) in [(0.07, 7.82), (0.28, 2.48), (0.30, 2.36), (0.38, 2.02), (0.50, 1.72), (0.66, 1.49)] {
            let got = super::wa_greedy_large_block(rho);
            assert!((got - wa).abs() < 0.006, "rho {rho}: {got} vs {wa}");
        }
    }
}
