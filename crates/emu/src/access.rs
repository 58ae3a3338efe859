//! Who may reach a served card: its store's files, its sockets and the
//! logs it writes are its owner's alone (files 0600, directories and
//! sockets 0700), or its owner's group's too where asked (0660, 0770),
//! whatever umask the process was started with. The process's file mode
//! mask is set once, before any file or socket is made; a command that
//! changes a card at rest keeps the access its store was given.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Who besides the owner may reach a card's files and sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The owner alone.
    Owner,
    /// The owner and the files' group.
    Group,
}

/// An access that is neither `owner` nor `group`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--access {0}: owner or group")]
pub struct AccessError(pub String);

impl Access {
    /// `owner` or `group`.
    pub fn parse(s: &str) -> Result<Access, AccessError> {
        match s {
            "owner" => Ok(Access::Owner),
            "group" => Ok(Access::Group),
            _ => Err(AccessError(s.to_string())),
        }
    }

    /// The access a store's directory was given (its group's bits), the
    /// owner's alone where it cannot be read.
    pub fn of_store(dir: &Path) -> Access {
        match std::fs::metadata(dir) {
            Ok(m) if m.permissions().mode() & 0o070 != 0 => Access::Group,
            _ => Access::Owner,
        }
    }

    /// The file mode mask that gives it.
    pub fn umask(self) -> u32 {
        match self {
            Access::Owner => 0o077,
            Access::Group => 0o007,
        }
    }

    /// Sets this process's file mode mask to it: every file, directory
    /// and socket made from now on is reachable by no one else. Called
    /// before any thread starts.
    pub fn apply(self) {
        // SAFETY: umask only sets the process's mask and cannot fail.
        unsafe { libc::umask(self.umask() as libc::mode_t) };
    }
}
