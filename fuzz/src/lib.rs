//! Helpers shared by the fuzz targets in `fuzz_targets/`: turning fuzz bytes into skill
//! folders, planting secrets into fuzz text, and rewriting dangerous programs without
//! changing what they do (the metamorphic targets). `cargo test` in `fuzz/` runs their
//! unit tests (the CI fuzz smoke does).
pub mod files;
pub mod names;
pub mod planted;
pub mod rewrite_js;
pub mod rewrite_py;

/// The verdict of the pre-scan on `code`, with the scanner every target shares.
pub mod prescan {
    use skillgate::Language;
    use skillgate_prescan::{PreScanner, Verdict};
    use std::sync::OnceLock;

    /// The pre-scanner with the embedded rule packs, built once.
    pub fn scanner() -> &'static PreScanner {
        static SCANNER: OnceLock<PreScanner> = OnceLock::new();
        SCANNER.get_or_init(|| PreScanner::new().expect("the embedded packs load"))
    }

    /// Whether the pre-scan blocks `code` as `language`.
    pub fn blocks(code: &str, language: Language) -> bool {
        scanner().scan(code.as_bytes(), language).verdict == Verdict::Block
    }
}

/// Misses the `prescan_rewrites` target found, listed in `docs/FUZZING.md` and reported
/// to the pre-scan's owners: `(rule of the base program, or "*" for any, rewrite label)`.
/// A variant applying one of them to such a base is not reported again, so the target
/// (and the CI smoke) stops only at a new kind of miss. Remove an entry once its rule
/// catches it. Empty since the ten misses of the first walk (`docs/FUZZING.md`) were
/// fixed in the pre-scan.
pub const KNOWN_PRESCAN_MISSES: &[(&str, &str)] = &[];

/// Whether `rewrites` of a base program of `rule` include a known miss.
pub fn known_miss(rule: &str, rewrites: &[String]) -> bool {
    rewrites.iter().any(|r| {
        KNOWN_PRESCAN_MISSES
            .iter()
            .any(|(base, label)| (*base == "*" || *base == rule) && label == r)
    })
}

/// A rewritten program the pre-scan let through, with the rewrites that made it.
#[derive(Debug, Clone)]
pub struct Miss {
    /// `python` or `javascript`.
    pub language: &'static str,
    /// The program.
    pub code: String,
    /// The base program's rule.
    pub rule: &'static str,
    /// The rewrites applied.
    pub rewrites: Vec<String>,
}

/// The `prescan_rewrites` target's check: builds the variant `data` picks (the first byte
/// picks the language) and returns it when the pre-scan does not block it and none of its
/// rewrites is a known miss.
pub fn prescan_miss(data: &[u8]) -> Option<Miss> {
    let (&first, rest) = data.split_first()?;
    let mut u = arbitrary::Unstructured::new(rest);
    let (language, name, rule, code, rewrites) = if first % 2 == 0 {
        let v = rewrite_py::variant(&mut u);
        let rule = rewrite_py::BASES[v.base].rule;
        (
            skillgate::Language::Python,
            "python",
            rule,
            v.code,
            v.rewrites,
        )
    } else {
        let v = rewrite_js::variant(&mut u);
        let rule = rewrite_js::BASES[v.base].rule;
        (
            skillgate::Language::JavaScript,
            "javascript",
            rule,
            v.code,
            v.rewrites,
        )
    };
    if prescan::blocks(&code, language) || known_miss(rule, &rewrites) {
        return None;
    }
    Some(Miss {
        language: name,
        rule,
        code,
        rewrites,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant of a sample (a fixed pseudo-random walk over the rewrites) is
    /// blocked, unless it applies a known miss.
    #[test]
    fn sampled_rewrites_stay_blocked() {
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut missed = Vec::new();
        for _ in 0..4000 {
            let data: Vec<u8> = (0..1 + next() % 24).map(|_| next() as u8).collect();
            if let Some(m) = prescan_miss(&data) {
                missed.push(format!(
                    "{} ({}):\n{}",
                    m.rule,
                    m.rewrites.join(" "),
                    m.code
                ));
            }
        }
        assert!(
            missed.is_empty(),
            "{} misses, the first ones:\n{}",
            missed.len(),
            missed[..missed.len().min(5)].join("\n\n")
        );
    }

    /// The rewrites of the ten misses the first walk found are fixed in the pre-scan: no
    /// variant applying them is excused any more (the walk above checks they are blocked).
    #[test]
    fn the_fixed_misses_are_not_excused() {
        let r = |s: &str| vec![s.to_string()];
        for (rule, label) in [
            ("js.process.signal", "js.prop.descriptor"),
            ("js.dynamic.eval", "js.prop.entries"),
            ("js.files.credentials", "js.call.array-map"),
            ("js.files.credentials", "js.call.bind"),
            ("py.files.credentials", "py.call.dict"),
            ("py.files.credentials", "py.call.lambda-arg"),
            ("py.files.credentials", "py.call.partial"),
        ] {
            assert!(!known_miss(rule, &r(label)), "{rule} {label}");
        }
    }
}
