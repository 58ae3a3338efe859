//! A slot's out-of-band record in the store: its LBA, state, sequence
//! number and CRC, written state last; and each die block's mark, set
//! before its first slot is written and cleared once an erase has
//! cleared its slots.

use super::PageStore;
use units::SLOT_BYTES as SLOT;

/// One slot's out-of-band area: LBA, state, sequence number, CRC-32 of
/// the data, 4 bytes spare. An erased slot's is all zeros: the LBA is
/// kept inverted (no LBA, `LBA_UNMAPPED`, is stored as 0), so that a new
/// file's areas, zeros as the file system allocates them, need no
/// writing.
pub const OOB_BYTES: usize = 24;
/// The OOB state of a slot whose page is programmed.
const OOB_PROGRAMMED: u32 = 1;
/// The OOB state of a slot held in the power-loss-protected buffer: its
/// bytes and OOB are in place, its page not yet programmed.
const OOB_STAGED: u32 = 2;
/// With `OOB_STAGED`: the slot's page failed its program; the buffer keeps
/// the slot, the capacitors do not program it there.
const OOB_STRANDED: u32 = 4;

impl PageStore {
    fn oob_u32(&self, slot: usize, at: usize) -> u32 {
        let b = &self.oob.get()[slot * OOB_BYTES + at..slot * OOB_BYTES + at + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The LBA in a slot's out-of-band area (stored inverted).
    pub fn oob_lba(&self, slot: usize) -> u32 {
        !self.oob_u32(slot, 0)
    }

    /// The write sequence number in a slot's out-of-band area.
    pub fn oob_seq(&self, slot: usize) -> u64 {
        let b = &self.oob.get()[slot * OOB_BYTES + 8..slot * OOB_BYTES + 16];
        u64::from_le_bytes(b.try_into().expect("8 bytes"))
    }

    /// Whether a slot's page is programmed.
    pub fn oob_programmed(&self, slot: usize) -> bool {
        self.oob_u32(slot, 4) & OOB_PROGRAMMED != 0
    }

    /// Whether a slot waits in the power-loss-protected buffer.
    pub fn oob_staged(&self, slot: usize) -> bool {
        self.oob_u32(slot, 4) & OOB_STAGED != 0
    }

    /// Whether a staged slot's page failed its program: the buffer holds
    /// it still, but not for that page ([`PageStore::slots_strand`]).
    pub fn oob_stranded(&self, slot: usize) -> bool {
        self.oob_u32(slot, 4) & OOB_STRANDED != 0
    }

    /// The staged slots of `n` from `slot` (a page) stranded: their page
    /// failed its program, so the capacitors do not program them there
    /// after a cut; the buffer keeps them for the FTL to write elsewhere.
    pub fn slots_strand(&mut self, slot: usize, n: usize) {
        for s in slot..slot + n {
            if self.oob_staged(s) {
                let o = &mut self.oob.get_mut()[s * OOB_BYTES..(s + 1) * OOB_BYTES];
                o[4..8].copy_from_slice(&(OOB_STAGED | OOB_STRANDED).to_le_bytes());
            }
        }
    }

    /// Whether a slot's bytes match the CRC in its out-of-band area.
    pub fn slot_intact(&self, slot: usize) -> bool {
        self.oob_u32(slot, 16) == crc32fast::hash(self.slot_data(slot))
    }

    /// Writes a slot's LBA and CRC, then (last) its state; its block is
    /// marked first.
    fn oob_commit(&mut self, slot: usize, lba: u32, state: u32) {
        let b = slot / self.block_slots;
        if self.used.get()[b] == 0 {
            self.used.get_mut()[b] = 1;
            std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::Release);
        }
        let crc = crc32fast::hash(self.slot_data(slot));
        let o = &mut self.oob.get_mut()[slot * OOB_BYTES..(slot + 1) * OOB_BYTES];
        o[0..4].copy_from_slice(&(!lba).to_le_bytes());
        o[16..20].copy_from_slice(&crc.to_le_bytes());
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::Release);
        o[4..8].copy_from_slice(&state.to_le_bytes());
    }

    /// A slot whose bytes are in place programmed with `lba`
    /// (`LBA_UNMAPPED` for parity or padding); its sequence number is
    /// what was set before ([`PageStore::oob_seq_set`]).
    pub fn oob_program(&mut self, slot: usize, lba: u32) {
        self.oob_commit(slot, lba, OOB_PROGRAMMED);
    }

    /// A slot put in the power-loss-protected buffer: its bytes at their
    /// place, its LBA and sequence number in its OOB, its page not yet
    /// programmed (what a card's capacitors program after a cut).
    pub fn slot_stage(&mut self, slot: usize, lba: u32, seq: u64, data: &[u8]) -> std::io::Result<()> {
        let s = SLOT as usize;
        self.data.write(slot * s, &data[..s])?;
        self.oob_seq_set(slot, seq);
        self.oob_commit(slot, lba, OOB_STAGED);
        Ok(())
    }

    /// The sequence number of a slot about to be programmed (or moved by
    /// GC: the original write's).
    pub fn oob_seq_set(&mut self, slot: usize, seq: u64) {
        self.oob.get_mut()[slot * OOB_BYTES + 8..slot * OOB_BYTES + 16].copy_from_slice(&seq.to_le_bytes());
    }

    /// Garbles a slot's bytes (a program cut short damaging the page that
    /// shares its cells): its CRC no longer matches.
    pub fn slot_damage(&mut self, slot: usize) {
        let mut bytes = self.slot_data(slot).to_vec();
        for b in bytes.iter_mut().step_by(97) {
            *b ^= 0x5a;
        }
        // A test's cut: a store that cannot take its damage is a broken test.
        self.data.write(slot * SLOT as usize, &bytes).expect("a damaged slot written");
    }

    /// Garbles a slot of a failed die: its bytes as [`PageStore::slot_damage`]
    /// does, its OOB LBA and sequence number (its state kept).
    pub fn slot_garble(&mut self, slot: usize) {
        self.slot_damage(slot);
        let o = &mut self.oob.get_mut()[slot * OOB_BYTES..(slot + 1) * OOB_BYTES];
        for i in (0..4).chain(8..16) {
            o[i] ^= 0xa5;
        }
    }

    /// `n` slots from `slot` erased: no LBA, not programmed (all zeros,
    /// the state first). A block without its mark holds only erased slots
    /// already and is not touched (a new card's format erases every
    /// block: its out-of-band areas, 17.6 GB at full size, are left as
    /// the file system allocated them). The blocks the range covers whole
    /// lose their mark, after their slots.
    pub fn oob_clear(&mut self, slot: usize, n: usize) {
        let bs = self.block_slots;
        debug_assert!(bs > 0);
        let mut at = slot;
        while at < slot + n {
            let upto = ((at / bs + 1) * bs).min(slot + n);
            if self.used.get()[at / bs] != 0 {
                for o in self.oob.get_mut()[at * OOB_BYTES..upto * OOB_BYTES].chunks_exact_mut(OOB_BYTES) {
                    o[4..8].fill(0);
                    o[0..4].fill(0);
                    o[8..].fill(0);
                }
            }
            at = upto;
        }
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::Release);
        let (first, end) = (slot.div_ceil(bs), (slot + n) / bs);
        if first < end {
            self.used.get_mut()[first..end].fill(0);
        }
    }

    /// Whether the die block holding `slot` may hold a staged or
    /// programmed slot; `false` means every slot of it is erased.
    pub fn block_used(&self, slot: usize) -> bool {
        self.used.get()[slot / self.block_slots] != 0
    }
}
