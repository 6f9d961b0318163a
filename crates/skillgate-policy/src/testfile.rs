//! Policy test files: requests with expected decisions, so people who tune policies can
//! test them like code (`skillgate policy test FILE`).
//!
//! A test file is JSON:
//!
//! ```json
//! {
//!   "entities": "../../../examples/entities.json",
//!   "grants": [{"template": "restricted-grant",
//!               "principal": {"type": "AgentGroup", "id": "analysts"},
//!               "resource": {"type": "Skill", "id": "acme/report"}}],
//!   "cases": [
//!     {"name": "an analyst runs a public skill",
//!      "agent": "analyst-1", "tenant": "acme",
//!      "skill": {"name": "analyze-rows", "tenant": "acme", "owner": "builder-alice",
//!                "visibility": "public", "language": "python"},
//!      "expect": "allow", "reasons": ["public-skills"]}
//!   ]
//! }
//! ```
//!
//! - `entities` and `grants`: a path (relative to the test file) or the JSON inline;
//!   both optional (default: none).
//! - Each case: `name`; `agent`, `tenant`, optional `groups` (the caller); `action`
//!   (`execute`, the default, `view`, or `run_command`); `skill` with `name`, `tenant`,
//!   `owner`, `visibility` (default `private`), `language` (default `python`; `shell` for
//!   a session's shell step), `network` (bool,
//!   default false). A skill with a `tenant` is catalogued: the case runs with a catalogue
//!   record of exactly these fields for it (see [`crate::catalogue`]). A skill without
//!   one has no record: it is the caller's own code. Optional `quarantined` (bool, the
//!   monitor's verdict) or `quarantine_error` (the monitor cannot answer); `expect`
//!   (`allow` or `deny`); optional `reasons` (the exact set of deciding policy ids) and
//!   `errors` (bool: whether the decision must carry errors).
use crate::catalogue::{Catalogue, Record};
use crate::{Action, Decision, LoadError, Policy, RunFacts, Verdict};
use serde::{Deserialize, Serialize};
use skillgate_core::{Caller, Language, Limits, QuarantineSource, Skill, Visibility};
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestFile {
    #[serde(default)]
    entities: Option<serde_json::Value>,
    #[serde(default)]
    grants: Option<serde_json::Value>,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    agent: String,
    tenant: String,
    #[serde(default)]
    groups: Vec<String>,
    #[serde(default = "execute")]
    action: String,
    skill: CaseSkill,
    #[serde(default)]
    quarantined: bool,
    #[serde(default)]
    quarantine_error: Option<String>,
    expect: Verdict,
    #[serde(default)]
    reasons: Option<Vec<String>>,
    #[serde(default)]
    errors: Option<bool>,
}

fn execute() -> String {
    "execute".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseSkill {
    name: String,
    #[serde(default)]
    tenant: Option<String>,
    #[serde(default)]
    owner: Option<String>,
    #[serde(default)]
    visibility: Option<String>,
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    network: bool,
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match String::deserialize(d)?.as_str() {
            "allow" => Ok(Verdict::Allow),
            "deny" => Ok(Verdict::Deny),
            other => Err(serde::de::Error::custom(format!(
                "unknown decision `{other}` (expected allow or deny)"
            ))),
        }
    }
}

/// The result of one case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// Whether the decision met every expectation.
    pub passed: bool,
    /// What did not match (empty when passed).
    pub problems: Vec<String>,
    /// The decision the gate made.
    pub decision: Decision,
}

/// The results of a test file.
#[derive(Debug, Clone, Serialize)]
pub struct TestReport {
    /// One per case, in file order.
    pub cases: Vec<CaseResult>,
}

impl TestReport {
    /// How many cases failed.
    pub fn failures(&self) -> usize {
        self.cases.iter().filter(|c| !c.passed).count()
    }
}

#[derive(Debug)]
struct Fixed(Result<bool, String>);

impl QuarantineSource for Fixed {
    fn is_quarantined(&self, _tenant: &str, _agent_id: &str) -> Result<bool, String> {
        self.0.clone()
    }
}

/// Reads a test file and runs it against `policy` (the file's entities and grants are
/// added to it). An unreadable or malformed file is a [`LoadError`].
pub fn run_file(policy: &Policy, path: &Path) -> Result<TestReport, LoadError> {
    let text = crate::load::read_file(path)?;
    run_str(policy, &path.display().to_string(), &text, path.parent())
}

/// Runs the test file `text`; relative paths in it resolve against `base`.
pub fn run_str(
    policy: &Policy,
    file: &str,
    text: &str,
    base: Option<&Path>,
) -> Result<TestReport, LoadError> {
    let tf: TestFile = serde_json::from_str(text).map_err(|e| {
        LoadError::at(
            file,
            u32::try_from(e.line()).unwrap_or(u32::MAX),
            u32::try_from(e.column()).unwrap_or(u32::MAX),
            e.to_string(),
        )
    })?;
    let mut policy = policy.clone();
    if let Some(e) = &tf.entities {
        let (name, json) = referenced(file, e, base)?;
        policy = policy.with_entities_json(&name, &json)?;
    }
    if let Some(g) = &tf.grants {
        let (name, json) = referenced(file, g, base)?;
        policy = policy.with_grants_json(&name, &json)?;
    }
    let mut cases = Vec::with_capacity(tf.cases.len());
    for (i, case) in tf.cases.iter().enumerate() {
        let in_case =
            |m: String| LoadError::file(file, format!("case {} (`{}`): {m}", i + 1, case.name));
        let skill = case_skill(i, &case.skill).map_err(in_case)?;
        let records = skill.tenant.clone().map(|tenant| Record {
            name: skill.name.clone(),
            digest: skill.digest.clone(),
            tenant,
            owner: skill.owner.clone(),
            visibility: skill.visibility,
        });
        let catalogue = Catalogue::new(records).map_err(in_case)?;
        let policy = policy.clone().with_catalogue(file, catalogue)?;
        cases.push(run_case(&policy, case, &skill).map_err(in_case)?);
    }
    Ok(TestReport { cases })
}

/// A path (read relative to `base`) or inline JSON, as `(name, JSON text)`.
fn referenced(
    file: &str,
    value: &serde_json::Value,
    base: Option<&Path>,
) -> Result<(String, String), LoadError> {
    match value {
        serde_json::Value::String(p) => {
            let path = base.map(|b| b.join(p)).unwrap_or_else(|| p.into());
            Ok((path.display().to_string(), crate::load::read_file(&path)?))
        }
        inline => Ok((format!("{file} (inline)"), inline.to_string())),
    }
}

/// The skill of case number `i`; its code is the case number, so every case's skill has
/// its own digest.
fn case_skill(i: usize, s: &CaseSkill) -> Result<Skill, String> {
    let language: Language = match s.language.as_deref() {
        // Not a skill language, so not parsed from a name elsewhere; a case may name it.
        Some("shell") => Language::Shell,
        other => other.unwrap_or("python").parse()?,
    };
    let visibility: Visibility = s.visibility.as_deref().unwrap_or("private").parse()?;
    let mut b = Skill::builder(&s.name, language, format!("# case {i}").into_bytes())
        .visibility(visibility);
    if let Some(t) = &s.tenant {
        b = b.tenant(t);
    }
    if let Some(o) = &s.owner {
        b = b.owner(o);
    }
    if s.network {
        b = b.network(skillgate_core::NetworkPolicy::AllowList(Vec::new()));
    }
    Ok(b.build())
}

fn run_case(policy: &Policy, case: &Case, skill: &Skill) -> Result<CaseResult, String> {
    let action: Action = case.action.parse()?;
    let quarantine = match &case.quarantine_error {
        Some(e) => Err(e.clone()),
        None => Ok(case.quarantined),
    };
    let policy = policy.clone().with_quarantine(Arc::new(Fixed(quarantine)));
    let caller = Caller::new(&case.agent, &case.tenant).with_groups(case.groups.clone());
    let facts = RunFacts::for_skill(skill, &Limits::default());
    let decision = policy.authorize(&caller, skill, action, &facts);
    let mut problems = Vec::new();
    if decision.decision != case.expect {
        problems.push(format!(
            "expected {}, got {}",
            case.expect, decision.decision
        ));
    }
    if let Some(want) = &case.reasons {
        let mut want = want.clone();
        want.sort();
        if want != decision.reasons {
            problems.push(format!(
                "expected reasons {want:?}, got {:?}",
                decision.reasons
            ));
        }
    }
    if let Some(want) = case.errors
        && want == decision.errors.is_empty()
    {
        problems.push(if want {
            "expected errors, got none".to_string()
        } else {
            format!("expected no errors, got {:?}", decision.errors)
        });
    }
    Ok(CaseResult {
        name: case.name.clone(),
        passed: problems.is_empty(),
        problems,
        decision,
    })
}
