//! The control channel of a served card: a Unix socket in its store
//! (`control.sock`) carrying one request line and one reply line at a time
//! (the protocol: `control`), its server beside the NBD exports and its
//! client for the management commands.

use crate::control::{self, Control, ControlError};
use crate::service::{line_read, Gate, RefusalLog};
use crate::Server;
use anyhow::{Context, Result};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The control connections a served card answers at once (each monitor
/// keeps one open).
pub const CONNECTIONS_MAX: usize = 16;

/// The longest request line the control socket reads (a request is a few
/// hundred bytes of JSON).
pub const LINE_BYTES_MAX: usize = 64 * 1024;

/// The control socket of a card served from `store`.
pub fn socket_path(store: &Path) -> PathBuf {
    store.join("control.sock")
}

/// Whether a card is being served from `store` (its control socket
/// answers).
pub fn is_served(store: &Path) -> bool {
    UnixStream::connect(socket_path(store)).is_ok()
}

/// Sends one request line to the card served from `store`; its result.
pub fn request(store: &Path, request: &str) -> Result<Value> {
    let path = socket_path(store);
    let mut s = UnixStream::connect(&path).with_context(|| format!("{}: is a card served from this store?", path.display()))?;
    writeln!(s, "{request}")?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line)?;
    control::reply_parse(&line).map_err(anyhow::Error::msg)
}

/// Answers the control channel of `server`, served from `store`, on a
/// thread of its own (and one a connection, at most `CONNECTIONS_MAX`: a
/// monitor keeps its own open). The caller holds the store's lock, so a
/// socket file left there is a dead server's and is replaced. Its path.
pub fn serve(server: Arc<Server>, store: &Path, log: &Arc<RefusalLog>) -> Result<PathBuf> {
    let path = socket_path(store);
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).with_context(|| format!("control socket {}", path.display()))?;
    let gate = Gate::new("control", CONNECTIONS_MAX, Arc::clone(log));
    let log = Arc::clone(log);
    std::thread::Builder::new().name("control".into()).spawn(move || {
        let e = gate.serve(
            || listener.accept().map(|(s, _)| s),
            || {
                let (server, log) = (Arc::clone(&server), Arc::clone(&log));
                move |stream| answer(&server, stream, &log)
            },
        );
        eprintln!("flashlab serve: the control socket no longer accepts ({e}); the card is still served");
    })?;
    Ok(path)
}

/// Answers one connection's requests, a line each, until it closes or
/// sends a line longer than `LINE_BYTES_MAX` (logged).
fn answer(server: &Server, stream: UnixStream, log: &RefusalLog) {
    let Ok(mut w) = stream.try_clone() else { return };
    let mut r = BufReader::new(stream);
    let mut line = String::new();
    loop {
        match line_read(&mut r, &mut line, LINE_BYTES_MAX) {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                log.note("control", "connection closed", &e.to_string());
                let _ = writeln!(w, "{}", control::reply_err(&e.to_string()));
                return;
            }
        }
        let line = line.trim_end_matches(['\n', '\r']);
        let answer = Control::parse(line).map_err(ControlError::from).and_then(|c| {
            let r = server.control(c.clone());
            if let (Control::FailDie(ts), Ok(_)) = (&c, &r) {
                let what: Vec<String> = ts.iter().map(|t| t.describe(server.members())).collect();
                eprintln!("flashlab serve: control: {} failed; the rebuild starts", what.join(", "));
            }
            r
        });
        let reply = match answer {
            Ok(v) => control::reply_ok(v),
            Err(why) => control::reply_err(&why.to_string()),
        };
        if writeln!(w, "{reply}").is_err() {
            return;
        }
    }
}
