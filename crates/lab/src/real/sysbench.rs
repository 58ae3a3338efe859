//! SysBench's OLTP read/write test (sysbench 1.0, Debian's package) on a
//! MariaDB server: the command lines, and its report read back.
//!
//! A report's figures are sysbench's own: transactions and queries per
//! second, latency min/average/max. Both percentiles (95th and 99th) are
//! read off sysbench's latency histogram (`--histogram=on`) as sysbench
//! computes its own percentile (the first bucket whose running count
//! reaches the share of events), and checked against the one sysbench
//! prints (`--percentile=99`), within one bucket.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The test run.
pub const TEST: &str = "oltp_read_write";

/// sysbench's arguments for the test on the server at `socket`.
pub fn args(socket: &Path, tables: u32, table_size: u64, threads: u32) -> Vec<String> {
    vec![
        TEST.into(),
        "--db-driver=mysql".into(),
        format!("--mysql-socket={}", socket.display()),
        "--mysql-user=root".into(),
        "--mysql-db=sbtest".into(),
        format!("--tables={tables}"),
        format!("--table-size={table_size}"),
        format!("--threads={threads}"),
    ]
}

/// The arguments that make a measured run of `seconds` and its report.
pub fn run_args(seconds: u64) -> Vec<String> {
    vec![format!("--time={seconds}"), "--events=0".into(), "--report-interval=0".into(), "--histogram=on".into(), "--percentile=99".into(), "run".into()]
}

/// What one sysbench run reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub transactions: u64,
    pub tps: f64,
    pub queries: u64,
    pub qps: f64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    /// sysbench's `total time`, s.
    pub seconds: f64,
    pub latency_min_ms: f64,
    pub latency_avg_ms: f64,
    pub latency_p95_ms: f64,
    pub latency_p99_ms: f64,
    pub latency_max_ms: f64,
}

/// A number after `label` on the first line that holds it, e.g.
/// `transactions:  5769   (1151.56 per sec.)` gives 5769 at 0 and
/// 1151.56 at 1.
fn field(text: &str, label: &str, at: usize) -> Result<f64, ReportWrong> {
    let line = text.lines().map(str::trim).find(|l| l.starts_with(label)).ok_or_else(|| ReportWrong::NoLine(label.to_string()))?;
    let rest = &line[label.len()..];
    let word = rest
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .nth(at)
        .ok_or_else(|| ReportWrong::NoFigure { line: line.to_string(), at })?;
    word.trim_end_matches('s').parse().map_err(|_| ReportWrong::NotNumber { line: line.to_string(), word: word.to_string() })
}

/// A sysbench report without the figures a run reads, or whose own
/// figures disagree.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReportWrong {
    #[error("no '{0}' line in sysbench's report")]
    NoLine(String),
    #[error("'{line}': no figure {at}")]
    NoFigure { line: String, at: usize },
    #[error("'{line}': '{word}' is not a number")]
    NotNumber { line: String, word: String },
    #[error("no latency histogram in sysbench's report (--histogram=on)")]
    NoHistogram,
    #[error("histogram line '{line}': {why}")]
    HistogramLine { line: String, why: String },
    #[error("the latency histogram counts {counted} events, sysbench reports {events}")]
    Counts { counted: u64, events: u64 },
    #[error("the latency histogram is empty: no transaction completed")]
    Empty,
    #[error("the latency histogram's 99th percentile {ours:.2} ms differs from sysbench's {own:.2} ms")]
    P99 { ours: f64, own: f64 },
}

/// The latency histogram's buckets (value ms, count), in order.
fn histogram(text: &str) -> Result<Vec<(f64, u64)>, ReportWrong> {
    let start = text.find("Latency histogram").ok_or(ReportWrong::NoHistogram)?;
    let mut buckets = Vec::new();
    for l in text[start..].lines().skip(2) {
        let Some((value, bar)) = l.split_once('|') else { break };
        let wrong = |why: String| ReportWrong::HistogramLine { line: l.to_string(), why };
        let count = bar.split_whitespace().last().ok_or_else(|| wrong("no count".into()))?;
        let v = value.trim().parse().map_err(|_| wrong(format!("'{}' is not a latency", value.trim())))?;
        buckets.push((v, count.parse().map_err(|_| wrong(format!("'{count}' is not a count")))?));
    }
    Ok(buckets)
}

/// The `p`th percentile of a histogram, as sysbench 1.0 computes it
/// (`sb_histogram_snapshot_get_pct`): the first bucket whose running
/// count reaches the share of events, rounded to the nearest event.
fn percentile(buckets: &[(f64, u64)], p: f64) -> Option<f64> {
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    let want = ((total as f64 * p / 100.0 + 0.5).floor() as u64).max(1);
    let mut seen = 0;
    buckets
        .iter()
        .find(|b| {
            seen += b.1;
            seen >= want
        })
        .map(|b| b.0)
}

/// sysbench's histogram buckets: 1024 from 0.001 ms to 100 s, each about
/// 1.8% above the one before.
const BUCKET_RATIO: f64 = 1.0182;

impl Report {
    /// Reads a `run` report, refusing one without the figures or whose
    /// histogram disagrees with sysbench's own 99th percentile.
    pub fn parse(text: &str) -> Result<Report, ReportWrong> {
        let buckets = histogram(text)?;
        let events = field(text, "total number of events:", 0)? as u64;
        let counted: u64 = buckets.iter().map(|b| b.1).sum();
        if counted != events {
            return Err(ReportWrong::Counts { counted, events });
        }
        let p = |q| percentile(&buckets, q).ok_or(ReportWrong::Empty);
        let r = Report {
            transactions: field(text, "transactions:", 0)? as u64,
            tps: field(text, "transactions:", 1)?,
            queries: field(text, "queries:", 0)? as u64,
            qps: field(text, "queries:", 1)?,
            ignored_errors: field(text, "ignored errors:", 0)? as u64,
            reconnects: field(text, "reconnects:", 0)? as u64,
            seconds: field(text, "total time:", 0)?,
            latency_min_ms: field(text, "min:", 0)?,
            latency_avg_ms: field(text, "avg:", 0)?,
            latency_p95_ms: p(95.0)?,
            latency_p99_ms: p(99.0)?,
            latency_max_ms: field(text, "max:", 0)?,
        };
        let own = field(text, "99th percentile:", 0)?;
        // The report's percentile is taken from the histogram a moment
        // before it is printed: the two may be a bucket apart.
        if own > r.latency_p99_ms * BUCKET_RATIO * 1.001 || r.latency_p99_ms > own * BUCKET_RATIO * 1.001 + 0.0005 {
            return Err(ReportWrong::P99 { ours: r.latency_p99_ms, own });
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report as sysbench 1.0.20 printed it (8 threads, 5 s), its
    /// histogram cut to a few buckets and the counts made to agree.
    const REPORT: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 8
Initializing random number generator from current time

Initializing worker threads...

Threads started!

Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.943 |*                                        10
       2.034 |**************************************** 900
       6.910 |**********                               75
      23.519 |*                                        10
      55.824 |*                                        4
     149.920 |                                         1
 
SQL statistics:
    queries performed:
        read:                            14000
        write:                           4000
        other:                           2000
        total:                           20000
    transactions:                        1000   (199.70 per sec.)
    queries:                             20000 (3994.00 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          5.0085s
    total number of events:              1000

Latency (ms):
         min:                                    0.94
         avg:                                    6.93
         max:                                  149.92
         99th percentile:                       23.52
         sum:                                40003.78

Threads fairness:
    events (avg/stddev):           721.1250/19.86
    execution time (avg/stddev):   5.0005/0.00
";

    #[test]
    fn a_report_gives_its_figures_and_both_percentiles() {
        let r = Report::parse(REPORT).unwrap();
        assert_eq!((r.transactions, r.queries, r.ignored_errors, r.reconnects), (1000, 20000, 0, 0));
        assert_eq!((r.tps, r.qps, r.seconds), (199.70, 3994.00, 5.0085));
        assert_eq!((r.latency_min_ms, r.latency_avg_ms, r.latency_max_ms), (0.94, 6.93, 149.92));
        // 95%: the 950th event is in the 6.910 bucket (910 before it,
        // 985 with it); 99%: the 990th in the 23.519 one (995 with it).
        assert_eq!((r.latency_p95_ms, r.latency_p99_ms), (6.910, 23.519));
        // The printed 99th percentile is checked against the histogram.
        let shifted = REPORT.replace("99th percentile:                       23.52", "99th percentile:                       6.91");
        assert!(Report::parse(&shifted).unwrap_err().to_string().contains("differs from sysbench's 6.91 ms"));
    }

    #[test]
    fn a_report_without_its_figures_is_refused_by_name() {
        let e = Report::parse(&REPORT.replace("reconnects:", "reconnections:")).unwrap_err().to_string();
        assert_eq!(e, "no 'reconnects:' line in sysbench's report");
        assert!(Report::parse(&REPORT.replace("Latency histogram", "")).unwrap_err().to_string().contains("--histogram=on"));
        assert!(Report::parse(&REPORT.replace("1000\n\nLatency", "1001\n\nLatency"))
            .unwrap_err()
            .to_string()
            .contains("counts 1000 events, sysbench reports 1001"));
    }
}
