//! The simulator's media: the NAND array with its rules, plus a log of the
//! operations the FTL issued during one host command, for the timing model.

use nand::{Array, Geometry, Media, MediaCounters, NandError, OpTag};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Program,
    Erase,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaOp {
    pub kind: OpKind,
    pub tag: OpTag,
    pub die: u32,
    pub block: u32,
    pub page: u32,
    /// Slots read (reads only).
    pub mask: u32,
    /// Reads only: extra attempts the read took (read retries, each
    /// another sense and transfer), written by the error model before the
    /// op is timed.
    pub retries: u16,
    /// Reads only: a read of another die's page of the stripe, to rebuild
    /// the page before it in the list, which was beyond ECC (a whole
    /// multi-plane page sensed and moved, ahead of queued work).
    pub stripe_part: bool,
}

impl MediaOp {
    fn new(kind: OpKind, tag: OpTag, die: u32, block: u32, page: u32, mask: u32) -> MediaOp {
        MediaOp { kind, tag, die, block, page, mask, retries: 0, stripe_part: false }
    }
}

pub struct Recorder {
    pub array: Array,
    pub ops: Vec<MediaOp>,
}

impl Recorder {
    pub fn new(array: Array) -> Recorder {
        Recorder { array, ops: Vec::with_capacity(1024) }
    }
}

impl Media for Recorder {
    fn geometry(&self) -> &Geometry {
        self.array.geometry()
    }
    #[inline]
    fn prefetch_block(&self, die: u32, block: u32) {
        self.array.prefetch_block(die, block)
    }
    #[inline]
    fn page_read(&mut self, die: u32, block: u32, page: u32, slot_mask: u32, tag: OpTag, out: Option<&mut [u8]>) -> Result<(), NandError> {
        self.array.page_read(die, block, page, slot_mask, tag, out)?;
        // Slots of one page read back to back are one read.
        if let Some(last) = self.ops.last_mut() {
            if last.kind == OpKind::Read && last.tag == tag && last.die == die && last.block == block && last.page == page {
                last.mask |= slot_mask;
                return Ok(());
            }
        }
        self.ops.push(MediaOp::new(OpKind::Read, tag, die, block, page, slot_mask));
        Ok(())
    }
    #[inline]
    fn page_program(&mut self, die: u32, block: u32, page: u32, tag: OpTag, oob: &[u32], data: Option<&[u8]>) -> Result<(), NandError> {
        let r = self.array.page_program(die, block, page, tag, oob, data);
        // A failed program took its time before its status said so.
        if matches!(r, Ok(()) | Err(NandError::ProgramFailed { .. })) {
            self.ops.push(MediaOp::new(OpKind::Program, tag, die, block, page, 0));
        }
        r
    }
    fn block_erase(&mut self, die: u32, block: u32, tag: OpTag) -> Result<(), NandError> {
        let r = self.array.block_erase(die, block, tag);
        // A failed erase took its time before its status said so.
        if matches!(r, Ok(()) | Err(NandError::EraseFailed { .. })) && tag != OpTag::Format {
            self.ops.push(MediaOp::new(OpKind::Erase, tag, die, block, 0, 0));
        }
        r
    }
    fn block_factory_bad(&self, die: u32, block: u32) -> bool {
        self.array.block_factory_bad(die, block)
    }
    fn counters(&self) -> &MediaCounters {
        self.array.counters()
    }
    fn holds_data(&self) -> bool {
        self.array.holds_data()
    }
    fn block_next_page(&self, die: u32, block: u32) -> u32 {
        self.array.block_next_page(die, block)
    }
    fn mpage_peek(&self, die: u32, block: u32, page: u32) -> Option<&[u8]> {
        self.array.mpage_peek(die, block, page)
    }
    fn block_erase_count(&self, die: u32, block: u32) -> u32 {
        self.array.block_erase_count(die, block)
    }
    fn oob_seqs_set(&mut self, die: u32, block: u32, page: u32, seqs: &[u64]) {
        self.array.oob_seqs_set(die, block, page, seqs)
    }
    fn oob_peek(&self, die: u32, block: u32, page: u32, slot: u32) -> Option<(u32, u64)> {
        self.array.oob_peek(die, block, page, slot)
    }
    fn page_unstage(&mut self, die: u32, block: u32, page: u32) {
        self.array.page_unstage(die, block, page)
    }
    fn slot_stage(&mut self, die: u32, block: u32, page: u32, slot: u32, oob: (u32, u64), data: &[u8]) {
        self.array.slot_stage(die, block, page, slot, oob, data)
    }
    fn trim_record(&mut self, lba: u32, seq: u64) {
        self.array.trim_record(lba, seq)
    }
    fn trim_seq(&self, lba: u32) -> u64 {
        self.array.trim_seq(lba)
    }
    fn slot_intact(&self, die: u32, block: u32, page: u32, slot: u32) -> bool {
        self.array.slot_intact(die, block, page, slot)
    }
    fn slot_stranded(&self, die: u32, block: u32, page: u32, slot: u32) -> bool {
        self.array.slot_stranded(die, block, page, slot)
    }
    fn die_fail(&mut self, die: u32, now: bool) {
        self.array.die_fail(die, now)
    }
    fn system_read(&self) -> Option<Vec<u8>> {
        self.array.system_read()
    }
    fn system_write(&mut self, bytes: &[u8]) -> Result<(), NandError> {
        self.array.system_write(bytes)
    }
}
