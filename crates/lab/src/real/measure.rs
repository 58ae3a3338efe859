//! Real storage measured through fio, the load generator reviewers trust:
//! the job for a mix at a thread count and queue depth on a target (a
//! file, a block device, or an NBD export), run with one cumulative JSON
//! report a round (`--status-interval`), each report's difference from
//! the one before turned into the lab's round (`Interval`), live, so that
//! a caller can stop fio as soon as what it waits for holds.
//!
//! From fio's cumulative figures a round's I/Os, bytes, average and
//! standard deviation of latency are exact (sums and sums of squares
//! recovered from each report's count, mean and standard deviation). Its
//! maximum is exact when the run's maximum rose in the round; otherwise
//! it is the highest bucket of the round's completion-latency histogram
//! (fio's buckets are within 1/64 of their value). Latency is fio's
//! `lat` (submission to completion), as the simulator's is.

pub use crate::real::target::Target;
pub use crate::runs::measurement::Measurement;
use crate::runs::metrics::{interval_of, Acc, Closed, DirStats, Interval, Summary};
use crate::runs::workload::Mix;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::BufReader;
use std::process::{Command, Stdio};
use units::NS_PER_SEC;

#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("fio is not installed (or not on PATH): install Debian's fio package (apt-get install fio); flashlab measures real storage through it")]
    FioMissing,
    #[error("fio failed ({status}): {stderr}")]
    FioFailed { status: String, stderr: String },
    #[error(transparent)]
    Target(#[from] crate::real::target::TargetError),
    /// The target could not be erased before preconditioning: why.
    #[error("{0}")]
    Erase(String),
    /// A review profile not of the procedure.
    #[error("{0}")]
    Profile(String),
    #[error("fio's report: {0}")]
    Report(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Target {
    /// How fio reaches it: engine and address options.
    fn fio_options(&self) -> Vec<(&'static str, String)> {
        match self {
            Target::Path(p) => vec![("ioengine", "libaio".into()), ("direct", "1".into()), ("filename", p.display().to_string())],
            Target::Nbd(uri) => vec![("ioengine", "nbd".into()), ("uri", uri.clone())],
        }
    }
}

/// One fio run: a mix at `threads` jobs x `queue_depth` for `runtime_s`
/// seconds, reported every `round_s` seconds.
#[derive(Debug, Clone)]
pub struct Job {
    pub target: Target,
    pub mix: Mix,
    pub threads: u32,
    pub queue_depth: u32,
    pub runtime_s: u64,
    pub round_s: u64,
    /// Seconds run first and not measured (fio's `ramp_time`: its
    /// counters start again after it).
    pub ramp_s: u64,
    /// Bytes of the target the I/Os range over (fio's `size`); `None`:
    /// the whole target.
    pub size_bytes: Option<u64>,
    /// Bytes to transfer, then stop (fio's `io_size`; `runtime_s` still
    /// caps it); `None`: run for `runtime_s`.
    pub io_bytes: Option<u64>,
}

impl Job {
    /// fio's command line: random offsets over the whole target with no
    /// random map, fresh buffers, reported as one group (the reviewers'
    /// own options).
    pub fn args(&self) -> Vec<String> {
        assert!(
            self.threads >= 1 && self.queue_depth >= 1 && self.round_s >= 1,
            "a job runs at least one thread at depth 1, reported each second or less often"
        );
        let mut o: Vec<(&str, String)> = vec![("name", "flashlab".into())];
        o.extend(self.target.fio_options());
        o.extend(self.mix.fio_options());
        let (numjobs, iodepth) = self.mix.fio_jobs(self.threads, self.queue_depth);
        let until = match self.io_bytes {
            Some(b) => ("io_size", b.to_string()),
            None => ("time_based", "1".into()),
        };
        o.extend([
            ("iodepth", iodepth.to_string()),
            ("numjobs", numjobs.to_string()),
            ("norandommap", "1".into()),
            ("randrepeat", "0".into()),
            ("refill_buffers", "1".into()),
            ("group_reporting", "1".into()),
            until,
            ("runtime", self.runtime_s.to_string()),
            ("status-interval", self.round_s.to_string()),
            ("output-format", "json+".into()),
        ]);
        if self.ramp_s > 0 {
            o.push(("ramp_time", self.ramp_s.to_string()));
        }
        if let Some(b) = self.size_bytes {
            o.push(("size", b.to_string()));
        }
        o.into_iter().map(|(k, v)| format!("--{k}={v}")).collect()
    }
}

/// fio's version (`fio --version`), or why it cannot run.
pub fn fio_version() -> Result<String, MeasureError> {
    match Command::new("fio").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => Err(MeasureError::FioFailed { status: o.status.to_string(), stderr: String::from_utf8_lossy(&o.stderr).trim().to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(MeasureError::FioMissing),
        Err(e) => Err(e.into()),
    }
}

/// One direction's totals in a cumulative report.
#[derive(Debug, Clone, Default, PartialEq)]
struct DirTotals {
    ios: u64,
    bytes: u64,
    /// Sum and sum of squares of latency, ns, recovered from fio's count,
    /// mean and (sample) standard deviation.
    lat_sum: f64,
    lat_sumsq: f64,
    lat_max_ns: u64,
    lat_mean_ns: f64,
    lat_std_ns: f64,
    /// Completion-latency histogram: bucket value (ns) -> count.
    bins: BTreeMap<u64, u64>,
    /// fio's completion-latency percentiles, percent -> ns.
    percentiles: Vec<(f64, u64)>,
}

/// One cumulative report: the jobs' run time so far and both directions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Run time of the jobs so far, seconds (fio's `job_runtime` is
    /// summed over the jobs).
    runtime_s: f64,
    read: DirTotals,
    write: DirTotals,
    /// Reported during fio's ramp time: I/Os counted, no latency yet (and
    /// every counter starts again when it ends).
    ramping: bool,
}

fn num(v: &Value, key: &str) -> Result<f64, MeasureError> {
    v.get(key).and_then(Value::as_f64).ok_or_else(|| MeasureError::Report(format!("no number '{key}'")))
}

impl DirTotals {
    fn of(d: &Value) -> Result<DirTotals, MeasureError> {
        let lat = d.get("lat_ns").ok_or_else(|| MeasureError::Report("no 'lat_ns'".into()))?;
        let n = num(lat, "N").unwrap_or(0.0);
        let (mean, std) = (num(lat, "mean")?, num(lat, "stddev")?);
        let clat = d.get("clat_ns");
        let bins = clat
            .and_then(|c| c.get("bins"))
            .and_then(Value::as_object)
            .map(|b| b.iter().filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?))).collect())
            .unwrap_or_default();
        let percentiles = clat
            .and_then(|c| c.get("percentile"))
            .and_then(Value::as_object)
            .map(|p| p.iter().filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?))).collect())
            .unwrap_or_default();
        Ok(DirTotals {
            ios: num(d, "total_ios")? as u64,
            bytes: num(d, "io_bytes")? as u64,
            lat_sum: mean * n,
            // fio's standard deviation is the sample one (over N - 1).
            lat_sumsq: if n > 1.0 { (n - 1.0) * std * std + n * mean * mean } else { n * mean * mean },
            lat_max_ns: if n > 0.0 { num(lat, "max")? as u64 } else { 0 },
            lat_mean_ns: mean,
            lat_std_ns: std,
            bins,
            percentiles,
        })
    }

    /// What happened between `before` and this report, as the lab's sums.
    fn since(&self, before: &DirTotals) -> Acc {
        let ios = self.ios.saturating_sub(before.ios);
        let max = if ios == 0 {
            0
        } else if self.lat_max_ns > before.lat_max_ns {
            self.lat_max_ns
        } else {
            // The highest bucket the round added to.
            self.bins.iter().rev().find(|(k, &c)| c > before.bins.get(k).copied().unwrap_or(0)).map_or(0, |(&k, _)| k.min(self.lat_max_ns))
        };
        Acc {
            ios,
            bytes: self.bytes.saturating_sub(before.bytes),
            lat_sum_ns: (self.lat_sum - before.lat_sum).max(0.0).round() as u128,
            lat_sumsq_ns2: (self.lat_sumsq - before.lat_sumsq).max(0.0).round() as u128,
            lat_max_ns: max,
        }
    }

    /// The whole run's figures for this direction over `secs`.
    fn stats(&self, secs: f64) -> DirStats {
        let ms = |ns: f64| ns / 1e6;
        // A percentile above the maximum is the maximum (buckets round).
        let pct = |p: f64| self.percentiles.iter().find(|(q, _)| (q - p).abs() < 1e-6).map_or(0.0, |&(_, v)| ms(v.min(self.lat_max_ns) as f64));
        DirStats {
            ios: self.ios,
            iops: if secs > 0.0 { self.ios as f64 / secs } else { 0.0 },
            mb_per_s: if secs > 0.0 { self.bytes as f64 / secs / 1e6 } else { 0.0 },
            latency_avg_ms: ms(self.lat_mean_ns),
            latency_max_ms: ms(self.lat_max_ns as f64),
            latency_std_ms: ms(self.lat_std_ns),
            latency_p50_ms: pct(50.0),
            latency_p99_ms: pct(99.0),
            latency_p999_ms: pct(99.9),
            latency_p9999_ms: pct(99.99),
        }
    }
}

impl Report {
    /// One of fio's JSON reports (group reporting: its first job is the
    /// group).
    pub fn parse(v: &Value, threads: u32) -> Result<Report, MeasureError> {
        let job = v.get("jobs").and_then(|j| j.get(0)).ok_or_else(|| MeasureError::Report("no job in the report".into()))?;
        if let Some(e) = job.get("error").and_then(Value::as_i64).filter(|&e| e != 0) {
            return Err(MeasureError::Report(format!("the job ended with error {e} ({})", std::io::Error::from_raw_os_error(e as i32))));
        }
        let dir = |k: &str| job.get(k).ok_or_else(|| MeasureError::Report(format!("no '{k}'"))).and_then(DirTotals::of);
        let (read, write) = (dir("read")?, dir("write")?);
        let timed = |d: &str| job.get(d).and_then(|d| d.get("lat_ns")).and_then(|l| l.get("N")).and_then(Value::as_u64).unwrap_or(0);
        let ramping = read.ios + write.ios > 0 && timed("read") + timed("write") == 0;
        Ok(Report { runtime_s: num(job, "job_runtime")? / 1000.0 / threads.max(1) as f64, read, write, ramping })
    }

    /// The round from `before` to this report, as the lab keeps it.
    /// Write amplification and free superblocks are the card's own and
    /// are not measured on real storage: 0.
    pub fn round_since(&self, before: &Report) -> Interval {
        let length = ((self.runtime_s - before.runtime_s).max(1e-9) * NS_PER_SEC as f64) as u64;
        let start = (before.runtime_s * NS_PER_SEC as f64) as u64;
        let closed = Closed { read: self.read.since(&before.read), write: self.write.since(&before.write), start, length };
        interval_of(&closed, 0, 0.0, 0)
    }

    /// The whole run's figures.
    pub fn summary(&self) -> Summary {
        let all = DirTotals {
            ios: self.read.ios + self.write.ios,
            bytes: self.read.bytes + self.write.bytes,
            lat_sum: self.read.lat_sum + self.write.lat_sum,
            lat_sumsq: self.read.lat_sumsq + self.write.lat_sumsq,
            lat_max_ns: self.read.lat_max_ns.max(self.write.lat_max_ns),
            ..DirTotals::default()
        };
        let n = all.ios as f64;
        let mean = if n > 0.0 { all.lat_sum / n } else { 0.0 };
        let std = if n > 1.0 { ((all.lat_sumsq - n * mean * mean) / (n - 1.0)).max(0.0).sqrt() } else { 0.0 };
        // Both directions' percentiles together need both histograms.
        let mut bins = self.read.bins.clone();
        for (k, c) in &self.write.bins {
            *bins.entry(*k).or_default() += c;
        }
        let percentiles = [50.0, 99.0, 99.9, 99.99].iter().map(|&p| (p, percentile_of(&bins, p))).collect();
        let all = DirTotals { lat_mean_ns: mean, lat_std_ns: std, bins, percentiles, ..all };
        Summary { read: self.read.stats(self.runtime_s), write: self.write.stats(self.runtime_s), all: all.stats(self.runtime_s) }
    }
}

/// The bucket value at percentile `p` of a histogram.
fn percentile_of(bins: &BTreeMap<u64, u64>, p: f64) -> u64 {
    let total: u64 = bins.values().sum();
    let want = (total as f64 * p / 100.0).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (&k, &c) in bins {
        seen += c;
        if seen >= want {
            return k;
        }
    }
    0
}

/// What a fio run measured: its rounds, the whole run, and fio's version.
#[derive(Debug, Clone)]
pub struct Measured {
    pub rounds: Vec<Interval>,
    pub summary: Summary,
    pub runtime_s: f64,
    pub fio: String,
    /// Stopped before its run time because `on_round` said so.
    pub stopped_early: bool,
}

/// Runs `job`, calling `on_round` with each round as fio reports it (and
/// every round so far); when it returns false, fio is told to stop
/// (SIGINT: it ends its jobs and writes its final report). The last,
/// partial round is kept when it is at least half a round long.
pub fn run(job: &Job, mut on_round: impl FnMut(&Interval, &[Interval]) -> bool) -> Result<Measured, MeasureError> {
    job.target.inspect()?;
    let fio = fio_version()?;
    let mut child = Command::new("fio").args(job.args()).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let mut rounds = Vec::new();
    let (mut last, mut stopped_early) = (Report::default(), false);
    let mut parse_error = None;
    for v in reports(BufReader::new(stdout)) {
        let report = match v.and_then(|v| Report::parse(&v, job.threads)) {
            Ok(r) => r,
            Err(e) => {
                parse_error.get_or_insert(e);
                stop(&child);
                continue;
            }
        };
        if report.ramping {
            continue;
        }
        let round = report.round_since(&last);
        let whole = round.length_s >= job.round_s as f64 * 0.5;
        last = report;
        if !whole {
            continue;
        }
        rounds.push(round);
        if !stopped_early && !on_round(rounds.last().expect("pushed"), &rounds) {
            stopped_early = true;
            stop(&child);
        }
    }
    let status = child.wait()?;
    let stderr = errors.join().unwrap_or_default();
    let failed = |why: String| MeasureError::FioFailed { status: why, stderr: stderr.trim().to_string() };
    match parse_error {
        // A job's error code says less than fio's own words.
        Some(e @ MeasureError::Report(_)) if !stderr.trim().is_empty() => return Err(failed(e.to_string())),
        Some(e) => return Err(e),
        // Stopped by its caller, fio exits with the signal's status.
        None if !(status.success() || stopped_early) || last.runtime_s == 0.0 => return Err(failed(status.to_string())),
        None => {}
    }
    Ok(Measured { summary: last.summary(), runtime_s: last.runtime_s, rounds, fio, stopped_early })
}

/// fio's JSON reports as they come: each begins with a line `{` and ends
/// with a line `}`; what fio says between them (such as "fio: terminating
/// on signal 2") is not a report.
fn reports(r: impl std::io::BufRead) -> impl Iterator<Item = Result<Value, MeasureError>> {
    let mut doc: Option<String> = None;
    r.lines().filter_map(move |line| {
        let line = match line {
            Ok(l) => l,
            Err(e) => return Some(Err(e.into())),
        };
        match (&mut doc, line.as_str()) {
            (None, "{") => doc = Some(line + "\n"),
            (None, _) => {}
            (Some(d), "}") => {
                d.push('}');
                let text = doc.take().expect("a report");
                return Some(serde_json::from_str(&text).map_err(|e| MeasureError::Report(e.to_string())));
            }
            (Some(d), _) => {
                d.push_str(&line);
                d.push('\n');
            }
        }
        None
    })
}

/// Asks fio to end its jobs and report (as Ctrl-C does).
fn stop(child: &std::process::Child) {
    // SAFETY: kill with a pid this process spawned and has not reaped.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(runtime_ms: u64, threads: u64, ios: u64, mean: f64, std: f64, max: u64, bins: Value) -> Value {
        let dir = |ios: u64| {
            json!({ "total_ios": ios, "io_bytes": ios * 4096,
                    "lat_ns": { "N": ios, "mean": mean, "stddev": std, "max": max, "min": 1 },
                    "clat_ns": { "N": ios, "bins": bins.clone(), "percentile": { "50.000000": 100, "99.000000": 200 } } })
        };
        json!({ "jobs": [ { "error": 0, "job_runtime": runtime_ms * threads, "read": dir(ios), "write": dir(0) } ] })
    }

    /// Two reports' difference is the round between them: its I/O rate,
    /// and the mean and spread of the latencies it added.
    #[test]
    fn a_round_is_the_difference_of_two_cumulative_reports() {
        // Round 1: 1000 I/Os at 100 us each. Round 2: 1000 more at 300 us.
        // Over both: mean 200 us; sum of squares 1000*(1e10 + 9e10).
        let n = 2000.0f64;
        let sumsq = 1000.0 * (100e3f64.powi(2) + 300e3f64.powi(2));
        let std2 = ((sumsq - n * 200e3f64.powi(2)) / (n - 1.0)).sqrt();
        let a = Report::parse(&report(1000, 2, 1000, 100e3, 0.0, 100_000, json!({"99968": 1000})), 2).unwrap();
        let b = Report::parse(&report(2000, 2, 2000, 200e3, std2, 300_000, json!({"99968": 1000, "301056": 1000})), 2).unwrap();
        let r1 = a.round_since(&Report::default());
        assert!((r1.iops - 1000.0).abs() < 1e-6, "{r1:?}");
        assert!((r1.latency_avg_ms - 0.1).abs() < 1e-9);
        let r2 = b.round_since(&a);
        assert!((r2.start_s - 1.0).abs() < 1e-9 && (r2.length_s - 1.0).abs() < 1e-9);
        assert!((r2.read_iops - 1000.0).abs() < 1e-6 && r2.write_iops == 0.0);
        assert!((r2.latency_avg_ms - 0.3).abs() < 1e-6, "{}", r2.latency_avg_ms);
        assert!(r2.latency_std_ms < 1e-3, "every I/O of the round took 300 us: {}", r2.latency_std_ms);
        assert!((r2.latency_max_ms - 0.3).abs() < 1e-9);
        assert!((r2.mb_per_s - 4.096).abs() < 1e-9);
    }

    /// When the run's maximum did not rise, a round's maximum is the
    /// highest histogram bucket it added to, never above the run's.
    #[test]
    fn a_rounds_maximum_comes_from_its_own_buckets() {
        let a = Report::parse(&report(1000, 1, 10, 100e3, 0.0, 900_000, json!({"99968": 9, "897024": 1})), 1).unwrap();
        let b = Report::parse(&report(2000, 1, 20, 100e3, 0.0, 900_000, json!({"99968": 18, "897024": 1, "120320": 1})), 1).unwrap();
        let r = b.round_since(&a);
        assert_eq!(r.latency_max_ms, 0.12032);
        assert!(r.latency_max_ms <= b.summary().all.latency_max_ms);
    }

    #[test]
    fn a_failed_job_is_an_error_that_says_why() {
        let v = json!({ "jobs": [ { "error": 5, "job_runtime": 0 } ] });
        let e = Report::parse(&v, 1).unwrap_err().to_string();
        assert!(e.contains("error 5"), "{e}");
    }

    #[test]
    fn the_job_is_the_reviewers_fio_line() {
        let job = Job {
            target: Target::parse("/dev/nvme0n1"),
            mix: Mix::parse("8k-7030").unwrap(),
            threads: 16,
            queue_depth: 16,
            runtime_s: 60,
            round_s: 1,
            ramp_s: 0,
            size_bytes: None,
            io_bytes: None,
        };
        let a = job.args().join(" ");
        for want in [
            "--ioengine=libaio",
            "--direct=1",
            "--filename=/dev/nvme0n1",
            "--rw=randrw",
            "--rwmixread=70",
            "--bs=8k",
            "--iodepth=16",
            "--numjobs=16",
            "--norandommap=1",
            "--status-interval=1",
            "--output-format=json+",
        ] {
            assert!(a.contains(want), "{want} in {a}");
        }
        let nbd = Job { target: Target::parse("nbd+unix:///card?socket=/tmp/s"), ..job };
        assert!(nbd.args().join(" ").contains("--ioengine=nbd --uri=nbd+unix:///card?socket=/tmp/s"));
    }
}
