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
//! where the stripe cannot rebuild it, counted as lost.

use crate::superblock::SbState;
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
    /// from the media; nothing on the media is changed.
    pub fn mount(media: M, cfg: FtlConfig) -> Result<(Ftl<M>, MountReport), FtlError> {
        if !media.holds_data() {
            return Err(FtlError::Config("mount needs media that hold data and their out-of-band areas".into()));
        }
        let mut ftl = Ftl::unformatted(media, cfg)?;
        let (mut report, damaged) = ftl.map_rebuild();
        ftl.superblocks_rebuild();
        ftl.host_seq = report.seq_max;
        ftl.damaged_rebuild(damaged, &mut report)?;
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
    fn map_rebuild(&mut self) -> (MountReport, Vec<Damaged>) {
        let l = self.layout.clone();
        let mut newest: Vec<u64> = (0..self.cfg.user_slots as u32).map(|lba| self.media.trim_seq(lba)).collect();
        let mut r = MountReport { seq_max: newest.iter().copied().max().unwrap_or(0), ..MountReport::default() };
        let mut damaged = Vec::new();
        for sb in 0..l.superblocks {
            for die in 0..l.dies {
                let suspect = self.page_suspect(die, sb);
                for page in (0..self.media.block_next_page(die, sb)).filter(|&p| !l.is_parity(p, die)) {
                    for slot in 0..l.slots_per_mpage {
                        let (lba, seq) = self.media.oob_peek(die, sb, page, slot).expect("data-holding media");
                        r.slots_scanned += 1;
                        if lba == LBA_UNMAPPED || lba as u64 >= self.cfg.user_slots || seq <= newest[lba as usize] {
                            continue;
                        }
                        if suspect == Some(page) && !self.media.slot_intact(die, sb, page, slot) {
                            damaged.push(Damaged { die, sb, page, slot, lba, seq });
                            continue;
                        }
                        let old = self.l2p[lba as usize];
                        if old != PPA_INVALID {
                            self.invalidate(old, l.superblock_of(old));
                        }
                        newest[lba as usize] = seq;
                        r.seq_max = r.seq_max.max(seq);
                        let ppa = l.ppa(crate::layout::SlotAddr { superblock: sb, page, die, slot });
                        self.map_set(lba, ppa, sb);
                    }
                }
            }
        }
        r.slots_mapped = (0..self.cfg.user_slots as usize).filter(|&lba| self.l2p[lba] != PPA_INVALID).count() as u64;
        r.superblocks_short = (0..l.superblocks).filter(|&sb| self.superblock_short(sb)).count() as u32;
        damaged.retain(|d| d.seq > newest[d.lba as usize]);
        (r, damaged)
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
            if self.gc.sb == crate::superblock::SB_NONE {
                self.writer_open(false)?;
            }
            self.unmap(d.lba);
            self.append(false, d.lba, Some(&bytes), d.seq)?;
            r.slots_rebuilt += 1;
        }
        r.slots_mapped += r.slots_rebuilt;
        self.writer_pad(false)
    }

    /// A slot's bytes as the XOR of the same slot on the stripe's other
    /// dies, when all of them are programmed and intact.
    fn stripe_rebuild(&self, d: &Damaged) -> Option<Vec<u8>> {
        let l = &self.layout;
        if l.stripe_width <= 1 {
            return None;
        }
        let slot = SLOT_BYTES as usize;
        let range = d.slot as usize * slot..(d.slot as usize + 1) * slot;
        let mut out = vec![0u8; slot];
        for die in l.stripe_dies(d.die).filter(|&x| x != d.die) {
            if self.media.block_next_page(die, d.sb) <= d.page || !self.media.slot_intact(die, d.sb, d.page, d.slot) {
                return None;
            }
            let page = self.media.mpage_peek(die, d.sb, d.page)?;
            for (o, b) in out.iter_mut().zip(&page[range.clone()]) {
                *o ^= b;
            }
        }
        Some(out)
    }

    fn superblock_short(&self, sb: u32) -> bool {
        let pages: Vec<u32> = (0..self.layout.dies).map(|die| self.media.block_next_page(die, sb)).collect();
        pages.iter().any(|&p| p > 0) && pages.iter().any(|&p| p < self.layout.pages_per_block)
    }

    /// Superblocks with programmed pages closed (short where partial), the
    /// rest free; the writers start on fresh superblocks.
    fn superblocks_rebuild(&mut self) {
        self.free.clear();
        for sb in 0..self.layout.superblocks {
            let written = (0..self.layout.dies).any(|die| self.media.block_next_page(die, sb) > 0);
            let erases = (0..self.layout.dies).map(|die| self.media.block_erase_count(die, sb)).max().unwrap_or(0);
            let short = self.superblock_short(sb);
            let m = &mut self.sbs[sb as usize];
            m.erase_count = erases;
            m.short = short;
            m.state = if written { SbState::Closed } else { SbState::Free };
            if !written {
                self.free.push(std::cmp::Reverse((erases, sb)));
            }
        }
    }
}
