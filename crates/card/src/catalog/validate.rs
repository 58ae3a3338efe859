//! A profile checked: every field against its physical range and the
//! others it must agree with, and on the host it runs on; the first
//! problem found is named with its field and the range allowed.

use super::profile::{Management, Profile};
use units::{NS_PER_MS, NS_PER_SEC};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("profile {file}: {msg}")]
    Parse { file: String, msg: String },
    #[error("profile {id}: {field} = {value}: must be {range}")]
    Field { id: String, field: String, value: String, range: String },
    #[error("profile {id}: {msg}")]
    Inconsistent { id: String, msg: String },
    #[error("cannot read profile {name}: {why}")]
    Unreadable { name: String, why: String },
    #[error("unknown device '{name}': expected one of {expected} or a profile file ending in .toml")]
    Unknown { name: String, expected: String },
    #[error("unknown host '{name}': expected one of {expected} or a host file ending in .toml")]
    UnknownHost { name: String, expected: String },
}

impl Profile {
    fn field<T: std::fmt::Display>(&self, field: &str, value: T, range: &str) -> ProfileError {
        ProfileError::Field { id: self.id.clone(), field: field.to_string(), value: value.to_string(), range: range.to_string() }
    }

    /// `value` within `range`, else an error naming the field and `allowed`.
    fn within<T: PartialOrd + std::fmt::Display>(&self, field: &str, value: T, range: std::ops::RangeInclusive<T>, allowed: &str) -> Result<(), ProfileError> {
        if range.contains(&value) {
            Ok(())
        } else {
            Err(self.field(field, value, allowed))
        }
    }

    /// Every field checked against its physical range and the others it
    /// must agree with; the first problem is named.
    pub fn validate(&self) -> Result<(), ProfileError> {
        self.validate_id()?;
        let g = &self.nand.geometry();
        g.validate().map_err(|e| ProfileError::Inconsistent { id: self.id.clone(), msg: format!("nand.{e}") })?;
        self.nand.timings().validate().map_err(|e| ProfileError::Inconsistent { id: self.id.clone(), msg: format!("nand.{e}") })?;
        self.validate_controller()?;
        self.validate_host()?;
        self.validate_ftl()?;
        self.validate_formats()?;
        if let Some(p) = &self.power {
            self.within("power.idle_watts", p.idle_watts, 0.1..=1000.0, "in 0.1..=1000 W")?;
            self.within("power.max_watts", p.max_watts, p.idle_watts..=1000.0, &format!("in {}..=1000 W (at least the idle draw)", p.idle_watts))?;
        }
        if let Some(b) = &self.bridge {
            self.within("bridge.commands_per_sec", b.commands_per_sec, 1_000..=100_000_000, "in 1,000..=100,000,000")?;
            self.within("bridge.bytes_per_sec", b.bytes_per_sec, 1_000_000..=1_000_000_000_000, "in 1 MB/s..=1 TB/s")?;
        }
        if let Some(h) = self.precondition_hours {
            if !(h.is_finite() && h > 0.0 && h <= 1000.0) {
                return Err(self.field("precondition_hours", h, "in (0, 1000]"));
            }
        }
        for f in &self.fit {
            f.check(self).map_err(|msg| ProfileError::Inconsistent { id: self.id.clone(), msg: msg.to_string() })?;
        }
        self.validate_published()
    }

    fn validate_id(&self) -> Result<(), ProfileError> {
        let id = &self.id;
        let id_ok = (1..=40).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') && !id.starts_with('-');
        if id_ok {
            return Ok(());
        }
        Err(ProfileError::Inconsistent {
            id: id.clone(),
            msg: "id: must be 1 to 40 letters, digits, '-' or '_', not starting with '-' (it names result files and report rows)".into(),
        })
    }

    fn validate_controller(&self) -> Result<(), ProfileError> {
        let g = self.nand.geometry();
        self.within("members", self.members, 1..=16, "in 1..=16")?;
        if self.members > 1 {
            self.within("member_stripe_kib", self.member_stripe_kib, 4..=65536, "in 4..=65536 when members > 1")?;
        }
        let c = &self.controller;
        if c.count == 0 || !g.channels.is_multiple_of(c.count) {
            return Err(self.field("controller.count", c.count, &format!("at least 1 and divide nand.channels ({})", g.channels)));
        }
        self.within("controller.read_commands_per_sec", c.read_commands_per_sec, 1_000..=100_000_000, "in 1000..=100000000")?;
        self.within("controller.write_commands_per_sec", c.write_commands_per_sec, 1_000..=100_000_000, "in 1000..=100000000")?;
        for (k, v) in [
            ("controller.program_path_bytes_per_sec", c.program_path_bytes_per_sec),
            ("controller.read_path_bytes_per_sec", c.read_path_bytes_per_sec),
            ("controller.link_bytes_per_sec", c.link_bytes_per_sec),
        ] {
            self.within(k, v, 1_000_000..=1_000_000_000_000, "in 1 MB/s..=1 TB/s")?;
        }
        self.within("controller.io_overhead_ns", c.io_overhead_ns, 0..=10_000_000, "at most 10 ms")?;
        if let Some(n) = c.read_slots {
            self.within("controller.read_slots", n, 1..=1 << 16, "in 1..=65536")?;
        }
        if c.lockstep_banks && (self.ftl.stripe_width != g.channels || g.channels < 2) {
            let msg =
                format!("equal to nand.channels ({}) when controller.lockstep_banks is set: a bank is one die on each channel, its parity stripe", g.channels);
            return Err(self.field("ftl.stripe_width", self.ftl.stripe_width, &msg));
        }
        let cw = self.nand.codeword_bytes;
        if !(512..=4096).contains(&cw) || !cw.is_power_of_two() {
            return Err(self.field("nand.codeword_bytes", cw, "a power of two in 512..=4096"));
        }
        if let Some(Err((name, value, range))) = self.nand.errors.as_ref().map(|e| e.check()) {
            return Err(self.field(&format!("nand.errors.{name}"), value, range));
        }
        if let Some(Err((name, value, range))) = self.nand.endurance.as_ref().map(|e| e.check()) {
            return Err(self.field(&format!("nand.endurance.{name}"), value, range));
        }
        Ok(())
    }

    fn validate_host(&self) -> Result<(), ProfileError> {
        let h = &self.host;
        for (k, v) in [("host.cpu_ns_per_io", h.cpu_ns_per_io), ("host.cpu_ns_per_slot", h.cpu_ns_per_slot)] {
            self.within(k, v, 0..=10_000_000, "at most 10 ms")?;
        }
        let most = h.cpu_ns_per_io;
        self.within(
            "host.read_completion_ns",
            h.read_completion_ns,
            0..=most,
            &format!("at most host.cpu_ns_per_io ({most} ns): a part of the driver's time for a read"),
        )?;
        if let Some(n) = h.command_slots {
            self.within("host.command_slots", n, 1..=1 << 20, "in 1..=1048576")?;
        }
        if let Some(n) = h.interrupt_vectors {
            self.within("host.interrupt_vectors", n, 1..=4096, "in 1..=4096 (a host takes each on one of its cores, at most one a core)")?;
        }
        Ok(())
    }

    fn validate_ftl(&self) -> Result<(), ProfileError> {
        let (g, f) = (self.nand.geometry(), &self.ftl);
        if f.stripe_width == 0 || !g.dies().is_multiple_of(f.stripe_width) {
            return Err(self.field("ftl.stripe_width", f.stripe_width, &format!("at least 1 and divide the {} dies of a member", g.dies())));
        }
        let sb_max = g.blocks_per_plane / 4;
        if sb_max == 0 {
            let msg = "at least 4: the FTL needs superblocks (a block of each plane), a reserve of at least one and at most a quarter of them";
            return Err(self.field("nand.geometry.blocks_per_plane", g.blocks_per_plane, msg));
        }
        if let Some(spread) = f.wear_spread_max {
            let allowed = "in 1..=65536 erase cycles (how far superblocks' wear may spread before static wear leveling moves cold data; leave it out for none)";
            self.within("ftl.wear_spread_max", spread, 1..=65_536, allowed)?;
        }
        self.within("ftl.reserve_superblocks", f.reserve_superblocks, 1..=sb_max, &format!("in 1..={sb_max}"))?;
        let bg_max = sb_max - f.reserve_superblocks;
        self.within(
            "ftl.gc_background_superblocks",
            f.gc_background_superblocks,
            0..=bg_max,
            &format!("in 0..={bg_max} (with the reserve, at most a quarter of the superblocks)"),
        )?;
        self.within("ftl.gc_background_share", f.gc_background_share, 0.0..=0.9, "in 0..=0.9")?;
        if f.gc_background_share > 0.0 && f.gc_background_superblocks == 0 {
            let msg = "0 without ftl.gc_background_superblocks (the free pool background GC collects up to)";
            return Err(self.field("ftl.gc_background_share", f.gc_background_share, msg));
        }
        let buffer_min = self.write_buffer_floor();
        let buffer_max = 64u64 << 30;
        self.within(
            "ftl.write_buffer_bytes",
            f.write_buffer_bytes,
            buffer_min..=buffer_max,
            &format!("in {buffer_min}..={buffer_max} (two stripes of pages at least)"),
        )?;
        self.within("ftl.gc_threads", f.gc_threads, 1..=64, "in 1..=64")?;
        if self.management == Management::Host && self.host_gc_threads() >= self.platform.cores() {
            let msg = format!(
                "a host-managed card's GC threads run on host cores of their own: {} of them leave none of the {} cores of host {} for host I/O",
                self.host_gc_threads(),
                self.platform.cores(),
                self.platform.id
            );
            return Err(self.field("ftl.gc_threads", f.gc_threads, &msg));
        }
        self.within("ftl.gc_ns_per_slot", f.gc_ns_per_slot, 0..=1_000_000, "at most 1 ms")?;
        self.within("ftl.map_ns_per_page", f.map_ns_per_page, 0..=1_000_000, "at most 1 ms")?;
        self.within("ftl.write_ns_per_slot", f.write_ns_per_slot, 0..=1_000_000, "at most 1 ms")?;
        self.within("ftl.map_checkpoint_ns_per_page", f.map_checkpoint_ns_per_page, 0..=1_000_000, "at most 1 ms")?;
        match f.map_checkpoint_interval_ns {
            Some(i) => self.within("ftl.map_checkpoint_interval_ns", i, NS_PER_MS..=3_600 * NS_PER_SEC, "from 1 ms to an hour")?,
            None if f.map_checkpoint_ns_per_page > 0 => {
                let msg = "set without ftl.map_checkpoint_interval_ns (how often the map is checkpointed)";
                return Err(self.field("ftl.map_checkpoint_ns_per_page", f.map_checkpoint_ns_per_page, msg));
            }
            None => {}
        }
        self.within("ftl.write_hold_erase_blocks", f.write_hold_erase_blocks, 0..=64, "in 0..=64")?;
        if f.write_hold_erase_blocks > 0 && self.management != Management::Host {
            let msg = "a host driver's hold on writes against its groomer: a card-managed card's writes are paced by its buffer (management = \"host\" only)";
            return Err(self.field("ftl.write_hold_erase_blocks", f.write_hold_erase_blocks, msg));
        }
        self.within("ftl.rebuild_bytes_per_sec", f.rebuild_bytes_per_sec, 1_000_000..=100_000_000_000, "in 1 MB/s..=100 GB/s")
    }

    fn validate_formats(&self) -> Result<(), ProfileError> {
        if self.formats.is_empty() {
            return Err(ProfileError::Inconsistent { id: self.id.clone(), msg: "formats: at least one format is needed".into() });
        }
        if !self.formats.contains_key(&self.default_format) {
            return Err(self.field("default_format", &self.default_format, &format!("one of the formats ({})", self.format_names().join(", "))));
        }
        // The most a format may expose: what the FTL can hold at full size.
        let (raw, max) = (self.raw_bytes(), self.usable_bytes_max());
        for (name, &usable) in &self.formats {
            let allowed = format!("in 1..={max} bytes: the raw {raw} bytes less parity (1/{}), the GC reserve and the open superblocks", self.ftl.stripe_width);
            self.within(&format!("formats.{name}"), usable, 1..=max, &allowed)?;
        }
        Ok(())
    }

    fn validate_published(&self) -> Result<(), ProfileError> {
        for (k, p) in self.published.iter().enumerate() {
            let format = p.format_or(&self.default_format);
            if !self.formats.contains_key(format) {
                return Err(self.field(&format!("published[{k}].format"), format, &format!("one of the formats ({})", self.format_names().join(", "))));
            }
            p.validate().map_err(|(field, value, range)| self.field(&format!("published[{k}] ('{}').{field}", p.what), value, &range))?;
        }
        Ok(())
    }
}
