//! A card built on another: `base = "ID"` in a profile takes a built-in
//! card's profile and changes what the file sets. A card that shares its
//! parts with a sibling (the ioDrive2 1.2 TB, one ioMemory device of the
//! Duo's two; the P320h, the P420m's controller with SLC) says so once,
//! and what is its own stands beside its source.
//!
//! The rules: tables merge key by key (the file's value wins, a table
//! within a table merges in turn), any other value is replaced whole, and
//! so are the formats where the file sets them (its own capacities); the
//! base's published figures and fitted numbers are not taken (they
//! describe the base card, measured or fitted as it is); the file names
//! its own card (`id`, `name`); a base has no base of its own.

use super::validate::ProfileError;
use toml::{Table, Value};

/// What a base card's profile gives that a card built on it does not take.
const NOT_INHERITED: &[&str] = &["published", "fit"];

/// Tables a card built on a base sets whole where it sets them: its
/// formats are its own capacities, none of the base's kept beside them.
const WHOLE: &[&str] = &["formats"];

/// The base a profile's text names, if it names one.
pub(super) fn base_of(text: &str) -> Option<String> {
    // Most profiles have no base: they are read once, not twice.
    if !text.lines().any(|l| l.trim_start().starts_with("base")) {
        return None;
    }
    let table: Table = text.parse().ok()?;
    table.get("base")?.as_str().map(str::to_string)
}

/// The profile `text` (file `file`) over its base `base`, one of `built_in`
/// (id, text): the merged table, ready to read as a profile.
pub(super) fn on_base(file: &str, text: &str, base: &str, built_in: &[(&str, &str)]) -> Result<Table, ProfileError> {
    let problem = |msg: String| ProfileError::Parse { file: file.to_string(), msg };
    let own: Table = text.parse().map_err(|e: toml::de::Error| problem(e.to_string()))?;
    for key in ["id", "name"] {
        if !own.contains_key(key) {
            return Err(problem(format!("a card built on base '{base}' names itself: '{key}' is missing")));
        }
    }
    let Some((_, base_text)) = built_in.iter().find(|(id, _)| *id == base) else {
        let ids: Vec<&str> = built_in.iter().map(|(id, _)| *id).collect();
        return Err(problem(format!("base = '{base}': not a built-in card (one of {})", ids.join(", "))));
    };
    let mut merged: Table = base_text.parse().map_err(|e: toml::de::Error| problem(format!("base '{base}': {e}")))?;
    if merged.contains_key("base") {
        return Err(problem(format!("base '{base}' is built on a base of its own: build on a card that has none")));
    }
    for key in NOT_INHERITED.iter().chain(WHOLE.iter().filter(|k| own.contains_key(**k))) {
        merged.remove(*key);
    }
    merge(&mut merged, own);
    Ok(merged)
}

/// `over` merged into `into`: tables key by key, other values replaced.
fn merge(into: &mut Table, over: Table) {
    for (key, value) in over {
        match (into.get_mut(&key), value) {
            (Some(Value::Table(inner)), Value::Table(value)) => merge(inner, value),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str =
        "id = \"b\"\nname = \"B\"\nmembers = 2\n[nand]\ncell = \"mlc\"\n[nand.timings]\nread_ns = 1\nprogram_ns = 2\n[[published]]\nwhat = \"x\"\n";

    #[test]
    fn a_card_on_a_base_changes_only_what_it_sets_and_takes_no_figures() {
        let own = "base = \"b\"\nid = \"c\"\nname = \"C\"\nmembers = 1\n[nand.timings]\nread_ns = 5\n";
        let t = on_base("c.toml", own, "b", &[("b", BASE)]).unwrap();
        assert_eq!(t["members"].as_integer(), Some(1));
        assert_eq!(t["nand"]["cell"].as_str(), Some("mlc"), "a table merges");
        assert_eq!(t["nand"]["timings"]["read_ns"].as_integer(), Some(5));
        assert_eq!(t["nand"]["timings"]["program_ns"].as_integer(), Some(2), "a table within a table merges");
        assert!(!t.contains_key("published"), "the base's figures are the base's");
        let base = format!("{BASE}[formats]\nstock = 1\nhp = 2\n");
        let t = on_base("c.toml", &format!("{own}[formats]\nmine = 3\n"), "b", &[("b", &base)]).unwrap();
        assert_eq!(t["formats"].as_table().unwrap().keys().collect::<Vec<_>>(), ["mine"], "formats set whole");
        assert_eq!(base_of(own).as_deref(), Some("b"));
        assert_eq!(base_of(BASE), None);
    }

    #[test]
    fn a_bad_base_is_named() {
        let e = |own: &str, table: &[(&str, &str)]| on_base("c.toml", own, "b", table).unwrap_err().to_string();
        assert!(e("base = \"b\"\nname = \"C\"\n", &[("b", BASE)]).contains("'id' is missing"));
        assert!(e("base = \"b\"\nid = \"c\"\nname = \"C\"\n", &[("a", BASE)]).contains("not a built-in card (one of a)"));
        let chained = format!("base = \"a\"\n{BASE}");
        assert!(e("base = \"b\"\nid = \"c\"\nname = \"C\"\n", &[("b", &chained)]).contains("a base of its own"));
    }
}
