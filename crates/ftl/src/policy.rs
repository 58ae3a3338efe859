//! Victim policy: which closed superblock GC cleans next. Read reclaim
//! ([`crate::reclaim`]) and then static wear leveling ([`crate::wear`]) may
//! choose first; otherwise the policy does.

use crate::gc::Victim;
use crate::superblock::SbState;
use crate::{Ftl, ONE};
use nand::Media;
use serde::{Deserialize, Serialize};

/// How a victim superblock is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// The closed superblock with the fewest valid slots.
    Greedy,
    /// Rosenblum and Ousterhout's cost-benefit: the most `(1 - u) * age / 2u`,
    /// which leaves cold, slowly emptying superblocks alone for longer.
    CostBenefit,
}

/// A GC policy this FTL does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown GC policy '{0}': expected greedy or cost-benefit")]
pub struct UnknownPolicy(pub String);

impl std::str::FromStr for GcPolicy {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, UnknownPolicy> {
        match s {
            "greedy" => Ok(GcPolicy::Greedy),
            "cost-benefit" => Ok(GcPolicy::CostBenefit),
            _ => Err(UnknownPolicy(s.to_string())),
        }
    }
}

impl<M: Media> Ftl<M> {
    /// Chooses the next victim. Returns false when no superblock is closed.
    pub(crate) fn victim_select(&mut self, forced: bool) -> bool {
        debug_assert!(self.gc.victim.is_none());
        // Read reclaim first (its data decays), then static wear leveling.
        let reclaim = if forced { None } else { self.reclaim_victim() };
        let wear = if forced || reclaim.is_some() { None } else { self.wear_victim() };
        let policy = if forced { GcPolicy::Greedy } else { self.cfg.gc_policy };
        let Some(sb) = reclaim.or(wear).or_else(|| self.policy_victim(policy)) else { return false };
        if wear.is_some() {
            self.counters.wear_level_victims += 1;
        }
        self.victim_begin(sb);
        true
    }

    /// A victim for background GC: the policy's choice, if collecting it
    /// frees anything (a superblock whose every slot is valid would be
    /// moved whole for nothing).
    pub(crate) fn victim_select_background(&mut self) -> bool {
        debug_assert!(self.gc.victim.is_none());
        let Some(sb) = self.policy_victim(self.cfg.gc_policy) else { return false };
        if self.sbs.meta[sb as usize].valid as u64 >= self.layout.data_slots_per_superblock as u64 {
            return false;
        }
        self.victim_begin(sb);
        true
    }

    /// Superblock `sb` (closed) becomes the victim, GC's rate set by its
    /// valid share.
    pub(crate) fn victim_begin(&mut self, sb: u32) {
        debug_assert!(self.gc.victim.is_none() && self.sbs.meta[sb as usize].state == SbState::Closed);
        let s = self.layout.data_slots_per_superblock as u64;
        let m = &mut self.sbs.meta[sb as usize];
        m.become_state(SbState::Victim);
        let v = m.valid as u64;
        self.gc.rate = if v >= s { 64 * ONE } else { (v * ONE).div_ceil(s - v).min(64 * ONE) };
        self.gc.victim = Some(Victim { sb, cursor: 0, prefetch: 0, page_first: 0, mask: 0 });
    }

    /// The closed superblock `policy` scores highest (the first on a tie).
    fn policy_victim(&self, policy: GcPolicy) -> Option<u32> {
        match policy {
            GcPolicy::Greedy => self.greedy_victim(),
            GcPolicy::CostBenefit => self.cost_benefit_victim(),
        }
    }

    /// The closed superblock with the fewest valid slots (the first on a
    /// tie): the most that collecting one frees.
    fn greedy_victim(&self) -> Option<u32> {
        // (index, valid); a valid count never reaches u64::MAX.
        let mut best = (None, u64::MAX);
        for (i, m) in self.sbs.meta.iter().enumerate() {
            if m.state == SbState::Closed && (m.valid as u64) < best.1 {
                best = (Some(i as u32), m.valid as u64);
            }
        }
        best.0
    }

    /// The closed superblock with the highest (free slots x age) / (2 x
    /// valid), Rosenblum and Ousterhout's cost-benefit (the first on a tie).
    fn cost_benefit_victim(&self) -> Option<u32> {
        let s = self.layout.data_slots_per_superblock as u64;
        let mut best: Option<(u32, u128, u128)> = None; // sb, score numerator, denominator
        for (i, m) in self.sbs.meta.iter().enumerate() {
            if m.state != SbState::Closed {
                continue;
            }
            let v = m.valid as u64;
            let age = (self.seq - m.close_seq + 1) as u128;
            let (num, den) = ((s - v) as u128 * age, 2 * v.max(1) as u128);
            if best.is_none_or(|(_, bn, bd)| num * bd > bn * den) {
                best = Some((i as u32, num, den));
            }
        }
        best.map(|(sb, _, _)| sb)
    }
}
