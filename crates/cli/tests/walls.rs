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

/// Wall time is read only by `cli` and `emu` and by the lab on real
/// storage (`lab::real`: the programs a real test starts and waits for,
/// its phases' wall length): the simulator, the FTL and the simulated lab
/// run on virtual time alone, so a seed repeats byte for byte.
#[test]
fn wall_time_only_where_real_things_are_timed() {
    let clocks = ["Instant", "SystemTime", "UNIX_EPOCH"];
    for krate in ["units", "nand", "ftl", "sim", "card", "testkit"] {
        let hits = naming(&root().join("crates").join(krate).join("src"), &clocks);
        assert!(hits.is_empty(), "{krate} reads wall time:\n{}", hits.join("\n"));
    }
    let hits = simulated_lab_naming(&clocks);
    assert!(hits.is_empty(), "the simulated lab reads wall time:\n{}", hits.join("\n"));
}

/// The lines of the lab outside its real half (`lab/src/real/`) that name
/// any of `words`.
fn simulated_lab_naming(words: &[&str]) -> Vec<String> {
    let real = root().join("crates/lab/src/real");
    naming(&root().join("crates/lab/src"), words).into_iter().filter(|h| !h.starts_with(&real.display().to_string())).collect()
}

/// The lab's two halves: the simulated lab (`runs`, `procedures`) never
/// imports the lab on real storage (`real`), nor starts a program; the
/// results both keep share `runs::measurement`. (`outputs` draws both.)
#[test]
fn the_simulated_lab_never_imports_the_real_one() {
    let src = root().join("crates/lab/src");
    for half in ["runs", "procedures"] {
        let hits = naming(&src.join(half), &["real::", "process::Command", "Command::new"]);
        assert!(hits.is_empty(), "the simulated lab's {half} reaches the real one:\n{}", hits.join("\n"));
    }
}

/// `cli` writes files only whole (`card::write_whole`: a temporary file,
/// synced, renamed), and only those its user names; it never opens a
/// file for writing itself.
#[test]
fn cli_writes_files_only_whole() {
    let hits = naming(&root().join("crates/cli/src"), &["fs::write", "File::create", "OpenOptions", "set_len("]);
    assert!(hits.is_empty(), "cli writes a file other than whole:\n{}", hits.join("\n"));
}

/// A member's page file is reached through `Member::pages` alone: the
/// device never goes through the FTL's media to the array's store.
#[test]
fn a_members_page_file_has_one_way_in() {
    let accessor = root().join("crates/card/src/device/member.rs");
    let mut hits = Vec::new();
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        hits.extend(naming(&e.unwrap().path().join("src"), &[".array.store"]).into_iter().filter(|h| !h.starts_with(&accessor.display().to_string())));
    }
    assert!(hits.is_empty(), "a page file reached outside Member::pages:\n{}", hits.join("\n"));
}

/// The files a store keeps beside its page files (`card.toml`,
/// `volumes.toml`, `smart.toml`) are written by `card::store` alone: their
/// `save` is the `card` crate's own (no other crate can call it), and
/// nothing else in `card` calls it; the rest of the house asks
/// `card::CardStore`.
#[test]
fn a_stores_files_have_one_writer() {
    let store = root().join("crates/card/src/store");
    let hits: Vec<String> = naming(&root().join("crates/card/src"), &[".save("]).into_iter().filter(|h| !h.starts_with(&store.display().to_string())).collect();
    assert!(hits.is_empty(), "a store's file written outside card::store:\n{}", hits.join("\n"));
    let public = naming(&store, &["pub fn save("]);
    assert!(public.is_empty(), "a store file's save open to other crates:\n{}", public.join("\n"));
}

/// The checks above see what they look for (a wall test that finds
/// nothing anywhere would pass whatever the code).
#[test]
fn the_checks_see_what_they_look_for() {
    assert!(!naming(&root().join("crates/card/src/device/member.rs"), &[".array.store"]).is_empty());
    assert!(naming(&root().join("crates/card/src/store"), &[".save("]).len() >= 3, "CardStore writes the card file, the split and the SMART log");
    assert!(naming(&root().join("crates/card/src/store"), &["pub(crate) fn save("]).len() == 3);
    assert!(!naming(&root().join("crates/card/src"), &["ftl::"]).is_empty());
    assert!(!naming(&root().join("crates/emu/src"), &["UnixStream"]).is_empty());
    assert!(dependencies("card").contains(&"ftl".to_string()));
    let real = root().join("crates/lab/src/real");
    assert!(!naming(&real, &["Command::new"]).is_empty() && !naming(&real, &["Instant"]).is_empty(), "the real lab starts programs and reads the clock");
    assert!(!naming(&root().join("crates/lab/src/outputs"), &["real::"]).is_empty(), "outputs draw the real lab's results");
    assert!(simulated_lab_naming(&["Instant"]).is_empty() && naming(&root().join("crates/lab/src"), &["Instant"]).len() > 1);
}

/// The code of a Rust source, comments, string and character literals
/// blanked (their lines kept), so that braces can be counted.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    while i < c.len() {
        let at = |i: usize, k: usize| c.get(i + k).copied().unwrap_or('\0');
        if c[i] == '/' && at(i, 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '/' && at(i, 1) == '*' {
            while i < c.len() && !(c[i] == '*' && at(i, 1) == '/') {
                out.push(keep(c[i]));
                i += 1;
            }
            out.push_str("  ");
            i += 2;
        } else if c[i] == 'r' && (at(i, 1) == '"' || at(i, 1) == '#') && (i == 0 || !c[i - 1].is_alphanumeric() && c[i - 1] != '_') {
            let hashes = (1..).take_while(|&k| at(i, k) == '#').count();
            if at(i, 1 + hashes) != '"' {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            i += 2 + hashes;
            out.push_str(&" ".repeat(2 + hashes));
            while i < c.len() && c[i..].iter().take(close.len()).ne(close.iter()) {
                out.push(keep(c[i]));
                i += 1;
            }
            out.push_str(&" ".repeat(close.len()));
            i += close.len();
        } else if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                let n = if c[i] == '\\' { 2 } else { 1 };
                for k in 0..n {
                    out.push(keep(at(i, k)));
                }
                i += n;
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\'' && (at(i, 1) == '\\' || at(i, 2) == '\'') {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime.
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
                out.push(' ');
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The functions of a source longer than `max` lines (from `fn` to its
/// closing brace), as `name (lines)`.
fn long_functions(text: &str, max: usize) -> Vec<String> {
    let code = code_only(text);
    let lines: Vec<&str> = code.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(at) = line.find("fn ").filter(|&at| at == 0 || !line.as_bytes()[at - 1].is_ascii_alphanumeric() && line.as_bytes()[at - 1] != b'_') else {
            continue;
        };
        let name: String = line[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first `{` before any `;` (a declaration has none).
        let (mut depth, mut opened, mut end) = (0i64, false, None);
        'scan: for (j, l) in lines.iter().enumerate().skip(i) {
            let from = if j == i { at } else { 0 };
            for ch in l[from..].chars() {
                match ch {
                    ';' if !opened => break 'scan,
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    _ => {}
                }
                if opened && depth == 0 {
                    end = Some(j);
                    break 'scan;
                }
            }
        }
        if let Some(end) = end.filter(|&end| end - i + 1 > max) {
            long.push(format!("{name} ({} lines)", end - i + 1));
        }
    }
    long
}

/// No function in the crates' sources is over 70 lines: a longer one is
/// split where its steps part.
#[test]
fn no_function_is_over_70_lines() {
    let mut long = Vec::new();
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        for (p, text) in sources(&e.unwrap().path().join("src")) {
            long.extend(long_functions(&text, 70).into_iter().map(|f| format!("{}: {f}", p.display())));
        }
    }
    assert!(long.is_empty(), "functions over 70 lines:\n{}", long.join("\n"));
}

/// Every `unsafe` block says why it is sound in a `// SAFETY:` comment
/// right above it.
#[test]
fn every_unsafe_block_says_why_it_is_sound() {
    let mut bare = Vec::new();
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        for (p, text) in sources(&e.unwrap().path().join("src")) {
            bare.extend(unsafe_without_reason(&text).into_iter().map(|n| format!("{}:{n}", p.display())));
        }
    }
    assert!(bare.is_empty(), "unsafe blocks without a SAFETY comment:\n{}", bare.join("\n"));
}

/// No library crate (all but `cli`, the binary) answers with a bare
/// string for an error: each refusal is a type its caller can match
/// (`thiserror`), whose message is its `Display`.
#[test]
fn no_library_error_is_a_bare_string() {
    let mut bare = Vec::new();
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        let krate = e.unwrap().path();
        if krate.ends_with("cli") {
            continue;
        }
        for (p, text) in sources(&krate.join("src")) {
            bare.extend(string_errors(&text).into_iter().map(|n| format!("{}:{n}", p.display())));
        }
    }
    assert!(bare.is_empty(), "errors that are bare strings (give them a type):\n{}", bare.join("\n"));
}

/// The lines (1-based) whose code names a `Result` with `String` as its
/// error, however its success type nests (comments and strings left
/// out), or an `Err = String`.
fn string_errors(text: &str) -> Vec<usize> {
    let code = code_only(text);
    let string_error = |line: &str| {
        line.contains("type Err = String")
            || line.match_indices("Result<").any(|(at, _)| {
                // The Result's own closing `>`: the error is what follows
                // its last top-level comma.
                let (mut depth, mut comma) = (0i32, None);
                for (i, c) in line[at + 7..].char_indices() {
                    match c {
                        '<' | '(' | '[' => depth += 1,
                        '>' | ')' | ']' if depth == 0 => return comma.is_some_and(|c: usize| line[at + 7 + c + 1..at + 7 + i].trim() == "String"),
                        '>' | ')' | ']' => depth -= 1,
                        ',' if depth == 0 => comma = Some(i),
                        _ => {}
                    }
                }
                false
            })
    };
    code.lines().enumerate().filter(|(_, l)| string_error(l)).map(|(i, _)| i + 1).collect()
}

/// The lines (1-based) of `unsafe` blocks with no `// SAFETY:` comment in
/// the comments (and attributes) right above them or on their line.
fn unsafe_without_reason(text: &str) -> Vec<usize> {
    let (code, lines): (String, Vec<&str>) = (code_only(text), text.lines().collect());
    let reasoned = |i: usize| {
        let above = lines[..i].iter().rev().take_while(|l| l.trim_start().starts_with("//") || l.trim_start().starts_with("#["));
        lines[i].contains("SAFETY:") || above.into_iter().any(|l| l.contains("SAFETY:"))
    };
    code.lines()
        .enumerate()
        .filter(|(_, l)| l.contains("unsafe {") || l.trim_end().ends_with("unsafe"))
        .filter(|&(i, _)| !reasoned(i))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The two source checks above see what they look for, and not what
/// only looks like it (braces and `unsafe` in strings, comments and
/// character literals; lifetimes).
#[test]
fn the_source_checks_see_what_they_look_for() {
    let body = "    x += 1;\n".repeat(70);
    let long = format!("fn long<'a>(s: &'a str) {{\n{body}}}\nfn short() -> char {{ '}}' }}\n");
    assert_eq!(long_functions(&long, 70), vec!["long (72 lines)".to_string()]);
    let tricky = "fn f() {\n    let s = \"}}}}\"; // }\n    let r = r#\"{\"#;\n    let c = '{';\n}\n";
    assert_eq!(code_only(tricky).matches('{').count(), 1, "{}", code_only(tricky));
    assert!(long_functions(tricky, 5).is_empty() && long_functions(tricky, 4).len() == 1, "its five lines counted whole");
    assert_eq!(long_functions("trait T { fn decl(&self); }\n", 0), Vec::<String>::new(), "a declaration has no body");
    let unsafe_text = "fn a() {\n    // SAFETY: fine.\n    unsafe { x() };\n    unsafe { y() };\n    let s = \"unsafe {\";\n}\n";
    assert_eq!(unsafe_without_reason(unsafe_text), vec![4]);
    let errors = "fn a() -> Result<(), String> {}\nfn b() -> Result<Option<Vec<u8>>, String> {}\nfn c() -> Result<(u8, String), E> {}\n// Result<(), String>\nfn d() -> Result<String, Why> {}\nimpl FromStr for X { type Err = String; }\nlet s = \"Result<(), String>\";\n";
    assert_eq!(string_errors(errors), vec![1, 2, 6], "a bare string error, however nested; not a String success, a comment or a string");
}

/// The test names a text gives (a backquoted `snake_case` word of four
/// parts or more) that no function in the workspace has.
fn tests_missing(text: &str, functions: &str) -> Vec<String> {
    let mut missing = Vec::new();
    for part in text.split('`').skip(1).step_by(2) {
        let test_like = part.split('_').count() >= 4 && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if test_like && !functions.contains(&format!("fn {part}(")) && !missing.contains(&part.to_string()) {
            missing.push(part.to_string());
        }
    }
    missing
}

/// Every invariant ARCHITECTURE.md holds by a test names one that exists:
/// a test renamed or removed fails here, not in a reader's search.
#[test]
fn the_architectures_invariants_name_tests_that_exist() {
    let mut functions = String::new();
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        let krate = e.unwrap().path();
        for dir in [krate.join("src"), krate.join("tests")] {
            if dir.is_dir() {
                functions.extend(sources(&dir).into_iter().map(|(_, t)| t));
            }
        }
    }
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let missing = tests_missing(&text, &functions);
    assert!(missing.is_empty(), "ARCHITECTURE.md names tests that do not exist: {missing:?}");
    assert!(text.matches("`a_").count() > 10, "the invariants name their tests");
    assert_eq!(tests_missing("held (`a_test_that_is_not_there`, `short_name`)", "fn a_test_that_is(\n"), vec!["a_test_that_is_not_there"]);
}

/// The markdown files of the house (README, ARCHITECTURE, docs/): every
/// relative link's target exists, and every dated note is listed in
/// `docs/notes/README.md`.
#[test]
fn the_docs_links_resolve_and_every_note_is_indexed() {
    let mut pages = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    let broken: Vec<String> = pages.iter().flat_map(|p| broken_links(p)).collect();
    assert!(broken.is_empty(), "links to nothing:\n{}", broken.join("\n"));
    let index = std::fs::read_to_string(root().join("docs/notes/README.md")).unwrap();
    let missing: Vec<String> = std::fs::read_dir(root().join("docs/notes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "README.md" && !index.contains(&format!("]({n})")))
        .collect();
    assert!(missing.is_empty(), "dated notes not in docs/notes/README.md: {missing:?}");
}

/// The relative links of markdown page `page` (`[text](target)`) whose
/// target does not exist.
fn broken_links(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap();
    let mut out = Vec::new();
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = rest[..end].split('#').next().unwrap_or("");
        if target.is_empty() || target.contains("://") || target.contains(' ') || target.starts_with("mailto:") {
            continue;
        }
        if !page.parent().unwrap().join(target).exists() {
            out.push(format!("{}: {target}", page.display()));
        }
    }
    out
}

/// The link check sees a link to nothing.
#[test]
fn the_link_check_sees_a_broken_link() {
    let p = std::env::temp_dir().join(format!("flashlab-links-{}.md", std::process::id()));
    std::fs::write(&p, "[there](.) [gone](no-such-page.md#x) [web](https://example.org)\n").unwrap();
    assert_eq!(broken_links(&p), vec![format!("{}: no-such-page.md", p.display())]);
    let _ = std::fs::remove_file(&p);
}
