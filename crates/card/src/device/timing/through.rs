//! Write-through (`ftl.write_cache = "write-through"`: the P320h's
//! "nonposted" writes): a host write is acknowledged once its data is
//! programmed. Each slot goes through the controller's program path and
//! over its channel to the die of the host's
//! open page and is programmed there at once (a partial-page program,
//! which SLC allows); writes that arrive while that die's next program
//! has not begun share it, up to a page's slots, as a controller gathers
//! the writes queued for a die. The page's own program, once the FTL has
//! filled it, then costs the die nothing more: its data is there.

use super::{Costs, MemberTiming};
use units::Ns;

/// A die's program of host slots that has not begun or is under way.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Pending {
    start: Ns,
    end: Ns,
    slots: u32,
}

impl MemberTiming {
    /// A host slot in the buffer at `ready`, going to `die`: when it is
    /// programmed.
    pub(in crate::device) fn write_through(&mut self, c: &Costs, die: u32, ready: Ns) -> Ns {
        debug_assert!(c.write_through, "only a write-through card programs a write at once");
        let (u, ch, ctl) = (c.unit_of(die), c.die_channel[die as usize] as usize, c.die_controller[die as usize] as usize);
        let staged = self.program_path[ctl].reserve(ready, c.program_path_mpage_ns.div_ceil(c.spm as Ns));
        let loaded = self.channels[ch].reserve(staged, c.slot_transfer_ns);
        let p = &mut self.through[u];
        if p.start >= loaded && p.slots < c.spm {
            p.slots += 1;
            return p.end;
        }
        let program = c.program_ns[0];
        let end = self.dies[u].reserve(loaded, program);
        *p = Pending { start: end - program, end, slots: 1 };
        end
    }
}
