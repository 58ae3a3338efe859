//! `flashlab endurance` on the command line: the life curve is the
//! result, so it goes to standard output with the summary (`endurance >
//! file` once kept only the summary, the curve going to standard error).

mod common;
use common::flashlab;

#[test]
fn the_life_curve_goes_to_standard_output_with_the_summary() {
    let (code, out, err) = flashlab(&["endurance", "iodrive2-duo", "--scale", "8192", "--acceleration", "150", "--life-max", "0.5"]);
    assert_eq!(code, 0, "{err}");
    let header = out.lines().position(|l| l.contains("drive wr") && l.contains("eff. OP")).unwrap_or_else(|| panic!("no life curve on stdout: {out}"));
    let points = out.lines().skip(header + 1).take_while(|l| l.trim_start().chars().next().is_some_and(|c| c.is_ascii_digit())).count();
    assert!(points >= 2, "the curve's points on stdout: {out}");
    assert!(out.contains("wall time"), "the summary follows: {out}");
    assert!(!err.contains("drive wr"), "nothing of the curve on stderr: {err}");
}
