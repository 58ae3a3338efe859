//! What card a store holds (`card.toml` beside its members' files:
//! device, format, scale), so that management tools can open a card at
//! rest without being told, the identify beacon's state (an LED the
//! card keeps lit until told otherwise, served or not), and the age it is
//! served at. Written when a store is first served, when it is formatted
//! anew, when the beacon is switched and when it is served at another
//! age; versioned.

use super::StoreError;
use serde::{Deserialize, Serialize};
use std::path::Path;

const FILE_VERSION: u32 = 1;
const FILE_NAME: &str = "card.toml";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardFile {
    pub version: u32,
    /// The profile's id.
    pub device: String,
    pub format: String,
    pub scale: u32,
    /// The identify beacon (absent in files from before it was kept: off).
    #[serde(default)]
    pub beacon: bool,
    /// The name the card was last served under (its exports are NAME, or
    /// NAME-1 and NAME-2); absent: the device id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The age it is served at (`serve --pe-cycles --age-days`); absent:
    /// new.
    #[serde(default, skip_serializing_if = "crate::Age::is_new")]
    pub age: crate::Age,
}

impl CardFile {
    pub fn new(device: &str, format: &str, scale: u32) -> CardFile {
        CardFile { version: FILE_VERSION, device: device.into(), format: format.into(), scale, beacon: false, name: None, age: crate::Age::default() }
    }

    /// The card of the store in `dir`; none where there is no file.
    pub fn load(dir: &Path) -> Result<Option<CardFile>, StoreError> {
        let card = super::toml_load(dir, FILE_NAME, "card file", |c: &CardFile| c.version, FILE_VERSION)?;
        if let Some(c) = &card {
            c.check().map_err(|why| StoreError::invalid(&dir.join(FILE_NAME), why))?;
        }
        Ok(card)
    }

    /// Whether its fields can name a card: a device and a format named,
    /// a scale of 1 or more (what the device takes is `fits`'s); where
    /// not, the field and why.
    fn check(&self) -> Result<(), &'static str> {
        if self.device.trim().is_empty() {
            return Err("device = \"\": no device named");
        }
        if self.format.trim().is_empty() {
            return Err("format = \"\": no format named");
        }
        if self.scale == 0 {
            return Err("scale = 0: a card's scale is 1 or more");
        }
        Ok(())
    }

    /// Whether `profile` (its device) takes the format and scale it
    /// names; the field named where not (the file in `dir`).
    pub fn fits(&self, dir: &Path, profile: &crate::Profile) -> Result<(), StoreError> {
        let why = match crate::Device::validate(profile, &self.format, self.scale) {
            Err(crate::DeviceError::Scale { max, .. }) => format!("scale = {}: must be in 1..={max} for {}", self.scale, self.device),
            Err(e) => format!("format = \"{}\": {e}", self.format),
            Ok(()) => return Ok(()),
        };
        Err(StoreError::invalid(&dir.join(FILE_NAME), why))
    }

    /// Writes the file whole beside the store.
    pub(crate) fn save(&self, dir: &Path) -> Result<(), StoreError> {
        super::toml_save(dir, FILE_NAME, &toml::to_string(self).expect("a card file serialises"))
    }

    /// The name its exports take: the one it was last served under, else
    /// the device id.
    pub fn export_base(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.device)
    }

    /// The owner string its members' store files carry.
    pub fn owner(&self) -> String {
        format!("{} format {} scale {}", self.device, self.format, self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_file_round_trips_and_refuses_another_version() {
        let d = std::env::temp_dir().join(format!("flashlab-card-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        assert_eq!(CardFile::load(&d), Ok(None));
        let c = CardFile::new("p420m", "stock", 4096);
        c.save(&d).unwrap();
        assert_eq!(CardFile::load(&d), Ok(Some(c.clone())));
        let old = CardFile { age: crate::Age { pe_cycles: 3000, age_days: 120.0 }, ..c };
        old.save(&d).unwrap();
        assert_eq!(CardFile::load(&d), Ok(Some(old)));
        std::fs::write(d.join(FILE_NAME), "version = 7\ndevice = \"p420m\"\nformat = \"stock\"\nscale = 1\n").unwrap();
        assert!(CardFile::load(&d).unwrap_err().to_string().contains("card file version 7"));
        // A file cut short names where; scale 0 is the file's field, not
        // an option the user gave.
        std::fs::write(d.join(FILE_NAME), "version = 1\ndevice = ").unwrap();
        let e = CardFile::load(&d).unwrap_err().to_string();
        assert!(e.contains("line 2, column 10: the file ends there (cut short?)") && !e.contains("()"), "{e}");
        std::fs::write(d.join(FILE_NAME), "version = 1\ndevice = \"p420m\"\nformat = \"stock\"\nscale = 0\n").unwrap();
        assert_eq!(CardFile::load(&d).unwrap_err().to_string(), format!("{}: scale = 0: a card's scale is 1 or more", d.join(FILE_NAME).display()));
        let big = CardFile::new("p420m", "stock", 999_999);
        assert_eq!(
            big.fits(&d, &crate::profile_load("p420m").unwrap()).unwrap_err(),
            StoreError::invalid(&d.join(FILE_NAME), "scale = 999999: must be in 1..=32768 for p420m")
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
