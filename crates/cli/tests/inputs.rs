//! What a careless or hostile user hands the program beyond the NBD
//! protocol and the profiles: output paths that name devices, pipes and
//! links; traces, sweeps and results files that are small but costly,
//! wrapping or damaged. Each is answered with a clear error or handled as
//! a user expects; nothing is replaced that is not a file.

mod common;
use common::{flashlab, refused, Scratch};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// A short run whose results go to `json`.
fn run_to(json: &str) -> (i32, String, String) {
    flashlab(&["run", "p420m", "--scale", "1024", "-q", "--ios", "2000", "-w", "4k-write", "--json", json])
}

fn is_char_device(p: &str) -> bool {
    std::fs::symlink_metadata(p).map(|m| m.file_type().is_char_device()).unwrap_or(false)
}

/// A device node named as the output is written through, never replaced:
/// `/dev/null` takes the results, `/dev/full` gives its error and the run
/// fails; both are still devices after.
#[test]
fn an_output_naming_a_device_is_written_through_not_replaced() {
    let (code, _, err) = run_to("/dev/null");
    assert_eq!(code, 0, "{err}");
    assert!(is_char_device("/dev/null"), "/dev/null is still a device");
    let (code, _, err) = run_to("/dev/full");
    assert_ne!(code, 0, "a device with no room fails the run: {err}");
    assert!(err.contains("/dev/full") && err.contains("No space left on device"), "{err}");
    assert!(is_char_device("/dev/full"), "/dev/full is still a device");
}

/// A symbolic link is followed: its target takes the results, the link
/// stays a link (as `>` in a shell does).
#[test]
fn an_output_naming_a_symlink_writes_its_target_and_keeps_the_link() {
    let dir = Scratch::new("link");
    std::fs::create_dir_all(&dir).unwrap();
    let (link, target) = (dir.join("r.json"), dir.join("kept.json"));
    std::fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink("kept.json", &link).unwrap();
    let (code, _, err) = run_to(link.to_str().unwrap());
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link is still a link");
    assert!(std::fs::read_to_string(&target).unwrap().contains("\"phases\""), "its target holds the results");
}

/// A named pipe is written through to its reader, and stays a pipe.
#[test]
fn an_output_naming_a_pipe_is_written_through() {
    let dir = Scratch::new("fifo");
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("results");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let (code, _, err) = run_to(fifo.to_str().unwrap());
    assert_eq!(code, 0, "{err}");
    let got = reader.join().unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&got).is_ok(), "the reader got whole JSON: {got}");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "still a pipe");
}

/// `/dev/stdout` is standard output, as `-` is: the JSON alone there, the
/// summary on standard error.
#[test]
fn dev_stdout_is_standard_output_as_dash_is() {
    for name in ["-", "/dev/stdout"] {
        let (code, out, err) = run_to(name);
        assert_eq!(code, 0, "{name}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{name}: standard output is the JSON alone ({e}): {out}"));
        assert_eq!(v["phases"][0]["summary"]["all"]["ios"], 2000);
        assert!(err.contains("IOPS"), "{name}: the summary goes to standard error: {err}");
    }
}

/// A directory, and a disk, are refused before any work, with the reason.
#[test]
fn an_output_naming_a_directory_or_a_disk_is_refused_with_the_reason() {
    refused(&["run", "p420m", "--scale", "1024", "-q", "--ios", "2000", "-w", "4k-write", "--json", "/tmp"], "it is a directory");
    if let Some(disk) = ["/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1"].into_iter().find(|p| Path::new(p).exists()) {
        refused(&["run", "p420m", "--scale", "1024", "-q", "--ios", "2000", "-w", "4k-write", "--json", disk], "block device");
    }
}

/// `--out` naming a file says so, once.
#[test]
fn an_out_directory_naming_a_file_says_it_is_not_a_directory_once() {
    let file = Scratch::new("out-file");
    std::fs::write(&file, "mine").unwrap();
    let (code, _, err) = flashlab(&["review", "p420m", "--scale", "1024", "--out", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("it is not a directory"), "{err}");
    assert!(!err.contains("os error 17"), "no OS error twice: {err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine", "the file is untouched");
}
