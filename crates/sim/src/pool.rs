//! A pool of identical servers, in virtual time.

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
    /// The priority operations among themselves (a pool of their own), so
    /// that they cannot exceed the servers' capacity.
    prio: Option<Box<Pool>>,
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
        Pool { free_at: vec![0; servers.max(1) as usize], head: 0, busy_ns: 0, prio: None }
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

    /// Holds every server for `service` from `at` (each from when it is
    /// free), and the priority operations' lane as well: an exclusive lock
    /// over the servers (a map checkpoint), which the work queued on them
    /// and every priority operation ready meanwhile wait for.
    pub fn hold_all(&mut self, at: Ns, service: Ns) {
        let k = self.servers();
        self.hold_each(at, service);
        self.prio.get_or_insert_with(|| Box::new(Pool::new(k))).hold_each(at, service);
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
        let k = self.servers();
        self.prio.get_or_insert_with(|| Box::new(Pool::new(k))).reserve(ready, service)
    }

    /// Reserves an operation the servers take ahead of the work queued
    /// but not started (a host I/O's map work ahead of GC's backlog): at
    /// once if a server is free by `ready`, else when the first of the `k`
    /// busy servers ends the unit of work in progress, taken as `unit /
    /// (k + 1)` (units of fixed length `unit`, each met at a random point:
    /// the mean of the least that `k` of them have left) or less when the
    /// backlog is shorter. The server that frees first is pushed back by
    /// `service`, so the queued work waits for it and the pool's capacity
    /// is kept; priority operations wait for one another in order.
    #[inline]
    pub fn reserve_priority(&mut self, ready: Ns, service: Ns, unit: Ns) -> Ns {
        if service == 0 {
            return ready;
        }
        let k = self.free_at.len() as u32;
        let lane = self.prio.get_or_insert_with(|| Box::new(Pool::new(k)));
        let ready = lane.reserve(ready, service) - service;
        let first = self.free_at[self.head];
        if first <= ready {
            return self.reserve(ready, service);
        }
        let start = ready + (first - ready).min(unit / (k as Ns + 1));
        self.reserve(first, service);
        start + service
    }
}
