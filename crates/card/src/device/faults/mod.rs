//! Die failures on the device's clock: a die (or every die of a channel)
//! fails at a chosen moment, and the rebuild that follows moves data at
//! the profile's rate (`ftl.rebuild_bytes_per_sec`) while host I/O goes
//! on. Its reads and programs are GC work in the timing model: they take
//! GC threads, dies and channels, and a read that maps to a dead die costs
//! a read on every other member of its stripe (`ftl::faults`).

mod failures;

use serde::{Deserialize, Serialize};
use units::{Ns, NS_PER_SEC, SLOT_BYTES};

/// Which dies fail: `CH.DIE` (die `DIE` of channel `CH`), `CH.*` (every die
/// of channel `CH`), each optionally `MEMBER:`-prefixed on a card of
/// several members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailTarget {
    pub member: usize,
    pub channel: u32,
    /// None: the whole channel.
    pub die: Option<u32>,
}

/// Written as `parse` reads it: `[MEMBER:]CH.DIE` or `[MEMBER:]CH.*`.
impl std::fmt::Display for FailTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.member > 0 {
            write!(f, "{}:", self.member)?;
        }
        match self.die {
            Some(d) => write!(f, "{}.{d}", self.channel),
            None => write!(f, "{}.*", self.channel),
        }
    }
}

/// A failure target that is not written as one, or names a die the card
/// does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("die '{0}': expected CHANNEL.DIE (die DIE of channel CHANNEL, both from 0), CHANNEL.* (a whole channel), optionally MEMBER: before")]
    Syntax(String),
    #[error("member {member}: the card has members 0 to {last}")]
    Member { member: usize, last: usize },
    #[error("channel {channel}: the card has channels 0 to {last}")]
    Channel { channel: u32, last: u32 },
    #[error("die {die} of channel {channel}: a channel has dies 0 to {last}")]
    Die { die: u32, channel: u32, last: u32 },
}

impl FailTarget {
    /// Parses `[MEMBER:]CH.DIE` or `[MEMBER:]CH.*`.
    pub fn parse(s: &str) -> Result<FailTarget, TargetError> {
        let bad = || TargetError::Syntax(s.to_string());
        let (member, rest) = match s.split_once(':') {
            Some((m, r)) => (m.trim().parse().map_err(|_| bad())?, r),
            None => (0, s),
        };
        let (ch, die) = rest.split_once('.').ok_or_else(bad)?;
        let channel = ch.trim().parse().map_err(|_| bad())?;
        let die = match die.trim() {
            "*" => None,
            d => Some(d.parse().map_err(|_| bad())?),
        };
        Ok(FailTarget { member, channel, die })
    }

    /// The target as written.
    pub fn describe(&self, members: usize) -> String {
        let m = if members > 1 { format!("member {} ", self.member) } else { String::new() };
        match self.die {
            Some(d) => format!("{m}die {}.{d}", self.channel),
            None => format!("{m}channel {}", self.channel),
        }
    }

    /// The member's die indices it names (dies are channel-minor: die `d`
    /// of channel `c` is `d * channels + c`), checked against the geometry.
    pub fn dies(&self, g: &nand::Geometry, members: usize) -> Result<Vec<u32>, TargetError> {
        if self.member >= members {
            return Err(TargetError::Member { member: self.member, last: members - 1 });
        }
        if self.channel >= g.channels {
            return Err(TargetError::Channel { channel: self.channel, last: g.channels - 1 });
        }
        match self.die {
            Some(d) if d >= g.dies_per_channel => Err(TargetError::Die { die: d, channel: self.channel, last: g.dies_per_channel - 1 }),
            Some(d) => Ok(vec![d * g.channels + self.channel]),
            None => Ok((0..g.dies_per_channel).map(|d| d * g.channels + self.channel).collect()),
        }
    }
}

/// A failure that happened, and its rebuild.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureEvent {
    /// What failed ("die 3.1", "channel 3").
    pub what: String,
    pub member: usize,
    /// The member's dies that failed.
    pub dies: Vec<u32>,
    /// When, on the device's clock.
    pub failed_at_ns: Ns,
    /// Valid 4 KiB slots in stripes that held a failed die.
    pub slots_to_rebuild: u64,
    /// Slots the rebuild moved (host writes may have replaced some of the
    /// others first).
    pub slots_moved: u64,
    /// When the rebuild's last work was done; none while it runs.
    pub rebuild_done_ns: Option<Ns>,
    /// Device byte offsets of the 4 KiB slots lost (their stripe had lost
    /// another member before the rebuild emptied it).
    pub lost_offsets: Vec<u64>,
    /// Why the card turned read-only, if it did.
    pub read_only: Option<String>,
    /// Drawn by the random failure process, not asked for.
    #[serde(default)]
    pub random: bool,
    /// Not a failure of this power-on: the rebuild of dies that failed
    /// before it, resumed when the card was mounted with stripes still
    /// holding them.
    #[serde(default)]
    pub resumed: bool,
}

impl FailureEvent {
    /// Seconds from the failure to the rebuild's end.
    pub fn rebuild_s(&self) -> Option<f64> {
        self.rebuild_done_ns.map(|d| (d - self.failed_at_ns) as f64 / NS_PER_SEC as f64)
    }
}

/// A rebuild under way on one member.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rebuilding {
    pub(crate) since: Ns,
    pub(crate) moved: u64,
    /// The event it belongs to (the latest failure on the member).
    pub(crate) event: usize,
}

/// Failures still to come, rebuilds under way, and what happened.
#[derive(Debug, Clone, Default)]
pub(crate) struct Faults {
    /// Scheduled failures, earliest last (popped from the end).
    pub(crate) pending: Vec<(Ns, FailTarget)>,
    pub(crate) rebuilding: Vec<Option<Rebuilding>>,
    pub(crate) events: Vec<FailureEvent>,
    pub(crate) rebuild_bytes_per_sec: u64,
    /// The next moment anything is due: a failure, or rebuild work.
    pub(crate) next_due: Ns,
    /// Die failures and uncorrectable errors drawn at random, if asked.
    pub(crate) random: Option<RandomFaults>,
}

/// Die failures and uncorrectable errors as random events (Schroeder et
/// al., FAST 2016: in the field neither follows from the raw bit error
/// rate): each a Poisson process on the device's clock at the profile's
/// field rates (`nand.errors.field_*`, per member) times an acceleration,
/// so that a run of minutes can see what a card sees in years. A die
/// failure picks a live die of a member at random; an uncorrectable error
/// makes that member's next page read fail its ECC whatever its bit
/// errors (rebuilt from its stripe where it has parity).
#[derive(Debug, Clone)]
pub(crate) struct RandomFaults {
    /// Mean time between events over the card, ns (infinite: none).
    die_mean_ns: f64,
    ue_mean_ns: f64,
    pub(crate) next_die_ns: Ns,
    pub(crate) next_ue_ns: Ns,
    pub(crate) rng: sim::Rng,
    /// Uncorrectable errors drawn so far.
    pub(crate) ue_events: u64,
}

const NS_PER_DAY: f64 = 86_400.0 * NS_PER_SEC as f64;

impl RandomFaults {
    /// From `now`, at the field rates per member of `members` members
    /// times `acceleration`.
    pub(crate) fn new(die_per_year: f64, ue_per_day: f64, members: usize, acceleration: f64, seed: u64, now: Ns) -> RandomFaults {
        assert!(acceleration > 0.0 && acceleration.is_finite());
        let mean = |per_day: f64| 1.0 / (per_day * members as f64 * acceleration) * NS_PER_DAY;
        let mut r = RandomFaults {
            die_mean_ns: mean(die_per_year / 365.25),
            ue_mean_ns: mean(ue_per_day),
            next_die_ns: Ns::MAX,
            next_ue_ns: Ns::MAX,
            rng: sim::Rng::new(seed ^ 0x5eed_fa11_0000_0001),
            ue_events: 0,
        };
        r.next_die_ns = r.draw(now, r.die_mean_ns);
        r.next_ue_ns = r.draw(now, r.ue_mean_ns);
        r
    }

    /// The next event of a process of mean `mean_ns` after `now`
    /// (`Ns::MAX`: never).
    fn draw(&mut self, now: Ns, mean_ns: f64) -> Ns {
        if !mean_ns.is_finite() {
            return Ns::MAX;
        }
        let gap = -(1.0 - self.rng.unit()).ln() * mean_ns;
        if gap >= (Ns::MAX - now) as f64 {
            Ns::MAX
        } else {
            now + (gap as Ns).max(1)
        }
    }

    /// The next die failure after the one at `now`.
    pub(crate) fn die_next(&mut self, now: Ns) {
        self.next_die_ns = self.draw(now, self.die_mean_ns);
    }

    /// The next uncorrectable error after the one at `now`.
    pub(crate) fn ue_next(&mut self, now: Ns) {
        self.ue_events += 1;
        self.next_ue_ns = self.draw(now, self.ue_mean_ns);
    }

    /// The earliest event to come.
    pub(crate) fn next_ns(&self) -> Ns {
        self.next_die_ns.min(self.next_ue_ns)
    }
}

impl Faults {
    pub(crate) fn new(members: usize, rebuild_bytes_per_sec: u64) -> Faults {
        Faults { rebuilding: vec![None; members], rebuild_bytes_per_sec, next_due: Ns::MAX, ..Faults::default() }
    }

    /// Slots a rebuild that began at `since` should have moved by `now`.
    pub(crate) fn slots_due(&self, since: Ns, now: Ns) -> u64 {
        ((now.saturating_sub(since)) as u128 * self.rebuild_bytes_per_sec as u128 / (NS_PER_SEC as u128 * SLOT_BYTES as u128)) as u64
    }

    /// The time one page of `slots` takes at the rebuild's rate: how
    /// often a rebuild is advanced.
    pub(crate) fn tick_ns(&self, slots: u32) -> Ns {
        (slots as u128 * SLOT_BYTES as u128 * NS_PER_SEC as u128 / self.rebuild_bytes_per_sec as u128).max(1) as Ns
    }

    /// Sets `next_due` from what is pending and under way.
    pub(crate) fn plan(&mut self, now: Ns, slots_per_page: u32) {
        let failure = self.pending.last().map_or(Ns::MAX, |p| p.0);
        let rebuild = if self.rebuilding.iter().any(|r| r.is_some()) { now + self.tick_ns(slots_per_page) } else { Ns::MAX };
        let random = self.random.as_ref().map_or(Ns::MAX, |r| r.next_ns());
        self.next_due = failure.min(rebuild).min(random);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_name_their_dies() {
        let g = nand::Geometry {
            channels: 32,
            dies_per_channel: 16,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 4,
            page_size_bytes: 4096,
            oob_bytes: 224,
        };
        let t = FailTarget::parse("3.1").unwrap();
        assert_eq!(t.dies(&g, 1).unwrap(), vec![35]);
        assert_eq!(t.describe(1), "die 3.1");
        let ch = FailTarget::parse("5.*").unwrap();
        let dies = ch.dies(&g, 1).unwrap();
        assert_eq!(dies.len(), 16);
        assert!(dies.iter().all(|d| d % 32 == 5), "every die of channel 5");
        assert_eq!(FailTarget::parse("1:2.0").unwrap().describe(2), "member 1 die 2.0");
        for bad in ["", "3", "x.1", "3.x", "1:2", "-1.0"] {
            assert!(FailTarget::parse(bad).is_err(), "{bad}");
        }
        assert!(FailTarget::parse("32.0").unwrap().dies(&g, 1).unwrap_err().to_string().contains("channels 0 to 31"));
        assert!(FailTarget::parse("0.16").unwrap().dies(&g, 1).unwrap_err().to_string().contains("dies 0 to 15"));
        assert!(FailTarget::parse("1:0.0").unwrap().dies(&g, 1).unwrap_err().to_string().contains("members 0 to 0"));
    }

    /// The processes' mean gaps are the rates asked for (10,000 draws
    /// within 3%), none comes before `now`, and a zero rate never fires.
    #[test]
    fn random_events_come_at_their_rates() {
        let mut r = RandomFaults::new(365.25, 2.0, 2, 1.0, 7, 1000);
        assert!(r.next_die_ns > 1000 && r.next_ue_ns > 1000);
        let (mut t, n) = (0, 10_000);
        for _ in 0..n {
            let next = r.draw(t, r.ue_mean_ns);
            assert!(next > t);
            t = next;
        }
        // 2 a day on each of 2 members: 4 a day, a gap of 6 hours.
        let gap = t as f64 / n as f64 / NS_PER_DAY * 24.0;
        assert!((gap - 6.0).abs() < 0.18, "{gap} h");
        let never = RandomFaults::new(0.0, 0.0, 1, 1e9, 7, 0);
        assert_eq!(never.next_ns(), Ns::MAX);
    }

    #[test]
    fn a_rebuild_is_paced_at_its_rate() {
        let f = Faults::new(1, 200_000_000);
        // 200 MB/s is 48,828 slots of 4 KiB a second.
        assert_eq!(f.slots_due(0, NS_PER_SEC), 48_828);
        assert_eq!(f.slots_due(5, 3), 0, "never negative");
        assert_eq!(f.tick_ns(4), 81_920);
    }
}
