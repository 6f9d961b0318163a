//! Where the skills come from: a [`SkillSource`] says which skills there are now.
//!
//! The stdio server serves the skill folders under each `--skills` directory
//! ([`FolderSource`]); `serve`'s registry is a second source. A server asks its sources
//! again at every `tools/list` and `tools/call`, so a folder that changed is served as it
//! is now.
use skillgate::{Skill, skill_dir};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The skills there are. Each [`Skill`] carries what a tool shows: its name, its
/// description (from `SKILL.md`), its input schema, and the files that run.
pub trait SkillSource: Send + Sync {
    /// The skills there are now. A skill that cannot be loaded is left out (a source
    /// says why where its operator sees it); a source that cannot be read at all gives
    /// none.
    fn skills(&self) -> Vec<Arc<Skill>>;
}

/// The skill folders under some directories: each directory is a skill folder itself
/// (it has a `SKILL.md`) or holds skill folders ([`skill_dir::discover`]). The folders are
/// read again at every call.
#[derive(Debug)]
pub struct FolderSource {
    dirs: Vec<PathBuf>,
    /// Problems already logged, so a broken folder is reported once, not at every poll.
    reported: Mutex<BTreeSet<String>>,
}

impl FolderSource {
    /// The skill folders under `dirs`.
    pub fn new(dirs: Vec<PathBuf>) -> FolderSource {
        FolderSource {
            dirs,
            reported: Mutex::new(BTreeSet::new()),
        }
    }

    fn report(&self, problem: String) {
        let mut reported = self.reported.lock().unwrap_or_else(|p| p.into_inner());
        if reported.insert(problem.clone()) {
            tracing::warn!("{problem}");
        }
    }
}

impl SkillSource for FolderSource {
    fn skills(&self) -> Vec<Arc<Skill>> {
        let mut out = Vec::new();
        for dir in &self.dirs {
            let folders = match skill_dir::discover(dir) {
                Ok(folders) => folders,
                Err(e) => {
                    self.report(format!("skipped skills folder: {e}"));
                    continue;
                }
            };
            for folder in folders {
                // One broken folder hides only itself.
                match skill_dir::load(&folder) {
                    Ok(skill) => out.push(Arc::new(skill)),
                    Err(e) => self.report(format!("skipped {}: {e}", folder.display())),
                }
            }
        }
        out
    }
}

/// The skills of every source, by name: the first source to name a skill wins (a later
/// skill of the same name is left out, and logged).
pub fn all_skills(sources: &[Arc<dyn SkillSource>]) -> Vec<Arc<Skill>> {
    let mut names = BTreeSet::new();
    let mut out = Vec::new();
    for source in sources {
        for skill in source.skills() {
            if names.insert(skill.name.clone()) {
                out.push(skill);
            } else {
                tracing::warn!(
                    "skill `{}` is offered twice; serving the first one found",
                    skill.name
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_skill(root: &std::path::Path, name: &str, description: &str) {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nbody\n"),
        )
        .unwrap();
        std::fs::write(dir.join("scripts/main.py"), "print('{}')\n").unwrap();
    }

    #[test]
    fn a_folder_source_loads_every_skill_folder_and_skips_broken_ones() {
        let root = tempfile::tempdir().unwrap();
        write_skill(root.path(), "alpha", "first");
        write_skill(root.path(), "beta", "second");
        // A folder whose SKILL.md names another skill does not load.
        write_skill(root.path(), "gamma", "third");
        std::fs::write(
            root.path().join("gamma/SKILL.md"),
            "---\nname: other\ndescription: x\n---\n",
        )
        .unwrap();
        let source = FolderSource::new(vec![root.path().to_path_buf()]);
        let skills = source.skills();
        let names: Vec<_> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["alpha", "beta"]);
        assert_eq!(skills[1].description, "second");
    }

    #[test]
    fn a_missing_directory_gives_no_skills_and_the_first_source_wins() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        write_skill(a.path(), "same", "from a");
        write_skill(b.path(), "same", "from b");
        let sources: Vec<Arc<dyn SkillSource>> = vec![
            Arc::new(FolderSource::new(vec![a.path().join("absent")])),
            Arc::new(FolderSource::new(vec![a.path().to_path_buf()])),
            Arc::new(FolderSource::new(vec![b.path().to_path_buf()])),
        ];
        let skills = all_skills(&sources);
        assert_eq!(skills.len(), 1);
        assert_eq!(skills[0].description, "from a");
    }
}
