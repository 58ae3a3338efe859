//! A resource that knows its queued operations one by one (a flash die).

use crate::timeline::Placed;
use crate::Timeline;
use std::collections::VecDeque;
use units::Ns;

/// Operations a trail keeps at most (the host's clock prunes it long
/// before): older ones are forgotten, and a priority operation that
/// reaches back past them is served as on an idle die.
const TRAIL_MAX: usize = 4096;

/// Operations a trail keeps before the host's clock prunes it.
const TRAIL_SHORT: usize = 64;

/// A [`Timeline`] that remembers its queued operations one by one (those
/// at the tail and those placed in its idle gaps), so that a priority
/// operation (a host read on a die) waits for the operation actually in
/// progress at its ready time, not for the longest one that might be: a
/// read that arrives during a program waits for what is left of that
/// program, behind an erase for what is left of the erase, on an idle die
/// for nothing. It records every operation, on a die that is only written
/// too: the first read after a write phase meets the operation actually in
/// progress (the host's clock prunes the record, so a write phase keeps
/// only what is booked ahead of it).
#[derive(Debug, Clone)]
pub struct OpTimeline {
    line: Timeline,
    trail: Trail,
    /// The longest operation the resource serves: the trail keeps the
    /// operations that end this long before a priority operation's ready
    /// time (ready times come nearly in order).
    wait_max: Ns,
    /// When the last priority operation ends: the next one starts no
    /// earlier (two reads behind one program run one after the other).
    prio_end: Ns,
}

/// The queued operations, in order, each as the idle time before it and
/// the time the die is committed to it (so that pushing every later
/// operation back is one addition).
#[derive(Debug, Clone, Default)]
struct Trail {
    /// Nanoseconds, 8 bytes an operation: an idle time that does not fit
    /// in 32 bits (over 4 s) starts the trail anew.
    ops: VecDeque<(u32, u32)>,
    /// Where the idle time before the first operation begins.
    base: Ns,
    /// When the last operation ends.
    tail: Ns,
}

/// Where a ready time falls in the trail.
#[derive(Debug, Clone, Copy)]
enum At {
    /// In the `i`-th operation, which ends at the time given.
    In(usize, Ns),
    /// In the idle time before the `i`-th, which starts at the time given.
    Before(usize, Ns),
    /// After the last.
    After,
}

impl OpTimeline {
    pub fn new(wait_max: Ns) -> OpTimeline {
        OpTimeline { line: Timeline::default(), trail: Trail::default(), wait_max, prio_end: 0 }
    }

    /// Reserves the resource for `service` from no earlier than `ready`
    /// (queued work, in issue order); returns when the service ends.
    #[inline(always)]
    pub fn reserve(&mut self, ready: Ns, service: Ns) -> Ns {
        self.reserve_loaded(ready, service, 0)
    }

    /// As [`OpTimeline::reserve`], for a short operation the trail does not
    /// keep (a priority operation meets what is left of it as idle time):
    /// it keeps the trail to the long operations a read must wait for.
    #[inline(always)]
    pub fn reserve_unkept(&mut self, ready: Ns, service: Ns) -> Ns {
        self.line.reserve(ready, service)
    }

    /// As [`OpTimeline::reserve`], for an operation whose data crosses the
    /// channel into the die first (a program): the die is committed to it
    /// from `load` before it starts (the page register holds its data), so
    /// a read arriving then waits for it too.
    #[inline(always)]
    pub fn reserve_loaded(&mut self, ready: Ns, service: Ns, load: Ns) -> Ns {
        let before = self.line.free_at;
        let end = self.line.reserve(ready, service);
        let start = end - service;
        if end == self.line.free_at && start >= before {
            self.trail.push(start.saturating_sub(load), end);
        } else {
            self.trail.insert(start, start.saturating_sub(load), end);
        }
        end
    }

    /// Reserves an operation served ahead of the queued ones (a host
    /// read): in an idle gap if one fits, else once the operation in
    /// progress at `ready` ends, pushing the queued work back by `service`.
    /// Priority operations wait for one another in order.
    #[inline]
    pub fn reserve_priority(&mut self, ready: Ns, service: Ns) -> Ns {
        let (trail, wait_max) = (&mut self.trail, self.wait_max);
        let mut at = At::After;
        // Behind an earlier priority operation, the die takes this one as
        // soon as that one ends: nothing else is in progress then.
        let behind = self.prio_end > ready;
        let ready = ready.max(self.prio_end);
        let (end, placed) = self.line.reserve_priority_ordered(ready, service, |r| {
            trail.forget_before(r.saturating_sub(wait_max));
            at = trail.at(r);
            match at {
                At::In(_, ends) if !behind => ends,
                _ => r,
            }
        });
        if let Placed::Pushed(_) = placed {
            self.trail.push_back_from(at, end);
        }
        self.prio_end = self.prio_end.max(end);
        end
    }

    /// Forgets the operations that end by `t`: no priority operation will
    /// be ready before (the host's clock, less the longest operation).
    #[inline]
    pub fn forget_before(&mut self, t: Ns) {
        // A short trail is left to the next priority operation, which
        // forgets what it cannot meet before it looks (and this one would
        // touch the trail's memory for nothing).
        if self.trail.ops.len() >= TRAIL_SHORT {
            self.trail.forget_before(t);
        }
    }
}

impl AsRef<Timeline> for OpTimeline {
    fn as_ref(&self) -> &Timeline {
        &self.line
    }
}

impl std::ops::Deref for OpTimeline {
    type Target = Timeline;
    fn deref(&self) -> &Timeline {
        &self.line
    }
}

impl Trail {
    /// An operation reserved at the tail, the die committed to it from
    /// `from` (not before the last one ends) to `end`.
    #[inline(always)]
    fn push(&mut self, from: Ns, end: Ns) {
        debug_assert!(self.ops.is_empty() || self.base <= self.tail);
        let from = from.max(self.tail);
        if end <= from {
            // The trail already has the die busy until after it (pushed
            // back by reads further than the timeline was).
            return;
        }
        let idle = match u32::try_from(from - self.tail) {
            Ok(idle) => idle,
            Err(_) => {
                self.ops.clear();
                (self.base, self.tail) = (from, from);
                0
            }
        };
        self.ops.push_back((idle, narrow(end - from)));
        self.tail = end;
        if self.ops.len() > TRAIL_MAX {
            self.pop();
        }
    }

    /// An operation placed in an idle gap before the tail, starting at
    /// `start` (committed from `from`) and ending at `finish`: found from
    /// the back (a timeline keeps only its latest gaps, so it lies near
    /// the tail). An operation older than the trail is not kept.
    #[inline(never)]
    fn insert(&mut self, start: Ns, from: Ns, finish: Ns) {
        // `end` is where entry `j` ends; its start is `end - service`, and
        // the entry before it ends its idle time earlier.
        let mut end = self.tail;
        let mut j = self.ops.len();
        while j > 0 {
            let (idle, svc) = self.ops[j - 1];
            if end <= start {
                break;
            }
            end = end - svc as Ns - idle as Ns;
            j -= 1;
        }
        if j == 0 && end > start {
            self.prepend(from, finish);
            return;
        }
        if j == self.ops.len() {
            // After every operation kept: as at the tail.
            self.push(from, finish);
            return;
        }
        // Entry `j` is the first after the new one: `end` is where the
        // one before it ends (or the trail's base).
        let from = from.max(end);
        if finish <= from {
            return;
        }
        // Within an idle time already kept (or, before the first entry,
        // one as long as the trail's base allows).
        let Ok(idle) = u32::try_from(from - end) else { return };
        let next = &mut self.ops[j];
        let next_start = end + next.0 as Ns;
        next.0 = narrow(next_start.saturating_sub(finish));
        self.tail += finish.saturating_sub(next_start);
        self.ops.insert(j, (idle, narrow(finish - from)));
        if self.ops.len() > TRAIL_MAX {
            self.pop();
        }
    }

    /// An operation before every one kept (placed in a gap the trail
    /// began after, as when an operation seconds later started it anew):
    /// kept as the first where it ends before the first one starts and
    /// the idle time between fits.
    #[cold]
    fn prepend(&mut self, from: Ns, finish: Ns) {
        if self.ops.len() >= TRAIL_MAX {
            return;
        }
        let Some(first) = self.ops.front_mut() else { return };
        let first_start = self.base + first.0 as Ns;
        if finish > first_start || from >= finish {
            return;
        }
        let Ok(idle) = u32::try_from(first_start - finish) else { return };
        first.0 = idle;
        self.ops.push_front((0, narrow(finish - from)));
        self.base = from;
    }

    fn pop(&mut self) {
        if let Some((idle, service)) = self.ops.pop_front() {
            self.base += idle as Ns + service as Ns;
        }
    }

    /// Forgets the operations that end by `t`.
    #[inline]
    fn forget_before(&mut self, t: Ns) {
        while let Some(&(idle, service)) = self.ops.front() {
            if self.base + idle as Ns + service as Ns > t {
                break;
            }
            self.pop();
        }
    }

    /// Where `r` falls: in an operation (and when it ends), in the idle
    /// time before one (and when that one starts), or after the last.
    #[inline]
    fn at(&self, r: Ns) -> At {
        let mut t = self.base;
        for (i, &(idle, service)) in self.ops.iter().enumerate() {
            let start = t + idle as Ns;
            // An operation that starts at `r` has not started: the
            // priority one goes first.
            if r <= start {
                return At::Before(i, start);
            }
            t = start + service as Ns;
            if r < t {
                return At::In(i, t);
            }
        }
        At::After
    }

    /// A priority operation went in at `at`, ending at `end`: the next
    /// operation, and every one after it, starts no earlier.
    fn push_back_from(&mut self, at: At, end: Ns) {
        let (next, start) = match at {
            At::In(i, ends) => match self.ops.get(i + 1) {
                Some(&(idle, _)) => (i + 1, ends + idle as Ns),
                None => return,
            },
            At::Before(i, start) => (i, start),
            At::After => return,
        };
        let late = end.saturating_sub(start);
        self.ops[next].0 = narrow(self.ops[next].0 as Ns + late);
        self.tail += late;
    }
}

/// A time the trail keeps in 32 bits (an operation, or an idle time
/// within one already kept).
#[inline(always)]
fn narrow(ns: Ns) -> u32 {
    assert!(ns <= u32::MAX as Ns, "{ns} ns does not fit a trail entry");
    ns as u32
}
