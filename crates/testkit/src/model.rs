//! Reference models: what a store must read back, kept the plainest way
//! (a map), for tests to compare a card or an FTL against.

use std::collections::BTreeMap;

/// A slot-addressed store (an FTL's LBAs): each slot's bytes as last
/// written; a slot never written, trimmed or formatted away reads zeros.
#[derive(Debug, Default)]
pub struct Slots {
    map: BTreeMap<u64, Vec<u8>>,
    slot_bytes: usize,
}

impl Slots {
    pub fn new(slot_bytes: usize) -> Slots {
        assert!(slot_bytes > 0, "a slot holds bytes");
        Slots { map: BTreeMap::new(), slot_bytes }
    }

    pub fn write(&mut self, slot: u64, bytes: &[u8]) {
        assert_eq!(bytes.len(), self.slot_bytes, "a whole slot is written");
        self.map.insert(slot, bytes.to_vec());
    }

    pub fn trim(&mut self, slot: u64) {
        self.map.remove(&slot);
    }

    /// A format: every slot reads zeros.
    pub fn clear(&mut self) {
        self.map.clear();
    }

    /// `got`, read from `slot`, is what the model holds there.
    pub fn check(&self, slot: u64, got: &[u8]) -> Result<(), SlotWrong> {
        let right = match self.map.get(&slot) {
            Some(want) => got == want.as_slice(),
            None => got.len() == self.slot_bytes && got.iter().all(|&b| b == 0),
        };
        if right {
            Ok(())
        } else {
            Err(SlotWrong { slot, written: self.map.contains_key(&slot) })
        }
    }

    /// The slots written and not trimmed since, in order.
    pub fn written(&self) -> impl Iterator<Item = u64> + '_ {
        self.map.keys().copied()
    }
}

/// A slot read back other than the model holds it: written, or never
/// written (it should read zeros).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("slot {slot} read back wrong ({})", if *written { "written" } else { "never written: zeros" })]
pub struct SlotWrong {
    pub slot: u64,
    pub written: bool,
}

/// A byte-addressed block device written a value a 512-byte sector:
/// sectors not in the map read zeros.
#[derive(Debug, Default)]
pub struct Sectors(BTreeMap<u64, u8>);

impl Sectors {
    pub fn new() -> Sectors {
        Sectors::default()
    }

    /// Sector `sector` holds `v` in every byte.
    pub fn set(&mut self, sector: u64, v: u8) {
        self.0.insert(sector, v);
    }

    pub fn get(&self, sector: u64) -> u8 {
        self.0.get(&sector).copied().unwrap_or(0)
    }

    /// Bytes `from..to` (sector-aligned) hold `v`.
    pub fn fill(&mut self, from: u64, to: u64, v: u8) {
        debug_assert!(from.is_multiple_of(512) && to.is_multiple_of(512), "sector-aligned");
        for s in (from..to).step_by(512) {
            self.0.insert(s / 512, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_read_what_was_last_written_and_zeros_elsewhere() {
        let mut m = Slots::new(4);
        m.write(3, &[1, 2, 3, 4]);
        assert!(m.check(3, &[1, 2, 3, 4]).is_ok());
        assert!(m.check(3, &[1, 2, 3, 5]).is_err());
        assert!(m.check(4, &[0; 4]).is_ok());
        assert!(m.check(4, &[0, 0, 0, 1]).is_err());
        m.trim(3);
        assert!(m.check(3, &[1, 2, 3, 4]).is_err());
        m.write(5, &[9; 4]);
        m.clear();
        assert_eq!(m.written().count(), 0);
    }

    #[test]
    fn sectors_fill_whole_sectors() {
        let mut m = Sectors::new();
        m.fill(512, 2048, 7);
        assert_eq!((m.get(0), m.get(1), m.get(3), m.get(4)), (0, 7, 7, 0));
    }
}
