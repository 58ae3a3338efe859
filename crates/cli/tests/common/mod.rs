//! Helpers the binary's integration tests share.

#[allow(dead_code)] // not every test binary renders a report
pub mod chromium;

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Runs `flashlab` with `args`: (exit status, standard output, standard error).
#[allow(dead_code)] // not every test binary runs the command line
pub fn flashlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flashlab")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// The smallest whole review, in a second: the P420m's 4K profile at
/// scale 1024, one round, a short SNIA preconditioning; into `out`.
#[allow(dead_code)] // not every test binary reviews
pub const SMALL_REVIEW: [&str; 15] = [
    "review",
    "p420m",
    "--profiles",
    "4k",
    "--scale",
    "1024",
    "--rounds-4k",
    "1",
    "--precondition-min",
    "0.3",
    "--precondition-max",
    "0.5",
    "--snia-precondition",
    "-q",
    "--out",
];

/// Runs `SMALL_REVIEW` into `out`.
#[allow(dead_code)]
pub fn small_review(out: &Path) -> (i32, String, String) {
    let mut args = SMALL_REVIEW.to_vec();
    args.push(out.to_str().unwrap());
    flashlab(&args)
}

/// Bad input: exit status 2, the problem named, no panic.
#[allow(dead_code)]
pub fn refused(args: &[&str], needle: &str) {
    let (code, _, err) = flashlab(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: expected '{needle}' in: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
}

/// An external program a test needs, by name; a missing one fails the test
/// naming the Debian package that has it (`.ci/run` installs them).
#[allow(dead_code)] // not every test binary runs an external program
pub fn tool(name: &str, package: &str) -> String {
    let ok = Command::new("sh").args(["-c", &format!("command -v {name}")]).output().map(|o| o.status.success()).unwrap_or(false);
    assert!(ok, "{name} is needed by this test: install Debian's package '{package}' (.ci/run does)");
    name.to_string()
}

/// A scratch path under the temporary directory, unique to this test
/// process. Dropped, it is removed (a directory or a file), unless the test
/// is failing: a failure's files are left to be looked at.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("flashlab-test-{}-{name}", std::process::id()));
        remove(&p);
        Scratch(p)
    }
}

fn remove(p: &Path) {
    let _ = std::fs::remove_dir_all(p).or_else(|_| std::fs::remove_file(p));
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            remove(&self.0);
        }
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

/// A served card, stopped when dropped.
#[allow(dead_code)] // not every test binary serves a card
pub struct Served {
    pub child: Child,
    pub socket: PathBuf,
    pub name: String,
    pub dir: Scratch,
    /// The catalog id or profile file served.
    device: String,
    extra: Vec<String>,
}

#[allow(dead_code)]
impl Served {
    /// The P420m at scale 8192: a 170 MB export, small enough to be driven
    /// into GC in seconds.
    /// `extra`: more `serve` arguments.
    pub fn start(tag: &str, extra: &[&str]) -> Served {
        let dir = Scratch::new(&format!("serve-{tag}"));
        std::fs::create_dir_all(&*dir).unwrap();
        Served::start_in(dir, "p420m".into(), extra)
    }

    /// As `start`, on the P420m's profile as `edit` leaves it (written to
    /// the scratch directory and served from there; its export keeps the
    /// name `p420m`).
    pub fn start_profile(tag: &str, edit: impl FnOnce(&mut String), extra: &[&str]) -> Served {
        let dir = Scratch::new(&format!("serve-{tag}"));
        std::fs::create_dir_all(&*dir).unwrap();
        let mut profile = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../devices/p420m.toml")).unwrap();
        edit(&mut profile);
        let device = dir.join("p420m.toml");
        std::fs::write(&device, profile).unwrap();
        let device = device.to_str().unwrap().to_string();
        Served::start_in(dir, device, extra)
    }

    /// As `start`, its store at `dir/store` (made by the caller: a small
    /// file system mounted there, say).
    pub fn start_in(dir: Scratch, device: String, extra: &[&str]) -> Served {
        let socket = dir.join("nbd.sock");
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let child = Served::spawn(&dir, &device, &socket, &extra);
        let mut s = Served { child, socket, name: "p420m".into(), dir, device, extra };
        s.wait_ready();
        s
    }

    fn spawn(dir: &Path, device: &str, socket: &Path, extra: &[String]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_flashlab"))
            .args(["serve", device, "--scale", "8192", "--store"])
            .arg(dir.join("store"))
            .arg("--unix")
            .arg(socket)
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// A power cut: `kill -9`, then the server started again on the same
    /// store. Returns what the first server logged.
    pub fn cut_and_restart(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut log = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut log);
        }
        self.child = Served::spawn(&self.dir, &self.device, &self.socket, &self.extra);
        self.wait_ready();
        log
    }

    pub fn wait_ready(&mut self) {
        for _ in 0..600 {
            if UnixStream::connect(&self.socket).is_ok() {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let mut err = String::new();
                self.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
                panic!("flashlab serve ended ({status}): {err}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("flashlab serve did not listen within 30 s");
    }

    /// A clean stop (SIGTERM): the exit status and the log.
    pub fn stop_clean(&mut self) -> (i32, String) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let status = self.child.wait().unwrap();
        let mut log = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut log);
        }
        (status.code().unwrap_or(-1), log)
    }

    /// A clean stop, then the server started again on the same store.
    pub fn stop_clean_and_restart(&mut self) -> (i32, String) {
        let stopped = self.stop_clean();
        self.start_again();
        stopped
    }

    /// The server started again on the same store, with the same
    /// arguments, after it stopped.
    pub fn start_again(&mut self) {
        self.child = Served::spawn(&self.dir, &self.device, &self.socket, &self.extra);
        self.wait_ready();
    }

    /// Stops the server; what it logged.
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut log = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut log);
        }
        log
    }

    pub fn uri(&self) -> String {
        format!("nbd+unix:///{}?socket={}", self.name, self.socket.display())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
