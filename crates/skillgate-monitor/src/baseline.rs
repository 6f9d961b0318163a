//! Streaming robust baselines: an exponentially weighted mean and variance per metric,
//! fed with winsorised values so one outlier does not drag the baseline towards itself.
use serde::{Deserialize, Serialize};
use skillgate_core::units;
use std::fmt;
use std::time::Duration;

/// Weight of a new sample once the baseline has warmed up (the first samples are
/// averaged plainly: the weight is `max(1/n, ALPHA)`).
pub const ALPHA: f64 = 0.05;

/// How many standard deviations from the mean a sample is clipped to before it updates a
/// warmed-up baseline.
pub const CLIP_SIGMAS: f64 = 4.0;

/// What a baseline measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Wall-clock time, in seconds.
    Wall,
    /// CPU time (user + system), in seconds.
    Cpu,
    /// Peak resident memory, in bytes.
    Memory,
    /// stdout + stderr + artifact bytes.
    Output,
}

impl Metric {
    /// Every metric.
    pub const ALL: [Metric; 4] = [Metric::Wall, Metric::Cpu, Metric::Memory, Metric::Output];

    /// The human name used in explanations.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Wall => "wall time",
            Metric::Cpu => "CPU time",
            Metric::Memory => "peak memory",
            Metric::Output => "output size",
        }
    }

    /// The smallest baseline a ratio is taken against, so a skill that usually takes 0 ms
    /// or prints nothing does not make every sample "infinitely" anomalous.
    pub fn floor(self) -> f64 {
        match self {
            Metric::Wall | Metric::Cpu => 0.005,
            Metric::Memory => 1024.0 * 1024.0,
            Metric::Output => 1024.0,
        }
    }

    /// Formats a value of this metric in its unit.
    pub fn format(self, v: f64) -> String {
        match self {
            Metric::Wall | Metric::Cpu => {
                let d = Duration::from_secs_f64(v.max(0.0));
                if d < Duration::from_millis(1) {
                    format!("{}µs", d.as_micros())
                } else {
                    units::format_duration(Duration::from_millis(d.as_millis() as u64))
                }
            }
            Metric::Memory | Metric::Output => units::format_size(v.max(0.0) as u64),
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// An exponentially weighted mean and variance.
///
/// ```
/// use skillgate_monitor::baseline::Ewma;
/// let mut e = Ewma::default();
/// for x in [10.0, 12.0, 11.0, 9.0] { e.update(x); }
/// assert!((e.mean - 10.5).abs() < 0.6);
/// assert_eq!(e.n, 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Ewma {
    /// Samples seen.
    pub n: u64,
    /// Weighted mean.
    pub mean: f64,
    /// Weighted variance.
    pub var: f64,
}

impl Ewma {
    /// The weighted standard deviation.
    pub fn sd(&self) -> f64 {
        self.var.max(0.0).sqrt()
    }

    /// Adds a sample.
    pub fn update(&mut self, x: f64) {
        if !x.is_finite() {
            return;
        }
        self.n += 1;
        let a = (1.0 / self.n as f64).max(ALPHA);
        let d = x - self.mean;
        self.mean += a * d;
        self.var = (1.0 - a) * (self.var + a * d * d);
    }
}

/// How far one sample is from a baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Deviation {
    /// The sample.
    pub value: f64,
    /// The baseline mean.
    pub mean: f64,
    /// Samples behind the baseline.
    pub samples: u64,
    /// `value / max(mean, floor)`.
    pub ratio: f64,
    /// `(value - mean) / max(sd, 10% of mean, floor)`: a robust z-score.
    pub z: f64,
}

/// Baselines of every [`Metric`] for one scope (an agent, or an agent's skill).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Baselines {
    /// Wall-clock time (seconds).
    pub wall: Ewma,
    /// CPU time (seconds).
    pub cpu: Ewma,
    /// Peak memory (bytes).
    pub memory: Ewma,
    /// Output bytes.
    pub output: Ewma,
}

impl Baselines {
    /// The baseline of one metric.
    pub fn get(&self, m: Metric) -> &Ewma {
        match m {
            Metric::Wall => &self.wall,
            Metric::Cpu => &self.cpu,
            Metric::Memory => &self.memory,
            Metric::Output => &self.output,
        }
    }

    fn get_mut(&mut self, m: Metric) -> &mut Ewma {
        match m {
            Metric::Wall => &mut self.wall,
            Metric::Cpu => &mut self.cpu,
            Metric::Memory => &mut self.memory,
            Metric::Output => &mut self.output,
        }
    }

    /// How far `value` is from this baseline's `metric`.
    pub fn deviation(&self, metric: Metric, value: f64) -> Deviation {
        let e = self.get(metric);
        let floor = metric.floor();
        let spread = e.sd().max(0.1 * e.mean).max(floor);
        Deviation {
            value,
            mean: e.mean,
            samples: e.n,
            ratio: value / e.mean.max(floor),
            z: (value - e.mean) / spread,
        }
    }

    /// Adds a sample; once `warm` samples are in, the sample is clipped to
    /// [`CLIP_SIGMAS`] spreads of the mean first (winsorised), so anomalies barely move it.
    pub fn update(&mut self, metric: Metric, value: f64, warm: u64) {
        let e = self.get_mut(metric);
        let x = if e.n >= warm {
            let spread = e.sd().max(0.1 * e.mean).max(metric.floor());
            value.clamp(e.mean - CLIP_SIGMAS * spread, e.mean + CLIP_SIGMAS * spread)
        } else {
            value
        };
        e.update(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outlier_barely_moves_a_warm_baseline() {
        let mut b = Baselines::default();
        for i in 0..100 {
            b.update(Metric::Wall, 0.010 + (i % 5) as f64 * 0.001, 20);
        }
        let before = b.wall.mean;
        b.update(Metric::Wall, 10.0, 20);
        assert!(b.wall.mean < before * 1.5, "{} vs {before}", b.wall.mean);
        let d = b.deviation(Metric::Wall, 0.4);
        assert!(d.ratio > 30.0 && d.z > 20.0, "{d:?}");
        let d = b.deviation(Metric::Wall, 0.013);
        assert!(d.ratio < 1.5 && d.z < 3.0, "{d:?}");
    }

    #[test]
    fn floors_keep_tiny_baselines_sane() {
        let mut b = Baselines::default();
        for _ in 0..30 {
            b.update(Metric::Output, 0.0, 20);
        }
        let d = b.deviation(Metric::Output, 200.0);
        assert!(d.ratio < 1.0, "{d:?}");
    }

    #[test]
    fn formats_in_units() {
        assert_eq!(
            Metric::Memory.format(2.0 * 1024.0 * 1024.0),
            skillgate_core::units::format_size(2 * 1024 * 1024)
        );
        assert!(Metric::Wall.format(0.0005).ends_with("µs"));
    }
}
