//! A die that dies, and what the card does about it.
//!
//! - **The moment of failure**: each open writer first seals its stripe
//!   (its page padded, the rest of the stripe padded, the parity
//!   programmed: the controller holds the stripe's running XOR), and its
//!   superblock is closed short. Every page on the media then belongs to a
//!   stripe whose parity is written, so each page of the dead die can be
//!   rebuilt from the others.
//! - **Degraded reads**: a read that maps to a dead die reads the same
//!   slots of every other member of its stripe and XORs them (data and
//!   out-of-band area alike: a parity page's OOB is the XOR of its data
//!   pages' OOB).
//! - **Rebuild**: in the background, every valid slot of a stripe that
//!   holds a dead die is moved (GC's writer), so that it lands in a stripe
//!   of live dies; the caller paces it ([`Ftl::rebuild_step`]).
//! - **Narrowing**: superblocks opened after the failure leave the dead die
//!   out; its group's stripes are one die narrower (7+1 becomes 6+1:
//!   Variable Stripe RAID), and the card's spare shrinks by the die's
//!   share. Should the format no longer fit, the card turns read-only.
//! - **A second failure** in a stripe before the rebuild has emptied it
//!   loses the slots on its dead members: their LBAs are unmapped and
//!   recorded as lost; reading one fails (never returns other bytes) until
//!   it is written or trimmed again.
//!
//! The dead dies, each superblock's narrowing and the lost LBAs are kept in
//! the media's system area (the card's own metadata), so that a mount
//! after a restart or a power cut knows them.

use crate::layout::{Narrowing, SlotAddr};
use crate::superblock::{narrowing_in, SbState, SB_NONE};
use crate::writer::WriterId;
use crate::{Ftl, FtlError};
use nand::{Media, OpTag};
use units::{Ppa, SLOT_BYTES};

/// What failing a die found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DieFailure {
    /// The die that failed.
    pub die: u32,
    /// Valid slots in stripes that hold the dead die: what the rebuild
    /// moves.
    pub slots_to_rebuild: u64,
    /// LBAs lost: their stripe had already lost another member.
    pub lbas_lost: Vec<u32>,
    /// Why the card turned read-only, if it did (the format no longer
    /// fits the live dies).
    pub read_only: Option<String>,
}

/// Counters of faults and of the work they caused.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FaultCounters {
    pub dies_failed: u32,
    /// Pages read through their stripe (a dead die's).
    pub degraded_page_reads: u64,
    /// Slots the rebuild moved.
    pub rebuild_slots_moved: u64,
    /// LBAs lost to a second failure in a stripe.
    pub lbas_lost: u64,
    /// Slots written again because the program of their page failed.
    #[serde(default)]
    pub slots_rewritten: u64,
    /// Slots moved out of a stripe sealed without a failed page.
    #[serde(default)]
    pub slots_reprotected: u64,
}

impl FaultCounters {
    /// Sums another member's counters into these.
    pub fn add(&mut self, o: &FaultCounters) {
        self.dies_failed += o.dies_failed;
        self.degraded_page_reads += o.degraded_page_reads;
        self.rebuild_slots_moved += o.rebuild_slots_moved;
        self.lbas_lost += o.lbas_lost;
        self.slots_rewritten += o.slots_rewritten;
        self.slots_reprotected += o.slots_reprotected;
    }
}

/// What failed: the dead dies, the lost LBAs, the rebuild under way and
/// the read-only state, with their counters.
#[derive(Clone)]
pub(crate) struct FaultState {
    /// Whether any die failed, any LBA is lost or the card is read-only:
    /// the slow paths of [`crate::faults`] are taken only then.
    pub(crate) faulted: bool,
    /// Dies failed, in order.
    pub(crate) dead: Vec<u32>,
    /// LBAs lost to a second failure in a stripe, with the sequence
    /// number of the loss.
    pub(crate) lost: std::collections::HashMap<u32, u64>,
    pub(crate) rebuild: Option<Rebuild>,
    pub(crate) read_only: Option<String>,
    /// Read-only because the store's disk had no room.
    pub(crate) store_full: bool,
    pub(crate) counters: FaultCounters,
    /// A degraded read's member page, and the rebuild's page
    /// (data-holding media only).
    pub(crate) xor_scratch: Vec<u8>,
    pub(crate) rebuild_scratch: Vec<u8>,
}

impl FaultState {
    pub(crate) fn new(data: bool, mpage_bytes: usize) -> FaultState {
        let page = || if data { vec![0; mpage_bytes] } else { Vec::new() };
        FaultState {
            faulted: false,
            dead: Vec::new(),
            lost: std::collections::HashMap::new(),
            rebuild: None,
            read_only: None,
            store_full: false,
            counters: FaultCounters::default(),
            xor_scratch: page(),
            rebuild_scratch: page(),
        }
    }
}

/// Where the rebuild is: the next superblock and row to move.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rebuild {
    sb: u32,
    page: u32,
}

impl Rebuild {
    /// From the first superblock.
    pub(crate) fn start() -> Rebuild {
        Rebuild { sb: 0, page: 0 }
    }
}

impl<M: Media> Ftl<M> {
    /// Whether die `die` has failed.
    #[inline]
    pub fn is_dead(&self, die: u32) -> bool {
        self.faults.faulted && self.faults.dead.contains(&die)
    }

    /// The dies failed so far, in order.
    pub fn dead_dies(&self) -> &[u32] {
        &self.faults.dead
    }

    /// A superblock's narrowing as it was opened (none: the full width):
    /// its rows after a failed program may leave out more
    /// ([`Ftl::narrowing_at`]).
    #[inline]
    pub(crate) fn narrowing(&self, sb: u32) -> Option<&Narrowing> {
        self.sbs.narrows[sb as usize].as_ref()
    }

    /// The narrowing of superblock `sb`'s row `row`.
    #[inline]
    pub(crate) fn narrowing_at(&self, sb: u32, row: u32) -> Option<&Narrowing> {
        narrowing_in(&self.sbs.narrows, &self.sbs.row_narrows, sb, row)
    }

    pub fn fault_counters(&self) -> &FaultCounters {
        &self.faults.counters
    }

    /// Whether the slow paths are needed: a die failed, an LBA is lost,
    /// or the card refuses writes.
    pub(crate) fn faulted_update(&mut self) {
        self.faults.faulted = !self.faults.dead.is_empty() || !self.faults.lost.is_empty() || self.faults.read_only.is_some();
    }

    /// The store holding the pages could not take a write (its disk
    /// full): the card turns read-only, so that nothing acknowledged
    /// after this is written where it cannot be kept. Returns the error
    /// the write that met it gets.
    pub(crate) fn store_failed(&mut self, why: &str, full: bool) -> FtlError {
        let msg = format!(
            "the store holding the card's pages could not take a write ({why}): the card is read-only; what was acknowledged before is kept (give its disk room and serve it again)"
        );
        self.faults.read_only = Some(msg.clone());
        self.faults.store_full |= full;
        self.faults.faulted = true;
        FtlError::ReadOnly(msg)
    }

    /// Whether the card is read-only because its store's disk had no room
    /// (a host's full disk, not the card's wear).
    pub fn store_full(&self) -> bool {
        self.faults.store_full
    }

    /// Why the card refuses writes, if it does.
    pub fn read_only(&self) -> Option<&str> {
        self.faults.read_only.as_deref()
    }

    /// Whether a rebuild is under way.
    pub fn rebuilding(&self) -> bool {
        self.faults.rebuild.is_some()
    }

    /// LBAs lost so far and not written since.
    pub fn lbas_lost(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self.faults.lost.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// Fails die `die`: the open stripes are sealed, slots whose stripe
    /// has now lost two members are recorded lost, and the rebuild
    /// (re)starts.
    pub fn die_fail(&mut self, die: u32) -> Result<DieFailure, FtlError> {
        if die >= self.layout.dies {
            return Err(FtlError::Fault(format!("die {die} does not exist: the card has dies 0 to {}", self.layout.dies - 1)));
        }
        if self.is_dead(die) {
            return Err(FtlError::Fault(format!("die {die} has already failed")));
        }
        if self.faults.dead.len() >= u8::MAX as usize - 1 {
            return Err(FtlError::Fault(format!("{} dies have failed: no more can be modelled", self.faults.dead.len())));
        }
        // Seal while the die still works: its pages then sit in stripes
        // whose parity is on the media.
        self.writer_seal(WriterId::User)?;
        self.writer_seal(WriterId::Gc)?;
        self.faults.faulted = true;
        self.faults.dead.push(die);
        self.media.die_fail(die, true);
        self.free_pool_usable();
        self.faults.counters.dies_failed += 1;
        let lbas_lost = self.stripes_lost(die);
        self.faults.rebuild = Some(Rebuild::start());
        let read_only = self.capacity_check();
        self.system_save()?;
        Ok(DieFailure { die, slots_to_rebuild: self.rebuild_left(), lbas_lost, read_only })
    }

    /// Valid slots still in stripes that hold a dead die.
    pub fn rebuild_left(&self) -> u64 {
        let mut n = 0;
        for sb in 0..self.layout.superblocks {
            let dies = self.degraded_dies(sb);
            for page in 0..self.layout.pages_per_block {
                for &die in &dies {
                    n += self.page_valid_mask(sb, page, die).count_ones() as u64;
                }
            }
        }
        n
    }

    /// The dies of `sb` in a stripe group that holds a dead die (not left
    /// out of it): what the rebuild empties. None for a free or open
    /// superblock (an open one was opened after every failure).
    fn degraded_dies(&self, sb: u32) -> Vec<u32> {
        if !self.faults.faulted || !matches!(self.sbs.meta[sb as usize].state, SbState::Closed | SbState::Victim) {
            return Vec::new();
        }
        let n = self.narrowing(sb);
        let mut dies: Vec<u32> = Vec::new();
        for &d in &self.faults.dead {
            if n.is_some_and(|n| n.is_out(d)) {
                continue;
            }
            for m in self.layout.stripe_members(n, d) {
                if !dies.contains(&m) {
                    dies.push(m);
                }
            }
        }
        dies.sort_unstable();
        dies
    }

    /// The valid slots of a page, one bit each.
    fn page_valid_mask(&self, sb: u32, page: u32, die: u32) -> u32 {
        let first = self.layout.ppa(SlotAddr { superblock: sb, page, die, slot: 0 });
        (0..self.layout.slots_per_mpage).fold(0, |m, s| m | (self.is_valid(first + s) as u32) << s)
    }

    /// Records as lost the valid slots of every stripe that has now lost
    /// more members than its parity covers; returns their LBAs.
    fn stripes_lost(&mut self, die: u32) -> Vec<u32> {
        let mut lost = Vec::new();
        for sb in 0..self.layout.superblocks {
            if self.sbs.meta[sb as usize].state == SbState::Free {
                continue;
            }
            let n = self.narrowing(sb);
            if n.is_some_and(|n| n.is_out(die)) {
                continue;
            }
            let members = self.layout.stripe_members(n, die);
            let covered = if self.layout.stripe_width > 1 && members.len() >= 2 { 1 } else { 0 };
            let dead: Vec<u32> = members.iter().copied().filter(|&m| self.faults.dead.contains(&m)).collect();
            if dead.len() <= covered {
                continue;
            }
            for page in 0..self.layout.pages_per_block {
                for &d in &dead {
                    let first = self.layout.ppa(SlotAddr { superblock: sb, page, die: d, slot: 0 });
                    for ppa in (first..first + self.layout.slots_per_mpage).filter(|&p| self.is_valid(p)) {
                        lost.push(self.map.p2l[ppa as usize]);
                    }
                }
            }
        }
        if !lost.is_empty() {
            self.host_seq += 1;
            for &lba in &lost {
                self.unmap(lba);
                self.faults.lost.insert(lba, self.host_seq);
                // A mount must not bring back an older copy.
                self.media.trim_record(lba, self.host_seq);
            }
            self.faults.counters.lbas_lost += lost.len() as u64;
        }
        lost.sort_unstable();
        lost
    }

    /// Seals a writer's open stripe and closes its superblock short: the
    /// open page padded and programmed, then the rest of the stripe's data
    /// pages padded, so that its parity is programmed.
    pub(crate) fn writer_seal(&mut self, id: WriterId) -> Result<(), FtlError> {
        loop {
            // A failed program may have written slots again, even in a
            // superblock of its own: what is in the open page goes first.
            self.writer_pad(id)?;
            let w = &self.writers[id];
            if w.sb == SB_NONE {
                return Ok(());
            }
            let (sb, page, die) = (w.sb, w.page, w.die);
            let n = self.narrowing_at(sb, page);
            let first = self.layout.stripe_members(n, die).into_iter().find(|&d| self.layout.is_data_in(n, page, d));
            if first == Some(die) {
                break;
            }
            self.writer_pad_page(id)?;
        }
        let w = &mut self.writers[id];
        let sb = std::mem::replace(&mut w.sb, SB_NONE);
        let m = &mut self.sbs.meta[sb as usize];
        m.become_state(SbState::Closed);
        m.short = true;
        m.close_seq = self.seq;
        Ok(())
    }

    /// Reads slots `mask` of a page into `out` (one multi-plane page, on
    /// data-holding media); through the stripe where the die is dead.
    #[inline]
    pub(crate) fn page_read_any(&mut self, a: SlotAddr, mask: u32, tag: OpTag, out: Option<&mut [u8]>) -> Result<(), FtlError> {
        if !self.is_dead(a.die) {
            return Ok(self.media.page_read(a.die, a.superblock, a.page, mask, tag, out)?);
        }
        self.page_read_degraded(a, mask, tag, out)
    }

    /// A dead die's page: the same slots of every other member of its
    /// stripe, XORed.
    #[inline(never)]
    fn page_read_degraded(&mut self, a: SlotAddr, mask: u32, tag: OpTag, mut out: Option<&mut [u8]>) -> Result<(), FtlError> {
        let members = self.stripe_others(a)?;
        self.stripe_intact(a, &members, mask)?;
        self.faults.counters.degraded_page_reads += 1;
        let mut xor = std::mem::take(&mut self.faults.xor_scratch);
        if let Some(o) = out.as_deref_mut().filter(|_| self.data) {
            slots_fill(o, mask, 0);
        }
        let mut r = Ok(());
        for m in members {
            let buf = if self.data { Some(&mut xor[..]) } else { None };
            r = self.media.page_read(m, a.superblock, a.page, mask, tag, buf).map_err(FtlError::from);
            if r.is_err() {
                break;
            }
            if let Some(o) = out.as_deref_mut().filter(|_| self.data) {
                slots_xor(o, &xor, mask);
            }
        }
        self.faults.xor_scratch = xor;
        r
    }

    /// The other dies whose pages rebuild a page of a live die that its
    /// ECC could not correct, in the order they are read: the stripe the
    /// page's row was laid out with (its narrowing), every member alive and
    /// none of their slots `mask` damaged. `None` where the stripe cannot
    /// rebuild it (no parity, or another die of the stripe failed): the
    /// data is lost to this read. A row the writer has not finished is
    /// rebuilt from the running parity the controller holds.
    pub fn stripe_rebuild_members(&self, die: u32, superblock: u32, page: u32, mask: u32) -> Option<Vec<u32>> {
        let a = SlotAddr { superblock, page, die, slot: 0 };
        let n = self.narrowing_at(superblock, page);
        let others: Vec<u32> = self.layout.stripe_members(n, die).into_iter().filter(|&m| m != die).collect();
        if others.is_empty() || self.layout.stripe_width <= 1 || others.iter().any(|&m| self.is_dead(m)) {
            return None;
        }
        let written: Vec<u32> = others.iter().copied().filter(|&m| self.media.block_next_page(m, superblock) > page).collect();
        self.stripe_intact(a, &written, mask).ok()?;
        Some(others)
    }

    /// The other members of a dead die's stripe, all of which must work
    /// and hold the row.
    pub(crate) fn stripe_others(&self, a: SlotAddr) -> Result<Vec<u32>, FtlError> {
        let n = self.narrowing_at(a.superblock, a.page);
        let others: Vec<u32> = self.layout.stripe_members(n, a.die).into_iter().filter(|&m| m != a.die).collect();
        let unreadable = |why: &str| FtlError::Fault(format!("superblock {} row {} die {}: {why}", a.superblock, a.page, a.die));
        if others.is_empty() || self.layout.stripe_width <= 1 {
            return Err(unreadable("the die has failed and its stripe has no parity"));
        }
        if let Some(m) = others.iter().find(|&&m| self.is_dead(m)) {
            return Err(unreadable(&format!("the die has failed and so has die {m} of its stripe")));
        }
        if let Some(m) = others.iter().find(|&&m| self.media.block_next_page(m, a.superblock) <= a.page) {
            return Err(unreadable(&format!("the die has failed and its stripe is incomplete (die {m} did not program the row)")));
        }
        Ok(others)
    }

    /// Whether slots `mask` of a dead die's page can be rebuilt from the
    /// `others` of its stripe: none of theirs damaged (a power cut in the
    /// middle of programming a page sharing its cells). A real card's ECC
    /// finds such a codeword uncorrectable; the XOR would give wrong bytes.
    pub(crate) fn stripe_intact(&self, a: SlotAddr, others: &[u32], mask: u32) -> Result<(), FtlError> {
        if !self.data {
            return Ok(());
        }
        let slots = (0..self.layout.slots_per_mpage).filter(|s| mask >> s & 1 != 0);
        for s in slots {
            if let Some(&m) = others.iter().find(|&&m| !self.media.slot_intact(m, a.superblock, a.page, s)) {
                return Err(FtlError::Fault(format!(
                    "superblock {} row {} die {}: the die has failed and die {m}'s page of its stripe is damaged (a power cut while programming its paired page)",
                    a.superblock, a.page, a.die
                )));
            }
        }
        Ok(())
    }

    /// A slot's bytes as the media hold them, rebuilt from the stripe
    /// where its die is dead (no read counted).
    pub(crate) fn slot_peek(&self, a: SlotAddr, out: &mut [u8]) -> Result<(), FtlError> {
        let s = a.slot as usize * SLOT_BYTES as usize..(a.slot as usize + 1) * SLOT_BYTES as usize;
        if !self.is_dead(a.die) {
            let page = self.media.mpage_peek(a.die, a.superblock, a.page).expect("data-holding media keep their pages");
            out.copy_from_slice(&page[s]);
            return Ok(());
        }
        out.fill(0);
        let others = self.stripe_others(a)?;
        self.stripe_intact(a, &others, 1 << a.slot)?;
        for m in others {
            let page = self.media.mpage_peek(m, a.superblock, a.page).expect("data-holding media keep their pages");
            out.iter_mut().zip(&page[s.clone()]).for_each(|(o, b)| *o ^= b);
        }
        Ok(())
    }

    /// A slot's out-of-band LBA and sequence number, rebuilt from the
    /// stripe where its die is dead.
    pub(crate) fn oob_of(&self, a: SlotAddr) -> Result<(u32, u64), FtlError> {
        let peek = |die| self.media.oob_peek(die, a.superblock, a.page, a.slot).expect("data-holding media keep OOB");
        if !self.is_dead(a.die) {
            return Ok(peek(a.die));
        }
        Ok(self.stripe_others(a)?.into_iter().map(peek).fold((0, 0), |(l, s), (ml, ms)| (l ^ ml, s ^ ms)))
    }

    /// Moves up to about `budget` valid slots out of stripes that hold a
    /// dead die (a page at a time); GC keeps pace as it does with host
    /// writes. Returns the slots moved; the rebuild ends when none is left.
    pub fn rebuild_step(&mut self, budget: u64) -> Result<u64, FtlError> {
        let mut moved = 0;
        while moved < budget {
            let Some(r) = self.faults.rebuild else { break };
            if r.sb >= self.layout.superblocks {
                self.faults.rebuild = None;
                break;
            }
            let dies = self.degraded_dies(r.sb);
            if dies.is_empty() || r.page >= self.layout.pages_per_block {
                self.faults.rebuild = Some(Rebuild { sb: r.sb + 1, page: 0 });
                continue;
            }
            for die in dies {
                moved += self.rebuild_page(SlotAddr { superblock: r.sb, page: r.page, die, slot: 0 })?;
            }
            if let Some(r) = &mut self.faults.rebuild {
                r.page += 1;
            }
        }
        Ok(moved)
    }

    /// Moves a page's valid slots to GC's writer (the rebuild's move).
    pub(crate) fn rebuild_page(&mut self, a: SlotAddr) -> Result<u64, FtlError> {
        let moved = self.page_move(a, true)?;
        self.faults.counters.rebuild_slots_moved += moved;
        Ok(moved)
    }

    /// Moves a page's valid slots to GC's writer; with `pace`, GC keeps
    /// pace as it does with host writes (not from inside a writer's
    /// program, where GC may be under way).
    pub(crate) fn page_move(&mut self, a: SlotAddr, pace: bool) -> Result<u64, FtlError> {
        let mask = self.page_valid_mask(a.superblock, a.page, a.die);
        if mask == 0 {
            return Ok(0);
        }
        let mut page = std::mem::take(&mut self.faults.rebuild_scratch);
        if self.data && page.is_empty() {
            // A move from inside another's (a program failed under it).
            page = vec![0; self.faults.xor_scratch.len()];
        }
        let r = self.page_read_any(a, mask, OpTag::Gc, self.data.then_some(&mut page[..]));
        let r = r.and_then(|_| self.slots_move(a, mask, &page, pace));
        self.faults.rebuild_scratch = page;
        r
    }

    fn slots_move(&mut self, a: SlotAddr, mask: u32, page: &[u8], pace: bool) -> Result<u64, FtlError> {
        let mut moved = 0;
        let first = self.layout.ppa(a);
        for slot in (0..self.layout.slots_per_mpage).filter(|s| mask >> s & 1 != 0) {
            let ppa: Ppa = first + slot;
            if !self.is_valid(ppa) {
                continue;
            }
            let lba = self.map.p2l[ppa as usize];
            let seq = if self.data { self.oob_of(SlotAddr { slot, ..a })?.1 } else { 0 };
            // The writer first: should it find no room, the slot stays mapped.
            if self.writers[WriterId::Gc].sb == SB_NONE {
                self.writer_open(WriterId::Gc)?;
            }
            self.invalidate(ppa, a.superblock);
            let s = slot as usize * SLOT_BYTES as usize;
            self.append(WriterId::Gc, lba, self.data.then(|| &page[s..s + SLOT_BYTES as usize]), seq)?;
            moved += 1;
            if pace {
                // GC keeps the free pool level as it does for host writes.
                self.gc_pace(1)?;
            }
        }
        Ok(moved)
    }

    /// A lost LBA written or trimmed again is no longer lost.
    #[inline(never)]
    pub(crate) fn lost_clear(&mut self, lba: u32) {
        self.faults.lost.remove(&lba);
    }

    /// Whether an unmapped LBA was lost (reading it is an error).
    #[inline]
    pub(crate) fn lost_check(&self, lba: u32) -> Result<(), FtlError> {
        if self.faults.faulted && self.faults.lost.contains_key(&lba) {
            return Err(FtlError::Lost { lba });
        }
        Ok(())
    }
}

/// Fills the slots of `mask` in a page buffer with `v`.
fn slots_fill(page: &mut [u8], mask: u32, v: u8) {
    let s = SLOT_BYTES as usize;
    (0..32).filter(|i| mask >> i & 1 != 0).for_each(|i| page[i * s..(i + 1) * s].fill(v));
}

/// XORs the slots of `mask` of `src` into `dst`.
fn slots_xor(dst: &mut [u8], src: &[u8], mask: u32) {
    let s = SLOT_BYTES as usize;
    for i in (0..32).filter(|i| mask >> i & 1 != 0) {
        dst[i * s..(i + 1) * s].iter_mut().zip(&src[i * s..(i + 1) * s]).for_each(|(d, b)| *d ^= b);
    }
}
