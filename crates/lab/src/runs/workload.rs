//! Workload profiles: a read share and a transfer-size mix, random offsets
//! over the whole device (StorageReview.com's enterprise test procedure), and user-defined mixes.

use serde::{Deserialize, Serialize};
use sim::{Io, Rng, Workload};

/// A read/write share and a transfer-size mix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mix {
    pub name: String,
    /// Reads in parts per million of I/Os.
    pub read_ppm: u32,
    /// (transfer bytes, share in parts per million), shares summing to 1e6.
    pub sizes: Vec<(u32, u32)>,
    /// Sequential offsets (one stream over the device, wrapping at its end)
    /// instead of random ones.
    #[serde(default)]
    pub sequential: bool,
}

/// The named profiles of the reviewers' procedure (StorageReview.com's enterprise test procedure).
pub const NAMED: &[(&str, &str, &str)] = &[
    ("4k-read", "read=100;bs=4k/100", "4K random read"),
    ("4k-write", "read=0;bs=4k/100", "4K random write"),
    ("8k-7030", "read=70;bs=8k/100", "8K random, 70% read"),
    ("fileserver", "read=80;bs=512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10", "File Server (iometer's mix), 80% read"),
    ("webserver", "read=100;bs=512/22:1k/15:2k/8:4k/23:8k/15:16k/2:32k/6:64k/7:128k/1:512k/1", "Web Server, 100% read"),
    ("webserver-write", "read=0;bs=512/22:1k/15:2k/8:4k/23:8k/15:16k/2:32k/6:64k/7:128k/1:512k/1", "Web Server sizes at 100% write (its preconditioning)"),
    ("128k-seq-read", "read=100;bs=128k/100;pattern=seq", "128K sequential read"),
    ("128k-seq-write", "read=0;bs=128k/100;pattern=seq", "128K sequential write"),
    ("64k-seq-read", "read=100;bs=64k/100;pattern=seq", "64K sequential read"),
    ("64k-seq-write", "read=0;bs=64k/100;pattern=seq", "64K sequential write"),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    #[error("unknown workload '{0}': expected one of 4k-read, 4k-write, 8k-7030, fileserver, webserver, webserver-write, 128k-seq-read, 128k-seq-write, 64k-seq-read, 64k-seq-write, or a mix such as 'read=70;bs=4k/60:64k/40'")]
    Unknown(String),
    #[error("workload '{spec}': {why}")]
    Bad { spec: String, why: MixFault },
}

/// What is wrong with a mix as written: a part, a key or a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MixFault {
    #[error("'{0}' is not key=value")]
    NotKeyValue(String),
    #[error("unknown key '{0}': expected read (or rwmixread, rwmixwrite), bs (or bssplit), pattern or rw")]
    UnknownKey(String),
    #[error("'{key}' sets the {concept} that '{first}' already set: give it once")]
    Twice { key: String, concept: &'static str, first: String },
    #[error("{key} = '{value}': must be a percentage in 0..=100")]
    Percent { key: String, value: String },
    #[error("pattern = '{0}': must be seq or rand")]
    Pattern(String),
    #[error("rw = '{0}': must be read, write, randread, randwrite, rw or randrw")]
    Rw(String),
    #[error("bs entry '{0}' is not SIZE/PERCENT")]
    Entry(String),
    #[error("transfer size '{0}' is not a size")]
    NotSize(String),
    #[error("transfer size {0} B: must be a whole number of 512-byte sectors, at most 16 MiB")]
    SizeRange(u32),
    #[error("share '{share}' of {size}: must be a percentage in 0..=100")]
    Share { share: String, size: String },
    #[error("transfer size {0} is listed twice")]
    SizeTwice(String),
    #[error("missing read=PERCENT (or rwmixread=, or rw=)")]
    NoRead,
    #[error("missing bs=SIZE or bs=SIZE/PERCENT:...")]
    NoSizes,
    #[error("transfer-size shares sum to {}%, not 100%", *.0 as f64 / 10_000.0)]
    Sum(u64),
}

fn size_parse(s: &str) -> Option<u32> {
    let s = s.trim().to_ascii_lowercase();
    let (num, mult) = if let Some(n) = s.strip_suffix('k') {
        (n, 1024)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 1024 * 1024)
    } else {
        (s.as_str(), 1)
    };
    num.parse::<u32>().ok()?.checked_mul(mult)
}

/// A percentage with up to four decimals, in parts per million.
fn pct_parse(s: &str) -> Option<u32> {
    let v: f64 = s.trim().parse().ok()?;
    (v.is_finite() && (0.0..=100.0).contains(&v)).then(|| (v * 10_000.0).round() as u32)
}

/// What a key of a mix sets (fio's names are accepted beside flashlab's):
/// each of the read share, the sizes and the pattern is given once.
fn key_sets(key: &str) -> Option<&'static [&'static str]> {
    Some(match key {
        "read" | "rwmixread" | "rwmixwrite" => &["read share"],
        "bs" | "bssplit" => &["sizes"],
        "pattern" => &["pattern"],
        "rw" | "readwrite" => &["read share", "pattern"],
        _ => return None,
    })
}

/// The keys of a mix as given, before they are checked together.
#[derive(Default)]
struct MixKeys {
    read_ppm: Option<u32>,
    sizes: Vec<(u32, u32)>,
    sequential: bool,
}

impl MixKeys {
    fn set(&mut self, k: &str, v: &str) -> Result<(), MixFault> {
        let pct = |v: &str| pct_parse(v).ok_or_else(|| MixFault::Percent { key: k.to_string(), value: v.to_string() });
        match k {
            "read" | "rwmixread" => self.read_ppm = Some(pct(v)?),
            "rwmixwrite" => self.read_ppm = Some(1_000_000 - pct(v)?),
            "pattern" => self.sequential = pattern_parse(v)?,
            "rw" | "readwrite" => (self.read_ppm, self.sequential) = rw_parse(v)?,
            _ => self.sizes = sizes_parse(v)?,
        }
        Ok(())
    }

    fn into_mix(self, spec: &str) -> Result<Mix, MixFault> {
        let read_ppm = self.read_ppm.ok_or(MixFault::NoRead)?;
        if self.sizes.is_empty() {
            return Err(MixFault::NoSizes);
        }
        let total: u64 = self.sizes.iter().map(|&(_, p)| p as u64).sum();
        if total != 1_000_000 {
            return Err(MixFault::Sum(total));
        }
        Ok(Mix { name: spec.to_string(), read_ppm, sizes: self.sizes, sequential: self.sequential })
    }
}

fn pattern_parse(v: &str) -> Result<bool, MixFault> {
    match v {
        "seq" | "sequential" => Ok(true),
        "rand" | "random" => Ok(false),
        other => Err(MixFault::Pattern(other.to_string())),
    }
}

/// fio's `rw=`: the read share and the pattern (the mixed ones at 50%, fio's
/// default share).
fn rw_parse(v: &str) -> Result<(Option<u32>, bool), MixFault> {
    Ok(match v {
        "read" => (Some(1_000_000), true),
        "write" => (Some(0), true),
        "randread" => (Some(1_000_000), false),
        "randwrite" => (Some(0), false),
        "rw" | "readwrite" => (Some(500_000), true),
        "randrw" => (Some(500_000), false),
        other => return Err(MixFault::Rw(other.to_string())),
    })
}

/// `SIZE` (all I/O one size) or `SIZE/PERCENT:SIZE/PERCENT...`.
fn sizes_parse(v: &str) -> Result<Vec<(u32, u32)>, MixFault> {
    let mut sizes = Vec::new();
    for item in v.split(':') {
        let (sz, pct) = match item.split_once('/') {
            Some((sz, pct)) => (sz, Some(pct)),
            None if !v.contains(':') => (item, None),
            None => return Err(MixFault::Entry(item.to_string())),
        };
        let bytes = size_parse(sz).ok_or_else(|| MixFault::NotSize(sz.to_string()))?;
        if bytes == 0 || bytes % 512 != 0 || bytes > 16 << 20 {
            return Err(MixFault::SizeRange(bytes));
        }
        let p = match pct {
            Some(pct) => pct_parse(pct).ok_or_else(|| MixFault::Share { share: pct.to_string(), size: sz.to_string() })?,
            None => 1_000_000,
        };
        if sizes.iter().any(|&(b, _)| b == bytes) {
            return Err(MixFault::SizeTwice(sz.to_string()));
        }
        sizes.push((bytes, p));
    }
    Ok(sizes)
}

/// A transfer size as fio writes it (`4k`, `1m`, `512`).
pub fn fio_size(bytes: u32) -> String {
    if bytes.is_multiple_of(1024 * 1024) {
        format!("{}m", bytes / (1024 * 1024))
    } else if bytes.is_multiple_of(1024) {
        format!("{}k", bytes / 1024)
    } else {
        bytes.to_string()
    }
}

impl Mix {
    /// The mix as fio options: rw, rwmixread, and bs or bssplit. fio takes
    /// whole percentages; a mix with fractions is rounded by largest
    /// remainder, so that the shares still sum to 100.
    pub fn fio_options(&self) -> Vec<(&'static str, String)> {
        let rw = if self.sequential { "rw" } else { "randrw" };
        let mut o = vec![("rw", rw.to_string()), ("rwmixread", ((self.read_ppm as f64 / 10_000.0).round() as u32).to_string())];
        if self.sizes.len() == 1 {
            o.push(("bs", fio_size(self.sizes[0].0)));
            return o;
        }
        // Largest remainders: whole percentages that still sum to 100.
        let mut pct: Vec<(u32, u32)> = self.sizes.iter().map(|&(b, p)| (b, p / 10_000)).collect();
        let mut order: Vec<usize> = (0..self.sizes.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.sizes[i].1 % 10_000));
        let missing = 100u32.saturating_sub(pct.iter().map(|p| p.1).sum());
        for &i in order.iter().take(missing as usize) {
            pct[i].1 += 1;
        }
        let parts: Vec<String> = pct.iter().filter(|p| p.1 > 0).map(|&(b, p)| format!("{}/{}", fio_size(b), p)).collect();
        o.push(("bssplit", parts.join(":")));
        o
    }

    /// fio's `numjobs` and `iodepth` for the mix at `threads` x
    /// `queue_depth`. A sequential mix is one stream over the device (as
    /// the simulated host runs it), so one fio job carries every I/O in
    /// flight; fio's jobs would each stream from the start on their own.
    pub fn fio_jobs(&self, threads: u32, queue_depth: u32) -> (u32, u32) {
        if self.sequential {
            (1, threads * queue_depth)
        } else {
            (threads, queue_depth)
        }
    }

    /// A named profile, or a mix `read=PCT;bs=SIZE/PCT:SIZE/PCT...` with
    /// sizes in bytes or with k/m suffixes, whole 512-byte sectors, and
    /// shares that sum to 100.
    pub fn parse(spec: &str) -> Result<Mix, WorkloadError> {
        if let Some((name, text, _)) = NAMED.iter().find(|(n, _, _)| *n == spec) {
            let mut m = Mix::parse_spec(text).expect("built-in mixes parse");
            m.name = name.to_string();
            return Ok(m);
        }
        if !spec.contains('=') {
            return Err(WorkloadError::Unknown(spec.to_string()));
        }
        Mix::parse_spec(spec)
    }

    fn parse_spec(spec: &str) -> Result<Mix, WorkloadError> {
        let bad = |why: MixFault| WorkloadError::Bad { spec: spec.to_string(), why };
        let mut keys = MixKeys::default();
        let mut given: Vec<(&str, &str)> = Vec::new();
        for part in spec.split(';').filter(|p| !p.trim().is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| bad(MixFault::NotKeyValue(part.to_string())))?;
            let (k, v) = (k.trim(), v.trim());
            let sets = key_sets(k).ok_or_else(|| bad(MixFault::UnknownKey(k.to_string())))?;
            for concept in sets {
                if let Some((first, _)) = given.iter().find(|(_, c)| c == concept) {
                    return Err(bad(MixFault::Twice { key: k.to_string(), concept, first: first.to_string() }));
                }
                given.push((k, concept));
            }
            keys.set(k, v).map_err(bad)?;
        }
        keys.into_mix(spec).map_err(bad)
    }

    /// The workload the reviewers precondition with before this one.
    pub fn preconditioner(&self) -> Mix {
        match self.name.as_str() {
            "4k-read" | "4k-write" => Mix::parse("4k-write").unwrap(),
            "webserver" => Mix::parse("webserver-write").unwrap(),
            _ if self.read_ppm == 1_000_000 => {
                Mix { name: format!("{} at 100% write", self.name), read_ppm: 0, sizes: self.sizes.clone(), sequential: self.sequential }
            }
            _ => self.clone(),
        }
    }

    /// Share of I/Os that write.
    pub fn write_share(&self) -> f64 {
        1.0 - self.read_ppm as f64 / 1e6
    }
    /// Mean transfer size in bytes.
    pub fn mean_bytes(&self) -> f64 {
        self.sizes.iter().map(|&(b, ppm)| b as f64 * ppm as f64 / 1e6).sum()
    }
    pub fn min_bytes(&self) -> u32 {
        self.sizes.iter().map(|&(b, _)| b).min().unwrap_or(4096)
    }
    pub fn max_bytes(&self) -> u32 {
        self.sizes.iter().map(|&(b, _)| b).max().unwrap_or(4096)
    }
}

/// Random I/O over a device of `capacity` bytes. Offsets are aligned to the
/// mix's smallest transfer size, as fio aligns random offsets to its minimum
/// block size: in the File Server mix most 4 KiB writes are not 4 KiB
/// aligned, and a 4 KiB-mapped FTL pays a read-modify-write for them.
pub struct MixGen {
    read_ppm: u32,
    /// (bytes, cumulative ppm, aligned offsets it can start at).
    cumulative: Vec<(u32, u32, u64)>,
    align: u64,
    /// The next offset of a sequential stream.
    cursor: Option<u64>,
    capacity: u64,
}

impl MixGen {
    pub fn new(mix: &Mix, capacity_bytes: u64) -> MixGen {
        let mut acc = 0;
        let align = mix.min_bytes() as u64;
        let cumulative = mix
            .sizes
            .iter()
            .filter(|&&(_, p)| p > 0)
            .map(|&(b, p)| {
                acc += p;
                let len = (b as u64).min(capacity_bytes);
                (len as u32, acc, (capacity_bytes - len) / align + 1)
            })
            .collect();
        MixGen { read_ppm: mix.read_ppm, cumulative, align, cursor: mix.sequential.then_some(0), capacity: capacity_bytes }
    }
}

impl Workload for MixGen {
    #[inline]
    fn next_io(&mut self, rng: &mut Rng) -> Io {
        let write = if self.read_ppm == 1_000_000 {
            false
        } else if self.read_ppm == 0 {
            true
        } else {
            rng.ppm() >= self.read_ppm
        };
        let (len, _, positions) = if self.cumulative.len() == 1 {
            self.cumulative[0]
        } else {
            let x = rng.ppm();
            self.cumulative.iter().find(|&&(_, c, _)| x < c).copied().unwrap_or(self.cumulative[0])
        };
        let offset_bytes = match self.cursor {
            None => rng.below(positions) * self.align,
            Some(c) => {
                let at = if c + len as u64 > self.capacity { 0 } else { c };
                self.cursor = Some(at + len as u64);
                at
            }
        };
        Io { offset_bytes, len_bytes: len, write }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_lists_every_named_workload() {
        let msg = WorkloadError::Unknown("x".into()).to_string();
        for (name, text, _) in NAMED {
            assert!(msg.contains(&format!(" {name},")), "{name} missing from: {msg}");
            assert!(Mix::parse(text).is_ok(), "{name}");
        }
        let seq = Mix::parse("64k-seq-write").unwrap();
        assert!(seq.sequential && seq.read_ppm == 0 && seq.sizes == vec![(65536, 1_000_000)]);
    }

    #[test]
    fn named_profiles_match_the_methodology() {
        let fs = Mix::parse("fileserver").unwrap();
        assert_eq!(fs.read_ppm, 800_000);
        assert_eq!(fs.sizes.len(), 8);
        assert_eq!(fs.min_bytes(), 512);
        let ws = Mix::parse("webserver").unwrap();
        assert_eq!(ws.preconditioner().name, "webserver-write");
        assert_eq!(ws.max_bytes(), 512 * 1024);
        assert_eq!(Mix::parse("4k-read").unwrap().preconditioner().name, "4k-write");
        assert_eq!(Mix::parse("8k-7030").unwrap().preconditioner().name, "8k-7030");
    }

    #[test]
    fn bad_mixes_are_refused_naming_the_problem() {
        // (mix, what the error must say)
        let cases = [
            ("read=70;bs=4k/60:8k/30", "sum to 90%"),
            ("read=170;bs=4k/100", "read = '170'"),
            ("read=70;bs=1000/100", "512-byte sectors"),
            ("read=0;bs=128k/100;pattern=zigzag", "pattern = 'zigzag'"),
            ("read=70;read=30;bs=4k", "'read' sets the read share that 'read' already set"),
            ("rw=randrw;rwmixread=70;bs=4k", "'rwmixread' sets the read share that 'rw' already set"),
            ("read=70;bs=4k/50:4k/50", "listed twice"),
            ("read=70;bs=4k:8k", "not SIZE/PERCENT"),
            ("read=70;iodepth=4;bs=4k", "unknown key 'iodepth'"),
        ];
        for (mix, needle) in cases {
            let e = Mix::parse(mix).unwrap_err().to_string();
            assert!(e.contains(needle), "{mix}: expected '{needle}' in: {e}");
        }
        assert!(matches!(Mix::parse("nope"), Err(WorkloadError::Unknown(_))));
        assert!(Mix::parse("read=70;bs=4k/60:64k/40").is_ok());
    }

    #[test]
    fn fio_habits_work_in_mixes() {
        let m = Mix::parse("read=100;bs=64k").unwrap();
        assert_eq!((m.read_ppm, m.sizes.clone()), (1_000_000, vec![(65536, 1_000_000)]));
        let m = Mix::parse("rwmixread=70;bssplit=4k/60:64k/40").unwrap();
        assert_eq!((m.read_ppm, m.sizes.len()), (700_000, 2));
        assert_eq!(Mix::parse("rwmixwrite=30;bs=8k").unwrap().read_ppm, 700_000);
        let m = Mix::parse("rw=write;bs=128k").unwrap();
        assert!(m.sequential && m.read_ppm == 0);
        let m = Mix::parse("rw=randrw;bs=4k").unwrap();
        assert!(!m.sequential && m.read_ppm == 500_000);
    }

    #[test]
    fn sequential_streams_wrap_at_the_end() {
        let mix = Mix::parse("read=0;bs=128k/100;pattern=seq").unwrap();
        assert!(mix.sequential);
        let mut g = MixGen::new(&mix, 300 * 1024);
        let mut rng = Rng::new(1);
        let offs: Vec<u64> = (0..4).map(|_| g.next_io(&mut rng).offset_bytes).collect();
        assert_eq!(offs, [0, 128 * 1024, 0, 128 * 1024]);
    }

    #[test]
    fn generator_keeps_shares_and_bounds() {
        let mix = Mix::parse("fileserver").unwrap();
        let cap = 1 << 30;
        let mut g = MixGen::new(&mix, cap);
        let mut rng = Rng::new(3);
        let (mut reads, mut small) = (0, 0);
        let n = 200_000;
        for _ in 0..n {
            let io = g.next_io(&mut rng);
            assert!(io.offset_bytes.is_multiple_of(512) && io.offset_bytes + io.len_bytes as u64 <= cap);
            reads += (!io.write) as u32;
            small += (io.len_bytes == 512) as u32;
        }
        assert!((reads as f64 / n as f64 - 0.8).abs() < 0.01);
        assert!((small as f64 / n as f64 - 0.1).abs() < 0.01);
    }
}
