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
    let (code, out, err) = flashlab(&["status", "--store", s]);
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
    refused(&["status", "--store", s], &pid);
    refused(&["format", "--store", s, "--format", "stock", "--force"], &pid);
    refused(&["volumes", "--store", s, "--split", "2", "--force"], &pid);
    refused(&["beacon", "--store", s, "on"], &pid);
    assert_eq!(store_files(&store), before, "the store changed");
}

/// 100 blocks written with FUA by a raw client, each its own pattern.
fn write_blocks(card: &Served) -> Vec<Vec<u8>> {
    use emu::nbd;
    let mut c = testkit::Client::connect(&card.socket, &card.name).unwrap();
    let blocks: Vec<Vec<u8>> = (0..100u32).map(|i| (0..4096u32).map(|b| (i * 7 + b) as u8).collect()).collect();
    for (i, b) in blocks.iter().enumerate() {
        assert_eq!(c.call(nbd::CMD_WRITE, nbd::CMD_FLAG_FUA, i as u64 * 8192, 4096, b).unwrap().error, 0);
    }
    blocks
}

/// Reads the blocks `write_blocks` wrote and checks every one.
fn blocks_intact(card: &Served, blocks: &[Vec<u8>]) {
    use emu::nbd;
    let mut c = testkit::Client::connect(&card.socket, &card.name).unwrap();
    for (i, b) in blocks.iter().enumerate() {
        let r = c.call(nbd::CMD_READ, 0, i as u64 * 8192, 4096, &[]).unwrap();
        assert_eq!(r.error, 0);
        assert!(r.data == *b, "block {i} is not what was written");
    }
}

/// Deleting `STORE/lock` under a live server once let a second server
/// mount the same store, and the first server's flushed data were lost. A
/// store is held on its member files too: with the lock file removed, or
/// the store's directory moved, a second server is refused naming why,
/// and the first server's flushed data are intact after a clean stop and
/// a restart.
#[test]
fn a_lock_file_removed_or_a_store_moved_lets_no_second_server_in() {
    let mut card = Served::start("owner-rm", &["--timing", "none"]);
    let blocks = write_blocks(&card);
    let store = card.dir.join("store");
    std::fs::remove_file(store.join("lock")).unwrap();
    let other = card.dir.join("other.sock");
    refused(&["serve", "p420m", "--scale", "8192", "--store", store.to_str().unwrap(), "--unix", other.to_str().unwrap()], "open in another process");
    let moved = card.dir.join("moved-store");
    std::fs::rename(&store, &moved).unwrap();
    refused(&["serve", "p420m", "--scale", "8192", "--store", moved.to_str().unwrap(), "--unix", other.to_str().unwrap()], "open in another process");
    std::fs::rename(&moved, &store).unwrap();
    blocks_intact(&card, &blocks);
    let (code, log) = card.stop_clean_and_restart();
    assert_eq!(code, 0, "{log}");
    blocks_intact(&card, &blocks);
}

/// A clean stop's checkpoint describes the media as they were then: one
/// older than its member's store (written after it) is set aside, the
/// media scanned, and nothing acknowledged is lost.
#[test]
fn a_checkpoint_older_than_its_media_is_set_aside() {
    let mut card = Served::start("owner-stale", &["--timing", "none"]);
    let blocks = write_blocks(&card);
    let (code, log) = card.stop_clean();
    assert_eq!(code, 0, "{log}");
    let member = card.dir.join("store").join("member-0.flash");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(&member).unwrap().set_modified(later).unwrap();
    let (code, out, err) = flashlab(&["status", "--store", card.dir.join("store").to_str().unwrap()]);
    assert_ne!(code, 0, "a card at rest with a stale checkpoint is not reported from it: {out}");
    assert!(err.contains("older than its media"), "{err}");
    card.start_again();
    blocks_intact(&card, &blocks);
    let log = card.stop();
    assert!(log.contains("checkpoint set aside (member 0: the checkpoint is older than its media"), "{log}");
}
