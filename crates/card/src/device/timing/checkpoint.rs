//! A host driver's map checkpoints (`ftl.map_checkpoint_*`): when each
//! comes and how long it holds the map lock.

use super::costs::Checkpoint;
use units::Ns;

/// The entries of a map page: 8-byte entries in 4 KiB pages.
pub(super) const MAP_PAGE_SLOTS: u64 = 512;

/// One member's map checkpoints: when the next is due, the map page
/// changes host writes made since the last, the page the last write
/// changed, and the pages of the full-size card's map.
#[derive(Clone)]
pub(super) struct MapCheckpoints {
    cp: Option<Checkpoint>,
    next: Ns,
    changes: u64,
    last_page: u64,
    map_pages: u64,
}

impl MapCheckpoints {
    /// The first half an interval in: where a test's rounds fall against
    /// the checkpoints is arbitrary, and half an interval is the mean; a
    /// round shorter than the interval (a scaled card's) then meets one
    /// from the first.
    pub(super) fn new(cp: Option<Checkpoint>) -> MapCheckpoints {
        MapCheckpoints { cp, next: cp.map_or(Ns::MAX, |cp| cp.interval_ns / 2), changes: 0, last_page: u64::MAX, map_pages: u64::MAX }
    }

    /// The member's map on the full-size card holds `slots` entries (its
    /// format's usable slots): a checkpoint persists at most its pages.
    pub(super) fn map_of(&mut self, slots: u64) {
        self.map_pages = slots.div_ceil(MAP_PAGE_SLOTS).max(1);
    }

    /// Host slots `first..=last` written: a change to each map page
    /// holding their entries (to a page the write before changed, none):
    /// a random write changes a page, a stream a page every 512 slots.
    #[inline]
    pub(super) fn written(&mut self, first: u32, last: u32) {
        if self.cp.is_none() {
            return;
        }
        let (a, b) = (first as u64 / MAP_PAGE_SLOTS, last as u64 / MAP_PAGE_SLOTS);
        self.changes += b - a + 1 - (a == self.last_page) as u64;
        self.last_page = b;
    }

    /// The map pages `changes` changes leave to persist: changes spread
    /// over the full-size card's map of `map_pages` pages, as random
    /// writes spread them, touch `m (1 - e^(-n/m))` distinct pages on
    /// average (the occupancy of `m` bins by `n` balls), never more than
    /// the map holds. Counted on the full-size map, so a scaled card,
    /// whose own map is `scale` times smaller, persists as many pages a
    /// checkpoint as the full-size card. A stream's changes are few
    /// against the map, where the two counts agree.
    fn pages_of(changes: u64, map_pages: u64) -> u64 {
        if map_pages == u64::MAX {
            return changes;
        }
        let (n, m) = (changes as f64, map_pages as f64);
        let pages = (m * -(-n / m).exp_m1()).round() as u64;
        debug_assert!(pages <= changes.min(map_pages));
        pages
    }

    /// The checkpoint due by `ready`, if one is: when it starts and how
    /// long it holds the lock (its share of each map page changed since
    /// the last, `pages_of`; those after it, due while nothing was written, find
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
        let pages = MapCheckpoints::pages_of(std::mem::take(&mut self.changes), self.map_pages);
        let (at, hold) = (self.next, pages * cp.ns_per_page);
        self.last_page = u64::MAX;
        self.next += ((ready - at) / cp.interval_ns + 1) * cp.interval_ns;
        debug_assert!(self.next > ready);
        (hold > 0).then_some((at, hold))
    }
}
