//! `SKILL.md` text: the frontmatter parser and the checks on its fields (name,
//! description, hints) answer any text with a manifest or an error naming the problem.
//! Seeds: the `SKILL.md` of every skill in `corpora/skills/` and `examples/skills/`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use skillgate::skill_dir::{EffectHints, parse_manifest};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_manifest(text, "SKILL.md".as_ref()) {
        Ok(fm) => {
            assert!(skillgate::skill_dir::validate_name(&fm.name).is_ok());
            let _ = EffectHints::of(&fm);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
