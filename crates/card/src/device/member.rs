//! A member of the card: its FTL, its timing and its bit errors. Every FTL
//! call goes through [`Member::apply`], which runs it, lets the error
//! model mark the reads it issued (retries, beyond ECC) and times them: a
//! forgotten charge cannot happen.

use super::timing::{Costs, HostRead, MemberTiming, Start};
use super::{DeviceError, Payload};
use crate::catalog::profile::Profile;
use crate::recorder::{MediaOp, OpKind, Recorder};
use ftl::{Ftl, FtlError};
use nand::errors::ReadOutcome;
use nand::wear::Wear;
use nand::OpTag;
use units::{Ns, SLOT_BYTES};

/// Read reclaim moves one slot every this many host I/Os (GC work: it
/// takes the GC threads, dies and channels): a background task that
/// costs the host about a sixteenth more media work while it runs.
/// Assumed: the cards do not publish their pace.
const RECLAIM_IOS_PER_SLOT: u32 = 16;

/// Batches of background GC (a multi-plane page of moves each) one host
/// I/O may run: bounds the work of one call after a long idle spell.
const GC_BACKGROUND_BATCHES: u32 = 64;

pub(super) struct Member {
    pub(super) ftl: Ftl<Recorder>,
    pub(super) timing: MemberTiming,
    /// Bit errors and read retries (where the profile has an error model).
    pub(super) wear: Option<Wear>,
    /// Program/erase cycles one erase stands for (1, or more on a card
    /// aged at an accelerated pace).
    pub(super) cycles_per_erase: u32,
    /// A slot being merged for a data-holding write (made on first use:
    /// the simulator's I/Os never touch it).
    slot_buf: Option<Box<[u8; SLOT_BYTES as usize]>>,
    /// The whole slots of a data-holding read that covers part of one.
    read_buf: Vec<u8>,
    /// Host I/Os since read reclaim last moved a slot.
    reclaim_ios: u32,
    /// Read reclaim has work (checked on every I/O: a field of its own).
    reclaim_on: bool,
    /// Background GC collects while the free pool is under this many
    /// superblocks (0: never).
    gc_background_mark: u32,
    /// Background GC's time slice on busy GC threads, where the profile
    /// gives it one (`ftl.gc_background_share`).
    gc_slice: Option<GcSlice>,
    /// Simulated reads of lost data (an I/O error to the host).
    pub(super) reads_lost: u64,
    /// A read since the last host read found a page beyond ECC that its
    /// stripe could not rebuild.
    unreadable: bool,
}

impl Member {
    /// The member's page file, where its data is kept (none on a card that
    /// keeps no data): the one way to it from the device.
    pub(super) fn pages(&self) -> Option<&nand::PageStore> {
        self.ftl.media().array.store()
    }

    /// As [`Member::pages`], to change.
    pub(super) fn pages_mut(&mut self) -> Option<&mut nand::PageStore> {
        self.ftl.media_mut().array.store_mut()
    }

    /// A member: its FTL, its timelines (dies, channels, controllers, link),
    /// its write buffer and GC threads, its error model.
    pub(super) fn new(profile: &Profile, g: &nand::Geometry, c: &Costs, ftl: Ftl<Recorder>, buffer_slots: u32, index: usize, cycles_per_erase: u32) -> Member {
        let erases_max = (0..g.blocks_per_plane).map(|b| ftl.superblock_erase_count(b)).max().unwrap_or(0) * cycles_per_erase;
        let gc_background_mark = match profile.ftl.gc_background_superblocks {
            0 => 0,
            k => ftl.gc_rest_level() + k,
        };
        let wear = profile.nand.errors.clone().map(|e| Wear::new(e, profile.nand.codeword_bytes, g.dies(), g.blocks_per_plane, erases_max, index as u64));
        Member {
            ftl,
            timing: MemberTiming::new(profile, g, c, buffer_slots, index as u32),
            wear,
            cycles_per_erase,
            slot_buf: None,
            read_buf: Vec::new(),
            reclaim_ios: 0,
            reclaim_on: false,
            gc_background_mark,
            gc_slice: GcSlice::of(profile, c),
            reads_lost: 0,
            unreadable: false,
        }
    }

    /// A copy of this member's whole state (see `Device::snapshot`).
    pub(super) fn snapshot(&self) -> Option<Member> {
        Some(Member {
            ftl: self.ftl.snapshot(|m| m.snapshot())?,
            timing: self.timing.clone(),
            wear: self.wear.clone(),
            cycles_per_erase: self.cycles_per_erase,
            slot_buf: self.slot_buf.clone(),
            read_buf: self.read_buf.clone(),
            reclaim_ios: self.reclaim_ios,
            reclaim_on: self.reclaim_on,
            gc_background_mark: self.gc_background_mark,
            gc_slice: self.gc_slice,
            reads_lost: self.reads_lost,
            unreadable: self.unreadable,
        })
    }

    /// Runs one FTL call and times the media operations it issued, from
    /// `start`; the one place an FTL call is timed. Returns the call's
    /// result and when its last host read has its data out (`start`'s time
    /// where it read nothing). The operations are timed even when the call
    /// failed: what it did to the flash took its time.
    #[inline]
    pub(super) fn apply<R>(
        &mut self,
        c: &Costs,
        start: Start,
        read: HostRead,
        call: impl FnOnce(&mut Ftl<Recorder>) -> Result<R, FtlError>,
    ) -> Result<(R, Ns), FtlError> {
        let r = call(&mut self.ftl);
        if let Start::ReadCommand { span, .. } = start {
            // Whether the driver of a host-managed card answers it alone.
            self.timing.read_unmapped_all = self.ftl.span_unmapped() == span;
        }
        if self.ftl.media().hook.ops.is_empty() {
            // Most host writes only fill the open page.
            let ready = match start {
                Start::At(t) => t,
                _ => self.timing.start(c, start, &[]),
            };
            return Ok((r?, ready));
        }
        // The log is taken from the FTL's media while it is marked and
        // charged, and given back emptied (its capacity kept).
        let mut ops = std::mem::take(&mut self.ftl.media_mut().hook.ops);
        let ready = self.timing.start(c, start, &ops);
        // A quiet error model (no read can fail at the card's age) needs
        // only the erases: most batches are looked at without a call.
        if self.wear.as_ref().is_some_and(|w| !w.quiet() || ops.iter().any(|o| o.kind == OpKind::Erase)) {
            self.errors_mark(c, &mut ops, read.sub_slot());
        }
        let done = self.timing.charge(c, &ops, ready, read);
        ops.clear();
        self.ftl.media_mut().hook.ops = ops;
        Ok((r?, done))
    }

    /// The error model's verdict on each read, written in the list: its
    /// retries on the op; beyond ECC, a read of each other page of its
    /// stripe after it where the FTL's stripe rule can rebuild it, else the
    /// data is lost to this read (`unreadable`, a media error). Erases
    /// reset their block's errors. A read that needed enough retries
    /// queues its superblock for read reclaim.
    #[inline(never)]
    fn errors_mark(&mut self, c: &Costs, ops: &mut Vec<MediaOp>, sub_slot: Option<u64>) {
        let w = self.wear.as_mut().expect("errors_mark runs only with an error model");
        let mut i = 0;
        while i < ops.len() {
            let op = ops[i];
            i += 1;
            let erases = self.ftl.superblock_erase_count(op.block) * self.cycles_per_erase;
            match op.kind {
                OpKind::Erase => w.erased(op.die, op.block, erases),
                OpKind::Read if !w.quiet() => {
                    let codewords = c.codewords(&op, sub_slot);
                    let outcome = w.read(op.die, op.block, erases, codewords);
                    if w.reclaims(outcome) {
                        self.ftl.reclaim_request(op.block);
                        self.reclaim_on = true;
                    }
                    ops[i - 1].retries = retries(w, outcome);
                    if outcome != ReadOutcome::BeyondEcc {
                        continue;
                    }
                    let mut rebuilt = false;
                    if let Some(others) = self.ftl.stripe_rebuild_members(op.die, op.block, op.page, op.mask) {
                        let (reads, ok) = stripe_reads(w, &op, &others, erases, codewords);
                        rebuilt = ok;
                        let at = i;
                        i += reads.len();
                        ops.splice(at..at, reads);
                    }
                    if rebuilt {
                        w.counters.reads_rebuilt_from_parity += 1;
                    } else {
                        w.counters.reads_uncorrectable += 1;
                        self.unreadable |= op.tag == OpTag::User;
                    }
                }
                _ => {}
            }
        }
    }

    /// Runs an FTL call whose media operations take no time the host sees
    /// (a format's erases: the card is idle until it returns).
    pub(super) fn untimed<R>(&mut self, call: impl FnOnce(&mut Ftl<Recorder>) -> Result<R, FtlError>) -> Result<R, DeviceError> {
        let r = call(&mut self.ftl);
        self.ftl.media_mut().hook.ops.clear();
        Ok(r?)
    }

    /// An I/O of `len` bytes at the member's byte `offset`, its command
    /// taken at `now`: returns when it completes in the card.
    pub(super) fn io(&mut self, c: &Costs, now: Ns, (offset, len): (u64, u64), write: bool, payload: Payload) -> Result<Ns, DeviceError> {
        let first = (offset / SLOT_BYTES) as u32;
        let last = ((offset + len - 1) / SLOT_BYTES) as u32;
        self.timing.host_now = self.timing.host_now.max(now);
        if self.reclaim_on {
            self.reclaim_pace(c, now)?;
        }
        if self.ftl.free_superblocks() < self.gc_background_mark {
            // A firmware that gives background GC a time slice runs it while
            // the host is not writing (no page of host data waits for its
            // program): under writes, GC is paced by them.
            let sliced = self.gc_slice.is_some();
            if !(sliced && self.timing.buffer.programs_end > now) {
                if self.timing.gc_cpu.free_first() < now {
                    self.gc_background(c, now)?;
                } else if sliced {
                    self.gc_background_slice(c, now)?;
                }
            }
        }
        if !write {
            return self.read(c, now, offset, len, payload);
        }
        let t = self.timing.write_in(c, now, first, len);
        self.timing.map_written(first, last);
        // A partial first or last slot is merged in the buffer with the rest
        // of the slot, read from the media: the read costs die, channel and
        // read-path time, but the write is acknowledged from the buffer
        // without waiting for it (what the vendors' 512 B write latencies,
        // 13-18 us, show on every catalog card).
        let head_partial = !offset.is_multiple_of(SLOT_BYTES) || (first == last && len < SLOT_BYTES);
        let tail_partial = !(offset + len).is_multiple_of(SLOT_BYTES);
        if let Payload::Write(data) = payload {
            return self.write_data(c, t, offset, data);
        }
        let (mut done, mut recorded) = (t, None);
        for lba in first..last + 1 {
            let ack = self.timing.write_admit(c, t, (last - first + 1) as u64, &mut recorded);
            if (lba == first && head_partial) || (lba == last && last != first && tail_partial) {
                self.merge(c, ack, lba, None)?;
            }
            let die = if c.write_through { self.ftl.user_open_die() } else { None };
            self.apply(c, Start::At(ack), HostRead::NONE, |f| f.write_in_io(lba, None, (first, last)))?;
            done = done.max(self.programmed_through(c, die, ack));
        }
        Ok(done)
    }

    /// A host read: the controller that owns the first slot's die takes
    /// the command; the data leaves over the host link.
    fn read(&mut self, c: &Costs, now: Ns, offset: u64, len: u64, payload: Payload) -> Result<Ns, DeviceError> {
        let (first, last) = ((offset / SLOT_BYTES) as u32, ((offset + len - 1) / SLOT_BYTES) as u32);
        let start = Start::ReadCommand { now, slot: first, span: last - first + 1 };
        let in_stream = c.may_span_planes(len) && self.timing.streams.continues(offset, len);
        let read = c.host_read(offset, len, in_stream);
        self.unreadable = false;
        let done = match payload {
            Payload::Read(out) => self.read_data(c, (start, read), offset, out)?,
            _ => {
                let (lost, done) = self.apply(c, start, read, |f| match f.read_span(first, last) {
                    // The simulator's host sees an I/O error and goes on.
                    Err(FtlError::Lost { .. }) => Ok(true),
                    r => r.map(|()| false),
                })?;
                self.reads_lost += lost as u64;
                done
            }
        };
        let unmapped = self.ftl.span_unmapped();
        if unmapped == 0 {
            return Ok(self.timing.read_out(c, done, len));
        }
        let done = done.max(self.timing.read_unflashed(c, unmapped));
        if c.gc_on_host && self.timing.read_unmapped_all {
            // The driver's zeros are in host memory: nothing crosses the link.
            return Ok(done);
        }
        Ok(self.timing.read_out(c, done, len))
    }

    /// A data-holding read: its bytes ride on the timed read of its slots,
    /// straight into `out` when it covers whole slots. A lost LBA, or a
    /// page beyond ECC that its stripe cannot rebuild, is an I/O error,
    /// never bytes. Kept out of line: the simulator's read stays as small
    /// as it was.
    #[inline(never)]
    fn read_data(&mut self, c: &Costs, (start, read): (Start, HostRead), offset: u64, out: &mut [u8]) -> Result<Ns, DeviceError> {
        let (first, last) = ((offset / SLOT_BYTES) as u32, ((offset + out.len() as u64 - 1) / SLOT_BYTES) as u32);
        let whole = offset.is_multiple_of(SLOT_BYTES) && (out.len() as u64).is_multiple_of(SLOT_BYTES);
        let mut slots = if whole { Vec::new() } else { std::mem::take(&mut self.read_buf) };
        slots.resize(if whole { 0 } else { (last - first + 1) as usize * SLOT_BYTES as usize }, 0);
        let buf: &mut [u8] = if whole { &mut *out } else { &mut slots };
        let r = self.apply(c, start, read, |f| f.read_span_bytes(first, last, buf));
        if !whole && r.is_ok() {
            let from = (offset - first as u64 * SLOT_BYTES) as usize;
            out.copy_from_slice(&slots[from..from + out.len()]);
        }
        self.read_buf = slots;
        let ((), done) = r?;
        if std::mem::take(&mut self.unreadable) {
            return Err(DeviceError::Unreadable { offset, len: out.len() as u64 });
        }
        Ok(done)
    }

    /// When a host slot in the buffer at `ack` is acknowledged: then on a
    /// write-back card; once programmed on the die of the host's open page
    /// (`die`, as it was before the slot was placed; the page the FTL then
    /// opened where none was) on a write-through one.
    #[inline(always)]
    fn programmed_through(&mut self, c: &Costs, die: Option<u32>, ack: Ns) -> Ns {
        if !c.write_through {
            return ack;
        }
        let die = die.or_else(|| self.ftl.user_open_die()).expect("a host slot was just placed in an open page");
        self.timing.write_through(c, die, ack)
    }

    /// The slots of a data-holding write, each with its bytes (a partial
    /// slot merged with what it holds), acknowledged from the buffer. Kept
    /// out of line: the simulator's write loop stays as small as it was.
    #[inline(never)]
    fn write_data(&mut self, c: &Costs, t: Ns, offset: u64, data: &[u8]) -> Result<Ns, DeviceError> {
        let mut slot = self.slot_buf.take().unwrap_or_else(|| Box::new([0; SLOT_BYTES as usize]));
        let r = self.write_slots(c, t, offset, data, &mut slot);
        self.slot_buf = Some(slot);
        r
    }

    fn write_slots(&mut self, c: &Costs, t: Ns, offset: u64, data: &[u8], slot: &mut [u8; SLOT_BYTES as usize]) -> Result<Ns, DeviceError> {
        let (first, last) = ((offset / SLOT_BYTES) as u32, ((offset + data.len() as u64 - 1) / SLOT_BYTES) as u32);
        let (mut done, mut recorded) = (t, None);
        for lba in first..last + 1 {
            let start = lba as u64 * SLOT_BYTES;
            let (lo, hi) = (offset.max(start), (offset + data.len() as u64).min(start + SLOT_BYTES));
            let ack = self.timing.write_admit(c, t, (last - first + 1) as u64, &mut recorded);
            if hi - lo < SLOT_BYTES {
                self.merge_read(c, ack, lba, slot)?;
            }
            slot[(lo - start) as usize..(hi - start) as usize].copy_from_slice(&data[(lo - offset) as usize..(hi - offset) as usize]);
            let die = if c.write_through { self.ftl.user_open_die() } else { None };
            self.apply(c, Start::At(ack), HostRead::NONE, |f| f.write_in_io(lba, Some(&slot[..]), (first, last)))?;
            done = done.max(self.programmed_through(c, die, ack));
        }
        Ok(done)
    }

    /// The rest of a slot a write covers in part, read into `slot` once
    /// the write's slot is taken into the buffer (`ack`; the write does
    /// not wait for it), and merged (`merge`): a slot that cannot be read
    /// fails the write, which merges no guessed bytes.
    fn merge_read(&mut self, c: &Costs, ack: Ns, lba: u32, slot: &mut [u8; SLOT_BYTES as usize]) -> Result<(), DeviceError> {
        self.unreadable = false;
        self.merge(c, ack, lba, Some(&mut slot[..]))?;
        if std::mem::take(&mut self.unreadable) {
            return Err(DeviceError::Unreadable { offset: lba as u64 * SLOT_BYTES, len: SLOT_BYTES });
        }
        Ok(())
    }

    /// A partial slot's merge: the rest of slot `lba` is read from the
    /// media (into `out`, for a data-holding card) once its write is in
    /// the buffer (`ack`), and a GC thread merges it; a slot never
    /// written merges with zeros, at no cost.
    fn merge(&mut self, c: &Costs, ack: Ns, lba: u32, out: Option<&mut [u8]>) -> Result<(), DeviceError> {
        let (from, read) = self.apply(c, Start::At(ack), HostRead::NONE, |f| f.read_for_merge(lba, out))?;
        if from != ftl::ReadFrom::Unmapped {
            self.timing.merge(c, ack, read);
        }
        Ok(())
    }

    /// Background GC: while a GC thread is free before `now` and the free
    /// pool is under its mark, GC works a multi-plane page of moves at a
    /// time from when that thread freed (the work the idle thread would
    /// have done meanwhile), until every thread is busy past `now`. At
    /// most `GC_BACKGROUND_BATCHES` batches an I/O: a long idle spell is
    /// caught up over the next I/Os.
    #[inline(never)]
    fn gc_background(&mut self, c: &Costs, now: Ns) -> Result<(), DeviceError> {
        let (mark, slots) = (self.gc_background_mark, self.ftl.layout().slots_per_mpage);
        // A GC thread reads ahead of the page it is moving: work is issued
        // until the threads are busy that far past `now`.
        let horizon = now + c.gc_read_ahead_ns;
        for _ in 0..GC_BACKGROUND_BATCHES {
            let t = self.timing.gc_cpu.free_first();
            if t >= horizon {
                break;
            }
            let (steps, _) = self.apply(c, Start::At(t.min(now)), HostRead::NONE, |f| f.gc_background(mark, slots))?;
            if steps == 0 {
                break;
            }
        }
        Ok(())
    }

    /// Background GC on GC threads that host I/O keeps busy, while the
    /// host is not writing (no page of the write buffer waits for its
    /// program; under writes GC is paced by them): its share of
    /// their time since the last call is credited, and each multi-plane
    /// page of moves the credit covers is issued now and taken from the
    /// host I/Os' turn on the threads (they yield it), so that the host
    /// gives up that share while the backlog lasts.
    #[inline(never)]
    fn gc_background_slice(&mut self, c: &Costs, now: Ns) -> Result<(), DeviceError> {
        let (mark, slots) = (self.gc_background_mark, self.ftl.layout().slots_per_mpage);
        let mut s = self.gc_slice.expect("called only with a slice");
        s.credit(now);
        while s.credit_ns >= s.batch_ns {
            let busy = self.timing.gc_cpu.busy_ns;
            let (steps, _) = self.apply(c, Start::At(now), HostRead::NONE, |f| f.gc_background(mark, slots))?;
            let taken = self.timing.gc_cpu.busy_ns - busy;
            self.timing.gc_cpu.reserve_lane(now, taken);
            // An erase, or a victim chosen, costs the threads no time here:
            // at least a batch's credit is spent, so the loop ends.
            s.credit_ns -= taken.max(s.batch_ns).min(s.credit_ns);
            if steps == 0 {
                s.credit_ns = 0;
                break;
            }
        }
        self.gc_slice = Some(s);
        Ok(())
    }

    /// Read reclaim in the background, paced by host I/O.
    #[inline(never)]
    fn reclaim_pace(&mut self, c: &Costs, now: Ns) -> Result<(), DeviceError> {
        self.reclaim_ios += 1;
        if self.reclaim_ios >= RECLAIM_IOS_PER_SLOT {
            self.reclaim_ios = 0;
            // On until the queue is empty and its last victim erased.
            let (left, _) = self.apply(c, Start::At(now), HostRead::NONE, |f| f.reclaim_step(1))?;
            self.reclaim_on = left > 0;
        }
        Ok(())
    }
}

/// Background GC's share of busy GC threads (`ftl.gc_background_share`),
/// as credit of thread time accrued since the last host I/O.
#[derive(Clone, Copy)]
struct GcSlice {
    /// Parts per million of the threads' time.
    share_ppm: u64,
    threads: u64,
    /// Thread time one multi-plane page of moves takes.
    batch_ns: Ns,
    credit_ns: Ns,
    last_ns: Ns,
}

impl GcSlice {
    fn of(profile: &Profile, c: &Costs) -> Option<GcSlice> {
        let share_ppm = (profile.ftl.gc_background_share * 1e6).round() as u64;
        let batch_ns = c.gc_mpage_cpu_ns;
        (share_ppm > 0 && batch_ns > 0).then_some(GcSlice { share_ppm, threads: profile.ftl.gc_threads as u64, batch_ns, credit_ns: 0, last_ns: 0 })
    }

    /// The share of the threads' time since the last call, credited; the
    /// credit held to a batch and a half, so that a spell in which the
    /// threads were free (or the pool full) is not paid back in a burst.
    fn credit(&mut self, now: Ns) {
        let elapsed = now.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now);
        let earned = (elapsed as u128 * self.threads as u128 * self.share_ppm as u128 / 1_000_000) as u64;
        self.credit_ns = (self.credit_ns + earned).min(self.batch_ns * 3 / 2);
    }
}

/// A read's retries as the timing model charges them (beyond ECC: every
/// retry the NAND has).
fn retries(w: &Wear, outcome: ReadOutcome) -> u16 {
    match outcome {
        ReadOutcome::Retries(k) => k as u16,
        ReadOutcome::BeyondEcc => w.retries_max() as u16,
    }
}

/// The reads of a stripe's other pages (`others`) that rebuild `op`'s page
/// beyond ECC, each meeting the error model in turn; and whether parity
/// can rebuild it: only where every one of them is within ECC.
fn stripe_reads(w: &mut Wear, op: &MediaOp, others: &[u32], erases: u32, codewords: u32) -> (Vec<MediaOp>, bool) {
    let mut all_within = true;
    let reads = others
        .iter()
        .map(|&die| {
            let outcome = w.read(die, op.block, erases, codewords);
            all_within &= outcome != ReadOutcome::BeyondEcc;
            MediaOp { die, retries: retries(w, outcome), stripe_part: true, ..*op }
        })
        .collect();
    (reads, all_within)
}
