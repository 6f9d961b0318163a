//! A whole skill folder through the loader (`skillgate::skill_dir::load`): the input is a
//! list of files (see `skillgate_fuzz::files`), written to a fresh temporary folder.
//! Any folder loads or is refused with an error; a loaded skill has an entry script that
//! is one of the folder's files.
//! Seeds: every skill folder in `corpora/skills/` and `examples/skills/`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use skillgate_fuzz::files;

fuzz_target!(|data: &[u8]| {
    let list = files::split_files(data);
    let Ok(tmp) = tempfile::tempdir() else { return };
    let dir = tmp.path().join("skill");
    if std::fs::create_dir(&dir).is_err() || files::write(&dir, &list).is_err() {
        return;
    }
    match skillgate::skill_dir::load(&dir) {
        Ok(skill) => {
            assert!(
                list.iter().any(|(p, _)| p == "SKILL.md"),
                "loaded without a SKILL.md"
            );
            assert!(
                list.iter()
                    .any(|(p, b)| *p == skill.entry && b[..] == skill.code[..]),
                "the entry `{}` is not a file of the folder",
                skill.entry
            );
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
});
