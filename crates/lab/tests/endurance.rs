//! An accelerated life to wear-out: the card turns read-only and says so,
//! and the life curve is consistent with itself.

use lab::procedures::endurance::{endurance, EnduranceSpec};

fn spec(profile: &card::Profile) -> EnduranceSpec {
    let mut s = EnduranceSpec::new(profile, "4k-write", 8192, 3);
    s.cycles_per_erase = Some(150);
    s
}

#[test]
fn a_card_aged_to_wear_out_turns_read_only_and_its_curve_adds_up() {
    let p = card::profile_load("iodrive2-duo").unwrap();
    let r = endurance(&p, &spec(&p), &mut |_| {}).unwrap();
    let w = r.wear_out.as_ref().expect("worn out before 20x the rated cycles");
    assert!(w.why.contains("blocks are bad") && w.why.contains("worn out"), "{}", w.why);
    let (dw_rated, pb_rated) = r.at_rated_cycles.expect("the rated cycles were reached");
    assert!(dw_rated > 0.0 && dw_rated < w.drive_writes && w.life_used > 1.0);
    assert!((pb_rated - dw_rated * r.full_capacity_bytes as f64 / 1e15).abs() < 1e-9 * pb_rated.max(1.0));
    assert!(r.points.len() >= 5, "{} points", r.points.len());
    for pair in r.points.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(b.drive_writes > a.drive_writes && b.life_used > a.life_used);
        assert!(b.bad_blocks_grown >= a.bad_blocks_grown && b.bad_blocks_factory == a.bad_blocks_factory);
        assert!(b.spare_share <= a.spare_share + 1e-12);
    }
    let (first, last) = (&r.points[0], r.points.last().unwrap());
    assert!(first.bad_blocks_factory > 0 && last.bad_blocks_grown > first.bad_blocks_grown);
    // Blocks wear out at programs too (half of them, as the profile says).
    assert!(last.bad_blocks_grown_program > 0 && last.bad_blocks_grown_program < last.bad_blocks_grown, "{last:?}");
    assert!(r.wa_lifetime >= 1.0 && last.wa > first.wa, "write amplification grows as the spare shrinks");
    // Deterministic: the same seed, the same life.
    assert_eq!(endurance(&p, &spec(&p), &mut |_| {}).unwrap().points, r.points);
}

#[test]
fn a_life_that_cannot_be_run_is_refused_by_name() {
    let p = card::profile_load("iodrive2-duo").unwrap();
    let mut s = spec(&p);
    s.workload = "4k-read".into();
    assert!(endurance(&p, &s, &mut |_| {}).unwrap_err().to_string().contains("does not write"));
    let mut s = spec(&p);
    s.cycles_per_erase = Some(1_000_000);
    assert!(endurance(&p, &s, &mut |_| {}).unwrap_err().to_string().contains("--acceleration"));
    let mut p2 = p.clone();
    p2.nand.endurance = None;
    assert!(endurance(&p2, &spec(&p2), &mut |_| {}).unwrap_err().to_string().contains("[nand.endurance]"));
}
