//! A 4-ary min-heap of plain keys.

/// A 4-ary min-heap of plain keys: shallower than a binary heap (four
/// levels for the 256 slots of 16T/16Q) and with keys that compare in one
/// instruction. The write buffer's pending pages use it; the engine's events
/// are a [`SlotTree`](crate::SlotTree), checked against this heap in the tests.
#[derive(Debug, Clone, Default)]
pub struct MinHeap<K: Ord + Copy> {
    v: Vec<K>,
}

impl<K: Ord + Copy> MinHeap<K> {
    pub fn with_capacity(n: usize) -> MinHeap<K> {
        MinHeap { v: Vec::with_capacity(n) }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.v.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }
    #[inline]
    /// The largest key (a scan: for rare questions, not the hot path).
    pub fn max(&self) -> Option<K> {
        self.v.iter().copied().max()
    }
    /// Keys at or below `k` (a scan: for rare questions, not the hot path).
    pub fn count_le(&self, k: K) -> usize {
        self.v.iter().filter(|&&x| x <= k).count()
    }
    pub fn peek(&self) -> Option<K> {
        self.v.first().copied()
    }
    #[inline]
    pub fn push(&mut self, k: K) {
        let mut i = self.v.len();
        self.v.push(k);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.v[parent] <= k {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = k;
    }
    #[inline]
    pub fn pop(&mut self) -> Option<K> {
        let top = *self.v.first()?;
        let last = self.v.pop().expect("not empty");
        if !self.v.is_empty() {
            self.sift_down(last);
        }
        Some(top)
    }
    /// Replaces the smallest key with `k` (one sift down, no pop and push).
    #[inline]
    pub fn replace_top(&mut self, k: K) {
        debug_assert!(!self.v.is_empty());
        self.sift_down(k);
    }
    /// Puts `k` in place of the root. Bottom-up (Wegener): the hole goes
    /// down to a leaf along the least children without comparing with `k`,
    /// then `k` rises from there. The keys put here (a completion time
    /// after the current one, the heap's last key) mostly belong near the
    /// bottom, so the rise is short, and the way down has no branch that
    /// depends on the keys.
    #[inline]
    fn sift_down(&mut self, k: K) {
        let n = self.v.len();
        let v = &mut self.v[..];
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            let m = if first + 4 <= n {
                // A full node: the least of four children by a tournament
                // the compiler turns into conditional moves.
                let a = if v[first + 1] < v[first] { first + 1 } else { first };
                let b = if v[first + 3] < v[first + 2] { first + 3 } else { first + 2 };
                if v[b] < v[a] {
                    b
                } else {
                    a
                }
            } else if first < n {
                let mut m = first;
                for c in first + 1..n {
                    if v[c] < v[m] {
                        m = c;
                    }
                }
                m
            } else {
                break;
            };
            v[i] = v[m];
            i = m;
        }
        while i > 0 {
            let parent = (i - 1) / 4;
            if v[parent] <= k {
                break;
            }
            v[i] = v[parent];
            i = parent;
        }
        v[i] = k;
    }
}
