//! Where a card is served: a Unix socket or a TCP address, bound at once
//! (so that an address in use is refused before the store is touched) and
//! listening only once the card can answer (so that a client that
//! connects finds it ready). Each connection runs on a thread of its own.

use crate::Server;
use anyhow::{bail, Context, Result};
use socket2::{Domain, SockAddr, Socket, Type};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where to serve.
#[derive(Debug, Clone)]
pub enum Address {
    Unix(PathBuf),
    Tcp(String),
}

/// A bound socket, not yet listening. A Unix socket's file is removed
/// when the listener goes.
pub struct Listener {
    socket: Socket,
    at: Bound,
}

enum Bound {
    Unix(SocketFile),
    Tcp(String),
}

/// A socket file this process bound, removed when dropped.
struct SocketFile(PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

impl Listener {
    /// Binds `at`. A socket file another server answers on is never taken
    /// over, nor a path that is not a socket; a socket file nobody answers
    /// on (a server that was killed) is replaced.
    pub fn bind(at: &Address) -> Result<Listener> {
        match at {
            Address::Unix(path) => {
                socket_free(path, "--unix")?;
                let socket = Socket::new(Domain::UNIX, Type::STREAM, None).context("a Unix socket")?;
                socket.bind(&SockAddr::unix(path)?).with_context(|| format!("--unix {}", path.display()))?;
                Ok(Listener { socket, at: Bound::Unix(SocketFile(path.clone())) })
            }
            Address::Tcp(addr) => {
                use std::net::ToSocketAddrs;
                let sa = addr.to_socket_addrs().with_context(|| format!("--listen {addr}"))?.next().with_context(|| format!("--listen {addr}: no address"))?;
                let socket = Socket::new(Domain::for_address(sa), Type::STREAM, None).context("a TCP socket")?;
                socket.set_reuse_address(true)?;
                socket.bind(&sa.into()).with_context(|| format!("--listen {addr}"))?;
                Ok(Listener { socket, at: Bound::Tcp(addr.clone()) })
            }
        }
    }

    /// "unix:PATH" or the TCP address.
    pub fn describe(&self) -> String {
        match &self.at {
            Bound::Unix(f) => format!("unix:{}", f.0.display()),
            Bound::Tcp(addr) => addr.clone(),
        }
    }

    /// The socket file, for a Unix socket.
    pub fn socket_path(&self) -> Option<PathBuf> {
        match &self.at {
            Bound::Unix(f) => Some(f.0.clone()),
            Bound::Tcp(..) => None,
        }
    }

    /// Each export of `server` as a client names it: "export 'NAME', SIZE,
    /// what it is, on ADDRESS (its NBD URI)".
    pub fn exports_text(&self, server: &Server) -> Vec<String> {
        let at = self.describe();
        server
            .exports()
            .into_iter()
            .map(|e| {
                let uri = match &self.at {
                    Bound::Unix(f) => format!("nbd+unix:///{}?socket={}", e.name, f.0.display()),
                    Bound::Tcp(addr) => format!("nbd://{addr}/{}", e.name),
                };
                format!("export '{}', {:.2} GB, {} on {at} ({uri})", e.name, e.size_bytes as f64 / 1e9, e.description)
            })
            .collect()
    }

    /// Listens, tells `listening` each export (`exports_text`), then
    /// serves connections until accepting fails.
    pub fn serve(self, server: &Arc<Server>, listening: impl FnOnce(&[String])) -> Result<()> {
        self.socket.listen(128).with_context(|| format!("listening on {}", self.describe()))?;
        listening(&self.exports_text(server));
        match self.at {
            Bound::Unix(_file) => {
                let l: std::os::unix::net::UnixListener = self.socket.into();
                for stream in l.incoming() {
                    let stream = stream.context("accepting a connection")?;
                    let writer = stream.try_clone().context("a connection's writer")?;
                    spawn(server, stream, writer);
                }
            }
            Bound::Tcp(_) => {
                let l: std::net::TcpListener = self.socket.into();
                for stream in l.incoming() {
                    let stream = stream.context("accepting a connection")?;
                    let _ = stream.set_nodelay(true);
                    let writer = stream.try_clone().context("a connection's writer")?;
                    spawn(server, stream, writer);
                }
            }
        }
        Ok(())
    }
}

/// Makes way for a socket at `path`: nothing there, or a socket file no
/// server answers on (removed). A socket a server answers on, or a file
/// that is not a socket, is refused by name (`what`: the option that gave
/// the path).
pub fn socket_free(path: &Path, what: &str) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else { return Ok(()) };
    if !meta.file_type().is_socket() {
        bail!("{what} {}: the path exists and is not a socket; choose another path", path.display());
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        bail!("{what} {}: a server answers on this socket; stop it first, or choose another path", path.display());
    }
    std::fs::remove_file(path).with_context(|| format!("{what} {}: removing a socket no server answers on", path.display()))
}

/// A connection on a thread of its own; a broken client is logged and
/// ends only its own connection.
fn spawn<S: std::io::Read + std::io::Write + Send + 'static>(server: &Arc<Server>, stream: S, writer: S) {
    let server = Arc::clone(server);
    std::thread::spawn(move || {
        let why = match server.connection(stream, writer) {
            Ok(()) => "client done".to_string(),
            Err(e) => e.to_string(),
        };
        let card = server.counters().map_or(String::new(), |c| {
            format!(
                "; card: {} host slots written, {} read, {} GC moves, {} erases, WA {:.2} [simulated]",
                c.host_slots_written,
                c.host_slots_read,
                c.gc_slots_moved,
                c.block_erases,
                c.wa_since(&card::DeviceCounters::default())
            )
        });
        let late = if server.lateness.counts().iter().sum::<u64>() > 0 { format!("; {}", server.lateness.summary()) } else { String::new() };
        eprintln!("flashlab serve: connection closed ({why}){card}{late}");
    });
}
