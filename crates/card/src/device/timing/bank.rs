//! Banks worked in lockstep (`controller.lockstep_banks`): a parity
//! stripe's dies, one on each channel, sense, program and erase together
//! as one wide die. ioMemory works its flash this way (Fusion-io's
//! patent application 11/952,091: "a read command reads an entire page,
//! and because there are multiple solid-state storage elements ... in
//! parallel in a bank, an entire logical page is read"; a program or an
//! erase likewise occupies the bank, while "the bus arbiter may select
//! other commands for execution on the other banks").
//!
//! So a row is programmed once, when its stripe is whole (its parity
//! page, which comes after its data pages); a GC read or a stripe read
//! of a row the bank has just sensed takes no second sense; and a
//! superblock's erase is one erase of each bank, as long as its slowest
//! block's.

use super::{Costs, MemberTiming};
use crate::recorder::MediaOp;
use nand::OpTag;
use units::Ns;

/// What each bank has in hand.
#[derive(Clone, Default)]
pub(super) struct Banks {
    /// The row being filled in each bank, by writer (host data and its
    /// parity; GC's data and its parity).
    rows: Vec<[Row; 2]>,
    /// The row each bank sensed last for GC or a stripe rebuild, and when
    /// its data was in the registers.
    sensed: Vec<Option<(u32, u32, Ns)>>,
    /// Each bank's last erase: its block, its ready time and its end.
    erased: Vec<Option<(u32, Ns, Ns)>>,
}

/// A row being filled: its address, when its pages' data are all in the
/// bank, how many there are and how many of them are host pages (their
/// buffer slots free when the row is programmed).
#[derive(Clone, Copy, Default)]
struct Row {
    at: Option<(u32, u32)>,
    loaded: Ns,
    pages: u32,
    host_pages: u32,
}

impl Banks {
    pub(super) fn new(banks: usize) -> Banks {
        Banks { rows: vec![[Row::default(); 2]; banks], sensed: vec![None; banks], erased: vec![None; banks] }
    }
}

impl MemberTiming {
    /// The die's part of program `op`, its data loaded at `loaded`
    /// (`ahead`: ahead of the die's queued work). On its own die the
    /// program runs now; in a bank worked in lockstep the row is
    /// programmed once its parity page (or its last page) is loaded. A
    /// host page's buffer slots free when its program ends.
    #[inline(always)]
    pub(super) fn die_program(&mut self, c: &Costs, op: &MediaOp, loaded: Ns, ahead: bool) {
        let u = c.unit_of(op.die);
        let host = op.tag == OpTag::User;
        if c.bank_width == 1 {
            let end = self.unit_program(c, u, loaded, op.page, ahead);
            if host {
                self.buffer.release(end);
            }
            return;
        }
        let w = usize::from(matches!(op.tag, OpTag::Gc | OpTag::GcParity));
        let row = self.banks.rows[u][w];
        if row.at.is_some_and(|at| at != (op.block, op.page)) {
            // A row left without its parity (a stripe cut short) is
            // programmed as it stands before the next begins.
            self.row_program(c, u, w, ahead);
        }
        let row = &mut self.banks.rows[u][w];
        row.at = Some((op.block, op.page));
        row.loaded = row.loaded.max(loaded);
        row.pages += 1;
        row.host_pages += u32::from(host);
        if matches!(op.tag, OpTag::Parity | OpTag::GcParity) || row.pages >= c.bank_width {
            self.row_program(c, u, w, ahead);
        }
    }

    /// Programs bank `u`'s row of writer `w` (one tPROG for the row) and
    /// frees its host pages' buffer slots when it ends.
    fn row_program(&mut self, c: &Costs, u: usize, w: usize, ahead: bool) {
        let row = std::mem::take(&mut self.banks.rows[u][w]);
        let Some((_, page)) = row.at else { return };
        let end = self.unit_program(c, u, row.loaded, page, ahead);
        for _ in 0..row.host_pages {
            self.buffer.release(end);
        }
    }

    /// A program of page `page` on die timeline `u`; returns its end.
    #[inline(always)]
    fn unit_program(&mut self, c: &Costs, u: usize, loaded: Ns, page: u32, ahead: bool) -> Ns {
        if ahead {
            self.dies[u].reserve_priority(loaded, c.program_ns_of(page))
        } else {
            self.dies[u].reserve_loaded(loaded, c.program_ns_of(page), c.mpage_transfer_ns)
        }
    }

    /// A sense of `op`'s page for GC or a stripe rebuild, ready at
    /// `ready` and taking `sense` (`prio`: ahead of queued work); returns
    /// when its data is in the register. A bank worked in lockstep that
    /// has just sensed the page's row has it already.
    #[inline(always)]
    pub(super) fn gc_sense(&mut self, c: &Costs, op: &MediaOp, ready: Ns, sense: Ns, prio: bool) -> Ns {
        let u = c.unit_of(op.die);
        if c.bank_width > 1 {
            if let Some((b, p, at)) = self.banks.sensed[u] {
                if (b, p) == (op.block, op.page) && op.retries == 0 {
                    return ready.max(at);
                }
            }
        }
        let at = if prio { self.dies[u].reserve_priority(ready, sense) } else { self.dies[u].reserve_unkept(ready, sense) };
        if c.bank_width > 1 {
            self.banks.sensed[u] = Some((op.block, op.page, at));
        }
        at
    }

    /// An erase of `op`'s block, ready at `ready`: on its own die in its
    /// block's tBERS; in a bank worked in lockstep, the bank's erase of
    /// that block (one for all its dies, as long as its slowest block's).
    /// On a scaled card one erase of a die (a bank) in `pages_div` takes
    /// time (`Scaling::erase_takes_time`). Returns when it ends.
    pub(super) fn unit_erase(&mut self, c: &Costs, op: &MediaOp, ready: Ns) -> Ns {
        let u = c.unit_of(op.die);
        if c.bank_width > 1 {
            if let Some((b, r, end)) = self.banks.erased[u] {
                if (b, r) == (op.block, ready) {
                    return end;
                }
            }
        }
        let n = self.die_erases[u];
        self.die_erases[u] = n.wrapping_add(1);
        let end = if c.scaling.erase_takes_time(n) { self.timed_erase(c, u, op.block, ready) } else { ready };
        if c.bank_width > 1 {
            self.banks.erased[u] = Some((op.block, ready, end));
        }
        end
    }

    /// An erase that takes time: die timeline `u` erases block `block` in
    /// the block's own tBERS (a bank's, its slowest die's). Out of line:
    /// on a scaled card one erase in `pages_div`, kept out of the loop
    /// every operation runs.
    #[cold]
    #[inline(never)]
    fn timed_erase(&mut self, c: &Costs, u: usize, block: u32, ready: Ns) -> Ns {
        let w = c.bank_width as usize;
        let tbers = (u * w..u * w + w).map(|d| self.block_erase_ns(c, d, block)).max().unwrap_or(0);
        self.dies[u].reserve(ready, tbers)
    }
}
