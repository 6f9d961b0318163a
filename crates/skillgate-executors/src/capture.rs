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
}
