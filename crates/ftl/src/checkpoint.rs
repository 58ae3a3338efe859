//! A clean shutdown's checkpoint: what a mount would rebuild by scanning
//! the media (the L2P, each superblock's state, the newest sequence
//! number), written after the writers' open pages are on the media, so
//! that the next mount reads it instead of every page's out-of-band area.
//! Parity and the P2L follow from the L2P; erase counts are the media's.
//!
//! Layout (little-endian): magic, version, user slots, superblocks, host
//! sequence number; per superblock its state (0 free, 1 closed) and
//! whether it is short; the L2P; a CRC-32 of everything before it. A
//! checkpoint that does not match the card it is mounted on is refused.

use crate::superblock::SbState;
use crate::writer::WriterId;
use crate::{Ftl, FtlConfig, FtlError, MountReport};
use nand::Media;
use std::cmp::Reverse;
use units::PPA_INVALID;

const MAGIC: &[u8; 8] = b"FLCKPT\0\0";
const VERSION: u32 = 1;

impl<M: Media> Ftl<M> {
    /// Puts every write on the media and returns the checkpoint of the
    /// card as it then is. The writers' stripes are sealed and their
    /// superblocks closed (short):
    /// the next mount opens fresh ones, as after a cut.
    pub fn checkpoint(&mut self) -> Result<Vec<u8>, FtlError> {
        // Sealed: no data is left in a stripe without its parity.
        self.writer_seal(WriterId::User)?;
        self.writer_seal(WriterId::Gc)?;
        let mut b = Vec::with_capacity(32 + self.sbs.meta.len() * 2 + self.map.l2p.len() * 4);
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&self.cfg.user_slots.to_le_bytes());
        b.extend_from_slice(&self.layout.superblocks.to_le_bytes());
        b.extend_from_slice(&self.host_seq.to_le_bytes());
        for m in &self.sbs.meta {
            // A victim being collected is closed: its copies are all still there.
            b.push((m.state != SbState::Free) as u8);
            b.push(m.short as u8);
        }
        for &ppa in self.map.l2p.iter() {
            b.extend_from_slice(&ppa.to_le_bytes());
        }
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        Ok(b)
    }

    /// An FTL over `media` from a checkpoint taken when the card stopped
    /// cleanly on these media: no page's OOB is read.
    pub fn mount_checkpoint(media: M, cfg: FtlConfig, bytes: &[u8]) -> Result<(Ftl<M>, MountReport), FtlError> {
        let mut ftl = Ftl::unformatted(media, cfg)?;
        ftl.system_load()?;
        let bad = |why: &str| FtlError::Config(format!("checkpoint: {why}"));
        let sbs = ftl.layout.superblocks as usize;
        let user = ftl.cfg.user_slots as usize;
        let len = 8 + 4 + 8 + 4 + 8 + sbs * 2 + user * 4 + 4;
        if bytes.len() != len || &bytes[..8] != MAGIC {
            return Err(bad(&format!("{} bytes, not a checkpoint of this card ({len} bytes expected)", bytes.len())));
        }
        let (body, crc) = bytes.split_at(len - 4);
        if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(bad("its checksum does not match (torn or altered)"));
        }
        let u32_at = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"));
        if u32_at(8) != VERSION || u64_at(12) != user as u64 || u32_at(20) as usize != sbs {
            return Err(bad("made for another version, capacity or geometry"));
        }
        ftl.host_seq = u64_at(24);
        let states = &body[32..32 + sbs * 2];
        let l2p = &body[32 + sbs * 2..];
        for (lba, e) in l2p.chunks_exact(4).enumerate() {
            let ppa = u32::from_le_bytes(e.try_into().expect("4 bytes"));
            if ppa == PPA_INVALID {
                continue;
            }
            if ppa as u64 >= ftl.layout.total_slots() {
                return Err(bad(&format!("LBA {lba} maps past the card")));
            }
            ftl.map_set(lba as u32, ppa, ftl.layout.superblock_of(ppa));
        }
        ftl.sbs.free.clear();
        for sb in 0..sbs {
            let erases = ftl.media_superblock_erases(sb as u32);
            let m = &mut ftl.sbs.meta[sb];
            m.erase_count = erases;
            m.short = states[sb * 2 + 1] != 0;
            m.state = if states[sb * 2] != 0 { SbState::Closed } else { SbState::Free };
            if m.state == SbState::Free {
                if m.valid != 0 {
                    return Err(bad(&format!("superblock {sb} is free but holds mapped slots")));
                }
                if ftl.sb_usable(sb as u32) {
                    ftl.sbs.free.push(Reverse((erases, sb as u32)));
                }
            }
        }
        let report = MountReport {
            slots_mapped: l2p.chunks_exact(4).filter(|e| e != &PPA_INVALID.to_le_bytes()).count() as u64,
            seq_max: ftl.host_seq,
            from_checkpoint: true,
            ..MountReport::default()
        };
        Ok((ftl, report))
    }
}
