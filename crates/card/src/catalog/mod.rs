//! The catalog: what a card is. Its profiles (one TOML file a card,
//! embedded from `devices/`, or a user's own), the figures published for
//! it, which of its numbers were fitted and within which bounds, and how a
//! card is scaled; and the hosts a card runs on (`hosts/`).

mod base;
pub(crate) mod fitted;
pub mod host;
pub(crate) mod profile;
pub mod published;
pub mod scale;
mod validate;

use profile::{Profile, ProfileError};

/// The built-in catalog, embedded from `devices/`.
pub const CATALOG: &[(&str, &str)] = &[
    ("flashmax2", include_str!("../../../../devices/flashmax2.toml")),
    ("iodrive2-duo", include_str!("../../../../devices/iodrive2-duo.toml")),
    ("p420m", include_str!("../../../../devices/p420m.toml")),
    ("mx6300", include_str!("../../../../devices/mx6300.toml")),
    ("iodrive2-1200", include_str!("../../../../devices/iodrive2-1200.toml")),
    ("p320h", include_str!("../../../../devices/p320h.toml")),
];

/// The device the README's first command reviews.
pub const DEFAULT_DEVICE: &str = "flashmax2";

/// Every catalog profile, parsed and checked.
pub fn catalog() -> Result<Vec<Profile>, ProfileError> {
    CATALOG.iter().map(|(id, text)| Profile::parse(&format!("devices/{id}.toml"), text)).collect()
}

/// A device by catalog id, or a profile file by path.
pub fn profile_load(name: &str) -> Result<Profile, ProfileError> {
    built_in_or_file(name, CATALOG, "devices", Profile::parse, |expected| ProfileError::Unknown { name: name.to_string(), expected })
}

/// `name` from a built-in table (embedded from `dir/`) by id, or a file
/// by path, parsed with `parse`; neither: `unknown` of the table's ids.
pub(crate) fn built_in_or_file<T>(
    name: &str,
    table: &[(&str, &str)],
    dir: &str,
    parse: impl Fn(&str, &str) -> Result<T, ProfileError>,
    unknown: impl FnOnce(String) -> ProfileError,
) -> Result<T, ProfileError> {
    if let Some((id, text)) = table.iter().find(|(id, _)| *id == name) {
        return parse(&format!("{dir}/{id}.toml"), text);
    }
    if name.ends_with(".toml") || std::path::Path::new(name).exists() {
        let text = crate::input::read_text(std::path::Path::new(name), crate::input::SMALL_BYTES_MAX)
            .map_err(|e| ProfileError::Unreadable { name: name.to_string(), why: e.to_string() })?;
        return parse(name, &text);
    }
    Err(unknown(table.iter().map(|(id, _)| *id).collect::<Vec<_>>().join(", ")))
}
