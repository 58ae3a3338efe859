//! One owner per store: a second server, on the same store or on a live
//! server's socket, is refused before anything on disk changes, and a
//! card whose server does not answer is never taken for a card at rest.

mod common;
use common::{flashlab, refused, Served};
use std::path::Path;

/// Every regular file of the store and its bytes: the store as a second
/// server would find it.
fn store_files(store: &Path) -> Vec<(String, u32)> {
    let mut files: Vec<(String, u32)> = std::fs::read_dir(store)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), crc32fast::hash(&std::fs::read(e.path()).unwrap())))
        .collect();
    files.sort();
    files
}

/// A second `serve` on a served store once mounted it anyway: both
/// servers wrote the same member file and fio's data was lost. A second
/// server on the same store (another socket), or on the live server's
/// socket (another store), is refused naming why; the store's files are
/// byte for byte as they were, the first server still answers, and its
/// socket is still its own.
#[test]
fn a_second_server_is_refused_and_changes_nothing() {
    let card = Served::start("owner", &[]);
    let store = card.dir.join("store");
    let s = store.to_str().unwrap();
    let before = store_files(&store);
    assert!(before.iter().any(|(n, _)| n == "member-0.flash"), "{before:?}");
    let other = card.dir.join("other.sock");
    refused(&["serve", "p420m", "--scale", "8192", "--store", s, "--unix", other.to_str().unwrap()], "in use by pid");
    assert!(!other.exists(), "the refused server's socket is gone");
    let other_store = card.dir.join("other-store");
    refused(
        &["serve", "p420m", "--scale", "8192", "--store", other_store.to_str().unwrap(), "--unix", card.socket.to_str().unwrap()],
        "a server answers on this socket",
    );
    assert!(!other_store.exists(), "nothing made for a server refused its socket");
    // A port in use is refused before the store is made or formatted.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    refused(&["serve", "p420m", "--scale", "8192", "--store", other_store.to_str().unwrap(), "--listen", &addr], "--listen");
    assert!(!other_store.exists(), "nothing made for a server refused its port");
    assert_eq!(store_files(&store), before, "the store changed");
    let (code, out, err) = flashlab(&["status", s]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("served"), "{out}");
    assert!(std::os::unix::net::UnixStream::connect(&card.socket).is_ok(), "the first server lost its socket");
}

/// A server whose control socket was removed is still the store's owner:
/// status, format, volumes and beacon refuse to take the card for one at
/// rest, naming the server's pid, and change nothing.
#[test]
fn a_served_card_is_never_taken_for_one_at_rest() {
    let card = Served::start("owner-rest", &[]);
    let store = card.dir.join("store");
    let s = store.to_str().unwrap();
    std::fs::remove_file(store.join("control.sock")).unwrap();
    let before = store_files(&store);
    let pid = format!("pid {}", card.child.id());
    refused(&["status", s], &pid);
    refused(&["format", s, "--format", "stock", "--force"], &pid);
    refused(&["volumes", s, "--split", "2", "--force"], &pid);
    refused(&["beacon", s, "on"], &pid);
    assert_eq!(store_files(&store), before, "the store changed");
}
