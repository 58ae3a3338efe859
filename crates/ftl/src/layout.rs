//! Where a physical slot lives, and which multi-plane pages hold parity.
//!
//! A superblock is block `b` of every plane of every die. Its slots are
//! numbered in write order: page row by page row, and within a row die by die
//! (dies are channel-minor, so neighbours sit on different channels), and
//! within a die's multi-plane page slot by slot. A physical slot address is
//! `superblock * slots_per_superblock + position`.
//!
//! Parity: the dies are cut into groups of `stripe_width` consecutive dies; in
//! every page row each group is one stripe of `stripe_width - 1` data pages
//! and one parity page. The parity page's place in the group rotates with the
//! row and the group (`(row + group) % width`), RAID-5 style, so that no die
//! holds all the parity and a failed die loses a mix of data and parity.

use nand::Geometry;
use units::Ppa;

/// Division of a `u32` by a divisor fixed at construction, by one multiply:
/// with `m = ceil(2^64 / d)`, `n / d == (m * n) >> 64` exactly for every
/// 32-bit `n` (Lemire, Kaser and Kurz, "Faster remainder by direct
/// computation", 2019). Address decoding runs for every slot moved or read.
#[derive(Debug, Clone, Copy)]
pub struct FastDiv {
    d: u32,
    m: u64,
}

impl FastDiv {
    pub fn new(d: u32) -> FastDiv {
        assert!(d > 0, "division by zero");
        let m = if d == 1 { 0 } else { (u64::MAX / d as u64).wrapping_add(1) };
        FastDiv { d, m }
    }
    #[inline(always)]
    pub fn div(&self, n: u32) -> u32 {
        if self.d == 1 {
            n
        } else {
            ((self.m as u128 * n as u128) >> 64) as u32
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotAddr {
    pub superblock: u32,
    pub page: u32,
    pub die: u32,
    pub slot: u32,
}

#[derive(Debug, Clone)]
pub struct Layout {
    pub dies: u32,
    pub pages_per_block: u32,
    pub slots_per_mpage: u32,
    pub superblocks: u32,
    /// Dies per stripe including the parity die; 1 means no parity.
    pub stripe_width: u32,
    pub slots_per_row: u32,
    pub slots_per_superblock: u32,
    /// Slots of a superblock that can hold user data (parity excluded).
    pub data_slots_per_superblock: u32,
    div_superblock: FastDiv,
    div_row: FastDiv,
    div_mpage: FastDiv,
    div_width: FastDiv,
}

impl Layout {
    pub fn new(g: &Geometry, stripe_width: u32) -> Layout {
        let dies = g.dies();
        let spm = g.slots_per_mpage();
        let slots_per_row = dies * spm;
        let slots_per_superblock = slots_per_row * g.pages_per_block;
        let data_slots_per_superblock = slots_per_superblock / stripe_width.max(1) * (stripe_width.max(1) - 1).max(1);
        let data_slots_per_superblock = if stripe_width <= 1 { slots_per_superblock } else { data_slots_per_superblock };
        Layout {
            dies,
            pages_per_block: g.pages_per_block,
            slots_per_mpage: spm,
            superblocks: g.blocks_per_plane,
            stripe_width: stripe_width.max(1),
            slots_per_row,
            slots_per_superblock,
            data_slots_per_superblock,
            div_superblock: FastDiv::new(slots_per_superblock),
            div_row: FastDiv::new(slots_per_row),
            div_mpage: FastDiv::new(spm),
            div_width: FastDiv::new(stripe_width.max(1)),
        }
    }

    pub fn total_slots(&self) -> u64 {
        self.slots_per_superblock as u64 * self.superblocks as u64
    }

    #[inline]
    pub fn superblock_of(&self, ppa: Ppa) -> u32 {
        self.div_superblock.div(ppa)
    }

    #[inline]
    pub fn addr(&self, ppa: Ppa) -> SlotAddr {
        let superblock = self.div_superblock.div(ppa);
        let pos = ppa - superblock * self.slots_per_superblock;
        let page = self.div_row.div(pos);
        let rem = pos - page * self.slots_per_row;
        let die = self.div_mpage.div(rem);
        SlotAddr { superblock, page, die, slot: rem - die * self.slots_per_mpage }
    }

    /// The first slot of `ppa`'s multi-plane page (pages start on
    /// multiples of the slots a page).
    #[inline]
    pub fn mpage_first(&self, ppa: Ppa) -> Ppa {
        self.div_mpage.div(ppa) * self.slots_per_mpage
    }

    #[inline]
    pub fn ppa(&self, a: SlotAddr) -> Ppa {
        a.superblock * self.slots_per_superblock + a.page * self.slots_per_row + a.die * self.slots_per_mpage + a.slot
    }

    /// `(n / stripe_width, n % stripe_width)` without a hardware division.
    #[inline]
    fn div_rem_width(&self, n: u32) -> (u32, u32) {
        let q = self.div_width.div(n);
        (q, n - q * self.stripe_width)
    }

    /// Whether die `die`'s page in row `page` holds parity.
    #[inline]
    pub fn is_parity(&self, page: u32, die: u32) -> bool {
        if self.stripe_width <= 1 {
            return false;
        }
        let (group, pos) = self.div_rem_width(die);
        pos == self.div_rem_width(page + group).1
    }

    /// The parity die of the stripe (row `page`, group of `die`).
    #[inline]
    pub fn parity_die(&self, page: u32, die: u32) -> u32 {
        let (group, _) = self.div_rem_width(die);
        group * self.stripe_width + self.div_rem_width(page + group).1
    }

    /// The last data die of the stripe holding `die` in row `page`: after its
    /// page is programmed, the stripe's parity can be.
    #[inline]
    pub fn stripe_last_data_die(&self, page: u32, die: u32) -> u32 {
        let w = self.stripe_width;
        let (group, _) = self.div_rem_width(die);
        let last = group * w + w - 1;
        if self.is_parity(page, last) {
            last - 1
        } else {
            last
        }
    }

    /// The dies of the stripe holding `die` (parity die included).
    pub fn stripe_dies(&self, die: u32) -> std::ops::Range<u32> {
        let w = self.stripe_width;
        let group = die / w;
        group * w..group * w + w
    }
}

/// The dies left out of a superblock's stripes (dead when it was opened),
/// and what follows: each group's live dies, among which its stripes
/// rotate their parity page. A group of `stripe_width` dies with one die
/// out is a stripe of `width - 2` data pages and one parity page (a 7+1
/// stripe becomes 6+1: Variable Stripe RAID); a group with a single live
/// die holds no data (a stripe must survive the loss of any one die).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrowing {
    /// One bit a die: left out.
    out: Vec<u64>,
    /// Each group's live dies, in order.
    live: Vec<Vec<u32>>,
}

impl Narrowing {
    /// The narrowing of `layout` with the dies in `out` left out.
    pub fn new(layout: &Layout, out: &[u32]) -> Narrowing {
        let mut bits = vec![0u64; (layout.dies as usize).div_ceil(64)];
        for &d in out {
            assert!(d < layout.dies, "die {d} out of {} dies", layout.dies);
            bits[d as usize / 64] |= 1 << (d % 64);
        }
        let w = layout.stripe_width;
        let live = (0..layout.dies / w).map(|g| (g * w..g * w + w).filter(|&d| bits[d as usize / 64] >> (d % 64) & 1 == 0).collect()).collect();
        Narrowing { out: bits, live }
    }
    #[inline]
    pub fn is_out(&self, die: u32) -> bool {
        self.out[die as usize / 64] >> (die % 64) & 1 != 0
    }
    /// The dies left out, in order.
    pub fn dies_out(&self) -> Vec<u32> {
        (0..self.out.len() as u32 * 64).filter(|&d| self.out.get(d as usize / 64).is_some_and(|w| w >> (d % 64) & 1 != 0)).collect()
    }
    /// The live dies of `die`'s group.
    #[inline]
    pub fn group_live(&self, layout: &Layout, die: u32) -> &[u32] {
        &self.live[layout.div_rem_width(die).0 as usize]
    }
}

impl Layout {
    /// Whether die `die`'s page in row `page` holds user data, in a
    /// superblock narrowed by `n` (none: the full width).
    #[inline]
    pub fn is_data_in(&self, n: Option<&Narrowing>, page: u32, die: u32) -> bool {
        match n {
            None => !self.is_parity(page, die),
            Some(n) => !n.is_out(die) && self.parity_die_in(Some(n), page, die) != Some(die) && (self.stripe_width <= 1 || n.group_live(self, die).len() >= 2),
        }
    }

    /// The parity die of the stripe of `die` in row `page` (none without
    /// parity, or where the group holds no data).
    #[inline]
    pub fn parity_die_in(&self, n: Option<&Narrowing>, page: u32, die: u32) -> Option<u32> {
        if self.stripe_width <= 1 {
            return None;
        }
        match n {
            None => Some(self.parity_die(page, die)),
            Some(n) => {
                let live = n.group_live(self, die);
                let group = self.div_rem_width(die).0;
                (live.len() >= 2).then(|| live[(page + group) as usize % live.len()])
            }
        }
    }

    /// The last data die of `die`'s stripe in row `page`: after its page is
    /// programmed, the stripe's parity can be.
    #[inline]
    pub fn stripe_last_data_die_in(&self, n: Option<&Narrowing>, page: u32, die: u32) -> u32 {
        match n {
            None => self.stripe_last_data_die(page, die),
            Some(n) => {
                let live = n.group_live(self, die);
                let parity = self.parity_die_in(Some(n), page, die);
                *live.iter().rev().find(|&&d| Some(d) != parity).unwrap_or(&die)
            }
        }
    }

    /// The members of `die`'s stripe in a superblock narrowed by `n`
    /// (parity included, `die` included if it is one).
    pub fn stripe_members(&self, n: Option<&Narrowing>, die: u32) -> Vec<u32> {
        match n {
            None => self.stripe_dies(die).collect(),
            Some(n) => n.group_live(self, die).to_vec(),
        }
    }

    /// Whether a die takes no part in a superblock narrowed by `n`: left
    /// out, or the last live die of its group (which then holds no data).
    #[inline]
    pub fn is_unused_in(&self, n: Option<&Narrowing>, die: u32) -> bool {
        n.is_some_and(|n| n.is_out(die) || (self.stripe_width > 1 && n.group_live(self, die).len() < 2))
    }

    /// Data slots of a superblock narrowed by `n`.
    pub fn data_slots_in(&self, n: Option<&Narrowing>) -> u32 {
        let Some(n) = n else { return self.data_slots_per_superblock };
        let per_die = self.pages_per_block * self.slots_per_mpage;
        if self.stripe_width <= 1 {
            return (self.dies - n.dies_out().len() as u32) * per_die;
        }
        n.live.iter().map(|g| if g.len() >= 2 { (g.len() as u32 - 1) * per_die } else { 0 }).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(dies: u32) -> Geometry {
        Geometry { channels: dies, dies_per_channel: 1, planes_per_die: 2, blocks_per_plane: 8, pages_per_block: 16, page_size_bytes: 8192, oob_bytes: 448 }
    }

    #[test]
    fn fast_division_is_exact() {
        for d in [1u32, 2, 3, 7, 8, 25, 96, 1536, 393_216, 1_000_003, u32::MAX] {
            let f = FastDiv::new(d);
            for n in [0u32, 1, d - 1, d, d.wrapping_add(1), 12_345_678, u32::MAX - 1, u32::MAX] {
                assert_eq!(f.div(n), n / d, "{n} / {d}");
            }
        }
    }

    #[test]
    fn addresses_round_trip_and_parity_rotates() {
        let l = Layout::new(&g(16), 8);
        assert_eq!(l.slots_per_mpage, 4);
        assert_eq!(l.data_slots_per_superblock * 8, l.slots_per_superblock * 7);
        for ppa in (0..l.total_slots() as u32).step_by(7) {
            assert_eq!(l.ppa(l.addr(ppa)), ppa);
        }
        // One parity page per stripe per row, in every position over 8 rows.
        for page in 0..16 {
            for group in 0..2 {
                let dies: Vec<u32> = (group * 8..group * 8 + 8).filter(|&d| l.is_parity(page, d)).collect();
                assert_eq!(dies.len(), 1);
                assert_eq!(dies[0], l.parity_die(page, group * 8));
                assert!(!l.is_parity(page, l.stripe_last_data_die(page, group * 8)));
            }
        }
        let positions: std::collections::BTreeSet<u32> = (0..8).map(|p| l.parity_die(p, 0)).collect();
        assert_eq!(positions.len(), 8);
        let none = Layout::new(&g(4), 1);
        assert!(!none.is_parity(0, 0));
        assert_eq!(none.data_slots_per_superblock, none.slots_per_superblock);
    }

    /// A narrowing that leaves no die out is the full width; one die out
    /// makes its group's stripes one narrower, with the parity still
    /// rotating over every live die, and takes the die's share of data.
    #[test]
    fn a_narrowed_stripe_skips_its_dead_die_and_keeps_one_parity_page() {
        let l = Layout::new(&g(16), 8);
        let none = Narrowing::new(&l, &[]);
        for page in 0..16 {
            for die in 0..16 {
                assert_eq!(l.is_data_in(Some(&none), page, die), l.is_data_in(None, page, die));
                assert_eq!(l.parity_die_in(Some(&none), page, die), Some(l.parity_die(page, die)));
            }
        }
        let n = Narrowing::new(&l, &[3]);
        let mut parity_on = std::collections::BTreeSet::new();
        for page in 0..16 {
            let data: Vec<u32> = (0..8).filter(|&d| l.is_data_in(Some(&n), page, d)).collect();
            assert_eq!(data.len(), 6, "row {page}: 6+1");
            assert!(!data.contains(&3));
            let p = l.parity_die_in(Some(&n), page, 0).unwrap();
            assert!(p != 3 && !data.contains(&p));
            parity_on.insert(p);
            assert_eq!(l.stripe_last_data_die_in(Some(&n), page, 0), *data.last().unwrap());
        }
        assert_eq!(parity_on.len(), 7, "parity rotates over the 7 live dies");
        assert_eq!(l.data_slots_in(Some(&n)), l.data_slots_per_superblock - l.pages_per_block * l.slots_per_mpage);
        assert!(l.is_unused_in(Some(&n), 3) && !l.is_unused_in(Some(&n), 4));
    }
}
