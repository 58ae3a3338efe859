//! The host flash translation layer.
//!
//! Page-level mapping at 4 KiB: an L2P array (4 bytes a user slot) and a P2L
//! array (4 bytes a physical slot, which also serves as the valid bitmap).
//! User and GC data go to two open superblocks through two writers; each
//! writer fills one multi-plane page at a time (the write buffer's unit) and
//! programs a stripe's parity page when the stripe's data pages are done.
//! Garbage collection is paced against user writes: each user slot earns GC
//! credit in proportion to the victim's valid share, so that free space stays
//! level and no write waits for a whole victim to be cleaned.
//!
//! The FTL reaches the media only through [`nand::Media`] and never reads a
//! clock: the simulator times the operations it issues; on data-holding
//! media the same operations move real bytes.

mod bad;
mod check;
mod checkpoint;
mod faults;
mod gc;
mod io;
mod layout;
mod map;
mod oracle;
mod policy;
mod reclaim;
mod recover;
mod retire;
mod superblock;
mod system;
mod wear;
mod writer;

pub use check::Inconsistency;
pub use faults::{DieFailure, FaultCounters};
pub use layout::{Layout, Narrowing, SlotAddr};
pub use oracle::wa_greedy_large_block;
pub use policy::{GcPolicy, UnknownPolicy};
pub use recover::MountReport;
pub use superblock::BadBlocks;
pub use superblock::SbState;

use faults::FaultState;
use gc::Gc;
use map::Map;
use nand::{Media, NandError, OpTag};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use superblock::{Superblocks, SB_NONE};
use units::vec_huge;
use units::{Ppa, SlotLba, LBA_UNMAPPED, PPA_INVALID, SLOT_BYTES};
use writer::{WriterId, Writers};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FtlConfig {
    /// Dies per parity stripe including the parity die (8 for 7+1); 1 for none.
    pub stripe_width: u32,
    /// Usable capacity in 4 KiB slots (set by the format).
    pub user_slots: u64,
    /// Free superblocks GC keeps in hand beyond the two open ones.
    pub reserve_superblocks: u32,
    pub gc_policy: GcPolicy,
    /// Static wear leveling: when the erase counts of superblocks spread by
    /// more than this, the coldest superblock is collected. 0 turns it off.
    pub wear_spread_max: u32,
    /// Whether the write buffer survives a power cut (capacitors). On
    /// data-holding media, with it each host slot is staged in the media's
    /// protected buffer as it is written; without it only what a flush
    /// put on the media survives, and a GC victim is erased only after
    /// the user writer's open page is on the media too (the writes that
    /// made the victim's copies stale must not be lost with them).
    #[serde(default)]
    pub power_loss_protection: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FtlError {
    #[error("LBA slot {lba} is out of range: the device has {user_slots} slots of 4 KiB")]
    LbaOutOfRange { lba: u64, user_slots: u64 },
    #[error("format: {0}")]
    Config(String),
    #[error("device full: no free superblock could be reclaimed ({0})")]
    NoSpace(String),
    /// The media's error, said as it is (a wrapper that also printed it
    /// would say it twice in an error's chain).
    #[error(transparent)]
    Nand(#[from] NandError),
    #[error("{0}")]
    Fault(String),
    #[error("LBA slot {lba} was lost (two dies of its stripe failed before the rebuild moved it): an I/O error until it is written again")]
    Lost { lba: u32 },
    #[error("the card is read-only: {0}")]
    ReadOnly(String),
}

/// What the FTL has done, in slots of 4 KiB.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FtlCounters {
    pub host_slots_written: u64,
    pub host_slots_read: u64,
    pub host_slots_trimmed: u64,
    pub gc_slots_moved: u64,
    /// Places GC left empty: slots a host write replaced between the read
    /// of their victim page and their move.
    pub gc_slots_padded: u64,
    pub gc_victims: u64,
    pub wear_level_victims: u64,
    pub forced_gc_slots: u64,
    /// Victims taken for read reclaim (their reads needed retries).
    pub reclaim_victims: u64,
}

/// Where a read was served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadFrom {
    Unmapped,
    Buffer,
    Media,
}

/// A flash translation layer over media `M`: its state in named parts.
pub struct Ftl<M: Media> {
    media: M,
    layout: Layout,
    cfg: FtlConfig,
    map: Map,
    sbs: Superblocks,
    writers: Writers,
    gc: Gc,
    faults: FaultState,
    seq: u64,
    /// Host writes so far: each slot's data carries its write's number (in
    /// its OOB on data-holding media), so recovery can tell the newest copy.
    host_seq: u64,
    data: bool,
    /// A host read's page (data-holding media only).
    scratch: Vec<u8>,
    counters: FtlCounters,
    /// The slots of the last host read's span that no page held (never
    /// written, or trimmed): read as zeros, from no flash.
    span_unmapped: u32,
}

const ONE: u64 = 1 << 16;

impl<M: Media> Ftl<M> {
    /// The largest usable capacity, in slots, that leaves GC room to work:
    /// every superblock but the reserve, the two open ones and two more.
    pub fn user_slots_max(layout: &Layout, reserve_superblocks: u32) -> u64 {
        let sbs = layout.superblocks as u64;
        sbs.saturating_sub(reserve_superblocks as u64 + 4) * layout.data_slots_per_superblock as u64
    }

    /// The bytes of the maps an FTL of `layout` and `user_slots` allocates
    /// (L2P, P2L and validity bitmap: the memory that grows with the card),
    /// for telling a user before a run how much a card will take.
    pub fn map_bytes(layout: &Layout, user_slots: u64) -> u64 {
        let total = layout.total_slots();
        user_slots * size_of::<Ppa>() as u64 + total * size_of::<SlotLba>() as u64 + total.div_ceil(64) * 8
    }

    /// Formats `media` (every block erased) to the usable capacity in `cfg`.
    pub fn format(media: M, cfg: FtlConfig) -> Result<Ftl<M>, FtlError> {
        let mut ftl = Ftl::unformatted(media, cfg)?;
        ftl.factory_scan();
        ftl.fits_check(ftl.cfg.user_slots)?;
        ftl.secure_erase()?;
        Ok(ftl)
    }

    /// An FTL of `cfg` over `media` with an empty map, its media untouched.
    fn unformatted(media: M, cfg: FtlConfig) -> Result<Ftl<M>, FtlError> {
        let g = media.geometry().clone();
        g.validate().map_err(|e| FtlError::Config(e.to_string()))?;
        if cfg.stripe_width == 0 || !g.dies().is_multiple_of(cfg.stripe_width) {
            return Err(FtlError::Config(format!("stripe_width = {}: must be at least 1 and divide the {} dies", cfg.stripe_width, g.dies())));
        }
        if cfg.reserve_superblocks == 0 {
            return Err(FtlError::Config("reserve_superblocks = 0: GC needs at least 1 free superblock in reserve".into()));
        }
        let layout = Layout::new(&g, cfg.stripe_width);
        let max = Self::user_slots_max(&layout, cfg.reserve_superblocks);
        if cfg.user_slots == 0 || cfg.user_slots > max {
            return Err(FtlError::Config(format!(
                "usable capacity of {} slots ({} bytes) must be in 1..={} slots: {} superblocks of {} data slots, less {} in reserve and 4 for the open writers and GC",
                cfg.user_slots,
                cfg.user_slots * SLOT_BYTES,
                max,
                layout.superblocks,
                layout.data_slots_per_superblock,
                cfg.reserve_superblocks
            )));
        }
        let data = media.holds_data();
        let spm = layout.slots_per_mpage;
        let mpage_bytes = g.mpage_bytes() as usize;
        let ftl = Ftl {
            map: Map::new(cfg.user_slots, layout.total_slots()),
            sbs: Superblocks::new(&layout),
            writers: Writers::new(spm, mpage_bytes, data),
            gc: Gc::new(data, mpage_bytes),
            faults: FaultState::new(data, mpage_bytes),
            seq: 0,
            host_seq: 0,
            data,
            scratch: if data { vec![0; mpage_bytes] } else { Vec::new() },
            span_unmapped: 0,
            counters: FtlCounters::default(),
            media,
            layout,
            cfg,
        };
        debug_assert_eq!(Self::map_bytes(&ftl.layout, ftl.cfg.user_slots), ftl.map.bytes());
        Ok(ftl)
    }

    /// Erases every block and empties the map, as a vendor secure erase does.
    /// Dead dies stay dead: their blocks are not erased, every
    /// superblock is narrowed, and the lost LBAs are forgotten (a secure
    /// erase empties the card).
    pub fn secure_erase(&mut self) -> Result<(), FtlError> {
        for sb in 0..self.layout.superblocks {
            self.superblock_erase(sb, OpTag::Format)?;
            let m = &mut self.sbs.meta[sb as usize];
            m.erase_count += 1;
            m.found_state(SbState::Free);
            m.valid = 0;
            m.short = false;
            self.sbs.narrows[sb as usize] = self.narrowing_fresh(sb);
            self.sbs.row_narrows[sb as usize].clear();
        }
        self.faults.lost.clear();
        self.faults.rebuild = None;
        self.map.l2p.fill(PPA_INVALID);
        self.map.p2l.fill(LBA_UNMAPPED);
        self.map.valid.fill(0);
        self.sbs.free.clear();
        for sb in 0..self.layout.superblocks {
            if self.sb_usable(sb) {
                self.sbs.free.push(Reverse((self.sbs.meta[sb as usize].erase_count, sb)));
            }
        }
        self.writers[WriterId::User].sb = SB_NONE;
        self.writers[WriterId::Gc].sb = SB_NONE;
        self.gc.victim = None;
        self.gc.reclaim.clear();
        self.gc.credit = 0;
        self.gc.rate = 0;
        self.system_save()
    }

    /// Whether the card can be formatted to `user_slots`: within the
    /// layout's bounds and held by the good blocks of the live dies.
    pub fn reformat_check(&self, user_slots: u64) -> Result<(), FtlError> {
        let max = Self::user_slots_max(&self.layout, self.cfg.reserve_superblocks);
        if user_slots == 0 || user_slots > max {
            return Err(FtlError::Config(format!("usable capacity of {user_slots} slots must be in 1..={max}")));
        }
        self.fits_check(user_slots)
    }

    /// Re-formats to a new usable capacity (secure erase included).
    pub fn reformat(&mut self, user_slots: u64) -> Result<(), FtlError> {
        self.reformat_check(user_slots)?;
        self.cfg.user_slots = user_slots;
        self.map.l2p = vec_huge(user_slots as usize, PPA_INVALID);
        // The new format fits the good blocks: writes are taken again.
        self.faults.read_only = None;
        self.secure_erase()
    }

    /// Refuses a format the good blocks of the live dies cannot hold.
    fn fits_check(&self, user_slots: u64) -> Result<(), FtlError> {
        let usable = self.usable_slots();
        if user_slots > usable {
            return Err(FtlError::Config(format!(
                "usable capacity of {user_slots} slots does not fit: with {} bad blocks and {} dead dies the good blocks hold {usable} slots beyond what garbage collection needs",
                self.sbs.bad_counts.total(),
                self.faults.dead.len()
            )));
        }
        Ok(())
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }
    pub fn config(&self) -> &FtlConfig {
        &self.cfg
    }
    pub fn media(&self) -> &M {
        &self.media
    }
    pub fn media_mut(&mut self) -> &mut M {
        &mut self.media
    }
    pub fn counters(&self) -> &FtlCounters {
        &self.counters
    }

    /// A copy of this FTL, every part of its state, over the copy of its
    /// media that `media` makes (none where the media cannot be copied: a
    /// store in a file).
    pub fn snapshot(&self, media: impl FnOnce(&M) -> Option<M>) -> Option<Ftl<M>> {
        Some(Ftl {
            media: media(&self.media)?,
            layout: self.layout.clone(),
            cfg: self.cfg.clone(),
            map: self.map.clone(),
            sbs: self.sbs.clone(),
            writers: self.writers.clone(),
            gc: self.gc.clone(),
            faults: self.faults.clone(),
            seq: self.seq,
            host_seq: self.host_seq,
            data: self.data,
            scratch: self.scratch.clone(),
            span_unmapped: self.span_unmapped,
            counters: self.counters.clone(),
        })
    }
    pub fn user_slots(&self) -> u64 {
        self.cfg.user_slots
    }
    #[inline]
    fn lba_check(&self, lba: SlotLba) -> Result<(), FtlError> {
        if (lba as u64) < self.cfg.user_slots {
            Ok(())
        } else {
            Err(FtlError::LbaOutOfRange { lba: lba as u64, user_slots: self.cfg.user_slots })
        }
    }
}
