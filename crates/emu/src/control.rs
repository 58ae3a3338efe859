//! The control channel's protocol (version 1): one JSON object a line each
//! way, over the Unix socket `control.sock` in a served card's store.
//! Documented with examples in `docs/guide/control.md`.
//!
//! A request names the protocol version and a command, with the command's
//! own fields: `{"v": 1, "cmd": "status"}`. A reply says whether it worked:
//! `{"v": 1, "ok": true, "result": {...}}` or `{"v": 1, "ok": false,
//! "error": "..."}`. A request that is not JSON, not an object, of another
//! version, an unknown command or with a field the command does not take
//! is refused by name and changes nothing.

use serde_json::{json, Map, Value};

/// The protocol version this build speaks.
pub const VERSION: u64 = 1;

/// What a `volumes` request's count must be.
const VOLUMES_COUNT_RULE: &str = "volumes: \"count\" must be 1 (merged) or 2 (split)";

/// What a served card can be told besides NBD requests.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// The card's status: identity, health, failures and rebuilds, power,
    /// SMART log, alerts, volumes and clients.
    Status,
    /// Live statistics: the last whole second's I/O (IOPS, MB/s, latency
    /// average, p99 and max), GC, write amplification, buffer fill, power,
    /// and the totals since the card started serving.
    Stats,
    /// Dies (or channels) fail now, together, in order; the rebuild
    /// starts. Stops at the first that cannot fail (already dead).
    FailDie(Vec<card::FailTarget>),
    /// The identify LED, on or off (kept in the store).
    Beacon(bool),
    /// The card formatted anew at a named format or a capacity, every
    /// byte lost; with `secure_erase`, purged from the media too. Runs
    /// only with `force` and no client connected.
    Format { format: String, secure_erase: bool, force: bool },
    /// The card presented as `count` volumes (1: merged, 2: split), every
    /// byte lost (each volume's data would move). Runs only with `force`
    /// and no client connected.
    Volumes { count: u32, force: bool },
}

/// A request that is not one of the protocol, or a reply that is not;
/// a command's words `flashlab control` cannot make one of.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("malformed request: not JSON ({0}); send one object a line, e.g. {{\"v\": 1, \"cmd\": \"status\"}}")]
    NotJson(String),
    #[error("malformed request: not a JSON object; e.g. {{\"v\": 1, \"cmd\": \"status\"}}")]
    NotObject,
    #[error("protocol version {0}: this card speaks version {VERSION}")]
    Version(u64),
    #[error("malformed request: no protocol version (\"v\": {VERSION})")]
    NoVersion,
    #[error("malformed request: no command (\"cmd\": \"status\")")]
    NoCommand,
    #[error("unknown command '{0}': expected one of {}", COMMANDS.map(|c| c.0).join(", "))]
    UnknownCommand(String),
    #[error("command '{cmd}' takes no field '{field}'{}", if takes.is_empty() { String::new() } else { format!(" (it takes: {})", takes.join(", ")) })]
    NoSuchField { cmd: String, field: String, takes: &'static [&'static str] },
    /// A field the command takes, not as it takes it: the rule.
    #[error("{0}")]
    Field(&'static str),
    #[error("\"{name}\" must be true or false, not {value}")]
    Flag { name: String, value: String },
    #[error("fail-die: target {0} is not a string")]
    TargetNotText(String),
    #[error(transparent)]
    Target(#[from] card::TargetError),
    #[error("volumes {0}: a count of volumes, 1 or {max}", max = card::VOLUMES_MAX)]
    VolumeWord(String),
    #[error("unknown command '{0}': expected 'status', 'stats', 'fail-die CHANNEL.DIE...', 'beacon on|off', 'format FORMAT [secure-erase] [force]' or 'volumes 1|2 [force]'")]
    Words(String),
    #[error("the card's reply is not JSON ({why}): {line}")]
    ReplyNotJson { why: String, line: String },
    #[error("the card replied in another protocol version: {0}")]
    ReplyVersion(String),
    /// The card refused the request, saying why.
    #[error("{0}")]
    Refused(String),
}

/// Why a served card did not run a command it was told.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error(transparent)]
    Request(#[from] RequestError),
    #[error(transparent)]
    Device(#[from] card::DeviceError),
    #[error(transparent)]
    Store(#[from] card::StoreError),
    #[error(transparent)]
    Volumes(#[from] card::VolumesError),
    #[error("the card has stopped")]
    Stopped,
    #[error("the card is already {0} volume{}: nothing done (to erase it, format it: flashlab format --store STORE --format F --force)", if *.0 == 1 { "" } else { "s" })]
    AlreadySo(u32),
    /// A command that destroys every byte (`what`), with clients connected.
    #[error("{what}, and {clients} client{} connected: disconnect {} first", if *clients == 1 { " is" } else { "s are" }, if *clients == 1 { "it" } else { "them" })]
    Connected { what: &'static str, clients: usize },
    #[error("{0}: refused without force (--force to flashlab format or volumes, the word force to flashlab control, \"force\": true in a JSON request)")]
    Unforced(&'static str),
}

/// The commands and the fields each takes besides `v` and `cmd`.
const COMMANDS: [(&str, &[&str]); 6] = [
    ("status", &[]),
    ("stats", &[]),
    ("fail-die", &["targets"]),
    ("beacon", &["on"]),
    ("format", &["format", "secure_erase", "force"]),
    ("volumes", &["count", "force"]),
];

/// Whether a command that destroys the card's data may run on a card of
/// `profile` at `scale`: only a command that could run (a format the card
/// can take), when told so (`force`) and with no client connected (the
/// card would change under it). The one rule for a served card and one at
/// rest.
pub fn destroy_check(c: &Control, profile: &card::Profile, scale: u32, clients: usize) -> Result<(), ControlError> {
    if let Control::Format { format, .. } = c {
        card::Device::validate(profile, format, scale)?;
    }
    let what = match c {
        Control::Format { secure_erase: true, .. } => "a secure erase destroys every byte on the card and purges it from the media",
        Control::Format { .. } => "a format destroys every byte on the card",
        Control::Volumes { count: 1, .. } => "merging the volumes destroys every byte on the card (each volume's data would move)",
        Control::Volumes { .. } => "splitting the card destroys every byte on it (each volume's data would move)",
        _ => return Ok(()),
    };
    if clients > 0 {
        return Err(ControlError::Connected { what, clients });
    }
    if !c.force() {
        return Err(ControlError::Unforced(what));
    }
    Ok(())
}

impl Control {
    /// The commands' first words, as `request_of_words` takes them.
    pub const WORDS: [&'static str; 6] = ["status", "stats", "fail-die", "beacon", "format", "volumes"];

    /// A request line of the protocol.
    pub fn parse(line: &str) -> Result<Control, RequestError> {
        let v: Value = serde_json::from_str(line.trim()).map_err(|e| RequestError::NotJson(e.to_string()))?;
        let Value::Object(o) = v else { return Err(RequestError::NotObject) };
        match o.get("v").and_then(Value::as_u64) {
            Some(VERSION) => {}
            Some(other) => return Err(RequestError::Version(other)),
            None => return Err(RequestError::NoVersion),
        }
        let Some(cmd) = o.get("cmd").and_then(Value::as_str) else { return Err(RequestError::NoCommand) };
        let Some((_, fields)) = COMMANDS.iter().find(|c| c.0 == cmd) else {
            return Err(RequestError::UnknownCommand(cmd.to_string()));
        };
        if let Some(k) = o.keys().find(|k| !["v", "cmd"].contains(&k.as_str()) && !fields.contains(&k.as_str())) {
            return Err(RequestError::NoSuchField { cmd: cmd.to_string(), field: k.clone(), takes: fields });
        }
        Control::of(cmd, &o)
    }

    fn of(cmd: &str, o: &Map<String, Value>) -> Result<Control, RequestError> {
        match cmd {
            "status" => Ok(Control::Status),
            "stats" => Ok(Control::Stats),
            "fail-die" => {
                let targets = o.get("targets").and_then(Value::as_array).filter(|t| !t.is_empty());
                let targets = targets.ok_or(RequestError::Field(
                    "fail-die: \"targets\" must be a list of one or more \"CHANNEL.DIE\" (or \"CHANNEL.*\", \"MEMBER:CHANNEL.DIE\")",
                ))?;
                let target = |t: &Value| -> Result<card::FailTarget, RequestError> {
                    Ok(card::FailTarget::parse(t.as_str().ok_or_else(|| RequestError::TargetNotText(t.to_string()))?)?)
                };
                Ok(Control::FailDie(targets.iter().map(target).collect::<Result<_, _>>()?))
            }
            "beacon" => match o.get("on") {
                Some(Value::Bool(on)) => Ok(Control::Beacon(*on)),
                _ => Err(RequestError::Field("beacon: \"on\" must be true or false")),
            },
            "format" => {
                let format = o.get("format").and_then(Value::as_str).filter(|f| !f.is_empty());
                let format = format.ok_or(RequestError::Field("format: \"format\" must be a format's name or a capacity, e.g. \"stock\" or \"1200GB\""))?;
                Ok(Control::Format { format: format.into(), secure_erase: flag(o, "secure_erase")?, force: flag(o, "force")? })
            }
            "volumes" => match o.get("count").and_then(Value::as_u64) {
                Some(n @ 1..=2) => Ok(Control::Volumes { count: n as u32, force: flag(o, "force")? }),
                _ => Err(RequestError::Field(VOLUMES_COUNT_RULE)),
            },
            _ => unreachable!("every command in COMMANDS is matched"),
        }
    }

    /// The command's name in the protocol.
    pub fn name(&self) -> &'static str {
        match self {
            Control::Status => "status",
            Control::Stats => "stats",
            Control::FailDie(_) => "fail-die",
            Control::Beacon(_) => "beacon",
            Control::Format { .. } => "format",
            Control::Volumes { .. } => "volumes",
        }
    }

    /// Whether the command was told it may destroy data.
    pub fn force(&self) -> bool {
        matches!(self, Control::Format { force: true, .. } | Control::Volumes { force: true, .. })
    }

    /// The request line of this command.
    pub fn request(&self) -> String {
        let v = match self {
            Control::Status => json!({ "v": VERSION, "cmd": "status" }),
            Control::Stats => json!({ "v": VERSION, "cmd": "stats" }),
            Control::FailDie(ts) => json!({ "v": VERSION, "cmd": "fail-die", "targets": ts.iter().map(|t| t.to_string()).collect::<Vec<_>>() }),
            Control::Beacon(on) => json!({ "v": VERSION, "cmd": "beacon", "on": on }),
            Control::Format { format, secure_erase, force } => {
                json!({ "v": VERSION, "cmd": "format", "format": format, "secure_erase": secure_erase, "force": force })
            }
            Control::Volumes { count, force } => json!({ "v": VERSION, "cmd": "volumes", "count": count, "force": force }),
        };
        v.to_string()
    }

    /// The command line words of `flashlab control` (`status`, `stats`,
    /// `fail-die 3.1 ...`, `beacon on|off`) as a request line.
    pub fn request_of_words(words: &[String]) -> Result<String, RequestError> {
        let w: Vec<&str> = words.iter().map(String::as_str).collect();
        let v = match w.as_slice() {
            ["status"] => json!({ "v": VERSION, "cmd": "status" }),
            ["stats"] => json!({ "v": VERSION, "cmd": "stats" }),
            ["fail-die", ts @ ..] if !ts.is_empty() => json!({ "v": VERSION, "cmd": "fail-die", "targets": ts }),
            ["beacon", s @ ("on" | "off")] => json!({ "v": VERSION, "cmd": "beacon", "on": *s == "on" }),
            ["format", f, rest @ ..] if rest.iter().all(|r| ["secure-erase", "force"].contains(r)) => {
                json!({ "v": VERSION, "cmd": "format", "format": f, "secure_erase": rest.contains(&"secure-erase"), "force": rest.contains(&"force") })
            }
            ["volumes", n, rest @ ..] if rest.iter().all(|r| *r == "force") => {
                let count: u32 = n.parse().map_err(|_| RequestError::VolumeWord(n.to_string()))?;
                json!({ "v": VERSION, "cmd": "volumes", "count": count, "force": !rest.is_empty() })
            }
            _ => return Err(RequestError::Words(w.join(" "))),
        };
        Ok(v.to_string())
    }
}

/// An optional true/false field (absent: false).
fn flag(o: &Map<String, Value>, name: &str) -> Result<bool, RequestError> {
    match o.get(name) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(RequestError::Flag { name: name.to_string(), value: v.to_string() }),
    }
}

/// A reply line: the command's result.
pub fn reply_ok(result: Value) -> String {
    json!({ "v": VERSION, "ok": true, "result": result }).to_string()
}

/// A reply line: why the request was refused.
pub fn reply_err(why: &str) -> String {
    json!({ "v": VERSION, "ok": false, "error": why }).to_string()
}

/// A reply line's result, or its error.
pub fn reply_parse(line: &str) -> Result<Value, RequestError> {
    let line = line.trim();
    let v: Value = serde_json::from_str(line).map_err(|e| RequestError::ReplyNotJson { why: e.to_string(), line: line.to_string() })?;
    if v.get("v").and_then(Value::as_u64) != Some(VERSION) {
        return Err(RequestError::ReplyVersion(line.to_string()));
    }
    match v.get("ok").and_then(Value::as_bool) {
        Some(true) => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
        _ => Err(RequestError::Refused(v.get("error").and_then(Value::as_str).unwrap_or("the card refused, saying nothing").to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_or_say_what_is_wrong() {
        assert_eq!(Control::parse(r#"{"v":1,"cmd":"status"}"#), Ok(Control::Status));
        assert_eq!(Control::parse(r#"{"v":1,"cmd":"beacon","on":true}"#), Ok(Control::Beacon(true)));
        let Ok(Control::FailDie(ts)) = Control::parse(r#"{"v":1,"cmd":"fail-die","targets":["0.0","1.*","1:2.3"]}"#) else { panic!("three targets") };
        assert_eq!((ts.len(), ts[1].die, ts[2].member), (3, None, 1));
        for (bad, says) in [
            ("status", "not JSON"),
            ("[1]", "not a JSON object"),
            (r#"{"cmd":"status"}"#, "no protocol version"),
            (r#"{"v":2,"cmd":"status"}"#, "protocol version 2"),
            (r#"{"v":1}"#, "no command"),
            (r#"{"v":1,"cmd":"reboot"}"#, "unknown command 'reboot'"),
            (r#"{"v":1,"cmd":"status","force":true}"#, "takes no field 'force'"),
            (r#"{"v":1,"cmd":"fail-die","targets":[]}"#, "one or more"),
            (r#"{"v":1,"cmd":"fail-die","targets":["x"]}"#, "CHANNEL.DIE"),
            (r#"{"v":1,"cmd":"beacon","on":"yes"}"#, "true or false"),
            (r#"{"v":1,"cmd":"format"}"#, "a format's name or a capacity"),
            (r#"{"v":1,"cmd":"format","format":"hp","force":1}"#, "\"force\" must be true or false"),
            (r#"{"v":1,"cmd":"volumes","count":3}"#, "1 (merged) or 2"),
            (r#"{"v":1,"cmd":"volumes","count":2,"secure_erase":true}"#, "takes no field 'secure_erase'"),
        ] {
            let e = Control::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn words_make_requests_and_replies_round_trip() {
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        for w in
            ["status", "stats", "fail-die 3.1 4.*", "beacon on", "beacon off", "format hp", "format 1200GB secure-erase force", "volumes 2 force", "volumes 1"]
        {
            let line = Control::request_of_words(&words(w)).unwrap();
            assert!(Control::parse(&line).is_ok(), "{w}: {line}");
        }
        assert!(Control::request_of_words(&words("beacon blink")).unwrap_err().to_string().contains("expected"));
        assert!(Control::request_of_words(&words("format hp now")).unwrap_err().to_string().contains("expected"));
        for line in [r#"{"v":1,"cmd":"fail-die","targets":["0.0","1.*","1:2.3"]}"#, r#"{"v":1,"cmd":"volumes","count":2,"force":true}"#] {
            let c = Control::parse(line).unwrap();
            assert_eq!(Control::parse(&c.request()), Ok(c), "a command's request parses back to it");
        }
        let line = Control::request_of_words(&words("format stock secure-erase")).unwrap();
        assert_eq!(Control::parse(&line), Ok(Control::Format { format: "stock".into(), secure_erase: true, force: false }));
        assert_eq!(reply_parse(&reply_ok(json!({"a": 1}))), Ok(json!({"a": 1})));
        assert_eq!(reply_parse(&reply_err("no")), Err(RequestError::Refused("no".into())));
    }

    #[test]
    fn destroying_needs_force_and_no_client() {
        let p = card::profile_load("flashmax2").unwrap();
        let format = Control::Format { format: "hp".into(), secure_erase: false, force: true };
        assert!(destroy_check(&format, &p, 8192, 0).is_ok());
        let unforced = Control::Format { format: "hp".into(), secure_erase: false, force: false };
        assert!(destroy_check(&unforced, &p, 8192, 0).unwrap_err().to_string().contains("refused without force"));
        let unknown = Control::Format { format: "huge".into(), secure_erase: false, force: false };
        assert!(destroy_check(&unknown, &p, 8192, 0).unwrap_err().to_string().contains("huge"), "an impossible format is named before force is asked for");
        assert!(destroy_check(&format, &p, 8192, 2).unwrap_err().to_string().contains("2 clients are connected: disconnect them first"));
        let split = Control::Volumes { count: 2, force: false };
        assert!(destroy_check(&split, &p, 8192, 1)
            .unwrap_err()
            .to_string()
            .starts_with("splitting the card destroys every byte on it (each volume's data would move), and 1 client is connected"));
        assert!(destroy_check(&Control::Status, &p, 8192, 3).is_ok());
    }
}
