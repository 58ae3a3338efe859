//! NBD over TLS (STARTTLS) with real clients: nbdinfo and qemu-img with
//! x509 credentials, fio's nbd engine over an `nbds+unix://` URI; a plain
//! client and a TLS client without a certificate refused, the server
//! serving on; credentials that cannot serve, and a network address
//! without client authentication, refused before anything starts.
//! Certificates are made for the test with openssl.

mod common;

use common::{refused, tool, Scratch, Served};
use std::path::Path;
use std::process::Command;

/// Runs openssl with `args` in `dir`; fails the test with its output.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new(tool("openssl", "openssl")).args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A certificate authority, a server certificate for localhost and a
/// client certificate it signed, in `dir` under the names GnuTLS clients
/// (libnbd, qemu) look for: `ca-cert.pem`, `server-cert.pem`,
/// `server-key.pem`, `client-cert.pem`, `client-key.pem`.
fn credentials(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    openssl(
        dir,
        &["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca-key.pem", "-out", "ca-cert.pem", "-days", "30", "-subj", "/CN=flashlab test CA"],
    );
    for (who, ext) in [("server", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"), ("client", "extendedKeyUsage=clientAuth\n")] {
        std::fs::write(dir.join(format!("{who}.ext")), ext).unwrap();
        let (key, csr, cert) = (format!("{who}-key.pem"), format!("{who}.csr"), format!("{who}-cert.pem"));
        openssl(dir, &["req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr, "-subj", &format!("/CN={who}")]);
        let ext = format!("{who}.ext");
        openssl(
            dir,
            &["x509", "-req", "-in", &csr, "-CA", "ca-cert.pem", "-CAkey", "ca-key.pem", "-CAcreateserial", "-out", &cert, "-days", "30", "-extfile", &ext],
        );
    }
}

/// A client's credentials directory: the authority, and the client's
/// certificate and key where `with_cert`.
fn client_dir(creds: &Path, to: &Path, with_cert: bool) {
    std::fs::create_dir_all(to).unwrap();
    let mut names = vec!["ca-cert.pem"];
    if with_cert {
        names.extend(["client-cert.pem", "client-key.pem"]);
    }
    for n in names {
        std::fs::copy(creds.join(n), to.join(n)).unwrap();
    }
}

/// `serve` arguments that require TLS with `creds`, client certificates
/// too where `clients`.
fn tls_args(creds: &Path, clients: bool) -> Vec<String> {
    let mut a =
        vec!["--tls-cert".into(), creds.join("server-cert.pem").display().to_string(), "--tls-key".into(), creds.join("server-key.pem").display().to_string()];
    if clients {
        a.extend(["--tls-client-ca".into(), creds.join("ca-cert.pem").display().to_string()]);
    }
    a
}

fn nbdinfo(uri: &str) -> std::process::Output {
    Command::new(tool("nbdinfo", "libnbd-bin")).args(["--size", uri]).output().unwrap()
}

#[test]
fn a_tls_export_serves_real_tls_clients_and_refuses_plain_and_uncertified_ones() {
    let keys = Scratch::new("tls-keys");
    credentials(&keys);
    let (with, without) = (keys.join("client"), keys.join("client-no-cert"));
    client_dir(&keys, &with, true);
    client_dir(&keys, &without, false);
    let args = tls_args(&keys, true);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut s = Served::start("tls", &args);
    let socket = s.socket.display().to_string();
    let tls_uri = |dir: &Path| format!("nbds+unix:///p420m?socket={socket}&tls-certificates={}", dir.display());

    // nbdinfo with the client's certificate: the export and its size.
    let out = nbdinfo(&tls_uri(&with));
    assert!(out.status.success(), "nbdinfo over TLS: {}", String::from_utf8_lossy(&out.stderr));
    let size: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!(size > 100_000_000, "export size {size}");

    // A plain client is told TLS is required; a TLS client without a
    // certificate fails the TLS handshake.
    let plain = nbdinfo(&s.uri());
    assert!(!plain.status.success(), "a plain client was served: {}", String::from_utf8_lossy(&plain.stdout));
    let uncertified = nbdinfo(&tls_uri(&without));
    assert!(!uncertified.status.success(), "a client without a certificate was served");

    // qemu-img writes 8 MiB over TLS and reads them back the same (over
    // the export's first 8 MiB: compare warns of the sizes).
    let image = s.dir.join("data.img");
    let data: Vec<u8> = (0..8u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&image, &data).unwrap();
    let creds = format!("tls-creds-x509,id=tls0,dir={},endpoint=client", with.display());
    let target = format!("driver=nbd,path={socket},export=p420m,tls-creds=tls0,tls-hostname=localhost");
    let qemu = |args: &[&str]| Command::new(tool("qemu-img", "qemu-utils")).args(args).output().unwrap();
    let out = qemu(&["convert", "-n", "-f", "raw", "--object", &creds, image.to_str().unwrap(), "--target-image-opts", &target]);
    assert!(out.status.success(), "qemu-img convert over TLS: {}", String::from_utf8_lossy(&out.stderr));
    let file = format!("driver=file,filename={}", image.display());
    let out = qemu(&["compare", "--object", &creds, "--image-opts", &file, &target]);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("identical"),
        "qemu-img compare over TLS: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    // The server served on through every refusal, and says why it refused.
    let out = nbdinfo(&tls_uri(&with));
    assert!(out.status.success(), "nbdinfo after the refusals: {}", String::from_utf8_lossy(&out.stderr));
    let log = s.stop_clean().1;
    assert!(log.contains("nbds+unix:///p420m"), "the export's URI names TLS: {log}");
    assert!(log.contains("TLS handshake failed"), "the uncertified client's refusal is logged: {log}");
}

#[test]
fn fio_verifies_its_writes_over_tls_at_queue_depth_16() {
    let keys = Scratch::new("tls-fio-keys");
    credentials(&keys);
    // fio's nbd engine may not point libnbd at a credentials directory (a
    // URI's local files are refused): a server without client
    // certificates, and the client not checking the server's.
    let args = tls_args(&keys, false);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let s = Served::start("tls-fio", &args);
    let uri = format!("nbds+unix:///p420m?socket={}&tls-verify-peer=false", s.socket.display());
    let out = Command::new(tool("fio", "fio"))
        .args(["--name=tls", "--ioengine=nbd", &format!("--uri={uri}"), "--rw=randwrite", "--bs=4k", "--iodepth=16", "--size=32m"])
        .args(["--verify=crc32c", "--do_verify=1", "--verify_fatal=1", "--output-format=terse"])
        .output()
        .unwrap();
    assert!(out.status.success(), "fio over TLS: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let terse = String::from_utf8_lossy(&out.stdout);
    let error = terse.split(';').nth(4).unwrap_or("?");
    assert_eq!(error, "0", "fio reported an error over TLS: {terse}");
}

#[test]
fn tls_credentials_and_network_addresses_are_checked_before_serving() {
    let keys = Scratch::new("tls-bad-keys");
    credentials(&keys);
    let dir = Scratch::new("tls-bad");
    std::fs::create_dir_all(&*dir).unwrap();
    let store = dir.join("store");
    let store = store.to_str().unwrap();
    let k = |n: &str| keys.join(n).display().to_string();
    let serve = |more: &[&str]| {
        let mut a = vec!["serve", "p420m", "--scale", "8192", "--store", store];
        a.extend_from_slice(more);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let check = |more: &[&str], needle: &str| {
        let a = serve(more);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        refused(&a, needle);
    };
    let (cert, key) = (k("server-cert.pem"), k("server-key.pem"));
    let missing = k("none.pem");
    let sock = dir.join("n.sock").display().to_string();
    check(&["--unix", &sock, "--tls-cert", &missing, "--tls-key", &key], "--tls-cert");
    check(&["--unix", &sock, "--tls-cert", &key, "--tls-key", &key], "no certificate");
    check(&["--unix", &sock, "--tls-cert", &cert, "--tls-key", &cert], "--tls-key");
    check(&["--unix", &sock, "--tls-cert", &cert, "--tls-key", &k("client-key.pem")], "do not go together");
    check(&["--unix", &sock, "--tls-cert", &cert], "--tls-key");
    // Beyond loopback: TLS without client certificates is not enough.
    check(&["--listen", "0.0.0.0:0", "--tls-cert", &cert, "--tls-key", &key], "--tls-client-ca");
    check(&["--listen", "0.0.0.0:0"], "--tls-cert");
    assert!(!Path::new(store).exists(), "a refused start left a store");
}
