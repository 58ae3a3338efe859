//! Why the device refuses: its errors, each a type whose `Display` is the
//! message a user reads.

use super::plan::gb_and_bytes;
use ftl::FtlError;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("unknown format '{format}' for {device}: expected one of {expected}, or a usable capacity such as 1500GB")]
    UnknownFormat { device: String, format: String, expected: String },
    #[error("format {} for {device}: a format's capacity is the full-size card's and must be from {} to {} (raw flash less parity, the GC reserve and the open superblocks); a scaled card holds its share of it", gb_and_bytes(*bytes), gb_and_bytes(1 << 30), gb_and_bytes(*max))]
    Capacity { device: String, bytes: u64, max: u64 },
    #[error("--scale {scale}: must be in 1..={max} for {device} (pages per block are divided first, then the {blocks} blocks per plane; a scaled device keeps at least {min_superblocks} superblocks and room for its format)")]
    Scale { device: String, scale: u32, max: u32, blocks: u32, min_superblocks: u32 },
    #[error("{device}: the card's maps take {:.1} GB, more than {what}, {:.1} GB: shrink it with --scale (64 settles where full size does)", *need as f64 / 1e9, *room as f64 / 1e9)]
    Memory { device: String, need: u64, room: u64, what: &'static str },
    #[error("I/O at byte {offset} of {len} bytes is out of range: the device holds {capacity} bytes, and I/O must be whole 512-byte sectors")]
    OutOfRange { offset: u64, len: u64, capacity: u64 },
    #[error("read of {len} bytes at member byte {offset}: a page beyond ECC after every retry, and its stripe cannot rebuild it (no parity, or another die of the stripe has failed): an I/O error (a media error in the SMART log)")]
    Unreadable { offset: u64, len: u64 },
    #[error(transparent)]
    Ftl(#[from] FtlError),
    /// A member's page file.
    #[error(transparent)]
    PageStore(#[from] nand::PageStoreError),
    /// A store looked at (not mounted) that holds no card.
    #[error("{}: no card here (no {})", dir.display(), file.display())]
    NoCard { dir: PathBuf, file: PathBuf },
    /// A member's checkpoint beside its page file, unreadable or unwritten.
    #[error("{}: checkpoint: {why}", dir.display())]
    Checkpoint { dir: PathBuf, why: String },
    /// A member's page file not synced at a clean stop.
    #[error("{}: {why}", dir.display())]
    Sync { dir: PathBuf, why: String },
    /// A store looked at (not mounted) that only a mount can tell about.
    #[error("{}: {why}: only a mount can tell its state, and a mount repairs; serve it once, then ask again", dir.display())]
    MountFirst { dir: PathBuf, why: MountFirst },
    /// A store looked at whose checkpoint does not fit its media.
    #[error("member {member}: its checkpoint does not fit its media ({why}): serve it once (a mount scans the media), then ask again")]
    CheckpointMisfit { member: usize, why: FtlError },
    /// A secure erase's overwrite of a member's pages.
    #[error("sanitize: member {member}: {why}")]
    Sanitize { member: usize, why: String },
    /// A served card asked after it stopped.
    #[error("the card has stopped")]
    Stopped,
    /// A file the store keeps beside its page files.
    #[error(transparent)]
    StoreFile(#[from] crate::StoreError),
    /// A die to fail that has failed already.
    #[error("{target}: die {die} has already failed")]
    AlreadyFailed { target: String, die: u32 },
    /// Random faults asked of a profile that cannot give them.
    #[error("{device}: the profile has no [nand.errors], so no field failure rates")]
    NoFieldRates { device: String },
    #[error("{device}: the profile's field failure rates are zero (nand.errors.field_*)")]
    ZeroFieldRates { device: String },
    #[error("random faults at {0} times the field rates: must be in (0, 1e12]")]
    Acceleration(String),
    /// An aged card's wear asked in steps of no cycles.
    #[error("cycles per erase must be at least 1")]
    CyclesPerErase,
    /// Wear asked of a profile whose blocks cannot wear out.
    #[error("{device}: the profile has no [nand.endurance]: its blocks cannot wear out")]
    NoEndurance { device: String },
    /// A format asked while a rebuild runs.
    #[error("a rebuild is running: format the card once it has ended (status shows its progress)")]
    RebuildRunning,
    /// A format a member's good blocks cannot hold.
    #[error("format {format}: member {member}: {why}")]
    Reformat { format: String, member: usize, why: FtlError },
    /// A die or channel to fail that the card does not have.
    #[error(transparent)]
    Target(#[from] crate::TargetError),
    /// A profile given to a copied card that differs from the card's in
    /// more than the numbers that time host reads alone.
    #[error("{0}: the profile differs from the card's in more than the numbers that time host reads alone ({})", crate::HOST_READS_ONLY.join(", "))]
    NotRetimable(String),
    /// A clean stop's record of the pages programmed that does not fit
    /// the card.
    #[error(transparent)]
    Kept(#[from] nand::KeptPagesError),
}

impl DeviceError {
    /// Whether the card refused a write because it turned read-only.
    pub fn is_read_only(&self) -> bool {
        matches!(self, DeviceError::Ftl(FtlError::ReadOnly(_)))
    }

    /// The card's refusal of a change because it is read-only (`why`).
    pub fn read_only(why: &str) -> DeviceError {
        DeviceError::Ftl(FtlError::ReadOnly(why.to_string()))
    }
}

/// Why a store looked at (not mounted) cannot be told about without a
/// mount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MountFirst {
    #[error("member {member}: {why}")]
    Stale { member: usize, why: crate::store::checkpoint::PagesRefused },
    #[error("the card did not stop cleanly (no checkpoint)")]
    Unclean,
}

/// A member's FTL state breaks a structural invariant
/// ([`Device::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("member {member}: {why}")]
pub struct Inconsistent {
    pub member: usize,
    pub why: ftl::Inconsistency,
}
