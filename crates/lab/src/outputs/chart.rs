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

mod bar;
mod bar3d;
mod line;
pub use bar::{BarChart, BarSeries};
pub use bar3d::Bar3dChart;
#[cfg(test)]
use line::{end_labels, labels_spread};
pub use line::{Band, LineChart, Series};

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

#[cfg(test)]
#[path = "chart_tests.rs"]
mod tests;
