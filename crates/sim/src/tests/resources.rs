//! The resources against simple references: timelines and their gaps,
//! the event heaps, server pools, busy time.

use crate::timeline::GAPS;
use crate::*;
use units::Ns;

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

/// A priority operation goes ahead of queued work: at once on a free
/// server, else after what the first of the `k` busy servers has left of
/// its unit, met at a random point (`unit / (k + 1)` on average; the
/// backlog, if shorter); the queued work is pushed back by its service,
/// and priority operations beyond the pool's capacity queue among
/// themselves.
#[test]
fn a_priority_operation_goes_ahead_of_queued_work_and_keeps_the_capacity() {
    let mut p = Pool::new(1);
    assert_eq!(p.reserve_priority(0, 5, 40), 5, "a free server takes it at once");
    for _ in 0..10 {
        p.reserve(5, 40);
    }
    assert_eq!(p.idle_at(), 405);
    let end = p.reserve_priority(100, 5, 40);
    assert!((105..145).contains(&end), "part of the unit in progress, then its service: {end}");
    assert_eq!(p.idle_at(), 410, "the queued work waits for it");
    let end = p.reserve_priority(408, 1, 40);
    assert!((409..=411).contains(&end), "no longer than the backlog (2 ns), then its service: {end}");
    let busy = p.busy_ns;
    // Priority work alone beyond capacity: one server, 10 ns apart, 20
    // ns each: they queue among themselves at the pool's rate.
    let mut q = Pool::new(1);
    let ends: Vec<Ns> = (0..4).map(|i| q.reserve_priority(i * 10, 20, 40)).collect();
    assert_eq!(ends, vec![20, 40, 60, 80]);
    assert_eq!(busy, 5 + 400 + 5 + 1, "every service counted once");
    // The wait over many: below a unit, varied, and on average half a
    // unit with one server busy, a quarter with three (the least of
    // three remainders met at random).
    for (k, share) in [(1u32, 0.5), (3, 0.25)] {
        let mut m = Pool::new(k);
        for _ in 0..k {
            m.reserve(0, 1_000_000_000);
        }
        let waits: Vec<Ns> = (0..2_000u64).map(|i| m.reserve_priority(i * 1_000, 1, 400) - i * 1_000 - 1).collect();
        let mean = waits.iter().sum::<Ns>() as f64 / waits.len() as f64;
        assert!(waits.iter().all(|&w| w < 400), "{k} servers: a wait within one unit");
        assert!((mean / (400.0 * share) - 1.0).abs() < 0.05, "{k} servers busy: a mean wait of {mean:.1} ns, not {}", 400.0 * share);
        let distinct: std::collections::BTreeSet<Ns> = waits.iter().copied().collect();
        assert!(distinct.len() > 100, "{k} servers: where the unit is met varies");
    }
}

/// A priority operation booked ahead (ready later: a merge after its
/// write's wait) leaves the time before it to one ready now: the lane
/// keeps its gaps.
#[test]
fn a_priority_operation_booked_ahead_does_not_hold_back_one_ready_now() {
    let mut p = Pool::new(1);
    p.reserve(0, 100);
    assert_eq!(p.reserve_priority(500, 10, 20), 510, "the servers are free by then");
    let end = p.reserve_priority(50, 10, 20);
    assert!(end < 100, "a read at 50 waits for part of the unit in progress, not for the operation at 500: {end}");
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

/// The busy time before a moment leaves out what is booked after it, and
/// the idle gaps the timeline remembers there are not counted as booked.
#[test]
fn busy_time_by_a_moment_leaves_out_what_is_booked_after_it() {
    let mut t = Timeline::default();
    t.reserve(0, 100);
    t.reserve(300, 100);
    assert_eq!(t.busy_by(50), 50, "half of the first");
    assert_eq!(t.busy_by(200), 100, "the first, the gap 100..300 idle");
    assert_eq!(t.busy_by(350), 150);
    assert_eq!(t.busy_by(1_000), 200);
    assert_eq!(t.busy_by(Ns::MAX), t.busy_ns);
    let mut p = Pool::new(2);
    p.reserve(0, 100);
    p.reserve(0, 300);
    assert_eq!(p.busy_by(50), 100, "both servers for 50");
    assert_eq!(p.busy_by(200), 300, "one ended at 100, the other runs");
    assert_eq!(p.busy_by(Ns::MAX), 400);
}

/// Work booked on a pool's servers and then in its priority lane (a
/// background task's time slice) holds back the priority operations that
/// come after it until it ends; one booked on the servers alone holds them
/// only until the unit in progress ends (part of a 20 ns unit on one server).
#[test]
fn priority_operations_wait_for_a_slice_booked_in_their_lane() {
    let prio_after = |lane: bool| {
        let mut p = Pool::new(1);
        p.reserve_priority(0, 10, 20);
        let start = p.free_first();
        p.reserve(start, 50);
        if lane {
            p.reserve_lane(start, 50);
        }
        p.reserve_priority(start, 10, 20)
    };
    assert!((10 + 10..10 + 20 + 10).contains(&prio_after(false)), "part of the unit in progress");
    assert_eq!(prio_after(true), 10 + 50 + 10);
}

/// A hold of every server (an exclusive lock) delays the work queued on
/// each of them and every priority operation ready while it lasts; a
/// server busy past its start is held from when it frees; work ready
/// after the hold waits for nothing.
#[test]
fn a_hold_of_every_server_delays_queued_and_priority_work() {
    let mut p = Pool::new(2);
    p.reserve(0, 100);
    p.hold_all(50, 30);
    assert_eq!(p.free_first(), 80, "the idle server is held from 50");
    assert_eq!(p.idle_at(), 130, "the busy one from when it frees");
    assert_eq!(p.busy_ns, 100 + 2 * 30);
    assert_eq!(p.reserve_priority(60, 5, 20), 85, "a priority operation ready during the hold waits for it");
    let mut q = Pool::new(1);
    q.hold_all(50, 30);
    assert_eq!(q.reserve_priority(200, 5, 20), 205, "after the hold, nothing to wait for");
}
