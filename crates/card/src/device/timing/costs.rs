//! What each media operation costs on a member's resources, precomputed
//! from the profile, and what a host read asks of its pages.

use crate::catalog::host::CompletionCore;
use crate::catalog::profile::{Management, Profile};
use crate::recorder::MediaOp;
use nand::OpTag;
use units::{per_op_ns, transfer_ns, Ns, SLOT_BYTES};

/// Service times, precomputed from the profile.
#[derive(Debug, Clone)]
pub(in crate::device) struct Costs {
    pub(in crate::device) read_ns: Ns,
    /// tPROG of a block's even (lower) and odd (upper) pages
    /// (`program_ns_of`).
    pub(super) program_ns: [Ns; 2],
    /// Each block's own erase time (`nand::EraseSpread`; on a scaled card
    /// one erase of a die in `pages_div` takes it).
    pub(super) erase: nand::EraseSpread,
    pub(super) scaling: crate::Scaling,
    pub(super) slot_transfer_ns: Ns,
    pub(super) mpage_transfer_ns: Ns,
    pub(in crate::device) program_path_mpage_ns: Ns,
    pub(super) read_path_bytes_per_sec: u64,
    pub(super) read_path_slot_ns: Ns,
    /// The longest operation a die usually runs (a typical erase, not a
    /// slow block's; none is suspended): what a die's first read after a
    /// spell without any waits at most, its queue unknown
    /// (`sim::OpTimeline`), and how far before the host's clock a die
    /// keeps its operations.
    pub(super) die_op_typical_ns: Ns,
    pub(super) read_path_mpage_ns: Ns,
    /// One ECC codeword over the channel.
    pub(in crate::device) codeword_bytes: u64,
    pub(super) codeword_transfer_ns: Ns,
    pub(super) read_command_ns: Ns,
    /// Whether host reads go ahead of the work queued on their die
    /// (`controller.read_priority`).
    pub(super) read_priority: bool,
    pub(super) write_command_ns: Ns,
    /// Whether GC data passes the program path (host-managed cards).
    pub(super) gc_through_program_path: bool,
    pub(super) link_bytes_per_sec: u64,
    /// A 4 KiB transfer on the host link.
    pub(super) link_slot_ns: Ns,
    pub(in crate::device) overhead_ns: Ns,
    /// The driver's host CPU time for each 4 KiB slot of an I/O (added to
    /// its passage's).
    pub(in crate::device) cpu_slot_ns: Ns,
    /// A write's and a read's way through the host (`Passage`).
    pub(in crate::device) write_passage: Passage,
    pub(in crate::device) read_passage: Passage,
    pub(in crate::device) gc_mpage_cpu_ns: Ns,
    /// A GC thread's time for a stripe row (the data pages whose parity
    /// it writes together), which it relocates as one piece of work: what
    /// a host I/O's map work waits for on a busy thread.
    pub(super) gc_row_cpu_ns: Ns,
    /// How far ahead background GC issues its work: a victim page's read
    /// behind the longest die operation, and another, so that a GC
    /// thread does not wait for the data of the page it moves next.
    pub(in crate::device) gc_read_ahead_ns: Ns,
    /// The GC threads' time for each page a host I/O reads or programs.
    pub(super) map_page_ns: Ns,
    /// The same for each slot a host write records once it is in the
    /// buffer: a programmed page's map work, shared among its slots.
    pub(super) map_slot_ns: Ns,
    /// Whether GC threads run on the host's cores (host-managed cards).
    pub(in crate::device) gc_on_host: bool,
    /// Where GC threads run on the host and its scheduler shares their
    /// cores with the benchmark's threads: each turn's length.
    pub(super) gc_shared_slice_ns: Option<Ns>,
    /// Whether a host write is acknowledged once programmed
    /// (`WriteCache::WriteThrough`).
    pub(in crate::device) write_through: bool,
    /// How long an I/O waits for a host I/O core before the cores count as
    /// taken (`Device::host_cores_taken`): a turn where they are shared
    /// with GC threads, else never (`Ns::MAX`).
    pub(in crate::device) cores_taken_wait_ns: Ns,
    /// The channel and the controller of each die (fixed; tables save a
    /// division per operation).
    pub(super) die_channel: Vec<u32>,
    pub(super) die_controller: Vec<u32>,
    /// The timeline each die's operations take (`MemberTiming::dies`):
    /// its own, or where banks work in lockstep its bank's.
    pub(super) die_unit: Vec<u32>,
    /// The dies of a bank worked in lockstep (`controller.lockstep_banks`;
    /// 1: each die on its own).
    pub(super) bank_width: u32,
    pub(super) controllers: u32,
    pub(in crate::device) spm: u32,
    /// The slots of a multi-plane page on each plane (see `stream`).
    pub(super) plane_masks: Vec<u32>,
    /// Whether each slot lies on one plane (plane pages of 4 KiB or more).
    pub(super) slot_in_one_plane: bool,
    /// Slots a plane page holds (at least 1): a read of slots no page
    /// holds looks up as many map entries as a read of them from the
    /// flash would (`unflashed_pages`).
    pub(super) slots_per_plane_page: u32,
    /// The GC threads' time for a host page programmed: each of its
    /// slots' write work where the profile sets it
    /// (`ftl.write_ns_per_slot`: a card's firmware taking a slot from
    /// its buffer into a program). Its map work was done as its slots
    /// were recorded (`map_slot_ns`).
    pub(super) user_program_ns: Ns,
    /// A GC thread's time to relocate one slot, which a partial write's
    /// merge also takes (read the rest of the slot, merge, place it).
    pub(super) gc_slot_cpu_ns: Ns,
    /// The map checkpoint, where the profile sets one.
    pub(super) checkpoint: Option<Checkpoint>,
    /// Whether the driver holds writes against its groomer
    /// (`ftl.write_hold_erase_blocks`): host pages then go ahead of the
    /// groomer's on the program path, into blocks held erased.
    pub(super) write_hold: bool,
}

/// A map checkpoint (`ftl.map_checkpoint_*`): every `interval_ns`, the
/// map lock held `ns_per_page` a map page host writes changed since the
/// last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Checkpoint {
    pub(super) interval_ns: Ns,
    pub(super) ns_per_page: Ns,
}

impl Costs {
    /// Every cost the timing model charges, from the profile at a scale.
    pub(in crate::device) fn of(profile: &Profile, g: &nand::Geometry, scale: u32) -> Costs {
        let (c, t, scaling) = (&profile.controller, profile.nand.timings(), profile.scaling(scale));
        let host_managed = profile.management == Management::Host;
        let gc_shared_slice_ns = if host_managed { profile.platform.scheduler.shared_slice_ns() } else { None };
        let program_ns = t.page_program_ns();
        debug_assert!(program_ns[0] <= program_ns[1], "a profile's upper page is the slower (Timings::validate)");
        let gc_mpage_cpu_ns = profile.ftl.gc_ns_per_slot * g.slots_per_mpage() as u64;
        let row_mpages = profile.ftl.stripe_width.saturating_sub(1).max(1) as u64;
        // A bank worked in lockstep moves its data over its channels
        // together, one wide bus (all its dies on channel 0).
        let bank_width = if c.lockstep_banks { g.channels } else { 1 };
        let bus = t.channel_bytes_per_sec * bank_width as u64;
        let page_read_ns = t.read_ns + transfer_ns(g.mpage_bytes(), bus);
        let die_op_typical_ns = program_ns[1].max(t.erase_ns).max(page_read_ns);
        Costs {
            read_ns: t.read_ns,
            program_ns,
            erase: t.erase_spread(),
            scaling,
            slot_transfer_ns: transfer_ns(SLOT_BYTES, bus),
            mpage_transfer_ns: transfer_ns(g.mpage_bytes(), bus),
            program_path_mpage_ns: transfer_ns(g.mpage_bytes(), c.program_path_bytes_per_sec),
            read_path_bytes_per_sec: c.read_path_bytes_per_sec,
            read_path_slot_ns: transfer_ns(SLOT_BYTES, c.read_path_bytes_per_sec),
            die_op_typical_ns,
            read_path_mpage_ns: transfer_ns(g.mpage_bytes(), c.read_path_bytes_per_sec),
            codeword_bytes: profile.nand.codeword_bytes as u64,
            codeword_transfer_ns: transfer_ns(profile.nand.codeword_bytes as u64, bus),
            read_command_ns: per_op_ns(c.read_commands_per_sec),
            read_priority: c.read_priority,
            write_command_ns: per_op_ns(c.write_commands_per_sec),
            gc_through_program_path: host_managed,
            link_bytes_per_sec: c.link_bytes_per_sec,
            link_slot_ns: transfer_ns(SLOT_BYTES, c.link_bytes_per_sec),
            overhead_ns: c.io_overhead_ns,
            cpu_slot_ns: profile.host.cpu_ns_per_slot,
            write_passage: Passage::of(profile, 0),
            read_passage: Passage::of(profile, profile.host.read_completion_ns),
            gc_mpage_cpu_ns,
            gc_row_cpu_ns: gc_mpage_cpu_ns * row_mpages,
            gc_read_ahead_ns: die_op_typical_ns + 2 * (t.read_ns + transfer_ns(g.mpage_bytes(), bus) + transfer_ns(g.mpage_bytes(), c.read_path_bytes_per_sec)),
            map_page_ns: profile.ftl.map_ns_per_page,
            map_slot_ns: profile.ftl.map_ns_per_page.div_ceil(g.slots_per_mpage() as u64),
            gc_on_host: host_managed,
            gc_shared_slice_ns,
            write_through: profile.ftl.write_cache == crate::WriteCache::WriteThrough,
            cores_taken_wait_ns: gc_shared_slice_ns.unwrap_or(Ns::MAX),
            die_channel: (0..g.dies()).map(|d| if bank_width > 1 { 0 } else { g.channel_of(d) }).collect(),
            die_controller: (0..g.dies()).map(|d| g.channel_of(d) / (g.channels / c.count)).collect(),
            // Dies are numbered channel-minor: a bank is `channels`
            // consecutive dies.
            die_unit: (0..g.dies()).map(|d| d / bank_width).collect(),
            bank_width,
            controllers: c.count,
            spm: g.slots_per_mpage(),
            plane_masks: crate::device::stream::plane_masks(g.slots_per_mpage(), g.planes_per_die),
            slot_in_one_plane: g.page_size_bytes as u64 >= SLOT_BYTES,
            slots_per_plane_page: (g.page_size_bytes as u64 / SLOT_BYTES).max(1) as u32,
            user_program_ns: profile.ftl.write_ns_per_slot * g.slots_per_mpage() as u64,
            gc_slot_cpu_ns: profile.ftl.gc_ns_per_slot,
            checkpoint: profile
                .ftl
                .map_checkpoint_interval_ns
                .map(|interval_ns| Checkpoint { interval_ns, ns_per_page: profile.ftl.map_checkpoint_ns_per_page }),
            write_hold: profile.ftl.write_hold_erase_blocks > 0,
        }
    }

    /// The timeline die `die`'s operations take (`MemberTiming::dies`):
    /// its own, or its bank's where banks work in lockstep.
    #[inline(always)]
    pub(super) fn unit_of(&self, die: u32) -> usize {
        if self.bank_width == 1 {
            die as usize
        } else {
            self.die_unit[die as usize] as usize
        }
    }

    /// tPROG of page `page` of a block: pages alternate lower and upper,
    /// lower first.
    #[inline(always)]
    pub(super) fn program_ns_of(&self, page: u32) -> Ns {
        self.program_ns[(page & 1) as usize]
    }

    /// Plane pages a host read of the slots of `mask` senses and the
    /// firmware handles: one for a stream's whole multi-plane page, else
    /// one for each plane it touches (see `stream`).
    #[inline(always)]
    pub(super) fn plane_reads(&self, mask: u32, read: HostRead) -> u64 {
        if read.in_stream || (mask & mask.wrapping_sub(1) == 0 && self.slot_in_one_plane) {
            return 1;
        }
        self.planes_touched(mask)
    }

    /// The map pages a host read of `slots` slots that no flash page
    /// holds (never written, or trimmed) looks up: as many as reading
    /// them would, a page's worth of slots at a time.
    #[inline]
    pub(super) fn unflashed_pages(&self, slots: u32) -> u64 {
        slots.div_ceil(self.slots_per_plane_page) as u64
    }

    #[inline(never)]
    pub(super) fn planes_touched(&self, mask: u32) -> u64 {
        self.plane_masks.iter().filter(|&&m| m & mask != 0).count() as u64
    }

    /// Whether a host read of `len` bytes may touch two plane pages (only
    /// then does it matter whether it continues a stream).
    #[inline]
    pub(in crate::device) fn may_span_planes(&self, len: u64) -> bool {
        len > SLOT_BYTES || !self.slot_in_one_plane
    }

    /// The controller a command goes to by its first slot, where no die
    /// decides it (a write's command, a read of never-written slots):
    /// spread over the controllers by address, hashed (Fibonacci
    /// hashing) so that I/Os aligned to their size (8 KiB reads start on
    /// even slots) do not all land on one controller.
    #[inline]
    pub(super) fn controller_of_slot(&self, slot: u32) -> u32 {
        let h = slot.wrapping_mul(0x9E37_79B9);
        ((h as u64 * self.controllers as u64) >> 32) as u32
    }

    /// What a host read of `len` bytes at `offset` asks of its pages: under
    /// a slot, only the codewords it touches move from the die and through
    /// the read path (else whole slots); `in_stream`, whether it continues
    /// a sequential stream.
    #[inline]
    pub(in crate::device) fn host_read(&self, offset: u64, len: u64, in_stream: bool) -> HostRead {
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
    pub(super) fn link_ns(&self, len: u64) -> Ns {
        if len == SLOT_BYTES {
            self.link_slot_ns
        } else {
            transfer_ns(len, self.link_bytes_per_sec)
        }
    }

    /// ECC codewords a read decodes: a host read of less than a slot
    /// (`sub_slot` bytes) only those it touches, else its slots' all.
    #[inline]
    pub(in crate::device) fn codewords(&self, op: &MediaOp, sub_slot: Option<u64>) -> u32 {
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
pub(in crate::device) struct HostRead {
    /// The bytes moved when under a slot, else 0 (`Costs::host_read`).
    pub(super) sub_slot_bytes: u32,
    pub(super) in_stream: bool,
}

impl HostRead {
    /// An FTL call that reads nothing for the host.
    pub(in crate::device) const NONE: HostRead = HostRead { sub_slot_bytes: 0, in_stream: false };

    /// The bytes a read of less than a slot moves (its codewords).
    #[inline(always)]
    pub(in crate::device) fn sub_slot(self) -> Option<u64> {
        (self.sub_slot_bytes > 0).then_some(self.sub_slot_bytes as u64)
    }
}

/// An I/O's way through the host: the CPU time it takes from the I/O
/// paths' cores (reserved at submission), the part of it that comes after
/// the card (so the I/O starts that much before the reservation ends),
/// and its completion's time on the interrupt vector's core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::device) struct Passage {
    pub cpu_ns: Ns,
    pub after_ns: Ns,
    pub interrupt_ns: Ns,
}

impl Passage {
    /// The host's stack and the card's driver (whose per-I/O time ends
    /// with `completion_ns` of work once the I/O completes: on the
    /// interrupt's core or the issuer's, as the host runs it).
    fn of(profile: &Profile, completion_ns: Ns) -> Passage {
        let (stack, driver) = (&profile.platform.stack, profile.host.cpu_ns_per_io);
        debug_assert!(completion_ns <= driver, "validated: a part of the driver's time");
        match stack.completion_core {
            CompletionCore::Interrupt => Passage {
                cpu_ns: stack.submit_ns + driver - completion_ns + stack.complete_ns,
                after_ns: stack.complete_ns,
                interrupt_ns: stack.interrupt_ns + completion_ns,
            },
            CompletionCore::Issuer => {
                Passage { cpu_ns: stack.submit_ns + driver + stack.complete_ns, after_ns: stack.complete_ns + completion_ns, interrupt_ns: stack.interrupt_ns }
            }
        }
    }
}
