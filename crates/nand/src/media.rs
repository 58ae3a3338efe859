//! What the FTL programs, reads and erases through: the media traits
//! (`Nand`, the NAND rules' operations; `Persist`, what a data-holding
//! array keeps beside its pages; `Media`, both), why an operation is
//! issued (`OpTag`) and the counts of each (`MediaCounters`).

use crate::{Geometry, NandError};

/// Why an operation reaches the media; counted apart so that write
/// amplification and GC traffic can be reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpTag {
    /// Host data (reads, writes, read-modify-write reads).
    User,
    /// Garbage collection and wear-leveling relocation.
    Gc,
    /// Parity pages of a stripe of user data.
    Parity,
    /// Parity pages of a stripe of GC-relocated data.
    GcParity,
    /// Formatting and secure erase.
    Format,
}

/// The NAND operations through which the FTL reaches its media, and what
/// it must know of the array (geometry, how far each block is programmed,
/// its erases, bad and failed parts). The simulator implements it with a
/// recorder that times each operation; the tests with an array holding
/// real bytes. Addresses are multi-plane: `page` is programmed on every
/// plane of `die` at once.
pub trait Nand {
    fn geometry(&self) -> &Geometry;
    /// Reads the slots of one multi-plane page named by `slot_mask` (bit `i`
    /// is slot `i`; only those columns cross the channel). When the media
    /// holds data, each named slot is copied to its place in `out`, a buffer
    /// of one multi-plane page.
    fn page_read(&mut self, die: u32, block: u32, page: u32, slot_mask: u32, tag: OpTag, out: Option<&mut [u8]>) -> Result<(), NandError>;
    /// Programs one multi-plane page; `oob` carries the LBA of each slot
    /// (`units::LBA_UNMAPPED` for parity or padding), as pblk keeps it.
    fn page_program(&mut self, die: u32, block: u32, page: u32, tag: OpTag, oob: &[u32], data: Option<&[u8]>) -> Result<(), NandError>;
    /// Erases one multi-plane block.
    fn block_erase(&mut self, die: u32, block: u32, tag: OpTag) -> Result<(), NandError>;
    /// Counters of what reached the media.
    fn counters(&self) -> &MediaCounters;
    /// The next programmable page of a die block (`pages_per_block` when
    /// full, 0 when erased), for invariant checkers.
    fn block_next_page(&self, die: u32, block: u32) -> u32;
    /// A die block's erase count (0 where the media do not keep one).
    #[inline]
    fn block_erase_count(&self, _die: u32, _block: u32) -> u32 {
        0
    }
    /// A hint that a page of this die block is about to be read: the media
    /// may bring what `page_read` checks into the cache. Changes nothing.
    #[inline]
    fn prefetch_block(&self, _die: u32, _block: u32) {}
    /// A die fails: every later operation on it is refused. At the
    /// failure itself (`now`; not when a mount learns of an old one) the
    /// bytes and out-of-band areas a data-holding die kept are garbled, so
    /// that a read which bypassed the stripe would return wrong bytes.
    fn die_fail(&mut self, die: u32, now: bool);
    /// Whether a die block carries the factory's bad-block mark.
    fn block_factory_bad(&self, _die: u32, _block: u32) -> bool {
        false
    }
}

/// What only a data-holding store does: the bytes and out-of-band areas a
/// mount reads, the power-loss-protected buffer, the trim journal and the
/// system area. Media that keep no data take the defaults.
pub trait Persist {
    /// Whether `page_read` fills `out` with data.
    fn holds_data(&self) -> bool;
    /// The bytes of one programmed multi-plane page, without counting a read,
    /// for invariant checkers; `None` when the media holds no data.
    fn mpage_peek(&self, die: u32, block: u32, page: u32) -> Option<&[u8]>;
    /// The write sequence numbers of the slots of a page about to be
    /// programmed, kept in their out-of-band areas where the media holds
    /// data (for recovery).
    #[inline]
    fn oob_seqs_set(&mut self, _die: u32, _block: u32, _page: u32, _seqs: &[u64]) {}
    /// Puts one slot of a page not yet programmed (`oob`: its LBA and
    /// sequence number) in the power-loss-protected buffer, where the
    /// media holds data: after a cut, the array programs it as the card's
    /// capacitors would.
    #[inline]
    fn slot_stage(&mut self, _die: u32, _block: u32, _page: u32, _slot: u32, _oob: (u32, u64), _data: &[u8]) -> Result<(), NandError> {
        Ok(())
    }
    /// Drops the slots staged for a page whose program failed (the FTL
    /// has staged them again at their new place).
    fn page_unstage(&mut self, _die: u32, _block: u32, _page: u32) {}
    /// Whether a slot of a block's next page is stranded in the power-
    /// loss-protected buffer: staged for a page whose program failed, so a
    /// cut did not program it there (a mount writes it elsewhere).
    #[inline]
    fn slot_stranded(&self, _die: u32, _block: u32, _page: u32, _slot: u32) -> bool {
        false
    }
    /// Records that `lba` was trimmed by the host write numbered `seq`
    /// (the card's trim journal), where the media holds data.
    #[inline]
    fn trim_record(&mut self, _lba: u32, _seq: u64) {}
    /// The sequence number of `lba`'s last recorded trim (0: none).
    #[inline]
    fn trim_seq(&self, _lba: u32) -> u64 {
        0
    }
    /// The newest recorded trim's sequence number (0: none).
    #[inline]
    fn trim_seq_newest(&self) -> u64 {
        0
    }
    /// Whether a programmed slot's bytes match its OOB checksum (true
    /// where the media holds no data).
    #[inline]
    fn slot_intact(&self, _die: u32, _block: u32, _page: u32, _slot: u32) -> bool {
        true
    }
    /// A programmed slot's out-of-band LBA and sequence number, without
    /// counting a read; `None` where the media holds no data.
    #[inline]
    fn oob_peek(&self, _die: u32, _block: u32, _page: u32, _slot: u32) -> Option<(u32, u64)> {
        None
    }
    /// The card's system area (its own metadata), where the media keep
    /// one and the card wrote it.
    #[inline]
    fn system_read(&self) -> Option<Vec<u8>> {
        None
    }
    /// Replaces the system area, where the media keep one.
    #[inline]
    fn system_write(&mut self, _bytes: &[u8]) -> Result<(), NandError> {
        Ok(())
    }
}

/// The whole interface an FTL needs: both.
pub trait Media: Nand + Persist {}

impl<T: Nand + Persist> Media for T {}

/// Media operations by kind and purpose.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MediaCounters {
    pub page_reads_user: u64,
    pub page_reads_gc: u64,
    pub mpage_programs_user: u64,
    pub mpage_programs_gc: u64,
    pub mpage_programs_parity: u64,
    pub block_erases: u64,
}

impl MediaCounters {
    pub(crate) fn count_read(&mut self, tag: OpTag) {
        match tag {
            OpTag::Gc | OpTag::GcParity => self.page_reads_gc += 1,
            _ => self.page_reads_user += 1,
        }
    }
    pub(crate) fn count_program(&mut self, tag: OpTag) {
        match tag {
            OpTag::User | OpTag::Format => self.mpage_programs_user += 1,
            OpTag::Gc => self.mpage_programs_gc += 1,
            OpTag::Parity | OpTag::GcParity => self.mpage_programs_parity += 1,
        }
    }
}
