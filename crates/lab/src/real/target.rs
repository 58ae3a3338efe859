//! Real storage under test: a regular file, a block device or an NBD
//! export; what it is (size, model and firmware from sysfs), what it holds
//! (a file system or a partition table, by `blkid`'s low-level probe),
//! whether it is mounted or in use, and the rule that keeps a test from
//! destroying what the user did not name: a target that holds something is
//! written only when `--destroy` repeats its name; a mounted one or one
//! in use never.

pub use crate::runs::measurement::TargetInfo;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// What fio runs against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A regular file or a block device, opened with O_DIRECT through
    /// libaio.
    Path(PathBuf),
    /// An NBD export (`nbd://...`, `nbd+unix://...`), through fio's nbd
    /// engine.
    Nbd(String),
}

/// Why a target cannot be tested, or may not be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("{path}: {why}")]
    Io { path: String, why: String },
    #[error("{0}: an empty file (give it a size first, e.g. fallocate -l 8G FILE)")]
    Empty(String),
    #[error("{0}: neither a regular file nor a block device")]
    Kind(String),
    /// A tool that tells what a target holds, missing or failing.
    #[error("{0}")]
    Probe(String),
    #[error("{target} is mounted ({at}): refused, even with --destroy; unmount it first")]
    Mounted { target: String, at: String },
    #[error("{target} is in use ({by}): refused, even with --destroy; release it first")]
    InUse { target: String, by: String },
    #[error("{target} holds {what}; --destroy names {named}, not it: nothing written")]
    OtherNamed { target: String, what: String, named: String },
    #[error("{target} holds {what}: every byte on it would be lost; to go on, repeat its name: --destroy {target}")]
    Holds { target: String, what: String },
}

impl TargetError {
    fn io(p: &Path, e: std::io::Error) -> TargetError {
        TargetError::Io { path: p.display().to_string(), why: e.to_string() }
    }
}

impl Target {
    pub fn parse(s: &str) -> Target {
        if s.starts_with("nbd://") || s.starts_with("nbd+unix://") || s.starts_with("nbds://") {
            Target::Nbd(s.to_string())
        } else {
            Target::Path(s.into())
        }
    }

    /// What the target is and holds; an error naming the problem when it
    /// cannot be tested (missing, a directory, an empty file).
    pub fn inspect(&self) -> Result<TargetInfo, TargetError> {
        let p = match self {
            Target::Nbd(uri) => {
                let holds = nbd_probe(uri)?;
                return Ok(TargetInfo { target: uri.clone(), kind: "NBD export".into(), size_bytes: nbd_size(uri), holds, ..TargetInfo::default() });
            }
            Target::Path(p) => p,
        };
        let m = std::fs::metadata(p).map_err(|e| TargetError::io(p, e))?;
        let t = m.file_type();
        let mut info = TargetInfo { target: p.display().to_string(), ..TargetInfo::default() };
        if t.is_file() {
            if m.len() == 0 {
                return Err(TargetError::Empty(p.display().to_string()));
            }
            info.kind = "file".into();
            info.size_bytes = Some(m.len());
        } else if t.is_block_device() {
            info.kind = "block device".into();
            info.size_bytes = Some(block_size(p)?);
            let sys = sysfs_dir(p);
            let read = |f: &str| sys.as_ref().and_then(|d| std::fs::read_to_string(d.join(f)).ok()).map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
            info.model = match (read("device/vendor"), read("device/model")) {
                (Some(v), Some(m)) => Some(format!("{v} {m}")),
                (v, m) => m.or(v),
            };
            info.firmware = read("device/firmware_rev").or_else(|| read("device/rev"));
            info.mounted = mounted_where(sys.as_deref());
            if info.mounted.is_none() {
                info.in_use = held_by(p, sys.as_deref());
            }
        } else {
            return Err(TargetError::Kind(p.display().to_string()));
        }
        info.holds = probe(p)?;
        Ok(info)
    }
}

impl Target {
    /// The nearest to a secure erase the target allows, before
    /// preconditioning (the caller has checked it may be written): a whole
    /// NVMe namespace by its secure erase (`nvme format --ses=1`) or a whole
    /// SCSI disk by a block sanitize (`sg_sanitize`) where the tool is
    /// installed, else (or where that fails) a block device discarded
    /// whole (`blkdiscard`); a file's every byte deallocated (a hole
    /// punched over it: reads return zeros, as an erased card's). What was
    /// done, or why nothing could be; an NBD export is not erased here (a
    /// served flashlab card is, over its control socket: `--served-store`).
    pub fn erase(&self, info: &TargetInfo) -> String {
        match self {
            Target::Nbd(_) => "not erased: an NBD export has no erase of its own (a served flashlab card: --served-store STORE)".into(),
            Target::Path(p) if info.kind == "block device" => {
                let mut said = Vec::new();
                for (tool, args) in erase_plan(p, &|t| tool_installed(t)) {
                    match std::process::Command::new(tool).args(&args).output() {
                        Ok(o) if o.status.success() => {
                            said.push(format!("erased by `{tool} {}`", args.join(" ")));
                            return said.join("; ");
                        }
                        Ok(o) => said.push(format!("{tool} failed ({})", String::from_utf8_lossy(&o.stderr).trim())),
                        Err(e) => said.push(format!("{tool} could not run ({e})")),
                    }
                }
                format!("not erased: {}", said.join("; "))
            }
            Target::Path(p) => match punch_whole(p) {
                Ok(()) => "every byte deallocated (a hole punched over the file)".into(),
                Err(e) => format!("not erased: punching a hole over the file failed ({e})"),
            },
        }
    }
}

/// The erases to try on a block device, best first: a vendor's secure
/// erase only on a whole device (an NVMe namespace `nvmeXnY`, a SCSI disk
/// `sdX`: it erases all of it) and only where `installed` says its tool
/// is (nvme-cli, sg3-utils); then `blkdiscard` (util-linux).
fn erase_plan(dev: &Path, installed: &dyn Fn(&str) -> bool) -> Vec<(&'static str, Vec<String>)> {
    let name = dev.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let whole_nvme = name.strip_prefix("nvme").and_then(|r| r.split_once('n')).is_some_and(|(c, n)| {
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        digits(c) && digits(n)
    });
    let whole_scsi = name.strip_prefix("sd").is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase()));
    let d = dev.display().to_string();
    let mut plan = Vec::new();
    if whole_nvme && installed("nvme") {
        plan.push(("nvme", vec!["format".into(), d.clone(), "--ses=1".into(), "--force".into()]));
    }
    if whole_scsi && installed("sg_sanitize") {
        plan.push(("sg_sanitize", vec!["--block".into(), "--quick".into(), d.clone()]));
    }
    plan.push(("blkdiscard", vec![d]));
    plan
}

/// Whether a program is on PATH.
fn tool_installed(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(name).is_file()))
}

/// Deallocates every byte of a file, keeping its size.
fn punch_whole(p: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new().write(true).open(p)?;
    let len = f.metadata()?.len();
    // SAFETY: fallocate on a file this function opened; no memory is passed.
    let r = unsafe { libc::fallocate(f.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 0, len as libc::off_t) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    f.sync_all()
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Path(p) => write!(f, "{}", p.display()),
            Target::Nbd(u) => f.write_str(u),
        }
    }
}

/// Whether a test that writes may run on the target: never on one mounted;
/// on one that holds a file system or partition table only when `destroy`
/// names it again (`--destroy TARGET`). The refusal says what was found.
pub fn write_check(info: &TargetInfo, destroy: Option<&str>) -> Result<(), TargetError> {
    let target = info.target.clone();
    if let Some(at) = &info.mounted {
        return Err(TargetError::Mounted { target, at: at.clone() });
    }
    if let Some(by) = &info.in_use {
        return Err(TargetError::InUse { target, by: by.clone() });
    }
    match (&info.holds, destroy) {
        (Some(_), Some(d)) if d == info.target => Ok(()),
        (Some(what), Some(d)) => Err(TargetError::OtherNamed { target, what: what.clone(), named: d.to_string() }),
        (Some(what), None) => Err(TargetError::Holds { target, what: what.clone() }),
        (None, _) => Ok(()),
    }
}

/// An NBD export's size, as `nbdinfo --size` (Debian's libnbd-bin) gives
/// it; `None` where it cannot (fio then says why it cannot connect).
fn nbd_size(uri: &str) -> Option<u64> {
    let out = std::process::Command::new("nbdinfo").args(["--size", uri]).output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// What an NBD export holds: its first MiB copied out (`qemu-img dd`,
/// Debian's qemu-utils) and probed as a file's would be. An export that
/// cannot be reached is left to fio to report.
fn nbd_probe(uri: &str) -> Result<Option<String>, TargetError> {
    let head = std::env::temp_dir().join(format!("flashlab-probe-{}-{:x}", std::process::id(), uri.len()));
    let out = std::process::Command::new("qemu-img")
        .args(["dd", "-f", "raw", "-O", "raw", "bs=1M", "count=1"])
        .arg(format!("if={uri}"))
        .arg(format!("of={}", head.display()))
        .output()
        .map_err(|e| TargetError::Probe(format!("qemu-img (Debian's qemu-utils) is needed to see what {uri} holds: {e}")))?;
    let found = if out.status.success() { probe(&head) } else { Ok(None) };
    let _ = std::fs::remove_file(&head);
    found.map(|f| f.map(|what| what.replace(&head.display().to_string(), uri)))
}

/// A block device's size in bytes (its end, by seeking).
fn block_size(p: &Path) -> Result<u64, TargetError> {
    use std::io::Seek;
    let mut f = std::fs::File::open(p).map_err(|e| TargetError::io(p, e))?;
    f.seek(std::io::SeekFrom::End(0)).map_err(|e| TargetError::io(p, e))
}

/// `/sys/class/block/NAME` of a block device node.
fn sysfs_dir(p: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(p).ok()?;
    let d = Path::new("/sys/class/block").join(real.file_name()?);
    d.exists().then_some(d)
}

/// Where a block device or one of its partitions is mounted, from
/// /proc/self/mountinfo (by device number, so that any name of it counts).
fn mounted_where(sys: Option<&Path>) -> Option<String> {
    let mut devs = vec![std::fs::read_to_string(sys?.join("dev")).ok()?.trim().to_string()];
    if let Ok(entries) = std::fs::read_dir(sys?) {
        for e in entries.flatten() {
            if let Ok(d) = std::fs::read_to_string(e.path().join("partition")).and_then(|_| std::fs::read_to_string(e.path().join("dev"))) {
                devs.push(d.trim().to_string());
            }
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let found: Vec<String> = mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 4 && devs.iter().any(|d| d == f[2])).then(|| f[4].to_string())
        })
        .collect();
    (!found.is_empty()).then(|| format!("on {}", found.join(", ")))
}

/// What holds a block device: the devices sysfs lists as built on it
/// (`holders/`), or, failing that, another opener's exclusive claim (an
/// open with O_EXCL fails with EBUSY: a swap area, a RAID or
/// device-mapper member, a program that claimed it).
fn held_by(p: &Path, sys: Option<&Path>) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let holders: Vec<String> = sys
        .and_then(|d| std::fs::read_dir(d.join("holders")).ok())
        .map(|r| r.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    if !holders.is_empty() {
        return Some(format!("held by {}", holders.join(", ")));
    }
    match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(p) {
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            Some("opened exclusively by another program or the kernel (a swap area, a RAID or device-mapper member?)".into())
        }
        _ => None,
    }
}

/// What `blkid`'s low-level probe finds on the target: "a file system or
/// volume of type ext4", "a partition table of type dos"; `None` when it
/// finds nothing. Without blkid nothing can be said, and that is an error:
/// the target is not written unseen.
fn probe(p: &Path) -> Result<Option<String>, TargetError> {
    let out = std::process::Command::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(p)
        .output()
        .map_err(|e| TargetError::Probe(format!("blkid (Debian's util-linux) is needed to see what {} holds: {e}", p.display())))?;
    // blkid exits 2 when it finds nothing.
    if out.status.code() == Some(2) {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |k: &str| text.lines().find_map(|l| l.strip_prefix(k).map(str::to_string));
    match (field("TYPE="), field("PTTYPE=")) {
        (Some(t), _) => Ok(Some(format!("a file system or volume of type {t}"))),
        (None, Some(pt)) => Ok(Some(format!("a partition table of type {pt}"))),
        _ if out.status.success() => Ok(None),
        _ => Err(TargetError::Probe(format!("blkid could not probe {} ({}): {}", p.display(), out.status, String::from_utf8_lossy(&out.stderr).trim()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_in_use_is_refused_even_with_destroy() {
        let held = TargetInfo { in_use: Some("held by dm-0".into()), ..info(None, None) };
        let e = write_check(&held, Some("/dev/loop7")).unwrap_err().to_string();
        assert!(e.contains("in use (held by dm-0)"), "{e}");
    }

    fn info(holds: Option<&str>, mounted: Option<&str>) -> TargetInfo {
        TargetInfo {
            target: "/dev/loop7".into(),
            kind: "block device".into(),
            holds: holds.map(str::to_string),
            mounted: mounted.map(str::to_string),
            ..TargetInfo::default()
        }
    }

    #[test]
    fn a_vendors_secure_erase_is_tried_first_on_a_whole_device_only() {
        fn tools(plan: Vec<(&'static str, Vec<String>)>) -> Vec<&'static str> {
            plan.iter().map(|p| p.0).collect()
        }
        let all = |_: &str| true;
        assert_eq!(tools(erase_plan(Path::new("/dev/nvme0n1"), &all)), ["nvme", "blkdiscard"]);
        assert_eq!(erase_plan(Path::new("/dev/nvme12n3"), &all)[0].1, ["format", "/dev/nvme12n3", "--ses=1", "--force"]);
        assert_eq!(tools(erase_plan(Path::new("/dev/sdb"), &all)), ["sg_sanitize", "blkdiscard"]);
        // A partition, a controller, another kind of device: blkdiscard only.
        for dev in ["/dev/nvme0n1p2", "/dev/nvme0", "/dev/sdb1", "/dev/loop7", "/dev/dm-0"] {
            assert_eq!(tools(erase_plan(Path::new(dev), &all)), ["blkdiscard"], "{dev}");
        }
        // Without the vendor's tool, blkdiscard.
        assert_eq!(tools(erase_plan(Path::new("/dev/nvme0n1"), &|t| t != "nvme")), ["blkdiscard"]);
    }

    #[test]
    fn a_target_holding_data_is_written_only_when_destroy_names_it() {
        let fs = info(Some("a file system or volume of type ext4"), None);
        let e = write_check(&fs, None).unwrap_err().to_string();
        assert!(e.contains("ext4") && e.contains("--destroy /dev/loop7"), "{e}");
        assert!(write_check(&fs, Some("/dev/loop8")).unwrap_err().to_string().contains("not it"));
        assert_eq!(write_check(&fs, Some("/dev/loop7")), Ok(()));
        assert_eq!(write_check(&info(None, None), None), Ok(()));
    }

    #[test]
    fn a_mounted_target_is_refused_even_with_destroy() {
        let e = write_check(&info(Some("a file system or volume of type ext4"), Some("on /mnt")), Some("/dev/loop7")).unwrap_err().to_string();
        assert!(e.contains("mounted") && e.contains("/mnt"), "{e}");
    }
}
