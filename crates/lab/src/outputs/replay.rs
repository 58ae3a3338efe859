//! A replay's chart: each card's average and p99 latency, as bars.

use crate::outputs::chart::{color, BarChart, BarSeries, LegendItem, Stroke, Swatch};
use crate::procedures::replay::ReplayResult;

/// A bar chart of replays: average and 99th-percentile latency per card
/// and format, in the order given.
pub fn chart(results: &[&ReplayResult], title: &str) -> String {
    let mut c = BarChart {
        id: "replay".into(),
        title: title.into(),
        y_label: "latency (ms)".into(),
        categories: results.iter().map(|r| format!("{}\n{}", r.device.id, r.device.format)).collect(),
        ..Default::default()
    };
    for (i, (name, value)) in
        [("average", (|r: &ReplayResult| r.summary.all.latency_avg_ms) as fn(&ReplayResult) -> f64), ("p99", |r| r.summary.all.latency_p99_ms)]
            .into_iter()
            .enumerate()
    {
        let name = format!("{name} (simulated)");
        c.series.push(BarSeries {
            name: name.clone(),
            values: results.iter().map(|r| Some(value(r))).collect(),
            color: color(i).into(),
            key: name.clone(),
            ..Default::default()
        });
        c.legend.push(LegendItem { name: name.clone(), color: color(i).into(), stroke: Stroke::Solid, swatch: Swatch::Box, key: name });
    }
    c.svg()
}
