//! Traces replayed on a simulated card: open loop at the recorded times,
//! closed loop at a queue depth, the card's capacity kept, and the same
//! seed giving the same result.

use lab::procedures::replay::{replay, Before, Pace, ReplaySpec};
use lab::runs::trace::Trace;

/// A fio iolog v3 of `n` 4 KiB I/Os, `gap_us` apart, every `write_every`-th
/// a write, spread over `span` bytes by a fixed stride.
fn iolog(n: u64, gap_us: u64, write_every: u64, span: u64) -> Trace {
    let mut s = String::from("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n");
    for i in 0..n {
        let action = if write_every > 0 && i % write_every == 0 { "write" } else { "read" };
        let offset = (i * 7_919 * 4096) % span;
        s.push_str(&format!("{} /dev/x {action} {offset} 4096\n", i * gap_us));
    }
    Trace::parse(&s).unwrap()
}

fn spec(pace: Pace) -> ReplaySpec {
    ReplaySpec { format: "stock".into(), scale: 1024, seed: 1, pace, before: Before::Filled, wrap: false }
}

/// I/Os far enough apart meet an idle card, as one at a time does: the
/// open loop's average latency is the closed loop's at queue depth 1.
/// Arriving faster than the card serves them, they queue: the average
/// grows many times over and the card's throughput bounds the rate.
#[test]
fn spaced_arrivals_meet_an_idle_card_and_a_flood_queues() {
    let p = card::profile_load("flashmax2").unwrap();
    let trace = iolog(4_000, 2_000, 4, 256 << 20);
    let open = replay(&p, &trace, &spec(Pace::Trace { speed: 1.0 })).unwrap();
    let one = replay(&p, &trace, &spec(Pace::Closed { qd: 1 })).unwrap();
    let (a, b) = (open.summary.all.latency_avg_ms, one.summary.all.latency_avg_ms);
    assert!((a / b - 1.0).abs() < 0.05, "spaced arrivals {a} ms against one at a time {b} ms");
    assert!(
        (open.virtual_seconds - open.trace_seconds).abs() < 0.01,
        "an unloaded replay lasts the trace: {} s against {} s",
        open.virtual_seconds,
        open.trace_seconds
    );
    // The same I/Os 20,000 times faster: 2 billion a second.
    let flood = replay(&p, &trace, &spec(Pace::Trace { speed: 20_000.0 })).unwrap();
    let deep = replay(&p, &trace, &spec(Pace::Closed { qd: 256 })).unwrap();
    assert!(flood.summary.all.latency_avg_ms > 20.0 * a, "a flood waits: {} ms against {a} ms", flood.summary.all.latency_avg_ms);
    assert!(
        flood.summary.all.iops <= deep.summary.all.iops * 1.2,
        "no faster than the card at depth: {} IOPS against {} at 256 in flight",
        flood.summary.all.iops,
        deep.summary.all.iops
    );
    assert!(deep.summary.all.iops > 5.0 * one.summary.all.iops, "depth lifts the rate: {} against {}", deep.summary.all.iops, one.summary.all.iops);
    assert_eq!(flood.summary.all.ios, 4_000);
}

/// The same trace and seed give byte-identical results; speed 2 halves the
/// trace's span.
#[test]
fn a_replay_is_deterministic_and_speed_scales_time() {
    let p = card::profile_load("p420m").unwrap();
    let trace = iolog(3_000, 50, 3, 128 << 20);
    let json = |s: &ReplaySpec| serde_json::to_string(&replay(&p, &trace, s).unwrap()).unwrap();
    let s = spec(Pace::Trace { speed: 1.0 });
    assert_eq!(json(&s), json(&s));
    let one = replay(&p, &trace, &s).unwrap();
    let two = replay(&p, &trace, &spec(Pace::Trace { speed: 2.0 })).unwrap();
    assert!((two.trace_seconds * 2.0 - one.trace_seconds).abs() < 1e-6);
    assert!(one.summary.write.ios == 1_000 && one.summary.read.ios == 2_000);
}

/// Offsets past the card are refused, naming the I/O and the option that
/// folds them; with --wrap they fold and are counted. A fresh card warns
/// that its reads touch no flash.
#[test]
fn offsets_past_the_card_are_refused_or_wrapped() {
    let p = card::profile_load("p420m").unwrap();
    let trace = iolog(1_000, 10, 2, 1 << 40);
    let mut s = spec(Pace::Closed { qd: 8 });
    s.scale = 8192;
    let e = replay(&p, &trace, &s).unwrap_err().to_string();
    assert!(e.contains("past the card's") && e.contains("--wrap"), "{e}");
    s.wrap = true;
    s.before = Before::Fresh;
    let r = replay(&p, &trace, &s).unwrap();
    assert!(r.wrapped > 0 && r.ios == 1_000, "{} wrapped", r.wrapped);
    assert!(r.warnings.iter().any(|w| w.contains("touch no flash")), "{:?}", r.warnings);
    let mut bad = spec(Pace::Trace { speed: 0.0 });
    bad.scale = 8192;
    assert!(replay(&p, &trace, &bad).unwrap_err().to_string().contains("--speed 0"));
}

/// Flushes and trims in a trace run on the card and are counted, not
/// measured as I/Os: on a filled card, trimming half of it before random
/// writes to the other half leaves GC less to move than the same writes
/// on the card kept full.
#[test]
fn flushes_and_trims_run_and_trims_spare_gc() {
    let p = card::profile_load("p420m").unwrap();
    let mut s = spec(Pace::Closed { qd: 16 });
    s.scale = 8192;
    let half = card::Device::new(&p, "stock", 8192).unwrap().capacity_bytes() / 2 / 4096 * 4096;
    // Offsets at random (xorshift): rewrites in a fixed order would leave
    // whole superblocks stale and GC nothing to move either way.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let writes: String = (0..6 * half / 4096)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("{} /dev/x write {} 4096\n", 1 + i, x % (half / 4096) * 4096)
        })
        .collect();
    let trimmed = format!("fio version 3 iolog\n0 /dev/x trim {half} {half}\n0 /dev/x sync\n{writes}");
    let full = format!("fio version 3 iolog\n0 /dev/x sync\n{writes}");
    let t = replay(&p, &Trace::parse(&trimmed).unwrap(), &s).unwrap();
    let u = replay(&p, &Trace::parse(&full).unwrap(), &s).unwrap();
    assert_eq!((t.ios, t.flushes, t.trims), (6 * half / 4096, 1, 1));
    assert_eq!((u.ios, u.flushes, u.trims), (6 * half / 4096, 1, 0));
    assert!(t.write_amplification < 0.8 * u.write_amplification, "trimmed {} against kept full {}", t.write_amplification, u.write_amplification);
}

/// The P420m's driver keeps 255 commands at the card, and a replay takes
/// its I/Os through them: replayed as a flood or at 1,024 in flight, every
/// I/O is served (none is lost waiting for a slot), no faster than at 255
/// in flight, and the I/Os beyond wait their turn (Little's law over all
/// 1,024). (Where reads queue, in the host or in the card, does not change
/// their latency; the run test `io_beyond_the_cards_command_slots_waits_in_the_host`
/// shows what the limit changes.)
#[test]
fn a_replay_takes_its_ios_through_the_cards_command_slots() {
    let p = card::profile_load("p420m").unwrap();
    assert_eq!(p.host.command_slots, Some(255));
    let trace = iolog(20_000, 1, 0, 256 << 20);
    let at = |pace| replay(&p, &trace, &spec(pace)).unwrap().summary.all;
    let slots = at(Pace::Closed { qd: 255 });
    let deep = at(Pace::Closed { qd: 1024 });
    let flood = at(Pace::Trace { speed: 1000.0 });
    for (name, r) in [("255 in flight", &slots), ("1,024 in flight", &deep), ("a flood", &flood)] {
        assert_eq!(r.ios, 20_000, "{name}: every I/O served");
        assert!(r.iops <= slots.iops * 1.02, "{name}: {} IOPS against {} at 255", r.iops, slots.iops);
    }
    let little = 1024.0 / 255.0 * slots.latency_avg_ms;
    assert!((deep.latency_avg_ms / little - 1.0).abs() < 0.15, "1,024 in flight: {} ms against {little} ms", deep.latency_avg_ms);
}
