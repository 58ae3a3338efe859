//! Line charts: lines over time or over named points, shaded bands, and
//! labels at the lines' ends spread so that none overlaps another.

use super::*;

/// One line.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub color: String,
    pub stroke: Stroke,
    /// Legend keys that show and hide it.
    pub keys: Vec<String>,
    /// A label at its last point (as "16T" beside a thread count's line).
    pub end_label: Option<String>,
    pub width: f64,
}

impl Series {
    /// A solid line of `width` 2 under one key.
    pub fn line(name: &str, points: Vec<(f64, f64)>, color: &str, key: &str) -> Series {
        Series { name: name.into(), points, color: color.into(), keys: vec![key.into()], width: 2.0, ..Default::default() }
    }
}

/// A shaded x range, e.g. the steady-state window.
#[derive(Debug, Clone)]
pub struct Band {
    pub x0: f64,
    pub x1: f64,
    pub label: String,
    pub color: String,
    pub keys: Vec<String>,
    /// The label written in the plot too (else only its tooltip): for one
    /// band a chart, where labels cannot collide.
    pub show_label: bool,
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
    pub legend: Vec<LegendItem>,
    /// Marks at every point (for few points); otherwise up to
    /// `HOVER_POINTS_MAX` invisible hover targets a series.
    pub markers: bool,
}

/// Hover targets drawn along a long line (every k-th point).
const HOVER_POINTS_MAX: usize = 120;

/// Where labels wanted at `want` (sorted) go so that none is nearer the
/// next than `gap`, each as near its wish as the others allow, all within
/// `lo..=hi` where they fit: overlapping labels form a group centred on
/// its members' mean wish, and groups that then overlap merge.
pub(crate) fn labels_spread(want: &[f64], gap: f64, lo: f64, hi: f64) -> Vec<f64> {
    debug_assert!(want.windows(2).all(|w| w[0] <= w[1]), "wishes sorted");
    // Each group: first member, members, top position.
    let mut groups: Vec<(usize, usize, f64)> = Vec::new();
    let place = |first: usize, n: usize| {
        let mean = want[first..first + n].iter().sum::<f64>() / n as f64;
        let span = gap * (n - 1) as f64;
        (mean - span / 2.0).min(hi - span).max(lo)
    };
    for i in 0..want.len() {
        groups.push((i, 1, place(i, 1)));
        while groups.len() >= 2 {
            let (a, b) = (groups[groups.len() - 2], groups[groups.len() - 1]);
            if a.2 + gap * a.1 as f64 <= b.2 + 1e-9 {
                break;
            }
            groups.truncate(groups.len() - 2);
            groups.push((a.0, a.1 + b.1, place(a.0, a.1 + b.1)));
        }
    }
    groups.iter().flat_map(|&(_, n, top)| (0..n).map(move |k| top + gap * k as f64)).collect()
}

/// Labels at line ends (x, y, text, colour, keys), moved apart vertically
/// so none overlaps another and kept beside the plot (`lo..=hi`); a label
/// moved off its line's end is tied to it by a short leader.
pub(super) fn end_labels(out: &mut String, mut labels: Vec<(f64, f64, String, String, String)>, lo: f64, hi: f64) {
    const GAP: f64 = 12.0;
    labels.sort_by(|a, b| a.1.total_cmp(&b.1));
    let want: Vec<f64> = labels.iter().map(|l| l.1).collect();
    let at = labels_spread(&want, GAP, lo, hi);
    for ((x, y, text, color, keys), placed) in labels.into_iter().zip(at) {
        if (placed - y).abs() > 3.0 {
            let _ = write!(
                out,
                r#"<polyline class="leader" data-keys="{keys}" points="{x:.1},{y:.1} {:.1},{placed:.1}" fill="none" stroke="{color}" stroke-width="0.8"/>"#,
                x + 5.0
            );
        }
        let _ = write!(
            out,
            r#"<text class="end-label" data-keys="{keys}" x="{:.1}" y="{:.1}" font-size="10" fill="{color}">{}</text>"#,
            x + 6.0,
            placed + 3.5,
            esc(&text)
        );
    }
}

impl LineChart {
    /// Room right of the plot: wider where lines carry end labels.
    fn right(&self) -> f64 {
        let widest = self.series.iter().filter_map(|s| s.end_label.as_ref()).map(|l| text_width(l, 10.0)).fold(0.0, f64::max);
        if widest > 0.0 {
            RIGHT.max(widest + 12.0)
        } else {
            RIGHT
        }
    }

    fn x_range(&self) -> (f64, f64, f64) {
        if !self.x_names.is_empty() {
            return (-0.5, self.x_names.len() as f64 - 0.5, 1.0);
        }
        let hi = self.series.iter().flat_map(|s| s.points.iter()).map(|p| p.0).chain(self.bands.iter().map(|b| b.x1)).fold(self.x_from, f64::max);
        ticks(self.x_from, hi, 8)
    }

    pub fn svg(&self) -> String {
        let f = frame_for(&self.legend, self.right());
        let mut out = String::new();
        header(&mut out, &self.id, "line", &self.title, &f);
        let (x0, x1, xstep) = self.x_range();
        let xmap = |v: f64| LEFT + (v - x0) / (x1 - x0) * f.plot_w();
        self.bands_draw(&mut out, f, &xmap, x0, x1);
        let ys = || self.series.iter().flat_map(|s| s.points.iter()).map(|p| p.1);
        let ymap = y_axis(&mut out, f, ys().fold(0.0f64, f64::min), ys().fold(0.0f64, f64::max), &self.y_label);
        self.x_axis(&mut out, f, &xmap, x0, x1, xstep);
        let mut labels = Vec::new();
        for s in self.series.iter().filter(|s| !s.points.is_empty()) {
            self.series_draw(&mut out, s, &xmap, &ymap);
            if let (Some(l), Some(&(x, y))) = (&s.end_label, s.points.last()) {
                labels.push((xmap(x), ymap(y), l.clone(), s.color.clone(), keys_attr(&s.keys)));
            }
        }
        end_labels(&mut out, labels, f.top, f.top + PLOT_H);
        legend(&mut out, &self.legend);
        out.push_str("</svg>");
        out
    }

    fn bands_draw(&self, out: &mut String, f: Frame, xmap: &impl Fn(f64) -> f64, x0: f64, x1: f64) {
        for b in &self.bands {
            let (a, z) = (xmap(b.x0.max(x0)), xmap(b.x1.min(x1)));
            let _ = write!(
                out,
                r#"<rect class="band" data-keys="{}" x="{a:.1}" y="{}" width="{:.1}" height="{PLOT_H}" fill="{}" fill-opacity="0.15"><title>{}</title></rect>"#,
                keys_attr(&b.keys),
                f.top,
                (z - a).max(1.0),
                b.color,
                esc(&b.label)
            );
            if !b.show_label {
                continue;
            }
            // Inside the plot, anchored away from the nearer edge.
            let right_half = (a + z) / 2.0 > LEFT + f.plot_w() / 2.0;
            let (x, anchor) = if right_half { (z - 3.0, "end") } else { (a + 3.0, "start") };
            let _ = write!(
                out,
                r#"<text class="band-label" data-keys="{}" x="{x:.1}" y="{}" font-size="10" fill="{GREY}" text-anchor="{anchor}">{}</text>"#,
                keys_attr(&b.keys),
                f.top + 12.0,
                esc(&b.label)
            );
        }
    }

    fn x_axis(&self, out: &mut String, f: Frame, xmap: &impl Fn(f64) -> f64, x0: f64, x1: f64, xstep: f64) {
        if self.x_names.is_empty() {
            let mut v = x0;
            while v <= x1 + xstep * 0.5 {
                let _ = write!(out, r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#, xmap(v), f.bottom() + 16.0, tick_label(v, xstep));
                v += xstep;
            }
        } else {
            for (i, n) in self.x_names.iter().enumerate() {
                let _ = write!(out, r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#, xmap(i as f64), f.bottom() + 16.0, esc(n));
            }
        }
        let _ = write!(
            out,
            r#"<text class="axis-label x" x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            LEFT + f.plot_w() / 2.0,
            f.bottom() + 40.0,
            esc(&self.x_label)
        );
    }

    fn point_name(&self, x: f64) -> String {
        if self.x_names.is_empty() {
            num(x)
        } else {
            self.x_names.get(x as usize).cloned().unwrap_or_default()
        }
    }

    fn series_draw(&self, out: &mut String, s: &Series, xmap: &impl Fn(f64) -> f64, ymap: &impl Fn(f64) -> f64) {
        let mut d = String::new();
        for (x, y) in &s.points {
            let _ = write!(d, "{:.1},{:.1} ", xmap(*x), ymap(*y));
        }
        let keys = keys_attr(&s.keys);
        let _ = write!(out, r#"<g class="series" data-keys="{keys}" data-name="{}">"#, esc(&s.name));
        let _ = write!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="{}"{}><title>{}</title></polyline>"#,
            d.trim_end(),
            s.color,
            if s.width > 0.0 { s.width } else { 2.0 },
            s.stroke.attr(),
            esc(&s.name)
        );
        // Visible marks on the data series of a short chart, not on
        // reference levels; elsewhere invisible hover targets.
        let marked = self.markers && s.width >= 2.0;
        let step = if marked { 1 } else { s.points.len().div_ceil(HOVER_POINTS_MAX).max(1) };
        let (r, opacity) = if marked { (3.5, 1.0) } else { (4.0, 0.0) };
        for (x, y) in s.points.iter().step_by(step) {
            let _ = write!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="{r}" fill="{}" fill-opacity="{opacity}"><title>{}: {} at {}</title></circle>"#,
                xmap(*x),
                ymap(*y),
                s.color,
                esc(&s.name),
                num(*y),
                esc(&self.point_name(*x))
            );
        }
        out.push_str("</g>");
    }
}
