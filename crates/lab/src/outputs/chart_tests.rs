//! The charts' tests: round ticks, series held and text escaped, a long
//! legend wrapping above the plot, end labels apart, colour ramps.

use super::*;

#[test]
fn ticks_are_round_and_cover_the_range() {
    assert_eq!(ticks(0.0, 97.0, 5), (0.0, 100.0, 20.0));
    assert_eq!(ticks(0.0, 1234.0, 5), (0.0, 1250.0, 250.0));
    let (lo, hi, step) = ticks(0.0, 0.0, 5);
    assert!(lo == 0.0 && hi >= 1.0 && step > 0.0);
}

fn item(name: &str) -> LegendItem {
    LegendItem { name: name.into(), color: color(0).into(), stroke: Stroke::Solid, swatch: Swatch::Line, key: name.into() }
}

#[test]
fn charts_hold_their_series_and_escape_text() {
    let c = LineChart {
        id: "c1".into(),
        title: "IOPS <fresh> & steady".into(),
        x_label: "minutes".into(),
        y_label: "IOPS".into(),
        series: vec![Series::line("A & B", vec![(0.0, 1.0), (1.0, 2.0)], color(0), "a")],
        bands: vec![Band { x0: 0.5, x1: 1.0, label: "steady-state window".into(), color: GREY.into(), keys: vec!["a".into()], show_label: true }],
        legend: vec![item("A & B")],
        markers: true,
        ..Default::default()
    }
    .svg();
    assert!(c.starts_with("<svg") && c.ends_with("</svg>"));
    assert!(c.contains("IOPS &lt;fresh&gt; &amp; steady") && c.contains(r#"data-name="A &amp; B""#));
    assert_eq!(c.matches("<polyline").count(), 1);
    assert_eq!(c.matches("<circle").count(), 2);
    assert_eq!(c.matches(r#"class="band""#).count(), 1);
    let b = BarChart {
        id: "b".into(),
        title: "t".into(),
        y_label: "IOPS".into(),
        categories: vec!["read".into(), "write".into()],
        series: vec![
            BarSeries { name: "x".into(), values: vec![Some(5.0), None], color: color(0).into(), key: "x".into(), ..Default::default() },
            BarSeries {
                name: "y".into(),
                values: vec![Some(3.0), Some(1.0)],
                color: color(0).into(),
                hatched: true,
                tolerance_percent: Some(10.0),
                key: "x".into(),
            },
        ],
        legend: vec![item("x")],
    }
    .svg();
    assert_eq!(b.matches(r#"class="bar""#).count(), 3);
    assert_eq!(b.matches(r#"class="tolerance""#).count(), 2);
    assert!(b.contains("url(#hatch-0072B2)") && b.contains(r#"<pattern id="hatch-0072B2""#));
}

#[test]
fn a_long_legend_wraps_and_pushes_the_plot_down() {
    let one = frame_for(&[item("short")], RIGHT);
    let many: Vec<LegendItem> = (0..8).map(|i| item(&format!("Virident FlashMAX II 2.2 TB MLC stock {i}"))).collect();
    let placed = legend_layout(&many);
    let rows = placed.iter().map(|p| p.2 as i64).collect::<std::collections::BTreeSet<_>>().len();
    assert!(rows >= 4, "{rows} rows");
    for &(it, x, _) in &placed {
        assert!(x + 26.0 + text_width(&it.name, 12.0) <= W - RIGHT || x == LEFT, "{} runs past the edge", it.name);
    }
    let f = frame_for(&many, RIGHT);
    assert!(f.top > placed.last().unwrap().2 + 8.0 && f.top > one.top);
}

#[test]
fn a_long_title_shrinks_then_loses_its_middle_to_fit() {
    assert_eq!(title_fit("4K random, 16T/16Q: latency QoS"), (15.0, "4K random, 16T/16Q: latency QoS".to_string()));
    let long = format!("/work/main/target/tmp/{}/target.img [measured, lab]: steady state, 4K random (4k-write)", "d".repeat(80));
    let (px, text) = title_fit(&long);
    assert_eq!(px, 11.0);
    assert!(text.starts_with("/work/") && text.ends_with("4K random (4k-write)") && text.contains('\u{2026}'), "{text}");
    assert!(text_width(&text, px) * 1.1 <= W - 16.0, "{text}");
}

#[test]
fn end_labels_never_overlap() {
    let mut out = String::new();
    end_labels(&mut out, (0..4).map(|i| (100.0, 50.0 + i as f64, format!("{i}T"), INK.into(), String::new())).collect(), 0.0, 300.0);
    let ys: Vec<f64> = out.split("<text").skip(1).map(|s| s.split(" y=\"").nth(1).unwrap()).map(|s| s[..s.find('"').unwrap()].parse().unwrap()).collect();
    assert!(ys.windows(2).all(|w| w[1] - w[0] >= 12.0 - 1e-9), "{ys:?}");
    // Moved labels are tied to their lines.
    assert!(out.contains("class=\"leader\""));
}

#[test]
fn end_labels_gather_about_their_lines_and_stay_in_the_plot() {
    // Four labels at one point spread about it, not all below it.
    let at = labels_spread(&[100.0; 4], 12.0, 0.0, 300.0);
    assert_eq!(at, vec![82.0, 94.0, 106.0, 118.0]);
    // At the bottom edge they stack upwards, within the plot.
    let at = labels_spread(&[300.0, 300.0, 300.0], 12.0, 0.0, 300.0);
    assert_eq!(at, vec![276.0, 288.0, 300.0]);
    // Labels far apart stay where they are.
    assert_eq!(labels_spread(&[10.0, 50.0, 90.0], 12.0, 0.0, 300.0), vec![10.0, 50.0, 90.0]);
    // Two groups that meet merge into one.
    let at = labels_spread(&[100.0, 100.0, 110.0, 110.0], 12.0, 0.0, 300.0);
    assert!(at.windows(2).all(|w| w[1] - w[0] >= 12.0 - 1e-9), "{at:?}");
    assert!((at.iter().sum::<f64>() / 4.0 - 105.0).abs() < 1e-9, "{at:?}");
}

#[test]
fn ticks_apart_never_read_alike() {
    let (lo, hi, step) = ticks(0.0, 0.002, 8);
    let mut labels = Vec::new();
    let mut v = lo;
    while v <= hi + step * 0.5 {
        labels.push(tick_label(v, step));
        v += step;
    }
    assert_eq!(labels[..3], ["0", "0.00025", "0.00050"], "{labels:?}");
    assert!(labels.windows(2).all(|w| w[0] != w[1]), "{labels:?}");
    assert_eq!(tick_label(2.5, 0.5), "2.5");
    assert_eq!(tick_label(12_000.0, 2_000.0), "12,000");
    assert_eq!(tick_label(-1e-17, 0.1), "0");
}

#[test]
fn ramps_run_from_one_colour_to_the_other() {
    assert_eq!(ramp("#000000", "#ffffff", 0, 3), "#000000");
    assert_eq!(ramp("#000000", "#ffffff", 2, 3), "#ffffff");
    assert_eq!(ramp("#000000", "#ffffff", 1, 3), "#808080");
}

/// A 3D bar chart draws a bar per value, back row first (nearer bars
/// cover farther ones), a missing value as no bar, text escaped.
#[test]
fn a_3d_chart_draws_its_bars_back_to_front() {
    let c = Bar3dChart {
        id: "b3".into(),
        title: "IOPS <3D>".into(),
        y_label: "IOPS".into(),
        x_label: "block size".into(),
        x_names: vec!["4KiB".into(), "8KiB".into()],
        z_names: vec!["0/100".into(), "100/0".into()],
        colors: vec!["#d7191c".into(), "#2c7bb6".into()],
        values: vec![vec![Some(10.0), Some(5.0)], vec![Some(40.0), None]],
    }
    .svg();
    assert!(c.starts_with("<svg") && c.ends_with("</svg>") && c.contains("IOPS &lt;3D&gt;"));
    assert_eq!(c.matches(r#"class="bar3d""#).count(), 3);
    let back = c.find("100/0 4KiB: 40").expect("the back row's bar");
    let front = c.find("0/100 4KiB: 10").expect("the front row's bar");
    assert!(back < front, "the back row is drawn first");
}
