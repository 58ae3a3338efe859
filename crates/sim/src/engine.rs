//! The closed loop: host slots, their I/Os, and the target that times them.

use crate::{Gate, Rng, SlotTree};
use units::Ns;

/// One host I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub write: bool,
}

/// What a closed loop drives: a device that accepts an I/O at `now` and says
/// when it completes (never before `now`).
pub trait Target {
    type Error;
    fn submit(&mut self, now: Ns, io: &Io) -> Result<Ns, Self::Error>;
    /// A hint that `io` will be submitted soon: `stage` 0 when it is made
    /// (up to [`LOOKAHEAD`] I/Os ahead), 1 about half a lookahead later.
    /// A target may prefetch what it will touch; it must not change state.
    #[inline]
    fn prefetch(&self, _io: &Io, _stage: u8) {}
    /// The most commands the device holds at once (its driver's tags, its
    /// command slots): more wait in the host, first come first served,
    /// and are submitted as earlier ones complete. `None`: no limit.
    fn command_slots(&self) -> Option<u32> {
        None
    }
}

/// I/Os the engine makes ahead of their submission, so that a target can
/// prefetch their mapping entries. The workload's stream does not depend on
/// the device, so making I/Os early changes no result.
pub const LOOKAHEAD: usize = 32;

/// Makes the next I/O of a host thread.
pub trait Workload {
    fn next_io(&mut self, rng: &mut Rng) -> Io;
}

/// Sees every completion, with the target (to sample its state); says
/// whether the run goes on.
pub trait Observer<T> {
    fn complete(&mut self, target: &mut T, issued: Ns, completed: Ns, io: &Io) -> bool;
}

/// Tops up the ring of I/Os made ahead (`len` of them from `head`) and
/// prefetches for them: stage 1 for those already there, stage 0 for the new.
#[inline(never)]
fn lookahead_refill<T: Target, W: Workload>(ahead: &mut [Io; LOOKAHEAD], head: usize, len: &mut usize, rng: &mut Rng, workload: &mut W, target: &T) {
    let old = *len;
    while *len < LOOKAHEAD {
        ahead[(head + *len) % LOOKAHEAD] = workload.next_io(rng);
        *len += 1;
    }
    // Tight loops of prefetches only, so that as many as fit in the reorder
    // window are in flight at once.
    for k in 0..old {
        target.prefetch(&ahead[(head + k) % LOOKAHEAD], 1);
    }
    for k in old..LOOKAHEAD {
        target.prefetch(&ahead[(head + k) % LOOKAHEAD], 0);
    }
}

/// The state of a closed loop between runs: the clock and the PRNG carry
/// over from preconditioning to the main test, as on a real device.
#[derive(Clone)]
pub struct Engine {
    pub now: Ns,
    pub rng: Rng,
    /// When the I/Os still at the device at the last stop complete (the
    /// stop itself if none was): a host's benchmark drains them before its
    /// next test starts, so no two tests' I/Os are at the device at once.
    pub drained_at: Ns,
}

impl Engine {
    pub fn new(seed: u64) -> Engine {
        Engine { now: 0, rng: Rng::new(seed), drained_at: 0 }
    }

    /// Moves the clock to when the I/Os left at the device by the last
    /// stop complete.
    pub fn drain(&mut self) {
        self.now = self.now.max(self.drained_at);
    }

    /// Runs `threads x queue_depth` closed-loop slots until the observer
    /// says stop. Outstanding I/Os at the stop are abandoned (their effect on
    /// the device stays; their latency is not recorded; `drained_at` says
    /// when the last of them completes), and the clock is left at the last
    /// completion seen. Where the target holds fewer
    /// commands than there are slots ([`Target::command_slots`]), the rest
    /// wait in the host in the order they were issued, each submitted as a
    /// command completes; an I/O's latency runs from its issue, its wait
    /// included. A waiting I/O is not submitted (its effect on the device
    /// does not happen) until it has a command slot.
    pub fn run<T: Target, W: Workload, O: Observer<T>>(
        &mut self,
        target: &mut T,
        workload: &mut W,
        threads: u32,
        queue_depth: u32,
        observer: &mut O,
    ) -> Result<(), T::Error> {
        let slots = (threads * queue_depth) as usize;
        // The device's command slots, where it has fewer than the host's;
        // the loop is compiled for each case, so that a device without a
        // limit pays nothing for it.
        match target.command_slots().filter(|&n| (n as usize) < slots) {
            Some(n) => self.run_admitted(target, workload, slots, observer, &mut Gate::new(n)),
            None => self.run_admitted(target, workload, slots, observer, &mut Open),
        }
    }

    fn run_admitted<T: Target, W: Workload, O: Observer<T>, A: Admission>(
        &mut self,
        target: &mut T,
        workload: &mut W,
        slots: usize,
        observer: &mut O,
        admission: &mut A,
    ) -> Result<(), T::Error> {
        // I/Os are made in batches of LOOKAHEAD / 2, and their prefetches
        // issued back to back: a prefetch that misses the TLB holds up the
        // pipeline until its page walk ends, and walks issued together
        // overlap. Stage 1 goes to the previous batch, half a lookahead
        // before its I/Os are submitted.
        const BATCH: usize = LOOKAHEAD / 2;
        // A ring of the I/Os made ahead: `len` of them from `head`.
        let mut ahead = [Io { offset_bytes: 0, len_bytes: 0, write: false }; LOOKAHEAD];
        let (mut head, mut len) = (0usize, 0usize);
        let mut next = |rng: &mut Rng, target: &T| {
            if len <= BATCH {
                lookahead_refill(&mut ahead, head, &mut len, rng, workload, target);
            }
            let io = ahead[head];
            head = (head + 1) % LOOKAHEAD;
            len -= 1;
            io
        };
        let mut ios = Vec::with_capacity(slots);
        assert!(slots <= 1 << SLOT_BITS, "at most 2^20 host slots");
        let mut keys = Keys { epoch: self.now };
        let mut events = SlotTree::new(slots);
        let start = self.now;
        // I/Os beyond the device's command slots wait in the host, with
        // their issue times. An event stands for an I/O at the device, not
        // for a host slot: a completion hands its event to the I/O that
        // has waited longest (one key replaced, as without a limit), and
        // its host slot's next I/O queues behind the others.
        for _ in 0..slots {
            let io = next(&mut self.rng, target);
            if !admission.take((start, io)) {
                continue;
            }
            let slot = ios.len();
            let done = target.submit(start, &io)?;
            ios.push((start, io));
            set(&mut events, &keys, slot, start, done);
        }
        // Every completion is followed by its slot's next I/O: the slot's
        // key is replaced in place.
        loop {
            let (done, slot) = keys.event(events.min());
            self.now = done;
            let (issued, io) = ios[slot];
            if !observer.complete(target, issued, done, &io) {
                self.drained_at = events.max().map_or(done, |k| keys.event(k).0.max(done));
                break;
            }
            keys.rebase_when_due(done, &mut events);
            let io = next(&mut self.rng, target);
            let (issued, io) = admission.pass((done, io));
            let t = target.submit(done, &io)?;
            ios[slot] = (issued, io);
            set(&mut events, &keys, slot, done, t);
        }
        Ok(())
    }
}

/// Gives `slot`'s I/O, submitted at `now`, its completion key.
#[inline(always)]
fn set(events: &mut SlotTree, keys: &Keys, slot: usize, now: Ns, done: Ns) {
    debug_assert!(done >= now, "a completion ({done} ns) before its submission ({now} ns)");
    events.set(slot, keys.key(done, slot));
}

/// How a closed loop's I/Os reach the device: all at once, or through
/// its command slots.
trait Admission {
    /// An I/O issued at the start: whether it reaches the device now.
    fn take(&mut self, io: (Ns, Io)) -> bool;
    /// An I/O completed and its slot issued `next` (issue time, I/O): the
    /// I/O the device takes now.
    fn pass(&mut self, next: (Ns, Io)) -> (Ns, Io);
}

/// No limit: every I/O reaches the device when issued.
struct Open;

impl Admission for Open {
    #[inline(always)]
    fn take(&mut self, _: (Ns, Io)) -> bool {
        true
    }
    #[inline(always)]
    fn pass(&mut self, next: (Ns, Io)) -> (Ns, Io) {
        next
    }
}

impl Admission for Gate<(Ns, Io)> {
    #[inline(always)]
    fn take(&mut self, io: (Ns, Io)) -> bool {
        Gate::take(self, io)
    }
    #[inline(always)]
    fn pass(&mut self, next: (Ns, Io)) -> (Ns, Io) {
        Gate::pass(self, next)
    }
}

/// An event's key: completion time since `epoch`, then slot, in one u64
/// (keys compare in one instruction). The slot needs 20 bits; the 44 above
/// them hold 4.9 virtual hours, and the epoch moves up every 73 virtual
/// minutes (every key is rebased, order unchanged), so a completion may lie
/// up to 3.6 virtual hours ahead of the clock.
const SLOT_BITS: u32 = 20;
const TIME_LIMIT: Ns = 1 << (64 - SLOT_BITS);
const REBASE_AFTER: Ns = TIME_LIMIT / 4;

struct Keys {
    epoch: Ns,
}

impl Keys {
    #[inline(always)]
    fn key(&self, t: Ns, slot: usize) -> u64 {
        let rel = t - self.epoch;
        assert!(rel < TIME_LIMIT, "an I/O completes {rel} ns ahead of the event epoch: beyond the engine's range");
        rel << SLOT_BITS | slot as u64
    }

    /// The completion time and slot of a key.
    #[inline(always)]
    fn event(&self, key: u64) -> (Ns, usize) {
        (self.epoch + (key >> SLOT_BITS), (key & ((1 << SLOT_BITS) - 1)) as usize)
    }

    /// Moves the epoch up to `now` once it is `REBASE_AFTER` behind,
    /// rebasing every key (their order unchanged).
    #[inline(always)]
    fn rebase_when_due(&mut self, now: Ns, events: &mut SlotTree) {
        if now - self.epoch >= REBASE_AFTER {
            let shift = (now - self.epoch) << SLOT_BITS;
            events.map_keys(|k| k - shift);
            self.epoch = now;
        }
    }
}
