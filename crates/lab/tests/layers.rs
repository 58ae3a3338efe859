//! The lab's layers stay layers: `runs` uses nothing above it,
//! `procedures` nothing of `real` (the lab on real storage) or `outputs`,
//! `real` nothing of `outputs`, and no module reaches, through
//! others, back to itself. Read from the source: every `crate::` path in
//! code (comments left out) is a use.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every module of `src` but `lib`, by path (`runs::run`), with its code.
fn modules(dir: &Path, prefix: &str, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let name = if prefix.is_empty() { stem.clone() } else { format!("{prefix}::{stem}") };
        if path.is_dir() {
            modules(&path, &name, out);
        } else if stem != "lib" && path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            out.insert(name, code.join("\n"));
        }
    }
}

/// The crate root's re-exports of modules (`pub use outputs::{chart,
/// fio};`): `chart` stands for `outputs::chart`.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for l in lib.lines().filter_map(|l| l.trim().strip_prefix("pub use ")) {
        let Some((base, list)) = l.split_once("::{") else { continue };
        for name in list.trim_end_matches("};").split(',').map(str::trim) {
            out.insert(name.to_string(), format!("{base}::{name}"));
        }
    }
    out
}

fn uses(mods: &BTreeMap<String, String>, alias: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut deps = BTreeMap::new();
    for (name, code) in mods {
        let mut set = BTreeSet::new();
        for (at, _) in code.match_indices("crate::") {
            let mut path: String = code[at + 7..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_' || *c == ':').collect();
            let head = path.split("::").next().unwrap_or("").to_string();
            if let Some(full) = alias.get(&head) {
                path = format!("{full}{}", &path[head.len()..]);
            }
            if let Some(m) = mods.keys().filter(|m| *m != name && format!("{path}::").starts_with(&format!("{m}::"))).max_by_key(|m| m.len()) {
                set.insert(m.clone());
            }
        }
        deps.insert(name.clone(), set);
    }
    deps
}

fn layer(module: &str) -> u32 {
    match module.split("::").next().unwrap() {
        "number" => 0,
        "runs" => 1,
        "procedures" => 2,
        "real" => 3,
        "outputs" => 4,
        other => panic!("module {module}: in no layer ({other}); add it to one"),
    }
}

#[test]
fn lower_layers_never_use_higher_ones_and_no_module_is_in_a_cycle() {
    let mut mods = BTreeMap::new();
    modules(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), "", &mut mods);
    assert!(mods.contains_key("runs::run") && mods.contains_key("procedures::review"), "modules found: {:?}", mods.keys());
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let deps = uses(&mods, &reexports(&lib));
    for (m, ds) in &deps {
        for d in ds {
            assert!(layer(d) <= layer(m), "{m} uses {d}, a layer above it");
        }
    }
    for start in deps.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = deps[start].iter().collect();
        while let Some(m) = todo.pop() {
            assert!(m != start, "{start} reaches itself through the modules it uses");
            if seen.insert(m) {
                todo.extend(deps[m].iter());
            }
        }
    }
}
