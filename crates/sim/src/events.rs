//! The engine's event queue.

/// The engine's event queue: one key per host slot, in a tournament (winner)
/// tree whose root is the least key. A closed loop replaces the key of the
/// slot that just completed, which costs one climb from that slot's leaf to
/// the root, a comparison per level (eight for the 256 slots of 16T/16Q)
/// and no data-dependent branch: cheaper than a heap's sift, which must
/// find its way down. Keys are unique (they carry their slot), so the order
/// of events is exactly a heap's.
#[derive(Debug, Clone)]
pub struct SlotTree {
    /// Node `i`'s children are `2i` and `2i + 1`; leaves from `leaves`.
    t: Vec<u64>,
    leaves: usize,
}

impl SlotTree {
    /// `slots` leaves, every key `u64::MAX` (no event).
    pub fn new(slots: usize) -> SlotTree {
        let leaves = slots.max(1).next_power_of_two();
        SlotTree { t: vec![u64::MAX; 2 * leaves], leaves }
    }
    /// The least key.
    #[inline]
    pub fn min(&self) -> u64 {
        self.t[1]
    }
    /// Sets `slot`'s key.
    #[inline]
    pub fn set(&mut self, slot: usize, key: u64) {
        let mut i = self.leaves + slot;
        let t = &mut self.t[..];
        t[i] = key;
        let mut k = key;
        while i > 1 {
            // SAFETY: `i < 2 * leaves = t.len()` (checked by the store
            // above), and `i ^ 1` and `i / 2` are below `i` or beside it.
            unsafe {
                k = k.min(*t.get_unchecked(i ^ 1));
                i >>= 1;
                *t.get_unchecked_mut(i) = k;
            }
        }
    }
    /// `slot`'s key (`u64::MAX`: no event).
    pub fn key_of(&self, slot: usize) -> u64 {
        self.t[self.leaves + slot]
    }
    /// The greatest key, if any slot has one.
    pub fn max(&self) -> Option<u64> {
        self.t[self.leaves..].iter().copied().filter(|&k| k != u64::MAX).max()
    }
    /// Applies `f` to every key but the empty ones; `f` must keep their
    /// order.
    pub fn map_keys(&mut self, f: impl Fn(u64) -> u64) {
        for k in &mut self.t {
            if *k != u64::MAX {
                *k = f(*k);
            }
        }
    }
}
