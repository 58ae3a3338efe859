//! Helpers the binary's integration tests share.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `flashlab` with `args`: (exit status, standard output, standard error).
pub fn flashlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Bad input: exit status 2, the problem named, no panic.
pub fn refused(args: &[&str], needle: &str) {
    let (code, _, err) = flashlab(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
}

/// An external program a test needs, by name; a missing one fails the test
/// naming the Debian package that has it (`.ci/run` installs them).
#[allow(dead_code)] // not every test binary runs an external program
pub fn tool(name: &str, package: &str) -> String {
    let ok = Command::new("sh").args(["-c", &format!("command -v {name}")]).output().map(|o| o.status.success()).unwrap_or(false);
    assert!(ok, "{name} is needed by this test: install Debian's package '{package}' (.ci/run does)");
    name.to_string()
}

/// A scratch path under the temporary directory, unique to this test
/// process. Dropped, it is removed (a directory or a file), unless the test
/// is failing: a failure's files are left to be looked at.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("flashlab-test-{}-{name}", std::process::id()));
        remove(&p);
        Scratch(p)
    }
}

fn remove(p: &Path) {
    let _ = std::fs::remove_dir_all(p).or_else(|_| std::fs::remove_file(p));
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            remove(&self.0);
        }
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}
