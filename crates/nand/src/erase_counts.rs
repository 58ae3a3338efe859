//! Each die block's erase count, with the lowest and highest kept as blocks
//! are erased (a run's report asks for them every round; scanning every
//! block each time cost ~2% of a mixed workload's wall time).

/// Erase counts, block-major as the array keeps its blocks.
#[derive(Debug, Clone)]
pub(crate) struct EraseCounts {
    counts: Vec<u32>,
    min: u32,
    max: u32,
    /// Blocks whose count is `min`: when the last of them is erased, the
    /// lowest count is found again (once per wear level on a levelled card).
    at_min: usize,
}

impl EraseCounts {
    pub(crate) fn new(blocks: usize) -> EraseCounts {
        EraseCounts { counts: vec![0; blocks], min: 0, max: 0, at_min: blocks }
    }

    /// Sets every block's count (from a store) and finds the range again.
    pub(crate) fn load(&mut self, count_of: impl Fn(usize) -> u32) {
        for (b, c) in self.counts.iter_mut().enumerate() {
            *c = count_of(b);
        }
        self.rescan();
    }

    #[inline]
    pub(crate) fn get(&self, b: usize) -> u32 {
        self.counts[b]
    }

    /// Counts one more erase of block `b`; returns its new count.
    #[inline]
    pub(crate) fn erase(&mut self, b: usize) -> u32 {
        let c = &mut self.counts[b];
        *c += 1;
        let new = *c;
        self.max = self.max.max(new);
        if new - 1 == self.min {
            self.at_min -= 1;
            if self.at_min == 0 {
                self.rescan();
            }
        }
        new
    }

    pub(crate) fn min(&self) -> u32 {
        debug_assert_eq!(self.min, self.counts.iter().copied().min().unwrap_or(0), "the lowest erase count kept");
        self.min
    }

    pub(crate) fn max(&self) -> u32 {
        debug_assert_eq!(self.max, self.counts.iter().copied().max().unwrap_or(0), "the highest erase count kept");
        self.max
    }

    pub(crate) fn total(&self) -> u64 {
        self.counts.iter().map(|&c| c as u64).sum()
    }

    fn rescan(&mut self) {
        self.min = self.counts.iter().copied().min().unwrap_or(0);
        self.max = self.counts.iter().copied().max().unwrap_or(0);
        self.at_min = self.counts.iter().filter(|&&c| c == self.min).count();
    }
}

#[cfg(test)]
mod tests {
    use super::EraseCounts;

    #[test]
    fn the_range_follows_the_erases() {
        let mut e = EraseCounts::new(3);
        assert_eq!((e.min(), e.max()), (0, 0));
        assert_eq!(e.erase(1), 1);
        assert_eq!((e.min(), e.max()), (0, 1));
        e.erase(0);
        assert_eq!((e.min(), e.max()), (0, 1), "block 2 is still at 0");
        e.erase(2);
        assert_eq!((e.min(), e.max()), (1, 1), "the last block at the lowest count erased");
        e.erase(2);
        e.erase(2);
        assert_eq!((e.min(), e.max(), e.total()), (1, 3, 5));
        e.load(|b| [7, 4, 9][b]);
        assert_eq!((e.min(), e.max(), e.get(1)), (4, 9, 4));
        e.erase(1);
        assert_eq!((e.min(), e.max()), (5, 9));
    }

    #[test]
    fn an_empty_array_has_no_range() {
        let e = EraseCounts::new(0);
        assert_eq!((e.min(), e.max(), e.total()), (0, 0, 0));
    }
}
