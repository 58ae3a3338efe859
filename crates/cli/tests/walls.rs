//! The walls between the crates (ARCHITECTURE.md, "Layer rules"), checked
//! on the sources: each crate's dependencies and the paths its code names.
//! A wall broken fails here with the file and the line.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The workspace crates a crate depends on, from its Cargo.toml's
/// `[dependencies]` (dev-dependencies are the tests').
fn dependencies(krate: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join("crates").join(krate).join("Cargo.toml")).unwrap();
    let toml: toml::Table = text.parse().unwrap();
    toml.get("dependencies").and_then(|d| d.as_table()).map(|t| t.keys().cloned().collect()).unwrap_or_default()
}

/// Every `.rs` file under a directory, with its text.
fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            out.push((p, text));
        }
    }
    out
}

/// The lines of a crate's sources (or of one file) that name any of
/// `words`, comments left out.
fn naming(path: &Path, words: &[&str]) -> Vec<String> {
    let files = if path.is_dir() { sources(path) } else { vec![(path.to_path_buf(), std::fs::read_to_string(path).unwrap())] };
    let mut hits = Vec::new();
    for (p, text) in files {
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if words.iter().any(|w| code.contains(w)) {
                hits.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
            }
        }
    }
    hits
}

/// Asserts that `krate` neither depends on nor names any of `lower`.
fn walled_off(krate: &str, lower: &[&str]) {
    let deps = dependencies(krate);
    for low in lower {
        assert!(!deps.iter().any(|d| d == low), "{krate} depends on {low}: {deps:?}");
    }
    let paths: Vec<String> = lower.iter().map(|l| format!("{l}::")).collect();
    let words: Vec<&str> = paths.iter().map(|p| p.as_str()).collect();
    let hits = naming(&root().join("crates").join(krate).join("src"), &words);
    assert!(hits.is_empty(), "{krate} names a lower crate:\n{}", hits.join("\n"));
}

/// `cli` parses arguments and prints: it reaches the card through `card`,
/// `lab` and `emu`, never the simulator, the FTL or the NAND model.
#[test]
fn cli_names_neither_sim_ftl_nor_nand() {
    walled_off("cli", &["sim", "ftl", "nand"]);
}

/// `emu` serves the card through `card`'s device and block API; the FTL
/// is the device's business.
#[test]
fn emu_names_neither_the_ftl_nor_the_nand_model() {
    walled_off("emu", &["ftl", "nand", "sim"]);
}

/// The timing model charges a list of media operations and never sees the
/// FTL (`card/src/device/timing/`).
#[test]
fn the_timing_model_never_names_the_ftl() {
    let hits = naming(&root().join("crates/card/src/device/timing"), &["ftl::", "Ftl"]);
    assert!(hits.is_empty(), "the timing model names the FTL:\n{}", hits.join("\n"));
}

/// Sockets are opened only where a card is served or managed: `emu` (the
/// NBD listener, the control channel, the metrics endpoint). Every other
/// crate, `cli` included, opens none and depends on no socket crate (the
/// test kit's NBD client is a test's, never shipped: `testkit` is only
/// ever a development dependency, checked below).
#[test]
fn no_socket_outside_emu() {
    for krate in ["units", "nand", "ftl", "sim", "card", "lab", "cli"] {
        let hits = naming(&root().join("crates").join(krate).join("src"), &["UnixListener", "TcpListener", "UnixStream", "TcpStream", "socket2", "std::net"]);
        assert!(hits.is_empty(), "{krate} opens a socket:\n{}", hits.join("\n"));
        assert!(!dependencies(krate).iter().any(|d| d == "socket2" || d == "testkit"), "{krate} depends on socket2 or the test kit");
    }
}

/// The checks above see what they look for (a wall test that finds
/// nothing anywhere would pass whatever the code).
#[test]
fn the_checks_see_what_they_look_for() {
    assert!(!naming(&root().join("crates/card/src"), &["ftl::"]).is_empty());
    assert!(!naming(&root().join("crates/emu/src"), &["UnixStream"]).is_empty());
    assert!(dependencies("card").contains(&"ftl".to_string()));
}
