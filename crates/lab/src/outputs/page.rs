//! Building blocks of the HTML report's pages: tables and figure grids.

use crate::outputs::chart::esc;
use crate::outputs::figures::Chart;
use std::fmt::Write as _;

pub fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>");
    for r in rows {
        out.push_str("<tr>");
        for c in r {
            // Cells are escaped by their makers (some carry markup).
            let _ = write!(out, "<td>{c}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
}

pub fn figures_of(out: &mut String, files: &mut Vec<Chart>, charts: Vec<Chart>) {
    out.push_str(r#"<div class="grid">"#);
    for c in &charts {
        let _ = write!(out, "<figure>{}<figcaption>{} (<a href=\"charts/{}\">SVG</a>)</figcaption></figure>", c.svg, esc(&c.caption), esc(&c.file));
    }
    out.push_str("</div>");
    files.extend(charts);
}
