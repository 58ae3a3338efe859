//! A real file system and database on a served card: nbdfuse exposes the
//! export as a file, mkfs.ext4 and a loop mount make it a file system,
//! files are written and read back, and SQLite (synchronous=FULL) commits
//! transactions on it (WAL); PRAGMA integrity_check is ok and e2fsck is clean
//! after unmounting.
//!
//! Then the crash check: the server's write log (every write and flush it
//! ran, in order) is replayed up to each of 24 flush points onto a fresh
//! image, which is what the card must hold after a cut just after that
//! flush. Each image mounts (ext4 replays its journal), the database
//! passes PRAGMA integrity_check and holds every transaction committed
//! before that flush, and e2fsck is clean.
//!
//! Needs root (loop mounts) and Debian's libnbd-bin, fuse3, e2fsprogs,
//! sqlite3 (`.ci/run` installs them).

use emu::writelog::{self, monotonic_ns, WriteLog};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

mod common;
use common::{tool, Scratch, Served};

fn run(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{cmd:?} failed: {text}");
    text
}

/// An export as a file (nbdfuse) with a file system loop-mounted on it;
/// unmounted and detached when dropped, whatever happened.
struct Mounted {
    nbdfuse: Child,
    fuse_dir: PathBuf,
    fs_dir: PathBuf,
    mounted: bool,
}

impl Mounted {
    fn image(&self) -> PathBuf {
        self.fuse_dir.join("disk")
    }
    fn unmount(&mut self) {
        if self.mounted {
            run(Command::new("umount").arg(&self.fs_dir));
            self.mounted = false;
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg("-l").arg(&self.fs_dir).status();
        }
        let _ = Command::new("fusermount3").arg("-u").arg(&self.fuse_dir).status();
        let _ = self.nbdfuse.kill();
        let _ = self.nbdfuse.wait();
    }
}

fn nbdfuse(card: &Served, dir: &Path) -> Mounted {
    let (fuse_dir, fs_dir, pid) = (dir.join("fuse"), dir.join("fs"), dir.join("nbdfuse.pid"));
    std::fs::create_dir_all(&fuse_dir).unwrap();
    std::fs::create_dir_all(&fs_dir).unwrap();
    let child = Command::new("nbdfuse").arg("-P").arg(&pid).arg(fuse_dir.join("disk")).arg(card.uri()).stderr(Stdio::null()).spawn().unwrap();
    let m = Mounted { nbdfuse: child, fuse_dir, fs_dir, mounted: false };
    for _ in 0..100 {
        if std::fs::metadata(&pid).is_ok_and(|p| p.len() > 0) {
            return m;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("nbdfuse did not mount the export within 5 s");
}

fn sqlite(db: &Path, sql: &str) -> String {
    run(Command::new("sqlite3").arg(db).arg(sql)).trim().to_string()
}

/// Transactions committed in batches; returns, for each batch, the
/// monotonic time after its last commit returned and the rows then.
fn sqlite_workload(db: &Path) -> Vec<(u64, u64)> {
    // WAL with synchronous=FULL: a commit is durable once it returns. (In
    // DELETE mode FULL does not sync the journal's unlinking, so a cut
    // right after a commit may roll it back: SQLite documents EXTRA for
    // that; this check caught it.)
    sqlite(db, "PRAGMA journal_mode=WAL; CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL);");
    let mut done = Vec::new();
    let mut rows = 0u64;
    for batch in 0..40 {
        let mut sql = String::from("PRAGMA synchronous=FULL;");
        for _ in 0..5 {
            rows += 1;
            sql += &format!("BEGIN; INSERT INTO t VALUES({rows}, printf('%.*c', {}, 'x')); COMMIT;", 200 + batch * 97 % 3000);
        }
        sqlite(db, &sql);
        done.push((monotonic_ns(), rows));
    }
    done
}

/// Replays `records` onto `image` (a sparse file of the export's size).
fn replay(image: &Path, records: &[writelog::Record]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(image).unwrap();
    for r in records {
        match r.kind {
            writelog::WRITE => f.write_all_at(&r.data, r.offset).unwrap(),
            writelog::TRIM | writelog::WRITE_ZEROES => f.write_all_at(&vec![0; r.length as usize], r.offset).unwrap(),
            _ => {}
        }
    }
}

/// A replayed image, as after a cut: it mounts, the database is whole and
/// holds `committed` rows or more, and e2fsck is clean after unmounting.
fn crash_check(image: &Path, mnt: &Path, committed: u64, point: usize) {
    std::fs::create_dir_all(mnt).unwrap();
    run(Command::new("mount").args(["-o", "loop"]).arg(image).arg(mnt));
    let db = mnt.join("t.db");
    let check = std::panic::catch_unwind(|| {
        assert_eq!(sqlite(&db, "PRAGMA integrity_check;"), "ok", "flush point {point}");
        // Before the table's creation reached the card there are no rows.
        let table: u64 = sqlite(&db, "SELECT count(*) FROM sqlite_master WHERE name = 't';").parse().unwrap();
        let rows: u64 = if table == 0 { 0 } else { sqlite(&db, "SELECT count(*) FROM t;").parse().unwrap() };
        assert!(rows >= committed, "flush point {point}: {rows} rows, {committed} committed before it");
    });
    run(Command::new("umount").arg(mnt));
    if let Err(e) = check {
        std::panic::resume_unwind(e);
    }
    run(Command::new("e2fsck").args(["-fn"]).arg(image));
}

#[test]
fn ext4_and_sqlite_on_a_served_card_survive_every_flush_point() {
    for (t, p) in [("nbdfuse", "libnbd-bin"), ("fusermount3", "fuse3"), ("mkfs.ext4", "e2fsprogs"), ("e2fsck", "e2fsprogs"), ("sqlite3", "sqlite3")] {
        tool(t, p);
    }
    let scratch = Scratch::new("filesystem");
    std::fs::create_dir_all(&*scratch).unwrap();
    let log = scratch.join("writes.log");
    let mut card = Served::start("fs", &["--timing", "none", "--power-loss-protection", "off", "--write-log", log.to_str().unwrap()]);
    let mut m = nbdfuse(&card, &scratch);
    let size = std::fs::metadata(m.image()).unwrap().len();
    run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(m.image()));
    run(Command::new("mount").args(["-o", "loop"]).arg(m.image()).arg(&m.fs_dir));
    m.mounted = true;
    run(Command::new("sync").arg("-f").arg(&m.fs_dir));
    let fs_ready = monotonic_ns();
    // Files written, synced, read back.
    let data: Vec<u8> = (0..6u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8).collect();
    std::fs::write(m.fs_dir.join("data.bin"), &data).unwrap();
    run(Command::new("sync").arg(m.fs_dir.join("data.bin")));
    let committed = sqlite_workload(&m.fs_dir.join("t.db"));
    assert_eq!(sqlite(&m.fs_dir.join("t.db"), "PRAGMA integrity_check;"), "ok");
    assert!(std::fs::read(m.fs_dir.join("data.bin")).unwrap() == data, "a file read back differs");
    m.unmount();
    run(Command::new("e2fsck").args(["-fn"]).arg(m.image()));
    drop(m);
    let (code, stop_log) = card.stop_clean();
    assert_eq!(code, 0, "{stop_log}");

    // The crash check at flush points after the file system was made.
    let records = WriteLog::read(&log).unwrap();
    let flushes: Vec<usize> = (0..records.len()).filter(|&i| records[i].kind == writelog::FLUSH && records[i].time_ns > fs_ready).collect();
    assert!(flushes.len() >= 24, "{} flush points", flushes.len());
    let points: Vec<usize> = (0..24).map(|k| flushes[k * (flushes.len() - 1) / 23]).collect();
    let image = scratch.join("replay.img");
    std::fs::File::create(&image).unwrap().set_len(size).unwrap();
    let mut applied = 0;
    for (k, &p) in points.iter().enumerate() {
        replay(&image, &records[applied..=p]);
        applied = p + 1;
        let copy = scratch.join("cut.img");
        run(Command::new("cp").args(["--sparse=always"]).arg(&image).arg(&copy));
        let owed = committed.iter().filter(|(t, _)| *t < records[p].time_ns).map(|&(_, rows)| rows).max().unwrap_or(0);
        crash_check(&copy, &scratch.join("cut"), owed, k);
    }
    eprintln!("{} writes and {} flushes logged; 24 flush points checked", records.iter().filter(|r| r.kind == writelog::WRITE).count(), flushes.len());
}
