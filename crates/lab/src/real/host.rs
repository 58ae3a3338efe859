//! Programs on this host that a procedure starts and must stop: a served
//! card, nbdfuse, a database server, a benchmark client. Each runs in its
//! own process group, so a terminal's Ctrl-C reaches only flashlab, which
//! stops them in order; each gets SIGTERM if flashlab dies first. Their
//! output goes to a log file, whose tail an error quotes. Waits poll the
//! lab's stop request (`interrupt`) and end early when it comes.

use crate::runs::interrupt;
use std::fmt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Why a step on the host did not complete.
#[derive(Debug, Clone, PartialEq)]
pub enum HostError {
    /// A stop was asked (Ctrl-C, SIGTERM) during the step named.
    Interrupted(String),
    /// A program this needs is not installed.
    Missing { program: String, package: String },
    /// A step failed: what, why, and the tail of its log.
    Failed { what: String, why: String, log: String },
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Interrupted(what) => write!(f, "interrupted during {what}"),
            HostError::Missing { program, package } => write!(f, "{program} is not installed (Debian's package {package})"),
            HostError::Failed { what, why, log } if log.is_empty() => write!(f, "{what}: {why}"),
            HostError::Failed { what, why, log } => write!(f, "{what}: {why}; the end of its log:\n{log}"),
        }
    }
}

impl std::error::Error for HostError {}

/// How often waits look at the program and at the stop request.
const POLL: Duration = Duration::from_millis(50);

/// The last lines of a log file that say "error" (any case), or its last
/// lines if none does, for an error message.
pub fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut lines: Vec<&str> = text.lines().filter(|l| l.to_ascii_lowercase().contains("error")).collect();
    if lines.is_empty() {
        lines = text.lines().filter(|l| !l.trim().is_empty()).collect();
    }
    lines[lines.len().saturating_sub(8)..].join("\n")
}

/// Where `program` is on PATH.
pub fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}

/// `program` is installed, or an error naming Debian's package for it.
pub fn need(program: &str, package: &str) -> Result<(), HostError> {
    match which(program) {
        Some(_) => Ok(()),
        None => Err(HostError::Missing { program: program.into(), package: package.into() }),
    }
}

/// A program started by a procedure and not yet stopped.
pub struct Process {
    pub name: String,
    child: Option<Child>,
    pub log: PathBuf,
}

impl Process {
    /// Starts `cmd` in its own process group, its output to `log`.
    pub fn start(name: &str, mut cmd: Command, log: &Path) -> Result<Process, HostError> {
        let failed = |why: String| HostError::Failed { what: format!("starting {name}"), why, log: String::new() };
        let out = std::fs::File::create(log).map_err(|e| failed(format!("{}: {e}", log.display())))?;
        let err = out.try_clone().map_err(|e| failed(e.to_string()))?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err).process_group(0);
        // SAFETY: prctl is async-signal-safe; nothing else runs between
        // fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            })
        };
        let child = cmd.spawn().map_err(|e| failed(format!("{:?}: {e}", cmd.get_program())))?;
        Ok(Process { name: name.into(), child: Some(child), log: log.to_path_buf() })
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether it has ended, and how.
    pub fn ended(&mut self) -> Option<ExitStatus> {
        self.child.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }

    /// An error for a program that ended when it should not have.
    pub fn died(&mut self, during: &str) -> HostError {
        let how = self.ended().map(describe).unwrap_or_else(|| "stopped answering".into());
        HostError::Failed { what: format!("{} during {during}", self.name), why: how, log: log_tail(&self.log) }
    }

    /// Polls `ready` until it holds, the program ends (an error quoting
    /// its log), a stop is asked, or `timeout` passes.
    pub fn wait_ready(&mut self, what: &str, timeout: Duration, mut ready: impl FnMut() -> bool) -> Result<(), HostError> {
        let start = Instant::now();
        loop {
            if ready() {
                return Ok(());
            }
            if self.ended().is_some() {
                return Err(self.died(what));
            }
            if interrupt::asked() {
                return Err(HostError::Interrupted(what.into()));
            }
            if start.elapsed() > timeout {
                return Err(HostError::Failed { what: what.into(), why: format!("not ready after {} s", timeout.as_secs()), log: log_tail(&self.log) });
            }
            std::thread::sleep(POLL);
        }
    }

    /// Waits for it to end by itself; a stop asked meanwhile stops it
    /// (SIGTERM, then SIGKILL after `grace`) and is an error.
    pub fn wait(&mut self, what: &str, grace: Duration) -> Result<ExitStatus, HostError> {
        loop {
            if let Some(s) = self.ended() {
                self.child = None;
                return Ok(s);
            }
            if interrupt::asked() {
                self.stop(libc::SIGTERM, grace);
                return Err(HostError::Interrupted(what.into()));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Sends `signal` to its process group and waits up to `grace` for it
    /// to end, then kills the group. Returns how it ended (None if it had
    /// already been reaped).
    pub fn stop(&mut self, signal: i32, grace: Duration) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        let group = child.id() as i32;
        // SAFETY: signals a process group this Process started (its ID
        // cannot be taken again while the group has a member).
        let signal_group = |sig| unsafe { libc::kill(-group, sig) };
        signal_group(signal);
        let start = Instant::now();
        let mut ended = None;
        while ended.is_none() && start.elapsed() < grace {
            ended = child.try_wait().ok().flatten();
            std::thread::sleep(POLL);
        }
        // What the program started and left behind goes with it.
        signal_group(libc::SIGKILL);
        ended.or_else(|| child.wait().ok())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop(libc::SIGTERM, Duration::from_secs(10));
    }
}

/// How a program ended, in words.
pub fn describe(s: ExitStatus) -> String {
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (_, Some(sig)) => format!("killed by signal {sig}"),
        _ => "ended".into(),
    }
}

/// Runs `cmd` to its end as the step `what`, its output to `log`; a
/// failure quotes the log's tail, a stop asked stops it. Returns its
/// output.
pub fn run(what: &str, cmd: Command, log: &Path) -> Result<String, HostError> {
    let mut p = Process::start(what, cmd, log)?;
    let status = p.wait(what, Duration::from_secs(10))?;
    let output = std::fs::read_to_string(log).unwrap_or_default();
    match status.success() {
        true => Ok(output),
        false => Err(HostError::Failed { what: what.into(), why: describe(status), log: log_tail(log) }),
    }
}

/// This host's kernel, as `Linux RELEASE`.
pub fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map(|s| format!("Linux {}", s.trim())).unwrap_or_default()
}

/// This host's CPU model and the cores this process may use.
pub fn cpu() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info.lines().find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_string()));
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{}, {cores} cores available", model.unwrap_or_else(|| "unknown CPU".into()))
}

/// This host's memory, GB.
pub fn memory_gb() -> f64 {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kb = info.lines().find_map(|l| l.strip_prefix("MemTotal:")).and_then(|r| r.split_whitespace().next()?.parse::<f64>().ok());
    kb.map_or(0.0, |k| k * 1024.0 / 1e9)
}

/// The first line a program prints of its version (`--version`).
pub fn version(program: &str) -> String {
    let out = Command::new(program).arg("--version").output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("flashlab-host-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_failed_step_quotes_its_log() {
        let d = scratch("fail");
        let mut c = Command::new("sh");
        c.args(["-c", "echo one; echo 'two: no such table' >&2; exit 3"]);
        let e = run("loading", c, &d.join("log")).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("loading: exited with status 3"), "{text}");
        assert!(text.contains("two: no such table"), "{text}");
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo fine"]);
        assert_eq!(run("echo", ok, &d.join("log2")).unwrap().trim(), "fine");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_stopped_program_and_its_children_end() {
        let d = scratch("stop");
        let mut c = Command::new("sh");
        // A child that ignores SIGTERM: the group is killed after the grace.
        c.args(["-c", "sh -c 'trap \"\" TERM; sleep 30' & echo $! > child; wait"]).current_dir(&d);
        let mut p = Process::start("sleeper", c, &d.join("log")).unwrap();
        p.wait_ready("start", Duration::from_secs(5), || d.join("child").exists()).unwrap();
        let child: i32 = std::fs::read_to_string(d.join("child")).unwrap().trim().parse().unwrap();
        let s = p.stop(libc::SIGTERM, Duration::from_millis(300)).unwrap();
        assert!(!s.success());
        std::thread::sleep(Duration::from_millis(100));
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(child, 0) } == 0 && !std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default().contains(") Z ");
        assert!(!alive, "the group's other process survived");
        assert!(p.stop(libc::SIGTERM, Duration::ZERO).is_none(), "stopped twice");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_program_that_dies_before_it_is_ready_is_an_error() {
        let d = scratch("die");
        let mut c = Command::new("sh");
        c.args(["-c", "echo 'port in use' >&2; exit 1"]);
        let mut p = Process::start("server", c, &d.join("log")).unwrap();
        let e = p.wait_ready("start", Duration::from_secs(5), || false).unwrap_err().to_string();
        assert!(e.contains("server during start: exited with status 1") && e.contains("port in use"), "{e}");
        assert!(need("sh", "dash").is_ok());
        assert_eq!(need("no-such-program-here", "nothing").unwrap_err().to_string(), "no-such-program-here is not installed (Debian's package nothing)");
        std::fs::remove_dir_all(d).unwrap();
    }
}
