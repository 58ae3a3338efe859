//! The simulator's media: the NAND array with its rules, plus a log of the
//! operations the FTL issued during one host command, for the timing model.

use nand::tap::{Hook, Read, Tap};
use nand::{Array, Nand, NandError, OpTag};

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

/// The log of one host command's media operations: the hook the
/// simulator's media run with ([`nand::Tap`] forwards the rest).
#[derive(Clone)]
pub struct OpLog {
    pub ops: Vec<MediaOp>,
}

/// The simulator's media: the array, its operations logged.
pub type Recorder = Tap<OpLog>;

/// The array `array`, its operations logged.
pub fn recorder(array: Array) -> Recorder {
    Tap { array, hook: OpLog { ops: Vec::with_capacity(1024) } }
}

impl Hook for OpLog {
    #[inline]
    fn read(&mut self, array: &mut Array, r: Read, out: Option<&mut [u8]>) -> Result<(), NandError> {
        array.page_read(r.die, r.block, r.page, r.slot_mask, r.tag, out)?;
        // Slots of one page read back to back are one read.
        if let Some(last) = self.ops.last_mut() {
            if last.kind == OpKind::Read && last.tag == r.tag && last.die == r.die && last.block == r.block && last.page == r.page {
                last.mask |= r.slot_mask;
                return Ok(());
            }
        }
        self.ops.push(MediaOp::new(OpKind::Read, r.tag, r.die, r.block, r.page, r.slot_mask));
        Ok(())
    }
    #[inline]
    fn program(&mut self, array: &mut Array, die: u32, block: u32, page: u32, tag: OpTag, oob: &[u32], data: Option<&[u8]>) -> Result<(), NandError> {
        let r = array.page_program(die, block, page, tag, oob, data);
        // A failed program took its time before its status said so.
        if matches!(r, Ok(()) | Err(NandError::ProgramFailed { .. })) {
            self.ops.push(MediaOp::new(OpKind::Program, tag, die, block, page, 0));
        }
        r
    }
    fn erase(&mut self, array: &mut Array, die: u32, block: u32, tag: OpTag) -> Result<(), NandError> {
        let r = array.block_erase(die, block, tag);
        // A failed erase took its time before its status said so.
        if matches!(r, Ok(()) | Err(NandError::EraseFailed { .. })) && tag != OpTag::Format {
            self.ops.push(MediaOp::new(OpKind::Erase, tag, die, block, 0, 0));
        }
        r
    }
}
