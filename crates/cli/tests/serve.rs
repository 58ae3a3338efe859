//! `flashlab serve` with real NBD clients: qemu-img copies an image in and
//! out unchanged; fio's nbd engine verifies every block it wrote (4 jobs x
//! QD 16, 4 KiB and mixed sizes down to 512 B) on a card driven into GC;
//! a client that sends garbage is cut off while another goes on.
//!
//! fio and qemu-img come from Debian's packages (`.ci/run` installs them);
//! without them these tests fail, naming the package.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{flashlab, refused, tool, Scratch, Served};

fn run(cmd: &mut Command) -> String {
    let o = cmd.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{cmd:?} failed: {text}");
    text
}

/// An empty scratch directory.
fn workdir(name: &str) -> Scratch {
    let d = Scratch::new(name);
    std::fs::create_dir_all(&*d).unwrap();
    d
}

fn fio_job(dir: &Path, name: &str, uri: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("[global]\nioengine=nbd\nuri={uri}\ngroup_reporting\nverify_state_save=0\n{body}")).unwrap();
    p
}

#[test]
fn qemu_img_copies_an_image_in_and_out_unchanged() {
    let qemu = tool("qemu-img", "qemu-utils");
    // The card's timing on the reviewers' Windows host (`--host`).
    let card = Served::start("qemu", &["--host", "windows"]);
    let dir = workdir("qemu-files");
    let input = dir.join("in.img");
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let bytes: Vec<u8> = (0..48 << 20)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng as u8
        })
        .collect();
    std::fs::write(&input, &bytes).unwrap();
    run(Command::new(&qemu).args(["convert", "-n", "-f", "raw", "-O", "raw"]).arg(&input).arg(card.uri()));
    let output = dir.join("out.img");
    run(Command::new(&qemu).args(["convert", "-f", "raw", "-O", "raw"]).arg(card.uri()).arg(&output));
    let back = std::fs::read(&output).unwrap();
    assert!(back.len() as u64 >= bytes.len() as u64, "the export holds the image");
    assert!(back[..bytes.len()] == bytes[..], "the image read back differs from the one written");
    assert!(back[bytes.len()..].iter().all(|&b| b == 0), "never-written sectors read as zeros");
}

/// qemu-img flushes at the end of its copy: after a power cut (kill -9)
/// the card mounts from its store and the image reads back unchanged.
#[test]
fn a_flushed_image_survives_a_power_cut() {
    let qemu = tool("qemu-img", "qemu-utils");
    let mut card = Served::start("cut", &[]);
    let dir = workdir("cut-files");
    let input = dir.join("in.img");
    let bytes: Vec<u8> = (0..24u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&input, &bytes).unwrap();
    run(Command::new(&qemu).args(["convert", "-n", "-f", "raw", "-O", "raw"]).arg(&input).arg(card.uri()));
    card.cut_and_restart();
    let output = dir.join("out.img");
    run(Command::new(&qemu).args(["convert", "-f", "raw", "-O", "raw"]).arg(card.uri()).arg(&output));
    let back = std::fs::read(&output).unwrap();
    assert!(back[..bytes.len()] == bytes[..], "the flushed image changed across the power cut");
    let log = card.stop();
    assert!(log.contains("mounted") && log.contains("slots mapped"), "the restart mounted the store: {log}");
}

/// SIGTERM stops the card cleanly: the restart mounts from the checkpoint
/// without a scan and the data is there; the checkpoint is used once, so
/// a power cut after it is mounted by a scan. The SMART-like log counts
/// the power cycles and the unclean one, and keeps the host's writes.
#[test]
fn a_clean_stop_mounts_without_a_scan() {
    let qemu = tool("qemu-img", "qemu-utils");
    let mut card = Served::start("clean", &["--power-loss-protection", "off"]);
    let dir = workdir("clean-files");
    let input = dir.join("in.img");
    let bytes: Vec<u8> = (0..8u32 << 20).map(|i| (i.wrapping_mul(2_246_822_519) >> 11) as u8).collect();
    std::fs::write(&input, &bytes).unwrap();
    run(Command::new(&qemu).args(["convert", "-n", "-f", "raw", "-O", "raw"]).arg(&input).arg(card.uri()));
    let (code, log) = card.stop_clean_and_restart();
    assert_eq!(code, 0, "{log}");
    assert!(log.contains("stopped cleanly"), "{log}");
    let output = dir.join("out.img");
    run(Command::new(&qemu).args(["convert", "-f", "raw", "-O", "raw"]).arg(card.uri()).arg(&output));
    assert!(std::fs::read(&output).unwrap()[..bytes.len()] == bytes[..], "the image changed across the clean stop");
    let smart = &control(&card, &["status"])["smart"];
    assert_eq!((smart["power_cycles"].as_u64(), smart["unclean_shutdowns"].as_u64()), (Some(2), Some(0)), "after a clean stop: {smart}");
    assert!(smart["host_slots_written"].as_u64().unwrap() >= (bytes.len() / 4096) as u64, "the writes before the clean stop are kept: {smart}");
    let log = card.cut_and_restart();
    assert!(log.contains("from its clean shutdown's checkpoint") && log.contains("no scan"), "{log}");
    let smart = &control(&card, &["status"])["smart"];
    assert_eq!((smart["power_cycles"].as_u64(), smart["unclean_shutdowns"].as_u64()), (Some(3), Some(1)), "after a cut: {smart}");
    let log = card.stop();
    assert!(log.contains("slots mapped from") && log.contains("scanned"), "after a cut the card is scanned: {log}");
}

#[test]
fn fio_verifies_every_block_on_a_card_in_gc() {
    let fio = tool("fio", "fio");
    let card = Served::start("fio", &[]);
    let dir = workdir("fio-jobs");
    // Three drive writes of 4 KiB random writes: the card's spare is used
    // up and GC moves data.
    let pre = fio_job(&dir, "pre.fio", &card.uri(), "[fill]\nrw=randwrite\nbs=4k\niodepth=16\nloops=3\nnorandommap\n");
    run(Command::new(&fio).arg(&pre));
    for (name, bs) in [("4k", "bs=4k"), ("mixed", "bssplit=512/10:4k/50:8k/20:64k/20")] {
        let job = fio_job(
            &dir,
            &format!("verify-{name}.fio"),
            &card.uri(),
            &format!("[verify]\nrw=randwrite\n{bs}\niodepth=16\nnumjobs=4\nsize=25%\noffset_increment=25%\nverify=crc32c\nverify_fatal=1\ndo_verify=1\n"),
        );
        let out = run(Command::new(&fio).arg(&job));
        assert!(out.contains("err= 0"), "{name}: {out}");
        assert!(!out.contains("verify: bad"), "{name}: {out}");
    }
    let log = card.stop();
    let moves: u64 = log.lines().filter_map(|l| l.split(" GC moves").next()?.rsplit(' ').next()?.parse().ok()).max().unwrap_or(0);
    assert!(moves > 0, "GC moved data while fio verified: {log}");
}

/// The store's disk use follows the data: 64 MB written at random in
/// 4 KiB, or in order in 1 MiB, takes at most 1.5 times that (parity and
/// the pages GC has not yet erased) beyond what the fresh store took (its
/// out-of-band areas, erase counts and trim journal). Pages written
/// through a shared mapping took most of the 270 MB store for 4 MB.
#[test]
fn the_stores_disk_use_follows_the_data_written() {
    use std::os::unix::fs::MetadataExt;
    let fio = tool("fio", "fio");
    let allocated = |dir: &Path| -> u64 {
        // Written back first: the allocation a writeback makes is counted.
        run(&mut Command::new("sync"));
        std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()?.metadata().ok()).filter(|m| m.is_file()).map(|m| m.blocks() * 512).sum()
    };
    for (tag, pattern) in [("du-random", "rw=randwrite\nbs=4k\nnorandommap\nrandrepeat=0\n"), ("du-seq", "rw=write\nbs=1m\n")] {
        let card = Served::start(tag, &["--timing", "none"]);
        let store = card.dir.join("store");
        let fresh = allocated(&store);
        let dir = workdir(&format!("{tag}-jobs"));
        let written = 64u64 << 20;
        let job = fio_job(&dir, "w.fio", &card.uri(), &format!("[w]\n{pattern}iodepth=16\nsize={written}\n"));
        run(Command::new(&fio).arg(&job));
        let used = allocated(&store) - fresh;
        let log = card.stop();
        assert!(used >= written / 2 && used as f64 <= 1.5 * written as f64, "{tag}: {used} bytes of disk for {written} written (fresh store {fresh}): {log}");
    }
}

/// A card served old (3,000 cycles, data 120 days old): fio verifies
/// everything it wrote, its reads meet retries that status counts, and
/// the card keeps its age in its store (status at rest shows it).
#[test]
fn an_aged_card_served_retries_its_reads_and_keeps_its_age() {
    let fio = tool("fio", "fio");
    let card = Served::start("aged", &["--pe-cycles", "3000", "--age-days", "120"]);
    let dir = workdir("aged-jobs");
    let job = fio_job(&dir, "v.fio", &card.uri(), "[v]\nrw=randwrite\nbs=4k\niodepth=16\nsize=16m\nverify=crc32c\ndo_verify=1\nverify_fatal=1\nrandrepeat=0\n");
    run(Command::new(&fio).arg(&job));
    let s = control(&card, &["status"]);
    let (e, age) = (&s["read_errors"], &s["age"]);
    assert!(e["reads_retried"].as_u64().unwrap() > 0 && e["read_retries"].as_u64().unwrap() >= e["reads_retried"].as_u64().unwrap(), "{e}");
    assert_eq!((age["pe_cycles"].as_u64(), age["age_days"].as_f64()), (Some(3000), Some(120.0)), "{s}");
    assert!(s["health"]["pe_cycles_min"].as_u64().unwrap() >= 3000, "the age counts in the card's wear: {}", s["health"]);
    // A clean stop, the store kept to look at at rest.
    let mut card = card;
    let _ = Command::new("kill").args(["-TERM", &card.child.id().to_string()]).status();
    assert!(card.child.wait().unwrap().success());
    let store = card.dir.join("store");
    let (code, out, err) = flashlab(&["status", "--store", store.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("aged            3000 P/E cycles") && out.contains("data 120 days old"), "{out}");
}

/// A card without parity, worn past its ECC: a read the ECC cannot
/// correct is an I/O error at the client, and a read that succeeds
/// returns what was written; never other bytes.
#[test]
fn a_worn_card_without_parity_gives_io_errors_never_wrong_bytes() {
    use emu::nbd;
    use testkit::Client;
    let card = Served::start_profile(
        "worn",
        |p| *p = p.replace("stripe_width = 8", "stripe_width = 1"),
        &["--timing", "none", "--pe-cycles", "8000", "--age-days", "365"],
    );
    let mut c = Client::connect(&card.socket, &card.name).unwrap();
    let (mut errors, mut good) = (0, 0);
    for i in 0..512u64 {
        let data = vec![(i % 251) as u8; 4096];
        assert_eq!(c.call(nbd::CMD_WRITE, nbd::CMD_FLAG_FUA, i * 4096, 4096, &data).unwrap().error, 0, "write {i}");
    }
    for i in 0..512u64 {
        let r = c.call(nbd::CMD_READ, 0, i * 4096, 4096, &[]).unwrap();
        match r.error {
            0 => {
                assert!(r.data.iter().all(|&b| b == (i % 251) as u8), "read {i}: other bytes than written");
                good += 1;
            }
            nbd::EIO => errors += 1,
            e => panic!("read {i}: error {e}"),
        }
    }
    let s = control(&card, &["status"]);
    assert!(errors > 0 && good > 0, "{errors} I/O errors, {good} good reads: {}", s["read_errors"]);
    assert!(s["read_errors"]["reads_uncorrectable"].as_u64().unwrap() >= errors, "{}", s["read_errors"]);
    assert_eq!(s["read_errors"]["reads_rebuilt_from_parity"].as_u64(), Some(0));
}

/// A store whose disk fills (a 24 MB tmpfs under a 160 MB export): the
/// write that finds no room gets an error, the card turns read-only and
/// says why, later writes are refused, and every write acknowledged
/// before reads back as written. Needs root (mount), as the file-system
/// tests do.
#[test]
fn a_store_whose_disk_fills_turns_the_card_read_only_and_keeps_what_it_acknowledged() {
    use emu::nbd;
    use testkit::Client;
    let dir = Scratch::new("serve-full-disk");
    let store = dir.join("store");
    std::fs::create_dir_all(&store).unwrap();
    run(Command::new("mount").args(["-t", "tmpfs", "-o", "size=24m", "tmpfs"]).arg(&store));
    /// Unmounted before the scratch directory goes (lazily: the server
    /// may still hold its files).
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let mut card = Served::start_in(dir, "p420m".into(), &["--timing", "none"]);
    // Declared after the card, so dropped before it: the tmpfs goes
    // before the card's scratch directory is removed.
    let _unmount = Unmount(store);
    let mut c = Client::connect(&card.socket, &card.name).unwrap();
    let block = |i: u64| vec![(i % 251) as u8 ^ 0x3c; 4096];
    let mut acked = 0u64;
    let refused = loop {
        let r = c.call(nbd::CMD_WRITE, 0, acked * 4096, 4096, &block(acked)).unwrap();
        if r.error != 0 {
            break r.error;
        }
        acked += 1;
        assert!(acked * 4096 < c.size, "the whole export written on a 24 MB disk");
    };
    assert!(acked > 1000 && refused == nbd::ENOSPC, "{acked} writes acknowledged, then error {refused} (ENOSPC expected)");
    assert_eq!(c.call(nbd::CMD_WRITE, 0, 0, 4096, &block(7)).unwrap().error, nbd::ENOSPC, "a full store refuses writes: no space");
    assert_eq!(c.call(nbd::CMD_TRIM, 0, 0, 16 * 4096, &[]).unwrap().error, nbd::EPERM, "a read-only card trims nothing");
    assert_eq!(c.call(nbd::CMD_WRITE_ZEROES, 0, 16 * 4096, 16 * 4096, &[]).unwrap().error, nbd::ENOSPC);
    let intact = |c: &mut Client| {
        for i in 0..acked {
            let r = c.call(nbd::CMD_READ, 0, i * 4096, 4096, &[]).unwrap();
            assert!(r.error == 0 && r.data == block(i), "acknowledged write {i} of {acked}: error {}", r.error);
        }
    };
    intact(&mut c);
    let s = control(&card, &["status"]);
    let why = s["read_only"].as_str().unwrap_or_default();
    assert!(why.contains("store") && why.contains("No space left"), "{s}");
    // A clean stop on the full disk succeeds or says why, and leaves no
    // temporary file; with room given back, the card serves what it
    // acknowledged.
    drop(c);
    let (code, log) = card.stop_clean();
    assert!(code == 0 || log.contains("clean stop failed"), "{log}");
    let left: Vec<String> = std::fs::read_dir(&_unmount.0).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(!left.iter().any(|n| n.ends_with(".tmp") || n.ends_with(".new")), "{left:?}");
    // A restart with no room is refused, its reason said once.
    let (code, _, err) =
        flashlab(&["serve", "p420m", "--scale", "8192", "--store", _unmount.0.to_str().unwrap(), "--unix", card.dir.join("again.sock").to_str().unwrap()]);
    assert_ne!(code, 0, "{err}");
    assert_eq!(err.matches("No space left on device").count(), 1, "{err}");
    run(Command::new("mount").args(["-o", "remount,size=400m"]).arg(&_unmount.0));
    card.start_again();
    intact(&mut Client::connect(&card.socket, &card.name).unwrap());
}

#[test]
fn a_client_sending_garbage_is_cut_off_and_another_is_served() {
    let qemu = tool("qemu-img", "qemu-utils");
    let card = Served::start("garbage", &[]);
    let mut bad = UnixStream::connect(&card.socket).unwrap();
    let mut hello = [0u8; 18];
    bad.read_exact(&mut hello).unwrap();
    assert_eq!(&hello[..8], b"NBDMAGIC");
    bad.write_all(&[0xff; 64]).unwrap();
    let mut rest = Vec::new();
    let _ = bad.read_to_end(&mut rest);
    // The server closed the bad connection; a good client still works.
    let out = run(Command::new(&qemu).args(["info", "-f", "raw"]).arg(card.uri()));
    assert!(out.contains("virtual size"), "{out}");
}

/// What libnbd's nbdinfo sees: the commands the card takes, several
/// connections allowed (one device thread serves them all in order), the
/// block sizes.
#[test]
fn nbdinfo_sees_the_export_and_its_flags() {
    let nbdinfo = tool("nbdinfo", "libnbd-bin");
    let card = Served::start("nbdinfo", &[]);
    let out = run(Command::new(&nbdinfo).arg(card.uri()));
    for want in [
        "can_flush: true",
        "can_fua: true",
        "can_trim: true",
        "can_zero: true",
        "can_multi_conn: true",
        "block_size_minimum: 512",
        "block_size_preferred: 4096",
    ] {
        assert!(out.contains(want), "nbdinfo lacks '{want}': {out}");
    }
}

/// Requests past the end, over the largest length or of an unknown
/// command get an NBD error; a client vanishing in the middle of a write's
/// payload ends only its own connection; another client goes on and what
/// was acknowledged to it is intact.
#[test]
fn bad_requests_get_errors_and_other_clients_are_served() {
    use emu::nbd;
    use testkit::Client;
    let card = Served::start("badreq", &["--timing", "none"]);
    let mut good = Client::connect(&card.socket, &card.name).unwrap();
    let data = vec![0x5a; 4096];
    assert_eq!(good.call(nbd::CMD_WRITE, nbd::CMD_FLAG_FUA, 8192, 4096, &data).unwrap().error, 0);
    let mut bad = Client::connect(&card.socket, &card.name).unwrap();
    let size = bad.size;
    assert_eq!(bad.call(nbd::CMD_READ, 0, size, 4096, &[]).unwrap().error, nbd::EINVAL, "read past the end");
    assert_eq!(bad.call(nbd::CMD_WRITE, 0, size - 512, 4096, &data).unwrap().error, nbd::ENOSPC, "write past the end");
    assert_eq!(bad.call(nbd::CMD_READ, 0, 0, nbd::PAYLOAD_BYTES_MAX + 512, &[]).unwrap().error, nbd::EINVAL, "read over the maximum");
    assert_eq!(bad.call(nbd::CMD_READ, 0, 100, 4096, &[]).unwrap().error, nbd::EINVAL, "read not on a sector");
    assert_eq!(bad.call(77, 0, 0, 0, &[]).unwrap().error, nbd::EINVAL, "unknown command");
    assert_eq!(bad.call(nbd::CMD_READ, 0xffff, 0, 4096, &[]).unwrap().error, nbd::EINVAL, "flags a READ does not take");
    assert_eq!(bad.call(nbd::CMD_WRITE, 0x10, 8192, 4096, &[0x77; 4096]).unwrap().error, nbd::EINVAL, "an unknown flag on a write");
    assert_eq!(bad.call(nbd::CMD_TRIM, 0x20, 8192, 4096, &[]).unwrap().error, nbd::EINVAL, "an unknown flag on a trim");
    // A write announcing 4 KiB whose client vanishes after 100 bytes.
    let mut partial = nbd::request_encode(nbd::CMD_WRITE, 0, 9, 0, 4096, &[1; 4096]);
    partial.truncate(28 + 100);
    bad.send_raw(&partial).unwrap();
    drop(bad);
    let r = good.call(nbd::CMD_READ, 0, 8192, 4096, &[]).unwrap();
    assert_eq!((r.error, r.data == data), (0, true), "the acknowledged write is intact");
    let r = good.call(nbd::CMD_READ, 0, 0, 4096, &[]).unwrap();
    assert_eq!((r.error, r.data == vec![0; 4096]), (0, true), "the vanished client's partial write did not land");
}

#[test]
fn bad_serve_arguments_are_refused_naming_the_problem() {
    let dir = Scratch::new("serve-bad");
    let store = dir.join("store");
    let store = store.to_str().unwrap();
    refused(&["serve", "p420m", "--scale", "8192", "--store", store], "--unix PATH or --listen ADDR:PORT");
    refused(&["serve", "p420m", "--scale", "100000", "--store", store, "--unix", "x.sock"], "--scale 100000");
    refused(&["serve", "nonesuch", "--store", store, "--unix", "x.sock"], "unknown device");
    refused(&["serve", "p420m", "--host", "solaris", "--store", store, "--unix", "x.sock"], "windows-2008r2");
    // Beyond loopback, NBD would carry the card to anyone, in clear.
    refused(&["serve", "p420m", "--scale", "8192", "--store", store, "--listen", "0.0.0.0:0"], "--insecure-listen");
    refused(&["serve", "p420m", "--scale", "8192", "--store", store, "--unix", "x.sock", "--handshake-timeout", "0"], "--handshake-timeout 0");
    refused(&["serve", "p420m", "--scale", "8192", "--store", store, "--unix", "x.sock", "--max-connections", "0"], "--max-connections");
    assert!(!std::path::Path::new(store).exists(), "nothing made for a refused server");
    // A store made for another card is refused with both descriptions.
    std::fs::create_dir_all(store).unwrap();
    std::fs::write(format!("{store}/member-0.flash"), b"not a store").unwrap();
    let (code, _, err) = flashlab(&["serve", "p420m", "--scale", "8192", "--store", store, "--unix", dir.join("s.sock").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a flashlab store"), "{err}");
}

/// A card split in two: two exports (NBD_OPT_LIST shows both) of half the
/// card each; fio verifies both whole volumes at once (a write to one
/// landing in the other would fail the other's verify); a request past a
/// volume's end is refused; the store keeps its split across a power cut
/// and refuses to be merged while it holds data.
#[test]
fn a_split_card_serves_two_volumes_independently() {
    use emu::nbd;
    use testkit::Client;
    let fio = tool("fio", "fio");
    let nbdinfo = tool("nbdinfo", "libnbd-bin");
    let mut card = Served::start("volumes", &["--volumes", "2", "--timing", "none"]);
    let profile = card::profile_load("p420m").unwrap();
    let capacity = card::Device::new(&profile, "stock", 8192).unwrap().capacity_bytes();
    let list = run(Command::new(&nbdinfo).arg("--list").arg(format!("nbd+unix:///?socket={}", card.socket.display())));
    let half = capacity / 2 / 4096 * 4096;
    for (name, bytes) in [("p420m-1", half), ("p420m-2", capacity - half)] {
        assert!(list.contains(&format!("export=\"{name}\"")), "{list}");
        assert!(list.contains(&format!("export-size: {bytes} ")), "{name} is {bytes} bytes: {list}");
    }
    let dir = workdir("volumes-jobs");
    let uri = |v: u32| format!("nbd+unix:///p420m-{v}?socket={}", card.socket.display());
    let jobs = format!(
        "[global]\nioengine=nbd\nverify_state_save=0\nrw=randwrite\nbs=4k\niodepth=16\nverify=crc32c\nverify_fatal=1\ndo_verify=1\n[one]\nuri={}\n[two]\nuri={}\n",
        uri(1),
        uri(2)
    );
    std::fs::write(dir.join("both.fio"), jobs).unwrap();
    let out = run(Command::new(&fio).arg(dir.join("both.fio")));
    assert_eq!(out.matches("err= 0").count(), 2, "both volumes verified: {out}");
    assert!(!out.contains("verify: bad"), "{out}");
    let mut one = Client::connect(&card.socket, "p420m-1").unwrap();
    assert_eq!(one.size, half);
    assert_eq!(one.call(nbd::CMD_WRITE, 0, half - 512, 4096, &[7; 4096]).unwrap().error, nbd::ENOSPC, "a write past volume 1's end");
    assert_eq!(one.call(nbd::CMD_READ, 0, half, 512, &[]).unwrap().error, nbd::EINVAL, "a read past volume 1's end");
    drop(one);
    let log = card.cut_and_restart();
    assert!(log.contains("export 'p420m-2'"), "{log}");
    let mut two = Client::connect(&card.socket, "p420m-2").unwrap();
    assert_eq!(two.size, capacity - half, "the split came back after the cut");
    assert_eq!(two.call(nbd::CMD_READ, 0, 0, 4096, &[]).unwrap().error, 0);
    drop(two);
    let store = card.dir.join("store");
    let (code, log) = card.stop_clean();
    assert_eq!(code, 0, "{log}");
    let sock = card.dir.join("merge.sock");
    refused(
        &["serve", "p420m", "--scale", "8192", "--store", store.to_str().unwrap(), "--unix", sock.to_str().unwrap(), "--volumes", "1"],
        "is served as 2 volumes",
    );
    // The same store asked for as another device, scale or layout version.
    let (store, sock) = (store.to_str().unwrap(), sock.to_str().unwrap());
    for (device, scale, want) in [("flashmax2", "8192", "is a p420m at scale 8192, not a flashmax2 at scale 8192"), ("p420m", "4096", "scale 8192")] {
        let (code, _, err) = flashlab(&["serve", device, "--scale", scale, "--store", store, "--unix", sock]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(want) && !err.contains("panicked"), "{device} scale {scale}: {err}");
    }
    {
        use std::io::{Seek, SeekFrom};
        let mut member = std::fs::OpenOptions::new().write(true).open(format!("{store}/member-0.flash")).unwrap();
        member.seek(SeekFrom::Start(8)).unwrap();
        member.write_all(&9u32.to_le_bytes()).unwrap();
    }
    let (code, _, err) = flashlab(&["serve", "p420m", "--scale", "8192", "--store", store, "--unix", sock]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("layout version 9; this flashlab reads version"), "{err}");
}

/// `flashlab control` on a served card; its answer as JSON.
fn control(card: &Served, args: &[&str]) -> serde_json::Value {
    let store = card.dir.join("store");
    let mut a = vec!["control", "--store", store.to_str().unwrap(), "--json"];
    a.extend_from_slice(args);
    let (code, out, err) = flashlab(&a);
    assert_eq!(code, 0, "flashlab control {args:?}: {err}");
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{out}: {e}"))
}

/// A die fails while fio verifies (4 jobs x QD 16) on a card full of data
/// and in GC: zero verify errors; the rebuild moves the failed die's
/// stripes and ends, its time reported; the card then has the die out.
#[test]
fn a_die_fails_under_fio_verify_and_nothing_is_lost() {
    let fio = tool("fio", "fio");
    // The rebuild paced at 2 MB/s, not the profile's 200 MB/s (where the
    // die's 2.5 MB take 13 ms, less than starting `flashlab control` on a
    // loaded machine): it takes about a second, so the status taken just
    // after the failure finds it under way.
    let slow = |p: &mut String| {
        let paced = p.replace("rebuild_bytes_per_sec = 200_000_000", "rebuild_bytes_per_sec = 2_000_000");
        assert_ne!(*p, paced, "the P420m profile's rebuild rate");
        *p = paced;
    };
    let card = Served::start_profile("faildie", slow, &[]);
    let dir = workdir("faildie-jobs");
    let fill = fio_job(&dir, "fill.fio", &card.uri(), "[fill]\nrw=randwrite\nbs=4k\niodepth=16\nloops=2\nnorandommap\nrandrepeat=0\n");
    run(Command::new(&fio).arg(&fill));
    let job = fio_job(
        &dir,
        "verify.fio",
        &card.uri(),
        "[verify]\nrw=randwrite\nbs=4k\niodepth=16\nnumjobs=4\nsize=25%\noffset_increment=25%\nverify=crc32c\nverify_fatal=1\ndo_verify=1\nrandrepeat=0\n",
    );
    let verify = Command::new(&fio).arg(&job).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let failed = control(&card, &["fail-die", "3.1"]);
    // A full card: the die's group of 8 of the 512 dies holds 1/64 of the data.
    assert!(failed["failed"][0]["slots_to_rebuild"].as_u64().unwrap() > 300, "a card full of data: {failed}");
    // Under way: the status says so, with its progress (what `flashlab
    // status` shows as an alert).
    let during = control(&card, &["status"]);
    let alerts: Vec<&str> = during["alerts"].as_array().unwrap().iter().filter_map(|a| a.as_str()).collect();
    assert!(during["rebuilding"] == true && alerts.iter().any(|a| a.starts_with("rebuild of die 3.1 running:") && a.ends_with("%)")), "{alerts:?}");
    let o = verify.wait_with_output().unwrap();
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success() && out.contains("err= 0") && !out.contains("verify: bad"), "{out}");
    let mut status = control(&card, &["status"]);
    for _ in 0..100 {
        if status["rebuilding"] == false {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        status = control(&card, &["status"]);
    }
    let f = &status["failures"][0];
    let (at, done) = (f["failed_at_ns"].as_u64().unwrap(), f["rebuild_done_ns"].as_u64().expect("the rebuild ended"));
    assert!(done > at && f["slots_moved"].as_u64().unwrap() > 0 && f["lost_offsets"].as_array().unwrap().is_empty(), "{status}");
    assert_eq!(status["dead_dies"], serde_json::json!([[35]]));
    assert!(status["faults"]["degraded_page_reads"].as_u64().unwrap() > 0, "{status}");
    // Every block fio wrote reads back once more, now from the narrowed card.
    let reverify = fio_job(
        &dir,
        "reverify.fio",
        &card.uri(),
        "[verify]\nrw=randwrite\nbs=4k\niodepth=16\nnumjobs=4\nsize=25%\noffset_increment=25%\nverify=crc32c\nverify_fatal=1\ndo_verify=1\nverify_only=1\n",
    );
    let out = run(Command::new(&fio).arg(&reverify));
    assert!(out.contains("err= 0") && !out.contains("verify: bad"), "{out}");
    eprintln!("rebuild: {} slots in {:.3} s of the card's clock", f["slots_moved"], (done - at) as f64 / 1e9);
}

/// Two dies of one stripe fail before the rebuild: what they held is
/// lost, and reading it is an NBD I/O error (EIO), never other bytes;
/// everything else reads back; a lost block written again reads its new
/// data; the card's status names what was lost, and a restart keeps it.
#[test]
fn a_second_failure_in_a_stripe_is_an_io_error_never_wrong_bytes() {
    use emu::nbd;
    use testkit::Client;
    let mut card = Served::start("twodies", &["--timing", "none"]);
    let mut c = Client::connect(&card.socket, &card.name).unwrap();
    let blocks = (c.size / 4096).min(20_000);
    let stamp = |b: u64| {
        let mut v = vec![(b % 251) as u8; 4096];
        v[..8].copy_from_slice(&b.to_le_bytes());
        v
    };
    for b in 0..blocks {
        assert_eq!(c.call(nbd::CMD_WRITE, 0, b * 4096, 4096, &stamp(b)).unwrap().error, 0);
    }
    // Dies 0.0 and 1.0 (the first die of channels 0 and 1: dies 0 and 1,
    // numbered channel first) are in the same stripe group of 8; they
    // fail together, before any rebuild.
    let both = control(&card, &["fail-die", "0.0", "1.0"]);
    let second = &both["failed"][1];
    let lost: Vec<u64> = second["lost_offsets"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert!(!lost.is_empty(), "{both}");
    let mut eio = 0;
    for b in 0..blocks {
        let r = c.call(nbd::CMD_READ, 0, b * 4096, 4096, &[]).unwrap();
        if lost.contains(&(b * 4096)) {
            assert_eq!(r.error, nbd::EIO, "block {b} was lost: an I/O error");
            eio += 1;
        } else {
            assert_eq!((r.error, r.data == stamp(b)), (0, true), "block {b} reads back");
        }
    }
    assert_eq!(eio, lost.iter().filter(|&&o| o < blocks * 4096).count());
    let b = lost[0] / 4096;
    assert_eq!(c.call(nbd::CMD_WRITE, nbd::CMD_FLAG_FUA, b * 4096, 4096, &stamp(b)).unwrap().error, 0);
    assert_eq!(c.call(nbd::CMD_READ, 0, b * 4096, 4096, &[]).unwrap().data, stamp(b), "a lost block written again");
    drop(c);
    // A power cut: the card comes back with both dies failed and the
    // other lost blocks still errors.
    card.cut_and_restart();
    let status = control(&card, &["status"]);
    assert_eq!(status["dead_dies"], serde_json::json!([[0, 1]]), "{status}");
    let mut c = Client::connect(&card.socket, &card.name).unwrap();
    if let Some(&o) = lost.iter().find(|&&o| o != b * 4096 && o < blocks * 4096) {
        assert_eq!(c.call(nbd::CMD_READ, 0, o, 4096, &[]).unwrap().error, nbd::EIO, "still lost after a restart");
    }
    assert_eq!(c.call(nbd::CMD_READ, 0, b * 4096, 4096, &[]).unwrap().data, stamp(b));
}

/// `serve --trace`: fio's mixed load on the served card is captured, and
/// replayed on the same card and format at the recorded times it gives
/// the served card's own average latency (within 10%); replayed on
/// another card it runs too.
#[test]
fn a_captured_trace_replays_to_the_served_cards_latency() {
    let fio = tool("fio", "fio");
    let dir = workdir("trace");
    let trace = dir.join("card.trace");
    let mut card = Served::start("trace", &["--trace", trace.to_str().unwrap()]);
    let job = fio_job(&dir, "mixed.fio", &card.uri(), "[mixed]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=8\nsize=64m\ntime_based\nruntime=2\n");
    run(Command::new(&fio).arg(&job));
    let (code, log) = card.stop_clean();
    assert_eq!(code, 0, "{log}");
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.starts_with("flashlab trace v1\n# card p420m stock scale 8192\n") && text.lines().count() > 1_000, "{}", &text[..text.len().min(300)]);
    let (code, out, err) = flashlab(&["replay", trace.to_str().unwrap(), "p420m", "--scale", "8192", "--before", "fresh", "-q"]);
    assert_eq!(code, 0, "{err}");
    let error: f64 = out
        .lines()
        .find(|l| l.contains("recorded in the trace"))
        .and_then(|l| l.rsplit("ms, ").next()?.split('%').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no recorded latency beside the replay's: {out}"));
    assert!(error.abs() < 10.0, "replayed {error:+.1}% from the served card's latency: {out}");
    let chart = dir.join("rank.svg");
    let (code, out, err) = flashlab(&["replay", trace.to_str().unwrap(), "mx6300", "flashmax2", "--scale", "8192", "--chart", chart.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("flashlab trace at the recorded times") && out.contains("ranked by average latency"), "{out}");
    assert!(!out.contains("recorded in the trace"), "another card's replay is not set beside the capture: {out}");
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains(">mx6300<") && svg.contains(">flashmax2<"), "{}", &svg[..svg.len().min(400)]);
    // The chart in the table's rank order.
    let table: Vec<&str> = out.lines().skip_while(|l| !l.contains("ranked by")).skip(2).filter_map(|l| l.split_whitespace().nth(1)).collect();
    let (m, f) = (svg.find(">mx6300<").unwrap(), svg.find(">flashmax2<").unwrap());
    assert_eq!(if m < f { ["mx6300", "flashmax2"] } else { ["flashmax2", "mx6300"] }, table[..2], "chart order against the ranking: {out}");
}
