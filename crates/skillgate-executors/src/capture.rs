//! One captured output stream, kept up to its cap (the executors of this crate share it).

/// One output stream: at most `cap` bytes kept, the rest dropped and flagged.
pub(crate) struct Capture {
    /// What was kept.
    pub(crate) kept: Vec<u8>,
    cap: usize,
    /// Something past the cap was dropped.
    pub(crate) truncated: bool,
}

impl Capture {
    /// Keeps at most `cap` bytes.
    pub(crate) fn new(cap: u64) -> Self {
        Capture {
            kept: Vec::new(),
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            truncated: false,
        }
    }

    /// Keeps what fits of `data`.
    pub(crate) fn push(&mut self, data: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len());
        if data.len() > room {
            self.truncated = true;
        }
        self.kept.extend_from_slice(&data[..data.len().min(room)]);
    }
}

/// A container's exit code as the skill's exit code or the signal that ended it: the
/// skill is the container's first process, so its runtime reports 128 + n for signal n
/// (a skill that exits 130 by itself reads as SIGINT).
#[cfg(any(feature = "docker", feature = "oci", feature = "kubernetes"))]
pub(crate) fn exit_or_signal(code: i32) -> (Option<i32>, Option<i32>) {
    if code > 128 && code < 128 + 65 {
        (None, Some(code - 128))
    } else {
        (Some(code), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_keep_the_cap_and_flag_the_rest() {
        let mut c = Capture::new(5);
        c.push(b"abc");
        c.push(b"defg");
        assert_eq!(c.kept, b"abcde");
        assert!(c.truncated);
    }

    #[cfg(any(feature = "docker", feature = "oci", feature = "kubernetes"))]
    #[test]
    fn codes_over_128_are_signals() {
        assert_eq!(exit_or_signal(137), (None, Some(9)));
        assert_eq!(exit_or_signal(3), (Some(3), None));
        assert_eq!(exit_or_signal(128), (Some(128), None));
        assert_eq!(exit_or_signal(200), (Some(200), None));
    }
}
