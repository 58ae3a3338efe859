//! A card's store directory as one value: the one reader and writer of the
//! files it keeps beside its page files, and what serving it keeps and
//! asks (`serve_plan`).

use super::StoreError;
use crate::{Age, CardFile, Profile, SmartLog, StoreLock, Volumes};
use std::path::{Path, PathBuf};

/// A card's store directory (`STORE/`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardStore {
    dir: PathBuf,
}

/// What a server asks of a store (`flashlab serve`'s options); what the
/// store keeps decides where it holds a card.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServeAsk {
    pub format: Option<String>,
    pub volumes: Option<u32>,
    pub name: Option<String>,
    pub pe_cycles: Option<u32>,
    pub age_days: Option<f64>,
}

/// How a store is served: the format, volumes, name and age, each the
/// store's where it keeps one, else as asked, else the default.
#[derive(Debug, Clone, PartialEq)]
pub struct ServePlan {
    pub format: String,
    /// The split the store keeps (`None`: `volume_count` new volumes).
    pub volumes: Option<Volumes>,
    pub volume_count: u32,
    /// The export's name: as asked, else the device id.
    pub name: String,
    /// As asked (either option alone keeps the store's other), else the
    /// store's; not checked here (`Age::check`).
    pub age: Age,
    /// The card file as it is kept once served.
    card: CardFile,
    /// Whether the kept card file already says all that.
    card_kept: bool,
}

impl CardStore {
    pub fn at(dir: impl Into<PathBuf>) -> CardStore {
        CardStore { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether it holds a card: its first member's page file is there.
    pub fn holds_card(&self) -> bool {
        super::member_path(&self.dir, 0).exists()
    }

    /// The card it holds, as `card.toml` says; `None` without the file.
    pub fn card(&self) -> Result<Option<CardFile>, StoreError> {
        CardFile::load(&self.dir)
    }

    /// The split it keeps; `None` without `volumes.toml`.
    pub fn volumes(&self) -> Result<Option<Volumes>, StoreError> {
        Volumes::load(&self.dir)
    }

    /// Keeps `volumes` as its split, written whole.
    pub fn volumes_keep(&self, volumes: &Volumes) -> Result<(), StoreError> {
        volumes.save(&self.dir)
    }

    /// Its SMART log as the file says (a new one without the file).
    pub fn smart(&self) -> Result<SmartLog, StoreError> {
        SmartLog::load(&self.dir)
    }

    /// Its SMART log at rest, with the counters its first member's page
    /// file keeps (`SmartLog::at_rest`).
    pub fn smart_at_rest(&self) -> Result<SmartLog, StoreError> {
        SmartLog::at_rest(&self.dir)
    }

    /// Keeps `log` as its SMART log, written whole.
    pub fn smart_keep(&self, log: &SmartLog) -> Result<(), StoreError> {
        log.save(&self.dir)
    }

    /// Keeps the identify beacon on or off in `card.toml` (which must be
    /// there).
    pub fn beacon_keep(&self, on: bool) -> Result<(), StoreError> {
        let no_card = || StoreError::Io { path: self.dir.clone(), reason: "no card.toml (no card here, or one served by an older flashlab)".into() };
        let card = self.card()?.ok_or_else(no_card)?;
        CardFile { beacon: on, ..card }.save(&self.dir)
    }

    /// Keeps `card` (a new format of the card) in `card.toml`, with the
    /// beacon, name and age the store kept: a format does not make the
    /// flash new, nor rename the card.
    pub fn formatted(&self, card: CardFile) -> Result<(), StoreError> {
        let kept = self.card().ok().flatten();
        let (beacon, name, age) = kept.map_or((false, None, Age::default()), |c| (c.beacon, c.name, c.age));
        CardFile { beacon, name, age, ..card }.save(&self.dir)
    }

    /// Takes it for `purpose` (`StoreLock::take`).
    pub fn take(&self, purpose: &str) -> Result<StoreLock, StoreError> {
        StoreLock::take(&self.dir, purpose)
    }

    /// Shares it with other readers (`StoreLock::share`).
    pub fn share(&self) -> Result<StoreLock, StoreError> {
        StoreLock::share(&self.dir)
    }

    /// Who owns it now (`StoreLock::holder`).
    pub fn holder(&self) -> Option<String> {
        StoreLock::holder(&self.dir)
    }

    /// How to serve it as `profile` at `scale` with `ask`: a store that
    /// holds a card keeps its device, scale, format and split (a store of
    /// another device or scale, or asked for another format or split, is
    /// refused by name: `flashlab format` and `flashlab volumes` change
    /// those, every byte lost); a new one takes what is asked.
    pub fn serve_plan(&self, profile: &Profile, scale: u32, ask: &ServeAsk) -> Result<ServePlan, StoreError> {
        let kept = self.card()?;
        let format = self.format_of(profile, scale, ask, kept.as_ref())?;
        let (volumes, volume_count) = self.volumes_of(ask.volumes)?;
        let name = ask.name.clone().unwrap_or_else(|| profile.id.clone());
        let kept_age = kept.as_ref().map(|c| c.age).unwrap_or_default();
        let age = Age { pe_cycles: ask.pe_cycles.unwrap_or(kept_age.pe_cycles), age_days: ask.age_days.unwrap_or(kept_age.age_days) };
        let card_kept = kept.as_ref().is_some_and(|c| c.export_base() == name && c.age == age);
        let base = kept.unwrap_or_else(|| CardFile::new(&profile.id, &format, scale));
        let card = CardFile { name: Some(name.clone()), age, ..base };
        Ok(ServePlan { format, volumes, volume_count, name, age, card, card_kept })
    }

    /// Keeps what serving `plan` on a card of `capacity` bytes decides:
    /// the card file (its name and age) and the split, the one it kept
    /// (checked against the card) or a new one. Returns the split.
    pub fn served(&self, plan: &ServePlan, capacity: u64) -> Result<Volumes, StoreError> {
        if !plan.card_kept {
            plan.card.save(&self.dir)?;
        }
        if let Some(v) = &plan.volumes {
            v.check(capacity).map_err(|e| StoreError::invalid(&self.dir.join("volumes.toml"), e))?;
            return Ok(v.clone());
        }
        let v = Volumes::split(capacity, plan.volume_count)?;
        self.volumes_keep(&v)?;
        Ok(v)
    }

    /// The format to serve: the kept card's, else as asked, else the
    /// device's default.
    fn format_of(&self, profile: &Profile, scale: u32, ask: &ServeAsk, kept: Option<&CardFile>) -> Result<String, StoreError> {
        let Some(c) = kept else { return Ok(ask.format.clone().unwrap_or_else(|| profile.default_format.clone())) };
        if c.device != profile.id || c.scale != scale {
            return Err(StoreError::OtherCard {
                dir: self.dir.clone(),
                device: c.device.clone(),
                scale: c.scale,
                asked: profile.id.clone(),
                asked_scale: scale,
            });
        }
        c.fits(&self.dir, profile)?;
        match &ask.format {
            Some(f) if *f != c.format => Err(StoreError::OtherFormat { dir: self.dir.clone(), format: c.format.clone(), asked: f.clone() }),
            _ => Ok(c.format.clone()),
        }
    }

    /// The split the store keeps (`None` where it keeps none) and the
    /// number of volumes to serve: a new store is split as asked; a card
    /// that holds data is not re-split here, as the volumes' data would
    /// move (a store from before volumes were kept has one).
    fn volumes_of(&self, asked: Option<u32>) -> Result<(Option<Volumes>, u32), StoreError> {
        let kept = self.volumes()?;
        let count = match &kept {
            Some(v) => v.count(),
            None if self.holds_card() => 1,
            None => return Ok((None, asked.unwrap_or(1))),
        };
        match asked.filter(|&n| n != count) {
            Some(n) => Err(StoreError::OtherVolumes { dir: self.dir.clone(), count, asked: n }),
            None => Ok((kept, count)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(tag: &str) -> CardStore {
        let d = std::env::temp_dir().join(format!("flashlab-card-store-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        CardStore::at(d)
    }

    /// A new store takes what is asked; one that holds a card keeps its
    /// device, scale, format, split, name and age where nothing else is
    /// asked, and refuses, by name, another device, scale, format or
    /// split.
    #[test]
    fn a_store_that_holds_a_card_decides_how_it_is_served() {
        let s = store("plan");
        let p = crate::profile_load("flashmax2").unwrap();
        let ask = ServeAsk { format: Some("hp".into()), volumes: Some(2), ..ServeAsk::default() };
        let plan = s.serve_plan(&p, 4096, &ask).unwrap();
        assert_eq!((plan.format.as_str(), plan.volume_count, plan.name.as_str(), plan.volumes.is_none()), ("hp", 2, "flashmax2", true));
        let v = s.served(&plan, 1 << 30).unwrap();
        assert_eq!(v.count(), 2);
        assert_eq!(s.card().unwrap().map(|c| (c.format, c.name)), Some(("hp".to_string(), Some("flashmax2".to_string()))));
        // Served again with nothing asked: as it was left.
        let again = s.serve_plan(&p, 4096, &ServeAsk::default()).unwrap();
        assert_eq!((again.format.as_str(), again.volume_count, again.volumes.as_ref()), ("hp", 2, Some(&v)));
        // An age asked alone keeps the other.
        s.served(&s.serve_plan(&p, 4096, &ServeAsk { pe_cycles: Some(3000), ..ServeAsk::default() }).unwrap(), 1 << 30).unwrap();
        let aged = s.serve_plan(&p, 4096, &ServeAsk { age_days: Some(90.0), ..ServeAsk::default() }).unwrap();
        assert_eq!(aged.age, Age { pe_cycles: 3000, age_days: 90.0 });
        let refused = |ask: ServeAsk, scale: u32, device: &str| s.serve_plan(&crate::profile_load(device).unwrap(), scale, &ask).unwrap_err();
        assert!(matches!(refused(ServeAsk::default(), 1024, "flashmax2"), StoreError::OtherCard { scale: 4096, asked_scale: 1024, .. }));
        assert!(matches!(refused(ServeAsk::default(), 4096, "p420m"), StoreError::OtherCard { .. }));
        let e = refused(ServeAsk { format: Some("stock".into()), ..ServeAsk::default() }, 4096, "flashmax2");
        assert!(e.to_string().contains("--format stock: the card in") && e.to_string().contains("is formatted hp"), "{e}");
        let e = refused(ServeAsk { volumes: Some(1), ..ServeAsk::default() }, 4096, "flashmax2");
        assert!(matches!(e, StoreError::OtherVolumes { count: 2, asked: 1, .. }), "{e}");
        let _ = std::fs::remove_dir_all(s.dir());
    }

    /// A kept split that no longer tiles the card is refused with its
    /// file named; the beacon is kept only where a card is.
    #[test]
    fn a_kept_split_is_checked_and_the_beacon_needs_a_card() {
        let s = store("beacon");
        assert!(s.beacon_keep(true).unwrap_err().to_string().contains("no card.toml"));
        let p = crate::profile_load("p420m").unwrap();
        let plan = s.serve_plan(&p, 4096, &ServeAsk::default()).unwrap();
        s.served(&plan, 1 << 30).unwrap();
        s.beacon_keep(true).unwrap();
        assert!(s.card().unwrap().unwrap().beacon);
        let plan = s.serve_plan(&p, 4096, &ServeAsk::default()).unwrap();
        let e = s.served(&plan, 2 << 30).unwrap_err();
        assert!(matches!(&e, StoreError::Invalid { path, .. } if path.ends_with("volumes.toml")), "{e}");
        s.formatted(CardFile::new("p420m", "stock", 4096)).unwrap();
        assert!(s.card().unwrap().unwrap().beacon, "a format keeps the beacon");
        let _ = std::fs::remove_dir_all(s.dir());
    }
}
