//! Writes the seeds of the `session_log` fuzz target into
//! `corpora/fuzz-seeds/session_log/` (or the folder given as the first argument):
//! `event-*`, payloads of every kind of event as the store encodes them
//! (`skillgate_session::fuzz::payload`); `snapshot-*`, the archive `snapshot::pack`
//! makes of a small workspace (compressed, and its plain tar); and `hostile-*`, plain tar
//! archives that try to write outside the workspace (`..`, absolute paths, symbolic and
//! hard links, long and pax names) or to keep set-id bits.
//!
//! `cargo run -p skillgate-session --example fuzz_seeds` (run it again when the event or
//! snapshot format changes).
use skillgate_core::{Language, LimitOverrides, Status};
use skillgate_session::fuzz::payload;
use skillgate_session::{
    ArtifactRef, EventKind, MountRecord, StepRecord, StepResult, StepSpec, UploadRecord,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use tar::EntryType;

fn main() -> std::io::Result<()> {
    let out = std::env::args_os().nth(1).map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpora/fuzz-seeds/session_log"),
        PathBuf::from,
    );
    std::fs::create_dir_all(&out)?;
    let mut n = 0;
    for (name, bytes) in events().into_iter().chain(snapshot()?).chain(hostile()) {
        std::fs::write(out.join(&name), bytes)?;
        n += 1;
    }
    println!("{n} seeds in {}", out.display());
    Ok(())
}

fn step(language: Language, code: &str) -> StepRecord {
    let mut spec = StepSpec::new(language, code);
    spec.cwd = "data".into();
    StepRecord {
        spec,
        result: StepResult {
            status: Status::Ok,
            exit_code: Some(0),
            stdout: "{\"rows\": 3}\n".into(),
            stderr: String::new(),
            duration_ms: 42,
            output_digest: "ab".repeat(32),
            workspace_digest: "cd".repeat(32),
            artifacts: Vec::new(),
        },
    }
}

/// One event of each kind, and steps with every optional field.
fn events() -> Vec<(String, Vec<u8>)> {
    let python = step(
        Language::Python,
        "import json, sys\nrows = json.load(sys.stdin)\nprint(len(rows))\n",
    );
    let mut full = step(
        Language::JavaScript,
        "process.stdout.write(JSON.stringify({ok: true}))",
    );
    full.spec.input = serde_json::json!({"rows": [1, 2.5, -3], "name": "é", "nested": {"a": null}});
    full.spec.limits = LimitOverrides {
        wall_timeout: Some(std::time::Duration::from_millis(1500)),
        memory_bytes: Some(64 << 20),
        ..LimitOverrides::default()
    };
    full.spec.replayable = false;
    full.spec.runtime = Some("node".into());
    full.spec.env.insert("TZ".into(), "Asia/Tokyo".into());
    full.result.exit_code = Some(3);
    full.result.stderr = "warning\n".into();
    full.result.artifacts.push(ArtifactRef {
        name: "chart.png".into(),
        size: 1234,
        sha256: "ef".repeat(32),
    });
    let shell = step(Language::Shell, "sort data.csv | head -n 3 > top.csv");
    let upload = EventKind::Upload(UploadRecord {
        path: "data/sales.csv".into(),
        sha256: "01".repeat(32),
        size: 512,
        mode: 0o644,
    });
    let mount = EventKind::SkillMount(MountRecord {
        skill: "csv-totals".into(),
        version: "23".repeat(32),
        sha256: "45".repeat(32),
    });
    [
        ("event-step-python", EventKind::Step(Box::new(python))),
        ("event-step-full", EventKind::Step(Box::new(full))),
        ("event-step-shell", EventKind::Step(Box::new(shell))),
        ("event-upload", upload),
        ("event-skill-mount", mount),
    ]
    .into_iter()
    .map(|(name, kind)| (name.to_string(), payload(&kind).into_bytes()))
    .collect()
}

/// A small workspace packed as a session snapshots one: compressed, and its plain tar.
fn snapshot() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir()?;
    let root = tmp.path();
    std::fs::create_dir_all(root.join("data"))?;
    std::fs::create_dir_all(root.join("out/empty"))?;
    std::fs::write(root.join("data.csv"), "region,total\nnorth,12\nsouth,7\n")?;
    std::fs::write(root.join("data/clean.csv"), "north,12\n")?;
    std::fs::write(root.join("run.sh"), "sort data.csv\n")?;
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755))?;
    std::fs::set_permissions(
        root.join("data/clean.csv"),
        std::fs::Permissions::from_mode(0o600),
    )?;
    std::os::unix::fs::symlink("data.csv", root.join("latest.csv"))?;
    let packed = skillgate_session::snapshot::pack(root)?;
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(&packed.archive[..]).read_to_end(&mut tar)?;
    Ok(vec![
        ("snapshot-workspace.tar.gz".into(), packed.archive),
        ("snapshot-workspace.tar".into(), tar),
    ])
}

/// A plain tar archive being written by hand (the `tar` crate's builder refuses the
/// names these seeds need).
#[derive(Default)]
struct Raw(Vec<u8>);

impl Raw {
    fn entry(mut self, kind: EntryType, name: &[u8], mode: u32, link: &[u8], data: &[u8]) -> Raw {
        let mut h = tar::Header::new_gnu();
        {
            let gnu = h.as_gnu_mut().expect("a GNU header");
            gnu.name[..name.len()].copy_from_slice(name);
            gnu.linkname[..link.len()].copy_from_slice(link);
        }
        h.set_entry_type(kind);
        h.set_mode(mode);
        h.set_size(data.len() as u64);
        h.set_mtime(0);
        h.set_uid(0);
        h.set_gid(0);
        h.set_cksum();
        self.0.extend_from_slice(h.as_bytes());
        self.0.extend_from_slice(data);
        self.0.resize(self.0.len().div_ceil(512) * 512, 0);
        self
    }

    fn file(self, name: &str, data: &str) -> Raw {
        self.entry(
            EntryType::Regular,
            name.as_bytes(),
            0o644,
            b"",
            data.as_bytes(),
        )
    }

    fn dir(self, name: &str, mode: u32) -> Raw {
        self.entry(EntryType::Directory, name.as_bytes(), mode, b"", b"")
    }

    fn symlink(self, name: &str, target: &str) -> Raw {
        self.entry(
            EntryType::Symlink,
            name.as_bytes(),
            0o777,
            target.as_bytes(),
            b"",
        )
    }

    fn hardlink(self, name: &str, target: &str) -> Raw {
        self.entry(
            EntryType::Link,
            name.as_bytes(),
            0o644,
            target.as_bytes(),
            b"",
        )
    }

    fn finish(mut self) -> Vec<u8> {
        self.0.extend_from_slice(&[0; 1024]);
        self.0
    }
}

/// A pax extended header record `key=value`.
fn pax(key: &str, value: &str) -> Vec<u8> {
    let body = format!(" {key}={value}\n");
    let mut len = body.len() + 1;
    while format!("{len}{body}").len() != len {
        len += 1;
    }
    format!("{len}{body}").into_bytes()
}

/// Archives that try to leave the workspace, or to keep more than permission bits.
/// The workspace is unpacked beside a folder `outside` holding `secret.txt`.
fn hostile() -> Vec<(String, Vec<u8>)> {
    let seeds = [
        (
            "parent",
            Raw::default().file("../outside/secret.txt", "pwned"),
        ),
        (
            "parent-inner",
            Raw::default().file("data/../../outside/secret.txt", "pwned"),
        ),
        (
            "absolute",
            Raw::default().file("/outside/secret.txt", "pwned"),
        ),
        (
            "symlink-dir",
            Raw::default()
                .symlink("link", "../outside")
                .file("link/secret.txt", "pwned")
                .file("link/new.txt", "pwned"),
        ),
        (
            "symlink-file",
            Raw::default()
                .symlink("s", "../outside/secret.txt")
                .file("s", "pwned"),
        ),
        (
            "symlink-absolute",
            Raw::default()
                .symlink("root", "/")
                .file("root/tmp/skillgate-session-fuzz-escape", "pwned"),
        ),
        (
            "symlink-then-dir",
            Raw::default()
                .symlink("d", "../outside")
                .dir("d", 0o777)
                .dir("d/x", 0o755),
        ),
        (
            "hardlink-parent",
            Raw::default()
                .hardlink("h", "../outside/secret.txt")
                .file("h", "pwned"),
        ),
        (
            "hardlink-absolute",
            Raw::default().hardlink("passwd", "/etc/passwd"),
        ),
        (
            "hardlink-through-symlink",
            Raw::default()
                .symlink("s", "../outside/secret.txt")
                .hardlink("h", "s")
                .file("h", "pwned"),
        ),
        (
            "setid",
            Raw::default()
                .entry(EntryType::Regular, b"suid", 0o4755, b"", b"#!/bin/sh\n")
                .entry(EntryType::Regular, b"sgid", 0o2755, b"", b"")
                .dir("sticky", 0o1777),
        ),
        (
            "gnu-longname",
            Raw::default()
                .entry(
                    EntryType::GNULongName,
                    b"././@LongLink",
                    0o644,
                    b"",
                    b"../outside/long.txt\0",
                )
                .file("short.txt", "pwned"),
        ),
        (
            "pax-path",
            Raw::default()
                .entry(
                    EntryType::XHeader,
                    b"PaxHeaders/x",
                    0o644,
                    b"",
                    &pax("path", "../outside/pax.txt"),
                )
                .file("x", "pwned"),
        ),
        (
            "pax-linkpath",
            Raw::default()
                .entry(
                    EntryType::XHeader,
                    b"PaxHeaders/l",
                    0o644,
                    b"",
                    &pax("linkpath", "../outside"),
                )
                .symlink("l", "inside")
                .file("l/pax.txt", "pwned"),
        ),
    ];
    seeds
        .into_iter()
        .map(|(name, raw)| (format!("hostile-{name}.tar"), raw.finish()))
        .collect()
}
