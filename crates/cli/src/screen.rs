//! The monitor's terminal screen (ratatui): the last whole second's
//! figures of a served card (IOPS, MB/s, latency average, p99 and max,
//! GC, write amplification, buffer fill, power), a history of its IOPS,
//! and its health and alerts, redrawn each second. Laid out for 80
//! columns and 24 rows; a larger terminal gets a longer history.

use emu::live::Second;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Gauge, Paragraph, Sparkline};
use ratatui::{DefaultTerminal, Frame};
use serde_json::Value;
use std::collections::VecDeque;
use std::time::Duration;

/// Seconds of IOPS history kept (more than a wide terminal shows).
const HISTORY: usize = 512;

/// What the screen shows: the card's last whole second, its live state
/// (`stats` of the control protocol), its status (refreshed less often)
/// and the IOPS of the seconds before.
#[derive(Default)]
pub struct View {
    pub second: Option<Second>,
    pub stats: Value,
    pub status: Value,
    history: VecDeque<u64>,
}

impl View {
    /// Nothing shown yet but the card's status.
    pub fn new(status: Value) -> View {
        View { status, ..View::default() }
    }

    /// A new second: shown, and its IOPS added to the history.
    pub fn push(&mut self, second: Second, stats: Value, status: Value) {
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(second.read_iops + second.write_iops);
        (self.second, self.stats, self.status) = (Some(second), stats, status);
    }
}

/// The terminal, in raw mode on the alternate screen until dropped.
pub struct Screen {
    terminal: DefaultTerminal,
}

impl Screen {
    pub fn start() -> std::io::Result<Screen> {
        Ok(Screen { terminal: ratatui::try_init()? })
    }

    pub fn draw(&mut self, view: &View) -> std::io::Result<()> {
        self.terminal.draw(|f| draw(f, view)).map(|_| ())
    }

    /// Waits up to `wait` for a key; whether the user asked to quit (q,
    /// Esc or Ctrl-C: raw mode takes Ctrl-C as a key).
    pub fn quit_asked(&mut self, wait: Duration) -> std::io::Result<bool> {
        if !event::poll(wait)? {
            return Ok(false);
        }
        Ok(match event::read()? {
            Event::Key(k) if k.kind == KeyEventKind::Press => {
                matches!(k.code, KeyCode::Char('q') | KeyCode::Esc) || (k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL))
            }
            _ => false,
        })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// A whole number with thousands separated: 12,345.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut o = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            o.push(',');
        }
        o.push(c);
    }
    o
}

/// Microseconds, or a dash where the second had no request.
fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), |u| format!("{} us", thousands(u.round() as u64)))
}

fn label(s: &str) -> Span<'_> {
    Span::styled(s, Style::default().fg(Color::Cyan))
}

/// Draws the whole screen.
pub fn draw(f: &mut Frame, v: &View) {
    let [head, io, flash, history, health] =
        Layout::vertical([Constraint::Length(5), Constraint::Length(5), Constraint::Length(4), Constraint::Min(3), Constraint::Length(5)]).areas(f.area());
    draw_head(f, head, v);
    let Some(s) = &v.second else {
        f.render_widget(Paragraph::new("waiting for the card's first whole second...").block(Block::bordered().title(" I/O ")), io);
        return;
    };
    draw_io(f, io, s);
    draw_flash(f, flash, s);
    draw_history(f, history, v);
    draw_health(f, health, v);
}

fn draw_head(f: &mut Frame, area: Rect, v: &View) {
    let st = &v.status;
    let card = format!(
        "{} ({}), format {}, scale 1/{} [simulated]",
        st["device"].as_str().unwrap_or("?"),
        st["id"].as_str().unwrap_or("?"),
        st["format"].as_str().unwrap_or("?"),
        st["scale"]
    );
    let beacon =
        if v.stats["beacon"].as_bool() == Some(true) { Span::styled(" BEACON ", Style::default().fg(Color::Black).bg(Color::Yellow)) } else { Span::raw("") };
    let block = Block::bordered().title(Line::from(vec![Span::raw(" flashlab monitor ").bold(), beacon])).title_bottom(Line::from(" q quits ").right_aligned());
    let second = v.second.as_ref().map_or("-".into(), |s| s.index.to_string());
    let read_only = v.stats["read_only"].as_str().map_or("no".to_string(), |r| format!("YES: {r}"));
    let rebuild = if v.stats["rebuilding"].as_bool() == Some(true) { "running" } else { "none" };
    let totals = &v.stats["totals"];
    let served = format!("{} requests, {} errors", thousands(totals["requests"].as_u64().unwrap_or(0)), thousands(totals["errors"].as_u64().unwrap_or(0)));
    let lines = vec![
        Line::from(card),
        Line::from(vec![
            label("second "),
            Span::raw(second),
            label("   clients "),
            Span::raw(v.stats["clients"].to_string()),
            label("   rebuild "),
            Span::raw(rebuild),
            label("   read-only "),
            Span::raw(read_only),
        ]),
        Line::from(vec![label("served "), Span::raw(served)]),
    ];
    f.render_widget(Paragraph::new(lines).block(block), area);
}

fn draw_io(f: &mut Frame, area: Rect, s: &Second) {
    let row = |name: &'static str, iops: u64, mb: f64| Line::from(vec![label(name), Span::raw(format!("{:>10} IOPS {:>10.1} MB/s", thousands(iops), mb))]);
    let lines = vec![
        row("read  ", s.read_iops, s.read_mb_s),
        row("write ", s.write_iops, s.write_mb_s),
        Line::from(vec![
            label("latency "),
            Span::raw(format!("avg {}", us(s.latency_avg_us))),
            label("   p99 "),
            Span::raw(us(s.latency_p99_us)),
            label("   max "),
            Span::raw(us(s.latency_max_us)),
            label("   errors "),
            Span::raw(s.errors.to_string()),
        ]),
    ];
    f.render_widget(Paragraph::new(lines).block(Block::bordered().title(" I/O, last whole second (modelled latency) ")), area);
}

fn draw_flash(f: &mut Frame, area: Rect, s: &Second) {
    let block = Block::bordered().title(" flash ");
    let inner = block.inner(area);
    f.render_widget(block, area);
    let [text, gauge] = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(inner);
    let wa = s.write_amplification.map_or("-".into(), |w| format!("{w:.2}"));
    let power = s.power_watts.map_or("not published".into(), |w| format!("{w:.1} W"));
    let line = Line::from(vec![
        label("GC "),
        Span::raw(format!("{} slots moved", thousands(s.gc_slots_moved))),
        label("   WA "),
        Span::raw(wa),
        label("   dies busy "),
        Span::raw(format!("{:.0}%", s.die_busy * 100.0)),
        label("   power "),
        Span::raw(power),
    ]);
    f.render_widget(Paragraph::new(line), text);
    let fill = s.buffer_fill.clamp(0.0, 1.0);
    let g = Gauge::default()
        .gauge_style(Style::default().fg(Color::Green).bg(Color::DarkGray))
        .ratio(fill)
        .label(format!("write buffer {:.0}% full", fill * 100.0));
    f.render_widget(g, gauge);
}

fn draw_history(f: &mut Frame, area: Rect, v: &View) {
    let width = area.width.saturating_sub(2) as usize;
    let shown: Vec<u64> = v.history.iter().rev().take(width).rev().copied().collect();
    let peak = shown.iter().copied().max().unwrap_or(0);
    let title = format!(" IOPS, last {} s (peak {}) ", shown.len(), thousands(peak));
    let spark = Sparkline::default().block(Block::bordered().title(title)).data(shown).max(peak.max(1)).style(Style::default().fg(Color::Magenta));
    f.render_widget(spark, area);
}

fn draw_health(f: &mut Frame, area: Rect, v: &View) {
    let h = &v.status["health"];
    let life = match h["life_used"].as_f64() {
        Some(l) => format!("{:.1}% of {} P/E cycles", l * 100.0, h["pe_cycles_rated"]),
        None => "not rated".into(),
    };
    let spare = h["spare_share"].as_f64().map_or("-".into(), |s| format!("{:.1}%", s * 100.0));
    let mut lines = vec![Line::from(vec![label("life used "), Span::raw(life), label("   effective OP "), Span::raw(spare)])];
    let alerts: Vec<&str> = v.status["alerts"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    if alerts.is_empty() {
        lines.push(Line::from(vec![label("alerts "), Span::raw("none")]));
    }
    // Two lines for alerts: both, or the first and how many more.
    let shown = if alerts.len() > 2 { 1 } else { alerts.len() };
    for a in &alerts[..shown] {
        lines.push(Line::from(Span::styled(format!("! {a}"), Style::default().fg(Color::Red).add_modifier(Modifier::BOLD))));
    }
    if alerts.len() > shown {
        lines.push(Line::from(format!("  and {} more (flashlab status)", alerts.len() - shown)));
    }
    f.render_widget(Paragraph::new(lines).block(Block::bordered().title(" health (status every 10 s) ")), area);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn screen_text(v: &View, w: u16, h: u16) -> Vec<String> {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(f, v)).unwrap();
        let buf = t.backend().buffer().clone();
        (0..h).map(|y| (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect::<String>()).collect()
    }

    fn busy_view() -> View {
        let status = serde_json::json!({
            "device": "Micron P420m 1.4 TB MLC", "id": "p420m", "format": "stock", "scale": 8192,
            "health": {"life_used": 0.0123, "pe_cycles_rated": 3000, "spare_share": 0.32},
            "alerts": ["die 1.1 failed at 1.489 s", "rebuild of die 1.1: 40% done", "beacon on"],
        });
        let stats = serde_json::json!({"beacon": true, "clients": 2, "read_only": null, "rebuilding": true, "totals": {"requests": 1234567, "errors": 0}});
        let mut v = View::default();
        for i in 0..30 {
            let s = Second {
                index: i,
                read_iops: 120_000 + i * 100,
                write_iops: 51_000,
                read_mb_s: 491.5,
                write_mb_s: 208.9,
                latency_avg_us: Some(173.4),
                latency_p99_us: Some(1250.0),
                latency_max_us: Some(23_456.0),
                gc_slots_moved: 98_765,
                write_amplification: Some(2.87),
                die_busy: 0.93,
                buffer_fill: 0.42,
                power_watts: Some(27.3),
                ..Second::default()
            };
            v.push(s, stats.clone(), status.clone());
        }
        v
    }

    #[test]
    fn every_figure_fits_80_columns_and_24_rows() {
        let lines = screen_text(&busy_view(), 80, 24);
        let screen = lines.join("\n");
        for want in [
            "flashlab monitor",
            "BEACON",
            "second 29",
            "clients 2",
            "rebuild running",
            "1,234,567 requests",
            "122,900 IOPS",
            "491.5 MB/s",
            "51,000 IOPS",
            "avg 173 us",
            "p99 1,250 us",
            "max 23,456 us",
            "98,765 slots moved",
            "WA 2.87",
            "dies busy 93%",
            "power 27.3 W",
            "write buffer 42% full",
            "IOPS, last 30 s (peak 173,900)",
            "life used 1.2% of 3000 P/E cycles",
            "effective OP 32.0%",
            "! die 1.1 failed",
            "and 2 more",
            "q quits",
        ] {
            assert!(screen.contains(want), "'{want}' is not on the 80x24 screen:\n{screen}");
        }
    }

    #[test]
    fn before_the_first_second_the_screen_says_it_waits() {
        let v = View::new(serde_json::json!({"device": "d", "id": "x", "format": "stock", "scale": 1}));
        let screen = screen_text(&v, 80, 24).join("\n");
        assert!(screen.contains("waiting for the card's first whole second"), "{screen}");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!((thousands(0), thousands(999), thousands(1000), thousands(1234567)), ("0".into(), "999".into(), "1,000".into(), "1,234,567".into()));
    }
}
