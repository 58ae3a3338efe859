//! The timing model of one member: its resources (dies, channels, the
//! controllers' command engines, program and read paths, the host link,
//! the write buffer, GC threads) and what each media operation costs on
//! them. It charges a list of media operations from a ready time and never
//! sees the FTL: what a read's bit errors cost is written in the list
//! before it is charged (its retries on the op; a rebuild from the stripe
//! as a read of each other page of the stripe after it).

mod bank;
mod buffer;
mod checkpoint;
mod costs;
mod hold;
mod program;
mod read;
mod sched;
mod through;

pub(super) use buffer::WriteBuffer;
pub(super) use costs::{Costs, HostRead};

use crate::catalog::profile::Profile;
use crate::recorder::{MediaOp, OpKind};
use nand::OpTag;
use sim::{OpTimeline, Pool, PrioTimeline, Timeline};
use units::Ns;

/// When the operations of an FTL call are ready to be charged.
#[derive(Debug, Clone, Copy)]
pub(super) enum Start {
    /// At a time (a write's data in the buffer, a background step).
    At(Ns),
    /// A host read's command, taken at `now` by the controller that owns
    /// the die of the first page read (or, with none, the controller of
    /// `slot`), then its reads; `span`, its slots.
    ReadCommand { now: Ns, slot: u32, span: u32 },
}

/// One member's resources, reserved in issue order.
#[derive(Clone)]
pub(super) struct MemberTiming {
    /// The dies' timelines (`Costs::die_unit`: a bank's, where banks
    /// work in lockstep).
    pub(super) dies: Vec<OpTimeline>,
    pub(super) channels: Vec<PrioTimeline>,
    pub(super) command: Vec<Timeline>,
    pub(super) program_path: Vec<PrioTimeline>,
    pub(super) read_path: Vec<PrioTimeline>,
    pub(super) link_in: Timeline,
    pub(super) link_out: Timeline,
    pub(super) buffer: WriteBuffer,
    /// When the data GC has read so far is out of the read path.
    pub(super) gc_ready: Ns,
    /// Whether the host's I/O cores are taken (the last host I/O waited
    /// longer than a scheduler's turn for one): while they are, a host-managed driver's GC threads
    /// share their cores with the benchmark's threads (`sched`).
    pub(in crate::device) host_cores_taken: bool,
    /// Each die unit's program of write-through host slots (`through`);
    /// empty on a write-back card.
    through: Vec<through::Pending>,
    /// The threads that run GC.
    pub(super) gc_cpu: Pool,
    /// The reads the member's hardware holds outstanding at once, where
    /// the profile limits them (`controller.read_slots`).
    pub(super) read_slots: Option<Pool>,
    /// When the host read being charged took its place among them.
    read_slot_taken: Option<Ns>,
    /// The host read being charged: when its command was taken, and
    /// whether no page holds any of its slots (never written, trimmed).
    pub(super) read_ready: Ns,
    pub(super) read_unmapped_all: bool,
    /// When the data of the partial slots merged into the host page
    /// being filled is read: the page is not programmed before.
    merged_ready: Ns,
    /// When each die's block of each superblock was last erased,
    /// superblock-major (`erased_index`): nothing may be programmed into
    /// the block before (the die timelines alone could slot a program into
    /// a gap ahead of the erase). Blocks erase in their own times, so a
    /// die waits for its own block's erase, not the superblock's slowest.
    pub(super) erased_at: Vec<Ns>,
    dies_n: usize,
    /// Erases issued on each die timeline (which of them take time on a
    /// scaled card).
    die_erases: Vec<u32>,
    /// What banks worked in lockstep have in hand (empty otherwise).
    banks: bank::Banks,
    /// The member's index: which dies these are, for the blocks' own
    /// erase times (`nand::EraseSpread::of`).
    member: u64,
    /// The sequential read streams the controller follows.
    pub(super) streams: super::stream::Streams,
    /// The host's clock at the last I/O: no host read will be ready
    /// before it, so the dies forget what ends earlier.
    pub(super) host_now: Ns,
    /// The map checkpoints (`Costs::checkpoint`).
    checkpoints: checkpoint::MapCheckpoints,
    /// The driver's hold on writes against its groomer, where the
    /// profile sets one.
    hold: Option<hold::WriteHold>,
}

impl MemberTiming {
    pub(super) fn new(profile: &Profile, g: &nand::Geometry, c: &Costs, buffer_slots: u32, member: u32) -> MemberTiming {
        let controllers = profile.controller.count as usize;
        let units = (g.dies() / c.bank_width) as usize;
        MemberTiming {
            dies: vec![OpTimeline::new(c.die_op_typical_ns); units],
            channels: vec![PrioTimeline::default(); g.channels as usize],
            command: vec![Timeline::default(); controllers],
            program_path: vec![PrioTimeline::default(); controllers],
            read_path: vec![PrioTimeline::default(); controllers],
            link_in: Timeline::default(),
            link_out: Timeline::default(),
            buffer: WriteBuffer::new(buffer_slots, g.slots_per_mpage()),
            gc_ready: 0,
            host_cores_taken: false,
            through: if c.write_through { vec![through::Pending::default(); units] } else { Vec::new() },
            gc_cpu: Pool::new(profile.ftl.gc_threads),
            read_slots: profile.controller.read_slots.map(Pool::new),
            read_slot_taken: None,
            read_ready: 0,
            read_unmapped_all: false,
            merged_ready: 0,
            erased_at: vec![0; g.blocks_per_plane as usize * g.dies() as usize],
            dies_n: g.dies() as usize,
            die_erases: vec![0; units],
            banks: if c.bank_width > 1 { bank::Banks::new(units) } else { bank::Banks::default() },
            member: member as u64,
            streams: Default::default(),
            host_now: 0,
            checkpoints: checkpoint::MapCheckpoints::new(c.checkpoint),
            hold: match profile.ftl.write_hold_erase_blocks {
                0 => None,
                // The driver's erase block: a block on each die of a
                // parity stripe (a bank).
                n => {
                    let superblock_slots = g.dies() as u64 * g.pages_per_block as u64 * g.slots_per_mpage() as u64;
                    Some(hold::WriteHold::new(n, (g.dies() / profile.ftl.stripe_width).max(1), c.scaling.pages_div, superblock_slots))
                }
            },
        }
    }

    /// A write's command and its data over the host link: when the data is
    /// in the card (`first` is its first slot).
    #[inline]
    pub(super) fn write_in(&mut self, c: &Costs, now: Ns, first: u32, len: u64) -> Ns {
        let ctl = c.controller_of_slot(first);
        let t = self.command[ctl as usize].reserve(now, c.write_command_ns);
        self.link_in.reserve(t, c.link_ns(len))
    }

    /// When a host write's slot, its data arriving at `ready`, is taken
    /// into the buffer: when a buffer slot is free, and where the driver
    /// holds writes against its groomer (`hold`), once the groomer owes
    /// few enough erase blocks. Without a hold nothing else holds a
    /// write: once GC's work is what the card does, host programs queue
    /// behind it on the dies, channels and program paths, the buffer
    /// fills, and a write waits for the first host page of any die to be
    /// programmed (behind whatever that die was doing: an erase, a
    /// program). That is how a card-managed controller's writes are paced
    /// against its GC, and where their latency spread and maxima come
    /// from. The write's first slot in the buffer also records the
    /// write's `slots` in the map (`write_record`); a slot is
    /// acknowledged once it is in and the write is recorded.
    #[inline(always)]
    pub(super) fn write_admit(&mut self, c: &Costs, ready: Ns, slots: u64, recorded: &mut Option<Ns>) -> Ns {
        let ready = match &mut self.hold {
            Some(h) => h.admit(ready),
            None => ready,
        };
        let placed = self.buffer.acquire(ready);
        let recorded = *recorded.get_or_insert_with(|| self.write_record(c, placed, slots));
        placed.max(recorded)
    }

    /// A read's data over the host link once it is out of the card.
    #[inline]
    pub(super) fn read_out(&mut self, c: &Costs, done: Ns, len: u64) -> Ns {
        self.link_out.reserve(done, c.link_ns(len))
    }

    /// When `start` lets the operations `ops` begin.
    #[inline(always)]
    pub(super) fn start(&mut self, c: &Costs, start: Start, ops: &[MediaOp]) -> Ns {
        match start {
            Start::At(t) => t,
            Start::ReadCommand { now, slot, .. } => {
                let ctl = match ops.first() {
                    Some(op) => c.die_controller[op.die as usize],
                    // A host driver answers a read that no page holds
                    // itself: nothing goes to the card.
                    None if c.gc_on_host && self.read_unmapped_all => {
                        self.read_ready = now;
                        return now;
                    }
                    None if c.controllers == 1 => 0,
                    None => c.controller_of_slot(slot),
                };
                self.read_ready = self.command[ctl as usize].reserve(now, c.read_command_ns);
                self.read_ready
            }
        }
    }

    /// Charges media operations, all ready at `ready`; returns when the last
    /// host read among them has its data out of the read path. `read` is
    /// what the host read among them asks of its pages.
    #[inline]
    pub(super) fn charge(&mut self, c: &Costs, ops: &[MediaOp], ready: Ns, read: HostRead) -> Ns {
        let mut user_done = ready;
        let known = self.host_now.saturating_sub(c.die_op_typical_ns);
        for op in ops {
            if op.tag != OpTag::User || op.kind != OpKind::Read {
                self.dies[c.unit_of(op.die)].forget_before(known);
            }
            match op.kind {
                OpKind::Read if op.stripe_part => {
                    let done = self.stripe_read(c, op, ready);
                    if op.tag == OpTag::Gc {
                        self.gc_ready = self.gc_ready.max(done);
                    } else {
                        user_done = user_done.max(done);
                    }
                }
                OpKind::Read => user_done = user_done.max(self.read(c, op, ready, read)),
                OpKind::Program => self.program(c, op, ready),
                OpKind::Erase => {
                    // A victim is erased once all its valid data is read out,
                    // in its block's own tBERS; on a scaled card one erase of
                    // a die in `pages_div` takes it (`Scaling::erase_takes_time`).
                    let (d, ready) = (op.die as usize, ready.max(self.gc_ready));
                    let end = self.unit_erase(c, op, ready);
                    let i = self.erased_index(d, op.block);
                    let e = &mut self.erased_at[i];
                    *e = (*e).max(end);
                    if let (Some(h), OpTag::Gc) = (&mut self.hold, op.tag) {
                        h.victim(op.block, self.gc_cpu.idle_at());
                    }
                }
            }
        }
        self.read_slot_release(user_done);
        user_done
    }

    /// Where die `die`'s block of superblock `block` is in `erased_at`.
    #[inline(always)]
    fn erased_index(&self, die: usize, block: u32) -> usize {
        self.dies_n * block as usize + die
    }

    /// tBERS of block `block` of die `die`: the block's own, fixed for it.
    #[inline]
    fn block_erase_ns(&self, c: &Costs, die: usize, block: u32) -> Ns {
        c.erase.of(self.member << 48 | (die as u64) << 24 | block as u64)
    }

    /// A partial slot's merge with the rest of the slot, which holds data
    /// (`ready`: its write's data in the card): a GC thread's work of
    /// relocating a slot, ahead of GC's queued work, and the page it goes
    /// into is programmed only once the rest of the slot is read
    /// (`read_done`). A slot never written merges with zeros: no work.
    #[inline(never)]
    pub(super) fn merge(&mut self, c: &Costs, ready: Ns, read_done: Ns) {
        self.checkpoint_due(ready);
        let done = self.gc_cpu.reserve_priority(ready, c.gc_slot_cpu_ns, c.gc_row_cpu_ns);
        self.merged_ready = self.merged_ready.max(read_done).max(done);
    }

    /// A host write's `slots` recorded in the map once its first is in
    /// the buffer (`ready`): each its share of its page's map work, on
    /// the GC threads (a firmware's cores; a host driver's map lock)
    /// ahead of GC's queued work but behind the stripe row a busy thread
    /// is relocating. The write is acknowledged once it is recorded.
    #[inline(always)]
    fn write_record(&mut self, c: &Costs, ready: Ns, slots: u64) -> Ns {
        if c.map_slot_ns == 0 {
            return ready;
        }
        self.checkpoint_due(ready);
        self.gc_cpu.reserve_priority(ready, c.map_slot_ns * slots, c.gc_row_cpu_ns)
    }

    /// The GC threads' map work for `pages` pages a host I/O reads or
    /// programs, ahead of GC's queued work but behind the stripe row a
    /// busy thread is relocating: when the flash command can go.
    #[inline(always)]
    fn map_work(&mut self, c: &Costs, ready: Ns, pages: u64) -> Ns {
        self.checkpoint_due(ready);
        self.gc_cpu.reserve_priority(ready, c.map_page_ns * pages, c.gc_row_cpu_ns)
    }

    /// Takes the map checkpoint due by `ready`, if one is, before the GC
    /// threads' work ready then is booked: it holds the map lock (every GC
    /// thread, and the host I/Os' map work behind it).
    #[inline(always)]
    fn checkpoint_due(&mut self, ready: Ns) {
        if let Some((at, hold)) = self.checkpoints.due(ready) {
            self.gc_cpu.hold_all(at, hold);
        }
    }

    /// Host slots `first..=last` written (`MapCheckpoints::written`).
    #[inline]
    pub(super) fn map_written(&mut self, first: u32, last: u32) {
        self.checkpoints.written(first, last);
    }

    /// The format gives the member `full_slots` usable slots on the
    /// full-size card: the map a checkpoint persists pages of.
    pub(in crate::device) fn formatted(&mut self, full_slots: u64) {
        self.checkpoints.map_of(full_slots);
    }

    /// The card was erased: the groomer owes nothing.
    pub(super) fn erased(&mut self) {
        if let Some(h) = &mut self.hold {
            h.reset();
        }
    }

    /// Die time that lies before `t`, summed over the member's dies (a
    /// bank worked in lockstep keeps all its dies busy).
    pub(super) fn die_busy_by(&self, t: Ns) -> Ns {
        let per_timeline = (self.dies_n / self.dies.len()) as Ns;
        self.dies.iter().map(|d| d.busy_by(t)).sum::<Ns>() * per_timeline
    }

    /// The member's dies.
    pub(super) fn die_count(&self) -> u32 {
        self.dies_n as u32
    }

    /// When everything reserved so far has ended.
    pub(super) fn quiet_at(&self) -> Ns {
        let prio = self.channels.iter().chain(&self.read_path).map(AsRef::as_ref);
        let prio = prio.chain(self.program_path.iter().map(AsRef::as_ref));
        let lines = self.dies.iter().map(AsRef::as_ref).chain(prio).chain(&self.command);
        let t = lines.chain([&self.link_in, &self.link_out]).map(Timeline::idle_at).max().unwrap_or(0);
        t.max(self.gc_ready).max(self.gc_cpu.idle_at()).max(self.erased_at.iter().copied().max().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalog card's profile, its member geometry and costs at `scale`.
    fn card(id: &str, scale: u32) -> (Profile, nand::Geometry, Costs) {
        let profile = crate::profile_load(id).unwrap();
        let g = profile.scaling(scale).geometry(&profile.nand.geometry());
        let c = Costs::of(&profile, &g, scale);
        (profile, g, c)
    }

    /// A host read of one slot on `die`.
    fn host_read(die: u32) -> MediaOp {
        MediaOp { kind: OpKind::Read, tag: OpTag::User, die, block: 1, page: 0, mask: 1, retries: 0, stripe_part: false }
    }

    /// A free slot takes data at once; a full buffer takes it when the
    /// earliest pending page is programmed, which frees a page of slots.
    #[test]
    fn a_full_buffer_waits_for_the_earliest_program() {
        let mut b = WriteBuffer::new(8, 4);
        for _ in 0..8 {
            assert_eq!(b.acquire(10), 10);
        }
        b.release(500);
        b.release(300);
        assert_eq!(b.acquire(20), 300, "the earliest page frees first");
        for _ in 0..3 {
            assert_eq!(b.acquire(30), 300, "the rest of that page's slots are free from its program's end, not before");
        }
        assert_eq!(b.acquire(40), 500);
        assert_eq!(b.acquire(900), 900, "data arriving after the program waits for nothing");
    }

    /// A card-managed controller paces host writes against its GC with
    /// the buffer alone: when the buffer is full, a write waits for a host
    /// page to be programmed, and that program waits for what its die was
    /// doing first. Behind an erase, the write waits out the erase and the
    /// program (the steady 4K write's maximum: its mean, then a tBERS and
    /// a tPROG).
    #[test]
    fn a_write_to_a_full_buffer_waits_out_the_erase_ahead_of_the_program_that_frees_it() {
        let (profile, g, c) = card("p420m", 1024);
        // The slots' map records aside (their wait is not what is pinned).
        let c = Costs { map_slot_ns: 0, ..c };
        let page_slots = g.slots_per_mpage();
        let mut t = MemberTiming::new(&profile, &g, &c, page_slots, 0);
        let erase = MediaOp { kind: OpKind::Erase, tag: OpTag::Gc, die: 0, block: 2, page: 0, mask: 0, retries: 0, stripe_part: false };
        t.charge(&c, &[erase], 0, HostRead::NONE);
        let erased = t.dies[0].idle_at();
        assert!(erased >= profile.nand.timings().erase_ns, "die 0 erases first ({erased} ns)");
        for _ in 0..page_slots {
            assert_eq!(t.write_admit(&c, 0, 1, &mut None), 0, "an empty buffer takes a page of data at once");
        }
        let program = MediaOp { kind: OpKind::Program, tag: OpTag::User, die: 0, block: 3, page: 1, mask: 0, retries: 0, stripe_part: false };
        t.charge(&c, &[program], 0, HostRead::NONE);
        let programmed = t.dies[0].idle_at();
        assert!(programmed >= erased + c.program_ns_of(1), "the host page is programmed after the erase ({programmed} < {erased} + tPROG)");
        let ack = t.write_admit(&c, 1_000, 1, &mut None);
        assert_eq!(ack, programmed, "the next write takes the slot the program frees, when it ends");
    }

    /// The timing model on a bare list of operations: a host read waits
    /// for its die, and its retries hold the die again; a GC program waits
    /// for the GC read before it.
    #[test]
    fn a_list_of_ops_is_charged_without_an_ftl() {
        let (profile, g, c) = card("p420m", 1024);
        let read = |retries| MediaOp { retries, ..host_read(0) };
        let mut t = MemberTiming::new(&profile, &g, &c, 1024, 0);
        let once = t.charge(&c, &[read(0)], 0, HostRead::NONE);
        assert!(once >= c.read_ns, "a read senses first: {once} < tR {}", c.read_ns);
        let mut t = MemberTiming::new(&profile, &g, &c, 1024, 0);
        let twice = t.charge(&c, &[read(1)], 0, HostRead::NONE);
        assert!(twice >= once + c.read_ns, "a retry senses again: {twice} after {once}");
        let mut t = MemberTiming::new(&profile, &g, &c, 1024, 0);
        let gc_read = MediaOp { tag: OpTag::Gc, ..read(0) };
        let program = MediaOp { kind: OpKind::Program, tag: OpTag::Gc, die: 1, block: 2, page: 0, mask: 0, retries: 0, stripe_part: false };
        t.charge(&c, &[gc_read, program], 0, HostRead::NONE);
        assert!(t.dies[1].idle_at() >= t.gc_ready + c.program_ns_of(0), "the GC program follows its read");
    }

    /// MLC pages alternate lower and upper, and their tPROG averages the
    /// datasheet's: a host read that finds its die programming waits for
    /// the program in progress, longer behind an upper (odd) page.
    #[test]
    fn a_read_waits_longer_behind_an_upper_page_program() {
        let (profile, g, c) = card("p420m", 1024);
        let [lower, upper] = c.program_ns;
        assert!(lower < upper && lower + upper == 2 * profile.nand.timings().program_ns, "{lower} / {upper}");
        assert_eq!(c.die_op_typical_ns, upper.max(profile.nand.timings().erase_ns));
        let wait = |page: u32| {
            let mut t = MemberTiming::new(&profile, &g, &c, 1024, 0);
            let program = MediaOp { kind: OpKind::Program, tag: OpTag::Gc, die: 0, block: 2, page, mask: 0, retries: 0, stripe_part: false };
            t.charge(&c, &[program], 0, HostRead::NONE);
            let end = t.dies[0].idle_at();
            let arrives = end - c.program_ns_of(page) + 1_000;
            let read = host_read(0);
            let done = t.charge(&c, &[read], arrives, HostRead::NONE);
            assert!(done >= end + c.read_ns, "page {page}: the read senses after the program ends ({done} < {end} + tR)");
            done - arrives
        };
        assert_eq!(wait(1) - wait(0), upper - lower, "behind an upper page the read waits the pages' difference longer");
        assert_eq!(wait(3), wait(1), "odd pages are upper pages all through the block");
    }

    /// No catalog NAND documents erase suspend: a host read that finds its
    /// die erasing waits for the erase to end, then senses; a read of
    /// another die does not wait. (A scaled card's first erase of a die
    /// takes the whole tBERS.)
    #[test]
    fn a_read_on_an_erasing_die_waits_for_the_erase() {
        for id in ["p420m", "mx6300"] {
            let (profile, g, c) = card(id, 1024);
            let mut t = MemberTiming::new(&profile, &g, &c, 1024, 0);
            let erase = MediaOp { kind: OpKind::Erase, tag: OpTag::Gc, die: 0, block: 2, page: 0, mask: 0, retries: 0, stripe_part: false };
            t.charge(&c, &[erase], 0, HostRead::NONE);
            let end = t.dies[0].idle_at();
            let erase_ns = t.block_erase_ns(&c, 0, 2);
            assert_eq!(end, erase_ns, "{id}: the die erases for the block's tBERS");
            let arrives = erase_ns / 3;
            let done = t.charge(&c, &[host_read(0)], arrives, HostRead::NONE);
            assert!(done >= end + c.read_ns, "{id}: the read senses after the erase ends ({done} < {end} + tR)");
            assert!(done < end + 4 * c.read_ns, "{id}: and goes next ({done} against {end})");
            let other = t.charge(&c, &[host_read(1)], arrives, HostRead::NONE);
            assert!(other < end, "{id}: a read of another die does not wait for the erase ({other} >= {end})");
        }
    }

    /// A scaled card times one superblock erase in `pages_div`, on all its
    /// dies together, as every superblock's erase at full size: each
    /// superblock erase stalls every die or none (staggered, each erase
    /// timed a few of its dies, and what visits the dies one after another
    /// met an erase at every superblock).
    #[test]
    fn a_scaled_superblock_erase_times_all_its_dies_or_none() {
        let (profile, g, c) = card("p420m", 16);
        let n = c.scaling.pages_div;
        assert_eq!(n, 16, "the pages of a block divided by 16");
        let mut t = MemberTiming::new(&profile, &g, &c, 1024, 0);
        let timed: Vec<bool> = (0..2 * n)
            .map(|round| {
                let start = t.quiet_at() + 1;
                let ops: Vec<MediaOp> = (0..g.dies())
                    .map(|die| MediaOp {
                        kind: OpKind::Erase,
                        tag: OpTag::Gc,
                        die,
                        block: round % g.blocks_per_plane,
                        page: 0,
                        mask: 0,
                        retries: 0,
                        stripe_part: false,
                    })
                    .collect();
                t.charge(&c, &ops, start, HostRead::NONE);
                let busy: Vec<bool> = (0..g.dies() as usize).map(|d| t.dies[d].idle_at() > start).collect();
                let n_busy = busy.iter().filter(|&&b| b).count();
                assert!(n_busy == 0 || n_busy == busy.len(), "round {round}: {n_busy} of the superblock's {} dies erase", busy.len());
                busy[0]
            })
            .collect();
        assert_eq!(timed.iter().filter(|&&b| b).count(), 2, "one superblock erase in {n} takes time: {timed:?}");
    }

    /// Blocks erase in their own times (`nand::Timings::erase_ns_of`): a
    /// read on a die erasing one of the slow blocks waits out the slow
    /// erase, and a program into the same superblock on another die, whose
    /// block erased in the typical time, waits only for its own block.
    #[test]
    fn a_slow_block_holds_its_die_and_only_its_die() {
        let (profile, g, c) = card("mx6300", 1024);
        let t = profile.nand.timings();
        let typical = t.erase_ns;
        let probe = MemberTiming::new(&profile, &g, &c, 1024, 0);
        let blocks = g.blocks_per_plane;
        let slow = (0..blocks).find(|&b| probe.block_erase_ns(&c, 0, b) > typical + (t.erase_longest_ns() - typical) / 2);
        let slow = slow.expect("a block of die 0 erases in more than halfway to the maximum");
        assert_eq!(probe.block_erase_ns(&c, 0, slow), probe.block_erase_ns(&c, 0, slow), "a block's time is fixed");
        let other = (1..g.dies()).find(|&d| probe.block_erase_ns(&c, d as usize, slow) == typical).expect("a die whose block erases typically");
        let mut m = MemberTiming::new(&profile, &g, &c, 1024, 0);
        // A read first, so that the die knows what it runs from then on
        // (the first read after a spell without reads knows only a bound).
        let start = m.charge(&c, &[host_read(0)], 0, HostRead::NONE);
        let erase = |die| MediaOp { kind: OpKind::Erase, tag: OpTag::Gc, die, block: slow, page: 0, mask: 0, retries: 0, stripe_part: false };
        m.charge(&c, &[erase(0), erase(other)], start, HostRead::NONE);
        let slow_end = m.dies[0].idle_at();
        assert_eq!(slow_end, start + probe.block_erase_ns(&c, 0, slow));
        assert!(slow_end > typical, "the slow block erases past the typical tBERS");
        let done = m.charge(&c, &[host_read(0)], start + typical, HostRead::NONE);
        assert!(done >= slow_end + c.read_ns, "a read on the slow die waits for its erase ({done} < {slow_end})");
        let program = MediaOp { kind: OpKind::Program, tag: OpTag::Gc, die: other, block: slow, page: 0, mask: 0, retries: 0, stripe_part: false };
        m.charge(&c, &[program], start, HostRead::NONE);
        let programmed = m.dies[other as usize].idle_at();
        assert!(programmed < slow_end, "die {other}'s program waits for its own block's erase, not die 0's ({programmed} >= {slow_end})");
    }

    /// A GC thread relocates a stripe row at a time: a host read whose map
    /// work finds every GC thread busy waits for the first of them to end
    /// its row, met at a random point (on average `row / (threads + 1)`),
    /// not a page of it.
    #[test]
    fn a_host_read_waits_for_the_gc_row_in_progress() {
        for id in ["flashmax2", "p420m"] {
            let (profile, g, c) = card(id, 1024);
            let data_members = profile.ftl.stripe_width as u64 - 1;
            assert_eq!(c.gc_row_cpu_ns, data_members * c.gc_mpage_cpu_ns, "{id}: a row is the stripe's data pages");
            let read = host_read(0);
            let arrives = 1_000_000;
            // Reads 200 us apart (each alone on its die), behind GC
            // threads busy for `backlog` from 0: each one's latency.
            let latencies = |backlog: Ns, n: u64| {
                let mut t = MemberTiming::new(&profile, &g, &c, 1024, 0);
                for _ in 0..profile.ftl.gc_threads {
                    t.gc_cpu.reserve(0, backlog);
                }
                (0..n).map(|i| arrives + i * 200_000).map(|at| t.charge(&c, &[read], at, HostRead::NONE) - at).collect::<Vec<Ns>>()
            };
            let latency = |backlog: Ns| latencies(backlog, 1)[0];
            let threads = profile.ftl.gc_threads as u64;
            let (idle, behind) = (latencies(0, 2_000), latencies(units::NS_PER_SEC, 2_000));
            let waits: Vec<Ns> = behind.iter().zip(&idle).map(|(b, i)| b - i).collect();
            let row = c.gc_row_cpu_ns;
            assert!(waits.iter().all(|&w| w < row), "{id}: no read waits a whole row");
            let mean = waits.iter().sum::<Ns>() as f64 / waits.len() as f64;
            let expected = row as f64 / (threads + 1) as f64;
            assert!(
                (mean / expected - 1.0).abs() < 0.1,
                "{id}: behind a GC backlog a read waits {mean:.0} ns on average, not row / (threads + 1) = {expected:.0}"
            );
            assert!(waits.iter().max() > waits.iter().min(), "{id}: where a row is met varies");
            assert_eq!(latency(arrives + 1_000) - latency(0), 1_000, "{id}: a backlog shorter than that is waited out");
        }
    }

    /// Commands no die places are spread over the controllers whatever
    /// their alignment: the first slots of 8 KiB and 64 KiB I/Os (every
    /// 2nd and 16th slot) reach both controllers of a two-controller card
    /// about equally.
    #[test]
    fn aligned_commands_reach_every_controller() {
        let (_, _, c) = card("flashmax2", 64);
        assert_eq!(c.controllers, 2);
        for step in [1u32, 2, 16, 128] {
            let on_0 = (0..10_000u32).filter(|i| c.controller_of_slot(i * step) == 0).count();
            assert!((4_500..=5_500).contains(&on_0), "I/Os every {step} slots: {on_0} of 10,000 on controller 0");
        }
    }
}
