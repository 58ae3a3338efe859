//! A sweep's charts: for each axis, a figure against the axis's values
//! (a number axis on a numeric x, any other by name), one line per
//! setting of the other axes (and per main test of a review).

use crate::outputs::chart::{color, LegendItem, LineChart, Series, Stroke, Swatch};
use crate::procedures::sweep::collect::{Collected, Row};
use std::collections::BTreeMap;

/// A figure of a point.
pub type Figure = fn(&Row) -> Option<f64>;

/// The figures a sweep charts: (file stem, axis label, value).
pub const FIGURES: [(&str, &str, Figure); 3] = [
    ("iops", "IOPS", |r| Some(r.iops)),
    ("latency", "average latency (ms)", |r| Some(r.latency_avg_ms)),
    ("wa", "write amplification", |r| r.write_amplification),
];

fn text(v: &toml::Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// Whether a review's test is charted: the 4K tests and each matrix's
/// 16T/16Q point (all are in the table and `sweep.json`).
fn charted(test: &str) -> bool {
    test.ends_with("4K write") || test.ends_with("4K read") || test.ends_with("16T/16Q")
}

/// The chart of `figure` against `axis`.
pub fn axis_chart(c: &Collected, axis: &str, y_label: &str, figure: Figure) -> String {
    let values: Vec<&toml::Value> = {
        let mut v: Vec<&toml::Value> = Vec::new();
        for r in &c.rows {
            let x = &r.settings[axis];
            if !v.contains(&x) {
                v.push(x);
            }
        }
        v
    };
    let numeric = values.iter().all(|v| v.is_integer() || v.is_float());
    let x_of = |v: &toml::Value| match numeric {
        true => v.as_float().or_else(|| v.as_integer().map(|i| i as f64)).expect("a number"),
        false => values.iter().position(|w| *w == v).expect("a value of the axis") as f64,
    };
    // One line per setting of the other axes (and, for reviews, per main
    // test: the 4K tests and the matrices' 16T/16Q point).
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for r in c.rows.iter().filter(|r| r.test.as_deref().is_none_or(charted)) {
        let mut others: Vec<String> = r.settings.iter().filter(|(k, _)| *k != axis).map(|(k, v)| format!("{k}={}", text(v))).collect();
        others.extend(r.test.clone());
        if let Some(y) = figure(r) {
            lines.entry(others.join(", ")).or_default().push((x_of(&r.settings[axis]), y));
        }
    }
    let mut chart = LineChart {
        id: format!("sweep-{}", axis.replace('.', "-")),
        title: format!("{y_label} against {axis} [simulated]"),
        x_label: axis.into(),
        y_label: y_label.into(),
        x_names: if numeric { Vec::new() } else { values.iter().map(|v| text(v)).collect() },
        x_from: if numeric { values.iter().map(|v| x_of(v)).fold(f64::INFINITY, f64::min).min(0.0) } else { 0.0 },
        markers: true,
        ..Default::default()
    };
    for (i, (name, mut points)) in lines.into_iter().enumerate() {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let name = if name.is_empty() { y_label.to_string() } else { name };
        chart.series.push(Series::line(&name, points, color(i), &name));
        chart.legend.push(LegendItem { name: name.clone(), color: color(i).into(), stroke: Stroke::Solid, swatch: Swatch::Line, key: name });
    }
    chart.svg()
}
