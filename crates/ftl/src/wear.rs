//! Static wear leveling: when the erase counts of superblocks spread by more
//! than the configured bound, the coldest closed superblock (holding data
//! that is rarely rewritten) is collected, so that its blocks rejoin the
//! rotation. Dynamic wear leveling is the free pool's: it hands out the
//! least-worn superblock first ([`crate::superblock`]).

use crate::superblock::SbState;
use crate::Ftl;
use nand::Media;

impl<M: Media> Ftl<M> {
    /// The superblock static wear leveling collects next, if it is due.
    pub(crate) fn wear_victim(&self) -> Option<u32> {
        if self.cfg.wear_spread_max == 0 {
            return None;
        }
        let (lo, hi) = self.sbs.meta.iter().fold((u32::MAX, 0), |(lo, hi), m| (lo.min(m.erase_count), hi.max(m.erase_count)));
        if hi - lo <= self.cfg.wear_spread_max {
            return None;
        }
        let coldest = self.sbs.meta.iter().enumerate().filter(|(_, m)| m.state == SbState::Closed).min_by_key(|(i, m)| (m.erase_count, *i));
        coldest.filter(|(_, m)| m.erase_count == lo).map(|(i, _)| i as u32)
    }
}
