//! A MariaDB server of this run's own (Debian's mariadb-server, 10.11):
//! its data directory made by `mariadb-install-db`, started as a child
//! with its own socket and no network, never the system's server nor its
//! configuration files; stopped with SIGTERM, which MariaDB takes as a
//! clean shutdown.

use crate::real::host::{self, HostError, Process};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The programs it needs, and their package.
pub const PROGRAMS: [(&str, &str); 3] = [("mariadbd", "mariadb-server"), ("mariadb-install-db", "mariadb-server"), ("mariadb-admin", "mariadb-client")];

/// The longest a start and a clean stop may take.
const START: Duration = Duration::from_secs(120);
const STOP: Duration = Duration::from_secs(120);

/// The server's settings.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// InnoDB's buffer pool, MiB: smaller than the tables, so that reads
    /// reach the card.
    pub buffer_pool_mib: u32,
    /// InnoDB's redo log, MiB.
    pub redo_log_mib: u32,
}

pub struct Mariadb {
    process: Process,
    pub socket: PathBuf,
}

fn root_args(socket: &Path) -> [String; 2] {
    [format!("--socket={}", socket.display()), "--user=root".into()]
}

impl Mariadb {
    /// Makes a data directory in `datadir`, starts the server on `socket`
    /// (its output in `logs`), waits until it answers and creates the
    /// database `sbtest`.
    pub fn start(datadir: &Path, socket: &Path, logs: &Path, s: Settings) -> Result<Mariadb, HostError> {
        for (p, package) in PROGRAMS {
            host::need(p, package)?;
        }
        let mut install = Command::new("mariadb-install-db");
        install
            .args(["--no-defaults", "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"])
            .arg(format!("--datadir={}", datadir.display()))
            .arg(format!("--innodb-log-file-size={}M", s.redo_log_mib));
        host::run("making MariaDB's data directory (mariadb-install-db)", install, &logs.join("mariadb-install.log"))?;
        let mut server = Command::new("mariadbd");
        server.args(["--no-defaults", "--user=root", "--skip-networking", "--skip-name-resolve"]).args([
            format!("--datadir={}", datadir.display()),
            format!("--socket={}", socket.display()),
            format!("--pid-file={}", datadir.join("mariadbd.pid").display()),
            format!("--innodb-buffer-pool-size={}M", s.buffer_pool_mib),
            format!("--innodb-log-file-size={}M", s.redo_log_mib),
        ]);
        let mut db = Mariadb { process: Process::start("mariadbd", server, &logs.join("mariadbd.log"))?, socket: socket.to_path_buf() };
        let ping = || Command::new("mariadb-admin").args(root_args(socket)).arg("ping").output().is_ok_and(|o| o.status.success());
        db.process.wait_ready("MariaDB's start", START, ping)?;
        let mut create = Command::new("mariadb-admin");
        create.args(root_args(socket)).args(["create", "sbtest"]);
        host::run("creating the database sbtest", create, &logs.join("mariadb-create.log"))?;
        Ok(db)
    }

    /// An error if the server has ended, naming what was under way.
    pub fn alive(&mut self, during: &str) -> Result<(), HostError> {
        match self.process.ended() {
            Some(_) => Err(self.process.died(during)),
            None => Ok(()),
        }
    }

    /// Stops the server cleanly (SIGTERM; killed if it takes longer than
    /// two minutes). Returns a problem to report, if any.
    pub fn stop(mut self) -> Option<String> {
        match self.process.stop(libc::SIGTERM, STOP) {
            Some(s) if s.success() => None,
            Some(s) => Some(format!("MariaDB's server {} at its stop; its log: {}", host::describe(s), self.process.log.display())),
            None => None,
        }
    }
}
