//! A power cut at a chosen NAND operation: [`Cutter`] wraps a
//! data-holding [`Array`] and lets programs and erases through until the
//! chosen one; that one and every operation after it fail with
//! [`NandError::PowerCut`]. What is in the store then is what a card
//! would find at its next power-on. What the cut does to the operation in
//! flight is the NAND's ([`nand::cut`]): with power-loss protection the
//! capacitors finish it; without, a program in flight is lost and on MLC
//! its paired lower page damaged.

use nand::cut::paired_lower;
use nand::tap::{Hook, Read, Tap};
use nand::{Array, Nand, NandError, OpTag, Persist};

/// Media cut at a chosen program or erase.
pub type Cutter = Tap<Cut>;

/// `array` cut at its `at`-th program or erase from now (0: the next);
/// `plp`: the card's capacitors finish the operation in flight; `mlc`: a
/// program cut short damages its paired lower page.
pub fn cutter(array: Array, at: u64, plp: bool, mlc: bool) -> Cutter {
    assert!(array.holds_data(), "a power cut is tested on media that hold data");
    Tap { array, hook: Cut { ops: 0, at, plp, mlc, cut: false } }
}

/// Where the power goes: the hook of a [`Cutter`].
pub struct Cut {
    ops: u64,
    at: u64,
    plp: bool,
    mlc: bool,
    cut: bool,
}

impl Cut {
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
    fn damage_paired(&self, array: &mut Array, die: u32, block: u32, page: u32) {
        let Some(lower) = paired_lower(page).filter(|_| self.mlc) else { return };
        if lower >= array.next_page(die, block) {
            return;
        }
        let spm = array.geometry().slots_per_mpage();
        let first = array.slot_index(die, block, lower, 0);
        let store = array.store_mut().expect("data-holding array");
        for s in first..first + spm as usize {
            store.slot_damage(s);
        }
    }
}

impl Hook for Cut {
    fn read(&mut self, array: &mut Array, r: Read, out: Option<&mut [u8]>) -> Result<(), NandError> {
        if self.cut {
            return Err(NandError::PowerCut);
        }
        array.page_read(r.die, r.block, r.page, r.slot_mask, r.tag, out)
    }
    fn program(&mut self, array: &mut Array, die: u32, block: u32, page: u32, tag: OpTag, oob: &[u32], data: Option<&[u8]>) -> Result<(), NandError> {
        if !self.step()? {
            return array.page_program(die, block, page, tag, oob, data);
        }
        self.cut = true;
        if self.plp {
            array.page_program(die, block, page, tag, oob, data)?;
        } else {
            self.damage_paired(array, die, block, page);
        }
        Err(NandError::PowerCut)
    }
    fn erase(&mut self, array: &mut Array, die: u32, block: u32, tag: OpTag) -> Result<(), NandError> {
        if !self.step()? {
            return array.block_erase(die, block, tag);
        }
        self.cut = true;
        if self.plp {
            match array.block_erase(die, block, tag) {
                Ok(()) | Err(NandError::EraseFailed { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Err(NandError::PowerCut)
    }
    fn system_write(&mut self, array: &mut Array, bytes: &[u8]) -> Result<(), NandError> {
        if self.cut {
            return Err(NandError::PowerCut);
        }
        array.system_write(bytes)
    }
    fn powered(&self) -> bool {
        !self.cut
    }
}
