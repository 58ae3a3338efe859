//! The SysBench application test's charts, in the reviews' style: bars a
//! thread count, transactions per second in one chart and latency
//! (average, 95th and 99th percentile) in the other.

use crate::outputs::chart::{color, BarChart, BarSeries, LegendItem, Stroke, Swatch};
use crate::real::apptest::{Point, SysbenchResults};

/// A figure of a thread count's run.
type Figure = fn(&Point) -> f64;

fn chart(r: &SysbenchResults, id: &str, what: &str, y_label: &str, series: &[(&str, Figure)]) -> String {
    let mut c = BarChart {
        id: id.into(),
        title: format!("SysBench OLTP {what}: {} {} (simulated card, real MariaDB on this host)", r.device.id, r.device.format),
        y_label: y_label.into(),
        categories: r.points.iter().map(|p| format!("{} threads", p.threads)).collect(),
        ..Default::default()
    };
    for (i, (name, value)) in series.iter().enumerate() {
        c.series.push(BarSeries {
            name: name.to_string(),
            values: r.points.iter().map(|p| Some(value(p))).collect(),
            color: color(i).into(),
            key: name.to_string(),
            ..Default::default()
        });
        c.legend.push(LegendItem { name: name.to_string(), color: color(i).into(), stroke: Stroke::Solid, swatch: Swatch::Box, key: name.to_string() });
    }
    c.svg()
}

/// Transactions per second by thread count.
pub fn tps_chart(r: &SysbenchResults) -> String {
    chart(r, "sysbench-tps", "transactions per second", "transactions per second", &[("TPS", |p| p.sysbench.tps)])
}

/// Average, 95th and 99th percentile latency by thread count.
pub fn latency_chart(r: &SysbenchResults) -> String {
    chart(
        r,
        "sysbench-latency",
        "latency",
        "latency (ms)",
        &[("average", |p| p.sysbench.latency_avg_ms), ("95th percentile", |p| p.sysbench.latency_p95_ms), ("99th percentile", |p| p.sysbench.latency_p99_ms)],
    )
}
