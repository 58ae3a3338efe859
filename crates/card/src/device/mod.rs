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

mod bridge;
pub mod faults;
mod interrupts;
mod member;
mod mount;
mod observe;
mod plan;
mod raid;
mod snapshot;
mod stream;
mod timing;

pub use mount::Backing;
pub use observe::{DeviceCounters, ResourceBusy};
pub use plan::capacity_parse;
pub use raid::Payload;

mod error;
pub use error::{DeviceError, Inconsistent, MountFirst};
use interrupts::Interrupts;
use member::Member;
use timing::{Costs, HostRead, Start};

use crate::catalog::profile::Profile;
use crate::health::Aging;
use crate::recorder::Recorder;
use crate::SmartLog;
use crate::StoreLock;
use faults::Faults;
use ftl::{Ftl, FtlConfig, MountReport};
use nand::Nand;
use sim::{Io, Pool, Target};
use units::{Ns, SECTOR_BYTES, SLOT_BYTES};

pub struct Device {
    pub profile: Profile,
    pub format: String,
    pub scale: u32,
    members: Vec<Member>,
    cpu: Pool,
    /// Whether the host's I/O cores were last found taken (what the
    /// members were told: `host_cores_taken`).
    host_cores_taken: bool,
    /// The driver's interrupt vectors, each served by a core of its own.
    interrupts: Interrupts,
    bridge: Option<bridge::Bridge>,
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
    /// The age the card was set to (`wear_set`).
    pub(crate) age: crate::Age,
}

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
            return Err(DeviceError::CyclesPerErase);
        }
        let plan = Device::plan(profile, format, scale)?;
        Device::build(profile, format, scale, plan, &Backing::None, Some(aging))
    }

    fn build(
        profile: &Profile,
        format: &str,
        scale: u32,
        (g, cfg, full_bytes): (nand::Geometry, FtlConfig, u64),
        backing: &Backing,
        aging: Option<Aging>,
    ) -> Result<Device, DeviceError> {
        Device::memory_check(profile, &g, &cfg)?;
        let endurance = match (aging, &profile.nand.endurance) {
            (None, _) => None,
            (Some(a), Some(e)) => Some(e.model(a.cycles_per_erase, a.seed)),
            (Some(_), None) => return Err(DeviceError::NoEndurance { device: profile.id.clone() }),
        };
        let buffer_slots = (profile.write_buffer_bytes(scale) / SLOT_BYTES) as u32;
        let costs = Costs::of(profile, &g, scale);
        let mut members = Vec::new();
        let mut mounted = None;
        let mut lost = Vec::new();
        for m in 0..profile.members as usize {
            let ftl = Device::ftl_of(&g, &cfg, backing, m, &mut mounted, &mut lost, endurance.as_ref())?;
            let cycles_per_erase = aging.map_or(1, |a| a.cycles_per_erase);
            members.push(Member::new(profile, &g, &costs, ftl, buffer_slots, m, cycles_per_erase));
        }
        let mut device = Device {
            profile: profile.clone(),
            format: format.to_string(),
            scale,
            cpu: Pool::new(profile.host_io_cores()),
            host_cores_taken: false,
            interrupts: Interrupts::new(profile.interrupt_vectors(), profile.members, profile.platform.cores()),
            bridge: profile.bridge.as_ref().map(bridge::Bridge::new),
            costs,
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
            age: crate::Age::default(),
        };
        device.members_formatted();
        let lost: Vec<u32> = lost.iter().map(|&(m, lba)| (device.device_offset(m, lba as u64 * SLOT_BYTES) / SLOT_BYTES) as u32).collect();
        let slots_lost = lost.len() as u64;
        if let Some(r) = &mut device.mounted {
            r.lbas_lost = lost;
        }
        device.rebuilds_resume();
        device.smart_open(backing, slots_lost)?;
        Ok(device)
    }

    /// The SMART log of a card with a store: its traffic counters kept
    /// beside the pages absorbed; a card served (not looked at) counts
    /// this power-on and the slots its mount lost, kept at once.
    fn smart_open(&mut self, backing: &Backing, slots_lost: u64) -> Result<(), DeviceError> {
        let kept = self.members[0].pages().and_then(|s| s.kept_counters());
        if let Backing::Inspect { dir, .. } = backing {
            let mut log = crate::CardStore::at(dir).smart()?;
            if let Some(k) = &kept {
                log.absorb(k);
            }
            self.smart = Some(log);
        }
        if let Some(dir) = self.store_dir.clone() {
            let store = crate::CardStore::at(&dir);
            let mut log = store.smart()?;
            if let Some(k) = &kept {
                log.absorb(k);
            }
            log.powered_on(self.mounted.as_ref().is_none_or(|r| r.from_checkpoint), slots_lost);
            store.smart_keep(&log)?;
            self.smart = Some(log);
        }
        Ok(())
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

    /// The share of the card's logical slots that hold data (never written
    /// or trimmed ones do not).
    pub fn mapped_fraction(&self) -> f64 {
        let mapped: u64 = self.members.iter().map(|m| m.ftl.slots_mapped()).sum();
        mapped as f64 / (self.capacity_bytes() / SLOT_BYTES) as f64
    }

    /// Each member's timing told its format's usable slots on the
    /// full-size card.
    fn members_formatted(&mut self) {
        let full_slots = self.full_bytes / self.members.len() as u64 / SLOT_BYTES;
        self.members.iter_mut().for_each(|m| m.timing.formatted(full_slots));
    }

    /// The format's usable capacity on the full-size card, in bytes.
    pub fn full_capacity_bytes(&self) -> u64 {
        self.full_bytes
    }

    /// When everything issued so far, host I/O and background work, has
    /// ended: from then on the card is idle.
    pub fn quiet_at(&self) -> Ns {
        self.members.iter().map(|m| m.timing.quiet_at()).fold(self.cpu.idle_at().max(self.interrupts.idle_at()), Ns::max)
    }

    /// Secure erase: every block of every member erased, the map emptied.
    pub fn secure_erase(&mut self) -> Result<(), DeviceError> {
        for m in &mut self.members {
            m.untimed(|f| f.secure_erase())?;
            m.timing.erased();
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
            return Err(DeviceError::RebuildRunning);
        }
        let (g, cfg, full_bytes) = Device::plan(&self.profile, format, self.scale)?;
        for (i, m) in self.members.iter().enumerate() {
            assert_eq!(m.ftl.media().array.geometry(), &g, "a format keeps the card's geometry");
            m.ftl.reformat_check(cfg.user_slots).map_err(|why| DeviceError::Reformat { format: format.to_string(), member: i, why })?;
        }
        let card = crate::CardFile::new(&self.profile.id, format, self.scale);
        for (i, m) in self.members.iter_mut().enumerate() {
            m.untimed(|f| f.reformat(cfg.user_slots))?;
            m.timing.erased();
            if let Some(store) = m.pages_mut() {
                if purge {
                    store.purge().map_err(|e| DeviceError::Sanitize { member: i, why: e.to_string() })?;
                }
                store.owner_set(&g, &Device::member_owner(&card.owner(), i));
            }
        }
        self.member_bytes = cfg.user_slots * SLOT_BYTES;
        self.full_bytes = full_bytes;
        self.members_formatted();
        self.format = format.into();
        if let Some(dir) = &self.store_dir {
            crate::CardStore::at(dir).formatted(card)?;
        }
        Ok(())
    }

    /// Ages the card: every block has seen `pe_cycles` program/erase
    /// cycles before its erase count, and the data on it now is
    /// `age_days` old (data written later is fresh). Read retries are
    /// drawn from a PRNG seeded with `seed`. No effect on a card without an
    /// error model.
    pub fn wear_set(&mut self, pe_cycles: u32, age_days: f64, seed: u64) {
        self.age = crate::Age { pe_cycles, age_days };
        for (i, m) in self.members.iter_mut().enumerate() {
            let erases_max = (0..m.ftl.layout().superblocks).map(|b| m.ftl.superblock_erase_count(b)).max().unwrap_or(0);
            if let Some(w) = &mut m.wear {
                w.set(pe_cycles, age_days, erases_max, seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            }
        }
    }

    /// Ages a card as its store keeps it (`CardFile::age`): the same card
    /// served, at rest or run gets the same errors for a seed of 1.
    pub fn age_set(&mut self, age: crate::Age) {
        if !age.is_new() {
            self.wear_set(age.pe_cycles, age.age_days, 1);
        }
    }

    /// Runs the invariant checker of every member's FTL: the first
    /// invariant broken, and whose.
    pub fn check(&self) -> Result<(), Inconsistent> {
        for (member, m) in self.members.iter().enumerate() {
            m.ftl.check().map_err(|why| Inconsistent { member, why })?;
        }
        Ok(())
    }
}

impl Device {
    /// Puts every write so far on the media (the writers' open pages padded
    /// and programmed); returns when the last program ends.
    pub(crate) fn members_flush(&mut self, now: Ns) -> Result<Ns, DeviceError> {
        // A protected buffer is already as durable as the flash.
        if self.power_loss_protection() {
            return Ok(now);
        }
        let c = &self.costs;
        let mut done = now;
        for member in &mut self.members {
            // The padding takes buffer slots as data would.
            for _ in 0..member.ftl.user_pad_slots() {
                member.timing.buffer.acquire(now);
            }
            member.apply(c, Start::At(now), HostRead::NONE, |f| f.flush())?;
            done = done.max(member.timing.buffer.pending.max().unwrap_or(now));
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

    /// Whether the card's write buffer survives a power cut.
    pub fn power_loss_protection(&self) -> bool {
        self.members[0].ftl.config().power_loss_protection
    }
}

/// Where the card keeps its store, and its Target for the simulator.
impl Device {
    /// The directory of the card's store, for a card kept in files.
    pub fn store_dir(&self) -> Option<&std::path::Path> {
        self.store_dir.as_deref()
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
        // validity bit, a read has its block's state checked and, where
        // the error model looks at reads, its block's reads counted.
        let ftl = &self.members[member].ftl;
        let first = (off / SLOT_BYTES) as u32;
        let last = ((off + io.len_bytes.max(1) as u64 - 1) / SLOT_BYTES) as u32;
        if stage == 0 {
            ftl.prefetch_entry(first);
            if last != first {
                ftl.prefetch_entry(last);
            }
            return;
        }
        let wear = self.members[member].wear.as_ref().filter(|w| !w.quiet());
        for lba in first..=last.min(first + 15) {
            // A read's place comes back: its block's reads are counted.
            if let (Some(a), Some(w)) = (ftl.prefetch_place(lba, io.write), wear) {
                w.prefetch(a.die, a.superblock);
            }
        }
    }

    fn submit(&mut self, now: Ns, io: &Io) -> Result<Ns, DeviceError> {
        self.io(now, io.offset_bytes, io.len_bytes as u64, io.write, Payload::Timing)
    }

    fn command_slots(&self) -> Option<u32> {
        self.profile.host.command_slots
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
        // I/O starts once its submission's part is done, and its
        // completion's part follows the card and the interrupt's core.
        let slots = (offset + len).div_ceil(SLOT_BYTES) - offset / SLOT_BYTES;
        let way = if write { self.costs.write_passage } else { self.costs.read_passage };
        let cpu_ns = way.cpu_ns + slots * self.costs.cpu_slot_ns;
        let cpu_done = self.cpu.reserve(now, cpu_ns);
        self.host_cores_taken(cpu_done - cpu_ns - now);
        let mut t = cpu_done - way.after_ns;
        if let Some(b) = &mut self.bridge {
            t = b.inbound(t, len, write);
        }
        let done = if self.members.len() == 1 {
            let done = self.members[0].io(&self.costs, t, (offset, len), write, payload)?;
            let done = self.bridge_out(done, len, write);
            self.interrupts.complete(0, done + self.costs.overhead_ns, way.interrupt_ns)
        } else {
            // RAID 0 across members: split at chunk boundaries; each
            // member's part completes on its own vector.
            let chunk = self.stripe_bytes;
            let mut done = t;
            let (mut off, end) = (offset, offset + len);
            while off < end {
                let piece_end = ((off / chunk + 1) * chunk).min(end);
                let (member, member_off) = self.member_of(off);
                let piece = payload.piece(off - offset, piece_end - off);
                let piece_done = self.members[member].io(&self.costs, t, (member_off, piece_end - off), write, piece)?;
                let piece_done = self.bridge_out(piece_done, piece_end - off, write);
                done = done.max(self.interrupts.complete(member, piece_done + self.costs.overhead_ns, way.interrupt_ns));
                off = piece_end;
            }
            done
        };
        debug_assert!(done >= now, "a completion ({done} ns) before its submission ({now} ns)");
        Ok(done + way.after_ns)
    }

    /// A read's data of `len` bytes, out of a member at `done`, through
    /// the bridge where the card has one.
    #[inline]
    fn bridge_out(&mut self, done: Ns, len: u64, write: bool) -> Ns {
        match &mut self.bridge {
            Some(b) if !write => b.outbound(done, len),
            _ => done,
        }
    }

    /// Tells the members whether the host's I/O cores are taken: an I/O
    /// waited `wait` for one, longer than the scheduler's turn (runnable
    /// benchmark threads a core's turn cannot serve), so that a
    /// host-managed driver's GC threads share their cores meanwhile.
    #[inline]
    fn host_cores_taken(&mut self, wait: Ns) {
        let taken = wait > self.costs.cores_taken_wait_ns;
        if taken != self.host_cores_taken {
            self.host_cores_taken = taken;
            for m in &mut self.members {
                m.timing.host_cores_taken = taken;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::Rng;

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
                    let b = &m.timing.buffer;
                    assert!(b.free as u64 + b.pending.len() as u64 * b.slots_per_page as u64 <= b.capacity as u64, "{id}: buffer over its size");
                }
                now += rng.below(20_000);
            }
        }
    }

    /// What `fitted::HOST_READS_ONLY` claims: a number that times host
    /// reads alone changes nothing for host writes. On every catalog card,
    /// writes of every size (partial slots, which read to merge, among
    /// them) past the card's capacity, so that GC runs, complete at the
    /// same times whatever the number.
    #[test]
    fn host_writes_never_meet_the_read_command_rate() {
        for (id, _) in crate::CATALOG {
            let profile = crate::profile_load(id).unwrap();
            let completions = |p: &Profile| {
                let mut d = Device::new(p, &p.default_format, 4096).unwrap();
                let cap = d.capacity_bytes();
                let mut rng = Rng::new(11);
                let (mut now, mut dones) = (0, Vec::new());
                while dones.len() as u64 * 4096 < 3 * cap {
                    let len = if rng.below(4) == 0 { 512 * (1 + rng.below(15)) } else { 4096 * (1 + rng.below(4)) };
                    let io = Io { offset_bytes: rng.below((cap - len) / 512) * 512, len_bytes: len as u32, write: true };
                    let done = d.submit(now, &io).unwrap();
                    dones.push(done);
                    now = now.max(done.saturating_sub(200_000)) + rng.below(2_000);
                }
                (dones, d.members[0].ftl.counters().gc_victims)
            };
            let (base, victims) = completions(&profile);
            assert!(victims > 0, "{id}: GC ran");
            for path in crate::catalog::fitted::HOST_READS_ONLY {
                // Within the profile's bounds where it fits the number.
                let v = profile.number(path).unwrap();
                let (lo, hi) = profile.fit.iter().find(|f| f.path == *path).map_or((v / 3.0, v * 3.0), |f| (f.min, f.max));
                // A value the profile refuses (beyond what another of its
                // numbers allows) is not a card; at least one is tried.
                let others: Vec<_> = [lo, hi].into_iter().filter_map(|moved| profile.with_number(path, moved).ok().map(|p| (moved, p))).collect();
                assert!(!others.is_empty(), "{id}: {path} moved to {lo} and {hi}: neither a card");
                for (moved, other) in others {
                    assert!(completions(&other) == (base.clone(), victims), "{id}: {path} = {moved} moved a write's completion");
                }
            }
        }
    }

    /// At any queue depth, host writes are acknowledged no faster than the
    /// program path takes their pages (after the buffer's first fill):
    /// 2^18 4K writes submitted at once on every catalog card, and on one
    /// acknowledging writes once programmed (write-through).
    #[test]
    fn a_deep_queue_of_writes_never_beats_the_program_path() {
        let mut through = crate::profile_load("p420m").unwrap();
        (through.id, through.ftl.write_cache) = ("p420m-write-through".into(), crate::WriteCache::WriteThrough);
        let profiles = crate::CATALOG.iter().map(|(id, _)| crate::profile_load(id).unwrap()).chain([through]);
        for profile in profiles {
            let id = profile.id.clone();
            let mut d = Device::new(&profile, &profile.default_format, 64).unwrap();
            let cap = d.capacity_bytes();
            let mut rng = Rng::new(7);
            let mut dones: Vec<Ns> = (0..1u64 << 18)
                .map(|_| {
                    let io = Io { offset_bytes: rng.below(cap / 4096) * 4096, len_bytes: 4096, write: true };
                    d.submit(0, &io).unwrap()
                })
                .collect();
            dones.sort_unstable();
            let m = &d.members[0];
            let buffer = d.members.len() as u64 * m.timing.buffer.capacity as u64;
            // Slots a nanosecond through every member's program paths.
            let paths = (d.members.len() * m.timing.program_path.len()) as f64;
            let rate = paths * m.timing.buffer.slots_per_page as f64 / d.costs.program_path_mpage_ns as f64;
            for (i, &t) in dones.iter().enumerate().step_by(997) {
                let allowed = buffer as f64 + rate * t as f64;
                assert!((i + 1) as f64 <= allowed * 1.01, "{id}: {} writes acknowledged by {t} ns; the program paths and buffer allow {allowed:.0}", i + 1);
            }
        }
    }
}
