//! Device profiles: one TOML file a device, embedded in the binary from
//! `devices/`, or a user's own file. Every field is checked against its
//! physical range and an error names the field and the range.

use super::host::Host;
pub use super::validate::ProfileError;
pub use crate::catalog::published::Published;
use ftl::GcPolicy;
use nand::{CellType, Geometry, Timings};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The built-in card this one is built on, where it shares its parts
    /// (`catalog::base`): what the file does not set is the base's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// Short name used on the command line.
    pub id: String,
    pub name: String,
    pub interface: String,
    /// Who runs the FTL: the host driver ("host") or the card ("card").
    pub management: Management,
    /// Independent devices on the card that the host stripes (RAID 0) into
    /// one volume; 1 for a card presenting one pool.
    pub members: u32,
    /// The host's RAID 0 chunk across members, in KiB.
    #[serde(default)]
    pub member_stripe_kib: u32,
    pub nand: NandProfile,
    pub controller: ControllerProfile,
    /// The card's driver on the host: its CPU time and command slots.
    pub host: HostProfile,
    pub ftl: FtlProfile,
    /// Formats by name: usable capacity of the whole card in bytes.
    pub formats: BTreeMap<String, u64>,
    pub default_format: String,
    /// How long the reviewers preconditioned the full-size card, in hours,
    /// where their review says (a scaled card runs the same drive writes).
    #[serde(default)]
    pub precondition_hours: Option<f64>,
    /// Figures published for the card: reviewers' measurements (the
    /// calibration targets) and vendor ratings, with their conditions.
    #[serde(default)]
    pub published: Vec<Published>,
    /// The card's power draw, where its data sheet gives it.
    #[serde(default)]
    pub power: Option<PowerProfile>,
    /// A bridge every member's I/O passes (a PCIe-to-SAS controller in
    /// front of several SSDs), where the card has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bridge: Option<BridgeProfile>,
    /// The numbers fitted to published figures, each with its physical
    /// bounds (`flashlab fit` searches them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fit: Vec<FitParam>,
    /// The host the card runs on (`hosts/`): not part of the card's file,
    /// the reviewers' Linux server unless set (`on_host`).
    #[serde(skip)]
    pub platform: Host,
}

/// A profile's `[[fit]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitParam {
    /// The number's path in the profile, its TOML keys joined by dots.
    pub path: String,
    /// The least and the most it may physically be (both above zero: a
    /// fit searches their ratio).
    pub min: f64,
    pub max: f64,
    /// Why these bounds (the physics, or the source, that set them).
    pub why: String,
}

/// A profile's `[power]`: the data sheet's idle and maximum draw. The
/// model spends the difference in proportion to the dies' busy time (an
/// operation's energy taken as its die time at the maximum's share: the
/// data sheets give no per-operation energies).
/// A bridge between the host and the card's members (an LSI SAS2008
/// PCIe-to-SAS controller in front of four SSDs): every I/O's command
/// passes its processor, one at a time, and its data its DMA path; a
/// read's data after the member has it, a write's before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BridgeProfile {
    /// Commands the bridge's processor passes a second.
    pub commands_per_sec: u64,
    /// Bytes its data path moves a second, both ways together.
    pub bytes_per_sec: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerProfile {
    pub idle_watts: f64,
    pub max_watts: f64,
}

impl PowerProfile {
    /// The draw with the dies busy a share `busy` (0..=1) of the time.
    pub fn watts(&self, busy: f64) -> f64 {
        self.idle_watts + (self.max_watts - self.idle_watts) * busy.clamp(0.0, 1.0)
    }
}

/// When a card acknowledges a host write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteCache {
    /// Once the write's data is in the card's buffer.
    #[default]
    WriteBack,
    /// Once its data is programmed: each write's slots go to the die of
    /// the host's open page at once, writes waiting for that die's next
    /// program sharing it (up to a page's slots).
    WriteThrough,
}

impl WriteCache {
    fn is_back(&self) -> bool {
        *self == WriteCache::WriteBack
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Management {
    Host,
    Card,
}

/// One member device's NAND: cell type, geometry and timings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandProfile {
    pub cell: CellType,
    /// User bytes of one ECC codeword: the least a read senses, moves over
    /// the channel and decodes. A read of less than a 4 KiB slot moves the
    /// codewords it touches; a slot or more moves whole slots.
    pub codeword_bytes: u32,
    /// Raw bit errors, ECC and read retry (see `errors`); without it reads
    /// never fail.
    #[serde(default)]
    pub errors: Option<nand::errors::ErrorsProfile>,
    /// Rated cycles, bad-block allowance and the card's rated endurance
    /// (see `health`); without it blocks never wear out.
    #[serde(default)]
    pub endurance: Option<crate::health::EnduranceProfile>,
    pub geometry: Geometry,
    pub timings: Timings,
}

impl NandProfile {
    pub fn geometry(&self) -> Geometry {
        self.geometry.clone()
    }
    pub fn timings(&self) -> Timings {
        self.timings.clone()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerProfile {
    /// Controllers in one member; each owns an equal share of the channels.
    pub count: u32,
    /// Host read commands one controller processes per second.
    pub read_commands_per_sec: u64,
    /// Host write commands one controller processes per second (a write
    /// lands in the buffer and costs the controller less than a read).
    pub write_commands_per_sec: u64,
    /// Bytes per second one controller's program data path (ECC encode,
    /// parity, NAND write DMA) moves to the channels. Host data and its
    /// parity pass through it; GC data too when the host runs the FTL (the
    /// relocated data comes back from the host), not when the card does.
    pub program_path_bytes_per_sec: u64,
    /// Bytes per second one controller's read data path (ECC decode, DMA
    /// to the host) moves from the channels: host reads and GC reads.
    pub read_path_bytes_per_sec: u64,
    /// Host link bandwidth of one member, each direction, bytes per second.
    pub link_bytes_per_sec: u64,
    /// Fixed time an I/O spends outside any queue (doorbell, completion,
    /// interrupt): it sets the latency at queue depth 1, not the throughput.
    pub io_overhead_ns: u64,
    /// The most reads a member's hardware holds outstanding at once, host
    /// reads and GC's alike (a read holds its place from its command to
    /// its data out); more wait for a place. Absent: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_slots: Option<u32>,
    /// Whether a host read goes ahead of the operations queued on its die
    /// (it still waits for the one in progress: no suspend). `false`: the
    /// controller runs each die's operations in the order it was given
    /// them, and a read waits for the programs and erases queued before
    /// it. Absent: true.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub read_priority: bool,
    /// Whether the controller works each bank in lockstep: a parity
    /// stripe's dies (one on each channel, `ftl.stripe_width` equal to
    /// `nand.channels`) sense, program and erase together as one wide die,
    /// a row programmed once its stripe is whole, and the bank's channels
    /// move its data together as one wide bus. Absent: false (each die on
    /// its own).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lockstep_banks: bool,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostProfile {
    /// Host CPU time of one I/O in the driver (flash management on the host
    /// costs host CPU; a card-managed device costs only the block layer).
    pub cpu_ns_per_io: u64,
    /// Host CPU time in the driver for each 4 KiB slot of an I/O (map
    /// lookups or updates, DMA descriptors).
    pub cpu_ns_per_slot: u64,
    /// The most read and write commands the driver keeps at the card at
    /// once (its tags, the card's command slots); more wait in the host,
    /// their wait in their latency. Absent: no limit (a driver that takes
    /// every request and queues it itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_slots: Option<u32>,
    /// The interrupt vectors the driver asks for (each taken by one host
    /// core, which serves its completions one at a time). Absent: one a
    /// member (a single MSI per device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt_vectors: Option<u32>,
    /// Of the driver's time for a read (`cpu_ns_per_io`), the part it
    /// spends once the read completes (a host-managed driver checks what
    /// it read, the page's header against its map, and ends the request):
    /// on the interrupt's core or the issuer's, as the host runs a
    /// driver's completion work (`[stack] completion_core` of the host).
    #[serde(default)]
    pub read_completion_ns: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlProfile {
    /// Dies per parity stripe including the parity die (8 for 7+1).
    pub stripe_width: u32,
    pub reserve_superblocks: u32,
    pub gc_policy: GcPolicy,
    /// The power-loss-protected write buffer of one member, bytes.
    pub write_buffer_bytes: u64,
    /// Whether the write buffer survives a power cut (capacitors hold the
    /// card up until it is on the flash): then every acknowledged write
    /// is durable; without, only what a flush or a FUA write covered.
    /// Absent: false, the weaker promise.
    #[serde(default)]
    pub power_loss_protection: bool,
    /// When a host write is acknowledged: once in the card's buffer
    /// (write-back, posted) or once programmed (write-through, the
    /// P320h's "nonposted" writes). Absent: write-back.
    #[serde(default, skip_serializing_if = "WriteCache::is_back")]
    pub write_cache: WriteCache,
    /// Static wear leveling: how far (in erase cycles) superblocks' wear
    /// may spread before the coldest data is moved. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wear_spread_max: Option<u32>,
    /// Threads that run garbage collection (host threads for a host-managed
    /// card, firmware cores for a card-managed one).
    pub gc_threads: u32,
    /// Processor time one GC thread spends to relocate one 4 KiB slot
    /// (choosing it, building the read and the write, completing both).
    pub gc_ns_per_slot: u64,
    /// Time the same threads spend on each page a host I/O reads or
    /// programs: its map lookups or updates and its flash command. Host
    /// I/O takes it ahead of GC's queued work (GC waits), so reads and
    /// writes use what GC would have: on a card-managed card the firmware
    /// cores do both; on a host-managed one the driver's GC thread and
    /// host I/O take the same map lock. A read takes it before its flash
    /// command; a write records each slot (its share of the page's) once
    /// the slot is in the buffer, and is acknowledged after. Absent: 0,
    /// host I/O costs GC nothing.
    #[serde(default)]
    pub map_ns_per_page: u64,
    /// Time the same threads spend on each 4 KiB slot a host writes, on
    /// top of its page's map work, taken when its page is programmed: a
    /// card's firmware moving the slot from its buffer into a program
    /// (the buffer's bookkeeping, the slot's map entry, its share of the
    /// stripe's parity). It does not delay the write's acknowledgement,
    /// but the buffer waits for it, and host reads and GC share it.
    /// Absent: 0.
    #[serde(default)]
    pub write_ns_per_slot: u64,
    /// A map checkpoint: every `map_checkpoint_interval_ns` of virtual
    /// time the FTL persists the map pages (512 entries of 8 bytes) host
    /// writes changed since the last one, holding the map lock meanwhile:
    /// every GC thread and every host I/O's map work waits for it (with
    /// `map_ns_per_page`, the lock's work). Time-based, so a scaled card
    /// meets as many checkpoints a second as the full-size one. Absent:
    /// none (with `map_checkpoint_ns_per_page`, both or neither).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map_checkpoint_interval_ns: Option<u64>,
    /// The lock's hold per map page changed since the last checkpoint
    /// (gathering its entries and writing it out).
    #[serde(default)]
    pub map_checkpoint_ns_per_page: u64,
    /// A host driver's hold on writes (host-managed cards): the erase
    /// blocks its groomer may fall behind the host's writes (the blocks
    /// between where grooming starts and the reserve at which the driver
    /// holds writes) before host writes are held, each until the groomer
    /// frees the next whole block. Host pages then go to the card as they
    /// fill, ahead of the groomer's pages still to be relocated, into
    /// blocks the reserve holds erased. Absent: 0, no hold: host writes
    /// are paced by the buffer, behind the groomer's pages.
    #[serde(default)]
    pub write_hold_erase_blocks: u32,
    /// Background GC: superblocks beyond the level at which GC paced by
    /// host writes rests (the reserve, one more it keeps and one it may
    /// free going from victim to victim) that the GC threads free while
    /// they have nothing else to do. GC paced by host writes holds the
    /// pool just above the reserve; a GC thread with time to spare goes
    /// on collecting until this many more are free, so after a heavy write phase GC
    /// works off its backlog while a lighter load runs. Absent: 0, GC runs
    /// only as host writes pace it.
    #[serde(default)]
    pub gc_background_superblocks: u32,
    /// The share of the GC threads' time that background GC takes while
    /// host I/O keeps every thread busy (the firmware's scheduler gives its
    /// background task a time slice among the host commands, which yield
    /// it): from 0 to 0.9, with `gc_background_superblocks` set. Such a
    /// firmware runs background GC only while the host is not writing (no
    /// page of host data waits in the buffer for its program; under writes
    /// GC is paced by them). Absent: 0, background GC runs only on threads
    /// that have nothing else to do, writes or not.
    #[serde(default)]
    pub gc_background_share: f64,
    /// The rate at which the background rebuild after a die failure moves
    /// data, bytes per second (Linux md's `speed_limit_max` in spirit:
    /// host I/O goes on meanwhile). Bounded by what GC threads and dies
    /// can do besides.
    pub rebuild_bytes_per_sec: u64,
}

impl Profile {
    /// The profile's version: the CRC-32 of its content written as TOML
    /// (every figure, not the comments of its file), eight hex digits.
    pub fn crc(&self) -> String {
        let text = toml::to_string(self).expect("a profile serialises");
        format!("{:08x}", crc32fast::hash(text.as_bytes()))
    }

    /// A profile's text (of `file`) read and checked; a card built on a
    /// base (`base = "ID"`) over that built-in card's profile
    /// (`catalog::base`).
    pub fn parse(file: &str, text: &str) -> Result<Profile, ProfileError> {
        let problem = |msg: String| ProfileError::Parse { file: file.to_string(), msg };
        let p: Profile = match super::base::base_of(text) {
            Some(base) => {
                Value::Table(super::base::on_base(file, text, &base, super::CATALOG)?).try_into().map_err(|e: toml::de::Error| problem(e.to_string()))?
            }
            None => toml::from_str(text).map_err(|e| problem(moved_to_host(text).unwrap_or_else(|| e.to_string())))?,
        };
        p.validate()?;
        Ok(p)
    }

    /// The card on another host (`hosts/`), checked again (a host-managed
    /// card's GC threads need cores of their own on it).
    pub fn on_host(&self, host: &Host) -> Result<Profile, ProfileError> {
        let p = Profile { platform: host.clone(), ..self.clone() };
        p.validate()?;
        Ok(p)
    }

    /// The named formats, the default first.
    pub fn format_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.formats.keys().cloned().collect();
        names.sort_by_key(|n| (*n != self.default_format, n.clone()));
        names
    }

    /// The chunk of RAID 0 over several members, in bytes.
    /// The host cores a host-managed card's GC threads hold, one a thread
    /// of each member (none on a card-managed one): a GC thread that is
    /// busy most of the time keeps its core, and the I/O paths run on the
    /// others.
    pub fn host_gc_threads(&self) -> u32 {
        match self.management {
            Management::Host => self.ftl.gc_threads * self.members,
            Management::Card => 0,
        }
    }

    /// The driver's interrupt vectors: as many as it asks for, one a
    /// member when it does not say.
    pub fn interrupt_vectors(&self) -> u32 {
        self.host.interrupt_vectors.unwrap_or(self.members)
    }

    /// The host cores left for the I/O paths (the OS's and the driver's).
    pub fn host_io_cores(&self) -> u32 {
        debug_assert!(self.platform.cores() > self.host_gc_threads(), "validated: GC threads leave host cores for I/O");
        self.platform.cores() - self.host_gc_threads()
    }

    pub fn member_stripe_bytes(&self) -> u64 {
        self.member_stripe_kib as u64 * 1024
    }

    /// The largest usable capacity of the card, in bytes.
    pub fn usable_bytes_max(&self) -> u64 {
        let layout = ftl::Layout::new(&self.nand.geometry(), self.ftl.stripe_width);
        ftl::Ftl::<nand::Array>::user_slots_max(&layout, self.ftl.reserve_superblocks) * units::SLOT_BYTES * self.members as u64
    }

    /// How `scale` shrinks this card (see [`crate::scale`]).
    pub fn scaling(&self, scale: u32) -> crate::Scaling {
        crate::Scaling::new(&self.nand.geometry, scale.max(1))
    }

    /// The least write buffer the writers need: two stripes of pages in
    /// flight (the profile's floor, and a scaled buffer's).
    pub fn write_buffer_floor(&self) -> u64 {
        2 * self.nand.geometry().mpage_bytes() * self.ftl.stripe_width as u64
    }

    /// A member's write buffer at `scale` (see [`crate::Scaling::buffer_bytes`]).
    pub fn write_buffer_bytes(&self, scale: u32) -> u64 {
        let g = self.nand.geometry();
        self.scaling(scale).buffer_bytes(self.ftl.write_buffer_bytes, g.mpage_bytes(), g.dies(), self.write_buffer_floor())
    }

    pub fn raw_bytes(&self) -> u64 {
        self.nand.geometry().raw_bytes() * self.members as u64
    }
}

/// Where a profile of an earlier layout still sets the host's own values
/// in its `[host]` section: which, and where they are now.
fn moved_to_host(text: &str) -> Option<String> {
    let table: toml::Table = text.parse().ok()?;
    let host = table.get("host")?.as_table()?;
    let moved: Vec<&str> = ["cpu_cores", "os_submit_ns", "os_complete_ns"].into_iter().filter(|k| host.contains_key(*k)).collect();
    (!moved.is_empty()).then(|| {
        format!(
            "host.{} belong to the host the card runs on, not to the card: remove them (they are the host file's cpu.sockets x cpu.cores_per_socket, stack.submit_ns and stack.complete_ns; see hosts/linux-centos6.toml)",
            moved.join(", host.")
        )
    })
}
