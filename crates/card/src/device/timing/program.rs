//! A member's programs: a GC page after its data is read and its thread
//! has handled it, a host page after its map work and its merged slots,
//! each into an erased block through the program path, the channel and
//! the die; or, where the driver holds writes against its groomer, a host
//! page ahead of the groomer's bookings.

use super::{Costs, MemberTiming};
use crate::recorder::MediaOp;
use nand::OpTag;
use units::Ns;

impl MemberTiming {
    /// A program: GC data must first have been read out of the victim, and
    /// a GC thread must have handled the page's slots (on a host core, for
    /// a host-managed card); the block must be erased; then the program
    /// path, the channel and the die. A host page frees its buffer slots
    /// when its program ends.
    #[inline(always)]
    pub(super) fn program(&mut self, c: &Costs, op: &MediaOp, ready: Ns) {
        let d = op.die as usize;
        let (ch, ctl) = (c.die_channel[d] as usize, c.die_controller[d] as usize);
        let gc = matches!(op.tag, OpTag::Gc | OpTag::GcParity);
        self.checkpoint_due(ready);
        let r = match op.tag {
            OpTag::Gc => {
                // A host thread relocates a page once it has read it (a
                // blocking read); a controller's firmware handles the
                // page's map work while the read is under way, and the
                // program waits for both. (On a host-managed card the GC
                // threads run on host cores of their own, which host I/O
                // does not get: `Device::host_io_cores`, unless the
                // scheduler gives them to the benchmark's threads in turns:
                // `gc_thread_work`.)
                let thread_ready = if c.gc_on_host { ready.max(self.gc_ready) } else { ready };
                self.gc_thread_work(c, thread_ready, c.gc_mpage_cpu_ns).max(self.gc_ready)
            }
            OpTag::GcParity => ready.max(self.gc_ready),
            OpTag::User => {
                // The page's merged slots are read and merged first.
                let m = std::mem::take(&mut self.merged_ready);
                self.gc_cpu.reserve_priority(ready, c.user_program_ns, c.gc_row_cpu_ns).max(m)
            }
            OpTag::Parity => self.map_work(c, ready, 1),
            _ => ready,
        };
        // Where the driver holds writes against its groomer (`hold`), a
        // host page goes to the card as it fills, ahead of the groomer's
        // pages not yet relocated (booked at the times its thread will
        // have them), into a block the driver's reserve holds erased: the
        // hold, not the block's erase, is what it waits for.
        if c.write_through && op.tag == OpTag::User {
            // Its slots were programmed as they came (`through`).
            self.buffer.release(r);
            return;
        }
        let ahead = c.write_hold && matches!(op.tag, OpTag::User | OpTag::Parity);
        let loaded = if ahead {
            self.load_ahead(c, (ctl, ch), r)
        } else {
            let r = r.max(self.erased_at[self.erased_index(d, op.block)]);
            let staged = if gc && !c.gc_through_program_path { r } else { self.program_path[ctl].reserve(r, c.program_path_mpage_ns) };
            self.channels[ch].reserve(staged, c.mpage_transfer_ns)
        };
        self.die_program(c, op, loaded, ahead);
        if let Some(h) = &mut self.hold {
            h.consumed(c.spm);
        }
    }

    /// A host page's data loaded ahead of the work queued on the program
    /// path and the channel (`ctl`, `ch`), from `ready`; its program then
    /// goes ahead of the die's queued work (`die_program`). Returns when
    /// the data is loaded.
    #[inline(never)]
    fn load_ahead(&mut self, c: &Costs, (ctl, ch): (usize, usize), ready: Ns) -> Ns {
        let staged = self.program_path[ctl].reserve_priority(ready, c.program_path_mpage_ns, c.program_path_mpage_ns);
        self.channels[ch].reserve_priority(staged, c.mpage_transfer_ns, c.mpage_transfer_ns)
    }

    /// A GC thread's `work` from `ready`: on the thread that frees first;
    /// where the host's scheduler shares the driver's cores with the
    /// benchmark's threads and the host's I/O cores are taken (the last
    /// host I/O waited longer than a turn for one), in the thread's turns only (its core's
    /// time in the other thread's turns is the benchmark's, not counted as
    /// GC's).
    #[inline]
    fn gc_thread_work(&mut self, c: &Costs, ready: Ns, work: Ns) -> Ns {
        if !self.host_cores_taken {
            return self.gc_cpu.reserve(ready, work);
        }
        let slice = c.gc_shared_slice_ns.expect("the cores are found taken only where they are shared (Device::host_cores_taken)");
        let start = ready.max(self.gc_cpu.free_first());
        let span = super::sched::sliced_end(start, work, slice) - start;
        let end = self.gc_cpu.reserve(ready, span);
        self.gc_cpu.busy_ns -= span - work;
        end
    }
}
