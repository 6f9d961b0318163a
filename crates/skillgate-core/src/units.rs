//! Human units for durations (`5s`, `250ms`, `2m`) and sizes (`256MiB`, `1GB`, `4096`),
//! used by the config file, skill metadata and the command line.
//!
//! ```
//! use skillgate_core::units::{parse_duration, parse_size};
//! assert_eq!(parse_duration("1.5s").unwrap(), std::time::Duration::from_millis(1500));
//! assert_eq!(parse_size("256MiB").unwrap(), 256 * 1024 * 1024);
//! assert!(parse_size("lots").is_err());
//! ```
use std::time::Duration;

/// Parses a duration such as `5s`, `250ms`, `1m30s` or `1.5s`. A bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if let Ok(secs) = t.parse::<f64>() {
        return secs_to_duration(secs, s);
    }
    if let Some(num) = t.strip_suffix('s')
        && !num.ends_with('m')
        && !num.ends_with('n')
        && !num.ends_with('u')
        && let Ok(secs) = num.trim().parse::<f64>()
    {
        return secs_to_duration(secs, s);
    }
    humantime::parse_duration(t)
        .map_err(|e| format!("invalid duration `{s}`: {e} (expected e.g. `5s`, `250ms`, `2m`)"))
}

fn secs_to_duration(secs: f64, original: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(secs).map_err(|_| {
        format!("invalid duration `{original}`: must be a finite, non-negative number of seconds")
    })
}

/// Parses a size such as `256MiB`, `1GB`, `64Ki` or `4096` (bytes). Binary units (`KiB`,
/// `MiB`, `GiB`, `TiB`, or `Ki`, `Mi`, ...) are powers of 1024, decimal ones (`kB`, `MB`,
/// `GB`, `TB`, or `K`, `M`, ...) powers of 1000; units are case-insensitive.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad =
        |why: &str| format!("invalid size `{s}`: {why} (expected e.g. `256MiB`, `1GB`, `4096`)");
    if t.is_empty() {
        return Err("empty size".into());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return Err(bad("no number"));
    }
    let unit = unit.trim().to_ascii_lowercase();
    let multiplier: u64 = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "ki" | "kib" => 1 << 10,
        "m" | "mb" => 1000_u64.pow(2),
        "mi" | "mib" => 1 << 20,
        "g" | "gb" => 1000_u64.pow(3),
        "gi" | "gib" => 1 << 30,
        "t" | "tb" => 1000_u64.pow(4),
        "ti" | "tib" => 1 << 40,
        _ => return Err(bad(&format!("unknown unit `{unit}`"))),
    };
    if let Ok(n) = number.parse::<u64>() {
        return n.checked_mul(multiplier).ok_or_else(|| bad("too large"));
    }
    let f: f64 = number.parse().map_err(|_| bad("not a number"))?;
    let bytes = f * multiplier as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(bad("out of range"));
    }
    Ok(bytes.round() as u64)
}

/// Formats a duration the way [`parse_duration`] reads it.
pub fn format_duration(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// Formats a size in the largest binary unit that divides it (`256MiB`), else in bytes.
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes != 0 && bytes % (1u64 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum NumOrStr {
    Num(u64),
    Float(f64),
    Str(String),
}

/// Serde helper: a [`Duration`] as a string (`"5s"`) or a number of seconds.
pub mod duration {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serializes as a human string.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    /// Deserializes from a string or a number of seconds.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        match NumOrStr::deserialize(d)? {
            NumOrStr::Num(n) => Ok(Duration::from_secs(n)),
            NumOrStr::Float(f) => {
                secs_to_duration(f, &f.to_string()).map_err(serde::de::Error::custom)
            }
            NumOrStr::Str(s) => parse_duration(&s).map_err(serde::de::Error::custom),
        }
    }
}

/// Serde helper: an optional [`Duration`].
pub mod opt_duration {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serializes as a human string or null.
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_str(&format_duration(*d)),
            None => s.serialize_none(),
        }
    }

    /// Deserializes from a string, a number of seconds, or null.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        #[derive(Deserialize)]
        struct W(#[serde(with = "super::duration")] Duration);
        Ok(Option::<W>::deserialize(d)?.map(|w| w.0))
    }
}

/// Serde helper: a size in bytes as a string (`"256MiB"`) or a number.
pub mod size {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serializes as a human string.
    pub fn serialize<S: Serializer>(b: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_size(*b))
    }

    /// Deserializes from a string or a number of bytes.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        match NumOrStr::deserialize(d)? {
            NumOrStr::Num(n) => Ok(n),
            NumOrStr::Float(f) => Err(serde::de::Error::custom(format!(
                "invalid size `{f}`: a size is a whole number of bytes or a string like `256MiB`"
            ))),
            NumOrStr::Str(s) => parse_size(&s).map_err(serde::de::Error::custom),
        }
    }
}

/// Serde helper: an optional size.
pub mod opt_size {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Serializes as a human string or null.
    pub fn serialize<S: Serializer>(b: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match b {
            Some(b) => s.serialize_str(&format_size(*b)),
            None => s.serialize_none(),
        }
    }

    /// Deserializes from a string, a number, or null.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        #[derive(Deserialize)]
        struct W(#[serde(with = "super::size")] u64);
        Ok(Option::<W>::deserialize(d)?.map(|w| w.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        for bad in ["", "abc", "-1s", "5 parsecs", "NaN", "inf"] {
            let err = parse_duration(bad).unwrap_err();
            assert!(err.contains("duration"), "{bad}: {err}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1GB").unwrap(), 1_000_000_000);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64ki").unwrap(), 64 << 10);
        assert_eq!(parse_size("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(format_size(256 << 20), "256MiB");
        assert_eq!(format_size(1000), "1000");
        for bad in [
            "",
            "lots",
            "12XB",
            "-5MiB",
            "MiB",
            "1.2.3MB",
            "99999999999TiB",
        ] {
            let err = parse_size(bad).unwrap_err();
            assert!(err.contains("size"), "{bad}: {err}");
        }
        assert_eq!(parse_size(&format_size(256 << 20)).unwrap(), 256 << 20);
    }
}
