//! A power cut at a chosen NAND operation: [`Cutter`] wraps a
//! data-holding [`Array`] and lets programs and erases through until the
//! chosen one; that one and every operation after it fail with
//! [`NandError::PowerCut`]. What is in the store then is what a card
//! would find at its next power-on. What the cut does to the operation in
//! flight is the NAND's ([`nand::cut`]): with power-loss protection the
//! capacitors finish it; without, a program in flight is lost and on MLC
//! its paired lower page damaged.

use nand::cut::paired_lower;
use nand::{Array, Geometry, Media, MediaCounters, NandError, OpTag};

pub struct Cutter {
    array: Array,
    ops: u64,
    at: u64,
    plp: bool,
    mlc: bool,
    cut: bool,
}

impl Cutter {
    /// `array` cut at its `at`-th program or erase from now (0: the next).
    pub fn new(array: Array, at: u64, plp: bool, mlc: bool) -> Cutter {
        assert!(array.holds_data(), "a power cut is tested on media that hold data");
        Cutter { array, ops: 0, at, plp, mlc, cut: false }
    }
    /// Moves the cut to the `n`-th program or erase from now (a card
    /// mounted first, then cut).
    pub fn cut_after(&mut self, n: u64) {
        self.at = self.ops.saturating_add(n);
    }
    /// Whether the cut has come.
    pub fn is_cut(&self) -> bool {
        self.cut
    }
    /// Programs and erases let through or cut so far.
    pub fn ops(&self) -> u64 {
        self.ops
    }
    pub fn into_array(self) -> Array {
        self.array
    }

    /// Counts one program or erase; `Err` once the cut has come, `Ok(true)`
    /// for the operation the cut lands on.
    fn step(&mut self) -> Result<bool, NandError> {
        if self.cut {
            return Err(NandError::PowerCut);
        }
        let now = self.ops == self.at;
        self.ops += 1;
        Ok(now)
    }

    /// A program cut short on MLC without protection damages its paired
    /// lower page, where that page is programmed.
    fn damage_paired(&mut self, die: u32, block: u32, page: u32) {
        let Some(lower) = paired_lower(page).filter(|_| self.mlc) else { return };
        if lower >= self.array.next_page(die, block) {
            return;
        }
        let spm = self.array.geometry().slots_per_mpage();
        let first = self.array.slot_index(die, block, lower, 0);
        let store = self.array.store_mut().expect("data-holding array");
        for s in first..first + spm as usize {
            store.slot_damage(s);
        }
    }
}

impl Media for Cutter {
    fn geometry(&self) -> &Geometry {
        self.array.geometry()
    }
    fn page_read(&mut self, die: u32, block: u32, page: u32, slot_mask: u32, tag: OpTag, out: Option<&mut [u8]>) -> Result<(), NandError> {
        if self.cut {
            return Err(NandError::PowerCut);
        }
        self.array.page_read(die, block, page, slot_mask, tag, out)
    }
    fn page_program(&mut self, die: u32, block: u32, page: u32, tag: OpTag, oob: &[u32], data: Option<&[u8]>) -> Result<(), NandError> {
        if !self.step()? {
            return self.array.page_program(die, block, page, tag, oob, data);
        }
        self.cut = true;
        if self.plp {
            self.array.page_program(die, block, page, tag, oob, data)?;
        } else {
            self.damage_paired(die, block, page);
        }
        Err(NandError::PowerCut)
    }
    fn block_erase(&mut self, die: u32, block: u32, tag: OpTag) -> Result<(), NandError> {
        if !self.step()? {
            return self.array.block_erase(die, block, tag);
        }
        self.cut = true;
        if self.plp {
            match self.array.block_erase(die, block, tag) {
                Ok(()) | Err(NandError::EraseFailed { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Err(NandError::PowerCut)
    }
    fn block_factory_bad(&self, die: u32, block: u32) -> bool {
        self.array.block_factory_bad(die, block)
    }
    fn counters(&self) -> &MediaCounters {
        self.array.counters()
    }
    fn holds_data(&self) -> bool {
        true
    }
    fn block_next_page(&self, die: u32, block: u32) -> u32 {
        self.array.block_next_page(die, block)
    }
    fn mpage_peek(&self, die: u32, block: u32, page: u32) -> Option<&[u8]> {
        self.array.mpage_peek(die, block, page)
    }
    fn oob_seqs_set(&mut self, die: u32, block: u32, page: u32, seqs: &[u64]) {
        if !self.cut {
            self.array.oob_seqs_set(die, block, page, seqs)
        }
    }
    fn page_unstage(&mut self, die: u32, block: u32, page: u32) {
        if !self.cut {
            self.array.page_unstage(die, block, page)
        }
    }
    fn slot_stage(&mut self, die: u32, block: u32, page: u32, slot: u32, oob: (u32, u64), data: &[u8]) {
        if !self.cut {
            self.array.slot_stage(die, block, page, slot, oob, data)
        }
    }
    fn trim_record(&mut self, lba: u32, seq: u64) {
        if !self.cut {
            self.array.trim_record(lba, seq)
        }
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
    fn block_erase_count(&self, die: u32, block: u32) -> u32 {
        self.array.block_erase_count(die, block)
    }
    fn oob_peek(&self, die: u32, block: u32, page: u32, slot: u32) -> Option<(u32, u64)> {
        self.array.oob_peek(die, block, page, slot)
    }
    fn die_fail(&mut self, die: u32, now: bool) {
        self.array.die_fail(die, now)
    }
    fn system_read(&self) -> Option<Vec<u8>> {
        self.array.system_read()
    }
    fn system_write(&mut self, bytes: &[u8]) -> Result<(), NandError> {
        if self.cut {
            return Err(NandError::PowerCut);
        }
        self.array.system_write(bytes)
    }
}
