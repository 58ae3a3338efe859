//! Cards kept after the write-only part of a steady chain (its
//! preconditioning and the write loads before its first read), for
//! calibrations of the same card that differ only in numbers that time
//! host reads alone (`card::HOST_READS_ONLY`). A fit moves such a number
//! as often as any other, and each move would run the same hours of
//! preconditioning writes again to reach the one read load after them;
//! host writes never meet those numbers (the device test
//! `host_writes_never_meet_the_read_command_rate`), so the kept card,
//! given the new numbers (`Device::host_reads_retimed`), is to the bit
//! the card the calibration would have built.
//!
//! A kept card is about as large as the scaled card (about 100 MB at
//! scale 64), so few are kept: those of the points a caller holds (a
//! fit's searches each hold the point they stand on, the one they move
//! the read numbers from), and the `spare` most recently used besides.

use crate::phase::Phase;
use crate::runs::run::Session;
use card::{Profile, State};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// A chain's card after its write-only part, and what that part measured.
pub(crate) struct Prefix {
    pub(crate) session: Session,
    pub(crate) precondition: Phase,
    pub(crate) phases: Vec<(State, Phase)>,
}

/// One kept card: empty until the first calibration to need it has run
/// the write-only part (the others that need it wait for it).
pub(crate) type Slot = Arc<Mutex<Option<Prefix>>>;

/// The kept cards, by the writes text of their profile
/// (`Profile::writes_text`) and the chain.
pub struct Prefixes {
    /// Oldest use first.
    entries: Mutex<Vec<Entry>>,
    /// By holder, the writes text of the point it holds.
    held: Mutex<HashMap<usize, Arc<str>>>,
    spare: usize,
    reused: AtomicU32,
}

struct Entry {
    writes: Arc<str>,
    chain: String,
    slot: Slot,
}

impl Prefixes {
    /// Keeps the cards of held points, and `spare` others.
    pub fn new(spare: usize) -> Prefixes {
        Prefixes { entries: Mutex::new(Vec::new()), held: Mutex::new(HashMap::new()), spare, reused: AtomicU32::new(0) }
    }

    /// Chains that started from a kept card.
    pub fn reused(&self) -> u32 {
        self.reused.load(Ordering::Relaxed)
    }

    /// `holder` stands on `profile` now (and no longer on the point it
    /// held before): the cards of that point are kept.
    pub fn hold(&self, holder: usize, profile: &Profile) {
        let writes: Arc<str> = profile.writes_text().into();
        self.held.lock().unwrap_or_else(PoisonError::into_inner).insert(holder, writes);
        self.trim();
    }

    /// `holder` is done.
    pub fn release(&self, holder: usize) {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).remove(&holder);
        self.trim();
    }

    /// The slot of `chain` on a card of `profile`, made if new.
    pub(crate) fn slot(&self, profile: &Profile, chain: String) -> Slot {
        let writes = profile.writes_text();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = match entries.iter().position(|e| e.chain == chain && *e.writes == *writes) {
            Some(i) => entries.remove(i).slot,
            None => Slot::default(),
        };
        entries.push(Entry { writes: writes.into(), chain, slot: slot.clone() });
        drop(entries);
        self.trim();
        slot
    }

    /// Counts a chain started from a kept card.
    pub(crate) fn used(&self) {
        self.reused.fetch_add(1, Ordering::Relaxed);
    }

    /// Drops the least recently used cards that no holder's point has,
    /// beyond the `spare` most recent.
    fn trim(&self) {
        let held: Vec<Arc<str>> = self.held.lock().unwrap_or_else(PoisonError::into_inner).values().cloned().collect();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let mut spare = self.spare;
        let mut keep = vec![true; entries.len()];
        for (i, e) in entries.iter().enumerate().rev() {
            if held.iter().any(|h| **h == *e.writes) {
                continue;
            }
            match spare {
                0 => keep[i] = false,
                _ => spare -= 1,
            }
        }
        let mut k = keep.into_iter();
        entries.retain(|_| k.next().expect("a flag an entry"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(gc_ns: f64) -> Profile {
        card::profile_load("p420m").unwrap().with_number("ftl.gc_ns_per_slot", gc_ns).unwrap()
    }

    #[test]
    fn the_cards_of_held_points_are_kept_and_spare_ones_by_last_use() {
        let kept = Prefixes::new(1);
        let (a, b, c) = (profile(10_000.0), profile(11_000.0), profile(12_000.0));
        kept.hold(0, &a);
        let sa = kept.slot(&a, "chain".into());
        let _ = kept.slot(&b, "chain".into());
        let _ = kept.slot(&c, "chain".into());
        // a is held; of b and c only the most recent is spare.
        assert!(Arc::ptr_eq(&sa, &kept.slot(&a, "chain".into())));
        let entries = |k: &Prefixes| k.entries.lock().unwrap().iter().map(|e| e.writes.clone()).collect::<Vec<_>>();
        assert_eq!(entries(&kept).len(), 2);
        assert!(!entries(&kept).iter().any(|w| **w == *b.writes_text()));
        // A point that differs only in the read command rate has a's card.
        let reads = a.with_number("controller.read_commands_per_sec", 1.0e6).unwrap();
        assert!(Arc::ptr_eq(&sa, &kept.slot(&reads, "chain".into())));
        // Another chain of the same point is another card.
        assert!(!Arc::ptr_eq(&sa, &kept.slot(&a, "other".into())));
        // Released, a's card is spare like any other.
        kept.release(0);
        let _ = kept.slot(&c, "chain".into());
        assert_eq!(entries(&kept).len(), 1);
    }
}
