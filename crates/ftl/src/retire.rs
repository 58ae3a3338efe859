//! A block that fails a program (worn out: [`nand::Endurance`]) is retired
//! at once, as controllers do on a program status failure, and its
//! superblock goes on being written without it:
//!
//! - the failed page holds nothing: its slots, still in the writer's
//!   buffer, are written again at the writer's next page (with their
//!   original sequence numbers, so a mount tells them apart as it does GC's
//!   moves);
//! - the block is marked grown bad (kept in the system area);
//! - the superblock's rows after the failure leave the block out, as a
//!   superblock opened with a bad block does ([`crate::layout::Narrowing`]:
//!   its stripe group is one die narrower from the next row on); the
//!   block's pages before the failure stay readable until GC erases the
//!   superblock, whose next opening leaves the block out altogether.
//!   (Closing the superblock short instead, and emptying it first, costs
//!   an erase of every block and the moves of what it held for each failed
//!   program: near wear-out it ran the free pool dry.) What the rows after
//!   the failure leave out follows from the bad-block table and how far
//!   each block is programmed, so a mount finds it again without more
//!   metadata ([`Ftl::row_narrows_derive`]);
//! - the stripe holding the failure lacks the failed page, so it could not
//!   rebuild its other pages should a die fail: once it is sealed, its
//!   valid slots are moved at once (GC's writer) to a whole stripe. Until
//!   then a read through it is an error, never other bytes (the failed
//!   die's next page is the failed one: [`Ftl::stripe_others`] finds the
//!   stripe incomplete), and a mount after a cut moves them as it does
//!   those of a stripe a cut left incomplete.
//!
//! A failed parity page retires its block the same way; no slot needs
//! writing again.

use crate::layout::{Narrowing, SlotAddr};
use crate::superblock::SB_NONE;
use crate::writer::{FailedProgram, FailedSlots, WriterId};
use crate::{Ftl, FtlError};
use nand::Media;
use units::{LBA_UNMAPPED, SLOT_BYTES};

impl<M: Media> Ftl<M> {
    /// Leaves die `die`'s block out of superblock `sb`'s rows after `row`
    /// (its program in `row` failed).
    pub(crate) fn row_narrow_after(&mut self, sb: u32, die: u32, row: u32) {
        let from = row + 1;
        let mut out = self.narrowing_at(sb, from).map_or(Vec::new(), |n| n.dies_out());
        if !out.contains(&die) {
            out.push(die);
            out.sort_unstable();
        }
        let n = Narrowing::new(&self.layout, &out);
        let rows = &mut self.sbs.row_narrows[sb as usize];
        debug_assert!(rows.last().is_none_or(|(f, _)| *f <= from), "failures come in row order");
        match rows.last_mut() {
            Some((f, last)) if *f == from => *last = n,
            _ => rows.push((from, n)),
        }
    }

    /// The rows of superblock `sb` that die `die` takes part in: all of
    /// them, but for a block a row narrowing leaves out (its failed row is
    /// the last it takes part in, unprogrammed) or the last live die of a
    /// group that one leaves with no stripe.
    pub(crate) fn rows_of(&self, sb: u32, die: u32) -> u32 {
        let l = &self.layout;
        let unused = self.sbs.row_narrows[sb as usize].iter().find(|(_, n)| l.is_unused_in(Some(n), die));
        match unused {
            Some((from, n)) if n.is_out(die) => from - 1,
            Some((from, _)) => *from,
            None => l.pages_per_block,
        }
    }

    /// After the system area is read: the row narrowings of every written
    /// superblock, from its blocks retired by a failed program (bad, yet
    /// used by the narrowing it was opened with) and the row each failed
    /// in: a working die's block's next page (the failed one was never
    /// programmed); a dead die, which answers nothing, by the row the
    /// system area kept for it (`dead_failed`: die, superblock, row).
    pub(crate) fn row_narrows_derive(&mut self, dead_failed: &[(u32, u32, u32)]) {
        let l = self.layout.clone();
        for sb in 0..l.superblocks {
            self.sbs.row_narrows[sb as usize].clear();
            let base = self.narrowing(sb).cloned();
            let written = (0..l.dies).any(|d| !self.is_dead(d) && self.media.block_next_page(d, sb) > 0);
            if !written {
                continue;
            }
            let failed_row = |d: u32| match self.is_dead(d) {
                false => Some(self.media.block_next_page(d, sb)),
                true => dead_failed.iter().find(|&&(die, s, _)| die == d && s == sb).map(|&(_, _, row)| row),
            };
            let mut failed: Vec<(u32, u32)> = (0..l.dies)
                .filter(|&d| !l.is_unused_in(base.as_ref(), d) && self.is_bad(d, sb))
                .filter_map(|d| failed_row(d).map(|row| (row, d)))
                .filter(|&(row, _)| row < l.pages_per_block)
                .collect();
            failed.sort_unstable();
            for (row, die) in failed {
                self.row_narrow_after(sb, die, row);
            }
        }
    }

    /// The row each dead die's block retired by a failed program failed
    /// in (die, superblock, row), while its superblock holds the rows
    /// after it narrowed: kept in the system area, for a mount cannot ask
    /// a dead die how far its block is programmed.
    pub(crate) fn dead_failed_rows(&self) -> Vec<(u32, u32, u32)> {
        let mut rows = Vec::new();
        for sb in 0..self.layout.superblocks {
            for &d in &self.faults.dead {
                let first_out = self.sbs.row_narrows[sb as usize].iter().find(|(_, n)| n.is_out(d));
                if let (Some((from, _)), true) = (first_out, self.is_bad(d, sb)) {
                    if !self.layout.is_unused_in(self.narrowing(sb), d) {
                        rows.push((d, sb, from - 1));
                    }
                }
            }
        }
        rows
    }

    /// Retires the blocks whose programs failed and writes a failed data
    /// page's slots again, on `user`'s writer.
    pub(crate) fn program_failed(&mut self, id: WriterId, failed: Vec<FailedProgram>) -> Result<(), FtlError> {
        for f in &failed {
            if !self.is_bad(f.die, f.sb) {
                self.bad_mark(f.die, f.sb, true);
                self.sbs.bad_counts.grown_program += 1;
            }
        }
        self.capacity_check();
        self.system_save()?;
        for f in failed {
            if let Some(slots) = f.slots {
                self.failed_slots_rewrite(id, f.sb, slots)?;
                // Staged again at their new place: the failed page's
                // staged copies go (a cut before this leaves both, the
                // same writes: a mount keeps one).
                self.media.page_unstage(f.die, f.sb, f.page);
            }
        }
        Ok(())
    }

    /// Appends again each slot of a failed page still the live copy of its
    /// LBA (a write since, or a trim, made it stale: nothing to keep).
    fn failed_slots_rewrite(&mut self, id: WriterId, sb: u32, s: FailedSlots) -> Result<(), FtlError> {
        for (i, &lba) in s.oob.iter().enumerate() {
            let ppa = s.first + i as u32;
            if lba == LBA_UNMAPPED || !self.is_valid(ppa) {
                continue;
            }
            debug_assert_eq!(self.map.l2p[lba as usize], ppa);
            // The writer first: should it find no room, the slot stays
            // mapped (and reads fail: its page holds nothing).
            if self.writers[id].sb == SB_NONE {
                self.writer_open(id)?;
            }
            self.invalidate(ppa, sb);
            let seq = if self.data { s.seqs[i] } else { 0 };
            let slot = SLOT_BYTES as usize;
            self.append(id, lba, self.data.then(|| &s.buf[i * slot..(i + 1) * slot]), seq)?;
            self.faults.counters.slots_rewritten += 1;
        }
        Ok(())
    }

    /// Moves the valid slots of the stripes sealed without a failed page.
    pub(crate) fn retired_stripes_move(&mut self) -> Result<(), FtlError> {
        for (sb, row, die) in std::mem::take(&mut self.gc.retired_stripes) {
            let n = self.narrowing_at(sb, row).cloned();
            for m in self.layout.stripe_members(n.as_ref(), die) {
                let programmed = self.media.block_next_page(m, sb) > row;
                if !self.is_dead(m) && programmed && self.layout.is_data_in(n.as_ref(), row, m) {
                    let moved = self.page_move(SlotAddr { superblock: sb, page: row, die: m, slot: 0 }, false)?;
                    self.faults.counters.slots_reprotected += moved;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::{Ftl, FtlConfig, FtlError, GcPolicy, Layout};
    use nand::{Array, Endurance, Geometry, Nand};
    use units::SLOT_BYTES;

    /// 8 dies in two stripe groups of 4 (3+1), 8 pages a block.
    pub(crate) fn geometry() -> Geometry {
        Geometry { channels: 4, dies_per_channel: 2, planes_per_die: 2, blocks_per_plane: 12, pages_per_block: 8, page_size_bytes: 8192, oob_bytes: 224 }
    }

    /// A card of [`geometry`] formatted to half of what it can hold, with
    /// power-loss protection.
    pub(crate) fn config() -> FtlConfig {
        let layout = Layout::new(&geometry(), 4);
        FtlConfig {
            stripe_width: 4,
            user_slots: Ftl::<Array>::user_slots_max(&layout, 1) / 2,
            reserve_superblocks: 1,
            gc_policy: GcPolicy::Greedy,
            wear_spread_max: 8,
            power_loss_protection: true,
        }
    }

    /// Every block fails at a program once worn (after a few erases).
    fn array(store: Option<nand::PageStore>) -> Array {
        let mut a = Array::with_store(geometry(), store.or_else(|| Array::new(geometry(), true).into_store()));
        let e = Endurance { factory_bad_fraction: 0.0, scale_cycles: 12.0, shape: 2.0, cycles_per_erase: 1, program_fail_share: 1.0, seed: 5 };
        a.endurance_set(Some(e));
        a
    }

    fn stamp(lba: u32, generation: u32) -> Vec<u8> {
        let mut v = vec![(generation % 251) as u8; SLOT_BYTES as usize];
        v[..4].copy_from_slice(&lba.to_le_bytes());
        v[4..8].copy_from_slice(&generation.to_le_bytes());
        v
    }

    fn verify(ftl: &mut Ftl<Array>, last: &[u32]) {
        let mut out = vec![0u8; SLOT_BYTES as usize];
        for (lba, &g) in last.iter().enumerate() {
            ftl.read(lba as u32, Some(&mut out)).unwrap_or_else(|e| panic!("lba {lba}: {e}"));
            let want = if g == 0 { vec![0; SLOT_BYTES as usize] } else { stamp(lba as u32, g) };
            assert!(out == want, "lba {lba} does not read generation {g}");
        }
    }

    /// A card written until a superblock closed in full with a block that
    /// failed a program at a row before its last: the card, its
    /// configuration, each LBA's last generation, the superblock and the
    /// first row its failed block is out of.
    fn failed_mid_superblock() -> (Ftl<Array>, FtlConfig, Vec<u32>, u32, u32) {
        let layout = Layout::new(&geometry(), 4);
        let cfg = config();
        let user = cfg.user_slots as u32;
        let mut ftl = Ftl::format(array(None), cfg.clone()).unwrap();
        let mut last = vec![0u32; user as usize];
        let mut x = 7u64;
        loop {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lba = (x >> 33) as u32 % user;
            last[lba as usize] += 1;
            match ftl.write(lba, Some(&stamp(lba, last[lba as usize]))) {
                Ok(()) => {}
                Err(FtlError::ReadOnly(why)) => panic!("worn out before a program failed mid-superblock: {why}"),
                Err(e) => panic!("{e}"),
            }
            let found = (0..layout.superblocks).find_map(|sb| {
                let closed = ftl.superblock_state(sb) == crate::SbState::Closed;
                let first = ftl.sbs.row_narrows[sb as usize].first().map(|(from, _)| *from);
                first.filter(|&f| closed && f < layout.pages_per_block - 1).map(|f| (sb, f))
            });
            if let Some((sb, from)) = found {
                return (ftl, cfg, last, sb, from);
            }
        }
    }

    /// The die whose block superblock `sb`'s first row narrowing leaves out.
    fn failed_die(ftl: &Ftl<Array>, sb: u32) -> u32 {
        let n = &ftl.sbs.row_narrows[sb as usize][0].1;
        let base = ftl.narrowing(sb);
        (0..ftl.layout.dies).find(|&d| n.is_out(d) && !ftl.layout.is_unused_in(base, d)).expect("the failed die")
    }

    /// A program fails in the middle of a superblock: the superblock is
    /// not closed short but written to its end, its failed block's group
    /// one die narrower from the next row on; a mount finds the same row
    /// narrowing from the bad-block table and the media; and a die of the
    /// same group failing then is rebuilt through the narrower stripes.
    #[test]
    fn a_failed_program_leaves_its_block_out_of_the_rows_after_and_the_superblock_goes_on() {
        let (mut ftl, cfg, last, sb, from) = failed_mid_superblock();
        let layout = ftl.layout.clone();
        let pages = layout.pages_per_block;
        let n = ftl.sbs.row_narrows[sb as usize][0].1.clone();
        let base = ftl.narrowing(sb).cloned();
        let die = failed_die(&ftl, sb);
        assert!(ftl.is_bad(die, sb) && !ftl.sbs.meta[sb as usize].short);
        assert_eq!(ftl.media().block_next_page(die, sb), from - 1, "the failed block stops at the failed page");
        let group: Vec<u32> = layout.stripe_members(base.as_ref(), die).into_iter().filter(|&d| d != die).collect();
        for &d in &group {
            assert_eq!(ftl.media().block_next_page(d, sb), pages, "die {d} of the group wrote the superblock to its end");
            for row in from..pages {
                assert!(layout.is_data_in(Some(&n), row, d) || layout.parity_die_in(Some(&n), row, d) == Some(d));
            }
        }
        assert!(ftl.fault_counters().slots_reprotected > 0 || ftl.fault_counters().slots_rewritten > 0);
        ftl.check().unwrap();
        verify(&mut ftl, &last);
        let rows = ftl.sbs.row_narrows.clone();
        let store = ftl.into_media().into_store();
        let (mut m, _) = Ftl::mount(array(store), cfg).unwrap();
        assert_eq!(m.sbs.row_narrows, rows, "a mount finds the same row narrowings");
        m.check().unwrap();
        verify(&mut m, &last);
        m.die_fail(group[0]).unwrap();
        verify(&mut m, &last);
        m.check().unwrap();
    }

    /// A die whose block a failed program retired dies later: a mount
    /// cannot ask it where its block stopped, and finds the rows after the
    /// failure narrowed from the row the system area kept (without it, it
    /// took the rows' parity pages for data and mapped their XOR of LBAs:
    /// found by the fault property test).
    #[test]
    fn a_retired_block_on_a_die_that_dies_later_keeps_its_row_narrowing_across_a_mount() {
        let (mut ftl, cfg, last, sb, _) = failed_mid_superblock();
        let die = failed_die(&ftl, sb);
        ftl.die_fail(die).unwrap();
        let rows = ftl.sbs.row_narrows.clone();
        let store = ftl.into_media().into_store();
        let (mut m, _) = Ftl::mount(array(store), cfg).unwrap();
        assert_eq!(m.sbs.row_narrows, rows, "a mount finds the same row narrowings, the dead die's included");
        m.check().unwrap();
        while m.rebuilding() {
            m.rebuild_step(1 << 20).unwrap();
        }
        m.check().unwrap();
        verify(&mut m, &last);
    }
}
