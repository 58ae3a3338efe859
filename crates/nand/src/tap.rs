//! The one layer over an array: [`Tap`] forwards every operation of
//! [`Nand`] and [`Persist`] to the [`Array`] beneath and lets a [`Hook`]
//! act around the three that take the media's time (reads, programs,
//! erases) and the system area's writes. The simulator's recorder logs
//! them for the timing model; the test kit's cut tester lets them through
//! until the power goes. Nothing else is written twice.

use crate::media::{MediaCounters, Nand, OpTag, Persist};
use crate::Array;
use crate::{Geometry, NandError};

/// A page read as the FTL asked for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Read {
    pub die: u32,
    pub block: u32,
    pub page: u32,
    pub slot_mask: u32,
    pub tag: OpTag,
}

/// What a layer does around the array's operations. Each default runs the
/// operation on the array as it is.
pub trait Hook {
    #[inline]
    fn read(&mut self, array: &mut Array, r: Read, out: Option<&mut [u8]>) -> Result<(), NandError> {
        array.page_read(r.die, r.block, r.page, r.slot_mask, r.tag, out)
    }
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn program(&mut self, array: &mut Array, die: u32, block: u32, page: u32, tag: OpTag, oob: &[u32], data: Option<&[u8]>) -> Result<(), NandError> {
        array.page_program(die, block, page, tag, oob, data)
    }
    #[inline]
    fn erase(&mut self, array: &mut Array, die: u32, block: u32, tag: OpTag) -> Result<(), NandError> {
        array.block_erase(die, block, tag)
    }
    #[inline]
    fn system_write(&mut self, array: &mut Array, bytes: &[u8]) -> Result<(), NandError> {
        array.system_write(bytes)
    }
    /// Whether the store may still change (staged slots, out-of-band
    /// areas, the trim journal): not once the power is off.
    #[inline]
    fn powered(&self) -> bool {
        true
    }
}

/// An array with a hook around its operations.
pub struct Tap<H> {
    pub array: Array,
    pub hook: H,
}

impl<H: Clone> Tap<H> {
    /// A copy of the array and its hook (see [`Array::snapshot`]).
    pub fn snapshot(&self) -> Option<Tap<H>> {
        Some(Tap { array: self.array.snapshot()?, hook: self.hook.clone() })
    }
}

impl<H: Hook> Nand for Tap<H> {
    #[inline]
    fn geometry(&self) -> &Geometry {
        self.array.geometry()
    }
    #[inline]
    fn prefetch_block(&self, die: u32, block: u32) {
        self.array.prefetch_block(die, block)
    }
    #[inline]
    fn page_read(&mut self, die: u32, block: u32, page: u32, slot_mask: u32, tag: OpTag, out: Option<&mut [u8]>) -> Result<(), NandError> {
        self.hook.read(&mut self.array, Read { die, block, page, slot_mask, tag }, out)
    }
    #[inline]
    fn page_program(&mut self, die: u32, block: u32, page: u32, tag: OpTag, oob: &[u32], data: Option<&[u8]>) -> Result<(), NandError> {
        self.hook.program(&mut self.array, die, block, page, tag, oob, data)
    }
    #[inline]
    fn block_erase(&mut self, die: u32, block: u32, tag: OpTag) -> Result<(), NandError> {
        self.hook.erase(&mut self.array, die, block, tag)
    }
    #[inline]
    fn block_factory_bad(&self, die: u32, block: u32) -> bool {
        self.array.block_factory_bad(die, block)
    }
    #[inline]
    fn counters(&self) -> &MediaCounters {
        self.array.counters()
    }
    #[inline]
    fn block_erase_count(&self, die: u32, block: u32) -> u32 {
        self.array.block_erase_count(die, block)
    }
    #[inline]
    fn block_next_page(&self, die: u32, block: u32) -> u32 {
        self.array.block_next_page(die, block)
    }
    #[inline]
    fn die_fail(&mut self, die: u32, now: bool) {
        self.array.die_fail(die, now)
    }
}

impl<H: Hook> Persist for Tap<H> {
    #[inline]
    fn holds_data(&self) -> bool {
        self.array.holds_data()
    }
    #[inline]
    fn mpage_peek(&self, die: u32, block: u32, page: u32) -> Option<&[u8]> {
        self.array.mpage_peek(die, block, page)
    }
    #[inline]
    fn oob_seqs_set(&mut self, die: u32, block: u32, page: u32, seqs: &[u64]) {
        if self.hook.powered() {
            self.array.oob_seqs_set(die, block, page, seqs)
        }
    }
    #[inline]
    fn oob_peek(&self, die: u32, block: u32, page: u32, slot: u32) -> Option<(u32, u64)> {
        self.array.oob_peek(die, block, page, slot)
    }
    #[inline]
    fn slot_stage(&mut self, die: u32, block: u32, page: u32, slot: u32, oob: (u32, u64), data: &[u8]) -> Result<(), NandError> {
        if self.hook.powered() {
            return self.array.slot_stage(die, block, page, slot, oob, data);
        }
        Ok(())
    }
    #[inline]
    fn slot_stranded(&self, die: u32, block: u32, page: u32, slot: u32) -> bool {
        self.array.slot_stranded(die, block, page, slot)
    }
    #[inline]
    fn page_unstage(&mut self, die: u32, block: u32, page: u32) {
        if self.hook.powered() {
            self.array.page_unstage(die, block, page)
        }
    }
    #[inline]
    fn trim_record(&mut self, lba: u32, seq: u64) {
        if self.hook.powered() {
            self.array.trim_record(lba, seq)
        }
    }
    #[inline]
    fn trim_seq(&self, lba: u32) -> u64 {
        self.array.trim_seq(lba)
    }
    #[inline]
    fn trim_seq_newest(&self) -> u64 {
        self.array.trim_seq_newest()
    }
    #[inline]
    fn slot_intact(&self, die: u32, block: u32, page: u32, slot: u32) -> bool {
        self.array.slot_intact(die, block, page, slot)
    }
    #[inline]
    fn system_read(&self) -> Option<Vec<u8>> {
        self.array.system_read()
    }
    #[inline]
    fn system_write(&mut self, bytes: &[u8]) -> Result<(), NandError> {
        self.hook.system_write(&mut self.array, bytes)
    }
}
