//! What a card shows of itself: its counters, each resource's busy time,
//! its buffer, its health and its SMART-like log.

use super::timing::MemberTiming;
use super::Device;
use crate::health::Health;
use crate::SmartLog;
use nand::wear::ErrorCounters;
use nand::Nand;
use serde::Serialize;
use sim::Timeline;
use units::Ns;

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

impl Device {
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
        self.busy_by(Ns::MAX)
    }

    /// As [`Device::busy`], the service time that lies before `t` only
    /// (work booked past it left out): a phase's utilisation is the
    /// difference between its end and its start.
    pub fn busy_by(&self, t: Ns) -> Vec<ResourceBusy> {
        let ms = &self.members;
        fn tl<T: AsRef<Timeline>>(ms: &[super::Member], t: Ns, f: impl Fn(&MemberTiming) -> &[T]) -> (u32, Ns) {
            ms.iter().flat_map(|m| f(&m.timing).iter()).fold((0, 0), |(n, b), x| (n + 1, b + x.as_ref().busy_by(t)))
        }
        let row = |name: &'static str, (servers, busy_ns): (u32, Ns)| ResourceBusy { name, servers, busy_ns };
        let gc = ms.iter().fold((0, 0), |(n, b), m| (n + m.timing.gc_cpu.servers(), b + m.timing.gc_cpu.busy_by(t)));
        // The host's cores: those of the I/O paths, and those a host-managed
        // card's GC threads hold (their busy time is the GC threads').
        let host_gc = if self.profile.host_gc_threads() > 0 { gc } else { (0, 0) };
        let mut rows = vec![
            row("host CPU", (self.cpu.servers() + host_gc.0, self.cpu.busy_by(t) + host_gc.1)),
            row("GC threads", gc),
            row("interrupt cores", self.interrupts.busy_by(t)),
            row("controller commands", tl(ms, t, |m| &m.command)),
            row("controller program path", tl(ms, t, |m| &m.program_path)),
            row("controller read path", tl(ms, t, |m| &m.read_path)),
            row("host link in", tl(ms, t, |m| std::slice::from_ref(&m.link_in))),
            row("host link out", tl(ms, t, |m| std::slice::from_ref(&m.link_out))),
            row("channels", tl(ms, t, |m| &m.channels)),
            row("dies", (self.dies(), self.die_busy_by(t))),
        ];
        // Where the hardware holds few reads outstanding, their places are a
        // resource of their own (held from a read's issue to its data out).
        let slots = ms.iter().filter_map(|m| m.timing.read_slots.as_ref());
        let (n, busy) = slots.fold((0, 0), |(n, b), p| (n + p.servers(), b + p.busy_by(t)));
        if n > 0 {
            rows.push(row("hardware read slots", (n, busy)));
        }
        if let Some(b) = &self.bridge {
            let (commands, data) = b.busy_by(t);
            rows.extend([row("bridge commands", (1, commands)), row("bridge data path", (1, data))]);
        }
        rows
    }

    /// When the first host core of the I/O paths is free: a host I/O
    /// submitted then takes it at once (a host-managed card's GC threads
    /// hold cores of their own, `Profile::host_gc_threads`).
    pub fn host_io_free_at(&self) -> Ns {
        self.cpu.free_first()
    }

    /// The share of the write buffers holding data not yet programmed at
    /// `now` (pages whose program ends by then count as free).
    pub fn buffer_fill(&self, now: Ns) -> f64 {
        let (mut held, mut capacity) = (0u64, 0u64);
        for m in &self.members {
            held += m.timing.buffer.held_at(now);
            capacity += m.timing.buffer.capacity as u64;
        }
        held as f64 / capacity.max(1) as f64
    }

    /// Die time that lies before `t`, summed over every die (see
    /// [`Device::busy_by`]).
    pub fn die_busy_by(&self, t: Ns) -> u64 {
        self.members.iter().map(|m| m.timing.die_busy_by(t)).sum()
    }

    /// Dies of the whole card.
    pub fn dies(&self) -> u32 {
        self.members.iter().map(|m| m.timing.die_count()).sum()
    }

    /// The SMART-like log of a card kept in files (`None` otherwise): what
    /// its store held at power-on plus what happened since.
    pub fn smart(&self) -> Option<SmartLog> {
        let log = self.smart.as_ref()?;
        let (mut read, mut written, mut nand, mut errors) = (0, 0, 0, 0);
        // The traffic alone, not `counters`: this runs after every request,
        // and the erase counts' spread scans every block.
        for m in &self.members {
            let (f, mc) = (m.ftl.counters(), m.ftl.media().counters());
            read += f.host_slots_read;
            written += f.host_slots_written;
            nand += (mc.mpage_programs_user + mc.mpage_programs_gc + mc.mpage_programs_parity) * self.costs.spm as u64;
            errors += m.wear.as_ref().map_or(0, |w| w.counters.reads_uncorrectable) + m.ftl.fault_counters().lbas_lost;
        }
        debug_assert_eq!(
            {
                let c = self.counters();
                (c.host_slots_read, c.host_slots_written, c.nand_slots_all(), c.read_errors.reads_uncorrectable + c.faults.lbas_lost)
            },
            (read, written, nand, errors),
            "the SMART log's traffic is the counters'"
        );
        Some(log.with(read, written, nand, errors))
    }

    /// Keeps the SMART log's traffic counters beside the pages (a card
    /// kept in files; nothing otherwise): done after every request of the
    /// block API and every background step, so that a cut loses none.
    pub(crate) fn smart_keep(&mut self) {
        let Some(log) = self.smart() else { return };
        if let Some(store) = self.members[0].pages_mut() {
            store.kept_counters_set(&log.kept());
        }
    }

    /// Why the card refuses writes, if it does.
    pub fn read_only(&self) -> Option<&str> {
        self.members.iter().find_map(|m| m.ftl.read_only())
    }

    /// Whether the card is read-only because its store's disk had no room.
    pub fn store_full(&self) -> bool {
        self.members.iter().any(|m| m.ftl.store_full())
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
        // An aged card's blocks saw its cycles before their erase counts.
        let before = self.age.pe_cycles;
        let mean = sum as f64 / blocks.max(1) as f64 + before as f64;
        Health {
            pe_cycles_mean: mean,
            pe_cycles_min: lo.min(hi).saturating_add(before),
            pe_cycles_max: hi.saturating_add(before),
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
