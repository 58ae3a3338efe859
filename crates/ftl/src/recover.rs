//! Mounting a card from its media alone: after a restart (clean or not),
//! the map is rebuilt from every programmed slot's out-of-band area (its
//! LBA and the sequence number of the host write its data came from; a GC
//! move keeps the original number), the newest copy of each LBA winning.
//! Superblocks with programmed pages are closed (short, if the cut came
//! while they were open; GC reclaims them as any other), the rest are free.

use crate::superblock::SbState;
use crate::{Ftl, FtlConfig, FtlError};
use nand::Media;
use units::{LBA_UNMAPPED, PPA_INVALID};

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
        let report = ftl.map_rebuild();
        ftl.superblocks_rebuild();
        ftl.host_seq = report.seq_max;
        Ok((ftl, report))
    }

    /// Every programmed data slot's OOB, the newest copy of each LBA mapped.
    fn map_rebuild(&mut self) -> MountReport {
        let l = self.layout.clone();
        let mut newest = vec![0u64; self.cfg.user_slots as usize];
        let mut r = MountReport::default();
        for sb in 0..l.superblocks {
            for die in 0..l.dies {
                for page in (0..self.media.block_next_page(die, sb)).filter(|&p| !l.is_parity(p, die)) {
                    for slot in 0..l.slots_per_mpage {
                        let (lba, seq) = self.media.oob_peek(die, sb, page, slot).expect("data-holding media");
                        r.slots_scanned += 1;
                        if lba == LBA_UNMAPPED || lba as u64 >= self.cfg.user_slots || seq <= newest[lba as usize] {
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
        r.slots_mapped = newest.iter().filter(|&&s| s > 0).count() as u64;
        r.superblocks_short = (0..l.superblocks).filter(|&sb| self.superblock_short(sb)).count() as u32;
        r
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
