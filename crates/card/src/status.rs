//! A card's status for its management tools (`flashlab status`, the
//! control channel's `status`): what it is, its health against its
//! ratings, its failures and their rebuilds, its power, its SMART-like log,
//! and the alerts an operator must see.

use crate::{Device, FailureEvent, Health, SmartLog};
use serde::{Deserialize, Serialize};

/// Spare under this share of the format raises an alert.
pub const SPARE_LOW: f64 = 0.05;
/// Life used from this share on raises an alert.
pub const LIFE_NEARLY_USED: f64 = 0.9;

/// A rebuild under way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rebuild {
    /// What failed ("die 3.1", "channel 3").
    pub what: String,
    /// 4 KiB slots the rebuild has moved, and at most how many it will
    /// (host writes replace some before it gets to them).
    pub slots_moved: u64,
    pub slots_at_most: u64,
}

/// Everything `flashlab status` shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The simulator's build standing for the card's firmware.
    pub firmware: String,
    /// The profile's version: the CRC-32 of its content (every figure the
    /// model runs on), in hex; it changes when the model of the card does.
    /// Absent in a status from before it was given.
    #[serde(default)]
    pub profile_crc: String,
    pub device: String,
    pub id: String,
    pub format: String,
    pub scale: u32,
    pub members: u32,
    /// The card's own usable bytes (a scaled card's share of its format).
    pub capacity_bytes: u64,
    /// The format's usable bytes on the full-size card.
    #[serde(default)]
    pub full_capacity_bytes: u64,
    /// The card's time, ns (0 at rest).
    pub card_ns: u64,
    pub power_loss_protection: bool,
    pub read_only: Option<String>,
    pub health: Health,
    /// Most cycles of a block less the fewest.
    pub erase_spread_cycles: u32,
    /// Host bytes written over the card's life (its SMART log where kept,
    /// else since it started).
    pub host_bytes_written: u64,
    pub drive_writes: f64,
    /// The vendor's rated bytes written, as drive writes of the format.
    pub rated_drive_writes: Option<f64>,
    /// NAND slots written (host and GC, parity not counted) per host slot,
    /// over the card's life.
    pub lifetime_write_amplification: Option<f64>,
    /// The failures since this power-on (the dead dies and lost slots
    /// outlive it: `dead_dies`, `slots_lost`).
    pub failures: Vec<FailureEvent>,
    /// Each member's dead dies.
    pub dead_dies: Vec<Vec<u32>>,
    /// Each dead die's name ("die 3.1"), in `dead_dies`' order.
    #[serde(default)]
    pub dead_die_names: Vec<String>,
    /// 4 KiB slots whose data is lost (a second failure in a stripe, a cut
    /// beyond parity): they read as I/O errors until written again. Kept
    /// across power-ons.
    #[serde(default)]
    pub slots_lost: u64,
    pub rebuilding: bool,
    pub rebuilds: Vec<Rebuild>,
    /// Reads through stripes, the rebuild's moves, slots lost, pages
    /// written again after failed programs.
    pub faults: ftl::FaultCounters,
    /// Modelled draw now, and the data sheet's idle and maximum; none
    /// where the data sheet gives none (or the card is at rest).
    pub power_watts: Option<f64>,
    pub power_idle_watts: Option<f64>,
    pub power_max_watts: Option<f64>,
    pub beacon: bool,
    pub smart: Option<SmartLog>,
    /// The age the card is served or run at (new: none).
    #[serde(default, skip_serializing_if = "crate::Age::is_new")]
    pub age: crate::Age,
    /// Read retries, reads rebuilt from parity and reads beyond it, since
    /// power-on (the bit-error model's, on an aged card).
    #[serde(default)]
    pub read_errors: crate::ErrorCounters,
    pub alerts: Vec<String>,
}

impl Device {
    /// The card's status at `now`; `busy`: the dies' busy share over the
    /// last second (none: the card is at rest, drawing nothing).
    pub fn status(&self, now: u64, busy: Option<f64>, beacon: bool) -> Status {
        let health = self.health();
        let c = self.counters();
        let smart = self.smart();
        let (host_slots, nand_slots) = match &smart {
            Some(s) => (s.host_slots_written, s.nand_slots_written),
            None => (c.host_slots_written, c.nand_slots_all()),
        };
        let host_bytes = host_slots * units::SLOT_BYTES;
        let full = self.full_capacity_bytes() as f64;
        let rated = self.profile.nand.endurance.as_ref().and_then(|e| e.rated_petabytes_written).map(|pb| pb * 1e15 / full);
        let rebuilds: Vec<Rebuild> = self
            .failures()
            .iter()
            .filter(|f| f.rebuild_done_ns.is_none() && self.member_ftls().nth(f.member).is_some_and(|ftl| ftl.rebuilding()))
            .map(|f| Rebuild { what: f.what.clone(), slots_moved: f.slots_moved, slots_at_most: f.slots_to_rebuild.max(f.slots_moved) })
            .collect();
        // Status and the FTL agree on whether a rebuild runs: a rebuild is
        // listed only while its member's FTL runs it, and every rebuild
        // the FTL runs has its failure event (one of this power-on, or
        // the one a mount makes when it resumes a rebuild).
        debug_assert_eq!(self.rebuilding(), !rebuilds.is_empty(), "status and the FTL agree on whether a rebuild runs");
        let power = self.profile.power;
        let mut s = Status {
            firmware: format!("flashlab {}", env!("CARGO_PKG_VERSION")),
            profile_crc: self.profile.crc(),
            device: self.profile.name.clone(),
            id: self.profile.id.clone(),
            format: self.format.clone(),
            scale: self.scale,
            members: self.profile.members,
            capacity_bytes: self.capacity_bytes(),
            full_capacity_bytes: self.full_capacity_bytes(),
            card_ns: now,
            power_loss_protection: self.power_loss_protection(),
            read_only: health.read_only.clone(),
            erase_spread_cycles: health.pe_cycles_max - health.pe_cycles_min,
            health,
            host_bytes_written: host_bytes,
            drive_writes: host_bytes as f64 / self.capacity_bytes().max(1) as f64,
            rated_drive_writes: rated,
            lifetime_write_amplification: (host_slots > 0).then(|| nand_slots as f64 / host_slots as f64),
            failures: self.failures().to_vec(),
            dead_dies: self.dead_dies(),
            dead_die_names: self.dead_die_names(),
            slots_lost: self.slots_lost(),
            rebuilding: self.rebuilding(),
            rebuilds,
            faults: c.faults.clone(),
            power_watts: power.zip(busy).map(|(p, b)| p.watts(b)),
            power_idle_watts: power.map(|p| p.idle_watts),
            power_max_watts: power.map(|p| p.max_watts),
            beacon,
            smart,
            age: self.age,
            read_errors: c.read_errors.clone(),
            alerts: Vec::new(),
        };
        s.alerts = s.alerts_now();
        s
    }
}

impl Status {
    /// What an operator must see, worst first.
    fn alerts_now(&self) -> Vec<String> {
        let mut a = Vec::new();
        if let Some(why) = &self.read_only {
            a.push(format!("read-only: {why}"));
        }
        if self.slots_lost > 0 {
            a.push(format!("{} slots of 4 KiB hold lost data: they read as I/O errors until written again", self.slots_lost));
        }
        // The newest failure first.
        for f in self.failures.iter().rev() {
            let lost = if f.lost_offsets.is_empty() { String::new() } else { format!(", {} slots lost", f.lost_offsets.len()) };
            match f.resumed {
                true => a.push(format!("{} dead (failed before this power-on; their rebuild resumed at power-on)", f.what)),
                false => a.push(format!("{} failed at {:.3} s{lost}", f.what, f.failed_at_ns as f64 / 1e9)),
            }
        }
        // Dead dies no failure of this power-on names: they failed before.
        let dead = self.dead_dies.iter().enumerate().flat_map(|(m, dies)| dies.iter().map(move |&d| (m, d)));
        let earlier: Vec<&str> = dead
            .zip(&self.dead_die_names)
            .filter(|((m, d), _)| !self.failures.iter().any(|f| f.member == *m && f.dies.contains(d)))
            .map(|(_, n)| n.as_str())
            .collect();
        if !earlier.is_empty() {
            a.push(format!("{} dead die{} (failed before this power-on): {}", earlier.len(), if earlier.len() == 1 { "" } else { "s" }, earlier.join(", ")));
        }
        for r in &self.rebuilds {
            let share = r.slots_moved as f64 / r.slots_at_most.max(1) as f64;
            a.push(format!("rebuild of {} running: {} of at most {} slots moved ({:.0}%)", r.what, r.slots_moved, r.slots_at_most, share * 100.0));
        }
        if self.health.spare_share < SPARE_LOW {
            a.push(format!("spare low: effective OP {:.1}% (alert under {:.0}%)", self.health.spare_share * 100.0, SPARE_LOW * 100.0));
        }
        if let Some(l) = self.health.life_used.filter(|&l| l >= LIFE_NEARLY_USED) {
            a.push(format!("life nearly used: {:.0}% of the rated cycles", l * 100.0));
        }
        if self.beacon {
            a.push("beacon on".into());
        }
        a
    }
}
