use serde::{Deserialize, Serialize};
use std::fmt;

/// The overall result of one execution request, as it appears in every report.
///
/// ```
/// use skillgate_core::Status;
/// assert_eq!(Status::ResourceExhausted.as_str(), "resource_exhausted");
/// assert_eq!("timeout".parse::<Status>().unwrap(), Status::Timeout);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The skill ran to completion (whatever its exit code).
    Ok,
    /// The policy layer said no.
    Denied,
    /// The pre-scan, the input schema or the output secret scan (in `block` mode) said no.
    Blocked,
    /// The wall-clock limit ended the run.
    Timeout,
    /// A resource limit ended the run (memory, pids, file size, output cap).
    ResourceExhausted,
    /// The sandbox stopped a forbidden action (seccomp kill, breach attempt).
    SecurityViolation,
    /// Infrastructure failure, bad skill definition, or a spec nothing can enforce.
    Error,
}

impl Status {
    /// Every status, in report order.
    pub const ALL: [Status; 7] = [
        Status::Ok,
        Status::Denied,
        Status::Blocked,
        Status::Timeout,
        Status::ResourceExhausted,
        Status::SecurityViolation,
        Status::Error,
    ];

    /// The snake_case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Denied => "denied",
            Status::Blocked => "blocked",
            Status::Timeout => "timeout",
            Status::ResourceExhausted => "resource_exhausted",
            Status::SecurityViolation => "security_violation",
            Status::Error => "error",
        }
    }

    /// `true` only for [`Status::Ok`].
    pub fn is_ok(self) -> bool {
        self == Status::Ok
    }
}

/// The default is [`Status::Error`]: an outcome nobody set is not a success.
impl Default for Status {
    fn default() -> Self {
        Status::Error
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Status {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Status::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| format!("unknown status `{s}`"))
    }
}
