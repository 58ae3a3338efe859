//! The invariant checker: one function tests call after any step.

use crate::{Ftl, SbState, SB_NONE};
use nand::Media;
use units::PPA_INVALID;

/// A structural invariant the FTL's state breaks: the first the checker
/// finds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Inconsistency {
    #[error("superblock {sb}: valid count {meta} but {slots} valid slots")]
    ValidCount { sb: usize, meta: u32, slots: u32 },
    #[error("{free} usable free superblocks but {pool} in the free pool")]
    FreePool { free: usize, pool: usize },
    #[error("L2P[{lba}] = {ppa} but P2L[{ppa}] = {p2l} (valid: {valid})")]
    L2p { lba: usize, ppa: u32, p2l: u32, valid: bool },
    #[error("valid slot {ppa} holds LBA {lba}, which is not mapped back")]
    P2l { ppa: u32, lba: u32 },
    #[error("user slot {lba} stored in a parity page or on a die left out (ppa {ppa})")]
    OutOfData { lba: u32, ppa: u32 },
    #[error("superblock {sb}: {meta} erases in its meta but {media} on the media")]
    Erases { sb: u32, meta: u32, media: u32 },
    #[error("superblock {sb}: die {die} is left out of it but programmed")]
    LeftOutProgrammed { sb: u32, die: u32 },
    #[error("free superblock {sb} holds {valid} valid slots")]
    FreeHoldsData { sb: u32, valid: u32 },
    #[error("free superblock {sb} is not erased on die {die}")]
    FreeNotErased { sb: u32, die: u32 },
    #[error("closed superblock {sb} not fully programmed on die {die}")]
    ClosedShort { sb: u32, die: u32 },
    #[error("open superblock {sb} has no writer")]
    NoWriter { sb: u32 },
    #[error("open superblock {sb} die {die}: next page {next}, expected {expect} (writer at row {row} die {writer_die})")]
    OpenNext { sb: u32, die: u32, next: u32, expect: u32, row: u32, writer_die: u32 },
    #[error("writer on superblock {sb} which is {state:?}")]
    Writer { sb: u32, state: SbState },
    #[error("victim {sb} is {state:?}")]
    Victim { sb: u32, state: SbState },
    #[error("media holds no data")]
    NoData,
    #[error("superblock {sb} row {row} stripe {stripe}: parity does not recompute")]
    Parity { sb: u32, row: u32, stripe: u32 },
}

impl<M: Media> Ftl<M> {
    /// Checks every structural invariant and returns the first violation:
    /// - the L2P and P2L maps agree both ways;
    /// - each superblock's valid count equals its valid P2L entries;
    /// - the free pool holds exactly the free superblocks, and they are empty
    ///   and erased on the media;
    /// - parity pages hold no user data, and every stripe row a writer has
    ///   passed is programmed on every die (parity included); closed and
    ///   victim superblocks are fully programmed;
    /// - on data-holding media, every complete stripe's parity page is the
    ///   XOR of its data pages.
    pub fn check(&self) -> Result<(), Inconsistency> {
        self.check_l2p()?;
        let valid = self.check_p2l()?;
        let mut free_count = 0;
        for (sb, m) in self.sbs.meta.iter().enumerate() {
            if m.valid != valid[sb] {
                return Err(Inconsistency::ValidCount { sb, meta: m.valid, slots: valid[sb] });
            }
            free_count += (m.state == SbState::Free && self.sb_usable(sb as u32)) as usize;
            self.check_superblock(sb as u32)?;
        }
        if free_count != self.sbs.free.len() {
            return Err(Inconsistency::FreePool { free: free_count, pool: self.sbs.free.len() });
        }
        self.check_writers()
    }

    /// Every mapped LBA's slot is valid and maps back to it.
    fn check_l2p(&self) -> Result<(), Inconsistency> {
        for (lba, &ppa) in self.map.l2p.iter().enumerate() {
            if ppa != PPA_INVALID && (self.map.p2l[ppa as usize] != lba as u32 || !self.is_valid(ppa)) {
                return Err(Inconsistency::L2p { lba, ppa, p2l: self.map.p2l[ppa as usize], valid: self.is_valid(ppa) });
            }
        }
        Ok(())
    }

    /// Every valid slot maps back from its LBA and lies in a data page;
    /// returns the valid slots of each superblock.
    fn check_p2l(&self) -> Result<Vec<u32>, Inconsistency> {
        let l = &self.layout;
        let mut valid = vec![0u32; l.superblocks as usize];
        for ppa in (0..l.total_slots() as u32).filter(|&p| self.is_valid(p)) {
            let lba = self.map.p2l[ppa as usize];
            if lba as u64 >= self.cfg.user_slots || self.map.l2p[lba as usize] != ppa {
                return Err(Inconsistency::P2l { ppa, lba });
            }
            let a = l.addr(ppa);
            if !l.is_data_in(self.narrowing_at(a.superblock, a.page), a.page, a.die) {
                return Err(Inconsistency::OutOfData { lba, ppa });
            }
            valid[a.superblock as usize] += 1;
        }
        Ok(valid)
    }

    /// A superblock's media state agrees with its state: free ones erased
    /// and empty, closed and victim ones fully programmed, an open one
    /// programmed exactly as far as its writer has gone; parity recomputes.
    fn check_superblock(&self, sb: u32) -> Result<(), Inconsistency> {
        let (l, m) = (&self.layout, &self.sbs.meta[sb as usize]);
        if m.erase_count != self.media_superblock_erases(sb) {
            return Err(Inconsistency::Erases { sb, meta: m.erase_count, media: self.media_superblock_erases(sb) });
        }
        let n = self.narrowing(sb);
        // Dies that work, and of them those the superblock uses.
        let working = || (0..l.dies).filter(|&d| !self.is_dead(d));
        let used = || working().filter(|&d| !l.is_unused_in(n, d));
        if let Some(die) = working().find(|&d| l.is_unused_in(n, d) && self.media.block_next_page(d, sb) != 0) {
            return Err(Inconsistency::LeftOutProgrammed { sb, die });
        }
        match m.state {
            SbState::Free => {
                if m.valid != 0 {
                    return Err(Inconsistency::FreeHoldsData { sb, valid: m.valid });
                }
                if let Some(die) = working().find(|&die| self.media.block_next_page(die, sb) != 0) {
                    return Err(Inconsistency::FreeNotErased { sb, die });
                }
                Ok(())
            }
            SbState::Closed | SbState::Victim if m.short => {
                // Recovered or sealed: the stripes every member programmed.
                let rows = used().map(|die| self.media.block_next_page(die, sb)).max().unwrap_or(0);
                self.parity_check(sb, rows)
            }
            SbState::Closed | SbState::Victim => {
                // Every row a die takes part in (a block retired by a
                // failed program stops at the failed page).
                if let Some(die) = used().find(|&die| self.media.block_next_page(die, sb) != self.rows_of(sb, die)) {
                    return Err(Inconsistency::ClosedShort { sb, die });
                }
                self.parity_check(sb, l.pages_per_block)
            }
            SbState::Open => self.check_open(sb),
        }
    }

    fn check_open(&self, sb: u32) -> Result<(), Inconsistency> {
        let l = &self.layout;
        let w = self.writers.iter().find(|w| w.sb == sb).ok_or(Inconsistency::NoWriter { sb })?;
        let base = self.narrowing(sb);
        let n = self.narrowing_at(sb, w.page);
        for die in (0..l.dies).filter(|&d| !self.is_dead(d) && !l.is_unused_in(base, d)) {
            let next = self.media.block_next_page(die, sb);
            // A die's row is programmed when the writer passed it, or when
            // its whole stripe is done (parity); a block retired by a
            // failed program stops at the failed page.
            let stripe_done = |page: u32| w.die > l.stripe_last_data_die_in(n, page, die);
            let programmed = if l.parity_die_in(n, w.page, die) == Some(die) { stripe_done(w.page) } else { die < w.die };
            let expect = if programmed { w.page + 1 } else { w.page }.min(self.rows_of(sb, die));
            if next != expect {
                return Err(Inconsistency::OpenNext { sb, die, next, expect, row: w.page, writer_die: w.die });
            }
        }
        self.parity_check(sb, w.page)
    }

    /// Writers sit on open superblocks, the victim on a victim.
    fn check_writers(&self) -> Result<(), Inconsistency> {
        for w in self.writers.iter() {
            if w.sb != SB_NONE && self.sbs.meta[w.sb as usize].state != SbState::Open {
                return Err(Inconsistency::Writer { sb: w.sb, state: self.sbs.meta[w.sb as usize].state });
            }
        }
        if let Some(v) = &self.gc.victim {
            if self.sbs.meta[v.sb as usize].state != SbState::Victim {
                return Err(Inconsistency::Victim { sb: v.sb, state: self.sbs.meta[v.sb as usize].state });
            }
        }
        Ok(())
    }

    /// On data-holding media: parity recomputes for rows `0..rows` of `sb`,
    /// but for stripes holding a slot known damaged (its checksum fails: a
    /// cut hit the page sharing its cells; mount rebuilt what it held) and
    /// stripes a member did not program (a cut, or a failed program: the
    /// states' own checks say where each die must have got to).
    fn parity_check(&self, sb: u32, rows: u32) -> Result<(), Inconsistency> {
        let l = &self.layout;
        if l.stripe_width <= 1 || !self.media.holds_data() {
            return Ok(());
        }
        for page in 0..rows {
            let n = self.narrowing_at(sb, page);
            for group in 0..l.dies / l.stripe_width {
                let members = l.stripe_members(n, group * l.stripe_width);
                // A stripe with a dead member, or none, cannot be checked.
                if members.len() < 2 || members.iter().any(|&d| self.is_dead(d) || self.media.block_next_page(d, sb) <= page) {
                    continue;
                }
                let damaged = members.iter().any(|&die| (0..l.slots_per_mpage).any(|s| !self.media.slot_intact(die, sb, page, s)));
                if damaged {
                    continue;
                }
                let mut x: Option<Vec<u8>> = None;
                for &die in &members {
                    let bytes = self.media.mpage_peek(die, sb, page).ok_or(Inconsistency::NoData)?;
                    match &mut x {
                        None => x = Some(bytes.to_vec()),
                        Some(acc) => acc.iter_mut().zip(bytes).for_each(|(a, b)| *a ^= *b),
                    }
                }
                if x.is_some_and(|acc| acc.iter().any(|&b| b != 0)) {
                    return Err(Inconsistency::Parity { sb, row: page, stripe: group });
                }
            }
        }
        Ok(())
    }
}
