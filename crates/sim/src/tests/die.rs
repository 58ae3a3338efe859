//! A die that knows its queued operations (`OpTimeline`): what a read
//! waits for.

use crate::*;
use units::Ns;

/// A read on a die goes ahead of the queued programs, behind the one in
/// progress for what is left of it (not the longest operation the die
/// has); the queued work after it is pushed back by its service; a second
/// read behind the same program runs after the first.
#[test]
fn a_read_waits_for_the_operation_in_progress_not_the_longest() {
    let mut d = OpTimeline::new(300);
    assert_eq!(d.reserve_priority(0, 10), 10);
    for _ in 0..4 {
        d.reserve(0, 100);
    }
    assert_eq!(d.free_at, 410);
    assert_eq!(d.reserve_priority(150, 10), 220, "what is left of the second program, then the read");
    assert_eq!(d.free_at, 420, "the queued programs wait for it");
    assert_eq!(d.reserve_priority(160, 10), 230, "behind the first read, not beside it");
    assert_eq!(d.reserve_priority(395, 10), 440, "in the last program (now ending at 430): after it, at the tail");
    assert_eq!(d.reserve_priority(1_000, 10), 1_010, "an idle die serves it at once");
    assert_eq!(d.busy_ns, 400 + 50, "every service counted once");
    // An erase placed in an idle gap before the tail is known too.
    let mut e = OpTimeline::new(300);
    assert_eq!(e.reserve_priority(0, 10), 10);
    assert_eq!(e.reserve(0, 100), 110);
    assert_eq!(e.reserve(600, 100), 700);
    assert_eq!(e.reserve(0, 300), 410, "the erase fills the gap 110..600");
    assert_eq!(e.reserve_priority(150, 10), 420, "a read meets the erase in progress");
    assert_eq!(e.reserve_priority(1_000, 10), 1_010);
    // A timeline with a bounded wait never knows more: behind more queued
    // work than the longest operation, it waits that long.
    let mut t = PrioTimeline::default();
    for _ in 0..10 {
        t.reserve(0, 100);
    }
    assert_eq!(t.reserve_priority(150, 10, 300), 460);
}

/// Random programs, erases and reads on a die 95% busy: reads never
/// overlap one another,
/// and none waits longer than the operation in progress at its ready
/// time (at most the longest one) plus the reads ahead of it.
#[test]
fn reads_on_a_die_wait_at_most_the_operation_in_progress() {
    let mut r = Rng::new(7);
    let longest = 3_000;
    let mut d = OpTimeline::new(longest);
    let (mut now, mut reads): (Ns, Vec<(Ns, Ns)>) = (0, Vec::new());
    let mut waited_less = 0;
    for _ in 0..200_000 {
        now += r.below(1_640);
        match r.below(10) {
            0 => {
                d.reserve(now, longest);
            }
            1..=3 => {
                d.reserve(now, 1_300 + r.below(600));
            }
            _ => {
                let ahead = reads.last().map_or(0, |&(_, end)| end);
                let end = d.reserve_priority(now, 50);
                assert!(end - 50 >= now, "a read before its ready time");
                assert!(end - 50 >= ahead, "two reads at once on a die");
                assert!(end - 50 <= now.max(ahead) + longest, "a read waited past the longest operation: ready {now}, start {}", end - 50);
                if end - 50 < now.max(ahead) + longest / 2 {
                    waited_less += 1;
                }
                reads.push((now, end));
            }
        }
    }
    // The die is 95% busy, mostly with programs: a read meets what is left
    // of one (about 1,100 ns on average, the length-biased remainder of
    // this mix), seldom the whole erase. Waiting the longest operation
    // whenever the queue is longer gives about 1,900.
    let mean = reads.iter().map(|&(r, e)| e - r).sum::<Ns>() / reads.len() as Ns;
    assert!(mean < longest / 2, "mean wait {mean} ns");
    assert!(waited_less > reads.len() * 3 / 4, "most reads wait less than half the longest operation ({waited_less} of {})", reads.len());
}

/// A die that has only been written knows its queued operations all the
/// same: the first read after a write phase waits for what is left of the
/// program in progress, as any other read, and the reads behind it follow
/// it. (Recording only from a die's first read on made every read before
/// the queue known then wait the longest operation: the first tens of
/// milliseconds of each read test after a write phase, a share of the
/// test that grows with the scale.)
#[test]
fn the_first_read_after_a_write_phase_waits_for_the_program_in_progress() {
    let mut d = OpTimeline::new(300);
    for _ in 0..10 {
        d.reserve(0, 100);
    }
    assert_eq!(d.reserve_priority(150, 10), 210, "what is left of the second program");
    assert_eq!(d.reserve_priority(160, 10), 220);
    assert_eq!(d.reserve_priority(170, 10), 230);
    assert_eq!(d.free_at, 1_030, "the queued programs wait for the three reads");
}

/// An operation placed in an old idle gap seconds after what a die keeps
/// (its trail empty, or long before) is kept as at the tail, without
/// overflowing the trail's 32-bit idle times.
#[test]
fn an_operation_seconds_after_the_trail_is_kept_as_at_its_tail() {
    let mut d = OpTimeline::new(300);
    d.reserve(0, 100);
    d.reserve(10_000_000_000, 100);
    assert_eq!(d.reserve_priority(5_000_000_000, 10), 5_000_000_010);
    assert_eq!(d.reserve(6_000_000_000, 100), 6_000_000_100);
    assert_eq!(d.reserve_priority(6_000_000_050, 10), 6_000_000_110, "after the program");
}
