//! The fixed newstyle handshake, server side: the greeting, the client's
//! flags, and the options up to the export the client chooses (or its
//! request for TLS).

use super::*;
use std::io::{Read, Write};

fn be_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}
fn be_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

fn option_reply(w: &mut impl Write, option: u32, kind: u32, data: &[u8]) -> io::Result<()> {
    let mut m = Vec::with_capacity(20 + data.len());
    m.extend_from_slice(&REPLY_MAGIC.to_be_bytes());
    m.extend_from_slice(&option.to_be_bytes());
    m.extend_from_slice(&kind.to_be_bytes());
    m.extend_from_slice(&(data.len() as u32).to_be_bytes());
    m.extend_from_slice(data);
    w.write_all(&m)
}

/// The fixed newstyle handshake, server side, up to the export the client
/// chooses (or its request for TLS, where `tls` offers it).
pub fn negotiate<S: Read + Write>(s: &mut S, exports: &[Export], tls: Tls) -> Result<(Negotiated, bool), ProtoError> {
    let no_zeroes = greet(s)?;
    Ok((options(s, exports, no_zeroes, tls)?, no_zeroes))
}

/// The server's greeting and the client's flags: whether the client asked
/// for no zeroes after the export's flags.
fn greet<S: Read + Write>(s: &mut S) -> Result<bool, ProtoError> {
    let mut hello = Vec::with_capacity(18);
    hello.extend_from_slice(&NBDMAGIC.to_be_bytes());
    hello.extend_from_slice(&IHAVEOPT.to_be_bytes());
    hello.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&hello)?;
    s.flush()?;
    let client = be_u32(s)?;
    if client & FLAG_C_FIXED_NEWSTYLE == 0 {
        return Err(ProtoError::Violation(format!("client flags {client:#x}: only the fixed newstyle handshake is served")));
    }
    if client & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
        return Err(ProtoError::Violation(format!("client flags {client:#x}: unknown flags")));
    }
    Ok(client & FLAG_C_NO_ZEROES != 0)
}

/// The options, up to the one that ends the handshake: an export chosen,
/// an abort, or TLS to start (then called again over it, `Tls::Started`).
pub fn options<S: Read + Write>(s: &mut S, exports: &[Export], no_zeroes: bool, tls: Tls) -> Result<Negotiated, ProtoError> {
    loop {
        let magic = be_u64(s)?;
        if magic != IHAVEOPT {
            return Err(ProtoError::Violation(format!("option magic {magic:#x}, expected IHAVEOPT")));
        }
        let option = be_u32(s)?;
        let len = be_u32(s)?;
        if len > OPTION_BYTES_MAX {
            return Err(ProtoError::Violation(format!("option {option} of {len} bytes: at most {OPTION_BYTES_MAX}")));
        }
        let mut data = vec![0; len as usize];
        s.read_exact(&mut data)?;
        let done = match tls_gate(s, option, &data, tls)? {
            Gate::Pass => option_handle(s, exports, option, &data, no_zeroes)?,
            Gate::Answered => None,
            Gate::StartTls => Some(Negotiated::StartTls),
        };
        s.flush()?;
        if let Some(done) = done {
            return Ok(done);
        }
    }
}

/// What TLS makes of an option.
enum Gate {
    /// Handled as any option.
    Pass,
    /// Answered here (refused).
    Answered,
    /// STARTTLS accepted: the TLS handshake follows.
    StartTls,
}

/// STARTTLS and the options a server that requires TLS refuses before it.
fn tls_gate<S: Write>(s: &mut S, option: u32, data: &[u8], tls: Tls) -> Result<Gate, ProtoError> {
    match (option, tls) {
        (OPT_STARTTLS, Tls::Off) => {
            option_reply(s, option, REP_ERR_UNSUP, b"this server does not offer TLS")?;
            Ok(Gate::Answered)
        }
        (OPT_STARTTLS, Tls::Started) => {
            option_reply(s, option, REP_ERR_INVALID, b"TLS is already started")?;
            Ok(Gate::Answered)
        }
        (OPT_STARTTLS, Tls::Required) if !data.is_empty() => {
            option_reply(s, option, REP_ERR_INVALID, b"NBD_OPT_STARTTLS takes no data")?;
            Ok(Gate::Answered)
        }
        (OPT_STARTTLS, Tls::Required) => {
            option_reply(s, option, REP_ACK, &[])?;
            Ok(Gate::StartTls)
        }
        // No reply is possible to EXPORT_NAME: the server closes.
        (OPT_EXPORT_NAME, Tls::Required) => Err(ProtoError::Violation("NBD_OPT_EXPORT_NAME before STARTTLS: this server requires TLS".into())),
        (OPT_ABORT, _) | (_, Tls::Off | Tls::Started) => Ok(Gate::Pass),
        (_, Tls::Required) => {
            option_reply(s, option, REP_ERR_TLS_REQD, b"this server requires TLS: start it with NBD_OPT_STARTTLS")?;
            Ok(Gate::Answered)
        }
    }
}

/// One option; `Some` when the handshake ends with it.
fn option_handle<S: Write>(s: &mut S, exports: &[Export], option: u32, data: &[u8], no_zeroes: bool) -> Result<Option<Negotiated>, ProtoError> {
    match option {
        OPT_EXPORT_NAME => {
            if data.len() > NAME_BYTES_MAX {
                return Err(ProtoError::Violation(format!("an export name of {} bytes: at most {NAME_BYTES_MAX}", data.len())));
            }
            let name = String::from_utf8_lossy(data);
            let Some(i) = export_find(exports, &name) else {
                // No reply is possible to EXPORT_NAME: the server closes.
                return Err(ProtoError::Violation(format!("no export named '{name}'")));
            };
            let e = &exports[i];
            let mut m = Vec::with_capacity(10 + 124);
            m.extend_from_slice(&e.size_bytes.to_be_bytes());
            m.extend_from_slice(&e.flags.to_be_bytes());
            if !no_zeroes {
                m.extend_from_slice(&[0; 124]);
            }
            s.write_all(&m)?;
            Ok(Some(Negotiated::Export(i)))
        }
        OPT_ABORT => {
            option_reply(s, option, REP_ACK, &[])?;
            Ok(Some(Negotiated::Abort))
        }
        OPT_LIST => {
            if !data.is_empty() {
                option_reply(s, option, REP_ERR_INVALID, b"NBD_OPT_LIST takes no data")?;
                return Ok(None);
            }
            for e in exports {
                let mut d = (e.name.len() as u32).to_be_bytes().to_vec();
                d.extend_from_slice(e.name.as_bytes());
                d.extend_from_slice(e.description.as_bytes());
                option_reply(s, option, REP_SERVER, &d)?;
            }
            option_reply(s, option, REP_ACK, &[])?;
            Ok(None)
        }
        OPT_INFO | OPT_GO => info_or_go(s, exports, option, data),
        _ => {
            option_reply(s, option, REP_ERR_UNSUP, format!("option {option} is not supported").as_bytes())?;
            Ok(None)
        }
    }
}

fn export_find(exports: &[Export], name: &str) -> Option<usize> {
    // The empty name is the default export: the first.
    if name.is_empty() && !exports.is_empty() {
        return Some(0);
    }
    exports.iter().position(|e| e.name == name)
}

/// NBD_OPT_INFO and NBD_OPT_GO: the export's size, flags, name,
/// description and block sizes, then ACK (and, for GO, transmission).
fn info_or_go<S: Write>(s: &mut S, exports: &[Export], option: u32, data: &[u8]) -> Result<Option<Negotiated>, ProtoError> {
    let parsed = (|| {
        let name_len = u32::from_be_bytes(data.get(0..4)?.try_into().ok()?) as usize;
        let name = data.get(4..4 + name_len)?;
        let n = u16::from_be_bytes(data.get(4 + name_len..6 + name_len)?.try_into().ok()?) as usize;
        (data.len() == 6 + name_len + 2 * n).then(|| String::from_utf8_lossy(name).to_string())
    })();
    let Some(name) = parsed else {
        option_reply(s, option, REP_ERR_INVALID, b"malformed NBD_OPT_INFO/GO request")?;
        return Ok(None);
    };
    if name.len() > NAME_BYTES_MAX {
        option_reply(s, option, REP_ERR_INVALID, format!("an export name of {} bytes: at most {NAME_BYTES_MAX}", name.len()).as_bytes())?;
        return Ok(None);
    }
    let Some(i) = export_find(exports, &name) else {
        option_reply(s, option, REP_ERR_UNKNOWN, format!("no export named '{name}'").as_bytes())?;
        return Ok(None);
    };
    let e = &exports[i];
    let mut export = INFO_EXPORT.to_be_bytes().to_vec();
    export.extend_from_slice(&e.size_bytes.to_be_bytes());
    export.extend_from_slice(&e.flags.to_be_bytes());
    option_reply(s, option, REP_INFO, &export)?;
    let mut name_info = INFO_NAME.to_be_bytes().to_vec();
    name_info.extend_from_slice(e.name.as_bytes());
    option_reply(s, option, REP_INFO, &name_info)?;
    let mut desc = INFO_DESCRIPTION.to_be_bytes().to_vec();
    desc.extend_from_slice(e.description.as_bytes());
    option_reply(s, option, REP_INFO, &desc)?;
    let mut block = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
    for v in [BLOCK_MIN, BLOCK_PREFERRED, PAYLOAD_BYTES_MAX] {
        block.extend_from_slice(&v.to_be_bytes());
    }
    option_reply(s, option, REP_INFO, &block)?;
    option_reply(s, option, REP_ACK, &[])?;
    Ok((option == OPT_GO).then_some(Negotiated::Export(i)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    /// A stream that reads from a script and records what is written.
    struct Duplex {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
    }
    impl Read for Duplex {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.input.read(b)
        }
    }
    impl Write for Duplex {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.output.write(b)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn exports() -> Vec<Export> {
        vec![Export { name: "card".into(), description: "a card".into(), size_bytes: 1 << 30, flags: TFLAG_HAS_FLAGS }]
    }

    fn option(o: u32, data: &[u8]) -> Vec<u8> {
        let mut m = IHAVEOPT.to_be_bytes().to_vec();
        m.extend_from_slice(&o.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        m
    }

    fn go(name: &str) -> Vec<u8> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&0u16.to_be_bytes());
        option(OPT_GO, &d)
    }

    fn run(script: Vec<u8>) -> (Result<Negotiated, ProtoError>, Vec<u8>) {
        run_tls(script, Tls::Off)
    }

    fn run_tls(script: Vec<u8>, tls: Tls) -> (Result<Negotiated, ProtoError>, Vec<u8>) {
        let mut s = Duplex { input: Cursor::new(script), output: Vec::new() };
        let r = negotiate(&mut s, &exports(), tls).map(|(n, _)| n);
        (r, s.output)
    }

    /// The option replies in `out` (past the 18-byte greeting), in order.
    fn replies(out: &[u8]) -> Vec<u32> {
        let mut kinds = Vec::new();
        let mut at = 18;
        while at + 20 <= out.len() && out[at..at + 8] == REPLY_MAGIC.to_be_bytes() {
            kinds.push(u32::from_be_bytes(out[at + 12..at + 16].try_into().unwrap()));
            at += 20 + u32::from_be_bytes(out[at + 16..at + 20].try_into().unwrap()) as usize;
        }
        kinds
    }

    /// Where TLS is required, every option but STARTTLS and ABORT is
    /// refused with TLS_REQD (EXPORT_NAME, which takes no reply, ends the
    /// handshake); STARTTLS takes no data and is acknowledged; started,
    /// TLS cannot start again; not offered, STARTTLS is unsupported.
    #[test]
    fn tls_required_refuses_every_option_until_starttls() {
        let hello = (FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes().to_vec();
        let mut script = hello.clone();
        script.extend(option(OPT_LIST, b""));
        script.extend(go("card"));
        script.extend(option(OPT_INFO, b""));
        script.extend(option(OPT_STARTTLS, b"x"));
        script.extend(option(OPT_STARTTLS, b""));
        let (r, out) = run_tls(script, Tls::Required);
        assert_eq!(r.unwrap(), Negotiated::StartTls);
        assert_eq!(replies(&out), [REP_ERR_TLS_REQD, REP_ERR_TLS_REQD, REP_ERR_TLS_REQD, REP_ERR_INVALID, REP_ACK]);

        let mut script = hello.clone();
        script.extend(option(OPT_EXPORT_NAME, b"card"));
        let (r, out) = run_tls(script, Tls::Required);
        assert!(r.unwrap_err().to_string().contains("requires TLS"));
        assert_eq!(out.len(), 18, "EXPORT_NAME before TLS was answered");

        let mut script = hello.clone();
        script.extend(option(OPT_ABORT, b""));
        assert_eq!(run_tls(script, Tls::Required).0.unwrap(), Negotiated::Abort);

        let mut script = hello.clone();
        script.extend(option(OPT_STARTTLS, b""));
        script.extend(go("card"));
        let (r, out) = run_tls(script.clone(), Tls::Started);
        assert_eq!(r.unwrap(), Negotiated::Export(0));
        assert_eq!(replies(&out)[0], REP_ERR_INVALID);
        let (r, out) = run_tls(script, Tls::Off);
        assert_eq!(r.unwrap(), Negotiated::Export(0));
        assert_eq!(replies(&out)[0], REP_ERR_UNSUP);
    }

    #[test]
    fn go_after_an_unknown_option_and_a_list_reaches_the_export() {
        let mut script = (FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes().to_vec();
        script.extend(option(99, b"xyz"));
        script.extend(option(OPT_LIST, b""));
        script.extend(go("nonesuch"));
        script.extend(go("card"));
        let (r, out) = run(script);
        assert_eq!(r.unwrap(), Negotiated::Export(0));
        let has = |kind: u32| out.windows(4).any(|w| w == kind.to_be_bytes());
        assert!(has(REP_ERR_UNSUP) && has(REP_SERVER) && has(REP_ERR_UNKNOWN) && has(REP_INFO));
    }

    /// Strings are at most 4096 bytes (the specification): a longer
    /// export name is refused, and never echoed back.
    #[test]
    fn export_names_past_the_protocols_limit_are_refused_unechoed() {
        let long = "n".repeat(NAME_BYTES_MAX + 1);
        let mut script = (FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes().to_vec();
        script.extend(go(&long));
        script.extend(go("card"));
        let (r, out) = run(script);
        assert_eq!(r.unwrap(), Negotiated::Export(0));
        assert!(out.windows(4).any(|w| w == REP_ERR_INVALID.to_be_bytes()));
        assert!(out.len() < 4096, "the name was echoed: {} bytes out", out.len());
        let mut script = (FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes().to_vec();
        script.extend(option(OPT_EXPORT_NAME, long.as_bytes()));
        let (r, out) = run(script);
        assert!(r.unwrap_err().to_string().contains("at most 4096"));
        assert!(out.len() < 4096);
    }

    #[test]
    fn an_old_style_client_and_a_bad_magic_are_refused() {
        let (r, _) = run(0u32.to_be_bytes().to_vec());
        assert!(r.unwrap_err().to_string().contains("fixed newstyle"));
        let mut script = FLAG_C_FIXED_NEWSTYLE.to_be_bytes().to_vec();
        script.extend_from_slice(&[0xde; 16]);
        assert!(run(script).0.unwrap_err().to_string().contains("option magic"));
    }

    proptest! {
        // The suite's fixed draw (testkit::props, which this crate is
        // below): the same cases every run, PROPTEST_RNG_SEED to vary them.
        #![proptest_config({
            let c = ProptestConfig::default();
            let fixed = std::env::var_os("PROPTEST_RNG_SEED").is_none();
            ProptestConfig { rng_seed: if fixed { proptest::test_runner::RngSeed::Fixed(0x5eed_f1a5) } else { c.rng_seed }, ..c }
        })]

        /// Any bytes at all: the handshake and the request parser return
        /// an error or a result, never panic, and never ask for more than
        /// their limits.
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = run(bytes.clone());
            let mut with_flags = (FLAG_C_FIXED_NEWSTYLE).to_be_bytes().to_vec();
            with_flags.extend_from_slice(&bytes);
            for tls in [Tls::Off, Tls::Required, Tls::Started] {
                let _ = run_tls(with_flags.clone(), tls);
            }
            let mut c = Cursor::new(bytes);
            while let Ok(Some(_)) = request_read(&mut c) {}
        }
    }
}
