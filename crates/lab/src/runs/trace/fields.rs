//! A trace line's fields: split without allocating, a field read as a
//! number (the line refused, naming the field, where it is not one), a
//! field elided for an error message.

use super::TraceError;

/// The most fields of a line kept: no line of a format read has more
/// that matter (a blkparse event's process name may add some).
const FIELDS_MAX: usize = 12;

/// A line's fields, the first `FIELDS_MAX` kept, without allocating, and
/// how many there were.
pub(super) struct Fields<'a> {
    f: [&'a str; FIELDS_MAX],
    pub(super) n: usize,
}

impl<'a> Fields<'a> {
    pub(super) fn of(split: impl Iterator<Item = &'a str>) -> Fields<'a> {
        let mut fields = Fields { f: [""; FIELDS_MAX], n: 0 };
        for x in split {
            if fields.n < FIELDS_MAX {
                fields.f[fields.n] = x;
            }
            fields.n += 1;
        }
        fields
    }

    pub(super) fn kept(&self) -> &[&'a str] {
        &self.f[..self.n.min(FIELDS_MAX)]
    }
}

/// `s` cut to 60 characters for an error message.
pub(super) fn elide(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

pub(super) fn number<T: std::str::FromStr>(field: &str, what: &str, line: usize) -> Result<T, TraceError> {
    field.trim().parse().map_err(|_| TraceError { line, why: format!("{what} '{}' is not a whole number", elide(field.trim())) })
}
