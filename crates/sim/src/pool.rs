//! A pool of identical servers, in virtual time.

use crate::Timeline;
use units::Ns;

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
    /// The priority operations among themselves, so that they cannot
    /// exceed the servers' capacity: a timeline `k` times as fast as one
    /// server that keeps its idle gaps, so that one booked ahead (ready
    /// later, as a merge after its write's wait) does not hold back one
    /// ready now.
    prio: Timeline,
    /// Draws made of where a priority operation meets the work in
    /// progress (each a number fixed by its count, so a run repeats).
    draws: u64,
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
    /// Service time that lies before `t`: what is reserved, less each
    /// server's time booked after `t` (counted busy through to its free
    /// time, so this never exceeds the true figure).
    pub fn busy_by(&self, t: Ns) -> Ns {
        let after: Ns = self.free_at.iter().map(|&f| f.saturating_sub(t)).sum();
        self.busy_ns.saturating_sub(after)
    }
    /// When the first server is free.
    #[inline]
    pub fn free_first(&self) -> Ns {
        self.free_at[self.head]
    }
    pub fn new(servers: u32) -> Pool {
        Pool { free_at: vec![0; servers.max(1) as usize], head: 0, busy_ns: 0, prio: Timeline::default(), draws: 0 }
    }
    #[inline]
    pub fn reserve(&mut self, ready: Ns, service: Ns) -> Ns {
        if service == 0 {
            return ready;
        }
        self.busy_ns += service;
        let k = self.free_at.len();
        let end = ready.max(self.free_at[self.head]) + service;
        if k == 1 {
            self.free_at[0] = end;
            return end;
        }
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

    /// Holds every server for `service` from `at` (each from when it is
    /// free), and the priority operations' lane as well: an exclusive lock
    /// over the servers (a map checkpoint), which the work queued on them
    /// and every priority operation ready meanwhile wait for.
    pub fn hold_all(&mut self, at: Ns, service: Ns) {
        self.hold_each(at, service);
        self.prio.reserve(at, service);
    }

    /// A priority operation's `service` on the lane, which runs at the
    /// pool's speed.
    #[inline(always)]
    fn lane_ns(&self, service: Ns) -> Ns {
        match self.free_at.len() {
            1 => service,
            k => service.div_ceil(k as Ns),
        }
    }

    /// Every server busy for `service` from `at` or when it is free. The
    /// ring stays in order: a later free time stays the later.
    fn hold_each(&mut self, at: Ns, service: Ns) {
        for f in &mut self.free_at {
            *f = (*f).max(at) + service;
        }
        self.busy_ns += service * self.free_at.len() as Ns;
    }

    /// Reserves `service` among the priority operations alone, from
    /// `ready`, for work already reserved on the servers that the priority
    /// operations must yield to (a time slice the servers' scheduler gives
    /// a background task): the priority operations after it wait for it.
    /// Returns when its slice ends.
    pub fn reserve_lane(&mut self, ready: Ns, service: Ns) -> Ns {
        let s = self.lane_ns(service);
        self.prio.reserve(ready, s) - s + service
    }

    /// Reserves an operation the servers take ahead of the work queued
    /// but not started (a host I/O's map work ahead of GC's backlog): at
    /// once if a server is free by `ready`, else when the first of the `k`
    /// busy servers ends the unit of work in progress (units of fixed
    /// length `unit`, each met at a random point: the least that `k` of
    /// them have left, `unit / (k + 1)` on average) or sooner when the
    /// backlog is shorter. The server that frees first is pushed back by
    /// `service`, so the queued work waits for it and the pool's capacity
    /// is kept; priority operations wait for one another in order.
    #[inline]
    pub fn reserve_priority(&mut self, ready: Ns, service: Ns, unit: Ns) -> Ns {
        if service == 0 {
            return ready;
        }
        let s = self.lane_ns(service);
        let ready = self.prio.reserve(ready, s) - s;
        let first = self.free_at[self.head];
        if first <= ready {
            return self.reserve(ready, service);
        }
        self.reserve_ahead(ready, service, unit)
    }

    /// [`Pool::reserve_priority`] when every server is busy at `ready`
    /// (the common case: GC keeps its threads busy).
    #[inline(always)]
    fn reserve_ahead(&mut self, ready: Ns, service: Ns, unit: Ns) -> Ns {
        let first = self.free_at[self.head];
        let start = ready + (first - ready).min(self.unit_left(unit));
        self.reserve(first, service);
        start + service
    }

    /// What the first of the `k` busy servers has left of its unit of
    /// work in progress, each met at a random point: the least of `k`
    /// draws in `0..unit`.
    #[inline]
    fn unit_left(&mut self, unit: Ns) -> Ns {
        if unit == 0 {
            return 0;
        }
        let k = self.free_at.len() as u64;
        // A draw's 64 bits scaled onto 0..unit (no division).
        let draw = |i: u64| ((units::keyed(i) as u128 * unit as u128) >> 64) as Ns;
        let left = if k == 1 { draw(self.draws + 1) } else { (1..=k).map(|i| draw(self.draws + i)).min().unwrap_or(0) };
        self.draws += k;
        left
    }
}
