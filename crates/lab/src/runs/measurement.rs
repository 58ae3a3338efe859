//! What a run on real storage says of where it ran, as results keep it:
//! the one part of the lab on real storage (`crate::real`) that the
//! simulated lab's results carry (`RunResult::measured`,
//! `ReviewResults::measured`), so that one results file and one report
//! serve both, and the simulated lab never imports the real one.

use serde::{Deserialize, Serialize};

/// What a measured run's results say of where it ran.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Measurement {
    pub target: TargetInfo,
    /// fio's version and engine.
    pub fio: String,
    pub engine: String,
    /// What was done to erase the target before preconditioning, or why
    /// nothing could be; none without preconditioning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erased: Option<String>,
    /// The host: kernel release and CPU model.
    pub kernel: String,
    pub cpu: String,
}

/// What a target is, as the results keep it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetInfo {
    /// The path or URI given.
    pub target: String,
    /// "file", "block device" or "NBD export".
    pub kind: String,
    /// Its size in bytes, where known (an NBD export's from `nbdinfo`).
    pub size_bytes: Option<u64>,
    /// A block device's model, firmware and vendor, from sysfs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    /// What `blkid -p` found on it (a file system's or partition table's
    /// type), if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holds: Option<String>,
    /// Where it (or a partition of it) is mounted, if anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mounted: Option<String>,
    /// What holds a block device that is not mounted: a device built on
    /// it (device-mapper, RAID), or another opener's exclusive claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_use: Option<String>,
}
