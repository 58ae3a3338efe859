//! Helpers the binary's integration tests share.

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
