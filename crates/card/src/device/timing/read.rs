//! A member's reads: a host read's place among the hardware's
//! outstanding reads, its map work, sense, transfer and decode (ahead of
//! queued work, or in die order); a GC read; a stripe's page read to
//! rebuild one beyond ECC; a read of slots no page holds.

use super::{Costs, HostRead, MemberTiming};
use crate::recorder::MediaOp;
use nand::OpTag;
use units::{transfer_ns, Ns};

impl MemberTiming {
    /// When a read ready at `ready` gets a place among the hardware's
    /// outstanding reads (at once without a limit).
    #[inline(always)]
    fn read_slot_take(&self, ready: Ns) -> Ns {
        match &self.read_slots {
            Some(p) => ready.max(p.free_first()),
            None => ready,
        }
    }

    /// The host read just charged, if it took a place among the
    /// hardware's outstanding reads, holds it until its data is out
    /// (`done`).
    #[inline(always)]
    pub(super) fn read_slot_release(&mut self, done: Ns) {
        if let (Some(start), Some(p)) = (self.read_slot_taken.take(), &mut self.read_slots) {
            p.reserve(start, done.saturating_sub(start).max(1));
        }
    }

    /// A read: sense (tR), then the named slots (or a short read's
    /// codewords) cross the channel, the die holding the data in its
    /// register until then; then ECC decode and DMA. Each retry senses and
    /// moves the data again and is decoded again (the die held meanwhile;
    /// the channel is charged once). A host read returns when its data is
    /// out; a GC read moves `gc_ready` (and returns `ready`).
    #[inline(always)]
    pub(super) fn read(&mut self, c: &Costs, op: &MediaOp, ready: Ns, read: HostRead) -> Ns {
        let d = op.die as usize;
        let (ch, ctl) = (c.die_channel[d] as usize, c.die_controller[d] as usize);
        let (xfer, path) = match read.sub_slot() {
            Some(bytes) if op.tag == OpTag::User => (bytes / c.codeword_bytes * c.codeword_transfer_ns, transfer_ns(bytes, c.read_path_bytes_per_sec)),
            _ => {
                let n = op.mask.count_ones() as u64;
                (n * c.slot_transfer_ns, n * c.read_path_slot_ns)
            }
        };
        let attempts = 1 + op.retries as u64;
        if op.tag == OpTag::Gc {
            // Not kept in the die's trail: a host read meets what is left
            // of a GC read (tens of microseconds) as idle time.
            let sensed = self.gc_sense(c, op, ready, (c.read_ns + xfer) * attempts, false);
            let out = self.channels[ch].reserve(sensed - xfer, xfer).max(sensed);
            let done = self.read_path[ctl].reserve(out, path * attempts);
            self.gc_ready = self.gc_ready.max(done);
            return ready;
        }
        // Host reads go ahead of queued programs and GC work, behind the
        // operation in progress on the die (what is left of it).
        let planes = c.plane_reads(op.mask, read);
        let ready = self.map_work(c, ready, planes);
        // The map looked up, the read goes to the hardware once it has a
        // place among its outstanding reads (one for all the pages of a
        // host read, held until its data is out: `charge`).
        let ready = match (self.read_slot_taken, &self.read_slots) {
            (None, Some(_)) => {
                let t = self.read_slot_take(ready);
                self.read_slot_taken = Some(t);
                t
            }
            _ => ready,
        };
        let sense = (c.read_ns * planes + xfer) * attempts;
        // In die order a read is queued work like any other, and short: the
        // die's trail (kept for reads that go ahead) need not keep it.
        let u = c.unit_of(d as u32);
        let sensed = if c.read_priority { self.dies[u].reserve_priority(ready, sense) } else { self.dies[u].reserve_unkept(ready, sense) };
        let out = self.channels[ch].reserve_priority(sensed - xfer, xfer, c.mpage_transfer_ns).max(sensed);
        self.read_path[ctl].reserve_priority(out, path * attempts, c.read_path_mpage_ns)
    }

    /// One page of the stripe read to rebuild a page beyond ECC (the XOR
    /// follows): a whole multi-plane page sensed and moved, ahead of queued
    /// work as a host read is. Returns when its data is out.
    #[inline(never)]
    pub(super) fn stripe_read(&mut self, c: &Costs, op: &MediaOp, ready: Ns) -> Ns {
        let d = op.die as usize;
        let (ch, ctl) = (c.die_channel[d] as usize, c.die_controller[d] as usize);
        let ready = self.map_work(c, ready, 1);
        let sensed = self.gc_sense(c, op, ready, c.read_ns + c.mpage_transfer_ns, true);
        let out = self.channels[ch].reserve_priority(sensed - c.mpage_transfer_ns, c.mpage_transfer_ns, c.mpage_transfer_ns).max(sensed);
        self.read_path[ctl].reserve_priority(out, c.read_path_mpage_ns, c.read_path_mpage_ns)
    }

    /// A host read's slots that no flash page holds (`slots`: never
    /// written or trimmed), looked up from its command (`read_ready`):
    /// the map work of as many pages, and nothing of the flash; returns
    /// when the answer (zeros) is ready. On a card-managed card the
    /// firmware looks them up; on a host-managed one the driver, under
    /// the map lock.
    #[inline(never)]
    pub(in crate::device) fn read_unflashed(&mut self, c: &Costs, slots: u32) -> Ns {
        let ready = self.read_ready;
        self.map_work(c, ready, c.unflashed_pages(slots))
    }
}
