//! The write buffer's slots, and when programmed pages free them.

use sim::MinHeap;
use units::Ns;

/// Slots of the write buffer, and when programmed pages free theirs. Every
/// page frees the same number of slots (one multi-plane page's), so only the
/// times are kept.
#[derive(Clone)]
pub(in crate::device) struct WriteBuffer {
    pub(in crate::device) free: u32,
    pub(in crate::device) slots_per_page: u32,
    pub(in crate::device) pending: MinHeap<Ns>,
    /// Slots in all: free ones, those of pending pages, and those of the
    /// pages being filled never exceed it.
    pub(in crate::device) capacity: u32,
    /// When the free slots became free: the program end of the page that
    /// freed them (slots are taken only when none is free, so the free
    /// ones are all that page's), 0 for the empty buffer's.
    pub(super) free_since: Ns,
    /// When the last page programmed so far ends: until then the buffer
    /// holds host data waiting for the flash.
    pub(in crate::device) programs_end: Ns,
}

impl WriteBuffer {
    pub(in crate::device) fn new(slots: u32, slots_per_page: u32) -> WriteBuffer {
        WriteBuffer {
            free: slots,
            capacity: slots,
            slots_per_page,
            pending: MinHeap::with_capacity((slots / slots_per_page) as usize + 1),
            free_since: 0,
            programs_end: 0,
        }
    }

    /// A slot for data arriving at `ready`: the time it can be accepted,
    /// never before the slot is free. The buffer thus passes writes no
    /// faster than their pages are programmed, at any queue depth.
    #[inline]
    pub(in crate::device) fn acquire(&mut self, ready: Ns) -> Ns {
        if self.free == 0 {
            self.free_since = self.pending.pop().expect("write buffer: slots are either free or pending a program");
            self.free = self.slots_per_page;
        }
        self.free -= 1;
        ready.max(self.free_since)
    }

    /// The slots of a page programmed by `at` free then.
    #[inline]
    pub(super) fn release(&mut self, at: Ns) {
        self.pending.push(at);
        self.programs_end = self.programs_end.max(at);
        debug_assert!(
            self.free as u64 + self.pending.len() as u64 * self.slots_per_page as u64 <= self.capacity as u64,
            "write buffer: more slots free or pending ({} + {} pages) than it holds ({})",
            self.free,
            self.pending.len(),
            self.capacity
        );
    }

    /// Slots holding data not yet programmed at `now` (pages whose program
    /// ends by then count as free).
    pub(in crate::device) fn held_at(&self, now: Ns) -> u64 {
        let freed = self.pending.count_le(now) as u64 * self.slots_per_page as u64;
        (self.capacity as u64).saturating_sub(self.free as u64 + freed)
    }
}
