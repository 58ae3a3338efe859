//! The served card as a service others reach: whatever a client does (reads
//! no reply, holds a handshake, opens connections past the cap or past
//! the process's descriptors, sends a line without end to the control
//! socket), the server bounds what it holds, goes on serving the others,
//! and serves again once the client lets go. Traffic goes to Unix sockets
//! only, bounded in count and time.

mod common;

use common::{Scratch, Served};
use emu::nbd;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use testkit::Client;

/// A field of /proc/PID/status, in its own units (kB for memory).
fn proc_status(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = s.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Waits up to 20 s for `ok`.
fn eventually(what: &str, mut ok: impl FnMut() -> bool) {
    let t = Instant::now();
    while !ok() {
        assert!(t.elapsed() < Duration::from_secs(20), "{what} within 20 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A READ and its reply, on a fresh connection.
fn served(card: &Served) -> bool {
    Client::connect(&card.socket, &card.name).and_then(|mut c| c.call(nbd::CMD_READ, 0, 0, 4096, &[])).is_ok_and(|r| r.error == 0)
}

/// A client that sends 64 READs of 32 MiB and reads no reply holds at
/// most its room of paced replies and a batch in the server: the server's
/// resident memory stays under 256 MB (it grew past 2 GB when replies
/// queued without bound) and another client is served meanwhile.
#[test]
fn a_client_that_reads_no_reply_leaves_the_servers_memory_bounded() {
    let card = Served::start("unread", &[]);
    let pid = card.child.id();
    let mut greedy = Client::connect(&card.socket, &card.name).unwrap();
    let sender = std::thread::spawn(move || {
        for h in 0..64 {
            if greedy.send(nbd::CMD_READ, 0, h, 0, nbd::PAYLOAD_BYTES_MAX, &[]).and_then(|_| greedy.push()).is_err() {
                break;
            }
        }
        greedy
    });
    std::thread::sleep(Duration::from_secs(3));
    let rss_mb = proc_status(pid, "VmRSS:") / 1024;
    assert!(rss_mb < 256, "the server holds {rss_mb} MB for a client that reads nothing");
    assert!(served(&card), "another client is served meanwhile");
    // The greedy client's sends are stuck behind its unread replies; it
    // goes, and the server lets its connection go.
    drop(card);
    let _ = sender.join();
}

/// `--max-connections` at once: the next is refused (closed before the
/// greeting, and logged), the others are served, and a place freed is
/// taken again.
#[test]
fn connections_past_the_cap_are_refused_and_the_rest_served() {
    let card = Served::start("cap", &["--max-connections", "4", "--timing", "none"]);
    // The start's probe of the socket holds a place until the server sees
    // it gone.
    let mut clients: Vec<Client> = Vec::new();
    eventually("four clients in", || {
        if let Ok(c) = Client::connect(&card.socket, &card.name) {
            clients.push(c);
        }
        clients.len() == 4
    });
    assert!(Client::connect(&card.socket, &card.name).is_err(), "the fifth is refused");
    for c in &mut clients {
        assert_eq!(c.call(nbd::CMD_READ, 0, 0, 4096, &[]).unwrap().error, 0);
    }
    clients.pop();
    eventually("a freed place is taken again", || served(&card));
    drop(clients);
    let log = card.stop();
    assert!(log.contains("NBD: connection refused: 4 connections already"), "{log}");
}

/// Handshakes left idle are cut off at `--handshake-timeout`, and 1,000
/// connections opened and closed leave the server serving, with as many
/// threads as before them.
#[test]
fn idle_handshakes_time_out_and_a_thousand_connections_leave_no_trace() {
    let card = Served::start("cycles", &["--handshake-timeout", "0.5", "--timing", "none"]);
    let pid = card.child.id();
    assert!(served(&card));
    std::thread::sleep(Duration::from_millis(200));
    let threads = proc_status(pid, "Threads:");
    let idle: Vec<UnixStream> = (0..16).map(|_| UnixStream::connect(&card.socket).unwrap()).collect();
    assert!(!served(&card), "16 idle handshakes fill the default cap");
    for mut s in idle {
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut all = Vec::new();
        s.read_to_end(&mut all).expect("the server closed the idle handshake before 5 s");
        assert_eq!(&all[..8], b"NBDMAGIC", "it was greeted");
    }
    // Closed as fast as they open, more than the cap may be in at once:
    // those past it are refused, which is no matter here.
    for i in 0..1000 {
        let mut s = UnixStream::connect(&card.socket).unwrap();
        if i % 2 == 0 {
            let _ = s.read_exact(&mut [0u8; 18]);
        }
    }
    eventually("a client is served after 1,000 connections", || served(&card));
    eventually("the threads are back to their number before", || proc_status(pid, "Threads:") <= threads);
    let log = card.stop();
    assert!(log.contains("the handshake took longer than 0.5 s"), "{log}");
}

/// The server started under a descriptor limit of 48: connections past
/// what it can take wait (accepting pauses, logged once), none ends the
/// server, and once they close it serves again.
#[test]
fn a_descriptor_limit_reached_pauses_accepting_and_the_server_goes_on() {
    let dir = Scratch::new("serve-nofile");
    std::fs::create_dir_all(&*dir).unwrap();
    let socket = dir.join("nbd.sock");
    let cmd = format!(
        "ulimit -n 48 && exec {} serve p420m --scale 8192 --timing none --max-connections 200 --store {} --unix {}",
        env!("CARGO_BIN_EXE_flashlab"),
        dir.join("store").display(),
        socket.display()
    );
    let mut child: Child = Command::new("sh").args(["-c", &cmd]).stderr(Stdio::piped()).spawn().unwrap();
    eventually("the server listens", || UnixStream::connect(&socket).is_ok());
    let mut held = Vec::new();
    for _ in 0..60 {
        let Ok(mut c) = UnixStream::connect(&socket) else { break };
        c.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        let greeted = c.read_exact(&mut [0u8; 18]).is_ok();
        held.push(c);
        if !greeted {
            break;
        }
    }
    assert!(held.len() < 60, "the limit was reached ({} connections greeted)", held.len());
    assert!(child.try_wait().unwrap().is_none(), "the server is still running");
    drop(held);
    eventually("the server serves again", || {
        Client::connect(&socket, "p420m").and_then(|mut c| c.call(nbd::CMD_READ, 0, 0, 4096, &[])).is_ok_and(|r| r.error == 0)
    });
    let _ = child.kill();
    let _ = child.wait();
    let mut log = String::new();
    child.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(log.contains("NBD: accepting paused"), "{log}");
    assert_eq!(log.matches("NBD: accepting paused").count(), 1, "said once, not once a try: {log}");
}

/// The control socket reads at most 64 KiB a line: a longer one gets an
/// error and its connection closes, the server goes on answering.
#[test]
fn a_control_line_without_end_is_cut_off_and_the_server_answers_on() {
    let card = Served::start("ctl-line", &["--timing", "none"]);
    let sock = card.dir.join("store").join("control.sock");
    let mut s = UnixStream::connect(&sock).unwrap();
    let chunk = vec![b'x'; 1 << 20];
    // The server stops reading at 64 KiB: the writes may fail then.
    for _ in 0..16 {
        if s.write_all(&chunk).is_err() {
            break;
        }
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    assert!(reply.contains("longer than 65536 bytes"), "{reply}");
    let (code, out, err) = common::flashlab(&["status", "--store", card.dir.join("store").to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
}

/// The modes of a directory's entries (and its own), by name.
fn modes(dir: &std::path::Path) -> Vec<(String, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = vec![(".".to_string(), std::fs::metadata(dir).unwrap().permissions().mode() & 0o777)];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        out.push((e.file_name().to_string_lossy().into_owned(), std::fs::symlink_metadata(e.path()).unwrap().permissions().mode() & 0o777));
    }
    out
}

/// Started with umask 000, a server's store, sockets and logs are its
/// owner's alone (with `--access group`, its group's too, never others');
/// a change at rest keeps the store's access.
#[test]
fn the_store_and_sockets_are_the_owners_whatever_the_umask() {
    for (access, allowed) in [("owner", 0o700), ("group", 0o770)] {
        let dir = Scratch::new(&format!("serve-umask-{access}"));
        std::fs::create_dir_all(&*dir).unwrap();
        let (store, socket, trace) = (dir.join("store"), dir.join("nbd.sock"), dir.join("trace.csv"));
        let cmd = format!(
            "umask 000 && exec {} serve p420m --scale 8192 --timing none --access {access} --store {} --unix {} --trace {}",
            env!("CARGO_BIN_EXE_flashlab"),
            store.display(),
            socket.display(),
            trace.display()
        );
        let mut child: Child = Command::new("sh").args(["-c", &cmd]).stderr(Stdio::piped()).spawn().unwrap();
        eventually("the server listens", || UnixStream::connect(&socket).is_ok());
        let mut found = modes(&store);
        found.extend(modes(&dir).into_iter().filter(|(n, _)| n == "nbd.sock" || n == "trace.csv"));
        assert!(found.len() >= 6, "{found:?}");
        for (name, mode) in &found {
            assert_eq!(mode & !allowed, 0, "--access {access}: {name} is {mode:o}");
            assert_eq!(mode & 0o060 != 0, access == "group", "--access {access}: {name} is {mode:o}");
        }
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        child.wait().unwrap();
        let out =
            Command::new("sh").args(["-c", &format!("umask 000 && exec {} beacon {} on", env!("CARGO_BIN_EXE_flashlab"), store.display())]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for (name, mode) in modes(&store) {
            assert_eq!(mode & !allowed, 0, "after a change at rest, --access {access}: {name} is {mode:o}");
        }
    }
}
