//! The host a card runs on: its processors and the I/O stack outside the
//! card's driver (system calls, block layer, interrupts and completions),
//! a value of its own beside the card's profile. One host serves every
//! card: what a card's own driver costs on it is the card's (`[host]` of
//! its profile). Built in from `hosts/`; the reviewers' Linux server the
//! default.

use super::profile::ProfileError;
use serde::{Deserialize, Serialize};

/// The built-in hosts, embedded from `hosts/`.
pub const HOSTS: &[(&str, &str)] =
    &[("linux-centos6", include_str!("../../../../hosts/linux-centos6.toml")), ("windows-2008r2", include_str!("../../../../hosts/windows-2008r2.toml"))];

/// The host the reviews ran on, and every run's unless told otherwise.
pub const DEFAULT_HOST: &str = "linux-centos6";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// Short name used on the command line and in results.
    pub id: String,
    pub name: String,
    pub cpu: Cpu,
    pub stack: Stack,
    pub scheduler: Scheduler,
}

/// The host's processors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cpu {
    pub model: String,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub clock_ghz: f64,
}

/// The I/O stack outside the card's driver: host CPU time, and latency
/// every I/O pays at any load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stack {
    /// Submission: the benchmark's system call and the block layer.
    pub submit_ns: u64,
    /// Completion after the interrupt's core: waking the waiting thread,
    /// reaping the event.
    pub complete_ns: u64,
    /// A completion's work on the core that takes the card's interrupt
    /// vector (the handler, and what the OS runs there before the thread
    /// may: Linux's block softirq, Windows' DPC): served one at a time a
    /// vector.
    pub interrupt_ns: u64,
    /// Where a driver's own completion work runs (its `[host]
    /// read_completion_ns`).
    pub completion_core: CompletionCore,
}

/// Where the OS runs a driver's completion work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompletionCore {
    /// On the core that took the interrupt, one completion at a time a
    /// vector (Linux 2.6.32: a bio-based driver ends its requests in its
    /// handler).
    Interrupt,
    /// On the core that issued the I/O (Windows 7 and Server 2008 R2:
    /// StorPort's DPC redirection queues the completion's DPC to the
    /// issuing processor; only the ISR stays on the interrupt's core).
    Issuer,
}

/// How the OS shares a core between a host-managed driver's background
/// threads (its GC: the FlashMAX II's vFAS, the ioDrive2's VSL groomer)
/// and the benchmark's threads, when the benchmark's threads want every
/// core the model leaves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Scheduler {
    /// Fair sharing among threads of one standing (Linux's CFS): a driver
    /// thread and a benchmark thread runnable on one core take turns, each
    /// running its slice of the scheduling period (`period_ns` shared by
    /// the two, never less than `min_slice_ns`) while the other waits.
    Fair { period_ns: u64, min_slice_ns: u64 },
    /// Strict priorities (Windows): the driver's threads run above the
    /// benchmark's, which never preempt them.
    Priority,
}

impl Scheduler {
    /// How long a host-managed driver's thread runs, and then waits, while
    /// a benchmark thread shares its core: `None` where the benchmark's
    /// threads never take its core.
    pub fn shared_slice_ns(&self) -> Option<u64> {
        match *self {
            // Two runnable threads: the period halved, at least the least slice.
            Scheduler::Fair { period_ns, min_slice_ns } => Some((period_ns / 2).max(min_slice_ns)),
            Scheduler::Priority => None,
        }
    }
}

impl Host {
    pub fn parse(file: &str, text: &str) -> Result<Host, ProfileError> {
        let h: Host = toml::from_str(text).map_err(|e| ProfileError::Parse { file: file.to_string(), msg: e.to_string() })?;
        h.validate()?;
        Ok(h)
    }

    /// The reviewers' host (the built-in default).
    pub fn reviewers() -> Host {
        host_load(DEFAULT_HOST).expect("the built-in default host parses (catalog test)")
    }

    /// Physical cores: the host's I/O paths and a host driver's threads
    /// run on them (a core's second hardware thread is not counted).
    pub fn cores(&self) -> u32 {
        self.cpu.sockets * self.cpu.cores_per_socket
    }

    fn validate(&self) -> Result<(), ProfileError> {
        let field = |field: &str, value: String, range: &str| ProfileError::Field { id: self.id.clone(), field: field.into(), value, range: range.into() };
        for (k, v) in [("cpu.sockets", self.cpu.sockets), ("cpu.cores_per_socket", self.cpu.cores_per_socket)] {
            if !(1..=256).contains(&v) {
                return Err(field(k, v.to_string(), "in 1..=256"));
            }
        }
        if !(self.cpu.clock_ghz > 0.0 && self.cpu.clock_ghz <= 10.0) {
            return Err(field("cpu.clock_ghz", self.cpu.clock_ghz.to_string(), "above 0 and at most 10"));
        }
        let s = &self.stack;
        for (k, v) in [("stack.submit_ns", s.submit_ns), ("stack.complete_ns", s.complete_ns), ("stack.interrupt_ns", s.interrupt_ns)] {
            if v > 10_000_000 {
                return Err(field(k, v.to_string(), "at most 10 ms"));
            }
        }
        if let Scheduler::Fair { period_ns, min_slice_ns } = self.scheduler {
            for (k, v) in [("scheduler.period_ns", period_ns), ("scheduler.min_slice_ns", min_slice_ns)] {
                if !(1_000..=1_000_000_000).contains(&v) {
                    return Err(field(k, v.to_string(), "from 1 us to 1 s"));
                }
            }
        }
        Ok(())
    }
}

impl Default for Host {
    fn default() -> Host {
        Host::reviewers()
    }
}

/// Short names of the built-in hosts: the reviewers' two systems by their
/// OS alone.
pub const HOST_ALIASES: &[(&str, &str)] = &[("linux", "linux-centos6"), ("windows", "windows-2008r2")];

/// The id a host is named by: a short name resolved, absent the
/// reviewers' Linux server (the default).
pub fn host_id(name: Option<&str>) -> &str {
    let name = name.unwrap_or(DEFAULT_HOST);
    HOST_ALIASES.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, id)| *id)
}

/// A host's id where it is not the reviewers' Linux server (the default,
/// which labels and file names leave unsaid).
pub fn host_not_default(id: Option<&str>) -> Option<&str> {
    id.filter(|h| *h != DEFAULT_HOST)
}

/// How a host is named where room is short: its short name where it has
/// one, else its id.
pub fn host_short(id: &str) -> &str {
    HOST_ALIASES.iter().find(|(_, i)| *i == id).map_or(id, |(alias, _)| *alias)
}

/// A host by built-in id or short name, or a host file by path.
pub fn host_load(name: &str) -> Result<Host, ProfileError> {
    super::built_in_or_file(host_id(Some(name)), HOSTS, "hosts", Host::parse, |expected| ProfileError::UnknownHost {
        name: name.to_string(),
        expected: format!("{expected} (or {})", HOST_ALIASES.iter().map(|(a, _)| *a).collect::<Vec<_>>().join(", ")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_host_parses_and_the_default_is_the_reviewers() {
        for (id, _) in HOSTS {
            assert_eq!(host_load(id).unwrap().id, *id);
        }
        let h = Host::reviewers();
        assert_eq!((h.id.as_str(), h.cores()), (DEFAULT_HOST, 12));
    }

    #[test]
    fn a_bad_host_is_refused_naming_its_field() {
        let text = HOSTS[0].1.replace("sockets = 2", "sockets = 0");
        let e = Host::parse("mine.toml", &text).unwrap_err().to_string();
        assert!(e.contains("cpu.sockets = 0"), "{e}");
        let text = HOSTS[0].1.replace("complete_ns = 2_000", "complete_ns = 2_000\nturbo = true");
        let e = Host::parse("mine.toml", &text).unwrap_err().to_string();
        assert!(e.contains("mine.toml") && e.contains("turbo"), "{e}");
        assert!(host_load("windows-nt").unwrap_err().to_string().contains("linux-centos6"));
    }
}
