//! SVG charts of the kinds reviewers publish: lines over time or over
//! queue depths, grouped bars. Text stays text (`<text>`), so the browser
//! sets it and it can be copied; points and bars carry a `<title>` with
//! their value for a hover tooltip; every series and legend entry carries
//! keys (`data-keys`, `data-key`) by which the report's script shows and
//! hides them.
//!
//! Layout is computed before drawing: the legend is laid out in rows under
//! the title (text widths estimated generously) and the plot starts below
//! it, so a legend never overlaps the plot or another entry; labels near
//! an edge are anchored inward, so none is cut.
//!
//! Hand-written rather than plotters: plotters lays text out itself and so
//! needs a font backend (fontconfig/FreeType, or a bundled font) even for
//! SVG, which these charts do not need.

use std::fmt::Write as _;

pub use crate::number::num;

/// Colours that stay apart for the colour-blind (Okabe-Ito), in the order
/// a report hands them to its devices.
pub const PALETTE: &[&str] = &["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"];

/// Neutral colours for what is not a series of its own (reference levels,
/// fits, shaded windows): they never stand for a device.
pub const INK: &str = "#222222";
pub const GREY: &str = "#777777";

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A colour ramp of `n` steps from `from` to `to` (both `#rrggbb`): for an
/// ordered quantity (block size, read share) rather than a set of names.
pub fn ramp(from: &str, to: &str, i: usize, n: usize) -> String {
    let rgb = |s: &str| [1, 3, 5].map(|k| u8::from_str_radix(&s[k..k + 2], 16).unwrap_or(0) as f64);
    let (a, b) = (rgb(from), rgb(to));
    let t = if n > 1 { i as f64 / (n - 1) as f64 } else { 0.0 };
    let c = [0, 1, 2].map(|k| (a[k] + (b[k] - a[k]) * t).round() as u8);
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

const W: f64 = 720.0;
const PLOT_H: f64 = 270.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 24.0;
const BOTTOM: f64 = 52.0;
/// The title's baseline, and the first legend row's.
const TITLE_Y: f64 = 22.0;
const LEGEND_Y: f64 = 42.0;
const LEGEND_ROW: f64 = 17.0;
/// Estimated width of a character at 12 px (wider than Helvetica's
/// average, so estimates err towards room).
const CHAR_W: f64 = 7.6;

fn text_width(s: &str, font_px: f64) -> f64 {
    s.chars().count() as f64 * CHAR_W * font_px / 12.0
}

/// How a line is drawn: series of one device share a colour and differ by
/// stroke (thread counts; reference levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stroke {
    #[default]
    Solid,
    Dashed,
    Dotted,
    DashDot,
}

impl Stroke {
    fn attr(self) -> &'static str {
        match self {
            Stroke::Solid => "",
            Stroke::Dashed => r#" stroke-dasharray="7,4""#,
            Stroke::Dotted => r#" stroke-dasharray="2,3""#,
            Stroke::DashDot => r#" stroke-dasharray="8,3,2,3""#,
        }
    }
}

/// A legend entry: what a colour and stroke (or a hatched box) stand for.
/// `key` names the series it shows and hides.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendItem {
    pub name: String,
    pub color: String,
    pub stroke: Stroke,
    /// A box (bars) rather than a line; hatched for published figures.
    pub swatch: Swatch,
    pub key: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Swatch {
    #[default]
    Line,
    Box,
    Hatched,
}

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

/// Bars grouped by category, one bar per series in each group.
#[derive(Debug, Clone, Default)]
pub struct BarChart {
    pub id: String,
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub series: Vec<BarSeries>,
    pub legend: Vec<LegendItem>,
}

/// One series of bars: a value per category (`None`: no bar).
#[derive(Debug, Clone, Default)]
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
    pub color: String,
    /// Published figures: hatched, with whiskers at +-`tolerance_percent`.
    pub hatched: bool,
    pub tolerance_percent: Option<f64>,
    pub key: String,
}

/// Hover targets drawn along a long line (every k-th point).
const HOVER_POINTS_MAX: usize = 120;

/// A "nice" axis: 0 (or below) to a round maximum with 1-2-5 steps.
fn ticks(lo: f64, hi: f64, target: usize) -> (f64, f64, f64) {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
    let raw = (hi - lo) / target as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|&s| s >= raw).unwrap_or(10.0 * mag);
    ((lo / step).floor() * step, (hi / step).ceil() * step, step)
}

/// A tick's label: as `num` writes numbers, but with as many decimals as
/// `step` needs, so that ticks `step` apart never read alike (0.00025
/// hours apart: 0.00025, 0.00050, 0.00075, not 0, 0.001, 0.001).
pub(crate) fn tick_label(v: f64, step: f64) -> String {
    if !(step > 0.0 && step < 1.0) {
        return num(v);
    }
    let decimals = (0..=12)
        .find(|&d| {
            let s = step * 10f64.powi(d);
            (s - s.round()).abs() < 1e-6 * s
        })
        .unwrap_or(12) as usize;
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-').bytes().all(|b| b == b'0' || b == b'.') {
        "0".into()
    } else {
        s
    }
}

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Legend keys as an attribute value: slugs, space-separated.
fn keys_attr(keys: &[String]) -> String {
    keys.iter().map(|k| key_slug(k)).collect::<Vec<_>>().join(" ")
}

/// A key as the DOM holds it: no spaces or markup.
pub fn key_slug(k: &str) -> String {
    k.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}

/// Where the plot sits, once the legend's rows are known.
#[derive(Debug, Clone, Copy)]
struct Frame {
    top: f64,
    right: f64,
}

impl Frame {
    fn height(&self) -> f64 {
        self.top + PLOT_H + BOTTOM
    }
    fn plot_w(&self) -> f64 {
        W - LEFT - self.right
    }
    fn bottom(&self) -> f64 {
        self.top + PLOT_H
    }
}

/// Legend entries placed in rows under the title: (item, x, y).
fn legend_layout(items: &[LegendItem]) -> Vec<(&LegendItem, f64, f64)> {
    let (mut x, mut y) = (LEFT, LEGEND_Y);
    let mut placed = Vec::new();
    for it in items {
        let w = 26.0 + text_width(&it.name, 12.0) + 20.0;
        if x + w > W - RIGHT && x > LEFT {
            x = LEFT;
            y += LEGEND_ROW;
        }
        placed.push((it, x, y));
        x += w;
    }
    placed
}

fn frame_for(legend: &[LegendItem], right: f64) -> Frame {
    let rows_bottom = legend_layout(legend).last().map_or(TITLE_Y, |&(_, _, y)| y);
    Frame { top: rows_bottom + 16.0, right }
}

/// A title's font size and text, within the chart's width: 15 px where it
/// fits, smaller down to 11 px, and past that its middle elided (a long
/// path keeps its start and its end; the whole title is the tooltip).
pub(crate) fn title_fit(title: &str) -> (f64, String) {
    const BOLD: f64 = 1.1;
    let room = W - 16.0;
    let width = |s: &str, px: f64| text_width(s, px) * BOLD;
    if width(title, 15.0) <= room {
        return (15.0, title.to_string());
    }
    let px = (15.0 * room / width(title, 15.0)).max(11.0);
    if width(title, px) <= room {
        return (px, title.to_string());
    }
    let chars: Vec<char> = title.chars().collect();
    let keep = ((room / (width("x", px))) as usize).saturating_sub(1);
    let (head, tail) = (keep / 3, keep - keep / 3);
    let text: String = chars[..head].iter().chain(std::iter::once(&'\u{2026}')).chain(&chars[chars.len() - tail..]).collect();
    (px, text)
}

fn header(out: &mut String, id: &str, kind: &str, title: &str, f: &Frame) {
    let h = f.height();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-kind="{kind}" id="{}" viewBox="0 0 {W} {h}" width="{W}" height="{h}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#,
        esc(id)
    );
    let (font, text) = title_fit(title);
    let _ = write!(
        out,
        r##"<rect width="{W}" height="{h}" fill="#ffffff"/><text class="title" x="{}" y="{TITLE_Y}" text-anchor="middle" font-size="{font:.1}" font-weight="bold">{}{}</text>"##,
        W / 2.0,
        // The whole title as a tooltip where it had to be elided.
        if text == title { String::new() } else { format!("<title>{}</title>", esc(title)) },
        esc(&text)
    );
    let _ = write!(out, r##"<rect class="plot" x="{LEFT}" y="{}" width="{}" height="{PLOT_H}" fill="none"/>"##, f.top, f.plot_w());
}

/// Hatch patterns, one per colour used by hatched swatches or bars.
fn hatch_defs(out: &mut String, colors: &[&str]) {
    let mut seen: Vec<&str> = Vec::new();
    out.push_str("<defs>");
    for c in colors {
        if seen.contains(c) {
            continue;
        }
        seen.push(c);
        let _ = write!(
            out,
            r##"<pattern id="hatch-{}" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="6" stroke="{c}" stroke-width="3"/></pattern>"##,
            &c[1..]
        );
    }
    out.push_str("</defs>");
}

fn legend(out: &mut String, items: &[LegendItem]) {
    for (it, x, y) in legend_layout(items) {
        let _ = write!(out, r#"<g class="legend" data-key="{}" style="cursor:pointer">"#, key_slug(&it.key));
        match it.swatch {
            Swatch::Line => {
                let _ = write!(
                    out,
                    r#"<line x1="{x}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="3"{}/>"#,
                    y - 4.0,
                    x + 20.0,
                    y - 4.0,
                    it.color,
                    it.stroke.attr()
                );
            }
            Swatch::Box | Swatch::Hatched => {
                let fill = if it.swatch == Swatch::Hatched { format!("url(#hatch-{})", &it.color[1..]) } else { it.color.clone() };
                let _ = write!(out, r#"<rect x="{x}" y="{}" width="20" height="10" fill="{fill}" stroke="{}"/>"#, y - 9.0, it.color);
            }
        }
        let _ = write!(out, r#"<text x="{}" y="{y}">{}</text></g>"#, x + 26.0, esc(&it.name));
    }
}

/// The y axis with grid lines; returns the value-to-pixel map.
fn y_axis(out: &mut String, f: Frame, lo: f64, hi: f64, label: &str) -> impl Fn(f64) -> f64 {
    let (y0, y1, step) = ticks(lo.min(0.0), hi, 5);
    let map = move |v: f64| f.top + PLOT_H - (v - y0) / (y1 - y0) * PLOT_H;
    let mut v = y0;
    while v <= y1 + step * 0.5 {
        let y = map(v);
        let _ = write!(out, r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#e0e0e0"/>"##, W - f.right);
        let _ = write!(out, r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#, LEFT - 6.0, y + 4.0, tick_label(v, step));
        v += step;
    }
    let _ = write!(
        out,
        r#"<text class="axis-label y" transform="translate(16,{:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        f.top + PLOT_H / 2.0,
        esc(label)
    );
    let _ = write!(out, r##"<line x1="{LEFT}" y1="{}" x2="{LEFT}" y2="{}" stroke="#333"/>"##, f.top, f.bottom());
    let _ = write!(out, r##"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="#333"/>"##, f.bottom(), W - f.right, f.bottom());
    map
}

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
fn end_labels(out: &mut String, mut labels: Vec<(f64, f64, String, String, String)>, lo: f64, hi: f64) {
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

impl BarChart {
    pub fn svg(&self) -> String {
        let f = frame_for(&self.legend, RIGHT);
        let mut out = String::new();
        header(&mut out, &self.id, "bar", &self.title, &f);
        let hatched: Vec<&str> = self.series.iter().map(|s| s.color.as_str()).chain(self.legend.iter().map(|l| l.color.as_str())).collect();
        hatch_defs(&mut out, &hatched);
        let top = |s: &BarSeries, v: f64| v * (1.0 + s.tolerance_percent.unwrap_or(0.0) / 100.0);
        let y_hi = self.series.iter().flat_map(|s| s.values.iter().flatten().map(move |&v| top(s, v))).fold(0.0f64, f64::max);
        let ymap = y_axis(&mut out, f, 0.0, y_hi * 1.08, &self.y_label);
        let group_w = f.plot_w() / self.categories.len().max(1) as f64;
        let n = self.series.len().max(1) as f64;
        let bar_w = (group_w * 0.8 / n).min(70.0);
        for (ci, cat) in self.categories.iter().enumerate() {
            let gx = LEFT + group_w * ci as f64 + (group_w - bar_w * n) / 2.0;
            for (si, s) in self.series.iter().enumerate() {
                if let Some(v) = s.values.get(ci).copied().flatten() {
                    bar_draw(&mut out, s, cat, v, gx + bar_w * si as f64, bar_w, &ymap);
                }
            }
            // A category of two lines (card, then format) reads under
            // its group without running into its neighbour's.
            for (k, line) in cat.split('\n').take(2).enumerate() {
                let _ = write!(
                    out,
                    r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                    LEFT + group_w * (ci as f64 + 0.5),
                    f.bottom() + 18.0 + 13.0 * k as f64,
                    esc(line)
                );
            }
        }
        legend(&mut out, &self.legend);
        out.push_str("</svg>");
        out
    }
}

/// One bar, its value above it where it fits, and for a published figure
/// whiskers at its tolerance.
fn bar_draw(out: &mut String, s: &BarSeries, cat: &str, v: f64, x: f64, bar_w: f64, ymap: &impl Fn(f64) -> f64) {
    let y = ymap(v);
    let fill = if s.hatched { format!("url(#hatch-{})", &s.color[1..]) } else { s.color.clone() };
    let _ = write!(out, r#"<g class="series" data-keys="{}">"#, key_slug(&s.key));
    let tol = s.tolerance_percent.map(|t| format!(", tolerance +-{t:.0}%")).unwrap_or_default();
    let _ = write!(
        out,
        r#"<rect class="bar" x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="{}"><title>{}, {}: {}{tol}</title></rect>"#,
        bar_w - 2.0,
        (ymap(0.0) - y).max(0.0),
        s.color,
        esc(&s.name),
        esc(cat),
        num(v)
    );
    let mid = x + bar_w / 2.0 - 1.0;
    let mut label_y = y - 4.0;
    if let Some(t) = s.tolerance_percent {
        let (hi, lo) = (ymap(v * (1.0 + t / 100.0)), ymap(v * (1.0 - t / 100.0)));
        let _ = write!(
            out,
            r#"<path class="tolerance" d="M{mid:.1},{hi:.1}V{lo:.1}M{:.1},{hi:.1}H{:.1}M{:.1},{lo:.1}H{:.1}" stroke="{INK}" stroke-width="1.2" fill="none"/>"#,
            mid - 5.0,
            mid + 5.0,
            mid - 5.0,
            mid + 5.0
        );
        label_y = hi - 4.0;
    }
    if text_width(&num(v), 10.0) <= bar_w {
        let _ = write!(out, r#"<text x="{mid:.1}" y="{label_y:.1}" text-anchor="middle" font-size="10">{}</text>"#, num(v));
    }
    out.push_str("</g>");
}

#[cfg(test)]
#[path = "chart_tests.rs"]
mod tests;
