//! The phases of one run, for an executor's timing log: each mark closes a phase, and
//! [`Marks::summary`] lists them as `phase=milliseconds` (the executor logs it at debug
//! level under its own `…::timing` target).
use std::time::{Duration, Instant};

/// The phases marked so far, and when the last one ended.
pub(crate) struct Marks {
    last: Instant,
    phases: Vec<(&'static str, Duration)>,
}

impl Marks {
    /// Starts the first phase now.
    pub(crate) fn start() -> Marks {
        Marks {
            last: Instant::now(),
            phases: Vec::new(),
        }
    }

    /// Ends the phase `phase` now, and starts the next.
    pub(crate) fn at(&mut self, phase: &'static str) {
        let now = Instant::now();
        self.phases.push((phase, now - self.last));
        self.last = now;
    }

    /// `phase=ms phase=ms …`, a decimal each.
    pub(crate) fn summary(&self) -> String {
        self.phases
            .iter()
            .map(|(p, d)| format!("{p}={:.1}", d.as_secs_f64() * 1e3))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_listed_in_order_with_their_milliseconds() {
        let mut m = Marks::start();
        std::thread::sleep(Duration::from_millis(2));
        m.at("one");
        m.at("two");
        let s = m.summary();
        let parts: Vec<_> = s.split(' ').collect();
        assert_eq!(parts.len(), 2, "{s}");
        assert!(parts[0].starts_with("one="), "{s}");
        let ms: f64 = parts[0]["one=".len()..].parse().unwrap();
        assert!(ms >= 2.0, "{s}");
        assert!(parts[1].starts_with("two="), "{s}");
    }
}
