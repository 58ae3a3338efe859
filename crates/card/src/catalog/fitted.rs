//! Fitted parameters: which of a profile's numbers were fitted to
//! published figures (no source gives them), each with the physical
//! bounds it may take and why; and a profile with one of its numbers set
//! by its path (`controller.program_path_bytes_per_sec`), for a fit to
//! search over.

use crate::catalog::profile::{FitParam, Profile, ProfileError};
use serde::Deserialize;

/// A `[[fit]]` entry a profile cannot take, or a number it does not hold.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("fit {path}: bounds [{min}, {max}] must be 0 < min < max")]
    Bounds { path: String, min: f64, max: f64 },
    #[error("fit {path}: the profile's value {value} lies outside its bounds [{min}, {max}]")]
    Outside { path: String, value: f64, min: f64, max: f64 },
    #[error("{id}: no field {path}")]
    NoField { id: String, path: String },
    #[error("{id}: {path} is not a number")]
    NotNumber { id: String, path: String },
    #[error("{0}")]
    Serialise(String),
}

/// A file of figures that is not one, or a figure in it that cannot be
/// fitted to.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FigureError {
    #[error("{file}: not a TOML file of [[published]] figures ({why})")]
    NotFigures { file: String, why: String },
    #[error("{file}: {what}: {field} = {value}: must be {range}")]
    Field { file: String, what: String, field: String, value: String, range: String },
    #[error("{file}: {what}: value = {value} contradicts \"{other}\" ({other_value}): the same {unit} of the same conditions; keep one")]
    Contradicts { file: String, what: String, value: f64, other: String, other_value: f64, unit: String },
}

impl FitParam {
    /// Bounds ordered and above zero, the path a number of `profile`
    /// within them.
    pub fn check(&self, profile: &Profile) -> Result<(), FitError> {
        let (path, min, max) = (self.path.clone(), self.min, self.max);
        if !(min.is_finite() && max.is_finite() && 0.0 < min && min < max) {
            return Err(FitError::Bounds { path, min, max });
        }
        let value = profile.number(&self.path)?;
        if !(min..=max).contains(&value) {
            return Err(FitError::Outside { path, value, min, max });
        }
        Ok(())
    }

    /// Whether the number acts on a card of `format` that serves host
    /// reads or not (`host_reads`): a format's capacity (`formats.NAME`)
    /// only on that format; a number that times host reads alone
    /// ([`HOST_READS_ONLY`]) only where the host reads; every other
    /// number on all.
    pub fn acts_on(&self, format: &str, host_reads: bool) -> bool {
        self.path.strip_prefix("formats.").is_none_or(|f| f == format) && (host_reads || !HOST_READS_ONLY.contains(&self.path.as_str()))
    }
}

/// The numbers that time host reads and nothing else: the controller's
/// read command engine takes a host read's command (a write's command
/// has its own rate; GC's reads and a partial write's merge read issue
/// none), and a driver's work once a host read completes. Moving one
/// changes nothing a write-only load measures, so a fit need not
/// calibrate such a load again (the device's test
/// `host_writes_never_meet_the_read_command_rate` holds it).
pub const HOST_READS_ONLY: &[&str] = &["controller.read_commands_per_sec", "host.read_completion_ns"];

/// A file of figures (a user's own measurements): `[[published]]`
/// entries as a profile holds them, each checked.
pub fn figures_parse(file: &str, text: &str) -> Result<Vec<crate::Published>, FigureError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Figures {
        published: Vec<crate::Published>,
    }
    let f: Figures = toml::from_str(text).map_err(|e| FigureError::NotFigures { file: file.to_string(), why: crate::input::toml_why(text, &e) })?;
    figures_check(file, &f.published)?;
    Ok(f.published)
}

/// Every figure of `file` checked (`Published::validate`): the first bad
/// field named, with the figure and the allowed range.
pub fn figures_check(file: &str, figures: &[crate::Published]) -> Result<(), FigureError> {
    for (i, p) in figures.iter().enumerate() {
        p.validate().map_err(|(field, value, range)| FigureError::Field { file: file.to_string(), what: p.what.clone(), field, value, range })?;
        // Two figures of one measurement (same publisher, conditions and
        // metric) that disagree cannot both be fitted.
        if let Some(q) = figures[..i].iter().find(|q| q.same_measurement(p) && q.value != p.value) {
            return Err(FigureError::Contradicts {
                file: file.to_string(),
                what: p.what.clone(),
                value: p.value,
                other: q.what.clone(),
                other_value: q.value,
                unit: p.metric.unit().to_string(),
            });
        }
    }
    Ok(())
}

impl Profile {
    /// The profile as a TOML file (its comments are not kept).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a profile serialises")
    }

    /// The profile as TOML without the numbers that time host reads alone
    /// ([`HOST_READS_ONLY`]): two profiles whose texts are equal build
    /// cards that serve host writes alike, to the nanosecond.
    pub fn writes_text(&self) -> String {
        let mut v = toml::Value::try_from(self).expect("a profile serialises");
        for path in HOST_READS_ONLY {
            let (table, key) = path.rsplit_once('.').expect("a number within a table");
            let mut at = &mut v;
            for k in table.split('.') {
                at = at.get_mut(k).expect("HOST_READS_ONLY names fields of every profile");
            }
            at.as_table_mut().expect("a table").remove(key).expect("HOST_READS_ONLY names fields of every profile");
        }
        v.to_string()
    }

    /// The number at `path` (TOML keys joined by dots).
    pub fn number(&self, path: &str) -> Result<f64, FitError> {
        let v = toml::Value::try_from(self).map_err(|e| FitError::Serialise(e.to_string()))?;
        let mut at = &v;
        for key in path.split('.') {
            at = at.get(key).ok_or_else(|| FitError::NoField { id: self.id.clone(), path: path.to_string() })?;
        }
        match at {
            toml::Value::Integer(i) => Ok(*i as f64),
            toml::Value::Float(f) => Ok(*f),
            _ => Err(FitError::NotNumber { id: self.id.clone(), path: path.to_string() }),
        }
    }

    /// The profile with the number at `path` set to `value` (rounded where
    /// the field holds a whole number), checked as a profile file is.
    pub fn with_number(&self, path: &str, value: f64) -> Result<Profile, ProfileError> {
        let inconsistent = |msg: String| ProfileError::Inconsistent { id: self.id.clone(), msg };
        let mut v = toml::Value::try_from(self).map_err(|e| inconsistent(e.to_string()))?;
        let mut at = &mut v;
        for key in path.split('.') {
            at = at.get_mut(key).ok_or_else(|| inconsistent(format!("no field {path}")))?;
        }
        if !value.is_finite() {
            return Err(inconsistent(format!("{path} = {value}: not a number")));
        }
        *at = match at {
            toml::Value::Integer(_) if value.round().abs() >= i64::MAX as f64 => {
                return Err(inconsistent(format!("{path} = {value:e}: too large for a whole number")))
            }
            toml::Value::Integer(_) => toml::Value::Integer(value.round() as i64),
            toml::Value::Float(_) => toml::Value::Float(value),
            _ => return Err(inconsistent(format!("{path} is not a number"))),
        };
        let p: Profile = v.try_into().map_err(|e: toml::de::Error| inconsistent(e.to_string().lines().map(str::trim).collect::<Vec<_>>().join(" ")))?;
        // The host is not in the card's TOML: the card stays on its own.
        let p = Profile { platform: self.platform.clone(), ..p };
        p.validate()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_capacity_acts_on_its_format_only_and_the_read_command_rate_on_reads() {
        let p = |path: &str| FitParam { path: path.into(), min: 1.0, max: 2.0, why: String::new() };
        assert!(p("formats.hp").acts_on("hp", true) && !p("formats.hp").acts_on("stock", true));
        assert!(p("ftl.gc_ns_per_slot").acts_on("hp", true) && p("ftl.gc_ns_per_slot").acts_on("stock", false));
        let reads = p("controller.read_commands_per_sec");
        assert!(reads.acts_on("stock", true) && !reads.acts_on("stock", false));
    }

    #[test]
    fn the_writes_text_leaves_out_the_numbers_that_time_host_reads_alone() {
        let p = crate::profile_load("p420m").unwrap();
        let reads = p.with_number(HOST_READS_ONLY[0], p.number(HOST_READS_ONLY[0]).unwrap() * 2.0).unwrap();
        assert_eq!(reads.writes_text(), p.writes_text());
        assert_ne!(reads.to_toml(), p.to_toml());
        let gc = p.with_number("ftl.gc_ns_per_slot", p.number("ftl.gc_ns_per_slot").unwrap() * 2.0).unwrap();
        assert_ne!(gc.writes_text(), p.writes_text());
    }

    #[test]
    fn figures_beyond_belief_or_contradicting_each_other_are_refused() {
        let one = |value: &str, what: &str| {
            format!("[[published]]\nby = \"reviewer\"\nsource = \"s\"\nwhat = \"{what}\"\nworkload = \"4k-write\"\nthreads = 16\nqd = 16\nstate = \"steady\"\nmetric = \"iops\"\nvalue = {value}\n")
        };
        assert!(figures_parse("f.toml", &one("100000", "a")).is_ok());
        let e = figures_parse("f.toml", &one("1e-300", "a")).unwrap_err().to_string();
        assert!(e.contains("value = 0.000") || e.contains("value = 1e-300"), "{e}");
        assert!(e.contains("a number of IOPS in 1e0..=1e9"), "{e}");
        let e = figures_parse("f.toml", &(one("100000", "a") + &one("120000", "b"))).unwrap_err().to_string();
        assert!(e.contains("b: value = 120000 contradicts \"a\" (100000)"), "{e}");
        assert!(figures_parse("f.toml", &(one("100000", "a") + &one("100000", "b"))).is_ok(), "the same figure twice agrees");
        let e = figures_parse("f.toml", "[[published]]\nby = ").unwrap_err().to_string();
        assert!(e.contains("cut short"), "{e}");
    }

    #[test]
    fn a_number_is_read_and_set_by_its_path_and_checked() {
        let p = crate::profile_load("p420m").unwrap();
        assert_eq!(p.number("controller.program_path_bytes_per_sec").unwrap(), 740e6);
        let q = p.with_number("controller.program_path_bytes_per_sec", 700e6 + 0.4).unwrap();
        assert_eq!(q.controller.program_path_bytes_per_sec, 700_000_000);
        assert!(p.number("controller.nothing").unwrap_err().to_string().contains("no field controller.nothing"));
        assert!(p.number("name").unwrap_err().to_string().contains("not a number"));
        let bad = p.with_number("controller.program_path_bytes_per_sec", 1.0).unwrap_err().to_string();
        assert!(bad.contains("program_path_bytes_per_sec"), "{bad}");
        let f = FitParam { path: "controller.program_path_bytes_per_sec".into(), min: 1e9, max: 2e9, why: "test".into() };
        assert!(f.check(&p).unwrap_err().to_string().contains("outside its bounds"));
    }
}
