//! How the controller reads a host read's pages: a random read one plane
//! page at a time, a sequential stream in whole multi-plane pages.
//!
//! A random read asks for pages the controller cannot foresee: it issues
//! one single-plane read (a sense, a transfer, a map lookup and a flash
//! command of the firmware) for each plane page the read needs. A read
//! that continues a stream (it starts where a recent read ended) is read
//! in whole multi-plane pages, one sense and one flash command for all the
//! planes, as a controller's read-ahead does. The evidence is the Micron
//! P420m's: its 8K 70/30 against its 4K reads asks an 8K random read for
//! about twice a 4K read's firmware time (two 4 KiB plane pages), while
//! its 128 KiB sequential read rating (3.3 GB/s) leaves under one plane
//! page's time for each of its 4 KiB. Cards whose plane pages hold 8 KiB
//! or more read a 4K or an aligned 8K read in one plane page either way;
//! a read that cannot span two plane pages is not looked up.

/// Streams the controller follows at once (assumed: controllers of the
/// time tracked a handful of streams; 16 covers the reviewers' 16 threads).
const STREAMS: usize = 16;

/// The next byte of each stream the controller follows, replaced oldest
/// first.
#[derive(Clone)]
pub(super) struct Streams {
    next: [u64; STREAMS],
    oldest: usize,
}

impl Default for Streams {
    fn default() -> Streams {
        Streams { next: [u64::MAX; STREAMS], oldest: 0 }
    }
}

impl Streams {
    /// Whether a read of `len` bytes at `offset` continues a stream; it
    /// becomes the stream's newest read, or starts a stream of its own.
    #[inline]
    pub(super) fn continues(&mut self, offset: u64, len: u64) -> bool {
        if let Some(s) = self.next.iter_mut().find(|n| **n == offset) {
            *s = offset + len;
            return true;
        }
        self.next[self.oldest] = offset + len;
        self.oldest = (self.oldest + 1) % STREAMS;
        false
    }
}

/// The plane pages of a multi-plane page that the slots of `mask` touch:
/// one bit a plane, each holding the slots that touch that plane.
pub(super) fn plane_masks(slots_per_mpage: u32, planes: u32) -> Vec<u32> {
    assert!(planes > 0 && slots_per_mpage <= 32, "a multi-plane page of {slots_per_mpage} slots on {planes} planes");
    let page = (slots_per_mpage as u64 * units::SLOT_BYTES) / planes as u64;
    (0..planes as u64)
        .map(|p| {
            (0..slots_per_mpage as u64).filter(|&s| s * units::SLOT_BYTES < (p + 1) * page && (s + 1) * units::SLOT_BYTES > p * page).fold(0, |m, s| m | 1 << s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_where_another_ended_continues_its_stream() {
        let mut s = Streams::default();
        assert!(!s.continues(0, 131_072), "the first read of a stream is not yet one");
        assert!(s.continues(131_072, 131_072));
        assert!(s.continues(262_144, 4096), "any size continues it");
        assert!(!s.continues(1 << 30, 8192), "a random read is not");
        assert!(s.continues(266_240, 4096), "the stream outlives a random read between");
    }

    #[test]
    fn the_oldest_stream_is_forgotten_first() {
        let mut s = Streams::default();
        for i in 0..=STREAMS as u64 {
            s.continues(i << 30, 4096);
        }
        assert!(!s.continues(4096, 4096), "the first stream was replaced");
        assert!(s.continues(((STREAMS as u64) << 30) + 4096, 4096), "the newest is kept");
    }

    #[test]
    fn streams_are_followed_side_by_side() {
        let mut s = Streams::default();
        let starts: Vec<u64> = (0..STREAMS as u64).map(|i| i * 1_000_000_007 * 512).collect();
        for &b in &starts {
            s.continues(b, 65_536);
        }
        for round in 1..10u64 {
            for &b in &starts {
                assert!(s.continues(b + round * 65_536, 65_536), "stream at {b}, read {round}");
            }
        }
    }

    #[test]
    fn plane_masks_follow_the_page_size() {
        assert_eq!(plane_masks(2, 2), vec![0b01, 0b10], "4 KiB pages: a slot a plane");
        assert_eq!(plane_masks(4, 2), vec![0b0011, 0b1100], "8 KiB pages: two slots a plane");
        assert_eq!(plane_masks(1, 2), vec![0b1, 0b1], "2 KiB pages: a slot spans both planes");
        assert_eq!(plane_masks(8, 1), vec![0xff]);
    }
}
