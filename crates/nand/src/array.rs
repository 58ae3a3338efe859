use crate::endurance::Endurance;
use crate::erase_counts::EraseCounts;
use crate::media::{MediaCounters, Nand, OpTag, Persist};
use crate::store::PageStore;
use crate::{Geometry, NandError};
use units::SLOT_BYTES;

/// A clean stop's record of each die block's programmed pages that does
/// not fit the array (`Array::with_store_known`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeptPagesError {
    #[error("{kept} blocks' programmed pages for an array of {blocks} blocks")]
    Blocks { kept: usize, blocks: usize },
    #[error("block {block}: {pages} pages programmed, of {of}")]
    Pages { block: usize, pages: u16, of: u32 },
}

/// The state of every die block of one member device, with the NAND rules
/// enforced: erase before program, pages of a block programmed in order.
/// With `with_data`, it also keeps every programmed byte (the tests'
/// data-holding cards).
pub struct Array {
    geometry: Geometry,
    /// Next programmable page of each die block, block-major (the dies of
    /// one superblock are neighbours); `pages_per_block` once full. Erased
    /// means 0.
    next_page: Vec<u16>,
    erase_count: EraseCounts,
    die_failed: Vec<bool>,
    /// Which blocks are bad at the factory and when blocks wear out (none:
    /// no block ever fails).
    endurance: Option<Endurance>,
    /// Every programmed byte and each slot's out-of-band LBA, where the
    /// array holds data.
    store: Option<PageStore>,
    counters: MediaCounters,
    staged_pages: u64,
    blocks_scanned: u64,
}

impl Array {
    /// A copy of this array, where it keeps no data (a store's bytes, in
    /// memory or a file, are not copied: none then).
    pub fn snapshot(&self) -> Option<Array> {
        if self.store.is_some() {
            return None;
        }
        Some(Array {
            geometry: self.geometry.clone(),
            next_page: self.next_page.clone(),
            erase_count: self.erase_count.clone(),
            die_failed: self.die_failed.clone(),
            endurance: self.endurance.clone(),
            store: None,
            counters: self.counters.clone(),
            staged_pages: self.staged_pages,
            blocks_scanned: self.blocks_scanned,
        })
    }

    /// A factory-fresh array: every block erased, erase counts zero.
    pub fn new(geometry: Geometry, with_data: bool) -> Array {
        let store = with_data.then(|| PageStore::memory(&geometry));
        Array::with_store(geometry, store)
    }

    /// An array keeping its bytes in `store` (memory or a file): its blocks'
    /// state (pages programmed, erase counts) is what the store says, so an
    /// array on a store an earlier run left is that run's array.
    pub fn with_store(geometry: Geometry, store: Option<PageStore>) -> Array {
        let blocks = geometry.dies() as usize * geometry.blocks_per_plane as usize;
        let mut a = Array::fresh(geometry, store);
        if a.store.is_some() {
            a.state_from_store();
            a.staged_program();
        }
        debug_assert_eq!(a.next_page.len(), blocks);
        a
    }

    /// An array on a store a clean stop left, each die block's programmed
    /// pages as `next_pages` (kept by that stop, `Array::next_pages`): no
    /// page's out-of-band area is read, erase counts are the store's. A
    /// clean stop leaves nothing in the power-loss-protected buffer, so no
    /// page is finished here. Refused where `next_pages` does not fit the
    /// geometry.
    pub fn with_store_known(geometry: Geometry, store: PageStore, next_pages: &[u16]) -> Result<Array, KeptPagesError> {
        let blocks = geometry.dies() as usize * geometry.blocks_per_plane as usize;
        if next_pages.len() != blocks {
            return Err(KeptPagesError::Blocks { kept: next_pages.len(), blocks });
        }
        if let Some(b) = next_pages.iter().position(|&p| p as u32 > geometry.pages_per_block) {
            return Err(KeptPagesError::Pages { block: b, pages: next_pages[b], of: geometry.pages_per_block });
        }
        let mut a = Array::fresh(geometry, Some(store));
        a.next_page.copy_from_slice(next_pages);
        let store = a.store.as_ref().expect("a store");
        a.erase_count.load(|b| store.erase_count(b));
        Ok(a)
    }

    /// Each die block's programmed pages (in the array's block order), for
    /// a clean stop to keep (`Array::with_store_known`).
    pub fn next_pages(&self) -> &[u16] {
        &self.next_page
    }

    /// Pages programmed and erase counts of every die block, from the store.
    fn state_from_store(&mut self) {
        let g = self.geometry.clone();
        let spm = g.slots_per_mpage() as usize;
        let store = self.store.as_ref().expect("a store");
        self.erase_count.load(|b| store.erase_count(b));
        for die in 0..g.dies() {
            for block in 0..g.blocks_per_plane {
                let b = self.state_index(die, block);
                let first = self.mpage_offset(die, block, 0) / g.mpage_bytes() as usize * spm;
                // A block unmarked holds nothing: its OOB is not read.
                if !store.block_used(first) {
                    self.next_page[b] = 0;
                    continue;
                }
                self.blocks_scanned += 1;
                // Slots are programmed in order: a page is whole when its
                // last slot is (one cut short is finished by `staged_program`).
                let programmed = (0..g.pages_per_block).take_while(|&p| store.oob_programmed(first + p as usize * spm + spm - 1)).count();
                self.next_page[b] = programmed as u16;
            }
        }
    }

    /// Programs every page that holds staged slots (the power-loss-
    /// protected buffer at a cut) or was cut short with some slots
    /// programmed: what the card's capacitors finish. Slots of such a page
    /// that hold nothing are padding.
    fn staged_program(&mut self) {
        let g = self.geometry.clone();
        let spm = g.slots_per_mpage() as usize;
        for die in 0..g.dies() {
            for block in 0..g.blocks_per_plane {
                let b = self.state_index(die, block);
                let page = self.next_page[b] as u32;
                if page == g.pages_per_block {
                    continue;
                }
                let first = self.mpage_offset(die, block, page) / g.mpage_bytes() as usize * spm;
                let store = self.store.as_mut().expect("a store");
                if !store.block_used(first) {
                    continue;
                }
                // A page whose program failed is not programmed (its slots,
                // stranded in the buffer, are the FTL's to write again).
                if !(first..first + spm).any(|s| store.oob_staged(s) || store.oob_programmed(s)) || (first..first + spm).any(|s| store.oob_stranded(s)) {
                    continue;
                }
                for s in first..first + spm {
                    if store.oob_staged(s) || store.oob_programmed(s) {
                        store.oob_program(s, store.oob_lba(s));
                    } else {
                        store.oob_seq_set(s, 0);
                        store.oob_program(s, units::LBA_UNMAPPED);
                    }
                }
                self.next_page[b] += 1;
                self.staged_pages += 1;
            }
        }
    }

    /// Die blocks whose out-of-band areas were read when the array was
    /// opened on its store: those written since their erase (marked).
    pub fn blocks_scanned(&self) -> u64 {
        self.blocks_scanned
    }

    /// Pages the power-loss-protected buffer held when the array was
    /// opened on its store, programmed then.
    pub fn staged_pages(&self) -> u64 {
        self.staged_pages
    }

    /// The store, taken back (a power cut in tests).
    pub fn into_store(self) -> Option<PageStore> {
        self.store
    }

    pub fn store(&self) -> Option<&PageStore> {
        self.store.as_ref()
    }

    pub fn store_mut(&mut self) -> Option<&mut PageStore> {
        self.store.as_mut()
    }

    /// The store's index of a slot (data offset / slot size).
    pub fn slot_index(&self, die: u32, block: u32, page: u32, slot: u32) -> usize {
        self.mpage_offset(die, block, page) / SLOT_BYTES as usize + slot as usize
    }

    fn fresh(geometry: Geometry, store: Option<PageStore>) -> Array {
        let blocks = geometry.dies() as usize * geometry.blocks_per_plane as usize;
        Array {
            store,
            next_page: vec![0; blocks],
            erase_count: EraseCounts::new(blocks),
            die_failed: vec![false; geometry.dies() as usize],
            endurance: None,
            staged_pages: 0,
            blocks_scanned: 0,
            geometry,
            counters: MediaCounters::default(),
        }
    }

    #[inline]
    fn block_index(&self, die: u32, block: u32, page: u32) -> Result<usize, NandError> {
        let g = &self.geometry;
        if die >= g.dies() || block >= g.blocks_per_plane || page >= g.pages_per_block {
            return Err(NandError::OutOfRange { die, block, page, dies: g.dies(), blocks: g.blocks_per_plane, pages: g.pages_per_block });
        }
        if self.die_failed[die as usize] {
            return Err(NandError::DieFailed { die });
        }
        Ok(self.state_index(die, block))
    }

    /// Index of a die block's state: block-major, so that the blocks of a
    /// superblock (the same block of every die), which the FTL programs in
    /// turn, share cache lines.
    #[inline]
    fn state_index(&self, die: u32, block: u32) -> usize {
        block as usize * self.geometry.dies() as usize + die as usize
    }

    /// Byte offset of a multi-plane page in the data store. Slots of an
    /// mpage are contiguous, so a slot's bytes are `SLOT_BYTES` at
    /// `mpage_offset + slot * SLOT_BYTES`.
    fn mpage_offset(&self, die: u32, block: u32, page: u32) -> usize {
        let g = &self.geometry;
        let mpage = (die as usize * g.blocks_per_plane as usize + block as usize) * g.pages_per_block as usize + page as usize;
        mpage * g.mpage_bytes() as usize
    }

    /// Sets the bad-block model: factory marks, and the wear at which
    /// each block's erase fails.
    pub fn endurance_set(&mut self, e: Option<Endurance>) {
        self.endurance = e;
    }

    pub fn endurance(&self) -> Option<&Endurance> {
        self.endurance.as_ref()
    }

    pub fn erase_count(&self, die: u32, block: u32) -> u32 {
        self.erase_count.get(self.state_index(die, block))
    }
    /// Next programmable page of a die block (`pages_per_block` when full).
    pub fn next_page(&self, die: u32, block: u32) -> u32 {
        self.next_page[self.state_index(die, block)] as u32
    }
    /// The LBA recorded in a slot's out-of-band area (data-holding arrays only).
    pub fn oob_lba(&self, die: u32, block: u32, page: u32, slot: u32) -> Option<u32> {
        let spm = self.geometry.slots_per_mpage() as usize;
        let off = self.mpage_offset(die, block, page) / self.geometry.mpage_bytes() as usize * spm + slot as usize;
        self.store.as_ref().map(|s| s.oob_lba(off))
    }
    /// Raw bytes of one slot as stored (data-holding arrays only), for checkers.
    pub fn slot_bytes(&self, die: u32, block: u32, page: u32, slot: u32) -> Option<&[u8]> {
        let off = self.mpage_offset(die, block, page) + slot as usize * SLOT_BYTES as usize;
        self.store.as_ref().map(|s| &s.data()[off..off + SLOT_BYTES as usize])
    }
    pub fn erase_count_max(&self) -> u32 {
        self.erase_count.max()
    }
    pub fn erase_count_min(&self) -> u32 {
        self.erase_count.min()
    }
    pub fn erase_count_total(&self) -> u64 {
        self.erase_count.total()
    }
}

impl Nand for Array {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }
    #[inline]
    fn prefetch_block(&self, die: u32, block: u32) {
        // The read rule's check (`next_page`): at full size the table is
        // larger than what stays cached beside the L2P's random traffic.
        if let Some(n) = self.next_page.get(self.state_index(die, block)) {
            units::prefetch_read(n);
        }
    }
    #[inline]
    fn page_read(&mut self, die: u32, block: u32, page: u32, slot_mask: u32, tag: OpTag, out: Option<&mut [u8]>) -> Result<(), NandError> {
        let b = self.block_index(die, block, page)?;
        if page >= self.next_page[b] as u32 {
            return Err(NandError::ReadUnwritten { die, block, page });
        }
        debug_assert!(slot_mask != 0 && (slot_mask as u64) < (1u64 << self.geometry.slots_per_mpage()));
        self.counters.count_read(tag);
        if let (Some(store), Some(out)) = (&self.store, out) {
            let data = store.data();
            let base = self.mpage_offset(die, block, page);
            let slot = SLOT_BYTES as usize;
            let mut mask = slot_mask;
            while mask != 0 {
                let i = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                out[i * slot..(i + 1) * slot].copy_from_slice(&data[base + i * slot..base + (i + 1) * slot]);
            }
        }
        Ok(())
    }
    #[inline]
    fn page_program(&mut self, die: u32, block: u32, page: u32, tag: OpTag, oob: &[u32], data: Option<&[u8]>) -> Result<(), NandError> {
        let b = self.block_index(die, block, page)?;
        let next = self.next_page[b] as u32;
        if page < next {
            return Err(NandError::NotErased { die, block, page });
        }
        if page > next {
            return Err(NandError::ProgramOutOfOrder { die, block, page, next });
        }
        self.counters.count_program(tag);
        // A worn-out block fails the program's status check: the program
        // took its time, the page holds nothing (it stays the next page,
        // unprogrammed), and the block must not be used again.
        if let Some(e) = &self.endurance {
            if e.program_fails(die, block, self.erase_count.get(b), page, self.geometry.pages_per_block) {
                // What the buffer held for the page stays there, for the
                // FTL to write elsewhere; never programmed here at a cut.
                let (first, spm) = (self.slot_index(die, block, page, 0), self.geometry.slots_per_mpage() as usize);
                if let Some(s) = &mut self.store {
                    s.slots_strand(first, spm);
                }
                return Err(NandError::ProgramFailed { die, block, page });
            }
        }
        let off = self.mpage_offset(die, block, page);
        let len = self.geometry.mpage_bytes() as usize;
        let spm = self.geometry.slots_per_mpage() as usize;
        let base = off / len * spm;
        // The bytes first: a store that cannot take them leaves the page
        // unprogrammed.
        if let (Some(store), Some(data)) = (&mut self.store, data) {
            store.page_write(base, &data[..len]).map_err(|e| NandError::store(&e))?;
        }
        self.next_page[b] += 1;
        let Some(store) = &mut self.store else { return Ok(()) };
        for (i, &lba) in oob[..spm].iter().enumerate() {
            store.oob_program(base + i, lba);
        }
        Ok(())
    }
    fn block_erase(&mut self, die: u32, block: u32, tag: OpTag) -> Result<(), NandError> {
        let b = self.block_index(die, block, 0)?;
        let _ = tag;
        self.next_page[b] = 0;
        let count = self.erase_count.erase(b);
        self.counters.block_erases += 1;
        let off = self.mpage_offset(die, block, 0);
        let mpage_bytes = self.geometry.mpage_bytes() as usize;
        let pages = self.geometry.pages_per_block as usize;
        let spm = self.geometry.slots_per_mpage() as usize;
        if let Some(store) = &mut self.store {
            store.discard(off, mpage_bytes * pages);
            store.oob_clear(off / mpage_bytes * spm, spm * pages);
            store.erase_count_set(b, count);
        }
        // A worn-out block fails its erase's status check: what it held is
        // gone (cleared above), and it must not be used again.
        if self.endurance.as_ref().is_some_and(|e| e.erase_fails(die, block, count)) {
            return Err(NandError::EraseFailed { die, block });
        }
        Ok(())
    }
    fn block_factory_bad(&self, die: u32, block: u32) -> bool {
        self.endurance.as_ref().is_some_and(|e| e.factory_bad(die, block))
    }
    fn counters(&self) -> &MediaCounters {
        &self.counters
    }
    fn block_erase_count(&self, die: u32, block: u32) -> u32 {
        self.erase_count(die, block)
    }
    fn block_next_page(&self, die: u32, block: u32) -> u32 {
        self.next_page(die, block)
    }
    fn die_fail(&mut self, die: u32, now: bool) {
        self.die_failed[die as usize] = true;
        if !now {
            return;
        }
        let g = self.geometry.clone();
        for block in 0..g.blocks_per_plane {
            for page in 0..self.next_page(die, block) {
                let first = self.slot_index(die, block, page, 0);
                if let Some(store) = &mut self.store {
                    (first..first + g.slots_per_mpage() as usize).for_each(|s| store.slot_garble(s));
                }
            }
        }
    }
}

impl Persist for Array {
    fn holds_data(&self) -> bool {
        self.store.is_some()
    }
    fn oob_seqs_set(&mut self, die: u32, block: u32, page: u32, seqs: &[u64]) {
        let spm = self.geometry.slots_per_mpage() as usize;
        let base = self.mpage_offset(die, block, page) / self.geometry.mpage_bytes() as usize * spm;
        if let Some(store) = &mut self.store {
            for (i, &seq) in seqs[..spm].iter().enumerate() {
                store.oob_seq_set(base + i, seq);
            }
        }
    }
    fn oob_peek(&self, die: u32, block: u32, page: u32, slot: u32) -> Option<(u32, u64)> {
        let i = self.slot_index(die, block, page, slot);
        self.store.as_ref().map(|s| (s.oob_lba(i), s.oob_seq(i)))
    }
    fn slot_stage(&mut self, die: u32, block: u32, page: u32, slot: u32, oob: (u32, u64), data: &[u8]) -> Result<(), NandError> {
        debug_assert_eq!(page, self.next_page(die, block), "only the next page of a block is staged");
        let i = self.slot_index(die, block, page, slot);
        match &mut self.store {
            Some(s) => s.slot_stage(i, oob.0, oob.1, data).map_err(|e| NandError::store(&e)),
            None => Ok(()),
        }
    }
    fn slot_stranded(&self, die: u32, block: u32, page: u32, slot: u32) -> bool {
        let i = self.slot_index(die, block, page, slot);
        // A block unmarked holds nothing: its OOB is not read.
        self.store.as_ref().is_some_and(|s| s.block_used(i) && s.oob_stranded(i))
    }
    fn page_unstage(&mut self, die: u32, block: u32, page: u32) {
        debug_assert_eq!(page, self.next_page(die, block), "only a block's next page is staged");
        let (first, spm) = (self.slot_index(die, block, page, 0), self.geometry.slots_per_mpage() as usize);
        if let Some(s) = &mut self.store {
            s.oob_clear(first, spm);
        }
    }
    fn trim_record(&mut self, lba: u32, seq: u64) {
        if let Some(s) = &mut self.store {
            s.trim_seq_set(lba, seq);
        }
    }
    fn trim_seq(&self, lba: u32) -> u64 {
        self.store.as_ref().map_or(0, |s| s.trim_seq(lba))
    }
    fn trim_seq_newest(&self) -> u64 {
        self.store.as_ref().map_or(0, |s| s.trim_seq_newest())
    }
    fn slot_intact(&self, die: u32, block: u32, page: u32, slot: u32) -> bool {
        let i = self.slot_index(die, block, page, slot);
        self.store.as_ref().is_none_or(|s| s.slot_intact(i))
    }
    fn system_read(&self) -> Option<Vec<u8>> {
        self.store.as_ref().and_then(|s| s.system()).map(|b| b.to_vec())
    }
    fn system_write(&mut self, bytes: &[u8]) -> Result<(), NandError> {
        match &mut self.store {
            Some(s) => s.system_set(bytes).map_err(|e| NandError::System(e.to_string())),
            None => Ok(()),
        }
    }
    fn mpage_peek(&self, die: u32, block: u32, page: u32) -> Option<&[u8]> {
        let off = self.mpage_offset(die, block, page);
        let len = self.geometry.mpage_bytes() as usize;
        self.store.as_ref().map(|s| &s.data()[off..off + len])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo() -> Geometry {
        Geometry { channels: 2, dies_per_channel: 1, planes_per_die: 2, blocks_per_plane: 4, pages_per_block: 4, page_size_bytes: 8192, oob_bytes: 448 }
    }

    #[test]
    fn nand_rules_are_enforced() {
        let mut a = Array::new(geo(), true);
        let oob = [1u32, 2, 3, 4];
        let data = vec![7u8; 16384];
        a.page_program(0, 1, 0, OpTag::User, &oob, Some(&data)).unwrap();
        // Skipping a page is refused, and so is programming a page twice.
        assert!(matches!(a.page_program(0, 1, 2, OpTag::User, &oob, None), Err(NandError::ProgramOutOfOrder { next: 1, .. })));
        assert!(matches!(a.page_program(0, 1, 0, OpTag::User, &oob, None), Err(NandError::NotErased { .. })));
        // Reading an unwritten page is refused; a written one reads back.
        assert!(matches!(a.page_read(0, 1, 1, 1, OpTag::User, None), Err(NandError::ReadUnwritten { .. })));
        let mut out = vec![0u8; 16384];
        a.page_read(0, 1, 0, 0b0110, OpTag::User, Some(&mut out)).unwrap();
        assert!(out[4096..12288].iter().all(|&b| b == 7));
        assert!(out[..4096].iter().all(|&b| b == 0), "unrequested slots are not copied");
        assert_eq!(a.oob_lba(0, 1, 0, 3), Some(4));
        a.block_erase(0, 1, OpTag::Gc).unwrap();
        assert_eq!(a.erase_count(0, 1), 1);
        assert_eq!(a.oob_lba(0, 1, 0, 3), Some(units::LBA_UNMAPPED));
        a.page_program(0, 1, 0, OpTag::User, &oob, None).unwrap();
        assert!(matches!(a.page_program(2, 0, 0, OpTag::User, &oob, None), Err(NandError::OutOfRange { .. })));
        a.die_fail(1, true);
        assert!(matches!(a.block_erase(1, 0, OpTag::Gc), Err(NandError::DieFailed { die: 1 })));
    }

    /// Reopened on its store (a cut: no clean stop), an array reads the
    /// out-of-band areas of the blocks written since their erase only,
    /// and finds every block's programmed pages and staged slots as they
    /// were; an erased block is read no more.
    #[test]
    fn a_reopened_store_reads_only_the_blocks_written_since_their_erase() {
        let g = geo();
        let path = std::env::temp_dir().join(format!("flashlab-array-marks-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let oob = [1u32, 2, 3, 4];
        let data = vec![7u8; 16384];
        let mut a = Array::with_store(g.clone(), Some(PageStore::file(&path, &g, "card", crate::store::Access::Own).unwrap().0));
        assert_eq!(a.blocks_scanned(), 0, "a new store has no block to read");
        a.page_program(0, 1, 0, OpTag::User, &oob, Some(&data)).unwrap();
        a.page_program(0, 1, 1, OpTag::User, &oob, Some(&data)).unwrap();
        a.page_program(1, 3, 0, OpTag::User, &oob, Some(&data)).unwrap();
        a.page_program(1, 2, 0, OpTag::User, &oob, Some(&data)).unwrap();
        a.block_erase(1, 2, OpTag::Gc).unwrap();
        a.slot_stage(0, 2, 0, 1, (9, 5), &data[..4096]).unwrap();
        let store = a.into_store().unwrap();
        // Die blocks in the pages' order (die major), 16 slots each.
        let marked = |die: usize, block: usize| store.block_used((die * 4 + block) * 16);
        assert!(marked(0, 1) && marked(0, 2) && marked(1, 3), "blocks written are marked");
        assert!(!marked(1, 2) && !marked(0, 0), "erased and unwritten blocks are not");
        drop(store);
        let a = Array::with_store(g.clone(), Some(PageStore::file(&path, &g, "card", crate::store::Access::Own).unwrap().0));
        assert_eq!(a.blocks_scanned(), 3, "die 0 blocks 1 and 2, die 1 block 3");
        assert_eq!((a.next_page(0, 1), a.next_page(1, 3), a.next_page(1, 2), a.next_page(0, 2)), (2, 1, 0, 1), "the staged page programmed at power-on");
        assert_eq!(a.staged_pages(), 1);
        assert_eq!(a.erase_count(1, 2), 1);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn geometry_validation_names_the_field() {
        let mut g = geo();
        g.channels = 0;
        let e = g.validate().unwrap_err().to_string();
        assert!(e.contains("geometry.channels") && e.contains("1..=1024"), "{e}");
        let mut g = geo();
        g.page_size_bytes = 6000;
        g.planes_per_die = 1;
        assert!(g.validate().unwrap_err().to_string().contains("whole number of 4 KiB slots"));
        assert!(geo().validate().is_ok());
    }
}
