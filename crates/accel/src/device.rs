//! The timed device: the FTL of each member, and the resources an I/O passes
//! through, reserved in issue order (see `sim`):
//!
//! - host CPU (a pool of cores; the driver's time per I/O);
//! - the controller's command engine (commands per second);
//! - the host link (bytes per second each way);
//! - the write buffer (slots of 4 KiB, freed when their page is programmed);
//! - the controller's program data path (bytes per second);
//! - the channel bus (bytes per second, shared by the channel's dies);
//! - each die (tR, tPROG, tBERS; one array operation at a time).
//!
//! A write is acknowledged once its data is in the power-loss-protected
//! buffer; it waits only when the buffer is full, until programs free slots.
//! Reads wait behind whatever their die and channel are doing. GC reads,
//! programs and erases take die and channel time in between, which is how
//! garbage collection lowers throughput and raises latency.

use crate::errors::ReadOutcome;
use crate::faults::{FailTarget, FailureEvent, Faults, RandomFaults, Rebuilding};
use crate::health::{Aging, Health};
use crate::lock::StoreLock;
use crate::profile::Profile;
use crate::recorder::{MediaOp, OpKind, Recorder};
use crate::scale::Scaling;
use crate::smart::SmartLog;
use crate::wear::{ErrorCounters, Wear};
use ftl::{Ftl, FtlConfig, FtlError, MountReport, ReadFrom};
use nand::{Array, Media, OpTag};
use serde::Serialize;
use sim::{Io, MinHeap, Pool, Target, Timeline};
use units::{per_op_ns, transfer_ns, Ns, SECTOR_BYTES, SLOT_BYTES};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("unknown format '{format}' for {device}: expected one of {expected}, or a usable capacity such as 1500GB")]
    UnknownFormat { device: String, format: String, expected: String },
    #[error("format {} for {device}: a format's capacity is the full-size card's and must be from {} to {} (raw flash less parity, the GC reserve and the open superblocks); a scaled card holds its share of it", gb_and_bytes(*bytes), gb_and_bytes(1 << 30), gb_and_bytes(*max))]
    Capacity { device: String, bytes: u64, max: u64 },
    #[error("--scale {scale}: must be in 1..={max} for {device} (pages per block are divided first, then the {blocks} blocks per plane; a scaled device keeps at least {min_superblocks} superblocks and room for its format)")]
    Scale { device: String, scale: u32, max: u32, blocks: u32, min_superblocks: u32 },
    #[error("I/O at byte {offset} of {len} bytes is out of range: the device holds {capacity} bytes, and I/O must be whole 512-byte sectors")]
    OutOfRange { offset: u64, len: u64, capacity: u64 },
    #[error(transparent)]
    Ftl(#[from] FtlError),
    #[error("{0}")]
    Store(String),
    #[error("{0}")]
    Fault(String),
}

impl From<nand::StoreError> for DeviceError {
    fn from(e: nand::StoreError) -> DeviceError {
        DeviceError::Store(e.to_string())
    }
}

/// Slots of the write buffer, and when programmed pages free theirs. Every
/// page frees the same number of slots (one multi-plane page's), so only the
/// times are kept.
struct WriteBuffer {
    free: u32,
    slots_per_page: u32,
    pending: MinHeap<Ns>,
    /// Slots in all: free ones, those of pending pages, and those of the
    /// pages being filled never exceed it.
    capacity: u32,
}

impl WriteBuffer {
    /// A slot for data arriving at `ready`: the time it can be accepted.
    #[inline]
    fn acquire(&mut self, ready: Ns) -> Ns {
        if self.free > 0 {
            self.free -= 1;
            return ready;
        }
        let t = self.pending.pop().expect("write buffer: slots are either free or pending a program");
        self.free = self.slots_per_page - 1;
        ready.max(t)
    }
    /// The slots of a page programmed by `at` free then.
    #[inline]
    fn release(&mut self, at: Ns) {
        self.pending.push(at);
        debug_assert!(
            self.free as u64 + self.pending.len() as u64 * self.slots_per_page as u64 <= self.capacity as u64,
            "write buffer: more slots free or pending ({} + {} pages) than it holds ({})",
            self.free,
            self.pending.len(),
            self.capacity
        );
    }
}

/// Read reclaim moves one slot every this many host I/Os (GC work: it
/// takes the GC threads, dies and channels): a background task that
/// costs the host about a sixteenth more media work while it runs.
/// Assumed: the cards do not publish their pace.
const RECLAIM_IOS_PER_SLOT: u32 = 16;

struct Member {
    ftl: Ftl<Recorder>,
    dies: Vec<Timeline>,
    channels: Vec<Timeline>,
    command: Vec<Timeline>,
    program_path: Vec<Timeline>,
    read_path: Vec<Timeline>,
    link_in: Timeline,
    link_out: Timeline,
    buffer: WriteBuffer,
    /// A slot being merged for a data-holding write (made on first use:
    /// the simulator's I/Os never touch it).
    slot_buf: Option<Box<[u8; SLOT_BYTES as usize]>>,
    gc_ready: Ns,
    /// The threads that run GC.
    gc_cpu: Pool,
    /// When each superblock's last erase ends: nothing may be programmed
    /// into it before (the die timelines alone could slot a program into a
    /// gap ahead of the erase).
    erased_at: Vec<Ns>,
    /// Bit errors and read retries (where the profile has an error model).
    wear: Option<Wear>,
    /// Program/erase cycles one erase stands for (1, or more on a card
    /// aged at an accelerated pace).
    cycles_per_erase: u32,
    /// Host I/Os since read reclaim last moved a slot.
    reclaim_ios: u32,
    /// Read reclaim has work (checked on every I/O: a field of its own).
    reclaim_on: bool,
    /// Simulated reads of lost data (an I/O error to the host).
    reads_lost: u64,
}

/// Service times, precomputed from the profile.
#[derive(Debug, Clone)]
struct Costs {
    read_ns: Ns,
    program_ns: Ns,
    erase_ns: Ns,
    slot_transfer_ns: Ns,
    mpage_transfer_ns: Ns,
    program_path_mpage_ns: Ns,
    read_path_bytes_per_sec: u64,
    read_path_slot_ns: Ns,
    /// The longest operation a host read may find in progress on a die, a
    /// channel and a read path (none is suspended).
    die_op_max_ns: Ns,
    read_path_mpage_ns: Ns,
    /// One ECC codeword over the channel.
    codeword_bytes: u64,
    codeword_transfer_ns: Ns,
    read_command_ns: Ns,
    write_command_ns: Ns,
    /// Whether GC data passes the program path (host-managed cards).
    gc_through_program_path: bool,
    link_bytes_per_sec: u64,
    /// A 4 KiB transfer on the host link.
    link_slot_ns: Ns,
    overhead_ns: Ns,
    /// Host CPU of an I/O at submission: the OS's submission and
    /// completion paths and the driver's per-I/O time (its per-slot time
    /// is added per I/O).
    cpu_ns: Ns,
    cpu_slot_ns: Ns,
    /// Latency of the completion path after the device is done.
    complete_ns: Ns,
    gc_mpage_cpu_ns: Ns,
    /// Whether GC threads run on the host's cores (host-managed cards).
    gc_on_host: bool,
    /// The channel and the controller of each die (fixed; tables save a
    /// division per operation).
    die_channel: Vec<u32>,
    die_controller: Vec<u32>,
    controllers: u32,
    spm: u32,
}

impl Costs {
    /// The controller a command goes to by its first slot (commands are
    /// spread over the controllers by address): a mask when, as on every
    /// catalog card, the count is a power of two.
    #[inline]
    fn controller_of_slot(&self, slot: u32) -> u32 {
        if self.controllers.is_power_of_two() {
            slot & (self.controllers - 1)
        } else {
            slot % self.controllers
        }
    }
    /// Bytes a host read of `len` bytes moves from the die and through the
    /// read path: the codewords it touches when under a slot (`offset`
    /// within the slot), else whole slots.
    #[inline]
    fn sub_slot_read_bytes(&self, offset: u64, len: u64) -> Option<u64> {
        if len >= SLOT_BYTES {
            return None;
        }
        let cw = self.codeword_bytes;
        let start = offset % SLOT_BYTES / cw;
        let end = (offset % SLOT_BYTES + len).div_ceil(cw);
        Some((end - start) * cw)
    }
    #[inline]
    fn link_ns(&self, len: u64) -> Ns {
        if len == SLOT_BYTES {
            self.link_slot_ns
        } else {
            transfer_ns(len, self.link_bytes_per_sec)
        }
    }
}

/// Service time reserved on one kind of resource (see [`Device::busy`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceBusy {
    pub name: &'static str,
    pub servers: u32,
    pub busy_ns: Ns,
}

/// What the device has done, summed over its members.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct DeviceCounters {
    pub host_slots_written: u64,
    pub host_slots_read: u64,
    pub host_slots_trimmed: u64,
    pub gc_slots_moved: u64,
    pub gc_victims: u64,
    pub nand_slots_programmed: u64,
    pub nand_parity_slots_programmed: u64,
    /// NAND (multi-plane) page reads for the host (reads and
    /// read-modify-writes): slots of one page read together count once.
    pub nand_page_reads_host: u64,
    pub nand_page_reads_gc: u64,
    pub block_erases: u64,
    pub free_superblocks: u64,
    pub erase_count_max: u32,
    pub erase_count_min: u32,
    /// Read retries and reads beyond ECC (the error model's).
    #[serde(default)]
    pub read_errors: ErrorCounters,
    /// Dies failed, reads through a stripe, the rebuild's moves, LBAs lost.
    #[serde(default)]
    pub faults: ftl::FaultCounters,
}

impl DeviceCounters {
    /// Write amplification since `base`, data only: (host + GC) / host.
    pub fn wa_since(&self, base: &DeviceCounters) -> f64 {
        let host = self.host_slots_written - base.host_slots_written;
        if host == 0 {
            return 0.0;
        }
        (host + self.gc_slots_moved - base.gc_slots_moved) as f64 / host as f64
    }
    /// Write amplification since `base` with parity counted: NAND slots
    /// programmed per host slot written.
    /// Every 4 KiB slot programmed to NAND (the host's, GC's, a rebuild's,
    /// parity, padding): what wears the flash.
    pub fn nand_slots_all(&self) -> u64 {
        self.nand_slots_programmed + self.nand_parity_slots_programmed
    }

    pub fn wa_nand_since(&self, base: &DeviceCounters) -> f64 {
        let host = self.host_slots_written - base.host_slots_written;
        if host == 0 {
            return 0.0;
        }
        (self.nand_slots_programmed - base.nand_slots_programmed + self.nand_parity_slots_programmed - base.nand_parity_slots_programmed) as f64 / host as f64
    }
}

/// Where a device keeps the bytes written to it: nowhere (the simulator),
/// in memory (tests), or in files, one per member (a served card).
#[derive(Debug, Clone, PartialEq)]
pub enum Backing {
    None,
    Memory,
    /// A store file per member, `<dir>/member-<i>.flash`; `owner` is
    /// written in each file's header and checked when it is opened again.
    /// Built by `Backing::files`, which takes the store's lock.
    Files {
        dir: std::path::PathBuf,
        owner: String,
        lock: StoreLock,
    },
    /// The files of a card at rest, to be looked at and changed in
    /// nothing: mounted from its clean shutdown's checkpoint (kept), its
    /// SMART log read (no power cycle counted), nothing written back.
    /// Built by `Backing::inspect`, which shares the store's lock.
    Inspect {
        dir: std::path::PathBuf,
        owner: String,
        lock: StoreLock,
    },
}

impl Backing {
    /// The store in `dir` (which must exist), owned by this process for
    /// `purpose` as long as a device on it lives: refused, with the holder
    /// named, while another process owns it or reads it.
    pub fn files(dir: &std::path::Path, owner: &str, purpose: &str) -> Result<Backing, DeviceError> {
        let lock = StoreLock::take(dir, purpose).map_err(DeviceError::Store)?;
        Ok(Backing::Files { dir: dir.to_path_buf(), owner: owner.to_string(), lock })
    }

    /// The store in `dir` to look at, shared with other readers: refused,
    /// with the holder named, while a process owns it.
    pub fn inspect(dir: &std::path::Path, owner: &str) -> Result<Backing, DeviceError> {
        let lock = StoreLock::share(dir).map_err(DeviceError::Store)?;
        Ok(Backing::Inspect { dir: dir.to_path_buf(), owner: owner.to_string(), lock })
    }

    /// The store's lock, where the backing is a store.
    fn lock(&self) -> Option<&StoreLock> {
        match self {
            Backing::Files { lock, .. } | Backing::Inspect { lock, .. } => Some(lock),
            _ => None,
        }
    }
}

pub struct Device {
    pub profile: Profile,
    pub format: String,
    pub scale: u32,
    members: Vec<Member>,
    cpu: Pool,
    costs: Costs,
    stripe_bytes: u64,
    member_bytes: u64,
    /// The format's usable capacity on the full-size card.
    full_bytes: u64,
    /// What mounting found, where the device was mounted from a store an
    /// earlier run left (every member's summed).
    pub mounted: Option<MountReport>,
    /// Where the stores are, for a device backed by files.
    store_dir: Option<std::path::PathBuf>,
    /// Die failures to come, rebuilds under way, what happened (none
    /// until a failure is asked for: the I/O path then checks one flag).
    faults: Option<Box<Faults>>,
    /// The SMART-like log as the store held it at power-on (a card kept
    /// in files only).
    smart: Option<SmartLog>,
    /// The store's lock, held while the device lives.
    _lock: Option<StoreLock>,
}

/// A capacity as vendors write it, with its bytes: "1500.0 GB
/// (1500000000000 bytes)".
fn gb_and_bytes(bytes: u64) -> String {
    format!("{:.1} GB ({bytes} bytes)", bytes as f64 / 1e9)
}

/// A usable capacity written as bytes or with a decimal suffix (GB, TB), as
/// vendors state capacities: `1500GB`, `1.5TB`, `1500000000000`.
pub fn capacity_parse(s: &str) -> Option<u64> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mult) = if let Some(n) = t.strip_suffix("TB") {
        (n, 1e12)
    } else if let Some(n) = t.strip_suffix("GB") {
        (n, 1e9)
    } else {
        (t.as_str(), 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v > 0.0 && v * mult < 1e18).then_some((v * mult) as u64)
}

/// Superblocks' worth of spare that GC holds on average beyond its reserve:
/// the free pool hovers one above the reserve, and the two open writers are
/// part full (measured: 1.9 with the FTL alone, `ftl/tests/wa.rs`).
pub const HELD_BEYOND_RESERVE: f64 = 1.9;

/// Superblocks a scaled member must keep at least.
const MIN_SUPERBLOCKS: u32 = 16;

impl Device {
    /// Builds and formats (secure erase) a device. `scale` divides the
    /// blocks of every plane, keeping dies, channels and timings: the
    /// device's parallelism and speed are kept and only its capacity shrinks.
    /// The usable capacity shrinks so that the effective over-provisioning
    /// (the spare after the GC reserve and the open superblocks, which do not
    /// shrink) is the full-size device's.
    pub fn new(profile: &Profile, format: &str, scale: u32) -> Result<Device, DeviceError> {
        Device::with_backing(profile, format, scale, &Backing::None)
    }

    /// A device that keeps the bytes written to it in `backing`.
    pub fn with_backing(profile: &Profile, format: &str, scale: u32, backing: &Backing) -> Result<Device, DeviceError> {
        let plan = Device::plan(profile, format, scale)?;
        Device::build(profile, format, scale, plan, backing, None)
    }

    /// A device whose blocks wear out (the profile's `[nand.endurance]`):
    /// bad blocks from the factory, grown ones as erases fail, each erase
    /// standing for `aging.cycles_per_erase` cycles.
    pub fn aging(profile: &Profile, format: &str, scale: u32, aging: Aging) -> Result<Device, DeviceError> {
        if aging.cycles_per_erase == 0 {
            return Err(DeviceError::Fault("cycles per erase must be at least 1".into()));
        }
        let plan = Device::plan(profile, format, scale)?;
        Device::build(profile, format, scale, plan, &Backing::None, Some(aging))
    }

    /// Whether a store directory already holds a card (its first member's
    /// store).
    pub fn store_exists(dir: &std::path::Path) -> bool {
        Device::member_store_path(dir, 0).exists()
    }

    fn member_store_path(dir: &std::path::Path, member: usize) -> std::path::PathBuf {
        dir.join(format!("member-{member}.flash"))
    }

    /// What a member's store header names: the card's owner and the member.
    fn member_owner(owner: &str, member: usize) -> String {
        format!("{owner}, member {member}")
    }

    /// A member's array, with its bytes where the backing keeps them, and
    /// whether its store already held a card (to be mounted, not formatted).
    fn array_of(g: &nand::Geometry, backing: &Backing, member: usize, endurance: Option<&nand::Endurance>) -> Result<(Array, bool), DeviceError> {
        let (store, existed) = match backing {
            Backing::None => (None, false),
            Backing::Memory => (Some(nand::Store::memory(g)), false),
            Backing::Files { dir, owner, .. } | Backing::Inspect { dir, owner, .. } => {
                let path = Device::member_store_path(dir, member);
                if matches!(backing, Backing::Inspect { .. }) && !path.exists() {
                    return Err(DeviceError::Store(format!("{}: no card here (no {})", dir.display(), path.display())));
                }
                let (store, created) = nand::Store::file(&path, g, &Device::member_owner(owner, member))?;
                (Some(store), !created)
            }
        };
        let mut array = Array::with_store(g.clone(), store);
        // Each member's blocks wear on their own.
        array.endurance_set(endurance.map(|e| nand::Endurance { seed: e.seed ^ (member as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15), ..e.clone() }));
        Ok((array, existed))
    }

    /// A member's FTL: mounted from a store that held a card, else formatted.
    /// A member's FTL: mounted from a store that held a card (from its
    /// clean shutdown's checkpoint where there is one, else by scanning the
    /// media), else formatted. A mount's report is summed over members into
    /// `mounted`; the LBAs it lost are the member's own (the device's are
    /// found once it is built).
    fn ftl_of(
        g: &nand::Geometry,
        cfg: &FtlConfig,
        backing: &Backing,
        member: usize,
        mounted: &mut Option<MountReport>,
        lost: &mut Vec<(usize, u32)>,
        endurance: Option<&nand::Endurance>,
    ) -> Result<Ftl<Recorder>, DeviceError> {
        let (array, existed) = Device::array_of(g, backing, member, endurance)?;
        if !existed {
            return Ok(Ftl::format(Recorder::new(array), cfg.clone())?);
        }
        let completed = array.staged_pages();
        let saved = match backing {
            Backing::Files { dir, .. } => {
                crate::checkpoint::take(dir, member).map_err(|e| DeviceError::Store(format!("{}: checkpoint: {e}", dir.display())))?
            }
            Backing::Inspect { dir, .. } => {
                match crate::checkpoint::peek(dir, member).map_err(|e| DeviceError::Store(format!("{}: checkpoint: {e}", dir.display())))? {
                    Some(b) => Some(b),
                    None => {
                        return Err(DeviceError::Store(format!(
                    "{}: the card did not stop cleanly (no checkpoint): only a mount can tell its state, and a mount repairs; serve it once, then ask again",
                    dir.display()
                )))
                    }
                }
            }
            _ => None,
        };
        let (ftl, mut r) = match saved {
            Some(b) => match Ftl::mount_checkpoint(Recorder::new(array), cfg.clone(), &b) {
                Ok(mounted) => mounted,
                Err(e) if matches!(backing, Backing::Inspect { .. }) => {
                    return Err(DeviceError::Store(format!(
                        "member {member}: its checkpoint does not fit its media ({e}): serve it once (a mount scans the media), then ask again"
                    )))
                }
                Err(e) => {
                    // The media are the truth: a checkpoint that does not
                    // fit is set aside and the card scanned.
                    let (ftl, mut r) = Ftl::mount(Recorder::new(Device::array_of(g, backing, member, endurance)?.0), cfg.clone())?;
                    r.checkpoint_refused = Some(format!("member {member}: {e}"));
                    (ftl, r)
                }
            },
            None => Ftl::mount(Recorder::new(array), cfg.clone())?,
        };
        let m = mounted.get_or_insert_with(|| MountReport { from_checkpoint: true, ..MountReport::default() });
        m.slots_scanned += r.slots_scanned;
        m.slots_mapped += r.slots_mapped;
        m.superblocks_short += r.superblocks_short;
        m.seq_max = m.seq_max.max(r.seq_max);
        m.pages_completed += completed;
        m.slots_rebuilt += r.slots_rebuilt;
        m.from_checkpoint &= r.from_checkpoint;
        if let Some(why) = r.checkpoint_refused.take() {
            m.checkpoint_refused = Some(why);
        }
        lost.extend(r.lbas_lost.iter().map(|&lba| (member, lba)));
        Ok(ftl)
    }

    /// A clean shutdown: every write on the media, the stores synced, and
    /// each member's checkpoint written beside its store, so that the next
    /// start mounts without a scan. A device without files keeps nothing.
    pub fn shutdown_clean(&mut self) -> Result<(), DeviceError> {
        let Some(dir) = self.store_dir.clone() else { return Ok(()) };
        if let Some(log) = self.smart() {
            log.save(&dir).map_err(DeviceError::Store)?;
        }
        for (i, m) in self.members.iter_mut().enumerate() {
            let bytes = m.ftl.checkpoint()?;
            m.ftl.media_mut().array.store_mut().map(|s| s.sync()).transpose().map_err(|e| DeviceError::Store(format!("{}: {e}", dir.display())))?;
            crate::checkpoint::write(&dir, i, &bytes).map_err(|e| DeviceError::Store(format!("{}: checkpoint: {e}", dir.display())))?;
        }
        Ok(())
    }

    /// The usable capacity a device would have at a format and scale,
    /// without building it.
    pub fn capacity_of(profile: &Profile, format: &str, scale: u32) -> Result<u64, DeviceError> {
        let (_, cfg, _) = Device::plan(profile, format, scale)?;
        Ok(cfg.user_slots * SLOT_BYTES * profile.members as u64)
    }

    /// Whether the card in `dir` stopped cleanly: every member's
    /// checkpoint is there, so it can be looked at without a mount.
    pub fn stopped_cleanly(dir: &std::path::Path, members: u32) -> bool {
        (0..members as usize).all(|m| crate::checkpoint::exists(dir, m))
    }

    /// Checks that a device can be built at a format and scale, without
    /// building it (a full-size card's maps take gigabytes).
    pub fn validate(profile: &Profile, format: &str, scale: u32) -> Result<(), DeviceError> {
        Device::plan(profile, format, scale).map(|_| ())
    }

    /// The bytes of the maps the device would allocate (every member's),
    /// without building it: most of a run's memory at full size.
    pub fn map_bytes(profile: &Profile, format: &str, scale: u32) -> Result<u64, DeviceError> {
        let (g, cfg, _) = Device::plan(profile, format, scale)?;
        let layout = ftl::Layout::new(&g, cfg.stripe_width);
        Ok(Ftl::<Recorder>::map_bytes(&layout, cfg.user_slots) * profile.members as u64)
    }

    /// The scaled geometry and the FTL configuration of a format.
    fn plan(profile: &Profile, format: &str, scale: u32) -> Result<(nand::Geometry, FtlConfig, u64), DeviceError> {
        let usable = match profile.formats.get(format) {
            Some(&u) => u,
            None => match capacity_parse(format) {
                Some(u) if u >= 1 << 30 && u <= profile.usable_bytes_max() => u,
                Some(u) => {
                    return Err(DeviceError::Capacity { device: profile.id.clone(), bytes: u, max: profile.usable_bytes_max() });
                }
                None => {
                    return Err(DeviceError::UnknownFormat { device: profile.id.clone(), format: format.into(), expected: profile.format_names().join(", ") })
                }
            },
        };
        let full = profile.nand.geometry();
        let reserve = profile.ftl.reserve_superblocks;
        let min_sb = MIN_SUPERBLOCKS.max(reserve + 8);
        let members_n = profile.members as u64;
        let full_slots = usable / members_n / SLOT_BYTES;
        let held = reserve as f64 + HELD_BEYOND_RESERVE;
        // Physical data slots less what GC holds on average.
        let t_eff = |l: &ftl::Layout| (l.superblocks as f64 - held) * l.data_slots_per_superblock as f64;
        let full_layout = ftl::Layout::new(&full, profile.ftl.stripe_width);
        // The usable slots of one member at a scale, if the format fits it:
        // the same effective over-provisioning as the full-size card.
        let scaled_slots = |scale: u32| -> Option<u64> {
            let g = Scaling::new(&full, scale).geometry(&full);
            if g.blocks_per_plane < min_sb {
                return None;
            }
            let layout = ftl::Layout::new(&g, profile.ftl.stripe_width);
            let mut slots = if scale == 1 { full_slots } else { (full_slots as f64 * t_eff(&layout) / t_eff(&full_layout)) as u64 };
            if members_n > 1 {
                // RAID 0 needs every member to end on a whole chunk.
                let chunk_slots = (profile.member_stripe_bytes() / SLOT_BYTES).max(1);
                slots -= slots % chunk_slots;
            }
            (slots >= 1 && slots <= Ftl::<Recorder>::user_slots_max(&layout, reserve)).then_some(slots)
        };
        let user_slots = match (scale > 0).then(|| scaled_slots(scale)).flatten() {
            Some(s) => s,
            None => {
                let most = full.pages_per_block * (full.blocks_per_plane / min_sb).max(1);
                let max = (1..=most).rev().find(|&s| scaled_slots(s).is_some()).unwrap_or(1);
                return Err(DeviceError::Scale { device: profile.id.clone(), scale, max, blocks: full.blocks_per_plane, min_superblocks: min_sb });
            }
        };
        let scaling = Scaling::new(&full, scale);
        let g = scaling.geometry(&full);
        let cfg = FtlConfig {
            stripe_width: profile.ftl.stripe_width,
            user_slots,
            reserve_superblocks: reserve,
            gc_policy: profile.ftl.gc_policy,
            wear_spread_max: profile.ftl.wear_spread_max,
            power_loss_protection: profile.ftl.power_loss_protection,
        };
        Ok((g, cfg, usable))
    }

    fn build(
        profile: &Profile,
        format: &str,
        scale: u32,
        (g, cfg, full_bytes): (nand::Geometry, FtlConfig, u64),
        backing: &Backing,
        aging: Option<Aging>,
    ) -> Result<Device, DeviceError> {
        let endurance = match (aging, &profile.nand.endurance) {
            (None, _) => None,
            (Some(a), Some(e)) => Some(e.model(a.cycles_per_erase, a.seed)),
            (Some(_), None) => return Err(DeviceError::Fault(format!("{}: the profile has no [nand.endurance]: its blocks cannot wear out", profile.id))),
        };
        let buffer_slots = (profile.write_buffer_bytes(scale) / SLOT_BYTES) as u32;
        let mut members = Vec::new();
        let mut mounted = None;
        let mut lost = Vec::new();
        for m in 0..profile.members as usize {
            let ftl = Device::ftl_of(&g, &cfg, backing, m, &mut mounted, &mut lost, endurance.as_ref())?;
            let cycles_per_erase = aging.map_or(1, |a| a.cycles_per_erase);
            members.push(Device::member_new(profile, &g, ftl, buffer_slots, m, cycles_per_erase));
        }
        let mut device = Device {
            profile: profile.clone(),
            format: format.to_string(),
            scale,
            cpu: Pool::new(profile.host.cpu_cores),
            costs: Device::costs_of(profile, &g, scale),
            stripe_bytes: profile.member_stripe_bytes(),
            member_bytes: cfg.user_slots * SLOT_BYTES,
            full_bytes,
            members,
            mounted,
            store_dir: match backing {
                Backing::Files { dir, .. } => Some(dir.clone()),
                _ => None,
            },
            faults: None,
            smart: None,
            _lock: backing.lock().cloned(),
        };
        let lost: Vec<u32> = lost.iter().map(|&(m, lba)| (device.device_offset(m, lba as u64 * SLOT_BYTES) / SLOT_BYTES) as u32).collect();
        let slots_lost = lost.len() as u64;
        if let Some(r) = &mut device.mounted {
            r.lbas_lost = lost;
        }
        device.rebuilds_resume();
        let kept = device.members[0].ftl.media().array.store().and_then(|s| s.kept_counters());
        if let Backing::Inspect { dir, .. } = backing {
            let mut log = SmartLog::load(dir).map_err(DeviceError::Store)?;
            if let Some(k) = &kept {
                log.absorb(k);
            }
            device.smart = Some(log);
        }
        if let Some(dir) = device.store_dir.clone() {
            let mut log = SmartLog::load(&dir).map_err(DeviceError::Store)?;
            if let Some(k) = &kept {
                log.absorb(k);
            }
            log.powered_on(device.mounted.as_ref().is_none_or(|r| r.from_checkpoint), slots_lost);
            log.save(&dir).map_err(DeviceError::Store)?;
            device.smart = Some(log);
        }
        Ok(device)
    }

    /// A member: its FTL, its timelines (dies, channels, controllers, link),
    /// its write buffer and GC threads.
    fn member_new(profile: &Profile, g: &nand::Geometry, ftl: Ftl<Recorder>, buffer_slots: u32, index: usize, cycles_per_erase: u32) -> Member {
        let c = &profile.controller;
        let erases_max = (0..g.blocks_per_plane).map(|b| ftl.superblock_erase_count(b)).max().unwrap_or(0) * cycles_per_erase;
        let wear = profile.nand.errors.clone().map(|e| Wear::new(e, profile.nand.codeword_bytes, g.dies(), g.blocks_per_plane, erases_max, index as u64));
        Member {
            ftl,
            dies: vec![Timeline::default(); g.dies() as usize],
            channels: vec![Timeline::default(); g.channels as usize],
            command: vec![Timeline::default(); c.count as usize],
            program_path: vec![Timeline::default(); c.count as usize],
            read_path: vec![Timeline::default(); c.count as usize],
            link_in: Timeline::default(),
            link_out: Timeline::default(),
            buffer: WriteBuffer {
                free: buffer_slots,
                capacity: buffer_slots,
                slots_per_page: g.slots_per_mpage(),
                pending: MinHeap::with_capacity((buffer_slots / g.slots_per_mpage()) as usize + 1),
            },
            slot_buf: None,
            gc_ready: 0,
            gc_cpu: Pool::new(profile.ftl.gc_threads),
            erased_at: vec![0; g.blocks_per_plane as usize],
            wear,
            cycles_per_erase,
            reclaim_ios: 0,
            reclaim_on: false,
            reads_lost: 0,
        }
    }

    /// Every cost the timing model charges, from the profile at a scale.
    fn costs_of(profile: &Profile, g: &nand::Geometry, scale: u32) -> Costs {
        let (c, t, scaling) = (&profile.controller, profile.nand.timings(), profile.scaling(scale));
        Costs {
            read_ns: t.read_ns,
            program_ns: t.program_ns,
            erase_ns: scaling.erase_ns(t.erase_ns),
            slot_transfer_ns: transfer_ns(SLOT_BYTES, t.channel_bytes_per_sec),
            mpage_transfer_ns: transfer_ns(g.mpage_bytes(), t.channel_bytes_per_sec),
            program_path_mpage_ns: transfer_ns(g.mpage_bytes(), c.program_path_bytes_per_sec),
            read_path_bytes_per_sec: c.read_path_bytes_per_sec,
            read_path_slot_ns: transfer_ns(SLOT_BYTES, c.read_path_bytes_per_sec),
            die_op_max_ns: t.program_ns.max(scaling.erase_ns(t.erase_ns)).max(t.read_ns + transfer_ns(g.mpage_bytes(), t.channel_bytes_per_sec)),
            read_path_mpage_ns: transfer_ns(g.mpage_bytes(), c.read_path_bytes_per_sec),
            codeword_bytes: profile.nand.codeword_bytes as u64,
            codeword_transfer_ns: transfer_ns(profile.nand.codeword_bytes as u64, t.channel_bytes_per_sec),
            read_command_ns: per_op_ns(c.read_commands_per_sec),
            write_command_ns: per_op_ns(c.write_commands_per_sec),
            gc_through_program_path: profile.management == crate::profile::Management::Host,
            link_bytes_per_sec: c.link_bytes_per_sec,
            link_slot_ns: transfer_ns(SLOT_BYTES, c.link_bytes_per_sec),
            overhead_ns: c.io_overhead_ns,
            cpu_ns: profile.host.os_submit_ns + profile.host.os_complete_ns + profile.host.cpu_ns_per_io,
            cpu_slot_ns: profile.host.cpu_ns_per_slot,
            complete_ns: profile.host.os_complete_ns,
            gc_mpage_cpu_ns: profile.ftl.gc_ns_per_slot * g.slots_per_mpage() as u64,
            gc_on_host: profile.management == crate::profile::Management::Host,
            die_channel: (0..g.dies()).map(|d| g.channel_of(d)).collect(),
            die_controller: (0..g.dies()).map(|d| g.channel_of(d) / (g.channels / c.count)).collect(),
            controllers: c.count,
            spm: g.slots_per_mpage(),
        }
    }

    /// One round of the reviewers' procedure at this device's scale.
    pub fn round_ns(&self) -> Ns {
        self.profile.scaling(self.scale).round_ns()
    }

    /// Raw flash in bytes (after scaling): every member's pages, OOB
    /// excluded.
    pub fn raw_bytes(&self) -> u64 {
        self.profile.scaling(self.scale).geometry(&self.profile.nand.geometry()).raw_bytes() * self.members.len() as u64
    }

    /// Usable capacity in bytes (after scaling).
    pub fn capacity_bytes(&self) -> u64 {
        self.member_bytes * self.members.len() as u64
    }

    /// The format's usable capacity on the full-size card, in bytes.
    pub fn full_capacity_bytes(&self) -> u64 {
        self.full_bytes
    }

    /// When everything issued so far, host I/O and background work, has
    /// ended: from then on the card is idle.
    pub fn quiet_at(&self) -> Ns {
        let mut t = self.cpu.idle_at();
        for m in &self.members {
            let lines = m.dies.iter().chain(&m.channels).chain(&m.command).chain(&m.program_path).chain(&m.read_path);
            for l in lines.chain([&m.link_in, &m.link_out]) {
                t = t.max(l.idle_at());
            }
            t = t.max(m.gc_ready).max(m.gc_cpu.idle_at()).max(m.erased_at.iter().copied().max().unwrap_or(0));
        }
        t
    }

    /// Secure erase: every block of every member erased, the map emptied.
    pub fn secure_erase(&mut self) -> Result<(), DeviceError> {
        for m in &mut self.members {
            m.ftl.secure_erase()?;
            m.ftl.media_mut().ops.clear();
        }
        Ok(())
    }

    /// Formats the card anew at `format` (a named format or a capacity):
    /// every good block erased, the map emptied, the usable capacity the
    /// format's; wear, bad blocks, dead dies, failures and the SMART log
    /// are kept. With `purge` (a secure erase), every page's bytes are also
    /// overwritten in the store, retired blocks and dead dies included, so
    /// that nothing written before is left on the media. A card kept in
    /// files names its new format in its stores' headers and `card.toml`.
    /// Refused, changing nothing, while a rebuild runs or where the good
    /// blocks cannot hold the format.
    pub fn reformat(&mut self, format: &str, purge: bool) -> Result<(), DeviceError> {
        if self.rebuilding() {
            return Err(DeviceError::Fault("a rebuild is running: format the card once it has ended (status shows its progress)".into()));
        }
        let (g, cfg, full_bytes) = Device::plan(&self.profile, format, self.scale)?;
        for (i, m) in self.members.iter().enumerate() {
            assert_eq!(m.ftl.media().array.geometry(), &g, "a format keeps the card's geometry");
            m.ftl.reformat_check(cfg.user_slots).map_err(|e| DeviceError::Fault(format!("format {format}: member {i}: {e}")))?;
        }
        let card = crate::CardFile::new(&self.profile.id, format, self.scale);
        for (i, m) in self.members.iter_mut().enumerate() {
            m.ftl.reformat(cfg.user_slots)?;
            m.ftl.media_mut().ops.clear();
            if let Some(store) = m.ftl.media_mut().array.store_mut() {
                if purge {
                    store.purge();
                }
                store.owner_set(&g, &Device::member_owner(&card.owner(), i));
            }
        }
        self.member_bytes = cfg.user_slots * SLOT_BYTES;
        self.full_bytes = full_bytes;
        self.format = format.into();
        if let Some(dir) = &self.store_dir {
            // The beacon and the served name are the card's, not the format's.
            let kept = crate::CardFile::load(dir).ok().flatten();
            let (beacon, name) = kept.map_or((false, None), |c| (c.beacon, c.name));
            crate::CardFile { beacon, name, ..card }.save(dir).map_err(DeviceError::Store)?;
        }
        Ok(())
    }

    /// Ages the card: every block has seen `pe_cycles` program/erase
    /// cycles before its erase count, and the data on it now is
    /// `age_days` old (data written later is fresh). Read retries are
    /// drawn from a PRNG seeded with `seed`. No effect on a card without an
    /// error model.
    pub fn wear_set(&mut self, pe_cycles: u32, age_days: f64, seed: u64) {
        for (i, m) in self.members.iter_mut().enumerate() {
            let erases_max = (0..m.ftl.layout().superblocks).map(|b| m.ftl.superblock_erase_count(b)).max().unwrap_or(0);
            if let Some(w) = &mut m.wear {
                w.set(pe_cycles, age_days, erases_max, seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            }
        }
    }

    pub fn counters(&self) -> DeviceCounters {
        let mut d = DeviceCounters { erase_count_min: u32::MAX, ..Default::default() };
        for m in &self.members {
            let f = m.ftl.counters();
            let mc = m.ftl.media().counters();
            let spm = self.costs.spm as u64;
            d.host_slots_written += f.host_slots_written;
            d.host_slots_read += f.host_slots_read;
            d.host_slots_trimmed += f.host_slots_trimmed;
            d.gc_slots_moved += f.gc_slots_moved;
            d.gc_victims += f.gc_victims;
            d.nand_slots_programmed += (mc.mpage_programs_user + mc.mpage_programs_gc) * spm;
            d.nand_parity_slots_programmed += mc.mpage_programs_parity * spm;
            d.nand_page_reads_host += mc.page_reads_user;
            d.nand_page_reads_gc += mc.page_reads_gc;
            d.block_erases += mc.block_erases;
            d.free_superblocks += m.ftl.free_superblocks() as u64;
            d.erase_count_max = d.erase_count_max.max(m.ftl.media().array.erase_count_max());
            d.erase_count_min = d.erase_count_min.min(m.ftl.media().array.erase_count_min());
            if let Some(w) = &m.wear {
                d.read_errors.add(&w.counters);
            }
            d.read_errors.superblocks_reclaimed += f.reclaim_victims;
            d.read_errors.reads_lost += m.reads_lost;
            d.faults.add(m.ftl.fault_counters());
        }
        d
    }

    /// Service time reserved so far on each kind of resource, summed over
    /// its servers and the members, with the number of servers: what a
    /// run's utilisation table is computed from.
    pub fn busy(&self) -> Vec<ResourceBusy> {
        let ms = &self.members;
        let tl = |f: &dyn Fn(&Member) -> &[Timeline]| -> (u32, Ns) { ms.iter().flat_map(|m| f(m).iter()).fold((0, 0), |(n, b), t| (n + 1, b + t.busy_ns)) };
        let row = |name: &'static str, (servers, busy_ns): (u32, Ns)| ResourceBusy { name, servers, busy_ns };
        let gc = ms.iter().fold((0, 0), |(n, b), m| (n + m.gc_cpu.servers(), b + m.gc_cpu.busy_ns));
        vec![
            row("host CPU", (self.cpu.servers(), self.cpu.busy_ns)),
            row("GC threads", gc),
            row("controller commands", tl(&|m| &m.command)),
            row("controller program path", tl(&|m| &m.program_path)),
            row("controller read path", tl(&|m| &m.read_path)),
            row("host link in", tl(&|m| std::slice::from_ref(&m.link_in))),
            row("host link out", tl(&|m| std::slice::from_ref(&m.link_out))),
            row("channels", tl(&|m| &m.channels)),
            row("dies", tl(&|m| &m.dies)),
        ]
    }

    /// The share of the write buffers holding data not yet programmed at
    /// `now` (pages whose program ends by then count as free).
    pub fn buffer_fill(&self, now: Ns) -> f64 {
        let (mut held, mut capacity) = (0u64, 0u64);
        for m in &self.members {
            let b = &m.buffer;
            let freed = b.pending.count_le(now) as u64 * b.slots_per_page as u64;
            held += (b.capacity as u64).saturating_sub(b.free as u64 + freed);
            capacity += b.capacity as u64;
        }
        held as f64 / capacity.max(1) as f64
    }

    /// Die time reserved so far, summed over every die.
    pub fn die_busy_ns(&self) -> u64 {
        self.members.iter().flat_map(|m| m.dies.iter()).map(|d| d.busy_ns).sum()
    }

    /// Dies of the whole card.
    pub fn dies(&self) -> u32 {
        self.members.iter().map(|m| m.dies.len() as u32).sum()
    }

    /// The effective over-provisioning: physical data slots (parity
    /// excluded) less what the GC reserve and the open superblocks hold on
    /// average, over the usable slots, minus one.
    /// The one over-provisioning figure of the card, shown by `run`,
    /// `review` and `status` alike: the data slots of its good blocks
    /// less what GC holds on average (its reserve and the open
    /// superblocks), over the format's slots, less one. The scaling keeps
    /// it the full-size card's; bad blocks and dead dies lower it.
    pub fn effective_op(&self) -> f64 {
        let held = self.profile.ftl.reserve_superblocks as f64 + HELD_BEYOND_RESERVE;
        let (mut t, mut user) = (0.0, 0u64);
        for m in &self.members {
            t += m.ftl.data_slots_good() as f64 - held * m.ftl.layout().data_slots_per_superblock as f64;
            user += m.ftl.user_slots();
        }
        t / user as f64 - 1.0
    }

    /// Runs the invariant checker of every member's FTL.
    pub fn check(&self) -> Result<(), String> {
        for m in &self.members {
            m.ftl.check()?;
        }
        Ok(())
    }

    fn member_io(&mut self, m: usize, now: Ns, offset: u64, len: u64, write: bool, payload: Payload) -> Result<Ns, DeviceError> {
        let c = &self.costs;
        let cpu = &mut self.cpu;
        let member = &mut self.members[m];
        let first = (offset / SLOT_BYTES) as u32;
        let last = ((offset + len - 1) / SLOT_BYTES) as u32;
        if member.reclaim_on {
            member.reclaim_pace(c, cpu, now)?;
        }
        if !write {
            // The controller that owns the first slot's die takes the command.
            match member.ftl.read_span(first, last) {
                // The simulator's host sees an I/O error and goes on.
                Err(ftl::FtlError::Lost { .. }) if matches!(payload, Payload::Timing) => member.reads_lost += 1,
                r => r?,
            }
            let ctl = match member.ftl.media().ops.first() {
                Some(op) => c.die_controller[op.die as usize],
                None if c.controllers == 1 => 0,
                None => c.controller_of_slot(first),
            };
            let t = member.command[ctl as usize].reserve(now, c.read_command_ns);
            let done = member.ops_time(c, cpu, t, c.sub_slot_read_bytes(offset, len));
            if let Payload::Read(out) = payload {
                slots_copy_out(&member.ftl, offset, out)?;
            }
            return Ok(member.link_out.reserve(done, c.link_ns(len)));
        }
        let ctl = c.controller_of_slot(first);
        let t = member.command[ctl as usize].reserve(now, c.write_command_ns);
        let t = member.link_in.reserve(t, c.link_ns(len));
        // A partial first or last slot is merged in the buffer with the rest
        // of the slot, read from the media: the read costs die, channel and
        // read-path time, but the write is acknowledged from the buffer
        // without waiting for it (what the vendors' 512 B write latencies,
        // 13-18 us, show on every catalog card).
        let head_partial = !offset.is_multiple_of(SLOT_BYTES) || (first == last && len < SLOT_BYTES);
        let tail_partial = !(offset + len).is_multiple_of(SLOT_BYTES);
        for (lba, partial) in [(first, head_partial), (last, tail_partial && last != first)] {
            if partial && member.ftl.read(lba, None)? == ReadFrom::Media {
                member.ops_time(c, cpu, t, None);
            }
        }
        if let Payload::Write(data) = payload {
            return member.write_data(c, cpu, t, offset, data);
        }
        let mut done = t;
        for lba in first..last + 1 {
            let ack = member.buffer.acquire(t);
            member.ftl.write(lba, None)?;
            member.ops_time(c, cpu, ack, None);
            done = done.max(ack);
        }
        Ok(done)
    }
}

/// The bytes of slots from byte `offset` of a member, into `out`.
fn slots_copy_out(ftl: &Ftl<Recorder>, offset: u64, out: &mut [u8]) -> Result<(), DeviceError> {
    let mut slot = [0u8; SLOT_BYTES as usize];
    let (mut at, end) = (offset, offset + out.len() as u64);
    while at < end {
        let lba = at / SLOT_BYTES;
        let (lo, hi) = ((at - lba * SLOT_BYTES) as usize, ((lba + 1) * SLOT_BYTES).min(end) - lba * SLOT_BYTES);
        ftl.slot_copy(lba as u32, &mut slot)?;
        let o = (at - offset) as usize;
        out[o..o + hi as usize - lo].copy_from_slice(&slot[lo..hi as usize]);
        at = lba * SLOT_BYTES + hi;
    }
    Ok(())
}

/// A slot's bytes after a write of `data` at byte `offset`: the written part
/// from `data`, the rest (a partial slot) as the slot holds it now.
fn slot_merge(ftl: &Ftl<Recorder>, lba: u32, offset: u64, data: &[u8], slot: &mut [u8; SLOT_BYTES as usize]) -> Result<(), DeviceError> {
    let start = lba as u64 * SLOT_BYTES;
    let (lo, hi) = (offset.max(start), (offset + data.len() as u64).min(start + SLOT_BYTES));
    if hi - lo < SLOT_BYTES {
        ftl.slot_copy(lba, slot)?;
    }
    slot[(lo - start) as usize..(hi - start) as usize].copy_from_slice(&data[(lo - offset) as usize..(hi - offset) as usize]);
    Ok(())
}

impl Member {
    /// The slots of a data-holding write, each with its bytes (a partial
    /// slot merged with what it holds), acknowledged from the buffer. Kept
    /// out of line: the simulator's write loop stays as small as it was.
    #[inline(never)]
    fn write_data(&mut self, c: &Costs, cpu: &mut Pool, t: Ns, offset: u64, data: &[u8]) -> Result<Ns, DeviceError> {
        let (first, last) = ((offset / SLOT_BYTES) as u32, ((offset + data.len() as u64 - 1) / SLOT_BYTES) as u32);
        let mut done = t;
        for lba in first..last + 1 {
            let ack = self.buffer.acquire(t);
            let slot = self.slot_buf.get_or_insert_with(|| Box::new([0; SLOT_BYTES as usize]));
            slot_merge(&self.ftl, lba, offset, data, slot)?;
            self.ftl.write(lba, Some(&slot[..]))?;
            self.ops_time(c, cpu, ack, None);
            done = done.max(ack);
        }
        Ok(done)
    }

    /// Read reclaim in the background, paced by host I/O.
    #[inline(never)]
    fn reclaim_pace(&mut self, c: &Costs, cpu: &mut Pool, now: Ns) -> Result<(), DeviceError> {
        self.reclaim_ios += 1;
        if self.reclaim_ios >= RECLAIM_IOS_PER_SLOT {
            self.reclaim_ios = 0;
            // On until the queue is empty and its last victim erased.
            self.reclaim_on = self.ftl.reclaim_step(1)? > 0;
            self.ops_time(c, cpu, now, None);
        }
        Ok(())
    }

    /// Times the media operations the FTL just issued, all ready at `ready`;
    /// returns when the last host read among them has its data out of the
    /// read path. `sub_slot` is the bytes a host read of less than a slot
    /// moves (its codewords). GC threads of a host-managed card also take a
    /// core of `cpu`.
    #[inline]
    fn ops_time(&mut self, c: &Costs, cpu: &mut Pool, ready: Ns, sub_slot: Option<u64>) -> Ns {
        let mut user_done = ready;
        if self.ftl.media().ops.is_empty() {
            return user_done;
        }
        // The log is taken from the FTL's media while the resources are
        // reserved, and given back emptied (its capacity kept).
        let mut ops = std::mem::take(&mut self.ftl.media_mut().ops);
        for op in &ops {
            match op.kind {
                OpKind::Read => user_done = user_done.max(self.read_time(c, op, ready, sub_slot)),
                OpKind::Program => self.program_time(c, cpu, op, ready),
                OpKind::Erase => {
                    if let Some(w) = &mut self.wear {
                        w.erased(op.die, op.block, self.ftl.superblock_erase_count(op.block) * self.cycles_per_erase);
                    }
                    // A victim is erased once all its valid data is read out.
                    let end = self.dies[op.die as usize].reserve(ready.max(self.gc_ready), c.erase_ns);
                    let e = &mut self.erased_at[op.block as usize];
                    *e = (*e).max(end);
                }
            }
        }
        ops.clear();
        self.ftl.media_mut().ops = ops;
        user_done
    }

    /// A read: sense (tR), then the named slots (or a short read's
    /// codewords) cross the channel, the die holding the data in its
    /// register until then; then ECC decode and DMA. A host read returns
    /// when its data is out; a GC read moves `gc_ready` (and returns `ready`).
    #[inline(always)]
    fn read_time(&mut self, c: &Costs, op: &MediaOp, ready: Ns, sub_slot: Option<u64>) -> Ns {
        let d = op.die as usize;
        let (ch, ctl) = (c.die_channel[d] as usize, c.die_controller[d] as usize);
        let (xfer, path, codewords) = match sub_slot {
            Some(bytes) if op.tag == OpTag::User => {
                (bytes / c.codeword_bytes * c.codeword_transfer_ns, transfer_ns(bytes, c.read_path_bytes_per_sec), bytes / c.codeword_bytes)
            }
            _ => {
                let n = op.mask.count_ones() as u64;
                (n * c.slot_transfer_ns, n * c.read_path_slot_ns, n * SLOT_BYTES / c.codeword_bytes)
            }
        };
        // A read that fails to decode is retried on the same die: each
        // attempt senses and moves the data again and is decoded again (the
        // die held meanwhile; the channel is charged once).
        let (attempts, beyond) = match &mut self.wear {
            None => (1, false),
            Some(w) if w.quiet() => (1, false),
            Some(w) => {
                let outcome = w.read(op.die, op.block, self.ftl.superblock_erase_count(op.block) * self.cycles_per_erase, codewords as u32);
                if w.reclaims(outcome) {
                    self.ftl.reclaim_request(op.block);
                    self.reclaim_on = true;
                }
                match outcome {
                    ReadOutcome::Retries(k) => (1 + k as u64, false),
                    ReadOutcome::BeyondEcc => (1 + w.retries_max() as u64, true),
                }
            }
        };
        if op.tag == OpTag::Gc {
            let sensed = self.dies[d].reserve(ready, (c.read_ns + xfer) * attempts);
            let out = self.channels[ch].reserve(sensed - xfer, xfer).max(sensed);
            let mut done = self.read_path[ctl].reserve(out, path * attempts);
            if beyond {
                done = done.max(self.stripe_rebuild(c, op, ready));
            }
            self.gc_ready = self.gc_ready.max(done);
            return ready;
        }
        // Host reads go ahead of queued programs and GC work, behind at
        // most the operation in progress.
        let sensed = self.dies[d].reserve_priority(ready, (c.read_ns + xfer) * attempts, c.die_op_max_ns);
        let out = self.channels[ch].reserve_priority(sensed - xfer, xfer, c.mpage_transfer_ns).max(sensed);
        let done = self.read_path[ctl].reserve_priority(out, path * attempts, c.read_path_mpage_ns);
        if beyond {
            return done.max(self.stripe_rebuild(c, op, ready));
        }
        done
    }

    /// A page beyond ECC after every retry: rebuilt from its stripe (a
    /// read of the same page on every other die of the stripe, then the
    /// XOR), where the card has parity; else counted as lost. Returns
    /// when the rebuilt data is out.
    #[inline(never)]
    fn stripe_rebuild(&mut self, c: &Costs, op: &MediaOp, ready: Ns) -> Ns {
        let width = self.ftl.layout().stripe_width;
        let w = self.wear.as_mut().expect("only the error model finds a page beyond ECC");
        if width <= 1 {
            w.counters.reads_uncorrectable += 1;
            return ready;
        }
        w.counters.reads_rebuilt_from_parity += 1;
        let first = op.die / width * width;
        let mut done = ready;
        for o in (first..first + width).filter(|&o| o != op.die) {
            let (ch, ctl) = (c.die_channel[o as usize] as usize, c.die_controller[o as usize] as usize);
            let sensed = self.dies[o as usize].reserve_priority(ready, c.read_ns + c.mpage_transfer_ns, c.die_op_max_ns);
            let out = self.channels[ch].reserve_priority(sensed - c.mpage_transfer_ns, c.mpage_transfer_ns, c.mpage_transfer_ns).max(sensed);
            done = done.max(self.read_path[ctl].reserve_priority(out, c.read_path_mpage_ns, c.read_path_mpage_ns));
        }
        done
    }

    /// A program: GC data must first have been read out of the victim, and
    /// a GC thread must have handled the page's slots (on a host core, for
    /// a host-managed card); the block must be erased; then the program
    /// path, the channel and the die.
    #[inline(always)]
    fn program_time(&mut self, c: &Costs, cpu: &mut Pool, op: &MediaOp, ready: Ns) {
        let d = op.die as usize;
        let (ch, ctl) = (c.die_channel[d] as usize, c.die_controller[d] as usize);
        let gc = matches!(op.tag, OpTag::Gc | OpTag::GcParity);
        let r = match op.tag {
            OpTag::Gc => {
                // On a host-managed card the GC thread's time is also a
                // host core's: taken from the cores as the host I/O that
                // paces it is issued (in time order: a pool has no gaps, and
                // a reservation at the GC's later start would idle a core
                // until then).
                if c.gc_on_host {
                    cpu.reserve(ready, c.gc_mpage_cpu_ns);
                }
                self.gc_cpu.reserve(ready.max(self.gc_ready), c.gc_mpage_cpu_ns)
            }
            OpTag::GcParity => ready.max(self.gc_ready),
            _ => ready,
        };
        let r = r.max(self.erased_at[op.block as usize]);
        let staged = if gc && !c.gc_through_program_path { r } else { self.program_path[ctl].reserve(r, c.program_path_mpage_ns) };
        let loaded = self.channels[ch].reserve(staged, c.mpage_transfer_ns);
        let end = self.dies[d].reserve(loaded, c.program_ns);
        if op.tag == OpTag::User {
            self.buffer.release(end);
        }
    }
}

impl Device {
    /// The modelled time of the mount's scan: every programmed page's
    /// out-of-band area read (a sense, tR, each), the dies in parallel: the
    /// busiest die's pages x tR. Zero for a device that was formatted or
    /// mounted from a clean stop's checkpoint (no scan).
    pub fn mount_modelled_ns(&self) -> Ns {
        if self.mounted.as_ref().is_none_or(|r| r.from_checkpoint) {
            return 0;
        }
        let g = self.profile.scaling(self.scale).geometry(&self.profile.nand.geometry());
        let busiest = |f: &Ftl<Recorder>| {
            (0..g.dies()).map(|die| (0..g.blocks_per_plane).map(|b| f.media().block_next_page(die, b) as u64).sum::<u64>()).max().unwrap_or(0)
        };
        self.members.iter().map(|m| busiest(&m.ftl)).max().unwrap_or(0) * self.costs.read_ns
    }

    /// Puts every write so far on the media (the writers' open pages padded
    /// and programmed); returns when the last program ends.
    pub(crate) fn members_flush(&mut self, now: Ns) -> Result<Ns, DeviceError> {
        // A protected buffer is already as durable as the flash.
        if self.power_loss_protection() {
            return Ok(now);
        }
        let (c, cpu) = (&self.costs, &mut self.cpu);
        let mut done = now;
        for member in &mut self.members {
            // The padding takes buffer slots as data would.
            for _ in 0..member.ftl.user_pad_slots() {
                member.buffer.acquire(now);
            }
            member.ftl.flush()?;
            member.ops_time(c, cpu, now, None);
            done = done.max(member.buffer.pending.max().unwrap_or(now));
        }
        Ok(done)
    }

    /// An I/O must be whole sectors inside the device.
    pub(crate) fn range_check(&self, offset: u64, len: u64) -> Result<(), DeviceError> {
        let capacity = self.capacity_bytes();
        if len == 0 || !offset.is_multiple_of(SECTOR_BYTES) || !len.is_multiple_of(SECTOR_BYTES) || offset.checked_add(len).is_none_or(|end| end > capacity) {
            return Err(DeviceError::OutOfRange { offset, len, capacity });
        }
        Ok(())
    }

    pub(crate) fn member_ftls(&self) -> impl Iterator<Item = &Ftl<Recorder>> {
        self.members.iter().map(|m| &m.ftl)
    }

    pub(crate) fn member_ftl_mut(&mut self, m: usize) -> &mut Ftl<Recorder> {
        &mut self.members[m].ftl
    }

    /// The member a byte offset lives on and the offset within it: RAID 0
    /// over the members in chunks of `stripe_bytes` (the one rule of the
    /// split; a single member is the identity).
    #[inline(always)]
    pub(crate) fn member_of(&self, offset: u64) -> (usize, u64) {
        if self.members.len() == 1 {
            return (0, offset);
        }
        let n = self.members.len() as u64;
        let stripe = offset / self.stripe_bytes;
        ((stripe % n) as usize, (stripe / n) * self.stripe_bytes + offset % self.stripe_bytes)
    }

    /// The device offset of a member's offset: [`Device::member_of`]
    /// undone.
    pub(crate) fn device_offset(&self, member: usize, offset: u64) -> u64 {
        let n = self.members.len() as u64;
        if n == 1 {
            return offset;
        }
        let chunk = offset / self.stripe_bytes;
        (chunk * n + member as u64) * self.stripe_bytes + offset % self.stripe_bytes
    }

    /// Whether the card's write buffer survives a power cut.
    pub fn power_loss_protection(&self) -> bool {
        self.members[0].ftl.config().power_loss_protection
    }
}

/// Die failures and rebuilds (see [`crate::faults`]).
impl Device {
    fn faults_mut(&mut self) -> &mut Faults {
        let (members, rate) = (self.members.len(), self.profile.ftl.rebuild_bytes_per_sec);
        self.faults.get_or_insert_with(|| Box::new(Faults::new(members, rate)))
    }

    /// The dies a target names, checked against the card.
    fn target_dies(&self, t: &FailTarget) -> Result<Vec<u32>, DeviceError> {
        let g = self.members[0].ftl.media().geometry();
        t.dies(g, self.members.len()).map_err(DeviceError::Fault)
    }

    /// Schedules a failure at `at` on the device's clock: it happens at the
    /// first I/O submitted from then on.
    pub fn fail_at(&mut self, target: &FailTarget, at: Ns) -> Result<(), DeviceError> {
        self.target_dies(target)?;
        let f = self.faults_mut();
        f.pending.push((at, target.clone()));
        f.pending.sort_by_key(|p| std::cmp::Reverse(p.0));
        f.next_due = f.next_due.min(at);
        Ok(())
    }

    /// A card mounted with stripes still holding dead dies (a cut came
    /// before their rebuild ended) takes the rebuild up again at once, at
    /// the profile's pace, as a failure event of its own (`resumed`).
    fn rebuilds_resume(&mut self) {
        let names = self.dead_die_names();
        let mut named = names.iter();
        for m in 0..self.members.len() {
            let dies = self.members[m].ftl.dead_dies().to_vec();
            let these: Vec<String> = named.by_ref().take(dies.len()).cloned().collect();
            if self.members[m].ftl.rebuilding() && self.members[m].ftl.rebuild_left() == 0 {
                // A mount starts a pass over every stripe of a card with
                // dead dies; with nothing left to move, it ends at once
                // (no media operation).
                self.members[m].ftl.rebuild_step(1).expect("a rebuild with nothing to move touches no media");
                assert!(!self.members[m].ftl.rebuilding(), "a pass with nothing to move ends");
            }
            if !self.members[m].ftl.rebuilding() {
                continue;
            }
            let ev = FailureEvent {
                what: these.join(", "),
                member: m,
                dies,
                failed_at_ns: 0,
                slots_to_rebuild: self.members[m].ftl.rebuild_left(),
                slots_moved: 0,
                rebuild_done_ns: None,
                lost_offsets: Vec::new(),
                read_only: None,
                random: false,
                resumed: true,
            };
            let spm = self.costs.spm;
            let f = self.faults_mut();
            f.events.push(ev);
            f.rebuilding[m] = Some(Rebuilding { since: 0, moved: 0, event: f.events.len() - 1 });
            f.plan(0, spm);
        }
    }

    /// Fails a target's dies now; the rebuild starts.
    pub fn fail_now(&mut self, now: Ns, target: &FailTarget) -> Result<FailureEvent, DeviceError> {
        let dies = self.target_dies(target)?;
        let (m, members) = (target.member, self.members.len());
        if let Some(d) = dies.iter().find(|&&d| self.members[m].ftl.is_dead(d)) {
            return Err(DeviceError::Fault(format!("{}: die {d} has already failed", target.describe(members))));
        }
        let mut ev = FailureEvent {
            what: target.describe(members),
            member: m,
            dies: dies.clone(),
            failed_at_ns: now,
            slots_to_rebuild: 0,
            slots_moved: 0,
            rebuild_done_ns: None,
            lost_offsets: Vec::new(),
            read_only: None,
            random: false,
            resumed: false,
        };
        for &d in &dies {
            let f = self.members[m].ftl.die_fail(d)?;
            ev.slots_to_rebuild = f.slots_to_rebuild;
            ev.read_only = ev.read_only.or(f.read_only);
            ev.lost_offsets.extend(f.lbas_lost.iter().map(|&lba| self.device_offset(m, lba as u64 * SLOT_BYTES)));
        }
        // The seal's programs.
        let (c, cpu) = (&self.costs, &mut self.cpu);
        self.members[m].ops_time(c, cpu, now, None);
        let spm = self.costs.spm;
        let f = self.faults_mut();
        f.events.push(ev.clone());
        f.rebuilding[m] = Some(Rebuilding { since: now, moved: 0, event: f.events.len() - 1 });
        f.plan(now, spm);
        Ok(ev)
    }

    /// Failures due by `now` happen; rebuilds under way move what their
    /// rate allows by then.
    #[inline(never)]
    fn faults_advance(&mut self, now: Ns) -> Result<(), DeviceError> {
        self.random_advance(now)?;
        while let Some((at, t)) = self.faults.as_ref().and_then(|f| f.pending.last().cloned()).filter(|p| p.0 <= now) {
            self.faults_mut().pending.pop();
            self.fail_now(at, &t)?;
        }
        for m in 0..self.members.len() {
            let Some(r) = self.faults.as_ref().and_then(|f| f.rebuilding[m]) else { continue };
            let due = self.faults.as_ref().map_or(0, |f| f.slots_due(r.since, now)).saturating_sub(r.moved);
            let moved = if due > 0 { self.members[m].ftl.rebuild_step(due)? } else { 0 };
            let (c, cpu) = (&self.costs, &mut self.cpu);
            self.members[m].ops_time(c, cpu, now, None);
            let (done, gc_ready) = (!self.members[m].ftl.rebuilding(), self.members[m].gc_ready);
            let f = self.faults_mut();
            let ev = &mut f.events[r.event];
            ev.slots_moved += moved;
            f.rebuilding[m] = Some(Rebuilding { moved: r.moved + moved, ..r });
            if done {
                // One rebuild empties every stripe holding a dead die of
                // the member: it ends every failure of the member that
                // was waiting for it, the earlier ones too.
                for ev in f.events.iter_mut().filter(|e| e.member == m && e.rebuild_done_ns.is_none()) {
                    ev.rebuild_done_ns = Some(now.max(gc_ready));
                }
                f.rebuilding[m] = None;
            }
        }
        let spm = self.costs.spm;
        self.faults_mut().plan(now, spm);
        Ok(())
    }

    /// Draws die failures and uncorrectable errors at random from `now`
    /// on, at the profile's field rates (`nand.errors.field_*`) times
    /// `acceleration` (see [`crate::faults::RandomFaults`]).
    pub fn random_faults_set(&mut self, acceleration: f64, seed: u64, now: Ns) -> Result<(), DeviceError> {
        let Some(e) = &self.profile.nand.errors else {
            return Err(DeviceError::Fault(format!("{}: the profile has no [nand.errors], so no field failure rates", self.profile.id)));
        };
        if e.field_die_failures_per_year == 0.0 && e.field_uncorrectable_per_day == 0.0 {
            return Err(DeviceError::Fault(format!("{}: the profile's field failure rates are zero (nand.errors.field_*)", self.profile.id)));
        }
        if !(acceleration.is_finite() && acceleration > 0.0 && acceleration <= 1e12) {
            return Err(DeviceError::Fault(format!("random faults at {acceleration} times the field rates: must be in (0, 1e12]")));
        }
        let r = RandomFaults::new(e.field_die_failures_per_year, e.field_uncorrectable_per_day, self.members.len(), acceleration, seed, now);
        let spm = self.costs.spm;
        let f = self.faults_mut();
        f.random = Some(r);
        f.plan(now, spm);
        Ok(())
    }

    /// Random uncorrectable errors drawn so far.
    pub fn random_uncorrectable_events(&self) -> u64 {
        self.faults.as_ref().and_then(|f| f.random.as_ref()).map_or(0, |r| r.ue_events)
    }

    /// Random events due by `now` happen, in time order.
    fn random_advance(&mut self, now: Ns) -> Result<(), DeviceError> {
        let (members, g) = (self.members.len() as u64, self.members[0].ftl.media().geometry().clone());
        loop {
            let Some(r) = self.faults.as_mut().and_then(|f| f.random.as_mut()) else { return Ok(()) };
            let (die_at, ue_at) = (r.next_die_ns, r.next_ue_ns);
            if die_at.min(ue_at) > now {
                return Ok(());
            }
            let m = r.rng.below(members) as usize;
            if ue_at < die_at {
                r.ue_next(ue_at);
                if let Some(w) = &mut self.members[m].wear {
                    w.ue_inject();
                }
                continue;
            }
            let pick = r.rng.below(u64::MAX);
            r.die_next(die_at);
            let live: Vec<u32> = (0..g.dies()).filter(|&d| !self.members[m].ftl.is_dead(d)).collect();
            if live.is_empty() || self.members[m].ftl.read_only().is_some() {
                continue;
            }
            let d = live[(pick % live.len() as u64) as usize];
            let t = FailTarget { member: m, channel: d % g.channels, die: Some(d / g.channels) };
            self.fail_now(die_at, &t)?;
            if let Some(ev) = self.faults.as_mut().and_then(|f| f.events.last_mut()) {
                ev.random = true;
            }
        }
    }

    /// Sets the rebuild's rate, bytes per second (the profile's unless
    /// set).
    pub fn rebuild_rate_set(&mut self, bytes_per_sec: u64) {
        assert!(bytes_per_sec > 0, "a rebuild rate is positive");
        self.profile.ftl.rebuild_bytes_per_sec = bytes_per_sec;
        if let Some(f) = &mut self.faults {
            f.rebuild_bytes_per_sec = bytes_per_sec;
        }
    }

    /// The rebuild's rate, bytes per second.
    pub fn rebuild_rate(&self) -> u64 {
        self.profile.ftl.rebuild_bytes_per_sec
    }

    /// Whether `target` names dies of this card (a failure scheduled for
    /// it would be refused).
    pub fn fail_check(&self, target: &FailTarget) -> Result<(), DeviceError> {
        self.target_dies(target).map(|_| ())
    }

    /// Background work due by `now` without a host I/O (a served card's
    /// rebuild while no request comes).
    pub fn background(&mut self, now: Ns) -> Result<(), DeviceError> {
        if self.faults.as_ref().is_some_and(|f| now >= f.next_due) {
            self.faults_advance(now)?;
            self.smart_keep();
        }
        Ok(())
    }

    /// The failures so far and their rebuilds.
    pub fn failures(&self) -> &[FailureEvent] {
        self.faults.as_ref().map_or(&[], |f| &f.events)
    }

    /// Each member's failed dies (those a mount found included).
    pub fn dead_dies(&self) -> Vec<Vec<u32>> {
        self.members.iter().map(|m| m.ftl.dead_dies().to_vec()).collect()
    }

    /// Each dead die's name ("die 3.1", "member 1 die 3.1"), member by
    /// member, as `dead_dies` lists them.
    pub fn dead_die_names(&self) -> Vec<String> {
        let g = self.members[0].ftl.media().geometry();
        let (channels, members) = (g.channels, self.members.len());
        let name = |member: usize, d: u32| FailTarget { member, channel: d % channels, die: Some(d / channels) }.describe(members);
        self.members.iter().enumerate().flat_map(|(m, mem)| mem.ftl.dead_dies().iter().map(move |&d| name(m, d))).collect()
    }

    /// 4 KiB slots whose data is lost (kept across power-ons in the
    /// system area).
    pub fn slots_lost(&self) -> u64 {
        self.members.iter().map(|m| m.ftl.lbas_lost().len() as u64).sum()
    }

    /// Valid slots still to move out of stripes holding a dead die.
    pub fn rebuild_left(&self) -> u64 {
        self.members.iter().map(|m| m.ftl.rebuild_left()).sum()
    }

    /// The directory of the card's store, for a card kept in files.
    pub fn store_dir(&self) -> Option<&std::path::Path> {
        self.store_dir.as_deref()
    }

    /// Whether a rebuild is under way.
    pub fn rebuilding(&self) -> bool {
        self.members.iter().any(|m| m.ftl.rebuilding())
    }

    /// The SMART-like log of a card kept in files (`None` otherwise): what
    /// its store held at power-on plus what happened since.
    pub fn smart(&self) -> Option<SmartLog> {
        let log = self.smart.as_ref()?;
        let c = self.counters();
        Some(log.with(c.host_slots_read, c.host_slots_written, c.nand_slots_all(), c.read_errors.reads_uncorrectable + c.faults.lbas_lost))
    }

    /// Keeps the SMART log's traffic counters beside the pages (a card
    /// kept in files; nothing otherwise): done after every request of the
    /// block API and every background step, so that a cut loses none.
    pub(crate) fn smart_keep(&mut self) {
        let Some(log) = self.smart() else { return };
        if let Some(store) = self.members[0].ftl.media_mut().array.store_mut() {
            store.kept_counters_set(&log.kept());
        }
    }

    /// Why the card refuses writes, if it does.
    pub fn read_only(&self) -> Option<&str> {
        self.members.iter().find_map(|m| m.ftl.read_only())
    }

    /// The card's wear, bad blocks and spare, over its members.
    pub fn health(&self) -> Health {
        let (mut sum, mut blocks, mut lo, mut hi) = (0u64, 0u64, u32::MAX, 0u32);
        let mut bad = ftl::BadBlocks::default();
        for m in &self.members {
            let a = &m.ftl.media().array;
            let c = m.cycles_per_erase;
            sum += a.erase_count_total() * c as u64;
            blocks += m.ftl.layout().superblocks as u64 * m.ftl.layout().dies as u64;
            lo = lo.min(a.erase_count_min() * c);
            hi = hi.max(a.erase_count_max() * c);
            bad.add(m.ftl.bad_blocks());
        }
        let rated = self.profile.nand.endurance.as_ref().map(|e| e.rated_pe_cycles);
        let mean = sum as f64 / blocks.max(1) as f64;
        Health {
            pe_cycles_mean: mean,
            pe_cycles_min: lo.min(hi),
            pe_cycles_max: hi,
            pe_cycles_rated: rated,
            life_used: rated.map(|r| mean / r as f64),
            bad_blocks: bad,
            blocks,
            spare_share: self.effective_op(),
            read_only: self
                .members
                .iter()
                .enumerate()
                .find_map(|(i, m)| m.ftl.read_only().map(|why| if self.members.len() > 1 { format!("member {i}: {why}") } else { why.to_string() })),
        }
    }
}

impl Target for Device {
    type Error = DeviceError;

    #[inline]
    fn prefetch(&self, io: &Io, stage: u8) {
        let (member, off) = self.member_of(io.offset_bytes);
        // Stage 0: an I/O of several slots (within the member's chunk for
        // a striped card) spans one or two L2P lines. Stage 1: its slots,
        // up to 16, each have their own old place: a write clears its
        // validity bit, a read has its block's state checked.
        let ftl = &self.members[member].ftl;
        let first = (off / SLOT_BYTES) as u32;
        let last = ((off + io.len_bytes.max(1) as u64 - 1) / SLOT_BYTES) as u32;
        if stage == 0 {
            ftl.prefetch(first, 0, io.write);
            if last != first {
                ftl.prefetch(last, 0, io.write);
            }
        } else {
            for lba in first..=last.min(first + 15) {
                ftl.prefetch(lba, 1, io.write);
            }
        }
    }

    fn submit(&mut self, now: Ns, io: &Io) -> Result<Ns, DeviceError> {
        self.io(now, io.offset_bytes, io.len_bytes as u64, io.write, Payload::Timing)
    }
}

/// What an I/O moves besides its timing: nothing (the simulator), the
/// bytes to write, or the buffer to read into (a data-holding device).
pub enum Payload<'a> {
    Timing,
    Write(&'a [u8]),
    Read(&'a mut [u8]),
}

impl Payload<'_> {
    /// The part of the payload from byte `from` of the I/O, `len` long.
    fn piece(&mut self, from: u64, len: u64) -> Payload<'_> {
        let r = from as usize..(from + len) as usize;
        match self {
            Payload::Timing => Payload::Timing,
            Payload::Write(d) => Payload::Write(&d[r]),
            Payload::Read(o) => Payload::Read(&mut o[r]),
        }
    }
}

impl Device {
    /// Applies an I/O to the FTL (with its bytes, if any) and returns its
    /// completion time; the one path of the simulator and the block API.
    pub(crate) fn io(&mut self, now: Ns, offset: u64, len: u64, write: bool, mut payload: Payload) -> Result<Ns, DeviceError> {
        self.range_check(offset, len)?;
        if self.faults.as_ref().is_some_and(|f| now >= f.next_due) {
            self.faults_advance(now)?;
        }
        // The host's CPU time for the I/O, its completion path's included,
        // is taken at submission (the cores are rarely the limit, and one
        // reservation in time order keeps the pool's ring in order); the
        // completion path's latency is added at the end.
        let slots = (offset + len).div_ceil(SLOT_BYTES) - offset / SLOT_BYTES;
        let t = self.cpu.reserve(now, self.costs.cpu_ns + slots * self.costs.cpu_slot_ns);
        let done = if self.members.len() == 1 {
            self.member_io(0, t, offset, len, write, payload)?
        } else {
            // RAID 0 across members: split at chunk boundaries.
            let chunk = self.stripe_bytes;
            let mut done = t;
            let (mut off, end) = (offset, offset + len);
            while off < end {
                let piece_end = ((off / chunk + 1) * chunk).min(end);
                let (member, member_off) = self.member_of(off);
                let piece = payload.piece(off - offset, piece_end - off);
                done = done.max(self.member_io(member, t, member_off, piece_end - off, write, piece)?);
                off = piece_end;
            }
            done
        };
        debug_assert!(done >= now, "a completion ({done} ns) before its submission ({now} ns)");
        Ok(done + self.costs.overhead_ns + self.costs.complete_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::Rng;

    fn buffer(pages: u32, slots_per_page: u32) -> WriteBuffer {
        let slots = pages * slots_per_page;
        WriteBuffer { free: slots, capacity: slots, slots_per_page, pending: MinHeap::with_capacity(pages as usize + 1) }
    }

    /// A free slot takes data at once; a full buffer takes it when the
    /// earliest pending page is programmed, which frees a page of slots.
    #[test]
    fn a_full_buffer_waits_for_the_earliest_program() {
        let mut b = buffer(2, 4);
        for _ in 0..8 {
            assert_eq!(b.acquire(10), 10);
        }
        b.release(500);
        b.release(300);
        assert_eq!(b.acquire(20), 300, "the earliest page frees first");
        for _ in 0..3 {
            assert_eq!(b.acquire(30), 30, "the rest of that page's slots are free");
        }
        assert_eq!(b.acquire(40), 500);
        assert_eq!(b.acquire(900), 900, "data arriving after the program waits for nothing");
    }

    /// On every catalog card, random reads and writes of every size: no
    /// completion before its submission, and the buffer never holds more
    /// slots than it has.
    #[test]
    fn completions_never_precede_submissions() {
        for (id, _) in crate::CATALOG {
            let profile = crate::profile_load(id).unwrap();
            let mut d = Device::new(&profile, &profile.default_format, 128).unwrap();
            let cap = d.capacity_bytes();
            let mut rng = Rng::new(7);
            let mut now = 0;
            for i in 0..40_000u64 {
                let len = 512 * (1 + rng.below(256));
                let offset = rng.below((cap - len) / 512) * 512;
                let io = Io { offset_bytes: offset, len_bytes: len as u32, write: i % 3 != 0 };
                let done = d.submit(now, &io).unwrap();
                assert!(done >= now, "{id}: completion {done} before submission {now}");
                for m in &d.members {
                    let b = &m.buffer;
                    assert!(b.free as u64 + b.pending.len() as u64 * b.slots_per_page as u64 <= b.capacity as u64, "{id}: buffer over its size");
                }
                now += rng.below(20_000);
            }
        }
    }
}
