//! The per-run work directory: the skill's entry script and an empty output directory.
use skillgate_core::{ExecError, Skill};
use std::path::{Component, Path, PathBuf};

/// Name of the environment variable that tells a skill where to write artifacts.
pub const OUTPUT_DIR_ENV: &str = "SKILLGATE_OUTPUT_DIR";

/// A temporary directory holding one run's files; removed when dropped.
#[derive(Debug)]
pub struct WorkDir {
    root: tempfile::TempDir,
    entry: PathBuf,
}

impl WorkDir {
    /// Creates `<tmp>/work/<entry>` with the skill's code and an empty `<tmp>/out`.
    pub fn prepare(skill: &Skill) -> Result<WorkDir, ExecError> {
        let base = std::env::temp_dir();
        let rel = safe_relative(&skill.entry).ok_or_else(|| {
            ExecError::Other(format!(
                "entry path `{}` must be relative and stay inside the skill folder",
                skill.entry
            ))
        })?;
        let root = tempfile::Builder::new()
            .prefix("skillgate-run-")
            .tempdir_in(&base)
            .map_err(|e| {
                ExecError::io(
                    format!("creating the work directory in {}", base.display()),
                    e,
                )
            })?;
        let entry = root.path().join("work").join(rel);
        let parent = entry.parent().unwrap_or(root.path());
        std::fs::create_dir_all(parent)
            .and_then(|_| std::fs::write(&entry, &skill.code))
            .and_then(|_| std::fs::create_dir(root.path().join("out")))
            .map_err(|e| ExecError::io("writing the skill into the work directory", e))?;
        Ok(WorkDir { root, entry })
    }

    /// The directory the skill runs in.
    pub fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    /// The directory the skill writes artifacts to.
    pub fn out(&self) -> PathBuf {
        self.root.path().join("out")
    }

    /// The entry script.
    pub fn entry(&self) -> &Path {
        &self.entry
    }

    /// The temporary root holding both.
    pub fn root(&self) -> &Path {
        self.root.path()
    }
}

/// `scripts/main.py` → itself; `/etc/x`, `../x`, `` → `None`.
pub(crate) fn safe_relative(p: &str) -> Option<PathBuf> {
    let path = Path::new(p);
    let ok = !p.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    ok.then(|| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_must_stay_inside() {
        assert!(safe_relative("scripts/main.py").is_some());
        assert!(safe_relative("../main.py").is_none());
        assert!(safe_relative("/etc/passwd").is_none());
        assert!(safe_relative("").is_none());
    }
}
