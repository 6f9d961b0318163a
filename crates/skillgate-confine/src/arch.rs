//! Architectures and their system call tables.
use std::fmt;
use std::str::FromStr;

/// An architecture a profile is resolved for. Profiles name system calls; the numbers
/// differ per architecture (and some calls, such as `open`, exist only on some).
///
/// ```
/// use skillgate_confine::Arch;
/// assert_eq!(Arch::X86_64.syscall_number("openat"), Some(257));
/// assert_eq!(Arch::Aarch64.syscall_number("openat"), Some(56));
/// assert_eq!(Arch::Aarch64.syscall_number("open"), None); // aarch64 has only openat
/// assert!(Arch::is_known_anywhere("open"));
/// assert!(!Arch::is_known_anywhere("opne"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// x86-64.
    X86_64,
    /// 64-bit ARM.
    Aarch64,
}

impl Arch {
    /// Every supported architecture.
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    /// The architecture this program runs on, if supported.
    pub fn native() -> Option<Arch> {
        match std::env::consts::ARCH {
            "x86_64" => Some(Arch::X86_64),
            "aarch64" => Some(Arch::Aarch64),
            _ => None,
        }
    }

    /// The kernel's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The system call number of `name` on this architecture.
    pub fn syscall_number(self, name: &str) -> Option<i64> {
        match self {
            Arch::X86_64 => syscalls::x86_64::Sysno::from_str(name)
                .ok()
                .map(|s| i64::from(s.id())),
            Arch::Aarch64 => syscalls::aarch64::Sysno::from_str(name)
                .ok()
                .map(|s| i64::from(s.id())),
        }
    }

    /// `true` when some supported architecture has a system call of this name.
    pub fn is_known_anywhere(name: &str) -> bool {
        Arch::ALL.iter().any(|a| a.syscall_number(name).is_some())
    }

    pub(crate) fn seccompiler(self) -> seccompiler::TargetArch {
        match self {
            Arch::X86_64 => seccompiler::TargetArch::x86_64,
            Arch::Aarch64 => seccompiler::TargetArch::aarch64,
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Arch {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "x86_64" | "amd64" => Ok(Arch::X86_64),
            "aarch64" | "arm64" => Ok(Arch::Aarch64),
            _ => Err(format!(
                "unsupported architecture `{s}` (expected x86_64 or aarch64)"
            )),
        }
    }
}
