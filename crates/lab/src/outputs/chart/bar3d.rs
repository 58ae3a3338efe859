//! A 3D bar chart as the SNIA PTS report draws its IOPS and latency
//! matrices: a bar per block size (left to right, small to large) and
//! read/write mix (front to back, 100% write in front), its height the
//! value, in an oblique projection drawn back to front.

use super::*;

/// Bars on a grid of `x_names` (columns) by `z_names` (rows, front
/// first); `values[z][x]` (`None`: no bar).
#[derive(Debug, Clone, Default)]
pub struct Bar3dChart {
    pub id: String,
    pub title: String,
    pub y_label: String,
    pub x_label: String,
    pub x_names: Vec<String>,
    pub z_names: Vec<String>,
    /// One colour a row.
    pub colors: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
}

/// How far back a row sits, per row: right and up (30 degrees).
const ROW_DX: f64 = 15.0;
const ROW_DY: f64 = 9.0;
/// Room for the rows' names right of the last column.
const NAMES_W: f64 = 70.0;

/// A colour darkened (`k` < 1) for a bar's shaded faces.
fn shade(color: &str, k: f64) -> String {
    let rgb = |i: usize| u8::from_str_radix(color.get(i..i + 2).unwrap_or("80"), 16).unwrap_or(128) as f64 * k;
    format!("#{:02x}{:02x}{:02x}", rgb(1) as u8, rgb(3) as u8, rgb(5) as u8)
}

impl Bar3dChart {
    pub fn svg(&self) -> String {
        let rows = self.z_names.len().max(1);
        let cols = self.x_names.len().max(1);
        let depth = (ROW_DX * rows as f64, ROW_DY * rows as f64);
        let f = Frame { top: LEGEND_Y + depth.1, right: RIGHT + NAMES_W };
        let mut out = String::new();
        header(&mut out, &self.id, "bar3d", &self.title, &f);
        let y_hi = self.values.iter().flatten().flatten().copied().fold(0.0f64, f64::max);
        let ymap = y_axis(&mut out, f, 0.0, y_hi * 1.05, &self.y_label);
        let pitch = (f.plot_w() - depth.0) / cols as f64;
        let bar_w = (pitch * 0.55).min(40.0);
        let bar_d = (ROW_DX * 0.7, ROW_DY * 0.7);
        let base = f.bottom();
        // Back row first, each row left to right: nearer bars cover farther.
        for z in (0..self.z_names.len()).rev() {
            let (ox, oy) = (ROW_DX * z as f64, ROW_DY * z as f64);
            let color = self.colors.get(z).map_or(INK, String::as_str);
            for x in 0..self.x_names.len() {
                let Some(v) = self.values.get(z).and_then(|r| r.get(x)).copied().flatten() else { continue };
                let left = LEFT + pitch * x as f64 + (pitch - bar_w) / 2.0 + ox;
                let (bottom, top) = (base - oy, ymap(v) - oy);
                let tip = format!("{} {}: {}", self.z_names[z], self.x_names[x], num(v));
                let (dx, dy) = bar_d;
                let _ = write!(
                    out,
                    r#"<g class="bar3d"><title>{}</title><rect x="{left:.1}" y="{top:.1}" width="{bar_w:.1}" height="{:.1}" fill="{color}"/><polygon points="{left:.1},{top:.1} {:.1},{top:.1} {:.1},{:.1} {:.1},{:.1}" fill="{}"/><polygon points="{:.1},{bottom:.1} {:.1},{top:.1} {:.1},{:.1} {:.1},{:.1}" fill="{}"/></g>"#,
                    esc(&tip),
                    (bottom - top).max(0.0),
                    left + bar_w,
                    left + bar_w + dx,
                    top - dy,
                    left + dx,
                    top - dy,
                    shade(color, 0.85),
                    left + bar_w,
                    left + bar_w,
                    left + bar_w + dx,
                    top - dy,
                    left + bar_w + dx,
                    bottom - dy,
                    shade(color, 0.65),
                );
            }
            let _ = write!(
                out,
                r#"<text class="row-name" x="{:.1}" y="{:.1}" fill="{color}">{}</text>"#,
                LEFT + pitch * cols as f64 + ox + 4.0,
                base - oy - 2.0,
                esc(&self.z_names[z])
            );
        }
        for (x, name) in self.x_names.iter().enumerate() {
            let _ = write!(out, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#, LEFT + pitch * (x as f64 + 0.5), base + 16.0, esc(name));
        }
        let _ =
            write!(out, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#, LEFT + (f.plot_w() - depth.0) / 2.0, base + 36.0, esc(&self.x_label));
        out.push_str("</svg>");
        out
    }
}
