//! The host a card runs on: its processors and the I/O stack outside the
//! card's driver (system calls, block layer, interrupts and completions),
//! a value of its own beside the card's profile. One host serves every
//! card: what a card's own driver costs on it is the card's (`[host]` of
//! its profile). Built in from `hosts/`; the reviewers' Linux server the
//! default.

use super::profile::ProfileError;
use serde::{Deserialize, Serialize};

/// The built-in hosts, embedded from `hosts/`.
pub const HOSTS: &[(&str, &str)] = &[("linux-centos6", include_str!("../../../../hosts/linux-centos6.toml"))];

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
    /// Completion: the interrupt, reaping the event, waking the thread.
    pub complete_ns: u64,
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
        for (k, v) in [("stack.submit_ns", self.stack.submit_ns), ("stack.complete_ns", self.stack.complete_ns)] {
            if v > 10_000_000 {
                return Err(field(k, v.to_string(), "at most 10 ms"));
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

/// A host by built-in id, or a host file by path.
pub fn host_load(name: &str) -> Result<Host, ProfileError> {
    super::built_in_or_file(name, HOSTS, "hosts", Host::parse, |expected| ProfileError::UnknownHost { name: name.to_string(), expected })
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
