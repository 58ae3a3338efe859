//! A resource that serves one operation at a time, in virtual time.

use units::Ns;

/// Where a priority operation went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placed {
    /// In a remembered idle gap.
    Gap,
    /// At the tail, after everything reserved.
    Tail,
    /// Ahead of queued work, from this time: the work after it is pushed
    /// back by its service.
    Pushed(Ns),
}

/// Idle gaps a [`Timeline`] remembers.
pub(crate) const GAPS: usize = 4;

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
}

/// A [`Timeline`] that also serves some operations ahead of its queued work,
/// each waiting at most a bound for the one in progress (a channel's or a
/// data path's read transfers).
#[derive(Debug, Clone, Default)]
pub struct PrioTimeline {
    line: Timeline,
    /// The priority operations among themselves (a timeline of their
    /// own, gaps included), so that they cannot exceed the capacity.
    lane: Timeline,
}

impl PrioTimeline {
    /// Reserves queued work (see [`Timeline::reserve`]).
    #[inline(always)]
    pub fn reserve(&mut self, ready: Ns, service: Ns) -> Ns {
        self.line.reserve(ready, service)
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
        let ready = self.lane.reserve(ready, service) - service;
        self.line.reserve_priority_ordered(ready, service, |r| r + wait_max).0
    }
}

impl AsRef<Timeline> for PrioTimeline {
    fn as_ref(&self) -> &Timeline {
        &self.line
    }
}

impl AsRef<Timeline> for Timeline {
    fn as_ref(&self) -> &Timeline {
        self
    }
}

impl Timeline {
    /// Reserves the resource for `service` from no earlier than `ready`;
    /// returns when the service ends.
    #[inline(always)]
    pub fn reserve(&mut self, ready: Ns, service: Ns) -> Ns {
        self.busy_ns += service;
        let end = if ready >= self.free_at || ready + service > self.gap_end_max { self.append(ready, service) } else { self.reserve_behind(ready, service) };
        debug_assert!(end >= ready + service, "a service ending ({end} ns) before its ready time plus its length ({ready} + {service} ns)");
        end
    }

    /// When everything reserved so far has ended, priority operations
    /// included (one ends no later than the queued work it pushed back).
    pub fn idle_at(&self) -> Ns {
        self.free_at
    }

    /// Service time that lies before `t`: what is reserved, less the part
    /// booked after `t` (up to the tail, less the idle gaps it remembers
    /// there). A gap it has forgotten counts as busy, so this never
    /// exceeds the true figure.
    pub fn busy_by(&self, t: Ns) -> Ns {
        let idle_after: Ns =
            (0..self.gap_count as usize).map(|k| self.gaps[self.gap_at(k)]).map(|(g0, g1)| g1.min(self.free_at).saturating_sub(g0.max(t))).sum();
        let after = self.free_at.saturating_sub(t).saturating_sub(idle_after);
        self.busy_ns.saturating_sub(after)
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

    /// Reserves an operation served ahead of the queued ones (see
    /// [`PrioTimeline::reserve_priority`]) for a caller that orders the
    /// priority operations itself (`ready` no earlier than the end of the
    /// last one) and knows when the operation in progress at a time ends:
    /// `in_progress(r)`, no earlier than `r`.
    /// Returns the end, and where the operation went.
    #[inline]
    pub(crate) fn reserve_priority_ordered(&mut self, ready: Ns, service: Ns, in_progress: impl FnOnce(Ns) -> Ns) -> (Ns, Placed) {
        self.busy_ns += service;
        if ready >= self.free_at {
            return (self.append(ready, service), Placed::Tail);
        }
        let start_max = in_progress(ready);
        debug_assert!(start_max >= ready, "the operation in progress ends ({start_max} ns) before the ready time ({ready} ns)");
        let end = if ready + service <= self.gap_end_max { self.gap_fit(ready, service, start_max) } else { None };
        match end {
            Some(end) => (end, Placed::Gap),
            None if self.free_at <= start_max => (self.append(ready, service), Placed::Tail),
            None => {
                self.free_at += service;
                (start_max + service, Placed::Pushed(start_max))
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
