//! A host driver's hold on writes against its groomer
//! (`ftl.write_hold_erase_blocks`): the driver keeps a reserve of erased
//! blocks, its groomer starts a few blocks above it, and host writes go
//! on at the card's pace until the groomer has fallen that many erase
//! blocks behind; then they are held until it frees the next whole one.
//! Host writes thus come in bursts between the groomer's blocks, and a
//! write held waits up to a block's grooming.
//!
//! The driver's erase block is one block on each die of a parity stripe
//! (a bank), so a superblock holds `dies / stripe_width` of them, freed
//! one after another as the groomer works through its victim. A scaled
//! card's superblock is `pages_div` times smaller and is groomed that
//! much faster, so the groomer's debt is counted in full-size erase
//! blocks: a held write waits as long as on the full-size card, and as
//! often a second.

use std::collections::VecDeque;
use units::Ns;

#[derive(Clone, Debug)]
pub(super) struct WriteHold {
    /// Full-size erase blocks the groomer may owe before writes are held.
    slack: u64,
    /// A victim's share of full-size erase blocks, in 1/`group`s: the
    /// erase blocks a superblock holds.
    per_victim: u32,
    /// Parts to a full-size erase block: the scale's `pages_div`.
    group: u32,
    /// Parts of the erase block being groomed counted so far.
    parts: u32,
    /// The superblock of the last victim counted (its dies' erases come
    /// one by one), and when the groomer had done with it.
    last_block: u32,
    last_done: Ns,
    /// When the groomer frees each erase block it has not yet freed by the
    /// host's time, in order; and how many it freed before them.
    owed: VecDeque<Ns>,
    freed: u64,
    /// Slots programmed (host data, the groomer's, parity: each takes
    /// its place in erased blocks), and a full-size erase block's worth.
    consumed_slots: u64,
    block_slots: u64,
    /// Erase blocks consumed before the groomer freed its first: from
    /// then on each one consumed stands for one the groomer has taken on
    /// (the free pool stays level), so it owes what was consumed since,
    /// less what it freed.
    base: Option<u64>,
}

impl WriteHold {
    /// A hold after `slack` erase blocks owed, `per_superblock` erase
    /// blocks to a full-size superblock of `superblock_slots` (at this
    /// scale: `pages_div` times smaller).
    pub(super) fn new(slack: u32, per_superblock: u32, pages_div: u32, superblock_slots: u64) -> WriteHold {
        assert!(slack >= 1 && per_superblock >= 1 && pages_div >= 1, "a hold lets the groomer owe a block of a superblock");
        WriteHold {
            slack: slack as u64,
            per_victim: per_superblock,
            group: pages_div,
            parts: 0,
            last_block: u32::MAX,
            last_done: 0,
            owed: VecDeque::with_capacity(2 * (slack as usize + per_superblock as usize)),
            freed: 0,
            consumed_slots: 0,
            block_slots: (superblock_slots * pages_div as u64 / per_superblock as u64).max(1),
            base: None,
        }
    }

    /// `slots` programmed.
    #[inline(always)]
    pub(super) fn consumed(&mut self, slots: u32) {
        self.consumed_slots += slots as u64;
    }

    /// Erase blocks begun so far (one is taken when the first of its slots
    /// is programmed).
    fn consumed_blocks(&self) -> u64 {
        self.consumed_slots.div_ceil(self.block_slots)
    }

    /// A victim of superblock `block` erased (each of its dies' erases
    /// comes here: counted once), the groomer's work booked so far ending
    /// at `done`: the erase blocks it completes are freed as the groomer
    /// went through it, evenly from where it left the victim before.
    #[inline]
    pub(super) fn victim(&mut self, block: u32, done: Ns) {
        if block == self.last_block {
            return;
        }
        if self.base.is_none() {
            self.base = Some(self.consumed_blocks());
        }
        let start = self.last_done.min(done);
        self.last_block = block;
        self.last_done = done;
        let (from, to) = (self.parts, self.parts + self.per_victim);
        let mut at = self.group;
        while at <= to {
            let share = (at - from) as u128 * (done - start) as u128 / self.per_victim as u128;
            self.owed.push_back(start + share as Ns);
            at += self.group;
        }
        self.parts = to % self.group;
    }

    /// When a host write whose data is in at `ready` may be taken: at
    /// once while the groomer owes fewer than `slack` erase blocks, else
    /// once it has freed enough of them to owe one fewer (or, where it
    /// has not yet taken them on, the last it has).
    #[inline]
    pub(super) fn admit(&mut self, ready: Ns) -> Ns {
        while self.owed.front().is_some_and(|&t| t <= ready) {
            self.owed.pop_front();
            self.freed += 1;
        }
        let Some(base) = self.base else { return ready };
        let owed = self.consumed_blocks().saturating_sub(base + self.freed);
        if owed < self.slack {
            return ready;
        }
        let more = (owed - self.slack) as usize;
        self.owed.get(more).or(self.owed.back()).copied().unwrap_or(ready).max(ready)
    }

    /// Forgets the groomer's debt: the card was erased.
    pub(super) fn reset(&mut self) {
        self.owed.clear();
        self.parts = 0;
        self.last_block = u32::MAX;
        self.last_done = 0;
        self.freed = 0;
        self.consumed_slots = 0;
        self.base = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A superblock of `per` erase blocks of 100 slots, full size.
    fn hold(slack: u32, per: u32, pages_div: u32) -> WriteHold {
        WriteHold::new(slack, per, pages_div, 100 * per as u64 / pages_div as u64)
    }

    #[test]
    fn writes_are_held_once_the_groomer_owes_its_slack_until_it_frees_a_block() {
        // One erase block a superblock, a slack of two blocks.
        let mut h = hold(2, 1, 1);
        assert_eq!(h.admit(10), 10, "no debt before the groomer's first victim");
        h.victim(1, 100);
        h.victim(1, 100);
        // Host and groomer take on three blocks more, the groomer freeing
        // them at 200, 300 and 400.
        h.consumed(300);
        for (b, done) in [(2, 200), (3, 300), (4, 400)] {
            h.victim(b, done);
        }
        assert_eq!(h.admit(50), 200, "owing three (100 to 400): held until it owes one fewer than two, at 200");
        assert_eq!(h.admit(350), 350, "owing none: taken at once");
        h.consumed(100);
        assert_eq!(h.admit(355), 355, "owing one");
        h.consumed(100);
        assert_eq!(h.admit(360), 400, "owing two again: held until the next is freed");
        h.consumed(100);
        h.victim(5, 600);
        assert_eq!(h.admit(700), 700, "everything freed");
        h.reset();
        h.consumed(10_000);
        assert_eq!(h.admit(800), 800, "an erased card owes nothing");
    }

    #[test]
    fn a_superblock_of_several_erase_blocks_frees_them_as_it_is_groomed() {
        // Four erase blocks a superblock, full size: a victim groomed
        // from 1,000 to 2,000 frees one every 250.
        let mut h = hold(1, 4, 1);
        h.victim(1, 1_000);
        h.victim(2, 2_000);
        assert_eq!(h.owed.iter().copied().collect::<Vec<_>>(), [250, 500, 750, 1_000, 1_250, 1_500, 1_750, 2_000]);
        // At scale 8 (two victims to a full-size erase block of four to a
        // superblock: half an erase block a victim), a block is freed every
        // other victim, at its end.
        let mut h = hold(1, 4, 8);
        for (b, done) in [(1, 10), (2, 20), (3, 30), (4, 40)] {
            h.victim(b, done);
        }
        assert_eq!(h.owed.iter().copied().collect::<Vec<_>>(), [20, 40]);
    }
}
