//! A bridge in front of the card's members (`[bridge]`: a PCIe-to-SAS
//! controller before several SSDs): its processor passes each I/O's
//! command, one at a time, and its data path moves the I/O's bytes, a
//! write's on the way in and a read's on the way out. Whatever the
//! members could do together, the card does no more than the bridge
//! passes.

use crate::catalog::profile::BridgeProfile;
use sim::Timeline;
use units::{Ns, NS_PER_SEC};

#[derive(Debug, Clone)]
pub(super) struct Bridge {
    command_ns: Ns,
    bytes_per_sec: u64,
    commands: Timeline,
    data: Timeline,
}

impl Bridge {
    pub(super) fn new(p: &BridgeProfile) -> Bridge {
        debug_assert!(p.commands_per_sec > 0 && p.bytes_per_sec > 0, "validated");
        Bridge { command_ns: NS_PER_SEC.div_ceil(p.commands_per_sec), bytes_per_sec: p.bytes_per_sec, commands: Timeline::default(), data: Timeline::default() }
    }

    fn data_ns(&self, len: u64) -> Ns {
        (len as u128 * NS_PER_SEC as u128).div_ceil(self.bytes_per_sec as u128) as Ns
    }

    /// An I/O of `len` bytes submitted at `now`: when the members may take
    /// it (its command passed and, for a write, its data moved).
    pub(super) fn inbound(&mut self, now: Ns, len: u64, write: bool) -> Ns {
        let t = self.commands.reserve(now, self.command_ns);
        if write {
            self.data.reserve(t, self.data_ns(len))
        } else {
            t
        }
    }

    /// A read of `len` bytes the members have by `done`: when its data is
    /// through the bridge.
    pub(super) fn outbound(&mut self, done: Ns, len: u64) -> Ns {
        self.data.reserve(done, self.data_ns(len))
    }

    /// The busy time of the bridge's processor and of its data path that
    /// lies before `t`.
    pub(super) fn busy_by(&self, t: Ns) -> (Ns, Ns) {
        (self.commands.busy_by(t), self.data.busy_by(t))
    }
}
