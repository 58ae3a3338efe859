//! The timing model of one member: its resources (dies, channels, the
//! controllers' command engines, program and read paths, the host link,
//! the write buffer, GC threads) and what each media operation costs on
//! them. It charges a list of media operations from a ready time and never
//! sees the FTL: what a read's bit errors cost is written in the list
//! before it is charged (its retries on the op; a rebuild from the stripe
//! as a read of each other page of the stripe after it).

use crate::profile::{Management, Profile};
use crate::recorder::{MediaOp, OpKind};
use nand::OpTag;
use sim::{MinHeap, Pool, Timeline};
use units::{per_op_ns, transfer_ns, Ns, SLOT_BYTES};

/// Slots of the write buffer, and when programmed pages free theirs. Every
/// page frees the same number of slots (one multi-plane page's), so only the
/// times are kept.
pub(super) struct WriteBuffer {
    pub(super) free: u32,
    pub(super) slots_per_page: u32,
    pub(super) pending: MinHeap<Ns>,
    /// Slots in all: free ones, those of pending pages, and those of the
    /// pages being filled never exceed it.
    pub(super) capacity: u32,
    /// When the free slots became free: the program end of the page that
    /// freed them (slots are taken only when none is free, so the free
    /// ones are all that page's), 0 for the empty buffer's.
    free_since: Ns,
}

impl WriteBuffer {
    pub(super) fn new(slots: u32, slots_per_page: u32) -> WriteBuffer {
        WriteBuffer { free: slots, capacity: slots, slots_per_page, pending: MinHeap::with_capacity((slots / slots_per_page) as usize + 1), free_since: 0 }
    }

    /// A slot for data arriving at `ready`: the time it can be accepted,
    /// never before the slot is free. The buffer thus passes writes no
    /// faster than their pages are programmed, at any queue depth.
    #[inline]
    pub(super) fn acquire(&mut self, ready: Ns) -> Ns {
        if self.free == 0 {
            self.free_since = self.pending.pop().expect("write buffer: slots are either free or pending a program");
            self.free = self.slots_per_page;
        }
        self.free -= 1;
        ready.max(self.free_since)
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

    /// Slots holding data not yet programmed at `now` (pages whose program
    /// ends by then count as free).
    pub(super) fn held_at(&self, now: Ns) -> u64 {
        let freed = self.pending.count_le(now) as u64 * self.slots_per_page as u64;
        (self.capacity as u64).saturating_sub(self.free as u64 + freed)
    }
}

/// Service times, precomputed from the profile.
#[derive(Debug, Clone)]
pub(super) struct Costs {
    pub(super) read_ns: Ns,
    /// tPROG of a block's even (lower) and odd (upper) pages
    /// (`program_ns_of`).
    program_ns: [Ns; 2],
    /// The full-size tBERS: on a scaled card one erase in `pages_div`.
    erase_ns: Ns,
    scaling: crate::Scaling,
    slot_transfer_ns: Ns,
    mpage_transfer_ns: Ns,
    pub(super) program_path_mpage_ns: Ns,
    read_path_bytes_per_sec: u64,
    read_path_slot_ns: Ns,
    /// The longest operation a host read may find in progress on a die, a
    /// channel and a read path (none is suspended).
    die_op_max_ns: Ns,
    read_path_mpage_ns: Ns,
    /// One ECC codeword over the channel.
    pub(super) codeword_bytes: u64,
    codeword_transfer_ns: Ns,
    read_command_ns: Ns,
    write_command_ns: Ns,
    /// Whether GC data passes the program path (host-managed cards).
    gc_through_program_path: bool,
    link_bytes_per_sec: u64,
    /// A 4 KiB transfer on the host link.
    link_slot_ns: Ns,
    pub(super) overhead_ns: Ns,
    /// Host CPU of an I/O at submission: the OS's submission and
    /// completion paths and the driver's per-I/O time (its per-slot time
    /// is added per I/O).
    pub(super) cpu_ns: Ns,
    pub(super) cpu_slot_ns: Ns,
    /// Latency of the completion path after the device is done.
    pub(super) complete_ns: Ns,
    gc_mpage_cpu_ns: Ns,
    /// A GC thread's time for a stripe row (the data pages whose parity
    /// it writes together), which it relocates as one piece of work: what
    /// a host I/O's map work waits for on a busy thread.
    gc_row_cpu_ns: Ns,
    /// How far ahead background GC issues its work: a victim page's read
    /// behind the longest die operation, and another, so that a GC
    /// thread does not wait for the data of the page it moves next.
    pub(super) gc_read_ahead_ns: Ns,
    /// The GC threads' time for each page a host I/O reads or programs.
    map_page_ns: Ns,
    /// Whether GC threads run on the host's cores (host-managed cards).
    gc_on_host: bool,
    /// The channel and the controller of each die (fixed; tables save a
    /// division per operation).
    die_channel: Vec<u32>,
    die_controller: Vec<u32>,
    controllers: u32,
    pub(super) spm: u32,
    /// The slots of a multi-plane page on each plane (see `stream`).
    plane_masks: Vec<u32>,
    /// Whether each slot lies on one plane (plane pages of 4 KiB or more).
    slot_in_one_plane: bool,
}

impl Costs {
    /// Every cost the timing model charges, from the profile at a scale.
    pub(super) fn of(profile: &Profile, g: &nand::Geometry, scale: u32) -> Costs {
        let (c, t, scaling) = (&profile.controller, profile.nand.timings(), profile.scaling(scale));
        let host_managed = profile.management == Management::Host;
        let program_ns = t.page_program_ns();
        debug_assert!(program_ns[0] <= program_ns[1], "a profile's upper page is the slower (Timings::validate)");
        let die_op_max_ns = program_ns[1].max(t.erase_ns).max(t.read_ns + transfer_ns(g.mpage_bytes(), t.channel_bytes_per_sec));
        Costs {
            read_ns: t.read_ns,
            program_ns,
            erase_ns: t.erase_ns,
            scaling,
            slot_transfer_ns: transfer_ns(SLOT_BYTES, t.channel_bytes_per_sec),
            mpage_transfer_ns: transfer_ns(g.mpage_bytes(), t.channel_bytes_per_sec),
            program_path_mpage_ns: transfer_ns(g.mpage_bytes(), c.program_path_bytes_per_sec),
            read_path_bytes_per_sec: c.read_path_bytes_per_sec,
            read_path_slot_ns: transfer_ns(SLOT_BYTES, c.read_path_bytes_per_sec),
            die_op_max_ns,
            read_path_mpage_ns: transfer_ns(g.mpage_bytes(), c.read_path_bytes_per_sec),
            codeword_bytes: profile.nand.codeword_bytes as u64,
            codeword_transfer_ns: transfer_ns(profile.nand.codeword_bytes as u64, t.channel_bytes_per_sec),
            read_command_ns: per_op_ns(c.read_commands_per_sec),
            write_command_ns: per_op_ns(c.write_commands_per_sec),
            gc_through_program_path: host_managed,
            link_bytes_per_sec: c.link_bytes_per_sec,
            link_slot_ns: transfer_ns(SLOT_BYTES, c.link_bytes_per_sec),
            overhead_ns: c.io_overhead_ns,
            cpu_ns: profile.host.os_submit_ns + profile.host.os_complete_ns + profile.host.cpu_ns_per_io,
            cpu_slot_ns: profile.host.cpu_ns_per_slot,
            complete_ns: profile.host.os_complete_ns,
            gc_mpage_cpu_ns: profile.ftl.gc_ns_per_slot * g.slots_per_mpage() as u64,
            gc_row_cpu_ns: profile.ftl.gc_ns_per_slot * g.slots_per_mpage() as u64 * profile.ftl.stripe_width.saturating_sub(1).max(1) as u64,
            gc_read_ahead_ns: die_op_max_ns
                + 2 * (t.read_ns + transfer_ns(g.mpage_bytes(), t.channel_bytes_per_sec) + transfer_ns(g.mpage_bytes(), c.read_path_bytes_per_sec)),
            map_page_ns: profile.ftl.map_ns_per_page,
            gc_on_host: host_managed,
            die_channel: (0..g.dies()).map(|d| g.channel_of(d)).collect(),
            die_controller: (0..g.dies()).map(|d| g.channel_of(d) / (g.channels / c.count)).collect(),
            controllers: c.count,
            spm: g.slots_per_mpage(),
            plane_masks: super::stream::plane_masks(g.slots_per_mpage(), g.planes_per_die),
            slot_in_one_plane: g.page_size_bytes as u64 >= SLOT_BYTES,
        }
    }

    /// tPROG of page `page` of a block: pages alternate lower and upper,
    /// lower first.
    #[inline(always)]
    fn program_ns_of(&self, page: u32) -> Ns {
        self.program_ns[(page & 1) as usize]
    }

    /// Plane pages a host read of the slots of `mask` senses and the
    /// firmware handles: one for a stream's whole multi-plane page, else
    /// one for each plane it touches (see `stream`).
    #[inline(always)]
    fn plane_reads(&self, mask: u32, read: HostRead) -> u64 {
        if read.in_stream || (mask & mask.wrapping_sub(1) == 0 && self.slot_in_one_plane) {
            return 1;
        }
        self.planes_touched(mask)
    }

    #[inline(never)]
    fn planes_touched(&self, mask: u32) -> u64 {
        self.plane_masks.iter().filter(|&&m| m & mask != 0).count() as u64
    }

    /// Whether a host read of `len` bytes may touch two plane pages (only
    /// then does it matter whether it continues a stream).
    #[inline]
    pub(super) fn may_span_planes(&self, len: u64) -> bool {
        len > SLOT_BYTES || !self.slot_in_one_plane
    }

    /// The controller a command goes to by its first slot, where no die
    /// decides it (a write's command, a read of never-written slots):
    /// spread over the controllers by address, hashed (Fibonacci
    /// hashing) so that I/Os aligned to their size (8 KiB reads start on
    /// even slots) do not all land on one controller.
    #[inline]
    fn controller_of_slot(&self, slot: u32) -> u32 {
        let h = slot.wrapping_mul(0x9E37_79B9);
        ((h as u64 * self.controllers as u64) >> 32) as u32
    }

    /// What a host read of `len` bytes at `offset` asks of its pages: under
    /// a slot, only the codewords it touches move from the die and through
    /// the read path (else whole slots); `in_stream`, whether it continues
    /// a sequential stream.
    #[inline]
    pub(super) fn host_read(&self, offset: u64, len: u64, in_stream: bool) -> HostRead {
        let sub_slot_bytes = if len >= SLOT_BYTES {
            0
        } else {
            let cw = self.codeword_bytes;
            let start = offset % SLOT_BYTES / cw;
            let end = (offset % SLOT_BYTES + len).div_ceil(cw);
            ((end - start) * cw) as u32
        };
        HostRead { sub_slot_bytes, in_stream }
    }

    #[inline]
    fn link_ns(&self, len: u64) -> Ns {
        if len == SLOT_BYTES {
            self.link_slot_ns
        } else {
            transfer_ns(len, self.link_bytes_per_sec)
        }
    }

    /// ECC codewords a read decodes: a host read of less than a slot
    /// (`sub_slot` bytes) only those it touches, else its slots' all.
    #[inline]
    pub(super) fn codewords(&self, op: &MediaOp, sub_slot: Option<u64>) -> u32 {
        match sub_slot {
            Some(bytes) if op.tag == OpTag::User => (bytes / self.codeword_bytes) as u32,
            _ => (op.mask.count_ones() as u64 * SLOT_BYTES / self.codeword_bytes) as u32,
        }
    }
}

/// What a host read asks of its pages: the bytes it moves when under a
/// slot (its codewords), and whether it continues a sequential stream
/// (read in whole multi-plane pages; see `stream`).
/// (Small enough to pass in registers.)
#[derive(Debug, Clone, Copy)]
pub(super) struct HostRead {
    /// The bytes moved when under a slot, else 0 (`Costs::host_read`).
    sub_slot_bytes: u32,
    in_stream: bool,
}

impl HostRead {
    /// An FTL call that reads nothing for the host.
    pub(super) const NONE: HostRead = HostRead { sub_slot_bytes: 0, in_stream: false };

    /// The bytes a read of less than a slot moves (its codewords).
    #[inline(always)]
    pub(super) fn sub_slot(self) -> Option<u64> {
        (self.sub_slot_bytes > 0).then_some(self.sub_slot_bytes as u64)
    }
}

/// When the operations of an FTL call are ready to be charged.
#[derive(Debug, Clone, Copy)]
pub(super) enum Start {
    /// At a time (a write's data in the buffer, a background step).
    At(Ns),
    /// A host read's command, taken at `now` by the controller that owns
    /// the die of the first page read (or, with none, the controller of
    /// `slot`), then its reads.
    ReadCommand { now: Ns, slot: u32 },
}

/// One member's resources, reserved in issue order.
pub(super) struct MemberTiming {
    pub(super) dies: Vec<Timeline>,
    pub(super) channels: Vec<Timeline>,
    pub(super) command: Vec<Timeline>,
    pub(super) program_path: Vec<Timeline>,
    pub(super) read_path: Vec<Timeline>,
    pub(super) link_in: Timeline,
    pub(super) link_out: Timeline,
    pub(super) buffer: WriteBuffer,
    /// When the data GC has read so far is out of the read path.
    pub(super) gc_ready: Ns,
    /// The threads that run GC.
    pub(super) gc_cpu: Pool,
    /// When each superblock's last erase ends: nothing may be programmed
    /// into it before (the die timelines alone could slot a program into a
    /// gap ahead of the erase).
    pub(super) erased_at: Vec<Ns>,
    /// Erases issued on each die (which of them take time on a scaled card).
    die_erases: Vec<u32>,
    /// The sequential read streams the controller follows.
    pub(super) streams: super::stream::Streams,
}

impl MemberTiming {
    pub(super) fn new(profile: &Profile, g: &nand::Geometry, buffer_slots: u32) -> MemberTiming {
        let controllers = profile.controller.count as usize;
        MemberTiming {
            dies: vec![Timeline::default(); g.dies() as usize],
            channels: vec![Timeline::default(); g.channels as usize],
            command: vec![Timeline::default(); controllers],
            program_path: vec![Timeline::default(); controllers],
            read_path: vec![Timeline::default(); controllers],
            link_in: Timeline::default(),
            link_out: Timeline::default(),
            buffer: WriteBuffer::new(buffer_slots, g.slots_per_mpage()),
            gc_ready: 0,
            gc_cpu: Pool::new(profile.ftl.gc_threads),
            erased_at: vec![0; g.blocks_per_plane as usize],
            die_erases: vec![0; g.dies() as usize],
            streams: Default::default(),
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
            Start::ReadCommand { now, slot } => {
                let ctl = match ops.first() {
                    Some(op) => c.die_controller[op.die as usize],
                    None if c.controllers == 1 => 0,
                    None => c.controller_of_slot(slot),
                };
                self.command[ctl as usize].reserve(now, c.read_command_ns)
            }
        }
    }

    /// Charges media operations, all ready at `ready`; returns when the last
    /// host read among them has its data out of the read path. `read` is
    /// what the host read among them asks of its pages.
    /// GC threads of a host-managed card also take a core of `cpu`.
    #[inline]
    pub(super) fn charge(&mut self, c: &Costs, cpu: &mut Pool, ops: &[MediaOp], ready: Ns, read: HostRead) -> Ns {
        let mut user_done = ready;
        for op in ops {
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
                OpKind::Program => self.program(c, cpu, op, ready),
                OpKind::Erase => {
                    // A victim is erased once all its valid data is read out;
                    // on a scaled card one erase of a die in `pages_div`
                    // takes the whole tBERS (`Scaling::erase_takes_time`).
                    let (d, ready) = (op.die as usize, ready.max(self.gc_ready));
                    let n = self.die_erases[d];
                    self.die_erases[d] = n.wrapping_add(1);
                    let end = if c.scaling.erase_takes_time(n) { self.dies[d].reserve(ready, c.erase_ns) } else { ready };
                    let e = &mut self.erased_at[op.block as usize];
                    *e = (*e).max(end);
                }
            }
        }
        user_done
    }

    /// A read: sense (tR), then the named slots (or a short read's
    /// codewords) cross the channel, the die holding the data in its
    /// register until then; then ECC decode and DMA. Each retry senses and
    /// moves the data again and is decoded again (the die held meanwhile;
    /// the channel is charged once). A host read returns when its data is
    /// out; a GC read moves `gc_ready` (and returns `ready`).
    #[inline(always)]
    fn read(&mut self, c: &Costs, op: &MediaOp, ready: Ns, read: HostRead) -> Ns {
        let d = op.die as usize;
        let (ch, ctl) = (c.die_channel[d] as usize, c.die_controller[d] as usize);
        let (xfer, path) = match read.sub_slot() {
            Some(bytes) if op.tag == OpTag::User => (bytes / c.codeword_bytes * c.codeword_transfer_ns, transfer_ns(bytes, c.read_path_bytes_per_sec)),
            _ => {
                let n = op.mask.count_ones() as u64;
                (n * c.slot_transfer_ns, n * c.read_path_slot_ns)
            }
        };
        let attempts = 1 + op.retries as u64;
        if op.tag == OpTag::Gc {
            let sensed = self.dies[d].reserve(ready, (c.read_ns + xfer) * attempts);
            let out = self.channels[ch].reserve(sensed - xfer, xfer).max(sensed);
            let done = self.read_path[ctl].reserve(out, path * attempts);
            self.gc_ready = self.gc_ready.max(done);
            return ready;
        }
        // Host reads go ahead of queued programs and GC work, behind at
        // most the operation in progress.
        let planes = c.plane_reads(op.mask, read);
        let ready = self.map_work(c, ready, planes);
        let sensed = self.dies[d].reserve_priority(ready, (c.read_ns * planes + xfer) * attempts, c.die_op_max_ns);
        let out = self.channels[ch].reserve_priority(sensed - xfer, xfer, c.mpage_transfer_ns).max(sensed);
        self.read_path[ctl].reserve_priority(out, path * attempts, c.read_path_mpage_ns)
    }

    /// One page of the stripe read to rebuild a page beyond ECC (the XOR
    /// follows): a whole multi-plane page sensed and moved, ahead of queued
    /// work as a host read is. Returns when its data is out.
    #[inline(never)]
    fn stripe_read(&mut self, c: &Costs, op: &MediaOp, ready: Ns) -> Ns {
        let d = op.die as usize;
        let (ch, ctl) = (c.die_channel[d] as usize, c.die_controller[d] as usize);
        let ready = self.map_work(c, ready, 1);
        let sensed = self.dies[d].reserve_priority(ready, c.read_ns + c.mpage_transfer_ns, c.die_op_max_ns);
        let out = self.channels[ch].reserve_priority(sensed - c.mpage_transfer_ns, c.mpage_transfer_ns, c.mpage_transfer_ns).max(sensed);
        self.read_path[ctl].reserve_priority(out, c.read_path_mpage_ns, c.read_path_mpage_ns)
    }

    /// The GC threads' map work for `pages` pages a host I/O reads or
    /// programs, ahead of GC's queued work but behind the stripe row a
    /// busy thread is relocating: when the flash command can go.
    #[inline(always)]
    fn map_work(&mut self, c: &Costs, ready: Ns, pages: u64) -> Ns {
        self.gc_cpu.reserve_priority(ready, c.map_page_ns * pages, c.gc_row_cpu_ns)
    }

    /// A program: GC data must first have been read out of the victim, and
    /// a GC thread must have handled the page's slots (on a host core, for
    /// a host-managed card); the block must be erased; then the program
    /// path, the channel and the die. A host page frees its buffer slots
    /// when its program ends.
    #[inline(always)]
    fn program(&mut self, c: &Costs, cpu: &mut Pool, op: &MediaOp, ready: Ns) {
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
            OpTag::User | OpTag::Parity => self.map_work(c, ready, 1),
            _ => ready,
        };
        let r = r.max(self.erased_at[op.block as usize]);
        let staged = if gc && !c.gc_through_program_path { r } else { self.program_path[ctl].reserve(r, c.program_path_mpage_ns) };
        let loaded = self.channels[ch].reserve(staged, c.mpage_transfer_ns);
        let end = self.dies[d].reserve(loaded, c.program_ns_of(op.page));
        if op.tag == OpTag::User {
            self.buffer.release(end);
        }
    }

    /// When everything reserved so far has ended.
    pub(super) fn quiet_at(&self) -> Ns {
        let lines = self.dies.iter().chain(&self.channels).chain(&self.command).chain(&self.program_path).chain(&self.read_path);
        let t = lines.chain([&self.link_in, &self.link_out]).map(|l| l.idle_at()).max().unwrap_or(0);
        t.max(self.gc_ready).max(self.gc_cpu.idle_at()).max(self.erased_at.iter().copied().max().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The timing model on a bare list of operations: a host read waits
    /// for its die, and its retries hold the die again; a GC program waits
    /// for the GC read before it.
    #[test]
    fn a_list_of_ops_is_charged_without_an_ftl() {
        let profile = crate::profile_load("p420m").unwrap();
        let g = profile.scaling(1024).geometry(&profile.nand.geometry());
        let c = Costs::of(&profile, &g, 1024);
        let mut cpu = Pool::new(1);
        let read = |retries| MediaOp { kind: OpKind::Read, tag: OpTag::User, die: 0, block: 1, page: 0, mask: 1, retries, stripe_part: false };
        let mut t = MemberTiming::new(&profile, &g, 1024);
        let once = t.charge(&c, &mut cpu, &[read(0)], 0, HostRead::NONE);
        assert!(once >= c.read_ns, "a read senses first: {once} < tR {}", c.read_ns);
        let mut t = MemberTiming::new(&profile, &g, 1024);
        let twice = t.charge(&c, &mut cpu, &[read(1)], 0, HostRead::NONE);
        assert!(twice >= once + c.read_ns, "a retry senses again: {twice} after {once}");
        let mut t = MemberTiming::new(&profile, &g, 1024);
        let gc_read = MediaOp { tag: OpTag::Gc, ..read(0) };
        let program = MediaOp { kind: OpKind::Program, tag: OpTag::Gc, die: 1, block: 2, page: 0, mask: 0, retries: 0, stripe_part: false };
        t.charge(&c, &mut cpu, &[gc_read, program], 0, HostRead::NONE);
        assert!(t.dies[1].idle_at() >= t.gc_ready + c.program_ns_of(0), "the GC program follows its read");
    }

    /// MLC pages alternate lower and upper, and their tPROG averages the
    /// datasheet's: a host read that finds its die programming waits for
    /// the program in progress, longer behind an upper (odd) page.
    #[test]
    fn a_read_waits_longer_behind_an_upper_page_program() {
        let profile = crate::profile_load("p420m").unwrap();
        let g = profile.scaling(1024).geometry(&profile.nand.geometry());
        let c = Costs::of(&profile, &g, 1024);
        let [lower, upper] = c.program_ns;
        assert!(lower < upper && lower + upper == 2 * profile.nand.timings().program_ns, "{lower} / {upper}");
        assert_eq!(c.die_op_max_ns, upper.max(profile.nand.timings().erase_ns));
        let wait = |page: u32| {
            let mut t = MemberTiming::new(&profile, &g, 1024);
            let program = MediaOp { kind: OpKind::Program, tag: OpTag::Gc, die: 0, block: 2, page, mask: 0, retries: 0, stripe_part: false };
            t.charge(&c, &mut Pool::new(1), &[program], 0, HostRead::NONE);
            let end = t.dies[0].idle_at();
            let arrives = end - c.program_ns_of(page) + 1_000;
            let read = MediaOp { kind: OpKind::Read, tag: OpTag::User, die: 0, block: 1, page: 0, mask: 1, retries: 0, stripe_part: false };
            let done = t.charge(&c, &mut Pool::new(1), &[read], arrives, HostRead::NONE);
            assert!(done >= end + c.read_ns, "page {page}: the read senses after the program ends ({done} < {end} + tR)");
            done - arrives
        };
        assert_eq!(wait(1) - wait(0), upper - lower, "behind an upper page the read waits the pages' difference longer");
        assert_eq!(wait(3), wait(1), "odd pages are upper pages all through the block");
    }

    /// A GC thread relocates a stripe row at a time: a host read whose map
    /// work finds every GC thread busy waits for the first of them to end
    /// its row (on average `row / (threads + 1)`), not a page of it.
    #[test]
    fn a_host_read_waits_for_the_gc_row_in_progress() {
        for id in ["flashmax2", "p420m"] {
            let profile = crate::profile_load(id).unwrap();
            let g = profile.scaling(1024).geometry(&profile.nand.geometry());
            let c = Costs::of(&profile, &g, 1024);
            let data_members = profile.ftl.stripe_width as u64 - 1;
            assert_eq!(c.gc_row_cpu_ns, data_members * c.gc_mpage_cpu_ns, "{id}: a row is the stripe's data pages");
            let read = MediaOp { kind: OpKind::Read, tag: OpTag::User, die: 0, block: 1, page: 0, mask: 1, retries: 0, stripe_part: false };
            let arrives = 1_000_000;
            let latency = |backlog: Ns| {
                let mut t = MemberTiming::new(&profile, &g, 1024);
                for _ in 0..profile.ftl.gc_threads {
                    t.gc_cpu.reserve(0, backlog);
                }
                t.charge(&c, &mut Pool::new(1), &[read], arrives, HostRead::NONE) - arrives
            };
            let threads = profile.ftl.gc_threads as u64;
            assert_eq!(latency(arrives + 10 * c.gc_row_cpu_ns) - latency(0), c.gc_row_cpu_ns / (threads + 1), "{id}: behind a GC backlog");
            assert_eq!(latency(arrives + 1_000) - latency(0), 1_000, "{id}: a backlog shorter than that is waited out");
        }
    }

    /// Commands no die places are spread over the controllers whatever
    /// their alignment: the first slots of 8 KiB and 64 KiB I/Os (every
    /// 2nd and 16th slot) reach both controllers of a two-controller card
    /// about equally.
    #[test]
    fn aligned_commands_reach_every_controller() {
        let profile = crate::profile_load("flashmax2").unwrap();
        let g = profile.scaling(64).geometry(&profile.nand.geometry());
        let c = Costs::of(&profile, &g, 64);
        assert_eq!(c.controllers, 2);
        for step in [1u32, 2, 16, 128] {
            let on_0 = (0..10_000u32).filter(|i| c.controller_of_slot(i * step) == 0).count();
            assert!((4_500..=5_500).contains(&on_0), "I/Os every {step} slots: {on_0} of 10,000 on controller 0");
        }
    }
}
