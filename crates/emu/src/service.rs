//! What every socket a served card answers on keeps to (the NBD exports,
//! the control socket, the metrics endpoint): a cap on its connections at
//! once, a thread of its own for each, a connection refused (never the
//! server ended) when the cap is reached or the system has no thread or
//! descriptor to give, accepting again once it has, read timeouts and a
//! cap on a line's length; and a log that says what it refused once per
//! cause, at most every `LOG_EVERY`.

use std::collections::HashMap;
use std::io::{self, BufRead};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the exports' socket allows its clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Connections at once (handshakes included); more are refused.
    pub connections: usize,
    /// How long a client may take over its handshake.
    pub handshake: Duration,
    /// How long a connection may wait for a request, or for its client to
    /// take a reply, before it is closed (`None`: for ever).
    pub idle: Option<Duration>,
}

impl Limits {
    /// The default cap on connections at once.
    pub const CONNECTIONS_DEFAULT: usize = 16;
    /// The default time a handshake may take (qemu-nbd's default
    /// handshake limit is the same 10 s).
    pub const HANDSHAKE_DEFAULT: Duration = Duration::from_secs(10);
}

/// How often the log repeats a cause of refusal (with how many more it
/// met meanwhile).
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// How long accepting waits before it tries again when the system has no
/// descriptor or memory to give (the connection waits in the backlog).
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// A connected stream socket: read and written, cloned for a writer, its
/// reads and writes given a time limit.
pub trait Socket: io::Read + io::Write + Send + Sized + 'static {
    fn duplicate(&self) -> io::Result<Self>;
    /// Reads and writes that wait longer than `t` fail (`None`: never).
    fn time_limit(&self, t: Option<Duration>) -> io::Result<()>;
}

impl Socket for std::os::unix::net::UnixStream {
    fn duplicate(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn time_limit(&self, t: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(t)?;
        self.set_write_timeout(t)
    }
}

impl Socket for std::net::TcpStream {
    fn duplicate(&self) -> io::Result<Self> {
        self.try_clone()
    }
    fn time_limit(&self, t: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(t)?;
        self.set_write_timeout(t)
    }
}

/// A log of refusals: a cause is said at once, then at most every
/// `LOG_EVERY`, with the count met since it was last said.
#[derive(Default)]
pub struct RefusalLog {
    causes: Mutex<HashMap<String, (Instant, u64)>>,
}

impl RefusalLog {
    /// Notes a refusal of `cause` (a few words: its kind), `detail` said
    /// with it; returns whether it was said now.
    pub fn note(&self, who: &str, cause: &str, detail: &str) -> bool {
        let mut causes = self.causes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        let key = format!("{who}: {cause}");
        let e = causes.entry(key.clone()).or_insert((now - LOG_EVERY, 0));
        if now.duration_since(e.0) < LOG_EVERY {
            e.1 += 1;
            return false;
        }
        let since = match e.1 {
            0 => String::new(),
            n => format!(" ({n} more like it in the last {} s)", now.duration_since(e.0).as_secs()),
        };
        *e = (now, 0);
        eprintln!("flashlab serve: {key}: {detail}{since}");
        true
    }
}

/// The connections of one socket: at most `max` at once, each on a thread
/// of its own.
pub struct Gate {
    /// What the socket is, for the log ("NBD", "control", "metrics").
    who: &'static str,
    max: usize,
    active: Arc<AtomicUsize>,
    log: Arc<RefusalLog>,
    /// Each connection thread's stack.
    stack_bytes: usize,
}

/// A connection thread's stack: Rust's default for spawned threads.
pub const CONNECTION_STACK_BYTES: usize = 2 << 20;

/// A connection counted at its gate while it lives.
struct Pass(Arc<AtomicUsize>);

impl Drop for Pass {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Gate {
    pub fn new(who: &'static str, max: usize, log: Arc<RefusalLog>) -> Gate {
        assert!(max >= 1, "a gate lets a connection in");
        Gate { who, max, active: Arc::new(AtomicUsize::new(0)), log, stack_bytes: CONNECTION_STACK_BYTES }
    }

    /// Connections in now.
    pub fn active(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }

    /// Runs `work` on `stream` on a thread of its own, or refuses the
    /// connection (closes it, and logs why) when `max` are in or the
    /// system gives no thread.
    pub fn admit<S: Send + 'static>(&self, stream: S, work: impl FnOnce(S) + Send + 'static) {
        if self.active.fetch_add(1, Ordering::SeqCst) >= self.max {
            self.active.fetch_sub(1, Ordering::SeqCst);
            self.log.note(self.who, "connection refused", &format!("{} connections already, the most at once", self.max));
            return;
        }
        let pass = Pass(Arc::clone(&self.active));
        let thread = std::thread::Builder::new().name(format!("{}-conn", self.who.to_lowercase())).stack_size(self.stack_bytes);
        let spawned = thread.spawn(move || {
            let _pass = pass;
            work(stream)
        });
        if let Err(e) = spawned {
            // The closure, with the stream and the pass, is dropped: the
            // connection is closed and uncounted.
            self.log.note(self.who, "connection refused", &format!("no thread for it ({e})"));
        }
    }

    /// Accepts connections with `accept` and admits each, for as long as
    /// the socket lasts: a failure to accept one (no descriptor, no
    /// memory, a connection reset before it was taken) is logged and
    /// waited out; only a socket that can no longer accept ends it (its
    /// error).
    pub fn serve<S: Send + 'static, W: FnOnce(S) + Send + 'static>(&self, mut accept: impl FnMut() -> io::Result<S>, work: impl Fn() -> W) -> io::Error {
        loop {
            match accept() {
                Ok(s) => self.admit(s, work()),
                Err(e) => match accept_error(&e) {
                    AcceptError::Again => {}
                    AcceptError::Wait => {
                        self.log.note(self.who, "accepting paused", &format!("{e}; trying again every {} ms", ACCEPT_BACKOFF.as_millis()));
                        std::thread::sleep(ACCEPT_BACKOFF);
                    }
                    AcceptError::Fatal => return e,
                },
            }
        }
    }
}

/// What a failed accept means for the socket.
#[derive(Debug, PartialEq, Eq)]
enum AcceptError {
    /// The one connection is gone (reset, interrupted): accept the next.
    Again,
    /// The system is short of descriptors or memory: wait, then again.
    Wait,
    /// The socket itself is broken.
    Fatal,
}

fn accept_error(e: &io::Error) -> AcceptError {
    const EBADF: i32 = 9;
    const EINVAL: i32 = 22;
    const ENOTSOCK: i32 = 88;
    const EOPNOTSUPP: i32 = 95;
    match e.raw_os_error() {
        Some(EBADF | EINVAL | ENOTSOCK | EOPNOTSUPP) => AcceptError::Fatal,
        _ if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset | io::ErrorKind::WouldBlock) => {
            AcceptError::Again
        }
        _ => AcceptError::Wait,
    }
}

/// Reads a line of at most `max` bytes (its end of line included) into
/// `line`, cleared first: `Ok(false)` at the end of the stream, an error
/// (InvalidData) for a longer line or one that is not UTF-8; nothing more
/// than `max` bytes of it is ever held.
pub fn line_read(r: &mut impl BufRead, line: &mut String, max: usize) -> io::Result<bool> {
    line.clear();
    let mut bytes = Vec::new();
    loop {
        let available = r.fill_buf()?;
        if available.is_empty() {
            if bytes.is_empty() {
                return Ok(false);
            }
            break;
        }
        let (take, end) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if bytes.len() + take > max {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("a line longer than {max} bytes")));
        }
        bytes.extend_from_slice(&available[..take]);
        r.consume(take);
        if end {
            break;
        }
    }
    *line = String::from_utf8(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a line that is not UTF-8"))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_gate_refuses_past_its_cap_and_counts_a_connection_out_when_it_ends() {
        let gate = Gate::new("test", 2, Arc::new(RefusalLog::default()));
        let (go, wait) = mpsc::channel::<()>();
        let wait = Arc::new(Mutex::new(wait));
        let (ran_tx, ran) = mpsc::channel::<u32>();
        for i in 0..3 {
            let (wait, ran_tx) = (Arc::clone(&wait), ran_tx.clone());
            gate.admit(i, move |i| {
                ran_tx.send(i).unwrap();
                let _ = wait.lock().unwrap().recv();
            });
        }
        let mut got = vec![ran.recv().unwrap(), ran.recv().unwrap()];
        got.sort();
        assert_eq!(got, [0, 1], "the third was refused");
        assert!(ran.recv_timeout(Duration::from_millis(50)).is_err());
        assert_eq!(gate.active(), 2);
        go.send(()).unwrap();
        go.send(()).unwrap();
        let t = Instant::now();
        while gate.active() > 0 {
            assert!(t.elapsed() < Duration::from_secs(10), "the connections ended");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// A thread the system will not give (here a stack no address space
    /// holds; in service, a thread limit reached) refuses that one
    /// connection: it is closed and counted out, and the gate admits the
    /// next once threads can be had.
    #[test]
    fn a_connection_the_system_gives_no_thread_is_refused_and_the_next_admitted() {
        let mut gate = Gate::new("test", 2, Arc::new(RefusalLog::default()));
        gate.stack_bytes = usize::MAX / 2;
        let (ran_tx, ran) = mpsc::channel::<u32>();
        let (closed_tx, closed) = mpsc::channel::<u32>();
        /// A stream that says when it is dropped (closed).
        struct Stream(u32, mpsc::Sender<u32>);
        impl Drop for Stream {
            fn drop(&mut self) {
                let _ = self.1.send(self.0);
            }
        }
        for i in 0..3 {
            let tx = ran_tx.clone();
            gate.admit(Stream(i, closed_tx.clone()), move |s| tx.send(s.0).unwrap());
        }
        assert_eq!(gate.active(), 0, "refused connections are counted out");
        assert_eq!((0..3).map(|_| closed.recv_timeout(Duration::from_secs(1)).unwrap()).collect::<Vec<_>>(), [0, 1, 2], "each refused stream is closed");
        assert!(ran.try_recv().is_err(), "no work ran");
        gate.stack_bytes = CONNECTION_STACK_BYTES;
        let tx = ran_tx.clone();
        gate.admit(Stream(3, closed_tx), move |s| tx.send(s.0).unwrap());
        assert_eq!(ran.recv_timeout(Duration::from_secs(10)).unwrap(), 3);
    }

    #[test]
    fn accept_errors_are_waited_out_unless_the_socket_is_broken() {
        assert_eq!(accept_error(&io::Error::from_raw_os_error(24)), AcceptError::Wait, "EMFILE");
        assert_eq!(accept_error(&io::Error::from_raw_os_error(23)), AcceptError::Wait, "ENFILE");
        assert_eq!(accept_error(&io::Error::from_raw_os_error(12)), AcceptError::Wait, "ENOMEM");
        assert_eq!(accept_error(&io::Error::from_raw_os_error(103)), AcceptError::Again, "ECONNABORTED");
        assert_eq!(accept_error(&io::Error::from_raw_os_error(4)), AcceptError::Again, "EINTR");
        assert_eq!(accept_error(&io::Error::from_raw_os_error(9)), AcceptError::Fatal, "EBADF");
    }

    #[test]
    fn serving_goes_on_after_accept_fails_and_ends_when_the_socket_breaks() {
        let gate = Gate::new("test", 4, Arc::new(RefusalLog::default()));
        let mut tries =
            vec![Err(io::Error::from_raw_os_error(24)), Ok(7u32), Err(io::Error::from_raw_os_error(103)), Ok(8), Err(io::Error::from_raw_os_error(9))]
                .into_iter();
        let (tx, rx) = mpsc::channel();
        let e = gate.serve(
            || tries.next().unwrap(),
            || {
                let tx = tx.clone();
                move |s| tx.send(s).unwrap()
            },
        );
        assert_eq!(e.raw_os_error(), Some(9));
        let mut got = vec![rx.recv().unwrap(), rx.recv().unwrap()];
        got.sort();
        assert_eq!(got, [7, 8]);
    }

    #[test]
    fn a_line_past_its_cap_is_refused_without_being_held() {
        let mut line = String::new();
        let mut r = io::BufReader::with_capacity(4, &b"short\nthis one is far too long\nlast"[..]);
        assert!(line_read(&mut r, &mut line, 16).unwrap());
        assert_eq!(line, "short\n");
        let e = line_read(&mut r, &mut line, 16).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("longer than 16"), "{e}");
        let mut r = io::BufReader::new(&b"last"[..]);
        assert!(line_read(&mut r, &mut line, 16).unwrap());
        assert_eq!(line, "last");
        assert!(!line_read(&mut r, &mut line, 16).unwrap());
        let mut r = io::BufReader::new(&b"\xff\n"[..]);
        assert_eq!(line_read(&mut r, &mut line, 16).unwrap_err().kind(), io::ErrorKind::InvalidData);
    }

    #[test]
    fn a_cause_is_said_once_then_at_most_every_interval() {
        let log = RefusalLog::default();
        assert!(log.note("test", "refused", "why"));
        assert!(!log.note("test", "refused", "why"));
        assert!(log.note("test", "another cause", "why"));
    }
}
