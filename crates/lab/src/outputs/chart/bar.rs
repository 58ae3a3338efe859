//! Bar charts: bars grouped by category, one a series, published figures
//! hatched with whiskers at their tolerance.

use super::*;

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
