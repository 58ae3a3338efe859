//! The map ([`Map`]): logical slot to physical slot (L2P, 4 bytes a user
//! slot), the LBA each physical slot was last written with (P2L, its
//! out-of-band area) and a validity bit per physical slot. Every change to
//! them goes through `map_set` and `unmap`, which keep the three and the
//! superblocks' valid counts in step.

use crate::layout::SlotAddr;
use crate::Ftl;
use nand::Media;
use units::{prefetch_read, vec_huge, Ppa, SlotLba, LBA_UNMAPPED, PPA_INVALID};

/// The three maps of a card.
#[derive(Clone)]
pub(crate) struct Map {
    pub(crate) l2p: Vec<Ppa>,
    /// The LBA last written at each physical slot (its OOB), written in
    /// write order and read in GC's scan order: never touched at random.
    pub(crate) p2l: Vec<SlotLba>,
    /// One bit a physical slot: whether it holds the live copy of its LBA.
    /// Kept apart from the P2L so that invalidating an old copy touches
    /// 1/32 of the memory: the maps' random footprint then fits the TLB.
    pub(crate) valid: Vec<u64>,
}

impl Map {
    /// Nothing mapped: `user_slots` logical slots over `total_slots`
    /// physical ones.
    pub(crate) fn new(user_slots: u64, total_slots: u64) -> Map {
        Map {
            l2p: vec_huge(user_slots as usize, PPA_INVALID),
            p2l: vec_huge(total_slots as usize, LBA_UNMAPPED),
            valid: vec_huge((total_slots as usize).div_ceil(64), 0u64),
        }
    }
    /// The memory the maps take.
    pub(crate) fn bytes(&self) -> u64 {
        (self.l2p.len() * size_of::<Ppa>() + self.p2l.len() * size_of::<SlotLba>() + self.valid.len() * 8) as u64
    }
}

/// Bit `ppa` of a validity bitmap.
#[inline(always)]
pub(crate) fn valid_bit(valid: &[u64], ppa: Ppa) -> bool {
    valid[ppa as usize / 64] >> (ppa % 64) & 1 != 0
}

impl<M: Media> Ftl<M> {
    /// Where a logical slot is mapped, if anywhere.
    pub fn lookup(&self, lba: SlotLba) -> Option<SlotAddr> {
        let ppa = *self.map.l2p.get(lba as usize)?;
        (ppa != PPA_INVALID).then(|| self.layout.addr(ppa))
    }
    /// Whether a physical location is still in an open writer's page (the
    /// write buffer) rather than on the media.
    pub fn is_buffered(&self, a: &SlotAddr) -> bool {
        self.writers.iter().any(|w| w.holds(a))
    }

    /// Prefetches the L2P entry of `lba`, which a host write or read of it
    /// will look up (the first of the lookahead's two stages). Changes
    /// nothing.
    #[inline]
    pub fn prefetch_entry(&self, lba: SlotLba) {
        if let Some(entry) = self.map.l2p.get(lba as usize) {
            prefetch_read(entry);
        }
    }

    /// Prefetches what the current place of `lba` needs (the second
    /// stage, when its entry is likely cached): for a write the validity
    /// word it clears; for a read the media's state of the block it
    /// reads, and that place returned (for the caller's own state of it).
    /// Changes nothing.
    #[inline]
    pub fn prefetch_place(&self, lba: SlotLba, write: bool) -> Option<SlotAddr> {
        let e = *self.map.l2p.get(lba as usize)?;
        if e == PPA_INVALID {
            return None;
        }
        if write {
            if let Some(w) = self.map.valid.get(e as usize / 64) {
                prefetch_read(w);
            }
            return None;
        }
        let a = self.layout.addr(e);
        self.media.prefetch_block(a.die, a.superblock);
        Some(a)
    }

    /// Whether a physical slot holds the live copy of its LBA.
    #[inline]
    pub fn is_valid(&self, ppa: Ppa) -> bool {
        valid_bit(&self.map.valid, ppa)
    }

    #[inline]
    pub(crate) fn unmap(&mut self, lba: SlotLba) {
        let old = self.map.l2p[lba as usize];
        if old != PPA_INVALID {
            debug_assert_eq!(self.map.p2l[old as usize], lba);
            self.invalidate(old, self.layout.superblock_of(old));
            self.map.l2p[lba as usize] = PPA_INVALID;
        }
    }

    /// Maps `lba` to the free physical slot `ppa` of superblock `sb` (the
    /// caller has unmapped its old place).
    #[inline(always)]
    pub(crate) fn map_set(&mut self, lba: SlotLba, ppa: Ppa, sb: u32) {
        debug_assert!(!valid_bit(&self.map.valid, ppa));
        debug_assert_eq!(self.layout.superblock_of(ppa), sb);
        self.map.p2l[ppa as usize] = lba;
        self.map.valid[ppa as usize / 64] |= 1u64 << (ppa % 64);
        self.map.l2p[lba as usize] = ppa;
        self.sbs.meta[sb as usize].valid += 1;
    }

    /// Clears the validity of `ppa` in superblock `sb`, the live copy of its
    /// LBA, without touching the LBA's map entry (which the caller stores to:
    /// `unmap` clears it, GC's move points it at the new place).
    #[inline]
    pub(crate) fn invalidate(&mut self, ppa: Ppa, sb: u32) {
        debug_assert!(valid_bit(&self.map.valid, ppa));
        debug_assert_eq!(self.map.l2p[self.map.p2l[ppa as usize] as usize], ppa);
        self.map.valid[ppa as usize / 64] &= !(1u64 << (ppa % 64));
        self.sbs.meta[sb as usize].valid -= 1;
    }
}
