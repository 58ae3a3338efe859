//! Fuzz targets, one per input format flashlab reads: traces (fio iolog
//! v2 and v3, MSR Cambridge CSV, blkparse text, flashlab's capture), sweep
//! files, figures files, a store's `card.toml`, `volumes.toml` and
//! `smart.toml`, and results files read back (a review's, a sweep
//! point's). Each input is a seed from `tests/corpus/` mutated at random
//! (bytes flipped, inserted, deleted, lines repeated, numbers swapped for
//! extremes); the reader must answer Ok or a named error, never panic,
//! within a bound on memory (counted by this binary's allocator) and time.
//!
//! The default suite runs `FLASHLAB_FUZZ_CASES` cases a target (2,000 by
//! default); longer runs set it higher, e.g.
//! `FLASHLAB_FUZZ_CASES=200000 cargo test --release -p lab --test fuzz`.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The allocator, counting the bytes held and their peak.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; the
// counters are only counters.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = HELD.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        HELD.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// What one input may take: the bound for a command (2 GB,
/// 60 s), which a reader alone must stay far inside.
const MEMORY_MAX: usize = 2 << 30;
const SECONDS_MAX: u64 = 60;
/// The largest input a case makes.
const INPUT_MAX: usize = 1 << 20;

fn corpus(dir: &str) -> Vec<(String, Vec<u8>)> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(dir);
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into(), std::fs::read(&p).unwrap()))
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", d.display());
    seeds
}

/// One change to an input.
#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    RepeatLine(usize, usize),
    Number(usize, &'static str),
    Truncate(usize),
}

/// Numbers that break careless arithmetic.
const EXTREMES: [&str; 12] =
    ["0", "-1", "18446744073709551615", "18446744073709551616", "9223372036854775807", "4294967295", "4294967296", "1e308", "-1e308", "nan", "inf", "1e-300"];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Flip(at, b)),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..16)).prop_map(|(at, b)| Mutation::Insert(at, b)),
        (any::<usize>(), 1usize..64).prop_map(|(at, n)| Mutation::Delete(at, n)),
        (any::<usize>(), 1usize..2000).prop_map(|(at, n)| Mutation::RepeatLine(at, n)),
        (any::<usize>(), proptest::sample::select(EXTREMES.to_vec())).prop_map(|(k, x)| Mutation::Number(k, x)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(mut b: Vec<u8>, m: &Mutation) -> Vec<u8> {
    let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
    match m {
        Mutation::Flip(i, x) if !b.is_empty() => {
            let i = i % b.len();
            b[i] ^= x | 1;
        }
        Mutation::Flip(..) => {}
        Mutation::Insert(i, x) => {
            let i = at(*i, b.len());
            b.splice(i..i, x.iter().copied());
        }
        Mutation::Delete(i, n) => {
            let i = at(*i, b.len());
            let end = (i + n).min(b.len());
            b.drain(i..end);
        }
        Mutation::RepeatLine(i, n) => {
            let lines: Vec<&[u8]> = b.split_inclusive(|&c| c == b'\n').collect();
            if !lines.is_empty() {
                let k = i % lines.len();
                let mut out = Vec::new();
                for (j, l) in lines.iter().enumerate() {
                    let times = if j == k { *n } else { 1 };
                    for _ in 0..times {
                        out.extend_from_slice(l);
                    }
                }
                b = out;
            }
        }
        Mutation::Number(k, x) => {
            let text = String::from_utf8_lossy(&b).to_string();
            let spans: Vec<(usize, usize)> = number_spans(&text);
            if !spans.is_empty() {
                let (s, e) = spans[k % spans.len()];
                b = format!("{}{x}{}", &text[..s], &text[e..]).into_bytes();
            }
        }
        Mutation::Truncate(i) => b.truncate(at(*i, b.len())),
    }
    b.truncate(INPUT_MAX);
    b
}

/// Where the digit runs of `text` are.
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_ascii_digit(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, text.len()));
    }
    spans
}

fn cases() -> u32 {
    std::env::var("FLASHLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
}

/// Runs `read` on mutations of each seed in `corpus/dir`: it must not
/// panic, and must stay inside the memory and time bounds.
fn fuzz(dir: &str, read: impl Fn(&str, &[u8])) {
    // One target at a time: the counters are the process's.
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let seeds = corpus(dir);
    for (name, seed) in &seeds {
        read(name, seed);
    }
    let mut runner = TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    let strategy = (0..seeds.len(), proptest::collection::vec(mutation(), 1..6));
    runner
        .run(&strategy, |(k, muts)| {
            let (name, seed) = &seeds[k];
            let input = muts.iter().fold(seed.clone(), apply);
            let before = HELD.load(Ordering::Relaxed);
            PEAK.store(before, Ordering::Relaxed);
            let t = std::time::Instant::now();
            read(name, &input);
            let (peak, secs) = (PEAK.load(Ordering::Relaxed).saturating_sub(before), t.elapsed().as_secs());
            prop_assert!(peak < MEMORY_MAX, "{dir}/{name} mutated ({muts:?}) took {peak} bytes");
            prop_assert!(secs < SECONDS_MAX, "{dir}/{name} mutated ({muts:?}) took {secs} s");
            Ok(())
        })
        .unwrap();
}

/// A directory of this test's own, removed at the end.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("flashlab-fuzz-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn fuzz_traces() {
    fuzz("trace", |_, input| {
        // The reader takes bytes (a trace need not be UTF-8 to be refused).
        let text = String::from_utf8_lossy(input);
        if let Ok(t) = lab::runs::trace::Trace::parse(&text) {
            let n = t.records().filter(|r| r.is_ok()).count() as u64;
            assert_eq!(n, t.ios + t.flushes + t.trims, "every request checked is given back");
        }
    });
}

#[test]
fn fuzz_sweep_files() {
    let dir = Scratch::new("sweep");
    fuzz("sweep", |_, input| {
        let file = dir.0.join("s.toml");
        std::fs::write(&file, input).unwrap();
        if let Ok(s) = lab::procedures::sweep::Sweep::load(&file) {
            let _ = s.plan(0);
        }
    });
}

#[test]
fn fuzz_figures_files() {
    fuzz("figures", |_, input| {
        let _ = card::figures_parse("f.toml", &String::from_utf8_lossy(input));
    });
}

#[test]
fn fuzz_store_files() {
    let dir = Scratch::new("store");
    fuzz("store", |name, input| {
        std::fs::write(dir.0.join(name), input).unwrap();
        match name {
            "card.toml" => drop(card::CardFile::load(&dir.0)),
            "volumes.toml" => {
                if let Ok(Some(v)) = card::Volumes::load(&dir.0) {
                    let _ = v.check(332013568);
                }
            }
            _ => drop(card::SmartLog::load(&dir.0)),
        }
        std::fs::remove_file(dir.0.join(name)).unwrap();
    });
}

#[test]
fn fuzz_results_files() {
    let sweep = lab::procedures::sweep::Sweep::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/sweep/run.toml")).unwrap();
    fuzz("results", |name, input| {
        let text = String::from_utf8_lossy(input);
        if name.starts_with("point") {
            if let Ok(p) = serde_json::from_str::<lab::procedures::sweep::PointResult>(&text) {
                let _ = p.check(&sweep.settings_of(0));
            }
        } else {
            let _ = lab::procedures::review::results_parse(&text, name);
        }
    });
}
