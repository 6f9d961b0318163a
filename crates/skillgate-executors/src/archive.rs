//! Artifacts from a container's output directory as a tar stream: the Docker Engine API's
//! archive endpoint (`GET /containers/{id}/archive?path=/out`), or a pod's keeper container.
//!
//! The tar is rebuilt as a directory in a private scratch folder and handed to the
//! sandbox's own collector ([`skillgate_sandbox::artifacts::collect`]), so a container
//! run returns the same artifacts, under the same caps and with the same findings, as a
//! native run. Rebuilding never leaves the scratch folder:
//! - names are normalised (no `..`, no absolute paths) and the archive's root is cut:
//!   Docker names entries after the directory (`out/r.json`), Podman from its inside
//!   (`/r.json` or `r.json`);
//! - symbolic links are recreated as links (never followed; the collector reports them),
//!   and nothing is written beneath a link;
//! - hard links are recreated only towards a regular file already rebuilt (the collector
//!   then reports both names, as on a native run);
//! - a file over the per-file cap is recreated sparse (its size, no data), so the
//!   collector reports it without the data ever being written;
//! - devices and fifos are reported and skipped.
//!
//! The archive itself is bounded by [`archive_budget`]: an output directory holding more
//! is not collected at all (a finding says so).
use skillgate_core::{Artifact, Finding, LayerName, Limits, Severity};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// The most bytes of archive read: four times the total artifact cap plus one file of
/// the largest size a skill may write, so a directory the collector would take from
/// always fits, and a directory filled far past the caps is not copied to the host.
pub fn archive_budget(limits: &Limits) -> u64 {
    limits
        .artifact_total_cap
        .saturating_mul(4)
        .saturating_add(limits.file_size_bytes.max(limits.artifact_file_cap))
        .saturating_add(1 << 20)
}

/// The finding of an output directory whose archive is over [`archive_budget`]: nothing
/// of it is collected.
pub fn over_budget(budget: u64, out_dir: &str) -> Finding {
    Finding::new(
        LayerName::Executor,
        "artifact.total_cap",
        Severity::Medium,
        format!(
            "the output directory holds more than {}; nothing was collected",
            skillgate_core::units::format_size(budget)
        ),
    )
    .with_snippet(out_dir)
}

/// How the archive's entries are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveNames {
    /// Under the directory's own name (`out/r.json`): Docker Engine.
    UnderRoot,
    /// Relative to the directory (`/r.json` or `r.json`): Podman.
    Inside,
}

fn finding(rule: &str, name: &str, msg: String) -> Finding {
    Finding::new(LayerName::Executor, rule, Severity::Medium, msg).with_snippet(name)
}

/// The entry's path below the output directory, or `None` for the directory itself or a
/// name that does not stay inside.
fn relative(raw: &[u8], names: ArchiveNames) -> Option<PathBuf> {
    let path = Path::new(std::ffi::OsStr::from_bytes(raw));
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => parts.push(p),
            Component::RootDir | Component::CurDir => {}
            Component::ParentDir | Component::Prefix(_) => return None,
        }
    }
    if names == ArchiveNames::UnderRoot {
        if parts.is_empty() {
            return None;
        }
        parts.remove(0);
    }
    if parts.is_empty() {
        return None;
    }
    Some(parts.iter().collect())
}

/// Creates the directories above `rel` in `root`; `false` when one of them exists as
/// anything but a directory (a link: nothing is written beneath it).
fn make_parents(root: &Path, rel: &Path) -> bool {
    let mut dir = root.to_path_buf();
    let Some(parent) = rel.parent() else {
        return true;
    };
    for c in parent.components() {
        dir.push(c);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return false,
            Err(_) => {
                if std::fs::create_dir(&dir).is_err() {
                    return false;
                }
            }
        }
    }
    true
}

/// Rebuilds the archive `tar` in `scratch` and collects it as artifacts under `limits`.
pub fn collect_archive(
    tar: impl Read,
    names: ArchiveNames,
    scratch: &Path,
    limits: &Limits,
) -> (Vec<Artifact>, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut archive = tar::Archive::new(tar);
    let Ok(entries) = archive.entries() else {
        findings.push(finding(
            "artifact.archive",
            "/out",
            "the engine's archive of the output directory could not be read".into(),
        ));
        return (Vec::new(), findings);
    };
    for entry in entries {
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                findings.push(finding(
                    "artifact.archive",
                    "/out",
                    format!("the engine's archive of the output directory is broken: {e}"),
                ));
                break;
            }
        };
        let raw = entry.path_bytes().into_owned();
        let shown = String::from_utf8_lossy(&raw).into_owned();
        let Some(rel) = relative(&raw, names) else {
            continue;
        };
        if !make_parents(scratch, &rel) {
            continue;
        }
        let dst = scratch.join(&rel);
        let kind = entry.header().entry_type();
        let made = match kind {
            tar::EntryType::Directory => std::fs::create_dir(&dst).or_else(|e| {
                if std::fs::symlink_metadata(&dst).is_ok_and(|m| m.is_dir()) {
                    Ok(())
                } else {
                    Err(e)
                }
            }),
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                write_file(&mut entry, &dst, limits.artifact_file_cap)
            }
            tar::EntryType::Symlink => match entry.link_name_bytes() {
                Some(target) => {
                    std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(&target), &dst)
                }
                None => Ok(()),
            },
            tar::EntryType::Link => {
                let target = entry
                    .link_name_bytes()
                    .and_then(|t| relative(&t, names))
                    .map(|t| scratch.join(t))
                    .filter(|t| std::fs::symlink_metadata(t).is_ok_and(|m| m.is_file()));
                match target {
                    Some(t) => std::fs::hard_link(t, &dst),
                    None => {
                        findings.push(finding(
                            "artifact.hardlink",
                            &shown,
                            format!("`{shown}` is a hard link; hard links are not collected"),
                        ));
                        Ok(())
                    }
                }
            }
            _ => {
                findings.push(finding(
                    "artifact.special",
                    &shown,
                    format!("`{shown}` is not a regular file"),
                ));
                Ok(())
            }
        };
        if let Err(e) = made {
            tracing::debug!(entry = %shown, error = %e, "rebuilding an archive entry");
        }
    }
    let (artifacts, mut collected) = skillgate_sandbox::artifacts::collect(
        scratch,
        limits.artifact_file_cap,
        limits.artifact_total_cap,
    );
    findings.append(&mut collected);
    (artifacts, findings)
}

/// Writes a regular file's content, or, over `cap`, a sparse file of its size.
fn write_file(entry: &mut impl Read, dst: &Path, cap: u64) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NOFOLLOW and create_new: never open through a link planted at the entry's name.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dst)?;
    let mut limited = entry.take(cap.saturating_add(1));
    let copied = std::io::copy(&mut limited, &mut file)?;
    if copied > cap {
        // Over the cap: keep only the size, for the collector to report.
        let size = copied + std::io::copy(entry, &mut std::io::sink())?;
        file.set_len(0)?;
        file.set_len(size)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        build(&mut b);
        b.into_inner().unwrap()
    }

    /// A header named `name` as is (the builder refuses `/…` and `..`, an engine may not).
    fn raw_header(name: &str, kind: tar::EntryType, size: u64) -> tar::Header {
        let mut h = tar::Header::new_gnu();
        let field = &mut h.as_gnu_mut().unwrap().name;
        field[..name.len()].copy_from_slice(name.as_bytes());
        h.set_size(size);
        h.set_mode(0o644);
        h.set_entry_type(kind);
        h.set_cksum();
        h
    }

    fn file(b: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8]) {
        let h = raw_header(name, tar::EntryType::Regular, data.len() as u64);
        b.append(&h, data).unwrap();
    }

    fn link(b: &mut tar::Builder<Vec<u8>>, kind: tar::EntryType, name: &str, target: &str) {
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_entry_type(kind);
        b.append_link(&mut h, name, target).unwrap();
    }

    fn limits() -> Limits {
        Limits {
            artifact_file_cap: 10,
            artifact_total_cap: 100,
            ..Limits::default()
        }
    }

    #[test]
    fn docker_and_podman_names_give_the_same_artifacts() {
        for (names, prefix) in [
            (ArchiveNames::UnderRoot, "out/"),
            (ArchiveNames::Inside, "/"),
            (ArchiveNames::Inside, ""),
        ] {
            let tar = tar_of(|b| {
                file(b, &format!("{prefix}r.json"), b"{}");
                file(b, &format!("{prefix}sub/a.txt"), b"hello");
            });
            let scratch = tempfile::tempdir().unwrap();
            let (arts, findings) = collect_archive(&tar[..], names, scratch.path(), &limits());
            let got: Vec<_> = arts.iter().map(|a| (a.name.as_str(), a.size)).collect();
            assert_eq!(
                got,
                [("r.json", 2), ("sub/a.txt", 5)],
                "{names:?} {findings:?}"
            );
        }
    }

    #[test]
    fn links_never_lead_out_and_caps_hold() {
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().display().to_string();
        let tar = tar_of(|b| {
            // A link to a host directory, then a file written "through" it.
            link(b, tar::EntryType::Symlink, "out/esc", &target);
            file(b, "out/esc/planted", b"x");
            // A hard link to a host file, and one to a file of the archive.
            link(b, tar::EntryType::Link, "out/shadow", "/etc/shadow");
            file(b, "out/a.txt", b"aaa");
            link(b, tar::EntryType::Link, "out/b.txt", "out/a.txt");
            // Names that climb out.
            file(b, "out/../../climb", b"x");
            // Over the per-file cap.
            file(b, "out/big", &[7u8; 50]);
            file(b, "out/ok", b"fine");
        });
        let scratch = tempfile::tempdir().unwrap();
        let (arts, findings) =
            collect_archive(&tar[..], ArchiveNames::UnderRoot, scratch.path(), &limits());
        assert!(
            std::fs::read_dir(outside.path()).unwrap().next().is_none(),
            "nothing was written through the link"
        );
        let names: Vec<_> = arts.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["ok"], "{findings:?}");
        let rules: Vec<_> = findings.iter().map(|f| f.rule_id.as_str()).collect();
        for rule in [
            "artifact.symlink",
            "artifact.hardlink",
            "artifact.too_large",
        ] {
            assert!(rules.contains(&rule), "{rule} missing from {rules:?}");
        }
        assert!(
            std::fs::metadata(scratch.path().join("big")).unwrap().len() == 50,
            "the big file is kept as its size only"
        );
        assert!(!scratch.path().parent().unwrap().join("climb").exists());
    }

    #[test]
    fn a_broken_archive_is_reported_not_collected() {
        let scratch = tempfile::tempdir().unwrap();
        let (arts, findings) = collect_archive(
            &b"not a tar at all, but long enough to be read as a header block"[..],
            ArchiveNames::UnderRoot,
            scratch.path(),
            &limits(),
        );
        assert!(arts.is_empty());
        assert!(
            findings.iter().any(|f| f.rule_id == "artifact.archive"),
            "{findings:?}"
        );
    }
}
