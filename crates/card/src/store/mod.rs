//! What a card keeps in its store directory (`STORE/`) beside its
//! members' page files (`member-<i>.flash`, `nand::PageStore`): which card
//! it is (`card.toml`), how its space is presented (`volumes.toml`), its
//! SMART log (`smart.toml`), each member's clean-shutdown checkpoint and
//! the lock that lets one process at a time own it. Every file is written
//! whole and versioned; what goes wrong is a [`StoreError`] naming the
//! file.

pub(crate) mod card_file;
pub(crate) mod card_store;
pub(crate) mod checkpoint;
pub(crate) mod lock;
pub(crate) mod smart;
pub(crate) mod volumes;

use std::path::{Path, PathBuf};

/// What goes wrong with a card's store directory; each names its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// A file that cannot be read, written, opened or locked.
    #[error("{}: {reason}", path.display())]
    Io { path: PathBuf, reason: String },
    /// A file whose contents this build does not take: another version,
    /// not TOML, cut short, a field out of range.
    #[error("{}: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
    /// Another process owns the store (or reads it at rest).
    #[error("{}: the card is in use by {holder}: one process at a time owns a store; stop it first", dir.display())]
    InUse { dir: PathBuf, holder: String },
    /// Volumes that do not tile the card.
    #[error(transparent)]
    Volumes(#[from] volumes::VolumesError),
    /// Served as another device or scale than the card it holds.
    #[error("the card in {} is a {device} at scale {scale}, not a {asked} at scale {asked_scale}: serve it as it is, or use another --store", dir.display())]
    OtherCard { dir: PathBuf, device: String, scale: u32, asked: String, asked_scale: u32 },
    /// Asked for another format than the card's (a format erases it).
    #[error("--format {asked}: the card in {d} is formatted {format}; serve it as it is (without --format), or format it anew (every byte lost): flashlab format --store {d} --format {asked} --force", d = dir.display())]
    OtherFormat { dir: PathBuf, format: String, asked: String },
    /// Asked for another split than the card's (its volumes' data would
    /// move).
    #[error("--volumes {asked}: the card in {d} is served as {count} volume{}; splitting or merging a card that holds data would move each volume's data (serve it with --volumes {count}, or re-split it, every byte lost: flashlab volumes {d} --split|--merge --force)", if *count == 1 { "" } else { "s" }, d = dir.display())]
    OtherVolumes { dir: PathBuf, count: u32, asked: u32 },
}

impl StoreError {
    /// `path` could not be read, written, opened or locked (`why`).
    pub(crate) fn io(path: &Path, why: impl std::fmt::Display) -> StoreError {
        StoreError::Io { path: path.to_path_buf(), reason: why.to_string() }
    }

    /// `path` holds what this build does not take (`why`).
    pub(crate) fn invalid(path: &Path, why: impl std::fmt::Display) -> StoreError {
        StoreError::Invalid { path: path.to_path_buf(), reason: why.to_string() }
    }
}

/// Member `member`'s page file in the store directory `dir`.
pub(crate) fn member_path(dir: &Path, member: usize) -> PathBuf {
    dir.join(format!("member-{member}.flash"))
}

/// A versioned TOML file `name` of the store's directory (`what` names its
/// kind in errors): none where there is no file; one that does not parse,
/// or whose `version` is not `expected`, is refused by name.
pub(crate) fn toml_load<T: serde::de::DeserializeOwned>(
    dir: &Path,
    name: &str,
    what: &str,
    version: impl Fn(&T) -> u32,
    expected: u32,
) -> Result<Option<T>, StoreError> {
    let path = dir.join(name);
    let text = match crate::input::read_text(&path, crate::input::SMALL_BYTES_MAX) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(&path, e)),
    };
    let v: T =
        toml::from_str(&text).map_err(|e| StoreError::invalid(&path, format!("not a {what} this flashlab reads ({})", crate::input::toml_why(&text, &e))))?;
    let found = version(&v);
    if found != expected {
        return Err(StoreError::invalid(&path, format!("{what} version {found}; this flashlab reads version {expected}")));
    }
    Ok(Some(v))
}

/// Writes `text` whole as `name` in the store's directory.
pub(crate) fn toml_save(dir: &Path, name: &str, text: &str) -> Result<(), StoreError> {
    let path = dir.join(name);
    crate::output::write_whole(&path, text.as_bytes()).map_err(|e| StoreError::io(&path, e))
}
