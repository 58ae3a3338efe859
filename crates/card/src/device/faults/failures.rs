//! Die failures on the card's clock: asked for or drawn at random, the
//! open stripes sealed, and the rebuild paced at its rate (the types are
//! in `crate::device::faults`).

use super::{FailTarget, FailureEvent, Faults, RandomFaults, Rebuilding};
use crate::device::timing::{HostRead, Start};
use crate::device::{Device, DeviceError};
use nand::Nand;
use units::{Ns, SLOT_BYTES};

impl Device {
    pub(in crate::device) fn faults_mut(&mut self) -> &mut Faults {
        let (members, rate) = (self.members.len(), self.profile.ftl.rebuild_bytes_per_sec);
        self.faults.get_or_insert_with(|| Box::new(Faults::new(members, rate)))
    }

    /// The dies a target names, checked against the card.
    pub(in crate::device) fn target_dies(&self, t: &FailTarget) -> Result<Vec<u32>, DeviceError> {
        let g = self.members[0].ftl.media().geometry();
        Ok(t.dies(g, self.members.len())?)
    }

    /// Schedules a failure at `at` on the device's clock: it happens at the
    /// first I/O submitted from then on.
    pub fn fail_at(&mut self, target: &FailTarget, at: Ns) -> Result<(), DeviceError> {
        self.target_dies(target)?;
        let f = self.faults_mut();
        f.pending.push((at, target.clone()));
        f.pending.sort_by_key(|p| std::cmp::Reverse(p.0));
        f.next_due = f.next_due.min(at);
        Ok(())
    }

    /// A card mounted with stripes still holding dead dies (a cut came
    /// before their rebuild ended) takes the rebuild up again at once, at
    /// the profile's pace, as a failure event of its own (`resumed`).
    pub(in crate::device) fn rebuilds_resume(&mut self) {
        let names = self.dead_die_names();
        let mut named = names.iter();
        for m in 0..self.members.len() {
            let dies = self.members[m].ftl.dead_dies().to_vec();
            let these: Vec<String> = named.by_ref().take(dies.len()).cloned().collect();
            if self.members[m].ftl.rebuilding() && self.members[m].ftl.rebuild_left() == 0 {
                // A mount starts a pass over every stripe of a card with
                // dead dies; with nothing left to move, it ends at once
                // (no media operation).
                self.members[m].ftl.rebuild_step(1).expect("a rebuild with nothing to move touches no media");
                assert!(!self.members[m].ftl.rebuilding(), "a pass with nothing to move ends");
            }
            if !self.members[m].ftl.rebuilding() {
                continue;
            }
            let ev = FailureEvent {
                what: these.join(", "),
                member: m,
                dies,
                failed_at_ns: 0,
                slots_to_rebuild: self.members[m].ftl.rebuild_left(),
                slots_moved: 0,
                rebuild_done_ns: None,
                lost_offsets: Vec::new(),
                read_only: None,
                random: false,
                resumed: true,
            };
            let spm = self.costs.spm;
            let f = self.faults_mut();
            f.events.push(ev);
            f.rebuilding[m] = Some(Rebuilding { since: 0, moved: 0, event: f.events.len() - 1 });
            f.plan(0, spm);
        }
    }

    /// Fails a target's dies now; the rebuild starts.
    pub fn fail_now(&mut self, now: Ns, target: &FailTarget) -> Result<FailureEvent, DeviceError> {
        let dies = self.target_dies(target)?;
        let (m, members) = (target.member, self.members.len());
        if let Some(d) = dies.iter().find(|&&d| self.members[m].ftl.is_dead(d)) {
            return Err(DeviceError::AlreadyFailed { target: target.describe(members), die: *d });
        }
        let mut ev = FailureEvent {
            what: target.describe(members),
            member: m,
            dies: dies.clone(),
            failed_at_ns: now,
            slots_to_rebuild: 0,
            slots_moved: 0,
            rebuild_done_ns: None,
            lost_offsets: Vec::new(),
            read_only: None,
            random: false,
            resumed: false,
        };
        // The open stripes are sealed: their programs are timed.
        let c = &self.costs;
        let (fails, _) = self.members[m].apply(c, Start::At(now), HostRead::NONE, |f| dies.iter().map(|&d| f.die_fail(d)).collect::<Result<Vec<_>, _>>())?;
        for f in fails {
            ev.slots_to_rebuild = f.slots_to_rebuild;
            ev.read_only = ev.read_only.or(f.read_only);
            ev.lost_offsets.extend(f.lbas_lost.iter().map(|&lba| self.device_offset(m, lba as u64 * SLOT_BYTES)));
        }
        let spm = self.costs.spm;
        let f = self.faults_mut();
        f.events.push(ev.clone());
        f.rebuilding[m] = Some(Rebuilding { since: now, moved: 0, event: f.events.len() - 1 });
        f.plan(now, spm);
        Ok(ev)
    }

    /// Failures due by `now` happen; rebuilds under way move what their
    /// rate allows by then.
    #[inline(never)]
    pub(in crate::device) fn faults_advance(&mut self, now: Ns) -> Result<(), DeviceError> {
        self.random_advance(now)?;
        while let Some((at, t)) = self.faults.as_ref().and_then(|f| f.pending.last().cloned()).filter(|p| p.0 <= now) {
            self.faults_mut().pending.pop();
            self.fail_now(at, &t)?;
        }
        for m in 0..self.members.len() {
            let Some(r) = self.faults.as_ref().and_then(|f| f.rebuilding[m]) else { continue };
            let due = self.faults.as_ref().map_or(0, |f| f.slots_due(r.since, now)).saturating_sub(r.moved);
            let c = &self.costs;
            let (moved, _) = self.members[m].apply(c, Start::At(now), HostRead::NONE, |f| if due > 0 { f.rebuild_step(due) } else { Ok(0) })?;
            let (done, gc_ready) = (!self.members[m].ftl.rebuilding(), self.members[m].timing.gc_ready);
            let f = self.faults_mut();
            let ev = &mut f.events[r.event];
            ev.slots_moved += moved;
            f.rebuilding[m] = Some(Rebuilding { moved: r.moved + moved, ..r });
            if done {
                // One rebuild empties every stripe holding a dead die of
                // the member: it ends every failure of the member that
                // was waiting for it, the earlier ones too.
                for ev in f.events.iter_mut().filter(|e| e.member == m && e.rebuild_done_ns.is_none()) {
                    ev.rebuild_done_ns = Some(now.max(gc_ready));
                }
                f.rebuilding[m] = None;
            }
        }
        let spm = self.costs.spm;
        self.faults_mut().plan(now, spm);
        Ok(())
    }

    /// Draws die failures and uncorrectable errors at random from `now`
    /// on, at the profile's field rates (`nand.errors.field_*`) times
    /// `acceleration` (see `RandomFaults` in `device::faults`).
    pub fn random_faults_set(&mut self, acceleration: f64, seed: u64, now: Ns) -> Result<(), DeviceError> {
        let Some(e) = &self.profile.nand.errors else {
            return Err(DeviceError::NoFieldRates { device: self.profile.id.clone() });
        };
        if e.field_die_failures_per_year == 0.0 && e.field_uncorrectable_per_day == 0.0 {
            return Err(DeviceError::ZeroFieldRates { device: self.profile.id.clone() });
        }
        if !(acceleration.is_finite() && acceleration > 0.0 && acceleration <= 1e12) {
            return Err(DeviceError::Acceleration(acceleration.to_string()));
        }
        let r = RandomFaults::new(e.field_die_failures_per_year, e.field_uncorrectable_per_day, self.members.len(), acceleration, seed, now);
        let spm = self.costs.spm;
        let f = self.faults_mut();
        f.random = Some(r);
        f.plan(now, spm);
        Ok(())
    }

    /// Random uncorrectable errors drawn so far.
    pub fn random_uncorrectable_events(&self) -> u64 {
        self.faults.as_ref().and_then(|f| f.random.as_ref()).map_or(0, |r| r.ue_events)
    }

    /// Random events due by `now` happen, in time order.
    pub(in crate::device) fn random_advance(&mut self, now: Ns) -> Result<(), DeviceError> {
        let (members, g) = (self.members.len() as u64, self.members[0].ftl.media().geometry().clone());
        loop {
            let Some(r) = self.faults.as_mut().and_then(|f| f.random.as_mut()) else { return Ok(()) };
            let (die_at, ue_at) = (r.next_die_ns, r.next_ue_ns);
            if die_at.min(ue_at) > now {
                return Ok(());
            }
            let m = r.rng.below(members) as usize;
            if ue_at < die_at {
                r.ue_next(ue_at);
                if let Some(w) = &mut self.members[m].wear {
                    w.ue_inject();
                }
                continue;
            }
            let pick = r.rng.below(u64::MAX);
            r.die_next(die_at);
            let live: Vec<u32> = (0..g.dies()).filter(|&d| !self.members[m].ftl.is_dead(d)).collect();
            if live.is_empty() || self.members[m].ftl.read_only().is_some() {
                continue;
            }
            let d = live[(pick % live.len() as u64) as usize];
            let t = FailTarget { member: m, channel: d % g.channels, die: Some(d / g.channels) };
            self.fail_now(die_at, &t)?;
            if let Some(ev) = self.faults.as_mut().and_then(|f| f.events.last_mut()) {
                ev.random = true;
            }
        }
    }

    /// Sets the rebuild's rate, bytes per second (the profile's unless
    /// set).
    pub fn rebuild_rate_set(&mut self, bytes_per_sec: u64) {
        assert!(bytes_per_sec > 0, "a rebuild rate is positive");
        self.profile.ftl.rebuild_bytes_per_sec = bytes_per_sec;
        if let Some(f) = &mut self.faults {
            f.rebuild_bytes_per_sec = bytes_per_sec;
        }
    }

    /// The rebuild's rate, bytes per second.
    pub fn rebuild_rate(&self) -> u64 {
        self.profile.ftl.rebuild_bytes_per_sec
    }

    /// Whether `target` names dies of this card (a failure scheduled for
    /// it would be refused).
    pub fn fail_check(&self, target: &FailTarget) -> Result<(), DeviceError> {
        self.target_dies(target).map(|_| ())
    }

    /// Background work due by `now` without a host I/O (a served card's
    /// rebuild while no request comes).
    pub fn background(&mut self, now: Ns) -> Result<(), DeviceError> {
        if self.faults.as_ref().is_some_and(|f| now >= f.next_due) {
            self.faults_advance(now)?;
            self.smart_keep();
        }
        Ok(())
    }

    /// The failures so far and their rebuilds.
    pub fn failures(&self) -> &[FailureEvent] {
        self.faults.as_ref().map_or(&[], |f| &f.events)
    }

    /// Each member's failed dies (those a mount found included).
    pub fn dead_dies(&self) -> Vec<Vec<u32>> {
        self.members.iter().map(|m| m.ftl.dead_dies().to_vec()).collect()
    }

    /// Each dead die's name ("die 3.1", "member 1 die 3.1"), member by
    /// member, as `dead_dies` lists them.
    pub fn dead_die_names(&self) -> Vec<String> {
        let g = self.members[0].ftl.media().geometry();
        let (channels, members) = (g.channels, self.members.len());
        let name = |member: usize, d: u32| FailTarget { member, channel: d % channels, die: Some(d / channels) }.describe(members);
        self.members.iter().enumerate().flat_map(|(m, mem)| mem.ftl.dead_dies().iter().map(move |&d| name(m, d))).collect()
    }

    /// 4 KiB slots whose data is lost (kept across power-ons in the
    /// system area).
    pub fn slots_lost(&self) -> u64 {
        self.members.iter().map(|m| m.ftl.lbas_lost().len() as u64).sum()
    }

    /// Valid slots still to move out of stripes holding a dead die.
    pub fn rebuild_left(&self) -> u64 {
        self.members.iter().map(|m| m.ftl.rebuild_left()).sum()
    }

    /// Whether a rebuild is under way.
    pub fn rebuilding(&self) -> bool {
        self.members.iter().any(|m| m.ftl.rebuilding())
    }
}
