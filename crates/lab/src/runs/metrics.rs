//! Measurement: every completion goes into HDR histograms (whole run, reads
//! and writes apart) and into per-interval accumulators.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use sim::Io;
use units::{Ns, NS_PER_SEC};

/// Sums for one direction over an interval or a run.
#[derive(Debug, Clone, Default)]
pub struct Acc {
    pub ios: u64,
    pub bytes: u64,
    pub lat_sum_ns: u128,
    pub lat_sumsq_ns2: u128,
    pub lat_max_ns: Ns,
}

impl Acc {
    #[inline]
    fn add(&mut self, lat: Ns, bytes: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.lat_sum_ns += lat as u128;
        self.lat_sumsq_ns2 += lat as u128 * lat as u128;
        self.lat_max_ns = self.lat_max_ns.max(lat);
    }
    fn merge(&self, o: &Acc) -> Acc {
        Acc {
            ios: self.ios + o.ios,
            bytes: self.bytes + o.bytes,
            lat_sum_ns: self.lat_sum_ns + o.lat_sum_ns,
            lat_sumsq_ns2: self.lat_sumsq_ns2 + o.lat_sumsq_ns2,
            lat_max_ns: self.lat_max_ns.max(o.lat_max_ns),
        }
    }
    pub fn avg_ms(&self) -> f64 {
        if self.ios == 0 {
            0.0
        } else {
            self.lat_sum_ns as f64 / self.ios as f64 / 1e6
        }
    }
    pub fn std_ms(&self) -> f64 {
        if self.ios < 2 {
            return 0.0;
        }
        let n = self.ios as f64;
        let mean = self.lat_sum_ns as f64 / n;
        let var = (self.lat_sumsq_ns2 as f64 / n - mean * mean).max(0.0);
        var.sqrt() / 1e6
    }
}

/// The four attributes a reviewer charts, per interval, and more.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Interval {
    /// Start, in virtual seconds since the phase began.
    pub start_s: f64,
    pub length_s: f64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mb_per_s: f64,
    /// Average latency of all I/Os (reads and writes together).
    pub latency_avg_ms: f64,
    /// Peak read or write latency in the interval.
    pub latency_max_ms: f64,
    /// Standard deviation of read latency and of write latency, averaged
    /// (weighted by I/O count), as the reviewers chart it.
    pub latency_std_ms: f64,
    pub read_latency_avg_ms: f64,
    pub write_latency_avg_ms: f64,
    /// Write amplification over the interval (data only), 0 without writes.
    pub wa: f64,
    pub free_superblocks: u64,
}

/// What a results file read back may hold: every figure finite, not
/// negative and below the bounds no card reaches (a billion I/Os or
/// megabytes a second, a latency or a span of a billion ms or seconds),
/// percentiles in order and none above the maximum. The one check on
/// results read back (`sweep` points, `compare`, `fit --figures`).
pub mod readback {
    /// The largest rate, latency (ms), span (s) or ratio believed.
    pub const FIGURE_MAX: f64 = 1e9;

    /// A figure read back that no run gives: where it is and why.
    #[derive(Debug, Clone, PartialEq, thiserror::Error)]
    pub enum Unbelievable {
        #[error("{field} = {value}: a figure must be finite, not negative and at most {FIGURE_MAX:e}")]
        Figure { field: String, value: f64 },
        #[error("{field}: {lower} = {lower_value} is above {upper} = {upper_value}")]
        Order { field: String, lower: String, lower_value: f64, upper: String, upper_value: f64 },
        #[error("{field} = {value}: a share in 0..=1")]
        Share { field: String, value: f64 },
    }

    /// `x` as a figure of field `field`.
    pub fn figure(field: &str, x: f64) -> Result<(), Unbelievable> {
        if x.is_finite() && (0.0..=FIGURE_MAX).contains(&x) {
            Ok(())
        } else {
            Err(Unbelievable::Figure { field: field.to_string(), value: x })
        }
    }

    /// Each of `fields` (name, value) a figure, named under `at`.
    pub fn figures(at: &str, fields: &[(&str, f64)]) -> Result<(), Unbelievable> {
        fields.iter().try_for_each(|(name, x)| figure(&format!("{at}.{name}"), *x))
    }

    /// Figures in order: each at most the next (p50 <= p99 <= ... <= max).
    pub fn ordered(field: &str, xs: &[(&str, f64)]) -> Result<(), Unbelievable> {
        match xs.windows(2).find(|w| w[0].1 > w[1].1 * (1.0 + 1e-9)) {
            Some(w) => Err(Unbelievable::Order {
                field: field.to_string(),
                lower: w[0].0.to_string(),
                lower_value: w[0].1,
                upper: w[1].0.to_string(),
                upper_value: w[1].1,
            }),
            None => Ok(()),
        }
    }

    /// `x` as a share (0 to 1) of field `field`.
    pub fn share(field: &str, x: f64) -> Result<(), Unbelievable> {
        if (0.0..=1.0).contains(&x) {
            Ok(())
        } else {
            Err(Unbelievable::Share { field: field.to_string(), value: x })
        }
    }
}

impl DirStats {
    /// Read back: see [`readback`].
    pub fn check(&self, at: &str) -> Result<(), readback::Unbelievable> {
        let fields = [
            ("iops", self.iops),
            ("mb_per_s", self.mb_per_s),
            ("latency_avg_ms", self.latency_avg_ms),
            ("latency_max_ms", self.latency_max_ms),
            ("latency_std_ms", self.latency_std_ms),
            ("latency_p50_ms", self.latency_p50_ms),
            ("latency_p99_ms", self.latency_p99_ms),
            ("latency_p999_ms", self.latency_p999_ms),
            ("latency_p9999_ms", self.latency_p9999_ms),
        ];
        readback::figures(at, &fields)?;
        readback::ordered(
            at,
            &[
                ("latency_p50_ms", self.latency_p50_ms),
                ("latency_p99_ms", self.latency_p99_ms),
                ("latency_p999_ms", self.latency_p999_ms),
                ("latency_p9999_ms", self.latency_p9999_ms),
                ("latency_max_ms", self.latency_max_ms),
            ],
        )?;
        readback::ordered(at, &[("latency_avg_ms", self.latency_avg_ms), ("latency_max_ms", self.latency_max_ms)])
    }
}

impl Summary {
    /// Read back: each direction's figures and the whole's.
    pub fn check(&self, at: &str) -> Result<(), readback::Unbelievable> {
        self.read.check(&format!("{at}.read"))?;
        self.write.check(&format!("{at}.write"))?;
        self.all.check(&format!("{at}.all"))
    }
}

impl Interval {
    /// Read back: see [`readback`].
    pub fn check(&self, at: &str) -> Result<(), readback::Unbelievable> {
        let fields = [
            ("start_s", self.start_s),
            ("length_s", self.length_s),
            ("iops", self.iops),
            ("read_iops", self.read_iops),
            ("write_iops", self.write_iops),
            ("mb_per_s", self.mb_per_s),
            ("latency_avg_ms", self.latency_avg_ms),
            ("latency_max_ms", self.latency_max_ms),
            ("latency_std_ms", self.latency_std_ms),
            ("read_latency_avg_ms", self.read_latency_avg_ms),
            ("write_latency_avg_ms", self.write_latency_avg_ms),
            ("wa", self.wa),
        ];
        readback::figures(at, &fields)?;
        readback::ordered(at, &[("latency_avg_ms", self.latency_avg_ms), ("latency_max_ms", self.latency_max_ms)])
    }

    /// Consecutive rounds as one: rates weighted by time, average
    /// latencies by I/Os, the maximum the largest. (A standard deviation
    /// is averaged by I/Os, as the rounds' own are over directions.)
    pub fn merged(rounds: &[Interval]) -> Option<Interval> {
        let first = rounds.first()?;
        let length_s: f64 = rounds.iter().map(|r| r.length_s).sum();
        let by_time = |f: fn(&Interval) -> f64| rounds.iter().map(|r| f(r) * r.length_s).sum::<f64>() / length_s;
        let by_ios = |f: fn(&Interval) -> f64, n: fn(&Interval) -> f64| {
            let ios: f64 = rounds.iter().map(|r| n(r) * r.length_s).sum();
            if ios == 0.0 {
                0.0
            } else {
                rounds.iter().map(|r| f(r) * n(r) * r.length_s).sum::<f64>() / ios
            }
        };
        Some(Interval {
            start_s: first.start_s,
            length_s,
            iops: by_time(|r| r.iops),
            read_iops: by_time(|r| r.read_iops),
            write_iops: by_time(|r| r.write_iops),
            mb_per_s: by_time(|r| r.mb_per_s),
            latency_avg_ms: by_ios(|r| r.latency_avg_ms, |r| r.iops),
            latency_max_ms: rounds.iter().map(|r| r.latency_max_ms).fold(0.0, f64::max),
            latency_std_ms: by_ios(|r| r.latency_std_ms, |r| r.iops),
            read_latency_avg_ms: by_ios(|r| r.read_latency_avg_ms, |r| r.read_iops),
            write_latency_avg_ms: by_ios(|r| r.write_latency_avg_ms, |r| r.write_iops),
            wa: by_ios(|r| r.wa, |r| r.write_iops),
            free_superblocks: rounds.last().map_or(first.free_superblocks, |r| r.free_superblocks),
        })
    }
}

/// Whole-run figures for one direction (or both together).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DirStats {
    pub ios: u64,
    pub iops: f64,
    pub mb_per_s: f64,
    pub latency_avg_ms: f64,
    pub latency_max_ms: f64,
    pub latency_std_ms: f64,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    pub latency_p999_ms: f64,
    pub latency_p9999_ms: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub read: DirStats,
    pub write: DirStats,
    pub all: DirStats,
}

pub fn hist() -> Histogram<u64> {
    // 1 ns to ~1,100 s at 3 significant digits: a latency histogram.
    Histogram::new_with_bounds(1, 1 << 40, 3).expect("valid histogram bounds")
}

pub struct Meter {
    pub start: Ns,
    pub interval_ns: Ns,
    next_boundary: Ns,
    cur_read: Acc,
    cur_write: Acc,
    /// Sums of the intervals closed so far.
    read: Acc,
    write: Acc,
    hist_read: Histogram<u64>,
    hist_write: Histogram<u64>,
    /// Intervals closed so far.
    rounds: u64,
}

/// The most intervals a meter closes (a run keeps each): past it, the rest
/// of the run is one, and the run says so (`Meter::full`).
pub const ROUNDS_MAX: u64 = 1_000_000;

/// What the meter hands back at an interval boundary, so the caller can
/// sample the device and decide to stop.
pub struct Closed {
    pub read: Acc,
    pub write: Acc,
    pub start: Ns,
    pub length: Ns,
}

impl Meter {
    pub fn new(start: Ns, interval_ns: Ns) -> Meter {
        Meter {
            start,
            interval_ns,
            next_boundary: start + interval_ns,
            cur_read: Acc::default(),
            cur_write: Acc::default(),
            read: Acc::default(),
            write: Acc::default(),
            hist_read: hist(),
            hist_write: hist(),
            rounds: 0,
        }
    }

    /// Whether the meter has closed `ROUNDS_MAX` intervals and closes no
    /// more.
    pub fn full(&self) -> bool {
        self.rounds >= ROUNDS_MAX
    }

    /// A meter of the whole, without intervals: what a replay reports. Its
    /// cost is its completions', whatever time they span.
    pub fn whole(start: Ns) -> Meter {
        Meter { next_boundary: Ns::MAX, ..Meter::new(start, Ns::MAX - start) }
    }

    /// Records a completion. Returns the intervals it closes (completions
    /// arrive in time order, so an interval closes when one lands past it).
    #[inline]
    pub fn record(&mut self, issued: Ns, completed: Ns, io: &Io, closed: &mut Vec<Closed>) {
        while completed >= self.next_boundary {
            if self.full() {
                self.next_boundary = Ns::MAX;
                break;
            }
            self.rounds += 1;
            // The run's totals take each interval's sums when it closes (the
            // sums are integers: the same as adding every completion twice).
            self.read = self.read.merge(&self.cur_read);
            self.write = self.write.merge(&self.cur_write);
            closed.push(Closed {
                read: std::mem::take(&mut self.cur_read),
                write: std::mem::take(&mut self.cur_write),
                start: self.next_boundary - self.interval_ns,
                length: self.interval_ns,
            });
            self.next_boundary += self.interval_ns;
        }
        let lat = completed - issued;
        let bytes = io.len_bytes as u64;
        if io.write {
            self.cur_write.add(lat, bytes);
            self.hist_write.saturating_record(lat.max(1));
        } else {
            self.cur_read.add(lat, bytes);
            self.hist_read.saturating_record(lat.max(1));
        }
    }

    pub fn summary(&self, elapsed: Ns) -> Summary {
        let secs = elapsed.max(1) as f64 / NS_PER_SEC as f64;
        // A histogram bucket's value is its highest equivalent, which can
        // lie above the largest latency recorded: a percentile never does.
        let pct = |a: &Acc, h: &Histogram<u64>, q: f64| if a.ios > 0 { h.value_at_quantile(q).min(a.lat_max_ns) as f64 / 1e6 } else { 0.0 };
        let dir = |a: &Acc, h: &Histogram<u64>| DirStats {
            ios: a.ios,
            iops: a.ios as f64 / secs,
            mb_per_s: a.bytes as f64 / secs / 1e6,
            latency_avg_ms: a.avg_ms(),
            latency_max_ms: a.lat_max_ns as f64 / 1e6,
            latency_std_ms: a.std_ms(),
            latency_p50_ms: pct(a, h, 0.5),
            latency_p99_ms: pct(a, h, 0.99),
            latency_p999_ms: pct(a, h, 0.999),
            latency_p9999_ms: pct(a, h, 0.9999),
        };
        let mut both = self.hist_read.clone();
        both.add(&self.hist_write).expect("same bounds");
        let (read, write) = (self.read.merge(&self.cur_read), self.write.merge(&self.cur_write));
        Summary { read: dir(&read, &self.hist_read), write: dir(&write, &self.hist_write), all: dir(&read.merge(&write), &both) }
    }
}

/// The reviewers' latency standard deviation: the read and the write
/// standard deviations averaged, weighted by their I/O counts.
pub fn latency_std_ms_reviewers(read_std_ms: f64, read_ios: u64, write_std_ms: f64, write_ios: u64) -> f64 {
    let n = read_ios + write_ios;
    if n == 0 {
        return 0.0;
    }
    (read_std_ms * read_ios as f64 + write_std_ms * write_ios as f64) / n as f64
}

impl Summary {
    /// The reviewers' standard deviation of a phase (as of a round).
    pub fn latency_std_ms_reviewers(&self) -> f64 {
        latency_std_ms_reviewers(self.read.latency_std_ms, self.read.ios, self.write.latency_std_ms, self.write.ios)
    }
}

/// The reviewer's four attributes (and the split) of a closed interval.
pub fn interval_of(c: &Closed, phase_start: Ns, wa: f64, free_superblocks: u64) -> Interval {
    let secs = c.length as f64 / NS_PER_SEC as f64;
    let all = c.read.merge(&c.write);
    let std = latency_std_ms_reviewers(c.read.std_ms(), c.read.ios, c.write.std_ms(), c.write.ios);
    Interval {
        start_s: (c.start - phase_start) as f64 / NS_PER_SEC as f64,
        length_s: secs,
        iops: all.ios as f64 / secs,
        read_iops: c.read.ios as f64 / secs,
        write_iops: c.write.ios as f64 / secs,
        mb_per_s: all.bytes as f64 / secs / 1e6,
        latency_avg_ms: all.avg_ms(),
        latency_max_ms: all.lat_max_ns as f64 / 1e6,
        latency_std_ms: std,
        read_latency_avg_ms: c.read.avg_ms(),
        write_latency_avg_ms: c.write.avg_ms(),
        wa,
        free_superblocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A percentile was once printed above the run's maximum: the HDR
    /// histogram reports a bucket's highest equivalent value, which for a
    /// latency of 1,000,001 ns at 3 significant digits is 1,000,447 ns.
    #[test]
    fn percentiles_never_exceed_the_maximum() {
        let mut m = Meter::new(0, NS_PER_SEC);
        let mut closed = Vec::new();
        let io = Io { offset_bytes: 0, len_bytes: 4096, write: false };
        for i in 0..1000u64 {
            m.record(i, i + 1_000_001 - (i % 7), &io, &mut closed);
        }
        let s = m.summary(2 * NS_PER_SEC);
        for d in [&s.read, &s.all] {
            assert_eq!(d.latency_max_ms, 1.000001);
            for p in [d.latency_p50_ms, d.latency_p99_ms, d.latency_p999_ms, d.latency_p9999_ms] {
                assert!(p <= d.latency_max_ms, "percentile {p} ms above the maximum {} ms", d.latency_max_ms);
            }
            assert!(d.latency_p50_ms <= d.latency_p99_ms && d.latency_p99_ms <= d.latency_p9999_ms);
        }
    }
}
