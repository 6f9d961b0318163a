//! A cache of pre-scan findings by content, so that running the same skill again does not
//! parse it and compile the rule queries again.
//!
//! - The key is the sha256 of everything a scan depends on: this build of the scanner, the
//!   rule packs' [digest](crate::RuleSet::digest), the options, and the skill's language,
//!   entry path, code and every file (path, kind, bytes). Equal keys mean equal scans, so a
//!   hit gives exactly the findings a scan would.
//! - An entry is one file `<key>.json` in the cache directory (a folder of the host's state
//!   directory, which skills never see): a first line with the sha256 of the rest, then the
//!   findings as JSON. It is written to a temporary file, mode 0600, and renamed into place.
//! - An entry is used only when it is a regular file owned by the directory's owner,
//!   readable and writable by nobody else, in a directory only its owner can write, not
//!   larger than [`MAX_ENTRY`], and its checksum and JSON are right. Anything else is
//!   ignored (the skill is scanned, and the entry rewritten): the cache can make a run
//!   faster, never change its verdict.
//! - It holds at most [`DEFAULT_CAPACITY`] entries ([`VerdictCache::with_capacity`]): a
//!   write that finds more removes the oldest written until a tenth of the room is free
//!   again, so a long-running server scanning ever new code does not fill its disk.
use crate::PreScanner;
use sha2::{Digest, Sha256};
use skillgate_core::{FileKind, Finding, Skill};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest cache entry read, in bytes.
pub(crate) const MAX_ENTRY: u64 = 4 << 20;

/// The most entries a cache keeps by default.
pub const DEFAULT_CAPACITY: usize = 10_000;

/// The folder of pre-scan verdicts, keyed by content.
#[derive(Debug, Clone)]
pub struct VerdictCache {
    dir: PathBuf,
    capacity: usize,
}

impl VerdictCache {
    /// The cache in `dir`, created (mode 0700) if missing. Errors when it cannot be created.
    pub fn open(dir: &Path) -> std::io::Result<VerdictCache> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        Ok(VerdictCache {
            dir: dir.to_path_buf(),
            capacity: DEFAULT_CAPACITY,
        })
    }

    /// Keeps at most `capacity` entries (at least one).
    pub fn with_capacity(mut self, capacity: usize) -> VerdictCache {
        self.capacity = capacity.max(1);
        self
    }

    /// The cache key of scanning `skill` with `scanner`, as lowercase hex.
    pub fn key(scanner: &PreScanner, skill: &Skill) -> String {
        let mut h = Sha256::new();
        let mut put = |bytes: &[u8]| {
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        put(crate::rules::SCANNER_DIGEST.as_bytes());
        put(scanner.rules_digest());
        put(format!("{:?}", scanner.options()).as_bytes());
        put(skill.language.to_string().as_bytes());
        put(skill.entry.as_bytes());
        put(&skill.code);
        for f in skill.files.iter() {
            put(f.path.as_bytes());
            put(match f.kind {
                FileKind::Code(lang) => lang.to_string().into_bytes(),
                FileKind::Data => b"data".to_vec(),
            }
            .as_slice());
            put(&f.bytes);
        }
        hex::encode(h.finalize())
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The findings stored under `key`, if a sound entry is there.
    pub fn get(&self, key: &str) -> Option<Vec<Finding>> {
        let dir = fs::metadata(&self.dir).ok()?;
        if !dir.is_dir() || dir.mode() & 0o022 != 0 {
            return None;
        }
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(self.path(key))
            .ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file()
            || meta.uid() != dir.uid()
            || meta.mode() & 0o077 != 0
            || meta.len() > MAX_ENTRY
        {
            return None;
        }
        let mut text = String::new();
        file.take(MAX_ENTRY).read_to_string(&mut text).ok()?;
        let (sum, body) = text.split_once('\n')?;
        if hex::encode(Sha256::digest(body.as_bytes())) != sum {
            return None;
        }
        serde_json::from_str(body).ok()
    }

    /// Stores `findings` under `key`. Failing to store is not an error of the run: the
    /// cache is only an optimisation.
    pub fn put(&self, key: &str, findings: &[Finding]) {
        let Ok(body) = serde_json::to_string(findings) else {
            return;
        };
        let tmp = self.dir.join(format!(".{key}.{}.tmp", std::process::id()));
        let written = (|| -> std::io::Result<()> {
            let mut f: File = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)?;
            let sum = hex::encode(Sha256::digest(body.as_bytes()));
            f.write_all(format!("{sum}\n{body}").as_bytes())?;
            fs::rename(&tmp, self.path(key))
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
            return;
        }
        self.trim();
    }

    /// Removes the oldest entries when there are more than the capacity, down to nine
    /// tenths of it (so a full cache is not trimmed again at every write). Runs only after
    /// a write, that is after a scan, which costs far more than listing the folder.
    fn trim(&self) {
        let Ok(rd) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut entries: Vec<(std::time::SystemTime, PathBuf)> = rd
            .flatten()
            .filter(|e| e.file_name().to_str().is_some_and(|n| n.ends_with(".json")))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if entries.len() <= self.capacity {
            return;
        }
        let keep = self.capacity - self.capacity / 10;
        entries.sort();
        let excess = entries.len() - keep;
        for (_, path) in entries.into_iter().take(excess) {
            let _ = fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ScanOptions, Verdict};
    use skillgate_core::{Language, Severity};
    use std::os::unix::fs::PermissionsExt;
    use std::sync::Arc;

    fn skill(code: &str) -> Skill {
        Skill::builder("s", Language::Python, code.as_bytes().to_vec())
            .entry("scripts/main.py")
            .file(
                "scripts/helper.py",
                FileKind::Code(Language::Python),
                b"import subprocess\n".to_vec(),
            )
            .build()
    }

    fn cached_scanner(dir: &Path) -> PreScanner {
        PreScanner::new()
            .unwrap()
            .with_cache(VerdictCache::open(dir).unwrap())
    }

    #[test]
    fn a_lazy_scanner_parses_its_packs_on_a_miss_only_and_agrees_with_an_eager_one() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cache");
        let lazy = || {
            PreScanner::embedded(crate::ScanOptions::default())
                .with_cache(VerdictCache::open(&dir).unwrap())
        };
        let eager = cached_scanner(&tmp.path().join("eager"));
        // Same digest, so the same cache key, before anything is parsed.
        let first = lazy();
        assert!(!first.rules_parsed());
        let s = skill("import helper\nimport os\nos.system('id')\n");
        assert_eq!(VerdictCache::key(&first, &s), VerdictCache::key(&eager, &s));
        assert!(!first.rules_parsed());
        // A miss parses the packs, and finds what the eager scanner finds.
        let scanned = first.scan_skill_cached(&s);
        assert!(first.rules_parsed());
        assert_eq!(scanned.verdict, Verdict::Block);
        assert_eq!(scanned, eager.scan_skill_cached(&s));
        // A fresh scanner (a new process) answers from the cache without parsing.
        let second = lazy();
        assert_eq!(second.scan_skill_cached(&s), scanned);
        assert!(!second.rules_parsed());
        // Another skill is a miss again, scanned in full.
        let honest = skill("import json\nprint(json.dumps({}))\n");
        let report = second.scan_skill_cached(&honest);
        assert!(second.rules_parsed());
        assert_eq!(report, eager.scan_skill_cached(&honest));
        assert!(!second.rules().rules().is_empty());
    }

    #[test]
    fn a_hit_gives_exactly_the_findings_of_a_scan_from_an_entry_only_the_owner_can_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cache");
        let scanner = cached_scanner(&dir);
        let s = skill("import helper\nimport xml_unknown_mod\n");
        let fresh = PreScanner::new().unwrap().scan_skill(&s);
        assert_eq!(fresh.verdict, Verdict::Block);
        assert!(fresh.findings.len() >= 2);
        let first = scanner.scan_skill_cached(&s);
        assert_eq!(first, fresh);
        let entry = dir.join(format!("{}.json", VerdictCache::key(&scanner, &s)));
        assert_eq!(fs::metadata(&entry).unwrap().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        let cache = VerdictCache::open(&dir).unwrap();
        assert_eq!(
            cache.get(&VerdictCache::key(&scanner, &s)),
            Some(fresh.findings.clone())
        );
        assert_eq!(scanner.scan_skill_cached(&s), fresh);
    }

    #[test]
    fn a_sound_entry_is_what_a_hit_returns() {
        // Proves the second run reads the cache: a (sound) entry written under the key is
        // what comes back, with the verdict worked out from it.
        let tmp = tempfile::tempdir().unwrap();
        let scanner = cached_scanner(tmp.path());
        let s = skill("print(1)\n");
        let key = VerdictCache::key(&scanner, &s);
        // An entry a fresh scan of `print(1)` would never give: only a read of the cache
        // can return it.
        let planted = Finding::new(
            skillgate_core::LayerName::Prescan,
            "planted.rule",
            Severity::Critical,
            "planted",
        );
        VerdictCache::open(tmp.path())
            .unwrap()
            .put(&key, std::slice::from_ref(&planted));
        let report = scanner.scan_skill_cached(&s);
        assert_eq!(report.findings, [planted]);
        assert_eq!(report.verdict, Verdict::Block);
    }

    #[test]
    fn corrupted_foreign_or_linked_entries_are_ignored_and_the_skill_is_scanned() {
        let tmp = tempfile::tempdir().unwrap();
        let scanner = cached_scanner(tmp.path());
        let s = skill("import helper\n");
        let fresh = PreScanner::new().unwrap().scan_skill(&s);
        let key = VerdictCache::key(&scanner, &s);
        let entry = tmp.path().join(format!("{key}.json"));
        let cache = VerdictCache::open(tmp.path()).unwrap();

        // An empty list of findings, but the checksum of something else.
        cache.put(&key, &[]);
        let text = fs::read_to_string(&entry).unwrap();
        fs::write(&entry, text.replace("[]", "[ ]")).unwrap();
        assert_eq!(cache.get(&key), None);
        assert_eq!(scanner.scan_skill_cached(&s), fresh);
        assert_eq!(cache.get(&key), Some(fresh.findings.clone()), "rewritten");

        for garbage in ["", "no newline", "abc\n[]", "\u{0}\n{"] {
            fs::write(&entry, garbage).unwrap();
            assert_eq!(cache.get(&key), None, "{garbage:?}");
            assert_eq!(scanner.scan_skill_cached(&s), fresh);
        }

        // A sound entry that others may write is not trusted.
        cache.put(&key, &[]);
        fs::set_permissions(&entry, fs::Permissions::from_mode(0o620)).unwrap();
        assert_eq!(cache.get(&key), None);
        assert_eq!(scanner.scan_skill_cached(&s), fresh);

        // Nor is one reached through a symbolic link.
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        VerdictCache::open(&elsewhere).unwrap().put(&key, &[]);
        fs::remove_file(&entry).unwrap();
        std::os::unix::fs::symlink(elsewhere.join(format!("{key}.json")), &entry).unwrap();
        assert_eq!(cache.get(&key), None);
        assert_eq!(scanner.scan_skill_cached(&s).findings, fresh.findings);
    }

    #[test]
    fn the_key_changes_with_everything_the_scan_depends_on() {
        let scanner = PreScanner::new().unwrap();
        let base = skill("print(1)\n");
        let k = VerdictCache::key(&scanner, &base);
        assert_eq!(k, VerdictCache::key(&scanner, &skill("print(1)\n")));
        let strict = PreScanner::with_rules(
            Arc::new(crate::RuleSet::embedded().unwrap()),
            ScanOptions {
                threshold: Severity::Low,
                ..ScanOptions::default()
            },
        );
        let data = Skill::builder("s", Language::Python, b"print(1)\n".to_vec())
            .entry("scripts/main.py")
            .file(
                "scripts/helper.py",
                FileKind::Data,
                b"import subprocess\n".to_vec(),
            )
            .build();
        let js = Skill::builder("s", Language::JavaScript, b"print(1)\n".to_vec())
            .entry("scripts/main.py")
            .file(
                "scripts/helper.py",
                FileKind::Code(Language::Python),
                b"import subprocess\n".to_vec(),
            )
            .build();
        let moved = Skill::builder("s", Language::Python, b"print(1)\n".to_vec())
            .entry("main.py")
            .file(
                "scripts/helper.py",
                FileKind::Code(Language::Python),
                b"import subprocess\n".to_vec(),
            )
            .build();
        for other in [
            VerdictCache::key(&strict, &base),
            VerdictCache::key(&scanner, &skill("print(2)\n")),
            VerdictCache::key(&scanner, &data),
            VerdictCache::key(&scanner, &js),
            VerdictCache::key(&scanner, &moved),
        ] {
            assert_ne!(k, other);
        }
    }

    #[test]
    fn a_full_cache_removes_its_oldest_entries() {
        let d = tempfile::tempdir().unwrap();
        let cache = VerdictCache::open(&d.path().join("c"))
            .unwrap()
            .with_capacity(10);
        let keys: Vec<String> = (0..11).map(|i| format!("{i:064x}")).collect();
        for (i, key) in keys.iter().enumerate() {
            cache.put(key, &[]);
            // Distinct write times, oldest first, whatever the file system's resolution.
            let t = std::time::SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(1_000 + i as u64);
            File::options()
                .write(true)
                .open(cache.path(key))
                .and_then(|f| f.set_modified(t))
                .ok();
        }
        // The eleventh write found 11 > 10 entries and kept 9: the two oldest are gone.
        let mut left: Vec<String> = fs::read_dir(d.path().join("c"))
            .unwrap()
            .flatten()
            .map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .trim_end_matches(".json")
                    .to_string()
            })
            .collect();
        left.sort();
        assert_eq!(left, keys[2..].to_vec());
        assert_eq!(cache.get(&keys[10]), Some(vec![]));
        assert_eq!(cache.get(&keys[0]), None);
    }
}
