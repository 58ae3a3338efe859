//! The thread/queue matrix measures each point at its own steady state:
//! every point warms up before its measured rounds, so that a point does
//! not carry the free pool a lighter one left behind. On the FlashMAX II
//! stock format (GC-bound under 8K 70/30), points with as many I/Os in
//! flight agree, more in flight never gives fewer IOPS, and the 16T/16Q
//! point is judged steady.

use lab::procedures::job::{jobs_of, ReviewSpec};
use lab::procedures::review::review;

#[test]
fn matrix_points_are_steady_and_monotone_in_load() {
    let mut spec = ReviewSpec::new(vec!["flashmax2".into()], 64, 1);
    spec.formats = Some(vec!["stock".into()]);
    spec.profiles = vec!["8k7030".into()];
    let profiles = vec![card::profile_load("flashmax2").unwrap()];
    let (jobs, _) = jobs_of(&spec, &profiles).unwrap();
    let r = review(&spec, &jobs, 1, &|_| {}).unwrap();
    let tests = &r.jobs[0].tests;
    assert_eq!(tests.len(), 16);
    let points: Vec<(u32, f64)> = tests.iter().map(|t| (t.threads * t.queue_depth, t.summary.all.iops)).collect();
    for &(n, a) in &points {
        for &(m, b) in &points {
            if n == m {
                assert!((a - b).abs() <= 0.03 * a.max(b), "{n} in flight: {a:.0} and {b:.0} IOPS");
            }
            if n < m {
                assert!(b >= 0.98 * a, "{m} in flight gives {b:.0} IOPS, fewer than {n} in flight ({a:.0})");
            }
        }
    }
    let last = tests.last().unwrap();
    let ss = last.steady_state.as_ref().expect("5 measured rounds are judged");
    assert!(ss.reached, "16T/16Q not steady: {ss:?}");
}
