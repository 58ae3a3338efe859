//! Mounting a card from its media alone: after a restart (clean or not),
//! the map is rebuilt from every programmed slot's out-of-band area (its
//! LBA and the sequence number of the host write its data came from; a GC
//! move keeps the original number), the newest copy of each LBA winning.
//! A copy no newer than its LBA's last recorded trim stays unmapped.
//! Superblocks with programmed pages are closed (short, if the cut came
//! while they were open; GC reclaims them as any other), the rest are free.
//!
//! A cut in the middle of an MLC upper-page program damages the lower page
//! sharing its cells (`nand::cut::paired_lower`): in each block left
//! partly programmed, that page's slots are checked against their OOB
//! checksums; a damaged slot that holds the newest copy of its LBA is
//! rebuilt from its stripe (the XOR of the other dies' pages, parity
//! included) and written again with its original sequence number, or,
//! where the stripe cannot rebuild it, counted as lost. A damaged page of
//! any kind (a parity page too) leaves its stripe unable to rebuild the
//! others, so their valid slots are moved to a whole stripe, as are those
//! of stripes the cut left incomplete.

use crate::superblock::SbState;
use crate::writer::WriterId;
use crate::{Ftl, FtlConfig, FtlError};
use nand::Media;
use units::{LBA_UNMAPPED, PPA_INVALID, SLOT_BYTES};

/// What a mount found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MountReport {
    /// Programmed data slots read (their OOB).
    pub slots_scanned: u64,
    /// Logical slots mapped.
    pub slots_mapped: u64,
    /// Superblocks closed short (open when the card stopped).
    pub superblocks_short: u32,
    /// The newest host write found.
    pub seq_max: u64,
    /// Slots found damaged (a paired page hit by a cut) and rebuilt from
    /// their stripe's parity.
    pub slots_rebuilt: u64,
    /// Whether the map came from a clean shutdown's checkpoint (no scan).
    pub from_checkpoint: bool,
    /// Why a checkpoint found was not used (the media were scanned).
    pub checkpoint_refused: Option<String>,
    /// Pages the power-loss-protected buffer held at the cut, which the
    /// media programmed at power-on (set by whoever opened the media).
    pub pages_completed: u64,
    /// Die blocks whose out-of-band areas were read to learn their
    /// programmed pages: those written since their erase (set by whoever
    /// opened the media; none from a checkpoint).
    pub blocks_scanned: u64,
    /// Slots a failed program left in the power-loss-protected buffer (a
    /// cut came before they were written elsewhere), written again.
    pub slots_stranded: u64,
    /// Slots moved because the cut left their stripe without its parity
    /// (so that a die failure later cannot lose them).
    pub slots_reprotected: u64,
    /// Damaged slots holding the newest copy of their LBA that the stripe
    /// could not rebuild: these LBAs read an older copy or zeros.
    pub lbas_lost: Vec<u32>,
}

/// A damaged slot found by the scan: where it is, what it held.
struct Damaged {
    die: u32,
    sb: u32,
    page: u32,
    slot: u32,
    lba: u32,
    seq: u64,
}

impl<M: Media> Ftl<M> {
    /// An FTL over data-holding `media` that a card wrote before: the map,
    /// the superblocks' states and valid counts and the free pool rebuilt
    /// from the media, after finishing an erase a cut interrupted; then
    /// what a cut left unprotected is written again.
    pub fn mount(media: M, cfg: FtlConfig) -> Result<(Ftl<M>, MountReport), FtlError> {
        if !media.holds_data() {
            return Err(FtlError::Config("mount needs media that hold data and their out-of-band areas".into()));
        }
        let mut ftl = Ftl::unformatted(media, cfg)?;
        ftl.system_load()?;
        ftl.erases_finish()?;
        let (mut report, damaged) = ftl.map_rebuild()?;
        ftl.superblocks_rebuild();
        ftl.host_seq = report.seq_max;
        ftl.lost_settle();
        ftl.damaged_rebuild(damaged, &mut report)?;
        ftl.stranded_rewrite(&mut report)?;
        ftl.unprotected_move(&mut report)?;
        Ok((ftl, report))
    }

    /// The page a cut may have damaged in a block left partly programmed:
    /// the lower page paired with the one that was being programmed.
    fn page_suspect(&self, die: u32, sb: u32) -> Option<u32> {
        let next = self.media.block_next_page(die, sb);
        if next == 0 || next >= self.layout.pages_per_block {
            return None;
        }
        nand::cut::paired_lower(next)
    }

    /// Every programmed data slot's OOB, the newest copy of each LBA mapped
    /// (unless trimmed since); damaged slots are left out and returned.
    /// What an LBA holds so far is read where it is kept (the trim journal,
    /// the mapped copy's OOB), not copied: a full-size card has hundreds of
    /// millions of LBAs, of which a mount after a crash finds a few.
    fn map_rebuild(&mut self) -> Result<(MountReport, Vec<Damaged>), FtlError> {
        let l = self.layout.clone();
        let mut r = MountReport { seq_max: self.media.trim_seq_newest(), ..MountReport::default() };
        let mut damaged = Vec::new();
        for sb in 0..l.superblocks {
            let narrowing = self.narrowing(sb).cloned();
            let n = narrowing.as_ref();
            for die in 0..l.dies {
                if l.is_unused_in(n, die) {
                    continue;
                }
                let dead = self.is_dead(die);
                // A dead die's pages are known through their stripes: those
                // whose stripe is whole (its parity programmed).
                let rows = if dead { self.dead_rows(sb, die) } else { self.media.block_next_page(die, sb) };
                let suspect = if dead { None } else { self.page_suspect(die, sb) };
                let pages: Vec<u32> = (0..rows).filter(|&p| l.is_data_in(self.narrowing_at(sb, p), p, die)).collect();
                for page in pages {
                    let a = crate::layout::SlotAddr { superblock: sb, page, die, slot: 0 };
                    // A dead die's slot counts only where its stripe can
                    // rebuild it (a copy moved elsewhere may win instead).
                    let others = if dead { self.stripe_others(a).ok() } else { Some(Vec::new()) };
                    let Some(others) = others else { continue };
                    for slot in 0..l.slots_per_mpage {
                        if dead && self.stripe_intact(a, &others, 1 << slot).is_err() {
                            continue;
                        }
                        let (lba, seq) = self.oob_of(crate::layout::SlotAddr { superblock: sb, page, die, slot })?;
                        r.slots_scanned += 1;
                        if lba == LBA_UNMAPPED || lba as u64 >= self.cfg.user_slots || seq <= self.lba_newest(lba)? {
                            continue;
                        }
                        if suspect == Some(page) && !self.media.slot_intact(die, sb, page, slot) {
                            damaged.push(Damaged { die, sb, page, slot, lba, seq });
                            continue;
                        }
                        let old = self.map.l2p[lba as usize];
                        if old != PPA_INVALID {
                            self.invalidate(old, l.superblock_of(old));
                        }
                        r.seq_max = r.seq_max.max(seq);
                        let ppa = l.ppa(crate::layout::SlotAddr { superblock: sb, page, die, slot });
                        self.map_set(lba, ppa, sb);
                    }
                }
            }
        }
        r.slots_mapped = (0..self.cfg.user_slots as usize).filter(|&lba| self.map.l2p[lba] != PPA_INVALID).count() as u64;
        r.superblocks_short = (0..l.superblocks).filter(|&sb| self.superblock_short(sb)).count() as u32;
        let mut kept = Vec::with_capacity(damaged.len());
        for d in damaged {
            if d.seq > self.lba_newest(d.lba)? {
                kept.push(d);
            }
        }
        Ok((r, kept))
    }

    /// The sequence number of what an LBA holds so far in a mount: its
    /// mapped copy's, or its last trim's if newer (0: neither).
    fn lba_newest(&self, lba: u32) -> Result<u64, FtlError> {
        let trimmed = self.media.trim_seq(lba);
        let ppa = self.map.l2p[lba as usize];
        if ppa == PPA_INVALID {
            return Ok(trimmed);
        }
        Ok(self.oob_of(self.layout.addr(ppa))?.1.max(trimmed))
    }

    /// Rows of a dead die's block that its stripes show programmed: up to
    /// the last row whose parity page (on a working die) is.
    fn dead_rows(&self, sb: u32, die: u32) -> u32 {
        let l = &self.layout;
        (0..l.pages_per_block)
            .rev()
            .find(|&p| {
                l.parity_die_in(self.narrowing_at(sb, p), p, die).is_some_and(|pd| pd != die && !self.is_dead(pd) && self.media.block_next_page(pd, sb) > p)
            })
            .map_or(0, |p| p + 1)
    }

    /// Lost LBAs written again since (a newer copy mapped) or trimmed
    /// since (the trim journal holds a trim newer than the loss) are lost
    /// no more: the system area, written at the loss, is not written again
    /// for each of them.
    fn lost_settle(&mut self) {
        let (l2p, media) = (&self.map.l2p, &self.media);
        self.faults.lost.retain(|&lba, &mut lost_seq| l2p.get(lba as usize).is_some_and(|&p| p == PPA_INVALID) && media.trim_seq(lba) <= lost_seq);
        self.faulted_update();
    }

    /// Moves the valid slots of stripes a cut left without protection, so
    /// that a die failure later cannot lose them or rebuild them wrong:
    /// stripes left incomplete (a cut while they were written, or while
    /// their superblock was being erased: some member has the row
    /// programmed and another working member has not; or a failed program
    /// whose stripe a cut kept from being moved), and stripes holding a
    /// page the cut damaged (a parity page among them: the stripe's XOR no
    /// longer gives the other pages' bytes).
    fn unprotected_move(&mut self, r: &mut MountReport) -> Result<(), FtlError> {
        let l = self.layout.clone();
        if l.stripe_width <= 1 {
            return Ok(());
        }
        let suspect: Vec<u32> = (0..l.superblocks).filter(|&sb| self.sbs.meta[sb as usize].short || !self.sbs.row_narrows[sb as usize].is_empty()).collect();
        for sb in suspect {
            for group in 0..l.dies / l.stripe_width {
                for (page, die) in self.rows_unprotected(sb, group) {
                    r.slots_reprotected += self.rebuild_page(crate::layout::SlotAddr { superblock: sb, page, die, slot: 0 })?;
                }
            }
        }
        if r.slots_reprotected > 0 {
            self.writer_pad(WriterId::Gc)?;
        }
        Ok(())
    }

    /// The pages of one stripe group of `sb` that a cut or a failed
    /// program left unprotected (row, die), where they hold data: each
    /// working member's page of a row that is incomplete (some member
    /// programmed it, another working one did not) or holds a damaged page.
    fn rows_unprotected(&self, sb: u32, group: u32) -> Vec<(u32, u32)> {
        let l = &self.layout;
        let next = |d: u32| self.media.block_next_page(d, sb);
        let damaged = |d: u32| self.page_suspect(d, sb).filter(|&p| (0..l.slots_per_mpage).any(|slot| !self.media.slot_intact(d, sb, p, slot)));
        let base: Vec<u32> = l.stripe_members(self.narrowing(sb), group * l.stripe_width).into_iter().filter(|&d| !self.is_dead(d)).collect();
        let hi = base.iter().map(|&d| next(d)).max().unwrap_or(0);
        let mut pages = Vec::new();
        for page in 0..hi {
            let members = l.stripe_members(self.narrowing_at(sb, page), group * l.stripe_width);
            if members.len() < 2 {
                continue;
            }
            let working: Vec<u32> = members.into_iter().filter(|&d| !self.is_dead(d)).collect();
            let incomplete = working.iter().any(|&d| next(d) <= page);
            let hit = working.iter().any(|&d| damaged(d) == Some(page));
            if incomplete || hit {
                pages.extend(working.iter().filter(|&&d| next(d) > page).map(|&d| (page, d)));
            }
        }
        pages
    }

    /// Rebuilds each damaged slot still the newest copy of its LBA from its
    /// stripe and writes it again (GC's writer, the original sequence
    /// number), then puts it on the media.
    fn damaged_rebuild(&mut self, damaged: Vec<Damaged>, r: &mut MountReport) -> Result<(), FtlError> {
        for d in &damaged {
            let Some(bytes) = self.stripe_rebuild(d) else {
                r.lbas_lost.push(d.lba);
                continue;
            };
            if self.writers[WriterId::Gc].sb == crate::superblock::SB_NONE {
                self.writer_open(WriterId::Gc)?;
            }
            self.unmap(d.lba);
            self.append(WriterId::Gc, d.lba, Some(&bytes), d.seq)?;
            r.slots_rebuilt += 1;
        }
        r.slots_mapped += r.slots_rebuilt;
        self.writer_pad(WriterId::Gc)
    }

    /// Writes again (GC's writer, the original sequence number) each slot
    /// a failed program left stranded in the power-loss-protected buffer
    /// (a cut came before the FTL wrote it elsewhere: its page was never
    /// programmed, so the block's failed row is still its next page) where
    /// it is still its LBA's newest copy; then drops them from the buffer.
    fn stranded_rewrite(&mut self, r: &mut MountReport) -> Result<(), FtlError> {
        let l = self.layout.clone();
        let mut pages = Vec::new();
        for sb in 0..l.superblocks {
            for die in (0..l.dies).filter(|&d| !self.is_dead(d)) {
                let page = self.media.block_next_page(die, sb);
                if page < l.pages_per_block && (0..l.slots_per_mpage).any(|s| self.media.slot_stranded(die, sb, page, s)) {
                    pages.push((sb, die, page));
                }
            }
        }
        let slot_bytes = SLOT_BYTES as usize;
        for &(sb, die, page) in &pages {
            let bytes = self.media.mpage_peek(die, sb, page).expect("data-holding media").to_vec();
            let stranded: Vec<u32> = (0..l.slots_per_mpage).filter(|&s| self.media.slot_stranded(die, sb, page, s)).collect();
            for slot in stranded {
                let (lba, seq) = self.media.oob_peek(die, sb, page, slot).expect("data-holding media keep OOB");
                if lba == LBA_UNMAPPED || lba as u64 >= self.cfg.user_slots || seq <= self.newest_seq(lba)? {
                    continue;
                }
                if self.writers[WriterId::Gc].sb == crate::superblock::SB_NONE {
                    self.writer_open(WriterId::Gc)?;
                }
                self.unmap(lba);
                let at = slot as usize * slot_bytes;
                self.append(WriterId::Gc, lba, Some(&bytes[at..at + slot_bytes]), seq)?;
                self.host_seq = self.host_seq.max(seq);
                r.seq_max = r.seq_max.max(seq);
                r.slots_stranded += 1;
            }
        }
        self.writer_pad(WriterId::Gc)?;
        for (sb, die, page) in pages {
            self.media.page_unstage(die, sb, page);
        }
        self.lost_settle();
        Ok(())
    }

    /// The sequence number of `lba`'s newest copy on the media, or of its
    /// last trim if that is newer (0: neither).
    fn newest_seq(&self, lba: u32) -> Result<u64, FtlError> {
        let ppa = self.map.l2p[lba as usize];
        let mapped = if ppa == PPA_INVALID { 0 } else { self.oob_of(self.layout.addr(ppa))?.1 };
        Ok(mapped.max(self.media.trim_seq(lba)))
    }

    /// A slot's bytes as the XOR of the same slot on the stripe's other
    /// dies, when all of them work, are programmed and intact.
    fn stripe_rebuild(&self, d: &Damaged) -> Option<Vec<u8>> {
        let l = &self.layout;
        if l.stripe_width <= 1 {
            return None;
        }
        let slot = SLOT_BYTES as usize;
        let range = d.slot as usize * slot..(d.slot as usize + 1) * slot;
        let mut out = vec![0u8; slot];
        for die in l.stripe_members(self.narrowing_at(d.sb, d.page), d.die).into_iter().filter(|&x| x != d.die) {
            if self.is_dead(die) || self.media.block_next_page(die, d.sb) <= d.page || !self.media.slot_intact(die, d.sb, d.page, d.slot) {
                return None;
            }
            let page = self.media.mpage_peek(die, d.sb, d.page)?;
            for (o, b) in out.iter_mut().zip(&page[range.clone()]) {
                *o ^= b;
            }
        }
        Some(out)
    }

    /// Whether a written superblock's dies stopped short of the rows each
    /// takes part in (a cut while it was open).
    fn superblock_short(&self, sb: u32) -> bool {
        let n = self.narrowing(sb);
        let used = (0..self.layout.dies).filter(|&d| !self.is_dead(d) && !self.layout.is_unused_in(n, d));
        let pages: Vec<(u32, u32)> = used.map(|die| (self.media.block_next_page(die, sb), self.rows_of(sb, die))).collect();
        pages.iter().any(|&(p, _)| p > 0) && pages.iter().any(|&(p, rows)| p < rows)
    }

    /// Superblocks with programmed pages closed (short where partial), the
    /// rest free; the writers start on fresh superblocks.
    fn superblocks_rebuild(&mut self) {
        self.sbs.free.clear();
        for sb in 0..self.layout.superblocks {
            let written = (0..self.layout.dies).any(|die| !self.is_dead(die) && self.media.block_next_page(die, sb) > 0);
            let erases = self.media_superblock_erases(sb);
            let short = self.superblock_short(sb);
            let m = &mut self.sbs.meta[sb as usize];
            m.erase_count = erases;
            m.short = short;
            m.found_state(if written { SbState::Closed } else { SbState::Free });
            if !written && self.sb_usable(sb) {
                self.sbs.free.push(std::cmp::Reverse((erases, sb)));
            }
        }
    }
}
