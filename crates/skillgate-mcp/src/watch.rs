//! Telling clients when their tools change: `notifications/tools/list_changed`.
//!
//! A poll, every [`POLL_INTERVAL`]: a fingerprint of the skills (every source's skills by
//! name and digest, which covers every file of a folder) and one of the policy files (the
//! bytes of the entities, grants and catalogue files and of every file in the policies
//! folder). When the policy files changed, the pipeline is built again from them (if they
//! do not load, no tool is served until they do). When either changed, every session is
//! told; each asks `tools/list` again and gets what its agent may see now. Polling needs
//! no file-watching service and also sees a registry's changes through its source.
use crate::server::Gateway;
use sha2::{Digest, Sha256};
use skillgate::{Config, LayerName};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How often the skills and the policy files are checked.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// A fingerprint of the skills `gateway` serves: their names and digests.
pub fn skills_fingerprint(gateway: &Gateway) -> String {
    let mut hash = Sha256::new();
    for skill in gateway.skills() {
        hash.update(skill.name.as_bytes());
        hash.update([0]);
        hash.update(skill.digest.as_bytes());
        hash.update([0]);
    }
    hex::encode(hash.finalize())
}

/// A fingerprint of the policy files `config` names: each file's path and bytes (a
/// missing or unreadable one counts as such), the policies folder's files by name.
pub fn policy_fingerprint(config: &Config) -> String {
    let mut hash = Sha256::new();
    let mut file = |path: &Path| {
        hash.update(path.as_os_str().as_encoded_bytes());
        match std::fs::read(path) {
            Ok(bytes) => {
                hash.update((bytes.len() as u64).to_le_bytes());
                hash.update(&bytes);
            }
            Err(e) => hash.update(format!("unreadable: {}", e.kind()).as_bytes()),
        }
    };
    let sources = &config.policy;
    for path in [&sources.entities, &sources.grants, &sources.catalogue]
        .into_iter()
        .flatten()
    {
        file(path);
    }
    if let Some(dir) = &sources.policies {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        entries.sort();
        for path in entries {
            file(&path);
        }
    }
    hex::encode(hash.finalize())
}

/// Checks `gateway`'s skills and the policy files of `config` every `interval`: rebuilds
/// the pipeline when the policy files changed, and tells every session when either
/// changed. `config` and `disabled` are what the gateway's engine was built from. Runs
/// until the task is aborted.
pub fn watch(
    gateway: Arc<Gateway>,
    config: Config,
    disabled: Vec<LayerName>,
    interval: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let fingerprints = |gateway: Arc<Gateway>, config: Config| async move {
            tokio::task::spawn_blocking(move || {
                (skills_fingerprint(&gateway), policy_fingerprint(&config))
            })
            .await
            .ok()
        };
        let Some(mut seen) = fingerprints(gateway.clone(), config.clone()).await else {
            return;
        };
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
        loop {
            tick.tick().await;
            let Some(now) = fingerprints(gateway.clone(), config.clone()).await else {
                return;
            };
            if now == seen {
                continue;
            }
            if now.1 != seen.1 {
                let (gateway, config, disabled) =
                    (gateway.clone(), config.clone(), disabled.clone());
                let _ =
                    tokio::task::spawn_blocking(move || gateway.reload_engine(config, &disabled))
                        .await;
            }
            seen = now;
            gateway.notify_tools_changed().await;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{FolderSource, SkillSource};
    use skillgate::{Caller, Engine};

    fn repo() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn changed_policy_files_change_the_fingerprint_and_a_reload_what_an_agent_sees() {
        let t = tempfile::tempdir().unwrap();
        let entities = t.path().join("entities.json");
        let original = std::fs::read_to_string(repo().join("examples/entities.json")).unwrap();
        std::fs::write(&entities, &original).unwrap();
        let skills = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/skills");
        let records: Vec<serde_json::Value> = ["echo-acme", "echo-globex"]
            .iter()
            .map(|n| {
                let s = skillgate::skill_dir::load(&skills.join(n)).unwrap();
                serde_json::json!({"name": s.name, "digest": s.digest, "tenant": s.tenant,
                                   "owner": s.owner, "visibility": "public"})
            })
            .collect();
        let catalogue = t.path().join("catalogue.json");
        std::fs::write(&catalogue, serde_json::to_string(&records).unwrap()).unwrap();
        let mut config = Config::default();
        config.policy.entities = Some(entities.clone());
        config.policy.catalogue = Some(catalogue);
        config.monitor.state_dir = Some(t.path().join("state"));
        let sources: Vec<Arc<dyn SkillSource>> = vec![Arc::new(FolderSource::new(vec![skills]))];
        let gateway = Gateway::new(Arc::new(Engine::new(config.clone(), &[]).unwrap()), sources);
        let sees = |g: &Gateway| -> Vec<String> {
            g.visible(&Caller::new("analyst-1", "acme"))
                .iter()
                .map(|s| s.name.clone())
                .collect()
        };
        assert_eq!(sees(&gateway), ["echo-acme"]);
        let before = policy_fingerprint(&config);
        let skills_before = skills_fingerprint(&gateway);

        // The entities file no longer declares analyst-1: an unknown agent sees nothing.
        std::fs::write(
            &entities,
            original.replace("\"analyst-1\"", "\"analyst-x\""),
        )
        .unwrap();
        assert_ne!(policy_fingerprint(&config), before);
        assert_eq!(skills_fingerprint(&gateway), skills_before);
        gateway.reload_engine(config.clone(), &[]);
        assert!(sees(&gateway).is_empty());

        // Files that do not load: nothing is served (fail closed).
        std::fs::write(&entities, "not json").unwrap();
        gateway.reload_engine(config.clone(), &[]);
        assert!(gateway.engine().is_err());
        assert!(sees(&gateway).is_empty());
        std::fs::write(&entities, &original).unwrap();
        gateway.reload_engine(config, &[]);
        assert_eq!(sees(&gateway), ["echo-acme"]);
    }
}
