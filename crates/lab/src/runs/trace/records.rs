//! A trace's requests as its lines are parsed, reordered by arrival
//! within a window of lines.

use super::lines::Lines;
use super::parse::{Parsed, Parser};
use super::{Record, TraceError, ARRIVAL_NS_MAX, REORDER_WINDOW};
use units::Ns;

/// A trace's requests as they are read, reordered by arrival within
/// `REORDER_WINDOW` lines, given from the first arrival.
pub(super) struct Records {
    lines: Lines,
    pub(super) parser: Parser,
    order: Order,
}

/// The requests read and not yet given, in arrival order.
#[derive(Default)]
struct Order {
    /// Line and request, in arrival order (equal arrivals in the file's):
    /// most traces are in order, so a request is almost always put last.
    window: std::collections::VecDeque<(usize, Record)>,
    /// The last arrival given: a later line arriving before it is further
    /// out of order than the window holds.
    given: Ns,
    /// The first arrival, on the trace's own clock.
    t0: Option<Ns>,
    /// The last line is read (or one failed).
    done: bool,
}

impl Records {
    pub(super) fn open(mut lines: Lines) -> Result<Records, TraceError> {
        let (mut parser, mut order) = (None, Order::default());
        if let Some(first) = lines.next_line() {
            let (line, text) = first?;
            let p = parser.insert(Parser::of(text)?);
            // The formats whose first line is a request are read from it.
            if !p.header {
                order.take(p, line, text)?;
            }
        }
        let parser = parser.ok_or_else(|| TraceError { line: 0, why: "the trace is empty".into() })?;
        Ok(Records { lines, parser, order })
    }

    /// Reads lines until the window is full or the trace ends.
    fn fill(&mut self) -> Result<(), TraceError> {
        while !self.order.done && self.order.window.len() < REORDER_WINDOW {
            match self.lines.next_line() {
                None => self.order.done = true,
                Some(l) => {
                    let (line, text) = l?;
                    self.order.take(&mut self.parser, line, text)?;
                }
            }
        }
        Ok(())
    }
}

impl Order {
    /// One line's requests into the window.
    fn take(&mut self, parser: &mut Parser, line: usize, text: &str) -> Result<(), TraceError> {
        let rs = match parser.line(line, text)? {
            Parsed::End => {
                self.done = true;
                return Ok(());
            }
            Parsed::Records(rs) => rs,
        };
        for r in rs.into_iter().flatten() {
            if r.at_ns < self.given {
                return Err(TraceError {
                    line,
                    why: format!(
                        "arrives {} ns before a request {REORDER_WINDOW} or more lines above it: further out of arrival order than a replay reorders",
                        self.given - r.at_ns
                    ),
                });
            }
            if self.window.back().is_none_or(|(_, w)| w.at_ns <= r.at_ns) {
                self.window.push_back((line, r));
            } else {
                let at = self.window.partition_point(|(_, w)| w.at_ns <= r.at_ns);
                self.window.insert(at, (line, r));
            }
        }
        Ok(())
    }

    /// The earliest request held, its time from the trace's first.
    fn give(&mut self) -> Option<Result<Record, TraceError>> {
        let (line, mut r) = self.window.pop_front()?;
        self.given = r.at_ns;
        r.at_ns -= *self.t0.get_or_insert(r.at_ns);
        if r.at_ns > ARRIVAL_NS_MAX {
            return Some(Err(TraceError {
                line,
                why: format!("arrives {:.3e} s after the trace's first request: a trace spans at most 2^62 ns (about 146 years)", r.at_ns as f64 / 1e9),
            }));
        }
        Some(Ok(r))
    }
}

impl Iterator for Records {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        let given = self.fill().map_or_else(|e| Some(Err(e)), |()| self.order.give());
        if matches!(given, Some(Err(_))) {
            // The first error ends the trace.
            self.order.done = true;
            self.order.window.clear();
        }
        given
    }
}
