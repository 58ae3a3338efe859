//! Published figures beside simulated ones: which measured phase is
//! comparable to a figure (same workload, threads, queue depth and card
//! state), the simulated value, the error, and the tolerance it is held to.
//! Every place that sets a published figure beside a simulated one (run,
//! review, calibrate) goes through here.

use crate::runs::metrics::{DirStats, Interval};
use crate::runs::phase::Phase;
use crate::runs::workload::Mix;
use card::{Bound, By, Metric, Profile, Published, State, ROUND_FULL_SIZE_S};
use serde::{Deserialize, Serialize};

/// Tolerance, in percent, for a figure of this publisher and metric:
/// reviewers' throughput 10%, vendors' 15%; average latency 15%; a
/// standard deviation or a maximum (one sample of the tail) 25%.
pub fn tolerance_percent(by: By, metric: Metric) -> f64 {
    match (by, metric) {
        (By::Reviewer, Metric::Iops | Metric::MbPerS) => 10.0,
        (By::Vendor, Metric::Iops | Metric::MbPerS) => 15.0,
        (_, Metric::LatencyAvgMs | Metric::LatencyAvgUs) => 15.0,
        (_, Metric::LatencyMaxMs | Metric::LatencyStdMs) => 25.0,
    }
}

/// Whether a miss of this metric fails calibration (and whether `fit`
/// searches for it). Throughput, average latency and the latency
/// standard deviation are held: each sums a whole run. A maximum is
/// shown and judged but not held: it is one I/O of the run, so it grows
/// with the run's length and a scaled card's shorter runs meet fewer of
/// the rare stalls that set it (docs/design/model.md, "Known gaps").
pub fn held(metric: Metric) -> bool {
    !matches!(metric, Metric::LatencyMaxMs)
}

/// A published figure judged against a simulated one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Check {
    pub by: By,
    pub source: String,
    pub what: String,
    pub workload: String,
    pub threads: u32,
    pub qd: u32,
    pub state: State,
    pub metric: Metric,
    pub bound: Bound,
    pub published: f64,
    pub range: Option<[f64; 2]>,
    pub simulated: f64,
    /// (simulated - published) / published, in percent.
    pub error_percent: f64,
    pub tolerance_percent: f64,
    /// Within tolerance of the published value (or of its range), or, for
    /// an "up to"/"under" figure, not beyond it by more than the tolerance.
    pub within: bool,
    /// Why a vendor figure cannot hold with the reviewers' (from the profile).
    pub conflict: Option<String>,
    /// A gap the model is known to have, for a reviewer figure it misses
    /// (from the profile).
    pub gap: Option<String>,
    /// The host the figure was measured on, where not the reviewers'
    /// Linux server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// For a maximum: the share of a full-size round's I/Os it was taken
    /// over (`sample_share`), where under 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_share: Option<f64>,
}

impl Check {
    /// Outside its tolerance with no stated reason, on a held metric: a
    /// failure of the model.
    pub fn failed(&self) -> bool {
        !self.within && self.conflict.is_none() && self.gap.is_none() && held(self.metric)
    }

    /// "ok", "MISS", "MISS (tail, not held)", "MISS (known gap)", or
    /// "conflict" (outside, for the reason the profile gives).
    pub fn verdict(&self) -> &'static str {
        match (self.within, &self.conflict) {
            (true, _) => "ok",
            (false, Some(_)) => "conflict",
            (false, None) if self.gap.is_some() => "MISS (known gap)",
            (false, None) if held(self.metric) => "MISS",
            (false, None) => "MISS (tail, not held)",
        }
    }

    /// The published figure as the publisher states it.
    pub fn published_text(&self) -> String {
        let v = |x: f64| crate::number::num(x);
        let core = match self.range {
            Some([lo, hi]) => format!("{} ({}-{})", v(self.published), v(lo), v(hi)),
            None => v(self.published),
        };
        match self.bound {
            Bound::About => core,
            Bound::UpTo => format!("up to {core}"),
            Bound::Under => format!("under {core}"),
        }
    }

    /// One line for a console: who, what, conditions, published,
    /// simulated, error, tolerance and verdict (with the conflict's reason).
    pub fn line(&self) -> String {
        let who = match self.by {
            By::Reviewer => "reviewer",
            By::Vendor => "vendor",
        };
        let verdict = match (&self.conflict, &self.gap, self.within) {
            (Some(why), _, false) => format!("conflict: {why}"),
            (None, Some(why), false) => format!("MISS (known gap: {why})"),
            _ => self.verdict().to_string(),
        };
        let verdict = match self.sample_note() {
            Some(note) => format!("{verdict} ({note})"),
            None => verdict,
        };
        format!(
            "{who:<8} {:<44} {:<30} published {:>18} {:<10} simulated {:>10}  error {:>+6.1}% (tolerance {:.0}%)  {verdict}",
            self.what,
            format!("[{}]", self.conditions()),
            self.published_text(),
            self.metric.unit(),
            crate::number::num(self.simulated),
            self.error_percent,
            self.tolerance_percent,
        )
    }

    /// What a maximum taken over fewer I/Os than a full-size round's
    /// cannot show, in a few words.
    pub fn sample_note(&self) -> Option<String> {
        let share = self.sample_share?;
        Some(format!(
            "a maximum over 1/{:.0} of a full-size round's I/Os: a stall rarer than one in them is missed; rounds of {ROUND_FULL_SIZE_S} s (run and review: --interval {ROUND_FULL_SIZE_S}) sample as at full size",
            1.0 / share
        ))
    }

    /// The conditions, in a few words: "4k-write 16T/16Q steady".
    pub fn conditions(&self) -> String {
        let state = match self.state {
            State::Fresh => "fresh",
            State::Filled => "filled, idle",
            State::Steady => "steady",
        };
        format!("{} {}T/{}Q {state}", self.workload, self.threads, self.qd)
    }
}

/// Judges `simulated` against a published figure.
pub fn judge(p: &Published, simulated: f64) -> Check {
    let tol = tolerance_percent(p.by, p.metric) / 100.0;
    let [lo, hi] = p.range.unwrap_or([p.value, p.value]);
    let within = match p.bound {
        Bound::About => simulated >= lo * (1.0 - tol) && simulated <= hi * (1.0 + tol),
        Bound::UpTo | Bound::Under => simulated <= hi * (1.0 + tol),
    };
    Check {
        by: p.by,
        source: p.source.clone(),
        what: p.what.clone(),
        workload: p.workload.clone(),
        threads: p.threads,
        qd: p.qd,
        state: p.state,
        metric: p.metric,
        bound: p.bound,
        published: p.value,
        range: p.range,
        simulated,
        error_percent: (simulated - p.value) / p.value * 100.0,
        tolerance_percent: tol * 100.0,
        within,
        conflict: p.conflict.clone(),
        gap: p.gap.clone(),
        host: p.host.as_ref().map(|_| p.host_id().to_string()),
        sample_share: None,
    }
}

/// The share of a full-size round's I/Os a maximum over rounds
/// `round_s` long was taken over, where under 1 (`None` for any other
/// metric). A scaled card serves as many I/Os a second as the full-size
/// one (and is built to meet each kind of stall as often per I/O, see
/// `card::scale`), but its rounds are as many times shorter as its blocks
/// hold fewer pages: a maximum is the longest of fewer I/Os, and a stall
/// rarer than one in them is missed. Real storage measured in rounds
/// shorter than 60 s is sampled likewise.
pub fn sample_share(metric: Metric, round_s: f64) -> Option<f64> {
    let share = round_s / ROUND_FULL_SIZE_S as f64;
    (metric == Metric::LatencyMaxMs && share > 0.0 && share < 1.0 - 1e-9).then_some(share)
}

fn value_of(metric: Metric, iops: f64, mb_per_s: f64, avg_ms: f64, max_ms: f64, std_ms: f64) -> f64 {
    match metric {
        Metric::Iops => iops,
        Metric::MbPerS => mb_per_s,
        Metric::LatencyAvgMs => avg_ms,
        Metric::LatencyAvgUs => avg_ms * 1000.0,
        Metric::LatencyMaxMs => max_ms,
        Metric::LatencyStdMs => std_ms,
    }
}

/// A metric of a whole measured phase (all of its I/Os).
pub fn of_phase(metric: Metric, s: &DirStats) -> f64 {
    value_of(metric, s.iops, s.mb_per_s, s.latency_avg_ms, s.latency_max_ms, s.latency_std_ms)
}

/// A metric of one round (the fresh-out-of-box burst is a first round).
pub fn of_round(metric: Metric, i: &Interval) -> f64 {
    value_of(metric, i.iops, i.mb_per_s, i.latency_avg_ms, i.latency_max_ms, i.latency_std_ms)
}

/// The phase's first round of `round_s` (its first round where `None`):
/// the rounds that start within it, merged; none where the phase ended
/// before a whole one, or where its first round is longer (`--interval`
/// beyond the card's round: the burst is over before it ends).
fn first_round(rounds: &[Interval], round_s: Option<f64>) -> Option<Interval> {
    let Some(r) = round_s else { return rounds.first().cloned() };
    if rounds.first().is_some_and(|i| i.length_s > r * (1.0 + 1e-6)) {
        return None;
    }
    let n = rounds.iter().take_while(|i| i.start_s < r * (1.0 - 1e-9)).count();
    let merged = match n {
        1 => rounds[0].clone(),
        _ => Interval::merged(&rounds[..n])?,
    };
    (merged.length_s >= r * (1.0 - 1e-6)).then_some(merged)
}

/// A figure whose workload is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("published figure '{what}': {why}")]
pub struct FigureWorkload {
    pub what: String,
    pub why: crate::runs::workload::WorkloadError,
}

/// The workload a figure names, parsed.
pub fn mix_of(p: &Published) -> Result<Mix, FigureWorkload> {
    Mix::parse(&p.workload).map_err(|why| FigureWorkload { what: p.what.clone(), why })
}

/// The figures of a profile that apply to a format.
pub fn for_format<'a>(profile: &'a Profile, format: &'a str) -> impl Iterator<Item = &'a Published> + 'a {
    profile.published.iter().filter(move |p| p.format_or(&profile.default_format) == format)
}

/// The formats a profile's figures were measured on: the default first,
/// then the others in the order the figures name them.
pub fn formats_with_figures(profile: &Profile) -> Vec<String> {
    let mut formats = vec![profile.default_format.clone()];
    for p in &profile.published {
        let f = p.format_or(&profile.default_format);
        if !formats.iter().any(|g| g == f) {
            formats.push(f.to_string());
        }
    }
    formats
}

/// Whether a phase ran the figure's conditions (its card state is the
/// caller's to say).
pub fn comparable(p: &Published, phase: &Phase) -> bool {
    p.host_id() == card::host_id(phase.host.as_deref())
        && p.threads == phase.threads
        && p.qd == phase.queue_depth
        && mix_of(p).is_ok_and(|m| same_load(&m, &phase.workload))
}

/// Whether a judged figure was judged on `phase`'s conditions (its load,
/// threads and queue depth).
pub fn check_of(c: &Check, phase: &Phase) -> bool {
    card::host_id(c.host.as_deref()) == card::host_id(phase.host.as_deref())
        && c.threads == phase.threads
        && c.qd == phase.queue_depth
        && Mix::parse(&c.workload).is_ok_and(|m| same_load(&m, &phase.workload))
}

/// The same read share, transfer sizes and pattern (names aside).
pub fn same_load(a: &Mix, b: &Mix) -> bool {
    a.read_ppm == b.read_ppm && a.sizes == b.sizes && a.sequential == b.sequential
}

/// Every figure of the profile's format that one of `phases` is comparable
/// to, judged. A phase in `State::Fresh` is judged by its first round as
/// the reviewers measured it: `burst_round_s` long (the card's round at
/// its scale; `None`: the phase's rounds are that long), shorter rounds
/// (`--interval`) merged up to it, so that the burst never depends on
/// how finely a run is sampled.
pub fn compare(profile: &Profile, format: &str, phases: &[(State, &Phase)], burst_round_s: Option<f64>) -> Vec<Check> {
    let mut out = Vec::new();
    for p in for_format(profile, format) {
        let Some((_, ph)) = phases.iter().find(|(s, ph)| *s == p.state && comparable(p, ph)) else { continue };
        let (simulated, round_s) = match p.state {
            State::Fresh => match first_round(&ph.intervals, burst_round_s) {
                Some(i) => (of_round(p.metric, &i), i.length_s),
                None => continue,
            },
            State::Filled | State::Steady => (of_phase(p.metric, &ph.summary.all), ph.intervals.first().map_or(0.0, |i| i.length_s)),
        };
        out.push(Check { sample_share: sample_share(p.metric, round_s), ..judge(p, simulated) });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(start_s: f64, length_s: f64, iops: f64, latency_avg_ms: f64) -> Interval {
        Interval {
            start_s,
            length_s,
            iops,
            read_iops: 0.0,
            write_iops: iops,
            mb_per_s: iops * 4096.0 / 1e6,
            latency_avg_ms,
            latency_max_ms: latency_avg_ms * 3.0,
            latency_std_ms: 0.1,
            read_latency_avg_ms: 0.0,
            write_latency_avg_ms: latency_avg_ms,
            wa: 1.0,
            free_superblocks: 10,
        }
    }

    /// The burst was once judged by the first round whatever its length,
    /// so `--interval 0.25` judged a quarter of the reviewers' round (the
    /// fastest part) and missed: shorter rounds are merged up to the
    /// reviewers' round, by time for rates and by I/Os for latencies; a
    /// phase shorter than one such round gives no burst.
    #[test]
    fn the_burst_is_the_reviewers_first_round_whatever_the_sampling() {
        let quarters = [
            round(0.0, 0.25, 400.0, 1.0),
            round(0.25, 0.25, 200.0, 2.0),
            round(0.5, 0.25, 200.0, 2.0),
            round(0.75, 0.25, 200.0, 2.0),
            round(1.0, 0.25, 100.0, 4.0),
        ];
        let b = first_round(&quarters, Some(1.0)).unwrap();
        assert_eq!((b.length_s, b.iops), (1.0, 250.0));
        assert!((b.latency_avg_ms - (400.0 * 1.0 + 600.0 * 2.0) / 1000.0).abs() < 1e-12, "{}", b.latency_avg_ms);
        assert_eq!(b.latency_max_ms, 6.0);
        assert!(first_round(&quarters[..2], Some(1.0)).is_none(), "half a round is no burst");
        let whole = [round(0.0, 1.0, 300.0, 1.0)];
        assert_eq!(first_round(&whole, Some(1.0)).unwrap(), whole[0], "a round of the reviewers' length is taken as it is");
        assert!(first_round(&[round(0.0, 4.0, 300.0, 1.0)], Some(1.0)).is_none(), "a longer round holds more than the burst");
        assert_eq!(first_round(&quarters, None).unwrap(), quarters[0]);
    }

    fn fig(by: By, metric: Metric, bound: Bound, value: f64, range: Option<[f64; 2]>) -> Published {
        Published {
            by,
            source: "s".into(),
            what: "w".into(),
            format: None,
            workload: "4k-write".into(),
            threads: 16,
            qd: 16,
            state: State::Steady,
            metric,
            value,
            range,
            bound,
            conflict: None,
            gap: None,
            host: None,
        }
    }

    #[test]
    fn tolerances_follow_publisher_and_metric() {
        let p = fig(By::Reviewer, Metric::Iops, Bound::About, 100.0, None);
        assert!(judge(&p, 109.9).within && !judge(&p, 110.1).within && !judge(&p, 89.9).within);
        let v = fig(By::Vendor, Metric::Iops, Bound::About, 100.0, None);
        assert!(judge(&v, 114.0).within && !judge(&v, 84.0).within);
        let l = fig(By::Reviewer, Metric::LatencyAvgMs, Bound::About, 1.0, None);
        assert!(judge(&l, 1.14).within && !judge(&l, 1.16).within);
    }

    #[test]
    fn ranges_widen_and_bounds_cap() {
        let p = fig(By::Reviewer, Metric::LatencyMaxMs, Bound::About, 50.0, Some([30.0, 80.0]));
        assert!(judge(&p, 25.0).within && judge(&p, 95.0).within && !judge(&p, 21.0).within && !judge(&p, 101.0).within);
        let u = fig(By::Vendor, Metric::Iops, Bound::UpTo, 100.0, None);
        let c = judge(&u, 40.0);
        assert!(c.within && (c.error_percent + 60.0).abs() < 1e-9);
        assert!(!judge(&u, 116.0).within);
    }

    /// A maximum over a scaled card's shorter rounds says how much of a
    /// full-size round's I/Os it saw, and how to see them all; nothing
    /// else does, and full-size rounds need no word.
    #[test]
    fn a_maximum_over_short_rounds_says_what_share_it_saw() {
        assert_eq!(sample_share(Metric::LatencyMaxMs, 60.0 / 64.0), Some(1.0 / 64.0));
        for (metric, round_s) in
            [(Metric::LatencyMaxMs, 60.0), (Metric::LatencyMaxMs, 120.0), (Metric::LatencyMaxMs, 0.0), (Metric::LatencyStdMs, 1.0), (Metric::Iops, 1.0)]
        {
            assert_eq!(sample_share(metric, round_s), None, "{metric:?} over {round_s} s rounds");
        }
        let max = fig(By::Reviewer, Metric::LatencyMaxMs, Bound::About, 8.0, None);
        let c = Check { sample_share: sample_share(max.metric, 60.0 / 64.0), ..judge(&max, 2.2) };
        assert!(
            c.line().contains("MISS (tail, not held) (a maximum over 1/64 of a full-size round's I/Os") && c.line().contains("--interval 60"),
            "{}",
            c.line()
        );
        assert!(!judge(&max, 2.2).line().contains("full-size round"));
    }

    #[test]
    fn a_conflict_is_reported_not_failed() {
        let mut v = fig(By::Vendor, Metric::Iops, Bound::About, 100.0, None);
        v.conflict = Some("the reviewers measured half".into());
        let c = judge(&v, 50.0);
        assert!(!c.within && !c.failed() && c.verdict() == "conflict");
        let r = judge(&fig(By::Reviewer, Metric::Iops, Bound::About, 100.0, None), 50.0);
        assert!(r.failed() && r.verdict() == "MISS");
        let t = judge(&fig(By::Reviewer, Metric::LatencyMaxMs, Bound::About, 10.0, None), 30.0);
        assert!(!t.within && !t.failed() && t.verdict() == "MISS (tail, not held)");
        let s = judge(&fig(By::Reviewer, Metric::LatencyStdMs, Bound::About, 0.5, None), 0.7);
        assert!(s.failed() && s.verdict() == "MISS", "a standard deviation is held: 0.7 against 0.5 (25%)");
    }
}
