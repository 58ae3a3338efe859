//! A host driver's map checkpoints (`ftl.map_checkpoint_*`): when each
//! comes and how long it holds the map lock.

use super::costs::Checkpoint;
use units::Ns;

/// The entries of a map page: 8-byte entries in 4 KiB pages.
pub(super) const MAP_PAGE_SLOTS: u64 = 512;

/// One member's map checkpoints: when the next is due, the map pages
/// host writes changed since the last, and the page the last write
/// changed.
#[derive(Clone)]
pub(super) struct MapCheckpoints {
    cp: Option<Checkpoint>,
    next: Ns,
    pages: u64,
    last_page: u64,
}

impl MapCheckpoints {
    /// The first half an interval in: where a test's rounds fall against
    /// the checkpoints is arbitrary, and half an interval is the mean; a
    /// round shorter than the interval (a scaled card's) then meets one
    /// from the first.
    pub(super) fn new(cp: Option<Checkpoint>) -> MapCheckpoints {
        MapCheckpoints { cp, next: cp.map_or(Ns::MAX, |cp| cp.interval_ns / 2), pages: 0, last_page: u64::MAX }
    }

    /// Host slots `first..=last` written: the map pages holding their
    /// entries join the next checkpoint (a page the write before left
    /// dirty, once). Random writes on a full-size card's map (millions of
    /// pages) change a page each; a stream, a page every 512 slots. The
    /// count is the full-size card's on a scaled one too, whose smaller
    /// map random writes would revisit more often.
    #[inline]
    pub(super) fn written(&mut self, first: u32, last: u32) {
        if self.cp.is_none() {
            return;
        }
        let (a, b) = (first as u64 / MAP_PAGE_SLOTS, last as u64 / MAP_PAGE_SLOTS);
        self.pages += b - a + 1 - (a == self.last_page) as u64;
        self.last_page = b;
    }

    /// The checkpoint due by `ready`, if one is: when it starts and how
    /// long it holds the lock (its share of each map page changed since
    /// the last; those after it, due while nothing was written, find
    /// nothing to persist).
    #[inline(always)]
    pub(super) fn due(&mut self, ready: Ns) -> Option<(Ns, Ns)> {
        if ready < self.next {
            return None;
        }
        self.take(ready)
    }

    #[cold]
    #[inline(never)]
    fn take(&mut self, ready: Ns) -> Option<(Ns, Ns)> {
        let cp = self.cp.expect("a checkpoint is due only where the profile sets one");
        let (at, hold) = (self.next, std::mem::take(&mut self.pages) * cp.ns_per_page);
        self.last_page = u64::MAX;
        self.next += ((ready - at) / cp.interval_ns + 1) * cp.interval_ns;
        debug_assert!(self.next > ready);
        (hold > 0).then_some((at, hold))
    }
}
