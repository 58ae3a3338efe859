//! Runs end to end: determinism, invariants through the timed device, and
//! bad input.

use lab::{run, Length, Mix, RunSpec, Session};

fn spec(workload: &str, seed: u64) -> RunSpec {
    let mut s = RunSpec::new(&card::profile_load("flashmax2").unwrap(), "stock", workload, 128, seed);
    s.precondition = true;
    s.precondition_min_drive_writes = 1.0;
    s.precondition_cap_drive_writes = 1.5;
    s.ios = Some(200_000);
    s
}

/// The same seed gives byte-identical results; another seed does not.
#[test]
fn same_seed_gives_byte_identical_json() {
    let profile = card::profile_load("flashmax2").unwrap();
    let json = |seed| serde_json::to_string_pretty(&run(&profile, &spec("fileserver", seed), &mut |_| {}).unwrap()).unwrap();
    let a = json(7);
    let b = json(7);
    assert!(a == b, "two runs with seed 7 differ");
    assert!(a.len() > 10_000 && a.contains("\"intervals\""));
    assert_ne!(a, json(8));
}

/// Every profile's mix, sub-4 KiB and unaligned I/O included, through the
/// timed device: the FTL's invariants hold afterwards and reads and writes
/// were both served.
#[test]
fn invariants_hold_after_every_workload() {
    for id in ["flashmax2", "iodrive2-duo"] {
        let profile = card::profile_load(id).unwrap();
        let mut s = Session::new(&profile, &profile.default_format, 64, 3, Some(0.5)).unwrap();
        for w in ["4k-write", "8k-7030", "fileserver", "webserver-write", "webserver", "read=50;bs=512/50:3584/50"] {
            let mix = Mix::parse(w).unwrap();
            let p = s.measure(w, &mix, 4, 8, Length::Ios(60_000), &mut |_| {}).unwrap();
            assert_eq!(p.summary.all.ios, 60_000);
            assert!(p.summary.all.latency_avg_ms > 0.0);
            s.device.check().unwrap_or_else(|e| panic!("{id} after {w}: {e}"));
        }
        s.secure_erase().unwrap();
        s.device.check().unwrap();
        // After a secure erase nothing is mapped: a read is served without the media.
        let before = s.device.counters().nand_page_reads_host;
        s.measure("after erase", &Mix::parse("4k-read").unwrap(), 1, 1, Length::Ios(1_000), &mut |_| {}).unwrap();
        assert_eq!(s.device.counters().nand_page_reads_host, before);
    }
}

/// Sub-4 KiB and unaligned writes cost a read-modify-write: the rest of the
/// slot is read from the NAND, but the write is merged in the buffer and
/// acknowledged without waiting for that read (the vendors' 512 B write
/// latencies, 13-18 us, are far under a NAND read).
#[test]
fn unaligned_writes_pay_read_modify_write() {
    let profile = card::profile_load("p420m").unwrap();
    let mut s = Session::new(&profile, "stock", 128, 5, Some(0.5)).unwrap();
    let fill = Mix::parse("read=0;bs=64k/100").unwrap();
    let cap = s.device.capacity_bytes();
    // Random 64 KiB writes over three capacities map ~95% of the slots.
    s.measure("fill", &fill, 16, 16, Length::Ios(3 * cap / 65536), &mut |_| {}).unwrap();
    let reads0 = s.device.counters().nand_page_reads_host;
    let aligned = s.measure("aligned", &Mix::parse("read=0;bs=4k/100").unwrap(), 1, 1, Length::Ios(2_000), &mut |_| {}).unwrap();
    let reads1 = s.device.counters().nand_page_reads_host;
    let partial = s.measure("partial", &Mix::parse("read=0;bs=512/100").unwrap(), 1, 1, Length::Ios(2_000), &mut |_| {}).unwrap();
    let reads2 = s.device.counters().nand_page_reads_host;
    assert!(reads2 - reads1 > 1_500, "512 B writes read their slot first: {} reads", reads2 - reads1);
    assert!(reads1 - reads0 < 200, "aligned 4 KiB writes need no read: {}", reads1 - reads0);
    let (p, a) = (partial.summary.write.latency_avg_ms, aligned.summary.write.latency_avg_ms);
    assert!(p < a + 0.005, "a 512 B write ({p} ms) waits for no NAND read beyond a 4 KiB one ({a} ms)");
}

#[test]
fn bad_specs_are_refused_naming_the_field() {
    let profile = card::profile_load("flashmax2").unwrap();
    let err = |f: &dyn Fn(&mut RunSpec)| {
        let mut s = spec("4k-write", 1);
        f(&mut s);
        run(&profile, &s, &mut |_| {}).expect_err("refused").to_string()
    };
    assert!(err(&|s| s.threads = 0).contains("--threads 0"));
    assert!(err(&|s| s.queue_depth = 5000).contains("--qd 5000"));
    assert!(err(&|s| s.scale = 100_000).contains("--scale 100000: must be in 1..="));
    assert!(err(&|s| s.scale = 0).contains("--scale 0"));
    assert!(err(&|s| s.format = "turbo".into()).contains("unknown format 'turbo'"));
    assert!(err(&|s| s.workload = "read=50;bs=4k/60".into()).contains("sum to 60%"));
    assert!(err(&|s| s.workload = "9k-read".into()).contains("unknown workload '9k-read'"));
    assert!(err(&|s| s.duration_s = Some(-1.0)).contains("--duration"));
    assert!(err(&|s| s.interval_s = 0.0).contains("--interval"));
}

/// A card formatted close to the largest capacity its FTL allows keeps
/// taking random writes for drive write after drive write: GC always frees
/// space, nothing is refused, nothing hangs, and the invariants hold.
#[test]
fn a_card_formatted_nearly_full_sustains_random_writes() {
    let profile = card::profile_load("p420m").unwrap();
    let gb = profile.usable_bytes_max() as f64 * 0.90 / 1e9;
    let mut session = Session::new(&profile, &format!("{gb:.3}GB"), 64, 9, Some(0.25)).unwrap();
    let op = session.device.effective_op();
    assert!(op < 0.12, "effective OP {op}");
    let cap = session.device.capacity_bytes();
    let w = Mix::parse("4k-write").unwrap();
    session.measure("fill", &w, 16, 16, Length::Ios(3 * cap / 4096), &mut |_| {}).unwrap();
    let p = session.measure("overwrite", &w, 16, 16, Length::Ios(cap / 4096), &mut |_| {}).unwrap();
    assert_eq!(p.summary.write.ios, cap / 4096);
    assert!(p.wa > 4.0, "little spare means a high write amplification: {}", p.wa);
    session.device.check().unwrap();
    let e = Session::new(&profile, "99TB", 64, 9, Some(0.25)).err().unwrap().to_string();
    assert!(e.contains("capacity is the full-size card's and must be from 1.1 GB (1073741824 bytes) to"), "{e}");
    let e = Session::new(&profile, "lots", 64, 9, Some(0.25)).err().unwrap().to_string();
    assert!(e.contains("unknown format 'lots'") && e.contains("1500GB"), "{e}");
}

/// Every run reports each resource's utilisation, never above 100%, and
/// names its busiest resource as the bottleneck: on the FlashMAX II, 4K
/// random reads are bound by the two FPGAs' command engines (the
/// single-FPGA card is rated at half the IOPS).
#[test]
fn utilisation_is_a_share_and_names_the_bottleneck() {
    // The MX6300's 4K reads are held by its controller's commands (its
    // firmware's four cores have time to spare, for the reads of slots
    // never written too).
    let profile = card::profile_load("mx6300").unwrap();
    let mut s = spec("4k-read", 2);
    s.device = "mx6300".into();
    let r = run(&profile, &s, &mut |_| {}).unwrap();
    for p in &r.phases {
        assert_eq!(p.utilisation.len(), 10, "{}: nine resources and the interrupt cores", p.name);
        for u in &p.utilisation {
            assert!((0.0..=100.0).contains(&u.percent), "{} {}: {}%", p.name, u.resource, u.percent);
        }
        let top = p.utilisation.iter().max_by(|a, b| a.percent.total_cmp(&b.percent)).unwrap();
        assert!(p.bottleneck.contains(&top.resource), "{}: {}", p.name, p.bottleneck);
    }
    let main = r.phases.last().unwrap();
    assert!(main.bottleneck.starts_with("controller commands"), "{}", main.bottleneck);
}

/// A die fails in the middle of a measured phase at full load: the run
/// reports when, the rebuild moves what the failed die's stripes held and
/// ends, IOPS dip while it runs; the same seed gives the same report.
#[test]
fn a_die_failure_and_its_rebuild_are_reported() {
    let profile = card::profile_load("flashmax2").unwrap();
    let mut s = spec("4k-write", 3);
    s.ios = None;
    s.duration_s = Some(6.0);
    s.interval_s = 0.25;
    s.fail = vec![lab::runs::failure::FailSpec::parse("3.1@1").unwrap()];
    let r = run(&profile, &s, &mut |_| {}).unwrap();
    assert_eq!(r.failures.len(), 1);
    let f = &r.failures[0];
    assert_eq!(f.event.what, "die 3.1");
    assert_eq!(f.event.dies, vec![35], "die 1 of channel 3: channel-minor numbering");
    assert!((f.failed_at_s - 1.0).abs() < 0.01, "failed at {}", f.failed_at_s);
    assert!(f.event.slots_to_rebuild > 0 && f.event.slots_moved > 0 && f.event.lost_offsets.is_empty(), "{f:?}");
    let took = f.rebuild_s.expect("the rebuild ends within the phase");
    assert!(took > 0.0 && f.rebuild_done_at_s.unwrap() < 6.0);
    let (before, during) = (f.iops_before.unwrap(), f.iops_during.unwrap());
    assert!(during < before, "the rebuild costs host I/O: {during} vs {before}");
    let main = r.phases.last().unwrap();
    assert!(main.counters.faults.degraded_page_reads > 0 && main.counters.faults.dies_failed == 1);
    let again = run(&profile, &s, &mut |_| {}).unwrap();
    assert_eq!(serde_json::to_string(&again.failures).unwrap(), serde_json::to_string(&r.failures).unwrap());
}

/// Random failures at an accelerated field rate: dies fail at random
/// moments (rebuilt as asked-for failures are) and uncorrectable errors
/// fail page reads' ECC, each rebuilt from its stripe; the same seed
/// draws the same events; a rate outside its range is refused by name.
#[test]
fn random_failures_come_at_the_field_rates_and_are_reported() {
    let profile = card::profile_load("flashmax2").unwrap();
    let mut s = spec("8k-7030", 5);
    s.ios = None;
    s.duration_s = Some(10.0);
    s.interval_s = 0.5;
    // 10 s at 3e8 the field rates: 95 years of a card, about one die
    // failure and 139 uncorrectable errors expected.
    s.random_faults = Some(3e8);
    let r = run(&profile, &s, &mut |_| {}).unwrap();
    let main = r.phases.last().unwrap();
    let ue = main.read_errors.uncorrectable_random;
    assert!((80..=200).contains(&ue), "{ue} random uncorrectable errors");
    // Each error on a host read is rebuilt from its stripe, unless a
    // second one falls on a read of its stripe's other pages (the
    // rebuild's reads draw errors as any read does): every read lost needs
    // at least one such second error, and each second error loses its read.
    let (rebuilt, lost) = (main.read_errors.reads_rebuilt_from_parity, main.read_errors.reads_uncorrectable);
    let second = ue.checked_sub(rebuilt + lost).unwrap_or_else(|| panic!("{:?}", main.read_errors));
    assert!(lost <= second && second <= 7 * lost, "a 7+1 stripe: {:?}", main.read_errors);
    assert!(rebuilt * 100 >= ue * 95, "most are rebuilt: {:?}", main.read_errors);
    assert!(r.failures.iter().all(|f| f.event.random), "only random failures: {:?}", r.failures);
    let again = run(&profile, &s, &mut |_| {}).unwrap();
    assert_eq!(serde_json::to_string(&again).unwrap(), serde_json::to_string(&r).unwrap());
    // More die failures at a higher rate, each one rebuilt.
    s.random_faults = Some(3e9);
    let r = run(&profile, &s, &mut |_| {}).unwrap();
    assert!(r.failures.len() >= 3 && r.failures.iter().all(|f| f.event.random && f.event.slots_moved > 0), "{:?}", r.failures.len());
    for bad in [0.0, -1.0, f64::NAN, 1e13] {
        s.random_faults = Some(bad);
        let e = run(&profile, &s, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("--random-faults"), "{e}");
    }
}

/// A phase through a failure runs until the rebuild has ended and the
/// rounds after it; a rebuild too slow to end stops the phase at its cap
/// and is reported as not ended, never as done.
#[test]
fn a_phase_through_a_failure_ends_with_its_rebuild_or_says_it_did_not() {
    let profile = card::profile_load("p420m").unwrap();
    let fails = vec![lab::runs::failure::FailSpec::parse("3.1@0.5").unwrap()];
    let mix = Mix::parse("4k-write").unwrap();
    let interval = 100_000_000;
    let mut s = Session::new(&profile, "stock", 128, 5, Some(0.1)).unwrap();
    s.precondition(&mix, lab::run::Rule::Snia { min_drive_writes: 1.0, cap_drive_writes: 1.5 }, &mut |_| {}).unwrap();
    let run = s.through_failures("die failure", &mix, &fails, None, interval, (4, 400), &mut |_| {}).unwrap();
    let r = &run.reports[0];
    let done = r.rebuild_done_at_s.expect("the rebuild ends at the profile's rate");
    let end = run.phase.virtual_seconds;
    assert!(end >= done + 0.4 - 1e-6 && end < done + 0.4 + 0.05, "ends 4 rounds after the rebuild: {end} vs {done}");
    assert!(r.iops_before.is_some() && r.iops_during.is_some() && r.iops_after.is_some(), "{r:?}");
    assert_eq!(run.rebuild_bytes_per_sec, profile.ftl.rebuild_bytes_per_sec);
    // 1 MB/s: the rebuild cannot end within 20 rounds of the failure.
    let mut s = Session::new(&profile, "stock", 128, 5, Some(0.1)).unwrap();
    let run = s.through_failures("die failure", &mix, &fails, Some(1_000_000), interval, (4, 20), &mut |_| {}).unwrap();
    let r = &run.reports[0];
    assert!(r.rebuild_done_at_s.is_none() && r.rebuild_s.is_none() && r.iops_after.is_none(), "{r:?}");
    assert!((run.phase.virtual_seconds - 2.5).abs() < 0.05, "stops at the cap: {}", run.phase.virtual_seconds);
    assert!(lab::runs::failure::summary(r).contains("NOT ENDED"));
}

/// A failure asked for after the measured phase ends was once accepted
/// and nothing failed: it is refused, naming when the phase ends.
#[test]
fn a_failure_after_the_run_ends_is_refused() {
    let p = card::profile_load("p420m").unwrap();
    let mut spec = lab::RunSpec::new(&p, "stock", "4k-read", 64, 1);
    spec.duration_s = Some(2.0);
    spec.fail = vec![lab::runs::failure::FailSpec::parse("3.1@100").unwrap()];
    let e = lab::run::spec_check(&spec).unwrap_err().to_string();
    assert!(e.contains("--fail-die 3.1@100") && e.contains("ends at 2 s"), "{e}");
    spec.fail = vec![lab::runs::failure::FailSpec::parse("3.1@1").unwrap()];
    assert!(lab::run::spec_check(&spec).is_ok());
}

/// A run says what its figures do not stand for: reads of a card that
/// holds no data, wear past the NAND's rating, ages past the error
/// model's fit, scales past those checked against full size; writes to
/// an empty card at scale 64 say nothing.
#[test]
fn a_run_warns_where_its_figures_do_not_stand_for_the_card() {
    let p = card::profile_load("p420m").unwrap();
    let warnings = |f: &dyn Fn(&mut RunSpec)| {
        let mut s = RunSpec::new(&p, "stock", "4k-read", 64, 1);
        s.ios = Some(2000);
        f(&mut s);
        run(&p, &s, &mut |_| {}).unwrap().warnings
    };
    let empty = warnings(&|_| {});
    assert!(empty.len() == 1 && empty[0].contains("holds data in 0% of its LBAs"), "{empty:?}");
    let worn = warnings(&|s| {
        s.pe_cycles = 100_000;
        s.age_days = 3650.0;
    });
    assert!(worn.iter().any(|w| w.contains("past the NAND's rating (3000 cycles)")) && worn.iter().any(|w| w.contains("past 365 days")), "{worn:?}");
    let writes = warnings(&|s| s.workload = "4k-write".into());
    assert!(writes.is_empty(), "writes to an empty card: {writes:?}");
    let small = warnings(&|s| {
        s.workload = "4k-write".into();
        s.scale = 128;
    });
    assert!(small.len() == 1 && small[0].contains("only up to scale 64"), "{small:?}");
}

/// The P420m's driver keeps at most 255 commands at the card: with 4,096
/// 4K writes in flight, the rest wait in the host. The card has written
/// only what completed and what it holds, not every write issued; the
/// latency counts the host's wait (Little's law over all 4,096); the
/// limit's own figures show it, and without it the card takes every write
/// at once.
#[test]
fn io_beyond_the_cards_command_slots_waits_in_the_host() {
    let mut p = card::profile_load("p420m").unwrap();
    assert_eq!(p.host.command_slots, Some(255));
    let main = |p: &card::Profile| {
        let mut s = RunSpec::new(p, "stock", "4k-write", 1024, 1);
        (s.threads, s.queue_depth) = (64, 64);
        s.ios = Some(100_000);
        run(p, &s, &mut |_| {}).unwrap().phases.pop().unwrap()
    };
    let limited = main(&p);
    let (written, done) = (limited.counters.host_slots_written, limited.summary.write.ios);
    assert!(written <= done + 255, "{written} slots written, {done} writes completed: the card took writes beyond its 255 slots");
    let little_ms = 4096.0 / limited.summary.write.iops * 1e3;
    let avg = limited.summary.write.latency_avg_ms;
    assert!(avg > 0.9 * little_ms, "average latency {avg} ms against 4,096 in flight at {} IOPS ({little_ms} ms)", limited.summary.write.iops);
    p.host.command_slots = None;
    let all = main(&p);
    assert!(all.counters.host_slots_written >= all.summary.write.ios + 4096 - 1, "without the limit the card takes every write at once");
}
