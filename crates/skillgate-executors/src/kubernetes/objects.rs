//! The objects of a run besides its pod: the Secret carrying the skill's files, the
//! tenant's NetworkPolicy, and the label values and image names they use.
use super::pod::TENANT_LABEL;
use k8s_openapi::ByteString;
use k8s_openapi::api::networking::v1::NetworkPolicy as K8sNetworkPolicy;
use skillgate_core::{ExecError, ExecRequest, NetworkPolicy, units};
use std::collections::BTreeMap;

/// The largest skill folder a Secret carries (the API server's limit is 1 MiB, encoded).
pub const MAX_SKILL_BYTES: usize = 700 * 1024;

/// The image of the runtime `name` (as `skillgate runtime export` names it).
pub fn runtime_image(name: &str) -> String {
    format!("skillgate-runtime-{name}:latest")
}

/// `value` as a label value: itself when it is one (at most 63 letters, digits, `-`,
/// `_`, `.`, starting and ending alphanumeric), else `h-` and 16 hex of its sha256.
pub fn label_value(value: &str) -> String {
    let ok = !value.is_empty()
        && value.len() <= 63
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && value
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && value
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric());
    if ok {
        return value.to_string();
    }
    use sha2::Digest;
    let d = sha2::Sha256::digest(value.as_bytes());
    let hex: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("h-{hex}")
}

/// The tenant's NetworkPolicy: every pod of the tenant's runs, no egress at all.
pub fn tenant_network_policy(tenant: &str, namespace: &str) -> Result<K8sNetworkPolicy, ExecError> {
    let value = label_value(tenant);
    let options = skillgate_confine::network::K8sOptions {
        name: Some(format!(
            "skillgate-tenant-{}",
            value.to_ascii_lowercase().replace(['_', '.'], "-")
        )),
        namespace: Some(namespace.into()),
        pod_labels: BTreeMap::from([(TENANT_LABEL.to_string(), value)]),
    };
    skillgate_confine::network::k8s_network_policy(&NetworkPolicy::None, &options)
        .map_err(|e| ExecError::Other(format!("kubernetes: {e}")))
}

/// The Secret's keys with their mount paths, and its data.
pub(super) type SkillFiles = (Vec<(String, String)>, BTreeMap<String, ByteString>);

/// The Secret's keys and mount paths (the entry is `entry`), and its data.
pub(super) fn skill_files(req: &ExecRequest) -> Result<SkillFiles, ExecError> {
    let mut items = Vec::new();
    let mut data = BTreeMap::new();
    let mut total = 0usize;
    let mut add = |key: String, path: &str, bytes: &[u8]| -> Result<(), ExecError> {
        let safe = !path.is_empty()
            && !path.starts_with('/')
            && path
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if !safe {
            return Err(ExecError::Other(format!(
                "the skill's file `{path}` must be a relative path inside the skill folder"
            )));
        }
        total += bytes.len();
        if total > MAX_SKILL_BYTES {
            return Err(ExecError::Other(format!(
                "kubernetes: the skill's files exceed {} (a Secret carries them to the pod)",
                units::format_size(MAX_SKILL_BYTES as u64)
            )));
        }
        items.push((key.clone(), path.to_string()));
        data.insert(key, ByteString(bytes.to_vec()));
        Ok(())
    };
    let entry = req.skill.entry.trim_start_matches("./");
    add("entry".into(), entry, &req.skill.code)?;
    for (i, f) in req.skill.files.iter().enumerate() {
        if f.path.trim_start_matches("./") == entry {
            continue;
        }
        add(format!("f{i}"), &f.path, &f.bytes)?;
    }
    Ok((items, data))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_kept_or_hashed() {
        assert_eq!(label_value("acme"), "acme");
        let long = "x".repeat(64);
        assert!(label_value(&long).starts_with("h-"));
        assert!(label_value("a b").starts_with("h-"));
        assert_ne!(label_value("a b"), label_value("a c"));
    }

    #[test]
    fn the_tenants_policy_denies_all_egress_of_its_pods() {
        let np = serde_json::to_value(tenant_network_policy("acme", "skillgate").unwrap()).unwrap();
        assert_eq!(np["metadata"]["name"], "skillgate-tenant-acme");
        assert_eq!(
            np["spec"]["podSelector"]["matchLabels"][TENANT_LABEL],
            "acme"
        );
        assert_eq!(np["spec"]["policyTypes"], serde_json::json!(["Egress"]));
        assert_eq!(np["spec"]["egress"], serde_json::json!([]));
    }
}
