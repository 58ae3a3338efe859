//! NBD over TLS (the specification's STARTTLS, `doc/proto.md`, "TLS
//! support"): the server's credentials read from PEM files, and a
//! connection's TLS session as a socket whose reading and writing halves
//! run on two threads (the connection's own and its paced replies'
//! writer), as the plain sockets' clones do.
//!
//! The session sits behind a lock that neither half holds while it waits
//! on the socket: the reader reads ciphertext from its socket unlocked,
//! then decrypts it under the lock; the writer encrypts under the lock and
//! sends the records unlocked. Only the writer half takes records out of
//! the session, so they leave in the order they were made.

use crate::service::Socket;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// A server's TLS configuration, shared by its connections.
pub type Config = Arc<ServerConfig>;

/// Where the server's TLS credentials are: its certificate chain and key
/// (PEM), and the certificate authorities whose clients it admits, if it
/// asks clients for certificates.
#[derive(Debug, Clone)]
pub struct Credentials {
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client_ca: Option<PathBuf>,
}

/// Why the credentials cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{what} {path}: {why}")]
    File { what: &'static str, path: String, why: String },
    #[error("the TLS credentials do not go together: {0}")]
    Config(String),
}

fn file_error(what: &'static str, path: &Path, why: impl ToString) -> TlsError {
    TlsError::File { what, path: path.display().to_string(), why: why.to_string() }
}

/// The certificates of a PEM file, at least one.
fn certs(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs =
        CertificateDer::pem_file_iter(path).map_err(|e| file_error(what, path, e))?.collect::<Result<Vec<_>, _>>().map_err(|e| file_error(what, path, e))?;
    if certs.is_empty() {
        return Err(file_error(what, path, "no certificate in it (a PEM file with BEGIN CERTIFICATE blocks is expected)"));
    }
    Ok(certs)
}

impl Credentials {
    /// The server's TLS configuration: its certificate and key, and where
    /// `client_ca` is given, a client certificate signed by one of its
    /// authorities required of every client.
    pub fn config(&self) -> Result<Config, TlsError> {
        // ring: no post-quantum key exchange (hence rustls's deprecation
        // note), which no NBD client offers; aws-lc-rs would add a long C
        // build for it.
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain = certs("--tls-cert", &self.cert)?;
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| file_error("--tls-key", &self.key, e))?;
        let builder =
            ServerConfig::builder_with_provider(Arc::clone(&provider)).with_safe_default_protocol_versions().map_err(|e| TlsError::Config(e.to_string()))?;
        let builder = match &self.client_ca {
            None => builder.with_no_client_auth(),
            Some(path) => {
                let mut roots = RootCertStore::empty();
                for c in certs("--tls-client-ca", path)? {
                    roots.add(c).map_err(|e| file_error("--tls-client-ca", path, e))?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider).build().map_err(|e| TlsError::Config(e.to_string()))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let config = builder.with_single_cert(chain, key).map_err(|e| TlsError::Config(format!("--tls-cert and --tls-key: {e}")))?;
        Ok(Arc::new(config))
    }
}

/// A connection's TLS session over the socket `S`: read and written as
/// the socket is, its halves on two threads (`Socket::duplicate`).
pub struct TlsStream<S> {
    socket: S,
    session: Arc<Mutex<ServerConnection>>,
    /// Ciphertext read from the socket (the reading half's), and how much
    /// of it the session has taken.
    pending: Vec<u8>,
    taken: usize,
}

/// Ciphertext read from the socket at a time.
const RECORD_READ_BYTES: usize = 16 * 1024 + 256;

/// Plaintext encrypted at a time (four records).
const WRITE_CHUNK_BYTES: usize = 64 * 1024;

impl<S: Socket> TlsStream<S> {
    /// The server side of a TLS handshake on `socket` (the client asked for
    /// TLS and was told to go ahead), within the socket's time limit.
    pub fn accept(mut socket: S, config: &Config) -> io::Result<TlsStream<S>> {
        let mut session = ServerConnection::new(Arc::clone(config)).map_err(io::Error::other)?;
        while session.is_handshaking() {
            session.complete_io(&mut socket).map_err(|e| io::Error::new(e.kind(), format!("the TLS handshake failed: {e}")))?;
        }
        Ok(TlsStream { socket, session: Arc::new(Mutex::new(session)), pending: Vec::new(), taken: 0 })
    }

    fn session(&self) -> MutexGuard<'_, ServerConnection> {
        self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Ends the session: a close_notify after the last reply, so that the
    /// client knows the data ended where the server meant it to.
    pub fn close(&mut self) {
        let mut s = self.session();
        s.send_close_notify();
        let records = records(&mut s);
        drop(s);
        let _ = self.socket.write_all(&records);
        let _ = self.socket.flush();
    }
}

/// The records the session has made, taken out of it.
fn records(s: &mut ServerConnection) -> Vec<u8> {
    let mut out = Vec::new();
    while s.wants_write() {
        if s.write_tls(&mut out).is_err() {
            break;
        }
    }
    out
}

impl<S: Socket> Read for TlsStream<S> {
    /// Plaintext the session holds, else ciphertext read from the socket
    /// and given to the session as far as it takes it (it takes no more
    /// while its plaintext is not read: the rest waits in `pending`). The
    /// socket's end is the stream's: the NBD framing tells a cut request.
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut s = self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            while self.pending.len() > self.taken && s.wants_read() {
                let n = s.read_tls(&mut &self.pending[self.taken..])?;
                self.taken += n;
                s.process_new_packets().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}")))?;
            }
            match s.reader().read(out) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            drop(s);
            if self.taken < self.pending.len() {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "TLS: the session takes no more data and has none to give"));
            }
            self.pending.resize(RECORD_READ_BYTES, 0);
            self.taken = 0;
            let n = self.socket.read(&mut self.pending)?;
            self.pending.truncate(n);
            if n == 0 {
                return Ok(0);
            }
        }
    }
}

impl<S: Socket> Write for TlsStream<S> {
    /// Writes all of `data`, a record's worth of plaintext at a time: the
    /// session never holds more than one chunk's records.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        for chunk in data.chunks(WRITE_CHUNK_BYTES) {
            let mut rest = chunk;
            while !rest.is_empty() {
                let mut s = self.session();
                let n = s.writer().write(rest)?;
                let records = records(&mut s);
                drop(s);
                if n == 0 && records.is_empty() {
                    return Err(io::Error::new(io::ErrorKind::WriteZero, "the TLS session takes no more data"));
                }
                self.socket.write_all(&records)?;
                rest = &rest[n..];
            }
        }
        Ok(data.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.socket.flush()
    }
}

impl<S: Socket> Socket for TlsStream<S> {
    fn duplicate(&self) -> io::Result<Self> {
        Ok(TlsStream { socket: self.socket.duplicate()?, session: Arc::clone(&self.session), pending: Vec::new(), taken: 0 })
    }
    fn time_limit(&self, t: Option<Duration>) -> io::Result<()> {
        self.socket.time_limit(t)
    }
}

/// A connection's stream: the plain socket, or the TLS session the client
/// started over it.
pub enum Link<S> {
    Plain(S),
    Tls(TlsStream<S>),
}

impl<S: Socket> Link<S> {
    /// Ends a TLS session cleanly (nothing for a plain socket).
    pub fn close(&mut self) {
        if let Link::Tls(t) = self {
            t.close();
        }
    }
}

impl<S: Socket> Read for Link<S> {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Link::Plain(s) => s.read(b),
            Link::Tls(t) => t.read(b),
        }
    }
}

impl<S: Socket> Write for Link<S> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Link::Plain(s) => s.write(b),
            Link::Tls(t) => t.write(b),
        }
    }
    fn write_all(&mut self, b: &[u8]) -> io::Result<()> {
        match self {
            Link::Plain(s) => s.write_all(b),
            Link::Tls(t) => t.write(b).map(|_| ()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Link::Plain(s) => s.flush(),
            Link::Tls(t) => t.flush(),
        }
    }
}

impl<S: Socket> Socket for Link<S> {
    fn duplicate(&self) -> io::Result<Self> {
        Ok(match self {
            Link::Plain(s) => Link::Plain(s.duplicate()?),
            Link::Tls(t) => Link::Tls(t.duplicate()?),
        })
    }
    fn time_limit(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Link::Plain(s) => s.time_limit(t),
            Link::Tls(x) => x.time_limit(t),
        }
    }
}
