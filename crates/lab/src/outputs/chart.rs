//! SVG charts of the kinds reviewers publish: lines over time or over
//! thread/queue points, grouped bars. Text stays text (`<text>`), so the
//! browser sets it and it can be copied; every point carries a `<title>`
//! with its value for a hover tooltip.
//!
//! Hand-written rather than plotters: plotters lays text out itself and so
//! needs a font backend (fontconfig/FreeType, or a bundled font) even for
//! SVG, which these charts do not need.

use std::fmt::Write as _;

/// Colours that stay apart for the colour-blind (Okabe-Ito), in series order.
pub const PALETTE: &[&str] = &["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

const W: f64 = 720.0;
const H: f64 = 380.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 58.0;
const BOTTOM: f64 = 52.0;

/// One line.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Dashed (a fitted line or a reference level).
    pub dashed: bool,
    pub color: &'static str,
}

/// A shaded x range, e.g. the steady-state window.
#[derive(Debug, Clone)]
pub struct Band {
    pub x0: f64,
    pub x1: f64,
    pub label: String,
    pub color: &'static str,
}

/// A line chart over a numeric x axis, or over named points (`x_names`:
/// point i is at x = i).
#[derive(Debug, Clone, Default)]
pub struct LineChart {
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_names: Vec<String>,
    /// Where a numeric x axis starts (0 by default).
    pub x_from: f64,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    /// Marks at every point (for few points).
    pub markers: bool,
}

/// Bars grouped by category, one bar per series in each group.
#[derive(Debug, Clone, Default)]
pub struct BarChart {
    pub id: String,
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    /// (series name, one value per category; `None`: no bar).
    pub series: Vec<(String, Vec<Option<f64>>)>,
}

/// A "nice" axis: 0 (or below) to a round maximum with 1-2-5 steps.
fn ticks(lo: f64, hi: f64, target: usize) -> (f64, f64, f64) {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
    let raw = (hi - lo) / target as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|&s| s >= raw).unwrap_or(10.0 * mag);
    ((lo / step).floor() * step, (hi / step).ceil() * step, step)
}

pub use crate::number::num;

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn header(out: &mut String, id: &str, kind: &str, title: &str) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-kind="{kind}" id="{}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#,
        esc(id)
    );
    let _ = write!(
        out,
        r##"<rect width="{W}" height="{H}" fill="#ffffff"/><text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"##,
        W / 2.0,
        esc(title)
    );
}

fn legend(out: &mut String, names: &[(String, &'static str, bool)]) {
    // One row under the title, wrapped onto a second when long.
    let mut x = LEFT;
    let mut y = 40.0;
    for (name, color, dashed) in names {
        let w = 30.0 + 7.0 * name.chars().count() as f64;
        if x + w > W - RIGHT && x > LEFT {
            x = LEFT;
            y += 14.0;
        }
        let dash = if *dashed { r#" stroke-dasharray="5,3""# } else { "" };
        let _ = write!(out, r#"<line x1="{x}" y1="{}" x2="{}" y2="{}" stroke="{color}" stroke-width="3"{dash}/>"#, y - 4.0, x + 18.0, y - 4.0);
        let _ = write!(out, r#"<text x="{}" y="{y}" class="legend">{}</text>"#, x + 22.0, esc(name));
        x += w;
    }
}

/// The y axis with grid lines; returns the value-to-pixel map.
fn y_axis(out: &mut String, lo: f64, hi: f64, label: &str) -> impl Fn(f64) -> f64 {
    let (y0, y1, step) = ticks(lo.min(0.0), hi, 5);
    let plot_h = H - TOP - BOTTOM;
    let map = move |v: f64| TOP + plot_h - (v - y0) / (y1 - y0) * plot_h;
    let mut v = y0;
    while v <= y1 + step * 0.5 {
        let y = map(v);
        let _ = write!(out, r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#e0e0e0"/>"##, W - RIGHT);
        let _ = write!(out, r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#, LEFT - 6.0, y + 4.0, num(v));
        v += step;
    }
    let _ = write!(out, r#"<text transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#, TOP + plot_h / 2.0, esc(label));
    let _ = write!(out, r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}" stroke="#333"/>"##, H - BOTTOM);
    let _ = write!(out, r##"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="#333"/>"##, H - BOTTOM, W - RIGHT, H - BOTTOM);
    map
}

impl LineChart {
    pub fn svg(&self) -> String {
        let mut out = String::new();
        header(&mut out, &self.id, "line", &self.title);
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let categorical = !self.x_names.is_empty();
        let (x0, x1, xstep) = if categorical {
            (-0.5, self.x_names.len() as f64 - 0.5, 1.0)
        } else {
            let hi = pts().map(|p| p.0).chain(self.bands.iter().map(|b| b.x1)).fold(self.x_from, f64::max);
            ticks(self.x_from, hi, 8)
        };
        let y_hi = pts().map(|p| p.1).fold(0.0f64, f64::max);
        let y_lo = pts().map(|p| p.1).fold(0.0f64, f64::min);
        let plot_w = W - LEFT - RIGHT;
        let xmap = |v: f64| LEFT + (v - x0) / (x1 - x0) * plot_w;
        // Bands first, under the grid and the lines.
        for b in &self.bands {
            let (a, z) = (xmap(b.x0.max(x0)), xmap(b.x1.min(x1)));
            let _ = write!(
                out,
                r#"<rect class="band" x="{a:.1}" y="{TOP}" width="{:.1}" height="{}" fill="{}" fill-opacity="0.13"><title>{}</title></rect>"#,
                (z - a).max(1.0),
                H - TOP - BOTTOM,
                b.color,
                esc(&b.label)
            );
        }
        let ymap = y_axis(&mut out, y_lo, y_hi, &self.y_label);
        if categorical {
            for (i, n) in self.x_names.iter().enumerate() {
                let _ = write!(out, r#"<text x="{:.1}" y="{}" text-anchor="middle" font-size="10">{}</text>"#, xmap(i as f64), H - BOTTOM + 15.0, esc(n));
            }
        } else {
            let mut v = x0;
            while v <= x1 + xstep * 0.5 {
                let _ = write!(out, r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#, xmap(v), H - BOTTOM + 16.0, num(v));
                v += xstep;
            }
        }
        let _ = write!(out, r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#, LEFT + plot_w / 2.0, H - 10.0, esc(&self.x_label));
        for b in &self.bands {
            let _ = write!(out, r#"<text x="{:.1}" y="{}" font-size="10" fill="{}">{}</text>"#, xmap(b.x0) + 3.0, TOP + 12.0, b.color, esc(&b.label));
        }
        for s in &self.series {
            if s.points.is_empty() {
                continue;
            }
            let mut d = String::new();
            for (x, y) in &s.points {
                let _ = write!(d, "{:.1},{:.1} ", xmap(*x), ymap(*y));
            }
            let dash = if s.dashed { r#" stroke-dasharray="5,3""# } else { "" };
            let _ = write!(
                out,
                r#"<polyline class="series" data-name="{}" points="{}" fill="none" stroke="{}" stroke-width="{}"{dash}/>"#,
                esc(&s.name),
                d.trim_end(),
                s.color,
                if s.dashed { 1.5 } else { 2.0 }
            );
            if self.markers && !s.dashed {
                for (x, y) in &s.points {
                    let at = if categorical { self.x_names.get(*x as usize).cloned().unwrap_or_default() } else { num(*x) };
                    let _ = write!(
                        out,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{}: {} at {}</title></circle>"#,
                        xmap(*x),
                        ymap(*y),
                        s.color,
                        esc(&s.name),
                        num(*y),
                        esc(&at)
                    );
                }
            }
        }
        let names: Vec<(String, &'static str, bool)> = self.series.iter().map(|s| (s.name.clone(), s.color, s.dashed)).collect();
        legend(&mut out, &names);
        out.push_str("</svg>");
        out
    }
}

impl BarChart {
    pub fn svg(&self) -> String {
        let mut out = String::new();
        header(&mut out, &self.id, "bar", &self.title);
        let y_hi = self.series.iter().flat_map(|(_, v)| v.iter().flatten()).fold(0.0f64, |a, &b| a.max(b));
        let ymap = y_axis(&mut out, 0.0, y_hi * 1.08, &self.y_label);
        let plot_w = W - LEFT - RIGHT;
        let groups = self.categories.len().max(1) as f64;
        let group_w = plot_w / groups;
        let n = self.series.len().max(1) as f64;
        let bar_w = (group_w * 0.8 / n).min(70.0);
        for (ci, cat) in self.categories.iter().enumerate() {
            let gx = LEFT + group_w * ci as f64 + (group_w - bar_w * n) / 2.0;
            for (si, (name, values)) in self.series.iter().enumerate() {
                let Some(v) = values.get(ci).copied().flatten() else { continue };
                let (x, y) = (gx + bar_w * si as f64, ymap(v));
                let _ = write!(
                    out,
                    r#"<rect class="bar" x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}, {}: {}</title></rect>"#,
                    bar_w - 2.0,
                    (ymap(0.0) - y).max(0.0),
                    color(si),
                    esc(name),
                    esc(cat),
                    num(v)
                );
                let _ = write!(out, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#, x + bar_w / 2.0 - 1.0, y - 4.0, num(v));
            }
            let _ = write!(out, r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#, LEFT + group_w * (ci as f64 + 0.5), H - BOTTOM + 18.0, esc(cat));
        }
        let names: Vec<(String, &'static str, bool)> = self.series.iter().enumerate().map(|(i, (n, _))| (n.clone(), color(i), false)).collect();
        legend(&mut out, &names);
        out.push_str("</svg>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 97.0, 5), (0.0, 100.0, 20.0));
        assert_eq!(ticks(0.0, 1234.0, 5), (0.0, 1250.0, 250.0));
        let (lo, hi, step) = ticks(0.0, 0.0, 5);
        assert!(lo == 0.0 && hi >= 1.0 && step > 0.0);
    }

    #[test]
    fn charts_hold_their_series_and_escape_text() {
        let c = LineChart {
            id: "c1".into(),
            title: "IOPS <fresh> & steady".into(),
            x_label: "minutes".into(),
            y_label: "IOPS".into(),
            series: vec![Series { name: "A & B".into(), points: vec![(0.0, 1.0), (1.0, 2.0)], dashed: false, color: color(0) }],
            bands: vec![Band { x0: 0.5, x1: 1.0, label: "steady-state window".into(), color: color(0) }],
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
            series: vec![("x".into(), vec![Some(5.0), None]), ("y".into(), vec![Some(3.0), Some(1.0)])],
        }
        .svg();
        assert_eq!(b.matches(r#"class="bar""#).count(), 3);
    }
}
