//! The virtual-time engine. Knows nothing of flash.
//!
//! A run is a closed loop: `threads x queue_depth` host slots, each keeping
//! one I/O outstanding. Completions are events ordered by (time, host slot),
//! so ties break the same way on every run. The target computes an
//! I/O's completion time when it is issued, by reserving the resources it
//! passes through ([`Timeline`], [`Pool`]) in issue order: a FCFS queue at
//! each resource. Only completions are events, which keeps the engine at a
//! heap of `threads x queue_depth` entries whatever the device's size.

use rand::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use units::Ns;

/// The one seeded PRNG of a run (xoshiro256++: fast, and its output is fixed
/// by its definition, so a seed means the same stream on every machine).
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(Xoshiro256PlusPlus::seed_from_u64(seed))
    }
    /// Uniform in `0..n` (`n > 0`).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.gen_range(0..n)
    }
    /// Uniform in `0..1_000_000`, for shares given in parts per million.
    #[inline]
    pub fn ppm(&mut self) -> u32 {
        self.0.gen_range(0..1_000_000)
    }
}

/// A 4-ary min-heap of plain keys: shallower than a binary heap (four
/// levels for the 256 slots of 16T/16Q) and with keys that compare in one
/// instruction. The write buffer's pending pages use it; the engine's events
/// are a [`SlotTree`], checked against this heap in the tests.
#[derive(Debug, Clone, Default)]
pub struct MinHeap<K: Ord + Copy> {
    v: Vec<K>,
}

impl<K: Ord + Copy> MinHeap<K> {
    pub fn with_capacity(n: usize) -> MinHeap<K> {
        MinHeap { v: Vec::with_capacity(n) }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.v.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }
    #[inline]
    pub fn peek(&self) -> Option<K> {
        self.v.first().copied()
    }
    #[inline]
    pub fn push(&mut self, k: K) {
        let mut i = self.v.len();
        self.v.push(k);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.v[parent] <= k {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = k;
    }
    #[inline]
    pub fn pop(&mut self) -> Option<K> {
        let top = *self.v.first()?;
        let last = self.v.pop().expect("not empty");
        if !self.v.is_empty() {
            self.sift_down(last);
        }
        Some(top)
    }
    /// Replaces the smallest key with `k` (one sift down, no pop and push).
    #[inline]
    pub fn replace_top(&mut self, k: K) {
        debug_assert!(!self.v.is_empty());
        self.sift_down(k);
    }
    /// Puts `k` in place of the root. Bottom-up (Wegener): the hole goes
    /// down to a leaf along the least children without comparing with `k`,
    /// then `k` rises from there. The keys put here (a completion time
    /// after the current one, the heap's last key) mostly belong near the
    /// bottom, so the rise is short, and the way down has no branch that
    /// depends on the keys.
    #[inline]
    fn sift_down(&mut self, k: K) {
        let n = self.v.len();
        let v = &mut self.v[..];
        let mut i = 0;
        loop {
            let first = 4 * i + 1;
            let m = if first + 4 <= n {
                // A full node: the least of four children by a tournament
                // the compiler turns into conditional moves.
                let a = if v[first + 1] < v[first] { first + 1 } else { first };
                let b = if v[first + 3] < v[first + 2] { first + 3 } else { first + 2 };
                if v[b] < v[a] {
                    b
                } else {
                    a
                }
            } else if first < n {
                let mut m = first;
                for c in first + 1..n {
                    if v[c] < v[m] {
                        m = c;
                    }
                }
                m
            } else {
                break;
            };
            v[i] = v[m];
            i = m;
        }
        while i > 0 {
            let parent = (i - 1) / 4;
            if v[parent] <= k {
                break;
            }
            v[i] = v[parent];
            i = parent;
        }
        v[i] = k;
    }
}

/// The engine's event queue: one key per host slot, in a tournament (winner)
/// tree whose root is the least key. A closed loop replaces the key of the
/// slot that just completed, which costs one climb from that slot's leaf to
/// the root, a comparison per level (eight for the 256 slots of 16T/16Q)
/// and no data-dependent branch: cheaper than a heap's sift, which must
/// find its way down. Keys are unique (they carry their slot), so the order
/// of events is exactly a heap's.
#[derive(Debug, Clone)]
pub struct SlotTree {
    /// Node `i`'s children are `2i` and `2i + 1`; leaves from `leaves`.
    t: Vec<u64>,
    leaves: usize,
}

impl SlotTree {
    /// `slots` leaves, every key `u64::MAX` (no event).
    pub fn new(slots: usize) -> SlotTree {
        let leaves = slots.max(1).next_power_of_two();
        SlotTree { t: vec![u64::MAX; 2 * leaves], leaves }
    }
    /// The least key.
    #[inline]
    pub fn min(&self) -> u64 {
        self.t[1]
    }
    /// Sets `slot`'s key.
    #[inline]
    pub fn set(&mut self, slot: usize, key: u64) {
        let mut i = self.leaves + slot;
        let t = &mut self.t[..];
        t[i] = key;
        let mut k = key;
        while i > 1 {
            // SAFETY: `i < 2 * leaves = t.len()` (checked by the store
            // above), and `i ^ 1` and `i / 2` are below `i` or beside it.
            unsafe {
                k = k.min(*t.get_unchecked(i ^ 1));
                i >>= 1;
                *t.get_unchecked_mut(i) = k;
            }
        }
    }
    /// Applies `f` to every key but the empty ones; `f` must keep their
    /// order.
    pub fn map_keys(&mut self, f: impl Fn(u64) -> u64) {
        for k in &mut self.t {
            if *k != u64::MAX {
                *k = f(*k);
            }
        }
    }
}

/// Idle gaps a [`Timeline`] remembers.
const GAPS: usize = 4;

/// One resource that serves one operation at a time (a die, a channel bus,
/// a data path).
///
/// Operations are reserved when they are issued, and some are issued with a
/// ready time well ahead of others (a GC program waits for its data to be
/// read; a host read's transfer waits for its die). A plain "free at" would
/// queue every later operation behind such a reservation and leave the time
/// before it idle, which no real scheduler does. So the timeline remembers
/// the last few idle gaps that future reservations left, and an operation
/// that fits in one runs there: what a controller that dispatches to a free
/// die or bus does.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    pub free_at: Ns,
    pub busy_ns: Ns,
    /// A ring of up to `GAPS` gaps, oldest first from `gap_head`.
    gaps: [(Ns, Ns); GAPS],
    gap_head: u8,
    gap_count: u8,
    /// No remembered gap ends after this (an upper bound, exact after a
    /// search that found no room): most searches end here.
    gap_end_max: Ns,
    /// The priority operations among themselves (a timeline of their
    /// own, gaps included), so that they cannot exceed the capacity.
    prio: Option<Box<Timeline>>,
}

impl Timeline {
    /// Reserves the resource for `service` from no earlier than `ready`;
    /// returns when the service ends.
    #[inline(always)]
    pub fn reserve(&mut self, ready: Ns, service: Ns) -> Ns {
        self.busy_ns += service;
        if ready >= self.free_at || ready + service > self.gap_end_max {
            return self.append(ready, service);
        }
        self.reserve_behind(ready, service)
    }

    /// When everything reserved so far has ended, priority operations
    /// included.
    pub fn idle_at(&self) -> Ns {
        self.free_at.max(self.prio.as_ref().map_or(0, |p| p.idle_at()))
    }

    /// At the tail: after everything reserved so far, or at `ready`, leaving
    /// a gap.
    #[inline(always)]
    fn append(&mut self, ready: Ns, service: Ns) -> Ns {
        if ready > self.free_at {
            self.gap_add(self.free_at, ready);
            self.free_at = ready;
        }
        self.free_at += service;
        self.free_at
    }

    /// Reserves an operation that the resource serves ahead of those
    /// queued but not started (a controller's read priority): in a gap if
    /// one fits, else after at most `wait_max` (the longest operation that
    /// may be in progress at `ready`, which is not suspended), pushing the
    /// queued work back by `service` so that the resource's capacity is
    /// kept. Without it, a read issued while a full write buffer's programs
    /// are reserved far ahead would wait for all of them. Priority
    /// operations wait for one another in order.
    #[inline]
    pub fn reserve_priority(&mut self, ready: Ns, service: Ns, wait_max: Ns) -> Ns {
        self.busy_ns += service;
        let lane = self.prio.get_or_insert_with(Default::default);
        let ready = lane.reserve(ready, service) - service;
        let end = if ready < self.free_at && ready + service <= self.gap_end_max { self.gap_fit(ready, service, ready + wait_max) } else { None };
        match end {
            Some(end) => end,
            None if self.free_at <= ready + wait_max => self.append(ready, service),
            None => {
                self.free_at += service;
                ready + wait_max + service
            }
        }
    }

    /// Ready before the tail: the first remembered gap (oldest first) that
    /// the operation fits in, else the tail.
    #[inline(never)]
    fn reserve_behind(&mut self, ready: Ns, service: Ns) -> Ns {
        match self.gap_fit(ready, service, Ns::MAX) {
            Some(end) => end,
            None => {
                self.gap_end_max = (0..self.gap_count as usize).map(|k| self.gaps[self.gap_at(k)].1).max().unwrap_or(0);
                self.append(ready, service)
            }
        }
    }

    /// Places the operation in the first remembered gap (oldest first) it
    /// fits in, starting no later than `start_max`; its end, or `None`.
    #[inline]
    fn gap_fit(&mut self, ready: Ns, service: Ns, start_max: Ns) -> Option<Ns> {
        for k in 0..self.gap_count as usize {
            let i = self.gap_at(k);
            let (g0, g1) = self.gaps[i];
            let start = ready.max(g0);
            if start + service <= g1 && start <= start_max {
                let end = start + service;
                // Keep the larger remainder of the gap: the part after
                // the operation (the part before is usually in the past).
                if g1 - end >= start - g0 {
                    self.gaps[i] = (end, g1);
                } else {
                    self.gaps[i] = (g0, start);
                }
                if self.gaps[i].1 <= self.gaps[i].0 {
                    self.gap_remove(k);
                }
                return Some(end);
            }
        }
        None
    }

    /// Where the `k`-th gap (oldest first) sits in the ring.
    #[inline(always)]
    fn gap_at(&self, k: usize) -> usize {
        (self.gap_head as usize + k) % GAPS
    }

    /// Removes the `k`-th gap (oldest first), keeping the others' order.
    fn gap_remove(&mut self, k: usize) {
        let n = self.gap_count as usize;
        for j in k..n - 1 {
            self.gaps[self.gap_at(j)] = self.gaps[self.gap_at(j + 1)];
        }
        self.gap_count -= 1;
    }

    #[inline(always)]
    fn gap_add(&mut self, from: Ns, to: Ns) {
        self.gap_end_max = self.gap_end_max.max(to);
        if self.gap_count as usize == GAPS {
            // Forget the earliest gap: the likeliest to be in the past.
            self.gaps[self.gap_head as usize] = (from, to);
            self.gap_head = ((self.gap_head as usize + 1) % GAPS) as u8;
        } else {
            let i = self.gap_at(self.gap_count as usize);
            self.gaps[i] = (from, to);
            self.gap_count += 1;
        }
    }
}

/// `k` identical servers (host CPU cores): an operation takes the one that
/// frees first. The servers are identical, so only their free times are
/// kept, sorted, in a ring: the first frees first. Taking it and putting
/// back its new free time is one step when times arrive in order (the host
/// CPU: ready times never go back and the service time is fixed), a short
/// insertion otherwise.
#[derive(Debug, Clone)]
pub struct Pool {
    free_at: Vec<Ns>,
    head: usize,
    /// Service time reserved so far, summed over the servers.
    pub busy_ns: Ns,
}

impl Pool {
    /// The number of servers.
    pub fn servers(&self) -> u32 {
        self.free_at.len() as u32
    }
    /// When every server is free.
    pub fn idle_at(&self) -> Ns {
        self.free_at.iter().copied().max().unwrap_or(0)
    }
    pub fn new(servers: u32) -> Pool {
        Pool { free_at: vec![0; servers.max(1) as usize], head: 0, busy_ns: 0 }
    }
    #[inline]
    pub fn reserve(&mut self, ready: Ns, service: Ns) -> Ns {
        if service == 0 {
            return ready;
        }
        self.busy_ns += service;
        let k = self.free_at.len();
        let end = ready.max(self.free_at[self.head]) + service;
        // The first server's place becomes the last; sink the new time
        // towards the front until the order holds.
        let mut i = self.head;
        self.head = if self.head + 1 == k { 0 } else { self.head + 1 };
        for _ in 1..k {
            let prev = if i == 0 { k - 1 } else { i - 1 };
            if self.free_at[prev] <= end {
                break;
            }
            self.free_at[i] = self.free_at[prev];
            i = prev;
        }
        self.free_at[i] = end;
        end
    }
}

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
pub struct Engine {
    pub now: Ns,
    pub rng: Rng,
}

impl Engine {
    pub fn new(seed: u64) -> Engine {
        Engine { now: 0, rng: Rng::new(seed) }
    }

    /// Runs `threads x queue_depth` closed-loop slots until the observer
    /// says stop. Outstanding I/Os at the stop are abandoned (their effect on
    /// the device stays; their latency is not recorded), and the clock is
    /// left at the last completion seen.
    pub fn run<T: Target, W: Workload, O: Observer<T>>(
        &mut self,
        target: &mut T,
        workload: &mut W,
        threads: u32,
        queue_depth: u32,
        observer: &mut O,
    ) -> Result<(), T::Error> {
        let slots = (threads * queue_depth) as usize;
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
        // An event's key: completion time since `epoch`, then slot, in one
        // u64 (keys compare in one instruction). The slot needs 20 bits; the
        // 44 above them hold 4.9 virtual hours, and the epoch moves up every
        // 73 virtual minutes (every key is rebased, order unchanged), so a
        // completion may lie up to 3.6 virtual hours ahead of the clock.
        const SLOT_BITS: u32 = 20;
        const TIME_LIMIT: Ns = 1 << (64 - SLOT_BITS);
        const REBASE_AFTER: Ns = TIME_LIMIT / 4;
        assert!(slots <= 1 << SLOT_BITS, "at most 2^20 host slots");
        let mut epoch = self.now;
        let key = |epoch: Ns, t: Ns, slot: usize| {
            let rel = t - epoch;
            assert!(rel < TIME_LIMIT, "an I/O completes {rel} ns ahead of the event epoch: beyond the engine's range");
            rel << SLOT_BITS | slot as u64
        };
        let mut events = SlotTree::new(slots);
        let start = self.now;
        for slot in 0..slots {
            let io = next(&mut self.rng, target);
            let done = target.submit(start, &io)?;
            debug_assert!(done >= start);
            ios.push((start, io));
            events.set(slot, key(epoch, done, slot));
        }
        // Every completion is followed by its slot's next I/O: the slot's
        // key is replaced in place.
        loop {
            let top = events.min();
            let done = epoch + (top >> SLOT_BITS);
            let slot = (top & ((1 << SLOT_BITS) - 1)) as usize;
            self.now = done;
            let (issued, io) = ios[slot];
            if !observer.complete(target, issued, done, &io) {
                break;
            }
            let io = next(&mut self.rng, target);
            let t = target.submit(done, &io)?;
            debug_assert!(t >= done);
            ios[slot] = (done, io);
            if done - epoch >= REBASE_AFTER {
                let shift = (done - epoch) << SLOT_BITS;
                events.map_keys(|k| k - shift);
                epoch = done;
            }
            events.set(slot, key(epoch, t, slot));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A target with one server of fixed service time: the closed loop must
    /// reach exactly its throughput, and latency must follow Little's law.
    struct OneServer(Timeline);
    impl Target for OneServer {
        type Error = ();
        fn submit(&mut self, now: Ns, _: &Io) -> Result<Ns, ()> {
            Ok(self.0.reserve(now, 1_000))
        }
    }
    struct Fixed;
    impl Workload for Fixed {
        fn next_io(&mut self, _: &mut Rng) -> Io {
            Io { offset_bytes: 0, len_bytes: 4096, write: false }
        }
    }
    struct Count {
        n: u64,
        lat_sum: u64,
        last: Ns,
    }
    impl Observer<OneServer> for Count {
        fn complete(&mut self, _: &mut OneServer, issued: Ns, completed: Ns, _: &Io) -> bool {
            self.n += 1;
            self.lat_sum += completed - issued;
            self.last = completed;
            self.n < 100_000
        }
    }

    #[test]
    fn closed_loop_obeys_littles_law() {
        let mut e = Engine::new(1);
        let mut c = Count { n: 0, lat_sum: 0, last: 0 };
        e.run(&mut OneServer(Timeline::default()), &mut Fixed, 4, 8, &mut c).unwrap();
        // One I/O a microsecond, 32 outstanding: 32 us each.
        assert_eq!(c.last, 100_000 * 1_000);
        let avg = c.lat_sum / c.n;
        assert!((31_000..=32_000).contains(&avg), "{avg}");
    }

    #[test]
    fn timeline_fills_the_gaps_future_reservations_leave() {
        let mut t = Timeline::default();
        assert_eq!(t.reserve(0, 10), 10);
        // Ready only at 100: the gap 10..100 is kept.
        assert_eq!(t.reserve(100, 10), 110);
        // Ready at 5, fits in the gap: runs at 10, not after 110.
        assert_eq!(t.reserve(5, 20), 30);
        assert_eq!(t.reserve(0, 70), 100);
        // The gap is used up: the next one goes to the tail.
        assert_eq!(t.reserve(0, 5), 115);
        assert_eq!(t.busy_ns, 115);
    }

    /// The timeline's rule written plainly: a list of at most `GAPS` gaps,
    /// oldest first; an operation takes the first that fits, else the tail.
    fn reserve_by_list(gaps: &mut Vec<(Ns, Ns)>, free_at: &mut Ns, ready: Ns, service: Ns) -> Ns {
        if ready < *free_at {
            if let Some(k) = gaps.iter().position(|&(g0, g1)| ready.max(g0) + service <= g1) {
                let (g0, g1) = gaps[k];
                let start = ready.max(g0);
                let end = start + service;
                gaps[k] = if g1 - end >= start - g0 { (end, g1) } else { (g0, start) };
                if gaps[k].1 <= gaps[k].0 {
                    gaps.remove(k);
                }
                return end;
            }
        }
        if ready > *free_at {
            if gaps.len() == GAPS {
                gaps.remove(0);
            }
            gaps.push((*free_at, ready));
            *free_at = ready;
        }
        *free_at += service;
        *free_at
    }

    #[test]
    fn timeline_equals_a_list_of_gaps() {
        let mut r = Rng::new(11);
        for spread in [50u64, 2_000, 100_000] {
            let (mut t, mut gaps, mut free_at) = (Timeline::default(), Vec::new(), 0);
            let mut now = 0;
            for i in 0..50_000 {
                now += r.below(40);
                // Mostly ready now, some well ahead (a GC program, a
                // transfer after a sense), as the device issues them.
                let ready = if r.below(4) == 0 { now + r.below(spread) } else { now };
                let service = 1 + r.below(60);
                let want = reserve_by_list(&mut gaps, &mut free_at, ready, service);
                assert_eq!(t.reserve(ready, service), want, "spread {spread}, operation {i}");
            }
        }
    }

    #[test]
    fn min_heap_sorts() {
        let mut h = MinHeap::with_capacity(8);
        let mut r = Rng::new(5);
        let mut all: Vec<u64> = (0..1000).map(|_| r.below(500)).collect();
        for &x in &all {
            h.push(x);
        }
        h.replace_top(250);
        all.sort();
        all[0] = 250;
        all.sort();
        let out: Vec<u64> = std::iter::from_fn(|| h.pop()).collect();
        assert_eq!(out, all);
        assert!(h.is_empty() && h.peek().is_none());
    }

    #[test]
    fn slot_tree_orders_events_as_a_heap_does() {
        let mut r = Rng::new(9);
        for slots in [1usize, 3, 256, 300] {
            let mut tree = SlotTree::new(slots);
            let mut heap = MinHeap::with_capacity(slots);
            let key = |t: u64, slot: usize| t << 20 | slot as u64;
            for slot in 0..slots {
                let k = key(r.below(1000), slot);
                tree.set(slot, k);
                heap.push(k);
            }
            // A closed loop: the least event's slot gets a later one.
            for _ in 0..20_000 {
                let top = heap.peek().unwrap();
                assert_eq!(tree.min(), top);
                let slot = (top & 0xfffff) as usize;
                let next = key((top >> 20) + 1 + r.below(5000), slot);
                heap.replace_top(next);
                tree.set(slot, next);
            }
            tree.map_keys(|k| k - (1 << 20));
            assert_eq!(tree.min(), heap.peek().unwrap() - (1 << 20));
        }
    }

    #[test]
    fn pool_takes_the_first_free_server() {
        let mut p = Pool::new(2);
        assert_eq!(p.reserve(0, 10), 10);
        assert_eq!(p.reserve(0, 10), 10);
        assert_eq!(p.reserve(0, 10), 20);
        assert_eq!(p.reserve(100, 0), 100);
        // Out of order: a short job ready early takes the server freeing
        // first, whatever the order of the reservations.
        let mut p = Pool::new(3);
        assert_eq!(p.reserve(50, 100), 150);
        assert_eq!(p.reserve(0, 10), 10);
        assert_eq!(p.reserve(0, 10), 10);
        assert_eq!(p.reserve(0, 10), 20);
        assert_eq!(p.reserve(0, 10), 20);
        assert_eq!(p.reserve(140, 5), 145);
        assert_eq!(p.reserve(0, 1), 21);
        assert_eq!(p.reserve(0, 1), 22);
    }

    #[test]
    fn pool_equals_a_heap_of_free_times() {
        let mut r = Rng::new(3);
        for k in [1u32, 2, 3, 12] {
            let mut p = Pool::new(k);
            let mut h: MinHeap<Ns> = MinHeap::with_capacity(k as usize);
            (0..k).for_each(|_| h.push(0));
            for _ in 0..10_000 {
                let (ready, service) = (r.below(100_000), 1 + r.below(5_000));
                let t = h.pop().unwrap();
                let want = ready.max(t) + service;
                h.push(want);
                assert_eq!(p.reserve(ready, service), want);
            }
        }
    }

    const GOLDEN_SEED_7: [u64; 5] = [55, 172, 717, 427, 963];

    #[test]
    fn rng_stream_is_fixed_by_the_seed() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(7);
                move |_| r.below(1000)
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(7);
                move |_| r.below(1000)
            })
            .collect();
        assert_eq!(a, b);
        // Pinned: a changed PRNG or range reduction would silently change
        // every seeded result.
        assert_eq!(a, GOLDEN_SEED_7);
    }
}
