//! Where a card is served: a Unix socket or a TCP address, bound at once
//! (so that an address in use is refused before the store is touched) and
//! listening only once the card can answer (so that a client that
//! connects finds it ready; a Unix socket is bound beside its path and
//! given its name only then). Each connection runs on a thread of its
//! own, as many at once as `Limits` allow (`service::Gate`).

use crate::server::Ended;
use crate::service::{Gate, RefusalLog};
use crate::Server;
use anyhow::{bail, Context, Result};
use socket2::{Domain, SockAddr, Socket, Type};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::service::Limits;

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
    /// Where set, every client must start TLS before anything else.
    tls: Option<crate::tls::Config>,
}

enum Bound {
    Unix(SocketFile),
    Tcp(String),
}

/// A socket file this process bound: at `bound` until it listens, then at
/// `path`; removed when dropped.
struct SocketFile {
    path: PathBuf,
    bound: PathBuf,
}

impl SocketFile {
    /// Gives the socket its name: clients find it once it listens.
    fn name(&mut self) -> Result<()> {
        std::fs::rename(&self.bound, &self.path).with_context(|| format!("naming the socket {}", self.path.display()))?;
        self.bound = self.path.clone();
        Ok(())
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.bound);
    }
}

/// Where a Unix socket for `path` is bound until it listens: beside it,
/// named for this process.
fn bound_beside(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".binding-{}", std::process::id()));
    path.with_file_name(name)
}

impl Listener {
    /// Binds `at`. A socket file another server answers on is never taken
    /// over, nor a path that is not a socket; a socket file nobody answers
    /// on (a server that was killed) is replaced.
    pub fn bind(at: &Address) -> Result<Listener> {
        match at {
            Address::Unix(path) => {
                socket_free(path, "--unix")?;
                let bound = bound_beside(path);
                let _ = std::fs::remove_file(&bound);
                let socket = Socket::new(Domain::UNIX, Type::STREAM, None).context("a Unix socket")?;
                socket.bind(&SockAddr::unix(&bound)?).with_context(|| format!("--unix {}", path.display()))?;
                Ok(Listener { socket, at: Bound::Unix(SocketFile { path: path.clone(), bound }), tls: None })
            }
            Address::Tcp(addr) => {
                let sa = resolve(addr)?;
                let socket = Socket::new(Domain::for_address(sa), Type::STREAM, None).context("a TCP socket")?;
                socket.set_reuse_address(true)?;
                socket.bind(&sa.into()).with_context(|| format!("--listen {addr}"))?;
                Ok(Listener { socket, at: Bound::Tcp(addr.clone()), tls: None })
            }
        }
    }

    /// Requires every client to start TLS (NBD's STARTTLS) with `config`
    /// before anything else.
    pub fn require_tls(&mut self, config: crate::tls::Config) {
        self.tls = Some(config);
    }

    /// "unix:PATH" or the TCP address.
    pub fn describe(&self) -> String {
        match &self.at {
            Bound::Unix(f) => format!("unix:{}", f.path.display()),
            Bound::Tcp(addr) => addr.clone(),
        }
    }

    /// The socket file, for a Unix socket.
    pub fn socket_path(&self) -> Option<PathBuf> {
        match &self.at {
            Bound::Unix(f) => Some(f.path.clone()),
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
                let s = if self.tls.is_some() { "s" } else { "" };
                let uri = match &self.at {
                    Bound::Unix(f) => format!("nbd{s}+unix:///{}?socket={}", e.name, f.path.display()),
                    Bound::Tcp(addr) => format!("nbd{s}://{addr}/{}", e.name),
                };
                format!("export '{}', {:.2} GB, {} on {at} ({uri})", e.name, e.size_bytes as f64 / 1e9, e.description)
            })
            .collect()
    }

    /// Listens, tells `listening` each export (`exports_text`), then
    /// serves connections within `limits` until the socket breaks (a
    /// connection refused, or accepting that fails for want of
    /// descriptors, is logged and the server goes on).
    pub fn serve(mut self, server: &Arc<Server>, limits: Limits, log: &Arc<RefusalLog>, listening: impl FnOnce(&[String])) -> Result<()> {
        self.socket.listen(128).with_context(|| format!("listening on {}", self.describe()))?;
        if let Bound::Unix(f) = &mut self.at {
            f.name()?;
        }
        listening(&self.exports_text(server));
        let gate = Gate::new("NBD", limits.connections, Arc::clone(log));
        let e = match self.at {
            Bound::Unix(_file) => {
                let l: std::os::unix::net::UnixListener = self.socket.into();
                gate.serve(|| l.accept().map(|(s, _)| s), || connection(server, limits, &self.tls, log))
            }
            Bound::Tcp(_) => {
                let l: std::net::TcpListener = self.socket.into();
                let accept = || {
                    let (s, _) = l.accept()?;
                    let _ = s.set_nodelay(true);
                    Ok(s)
                };
                gate.serve(accept, || connection(server, limits, &self.tls, log))
            }
        };
        Err(e).context("accepting connections")
    }
}

/// The address `addr` ("HOST:PORT") names, its first where it names
/// several.
pub fn resolve(addr: &str) -> Result<std::net::SocketAddr> {
    use std::net::ToSocketAddrs;
    addr.to_socket_addrs().with_context(|| format!("--listen {addr}"))?.next().with_context(|| format!("--listen {addr}: no address"))
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

/// A connection's work (on a thread of its own): served, then logged
/// with why it ended; a broken client ends only its own connection. One
/// that ends in its handshake is logged as a refusal (once per cause, at
/// most every `service::LOG_EVERY`): a scan of the port does not flood
/// the log.
fn connection<S: crate::service::Socket>(
    server: &Arc<Server>,
    limits: Limits,
    tls: &Option<crate::tls::Config>,
    log: &Arc<RefusalLog>,
) -> impl FnOnce(S) + Send + 'static {
    let (server, tls, log) = (Arc::clone(server), tls.clone(), Arc::clone(log));
    move |stream| {
        let why = match server.connection(stream, limits, tls.as_ref()) {
            Ended::Handshake(Ok(())) => return,
            Ended::Handshake(Err(e)) => {
                log.note("NBD", "handshake not finished", &e.to_string());
                return;
            }
            Ended::Served(Ok(())) => "client done".to_string(),
            Ended::Served(Err(e)) => e.to_string(),
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
    }
}
