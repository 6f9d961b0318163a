//! The skill registry: publishing a `.tar.gz` skill folder, listing what a caller may
//! run, and finding the version a run asks for.
//!
//! A version is the sha256 of the uploaded bytes, immutable. The pre-scan runs at publish
//! and its verdict is stored with the version; a blocked version is stored for review and
//! never runs (it is no catalogue record, and a run of it is refused before the pipeline).
//!
//! The policy gate sees published versions as catalogue records (tenant, owner,
//! visibility, by the skill's digest): after each publish the engine is rebuilt with the
//! registry's records beside the operator's catalogue and swapped in (see
//! [`ServerState::rebuild`]), so every decision is made against one immutable snapshot.
use crate::error::{ApiError, elide};
use crate::{Principal, ServerState, tarball};
use serde::Serialize;
use skillgate_core::{Caller, Skill};
use skillgate_store::{PublishVerdict, Role, SkillVersion};
use std::sync::Arc;

/// A registry skill a caller may run: the version and the loaded skill.
#[derive(Debug, Clone)]
pub struct RunnableSkill {
    /// The version (sha256 of the uploaded bytes).
    pub version: SkillVersion,
    /// The skill, loaded.
    pub skill: Arc<Skill>,
}

/// The latest runnable (not blocked) version of each skill of `tenant` (of every tenant
/// with `None`), sorted by name and tenant.
pub fn latest_versions(
    store: &dyn skillgate_store::Store,
    tenant: Option<&str>,
) -> Result<Vec<SkillVersion>, skillgate_store::StoreError> {
    let mut latest: Vec<SkillVersion> = Vec::new();
    for v in store.all_versions()? {
        if tenant.is_some_and(|t| v.tenant != t) || v.verdict == PublishVerdict::Block {
            continue;
        }
        // Oldest first: a later version of a name replaces the earlier one.
        latest.retain(|o| o.name != v.name || o.tenant != v.tenant);
        latest.push(v);
    }
    latest.sort_by(|a, b| (&a.name, &a.tenant).cmp(&(&b.name, &b.tenant)));
    Ok(latest)
}

/// [`latest_versions`], loaded.
pub fn latest_runnable(
    state: &ServerState,
    tenant: Option<&str>,
) -> Result<Vec<RunnableSkill>, ApiError> {
    latest_versions(state.store().as_ref(), tenant)?
        .into_iter()
        .map(|v| {
            let skill = load_version(state, &v)?;
            Ok(RunnableSkill { version: v, skill })
        })
        .collect()
}

/// The skills of the registry `caller` may run: the latest runnable version of each skill
/// of its tenant that the policy gate lets it see (Cedar's `view`, as `list-skills`). For
/// any front end (the HTTP API, an MCP server). Blocking (store and file reads): call it on
/// the blocking pool.
pub fn runnable_skills(
    state: &ServerState,
    caller: &Caller,
) -> Result<Vec<RunnableSkill>, ApiError> {
    let engine = state.engine();
    // A version the gate does not record yet (published through another replica) is not
    // offered: it would be judged as the caller's own code.
    let all: Vec<RunnableSkill> = latest_runnable(state, Some(&caller.tenant))?
        .into_iter()
        .filter(|r| crate::state::knows(&engine, &r.skill.digest))
        .collect();
    let skills: Vec<Skill> = all.iter().map(|r| (*r.skill).clone()).collect();
    // No policy gate (never the case in `serve`): nothing is listed, fail closed.
    let Some(listed) = engine.list_skills(caller, &skills) else {
        return Ok(Vec::new());
    };
    Ok(all
        .into_iter()
        .zip(listed)
        .filter(|(_, l)| l.decision.is_allowed())
        .map(|(r, _)| r)
        .collect())
}

/// Loads a version's skill from its stored bytes (cached by version).
pub fn load_version(state: &ServerState, v: &SkillVersion) -> Result<Arc<Skill>, ApiError> {
    if let Some(s) = state.cached_skill(&v.version) {
        return Ok(s);
    }
    let skill = Arc::new(load_stored(state.store().as_ref(), v)?);
    state.cache_skill(&v.version, skill.clone());
    Ok(skill)
}

/// Loads a version's skill from the bytes `store` keeps for it.
pub fn load_stored(
    store: &dyn skillgate_store::Store,
    v: &SkillVersion,
) -> Result<Skill, ApiError> {
    let bytes = store
        .version_bytes(&v.tenant, &v.name, &v.version)?
        .ok_or_else(|| ApiError::internal(format!("version {} has no bytes", v.version)))?;
    unpack_and_load(&bytes)
        .map_err(|e| ApiError::internal(format!("stored version {}: {}", v.version, e.message)))
}

/// Reads an upload safely and loads it with the skill-folder loader, in a private
/// temporary directory removed afterwards. Errors are 400s naming the problem (paths
/// relative to the folder).
pub fn unpack_and_load(gz: &[u8]) -> Result<Skill, ApiError> {
    let files = tarball::read(gz, tarball::Caps::default())
        .map_err(|e| ApiError::bad_request("bad_archive", e.0))?;
    let files = tarball::strip_common_folder(files);
    let manifest = files.iter().find(|f| f.path == "SKILL.md").ok_or_else(|| {
        ApiError::bad_request("bad_skill", "the archive has no SKILL.md at its root")
    })?;
    let text = std::str::from_utf8(&manifest.bytes)
        .map_err(|_| ApiError::bad_request("bad_skill", "SKILL.md is not valid UTF-8"))?;
    let bad_skill = |message: String| ApiError::bad_request("bad_skill", message);
    let fm = skillgate::skill_dir::parse_manifest(text, "SKILL.md".as_ref())
        .map_err(|e| bad_skill(e.to_string()))?;
    skillgate::skill_dir::validate_name(&fm.name)
        .map_err(|e| bad_skill(format!("SKILL.md: `name`: {e}")))?;
    let tmp = tempfile::Builder::new()
        .prefix("skillgate-publish-")
        .tempdir()
        .map_err(|e| ApiError::internal(format!("cannot make a private directory: {e}")))?;
    let dir = tarball::write_to(&tmp.path().join(&fm.name), &files)
        .map_err(|e| ApiError::internal(format!("cannot unpack the upload: {e}")))?;
    let prefix = format!("{}/", dir.display());
    let mut skill = skillgate::skill_dir::load(&dir)
        .map_err(|e| bad_skill(e.to_string().replace(&prefix, "")))?;
    // The folder is gone after this; the skill holds its files in memory.
    skill.source_dir = None;
    Ok(skill)
}

/// What a publish answers, and what `GET /v1/skills/{name}` lists per version.
#[derive(Debug, Serialize)]
pub struct VersionView {
    /// The skill's name.
    pub name: String,
    /// Its tenant.
    pub tenant: String,
    /// Its owner (the publishing builder).
    pub owner: String,
    /// The version (sha256 of the uploaded bytes).
    pub version: String,
    /// The skill's digest (what the policy gate's catalogue is keyed by).
    pub digest: String,
    /// Its visibility.
    pub visibility: String,
    /// The pre-scan's verdict at publish (`block`: stored for review, never runs).
    pub verdict: &'static str,
    /// The pre-scan's findings at publish.
    pub findings: serde_json::Value,
    /// When, milliseconds since the Unix epoch.
    pub published_ms: i64,
}

impl From<&SkillVersion> for VersionView {
    fn from(v: &SkillVersion) -> VersionView {
        VersionView {
            name: v.name.clone(),
            tenant: v.tenant.clone(),
            owner: v.owner.clone(),
            version: v.version.clone(),
            digest: v.digest.clone(),
            visibility: v.visibility.clone(),
            verdict: v.verdict.as_str(),
            findings: v.findings.clone(),
            published_ms: v.published_ms,
        }
    }
}

/// Only a builder key publishes: 403 naming the key's role otherwise.
pub fn require_builder(principal: &Principal) -> Result<(), ApiError> {
    if principal.role == Role::Builder {
        Ok(())
    } else {
        Err(ApiError::forbidden(format!(
            "{} key cannot publish skills; publish with a builder key",
            principal.role.with_article()
        )))
    }
}

/// The publish policies' decision ([`Policy::authorize_publish`](skillgate_policy::Policy::authorize_publish))
/// on `builder` publishing `skill` to `tenant`: the skill's tenant and owner are what its
/// SKILL.md claims, else the key's tenant and the owner of the name's published versions
/// (`existing`), else the builder. No policy gate denies. `skillgate policy check-publish`
/// asks the same question.
pub fn publish_decision(
    policy: Option<&skillgate_policy::Policy>,
    builder: &str,
    tenant: &str,
    skill: &Skill,
    existing: &[SkillVersion],
    verdict: PublishVerdict,
) -> skillgate_policy::Decision {
    let Some(policy) = policy else {
        return skillgate_policy::Decision::deny_with_error("no policy gate");
    };
    let owner = skill
        .owner
        .clone()
        .or_else(|| existing.first().map(|v| v.owner.clone()))
        .unwrap_or_else(|| builder.to_string());
    let resource = skillgate_policy::PublishSkill {
        name: skill.name.clone(),
        tenant: skill.tenant.clone().unwrap_or_else(|| tenant.to_string()),
        owner,
        visibility: skill.visibility,
        prescan: verdict.as_str().to_string(),
    };
    policy.authorize_publish(
        &skillgate_policy::Publisher::Builder(builder.to_string()),
        &resource,
    )
}

/// The verdict stored with a version for the pre-scan's verdict on it.
pub fn publish_verdict(verdict: skillgate_prescan::Verdict) -> PublishVerdict {
    match verdict {
        skillgate_prescan::Verdict::Allow => PublishVerdict::Pass,
        skillgate_prescan::Verdict::Warn => PublishVerdict::Warn,
        skillgate_prescan::Verdict::Block => PublishVerdict::Block,
    }
}

/// The registry's own checks (kept beside the publish policies as defence in depth):
/// owner and tenant come from the key, so a SKILL.md that claims others is refused, naming
/// the field; a name another builder owns, or files catalogued under another name, too.
fn check_claims(
    state: &ServerState,
    builder: &str,
    tenant: &str,
    skill: &Skill,
    existing: &[SkillVersion],
) -> Result<(), ApiError> {
    let claim = |field: &str, says: &str, key: &str| {
        ApiError::forbidden(format!(
            "SKILL.md's `{field}` is `{}`, but the publishing key is {}'s, of tenant `{tenant}`: \
             `{field}` must be `{key}` or left out",
            elide(says),
            builder
        ))
    };
    if let Some(o) = skill.owner.as_deref().filter(|o| *o != builder) {
        return Err(claim("skillgate.owner", o, builder));
    }
    if let Some(t) = skill.tenant.as_deref().filter(|t| *t != tenant) {
        return Err(claim("skillgate.tenant", t, tenant));
    }
    if let Some(other) = existing.iter().find(|v| v.owner != builder) {
        return Err(ApiError::forbidden(format!(
            "skill `{}` of tenant `{tenant}` is owned by `{}`",
            skill.name, other.owner
        )));
    }
    if let Some(r) = state
        .engine()
        .policy()
        .and_then(|p| p.catalogue().get(&skill.digest))
    {
        if r.tenant != *tenant || r.name != skill.name {
            return Err(ApiError::new(
                http::StatusCode::CONFLICT,
                "digest_taken",
                format!(
                    "these exact files are already catalogued as `{}/{}`",
                    r.tenant, r.name
                ),
            ));
        }
    }
    Ok(())
}

/// Publishes an upload as `principal` (a builder): pre-scans it, asks the publish policies
/// (a deny is a 403; the deciding policy ids go to the log under `request_id`, never into
/// the answer), checks its claims and stores it. Blocking: call it on the blocking pool.
/// Returns the stored version.
pub fn publish(
    state: &ServerState,
    principal: &Principal,
    gz: &[u8],
    request_id: &str,
) -> Result<SkillVersion, ApiError> {
    require_builder(principal)?;
    let builder = &principal.caller.agent_id;
    let tenant = &principal.caller.tenant;
    let skill = unpack_and_load(gz)?;
    let engine = state.engine();
    let existing = state.store().versions(tenant, &skill.name)?;
    let scanner = skillgate::assemble::prescanner(&engine.config().prescan)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let report = scanner.scan_skill(&skill);
    let verdict = publish_verdict(report.verdict);
    let decision = publish_decision(
        engine.policy().map(|p| &**p),
        builder,
        tenant,
        &skill,
        &existing,
        verdict,
    );
    let checked = check_claims(state, builder, tenant, &skill, &existing);
    if !decision.is_allowed() {
        let errors: Vec<String> = decision.errors.iter().map(|e| e.to_string()).collect();
        tracing::warn!(
            request_id,
            builder = %builder,
            tenant = %tenant,
            skill = %elide(&skill.name),
            policies = ?decision.reasons,
            errors = ?errors,
            "publish denied by the publish policies"
        );
        // A claim the registry's own checks name is the clearer answer.
        checked?;
        return Err(ApiError::forbidden(format!(
            "the publish policies do not let `{builder}` publish skill `{}` in tenant `{tenant}`",
            elide(&skill.name)
        )));
    }
    checked?;
    let version = SkillVersion {
        tenant: tenant.clone(),
        name: skill.name.clone(),
        version: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(gz)),
        digest: skill.digest.clone(),
        owner: builder.clone(),
        visibility: skill.visibility.as_str().into(),
        verdict,
        findings: serde_json::to_value(&report.findings).unwrap_or_default(),
        published_ms: crate::now_ms(),
    };
    state
        .store()
        .insert_version(&version, gz)
        .map_err(|e| match e {
            skillgate_store::StoreError::Exists(what) => ApiError::new(
                http::StatusCode::CONFLICT,
                "version_exists",
                format!("{what}: versions are immutable"),
            ),
            e => e.into(),
        })?;
    state.cache_skill(&version.version, Arc::new(skill));
    Ok(version)
}

/// The version of `tenant`'s skill `name` a run asks for (`None`: the latest runnable
/// one): 404 for an unknown skill or version, 403 for a blocked version.
pub fn resolve(
    state: &ServerState,
    tenant: &str,
    name: &str,
    version: Option<&str>,
) -> Result<SkillVersion, ApiError> {
    let versions = state.store().versions(tenant, name)?;
    if versions.is_empty() {
        return Err(ApiError::not_found(
            "unknown_skill",
            format!("no skill `{}` in tenant `{tenant}`", elide(name)),
        ));
    }
    match version {
        Some(want) => {
            let v = versions
                .into_iter()
                .find(|v| v.version == want)
                .ok_or_else(|| {
                    ApiError::not_found(
                        "unknown_version",
                        format!("skill `{name}` has no version `{}`", elide(want)),
                    )
                })?;
            if v.verdict == PublishVerdict::Block {
                return Err(ApiError::forbidden(format!(
                    "version {} of `{name}` was blocked by the pre-scan at publish; it is kept for review and never runs",
                    v.version
                )));
            }
            Ok(v)
        }
        None => versions
            .into_iter()
            .rev()
            .find(|v| v.verdict != PublishVerdict::Block)
            .ok_or_else(|| {
                ApiError::forbidden(format!(
                    "every version of `{name}` was blocked by the pre-scan at publish; none runs"
                ))
            }),
    }
}
