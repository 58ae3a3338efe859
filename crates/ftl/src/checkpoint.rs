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
use std::io::Read;
use units::PPA_INVALID;

const MAGIC: &[u8; 8] = b"FLCKPT\0\0";
const VERSION: u32 = 1;
/// The L2P is read this many bytes at a time.
const L2P_PIECE_BYTES: usize = 1 << 20;

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
        Ftl::mount_checkpoint_from(media, cfg, bytes, bytes.len() as u64)
    }

    /// The same from a reader of `len` bytes (a checkpoint file), read a
    /// piece at a time: a full-size card's L2P is gigabytes, held once (in
    /// the map), not twice. The checksum is checked at the end; a
    /// checkpoint that fails it is refused (the FTL built so far, which has
    /// touched no media, is dropped).
    /// Each superblock's state and shortness as a checkpoint recorded
    /// them (`states`: two bytes a superblock), its erases from the media;
    /// the free ones (holding nothing mapped) rejoin the free pool.
    fn checkpoint_superblocks(&mut self, states: &[u8]) -> Result<(), FtlError> {
        debug_assert_eq!(states.len(), self.sbs.meta.len() * 2, "two bytes a superblock");
        self.sbs.free.clear();
        for sb in 0..self.sbs.meta.len() {
            let erases = self.media_superblock_erases(sb as u32);
            let m = &mut self.sbs.meta[sb];
            m.erase_count = erases;
            m.short = states[sb * 2 + 1] != 0;
            m.found_state(if states[sb * 2] != 0 { SbState::Closed } else { SbState::Free });
            if m.state == SbState::Free {
                if m.valid != 0 {
                    return Err(FtlError::Config(format!("checkpoint: superblock {sb} is free but holds mapped slots")));
                }
                if self.sb_usable(sb as u32) {
                    self.sbs.free.push(Reverse((erases, sb as u32)));
                }
            }
        }
        Ok(())
    }

    pub fn mount_checkpoint_from(media: M, cfg: FtlConfig, mut r: impl Read, len: u64) -> Result<(Ftl<M>, MountReport), FtlError> {
        let mut ftl = Ftl::unformatted(media, cfg)?;
        ftl.system_load()?;
        let bad = |why: &str| FtlError::Config(format!("checkpoint: {why}"));
        let sbs = ftl.layout.superblocks as usize;
        let user = ftl.cfg.user_slots as usize;
        let expected = 8 + 4 + 8 + 4 + 8 + sbs * 2 + user * 4 + 4;
        let not_this = || bad(&format!("{len} bytes, not a checkpoint of this card ({expected} bytes expected)"));
        if len != expected as u64 {
            return Err(not_this());
        }
        let unreadable = |e: std::io::Error| bad(&format!("cannot be read ({e})"));
        let mut crc = crc32fast::Hasher::new();
        let mut read = |buf: &mut [u8], crc: &mut crc32fast::Hasher| -> Result<(), FtlError> {
            r.read_exact(buf).map_err(unreadable)?;
            crc.update(buf);
            Ok(())
        };
        let mut head = [0u8; 32];
        read(&mut head, &mut crc)?;
        if &head[..8] != MAGIC {
            return Err(not_this());
        }
        let u32_at = |at: usize| u32::from_le_bytes(head[at..at + 4].try_into().expect("4 bytes"));
        let u64_at = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().expect("8 bytes"));
        if u32_at(8) != VERSION || u64_at(12) != user as u64 || u32_at(20) as usize != sbs {
            return Err(bad("made for another version, capacity or geometry"));
        }
        let host_seq = u64_at(24);
        let mut states = vec![0u8; sbs * 2];
        read(&mut states, &mut crc)?;
        let (mut buf, mut lba, mut mapped) = (vec![0u8; L2P_PIECE_BYTES], 0usize, 0u64);
        while lba < user {
            let piece = &mut buf[..(user - lba).min(L2P_PIECE_BYTES / 4) * 4];
            read(piece, &mut crc)?;
            for e in piece.chunks_exact(4) {
                let ppa = u32::from_le_bytes(e.try_into().expect("4 bytes"));
                if ppa != PPA_INVALID {
                    if ppa as u64 >= ftl.layout.total_slots() {
                        return Err(bad(&format!("LBA {lba} maps past the card")));
                    }
                    ftl.map_set(lba as u32, ppa, ftl.layout.superblock_of(ppa));
                    mapped += 1;
                }
                lba += 1;
            }
        }
        let mut tail = [0u8; 4];
        r.read_exact(&mut tail).map_err(unreadable)?;
        if crc.finalize() != u32::from_le_bytes(tail) {
            return Err(bad("its checksum does not match (torn or altered)"));
        }
        ftl.host_seq = host_seq;
        ftl.checkpoint_superblocks(&states)?;
        let report = MountReport { slots_mapped: mapped, seq_max: ftl.host_seq, from_checkpoint: true, ..MountReport::default() };
        Ok((ftl, report))
    }
}
