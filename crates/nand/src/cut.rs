//! What a power cut does to the NAND operation in flight (the test kit's
//! cut tester, `testkit::Cutter`, cuts at a chosen one):
//! - with power-loss protection, the card's capacitors finish it (and the
//!   array programs the staged buffer when it is opened again);
//! - without, a program in flight is lost, and on MLC the lower page that
//!   shares its cells ([`paired_lower`]) is damaged as well: its bytes no
//!   longer match their checksum (Grupp et al., "Characterizing flash
//!   memory: anomalies, observations, and applications", MICRO 2009: an
//!   interrupted upper-page program corrupts the lower page programmed
//!   earlier). An erase in flight leaves its block as it was.

/// The lower page that shares its cells with upper page `page` of a block
/// of two-bit MLC, in the common shared-page order (word line `w` holds
/// lower page `2w - 1` and upper page `2w + 2`; word line 0 pages 0 and 2):
/// page 2 pairs with 0, every even page from 4 with the page 3 before it.
/// Lower pages (0, 1 and the odd pages) pair with none.
pub fn paired_lower(page: u32) -> Option<u32> {
    match page {
        2 => Some(0),
        p if p >= 4 && p % 2 == 0 => Some(p - 3),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_pages_pair_with_earlier_lower_pages_only() {
        let pairs: Vec<_> = (0..10).map(paired_lower).collect();
        assert_eq!(pairs, [None, None, Some(0), None, Some(1), None, Some(3), None, Some(5), None]);
        for p in 0..256 {
            if let Some(l) = paired_lower(p) {
                assert!(l < p && paired_lower(l).is_none(), "page {p} pairs with {l}");
            }
        }
    }
}
