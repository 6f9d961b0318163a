//! Loading: the schema, the policy files, the entities file and the grants file, each
//! parsed and validated once, strictly, at start. Any problem refuses to start. (The
//! compiled-in policy files against the compiled-in schema are validated by the tests
//! instead: their answer cannot change between starts.)
use crate::error::LoadError;
use crate::index::ResourceIndex;
use crate::json_array::{element_error, parse_array};
use cedar_policy::{
    Entities, EntityId, EntityTypeName, EntityUid, PolicyId, PolicySet, Schema, SlotId,
    ValidationMode, Validator,
};
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The built-in schema (`rules/policies/skillgate.cedarschema`).
pub const BUILTIN_SCHEMA: &str = include_str!("../../../rules/policies/skillgate.cedarschema");

/// [`BUILTIN_SCHEMA`] in Cedar's JSON schema format, converted ahead of time (a test checks
/// that it is exactly the text schema's conversion). Every `skillgate run` loads the
/// built-in schema, and the JSON form loads several times faster than the text form parses.
const BUILTIN_SCHEMA_JSON: &str = include_str!("builtin_schema.json");

/// The base policies (`rules/policies/base/*.cedar`), by file name: tenant isolation,
/// the code right and quarantine. They are compiled in and always loaded: a policies
/// folder of your own adds to them and never replaces them. Only
/// [`PolicySources::disabled_base_policies`] turns one off, and every decision then says so.
pub const BASE_POLICIES: &[(&str, &str)] = &[
    (
        "base/tenancy.cedar",
        include_str!("../../../rules/policies/base/tenancy.cedar"),
    ),
    (
        "base/agents.cedar",
        include_str!("../../../rules/policies/base/agents.cedar"),
    ),
];

/// The built-in default policy files (`rules/policies/*.cedar`), by file name: who may
/// run what (visibility, grants). A policies folder replaces these, never the
/// [`BASE_POLICIES`].
pub const BUILTIN_POLICIES: &[(&str, &str)] = &[(
    "visibility.cedar",
    include_str!("../../../rules/policies/visibility.cedar"),
)];

/// Largest policy, schema, entities or grants file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Where the gate's data comes from: the `[policy]` section of `skillgate.toml`, or the
/// CLI's `--policies`, `--entities` and `--grants`.
///
/// ```
/// let s: skillgate_policy::PolicySources = serde_json::from_value(serde_json::json!({
///     "entities": "entities.json", "grants": "grants.json"
/// })).unwrap();
/// assert!(s.policies.is_none(), "built-in policies by default");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicySources {
    /// A folder of `*.cedar` files, and optionally one `*.cedarschema` file, replacing the
    /// built-in default policies (and schema); the [`BASE_POLICIES`] stay. Default: the
    /// built-in ones.
    pub policies: Option<PathBuf>,
    /// A Cedar entities JSON file: tenants, agents, agent groups, builders. Default:
    /// none, so every agent is unknown and has no right to run code.
    pub entities: Option<PathBuf>,
    /// A grants file linking policy templates (see [`crate::grants`]). Default: none.
    pub grants: Option<PathBuf>,
    /// The catalogue file: the operator's record (tenant, owner, visibility) of each skill,
    /// by digest (see [`crate::catalogue`]). Default: none, so every skill is its caller's
    /// own code.
    pub catalogue: Option<PathBuf>,
    /// Add the groups a caller asserts (`Caller::groups`) to the agent's groups from the
    /// entities file. Only for deployments where the caller is a trusted platform.
    pub trust_caller_groups: bool,
    /// Ids of [`BASE_POLICIES`] to turn off (`tenant-isolation`, `no-code-right`,
    /// `quarantine`). Every decision then carries a finding saying so. Default: none.
    pub disabled_base_policies: Vec<String>,
    /// A folder of `*.cedar` files added to the base publish policies (who may publish
    /// which skill to the registry; see [`crate::publish`]), validated strictly against
    /// the compiled-in publish schema. Default: none, the base publish policies alone.
    pub publish_policies: Option<PathBuf>,
}

impl PolicySources {
    /// Makes relative paths relative to `base` (the config file's folder).
    pub fn resolve_relative_to(&mut self, base: &Path) {
        for p in [
            &mut self.policies,
            &mut self.entities,
            &mut self.grants,
            &mut self.catalogue,
            &mut self.publish_policies,
        ]
        .into_iter()
        .flatten()
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
    }
}

pub(crate) fn read_file(path: &Path) -> Result<String, LoadError> {
    let name = path.display().to_string();
    let meta =
        std::fs::metadata(path).map_err(|e| LoadError::file(&name, format!("cannot read: {e}")))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(LoadError::file(
            &name,
            format!(
                "{} bytes, larger than the {MAX_FILE_BYTES} bytes allowed",
                meta.len()
            ),
        ));
    }
    std::fs::read_to_string(path).map_err(|e| LoadError::file(&name, format!("cannot read: {e}")))
}

/// The policy files of a folder: its `*.cedar` files sorted by name, and its schema file
/// if it has one.
pub(crate) struct PolicyDir {
    pub(crate) schema: Option<(String, String)>,
    pub(crate) policies: Vec<(String, String)>,
}

pub(crate) fn read_policy_dir(dir: &Path) -> Result<PolicyDir, LoadError> {
    let name = dir.display().to_string();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| LoadError::file(&name, format!("cannot read the policy folder: {e}")))?;
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| LoadError::file(&name, format!("cannot list: {e}")))?;
        paths.push(entry.path());
    }
    paths.sort();
    let mut schema = None;
    let mut policies = Vec::new();
    for path in paths {
        let file = path.display().to_string();
        match path.extension().and_then(|e| e.to_str()) {
            Some("cedar") => policies.push((file, read_file(&path)?)),
            Some("cedarschema") => {
                if let Some((first, _)) = &schema {
                    return Err(LoadError::file(
                        file,
                        format!(
                            "a second schema file; {first} is already the schema (one per folder)"
                        ),
                    ));
                }
                schema = Some((file, read_file(&path)?));
            }
            _ => {}
        }
    }
    if policies.is_empty() {
        return Err(LoadError::file(
            name,
            "no *.cedar policy file in the folder",
        ));
    }
    Ok(PolicyDir { schema, policies })
}

/// Parses a schema in the Cedar schema syntax ([`BUILTIN_SCHEMA`] from its JSON form).
pub(crate) fn parse_schema(file: &str, text: &str) -> Result<Schema, LoadError> {
    if text == BUILTIN_SCHEMA {
        return Schema::from_json_str(BUILTIN_SCHEMA_JSON)
            .map_err(|e| LoadError::file(file, format!("the built-in schema does not load: {e}")));
    }
    match Schema::from_cedarschema_str(text) {
        Ok((schema, _warnings)) => Ok(schema),
        Err(e) => Err(LoadError::from_diagnostic(file, text, &e)),
    }
}

/// Whether a policy file of `text` against the schema of `schema_text` is known to
/// validate: a compiled-in policy file ([`BASE_POLICIES`], [`BUILTIN_POLICIES`]) against
/// the compiled-in schema, which the tests validate. Validating it again at every start
/// would only repeat their answer.
pub(crate) fn known_valid(schema_text: &str, text: &str) -> bool {
    schema_text == BUILTIN_SCHEMA
        && BASE_POLICIES
            .iter()
            .chain(BUILTIN_POLICIES)
            .any(|(_, builtin)| *builtin == text)
}

/// Parses one policy file, renames each policy and template to its `@id`, and validates
/// it strictly against `schema` (of the text `schema_text`), unless it is
/// [`known_valid`].
pub(crate) fn parse_policy_file(
    schema: &Schema,
    schema_text: &str,
    file: &str,
    text: &str,
) -> Result<PolicySet, LoadError> {
    checked(schema, schema_text, file, text, parse_text(file, text)?)
}

/// One policy file's text parsed, not yet validated nor renamed.
fn parse_text(file: &str, text: &str) -> Result<PolicySet, LoadError> {
    PolicySet::from_str(text).map_err(|e| LoadError::from_diagnostic(file, text, &e))
}

/// The policies `parsed` from `text` validated strictly against `schema` (of the text
/// `schema_text`), unless [`known_valid`], and renamed to their `@id`s.
fn checked(
    schema: &Schema,
    schema_text: &str,
    file: &str,
    text: &str,
    parsed: PolicySet,
) -> Result<PolicySet, LoadError> {
    if !known_valid(schema_text, text) {
        validate_file(schema, file, text, &parsed)?;
    }
    rename_to_ids(file, text, &parsed)
}

/// The schema, and the policy files: the base policy files ([`BASE_POLICIES`], without the
/// policies `lifted` names) and then `files`, each parsed, validated against the schema
/// and renamed to its `@id`s, in that order. The first error (the schema's, a schema
/// without the request shapes skillgate sends, a `lifted` id that is not a base
/// policy's, then the files' in order) is the answer.
///
/// Parsing is independent of the schema, and both build Cedar's parsers (each its own
/// lexer) on first use: the policy texts are parsed on a thread of their own while the
/// schema parses (each `skillgate run` is a fresh process that does both), and only
/// validation waits for both.
pub(crate) fn parse_with_schema(
    schema_file: &str,
    schema_text: &str,
    lifted: &[String],
    files: &[(String, String)],
) -> Result<(Schema, Vec<(String, PolicySet)>), LoadError> {
    let all: Vec<(String, &str)> = BASE_POLICIES
        .iter()
        .map(|(name, text)| (format!("built-in {name}"), *text))
        .chain(files.iter().map(|(f, t)| (f.clone(), t.as_str())))
        .collect();
    // In order, up to and including the first that does not parse.
    let parse_all = || -> Vec<Result<PolicySet, LoadError>> {
        let mut out = Vec::with_capacity(all.len());
        for (file, text) in &all {
            let parsed = parse_text(file, text);
            let failed = parsed.is_err();
            out.push(parsed);
            if failed {
                break;
            }
        }
        out
    };
    let (schema, parsed) = std::thread::scope(|scope| {
        let parsing = std::thread::Builder::new()
            .name("policy-parse".into())
            // As deep as the caller's own stack (a deeply nested policy must not
            // overflow here where it did not before).
            .stack_size(skillgate_core::WORKER_STACK)
            .spawn_scoped(scope, parse_all);
        let schema = parse_schema(schema_file, schema_text);
        let parsed = match parsing {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: parse here.
            Err(_) => parse_all(),
        };
        (schema, parsed)
    });
    let schema = schema?;
    // The built-in schema has the shapes (a test checks it): only another one is checked.
    if schema_text != BUILTIN_SCHEMA {
        crate::request::check_request_shapes(&schema)
            .map_err(|e| LoadError::file(schema_file, e))?;
    }
    check_lifted(lifted)?;
    let mut out = Vec::with_capacity(all.len());
    for (i, ((file, text), parsed)) in all.iter().zip(parsed).enumerate() {
        let mut set = checked(&schema, schema_text, file, text, parsed?)?;
        if i < BASE_POLICIES.len() {
            set = without_lifted(file, set, lifted)?;
        }
        out.push((file.clone(), set));
    }
    Ok((schema, out))
}

/// Validates the policies `parsed` from `text` strictly against `schema`; the first error
/// names its policy.
fn validate_file(
    schema: &Schema,
    file: &str,
    text: &str,
    parsed: &PolicySet,
) -> Result<(), LoadError> {
    let result = Validator::new(schema.clone()).validate(parsed, ValidationMode::Strict);
    if let Some(err) = result.validation_errors().next() {
        let count = result.validation_errors().count();
        let mut diag = LoadError::from_diagnostic(file, text, err);
        if let Some(id) = parsed
            .policy(err.policy_id())
            .and_then(|p| p.annotation("id"))
            .or_else(|| {
                parsed
                    .template(err.policy_id())
                    .and_then(|t| t.annotation("id"))
            })
        {
            diag.message = format!("policy `{id}`: {}", diag.message);
        }
        if count > 1 {
            diag.message
                .push_str(&format!(" (and {} more validation errors)", count - 1));
        }
        return Err(diag);
    }
    Ok(())
}

/// The policies and templates of `parsed`, each renamed to its `@id`.
fn rename_to_ids(file: &str, text: &str, parsed: &PolicySet) -> Result<PolicySet, LoadError> {
    let mut out = PolicySet::new();
    for policy in parsed.policies() {
        let id = annotated_id(file, text, policy.annotation("id"), || policy.to_string())?;
        out.add(policy.new_id(id))
            .map_err(|e| LoadError::file(file, e.to_string()))?;
    }
    for template in parsed.templates() {
        let id = annotated_id(file, text, template.annotation("id"), || {
            template.to_string()
        })?;
        out.add_template(template.new_id(id))
            .map_err(|e| LoadError::file(file, e.to_string()))?;
    }
    Ok(out)
}

fn annotated_id(
    file: &str,
    text: &str,
    id: Option<&str>,
    source: impl FnOnce() -> String,
) -> Result<PolicyId, LoadError> {
    match id {
        Some(id) if !id.trim().is_empty() => Ok(PolicyId::new(id)),
        _ => {
            let source = source();
            let source = source.as_str();
            let first_line = source.lines().next().unwrap_or_default();
            Err(LoadError::at_offset(
                file,
                text,
                text.find(source).or_else(|| text.find(first_line)),
                format!(
                    "policy `{first_line}` has no @id(\"...\") annotation; every policy needs one (it names the policy in reports)"
                ),
            ))
        }
    }
}

/// The ids of the base policies, in [`BASE_POLICIES`] order.
pub const BASE_POLICY_IDS: &[&str] = &["tenant-isolation", "no-code-right", "quarantine"];

/// Checks that each id `lifted` names is a base policy id.
pub(crate) fn check_lifted(lifted: &[String]) -> Result<(), LoadError> {
    const SETTING: &str = "[policy] disabled_base_policies";
    if let Some(unknown) = lifted
        .iter()
        .find(|id| !BASE_POLICY_IDS.contains(&id.as_str()))
    {
        return Err(LoadError::file(
            SETTING,
            format!(
                "`{unknown}` is not a base policy (base policies: {})",
                BASE_POLICY_IDS.join(", ")
            ),
        ));
    }
    Ok(())
}

/// A base policy file's policies without those `lifted` names.
pub(crate) fn without_lifted(
    file: &str,
    parsed: PolicySet,
    lifted: &[String],
) -> Result<PolicySet, LoadError> {
    let mut kept = PolicySet::new();
    for p in parsed.policies() {
        if !lifted.iter().any(|l| *l == p.id().to_string()) {
            kept.add(p.clone())
                .map_err(|e| LoadError::file(file, e.to_string()))?;
        }
    }
    Ok(kept)
}

/// Merges per-file policy sets, refusing an id used twice.
pub(crate) fn merge(
    files: Vec<(String, PolicySet)>,
) -> Result<(PolicySet, HashMap<PolicyId, String>), LoadError> {
    let mut out = PolicySet::new();
    let mut origin: HashMap<PolicyId, String> = HashMap::new();
    for (file, set) in files {
        let ids = set
            .policies()
            .map(|p| p.id().clone())
            .chain(set.templates().map(|t| t.id().clone()));
        for id in ids {
            if let Some(first) = origin.get(&id) {
                return Err(LoadError::file(
                    &file,
                    format!("policy id `{id}` is already used in {first}; ids must be unique"),
                ));
            }
            origin.insert(id, file.clone());
        }
        for p in set.policies() {
            out.add(p.clone())
                .map_err(|e| LoadError::file(&file, e.to_string()))?;
        }
        for t in set.templates() {
            out.add_template(t.clone())
                .map_err(|e| LoadError::file(&file, e.to_string()))?;
        }
    }
    Ok((out, origin))
}

/// Parses a Cedar entities JSON file against `schema`. Skill entities are refused:
/// a skill's attributes come from the catalogue.
pub(crate) fn parse_entities(
    schema: &Schema,
    file: &str,
    text: &str,
) -> Result<Entities, LoadError> {
    let items = parse_array(file, text)?;
    for (i, item) in items.iter().enumerate() {
        let ty = item
            .get("uid")
            .and_then(|u| u.get("type"))
            .and_then(|t| t.as_str());
        if ty == Some("Skill") {
            return Err(element_error(
                file,
                text,
                i,
                "Skill entities do not belong in the entities file: a skill's tenant, owner and visibility come from its catalogue record ([policy] catalogue)",
            ));
        }
    }
    match Entities::from_json_value(serde_json::Value::Array(items.clone()), Some(schema)) {
        Ok(entities) => Ok(entities),
        Err(whole) => {
            // Name the first element that is wrong on its own, with its line.
            for (i, item) in items.iter().enumerate() {
                if let Err(e) = Entities::from_json_value(
                    serde_json::Value::Array(vec![item.clone()]),
                    Some(schema),
                ) {
                    return Err(element_error(file, text, i, diagnostic_text(&e)));
                }
            }
            Err(LoadError::file(file, diagnostic_text(&whole)))
        }
    }
}

/// The per-skill index of `policies` (see [`ResourceIndex`]); `file` names the last file
/// loaded in the error, which only a bug can cause.
pub(crate) fn index(file: &str, policies: &PolicySet) -> Result<ResourceIndex, LoadError> {
    ResourceIndex::build(policies)
        .map_err(|e| LoadError::file(file, format!("cannot index the policies by skill: {e}")))
}

/// The action entities of `schema` that belong to an action group, built once and added to
/// every request's entity set. An action in no group needs no entity: `action in X` is then
/// plain equality, which Cedar decides from the uid alone.
pub(crate) fn action_entities(
    file: &str,
    schema: &Schema,
) -> Result<std::sync::Arc<[cedar_policy::Entity]>, LoadError> {
    let actions = schema.action_entities().map_err(|e| {
        LoadError::file(
            file,
            format!("cannot build the action entities: {}", diagnostic_text(&e)),
        )
    })?;
    Ok(actions
        .iter()
        .filter(|a| !(*a).clone().into_inner().2.is_empty())
        .cloned()
        .collect())
}

/// A diagnostic's message with its causes and help, on one line.
pub(crate) fn diagnostic_text(e: &dyn miette::Diagnostic) -> String {
    let mut msg = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !msg.contains(&s_text) {
            msg.push_str(&format!(": {s_text}"));
        }
        source = s.source();
    }
    if let Some(help) = e.help() {
        msg.push_str(&format!(" (help: {help})"));
    }
    msg
}

/// One grant: a template linked to a principal and a resource.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Grant {
    /// Id of the linked policy (default `grant-N`, N its 1-based position).
    #[serde(default)]
    id: Option<String>,
    /// The template's `@id`.
    template: String,
    /// `?principal`.
    #[serde(default)]
    principal: Option<Uid>,
    /// `?resource`.
    #[serde(default)]
    resource: Option<Uid>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Uid {
    #[serde(rename = "type")]
    ty: String,
    id: String,
}

impl Uid {
    fn to_cedar(&self) -> Result<EntityUid, String> {
        let ty = EntityTypeName::from_str(&self.ty)
            .map_err(|e| format!("`{}` is not an entity type name: {e}", self.ty))?;
        Ok(EntityUid::from_type_name_and_id(
            ty,
            EntityId::new(&self.id),
        ))
    }
}

/// Links every grant of a grants file into `policies`, then validates the links
/// strictly against `schema`. Returns how many grants were linked.
pub(crate) fn link_grants(
    schema: &Schema,
    policies: &mut PolicySet,
    origin: &mut HashMap<PolicyId, String>,
    file: &str,
    text: &str,
) -> Result<usize, LoadError> {
    let items = parse_array(file, text)?;
    let mut positions: HashMap<PolicyId, usize> = HashMap::new();
    for (i, item) in items.into_iter().enumerate() {
        let grant: Grant = serde_json::from_value(item)
            .map_err(|e| element_error(file, text, i, e.to_string()))?;
        let template = PolicyId::new(&grant.template);
        if policies.template(&template).is_none() {
            return Err(element_error(
                file,
                text,
                i,
                format!("no policy template with @id(\"{}\")", grant.template),
            ));
        }
        let id = PolicyId::new(
            grant
                .id
                .clone()
                .unwrap_or_else(|| format!("grant-{}", i + 1)),
        );
        if let Some(first) = origin.get(&id) {
            return Err(element_error(
                file,
                text,
                i,
                format!("policy id `{id}` is already used in {first}"),
            ));
        }
        let mut vals = HashMap::new();
        for (slot, uid) in [
            (SlotId::principal(), &grant.principal),
            (SlotId::resource(), &grant.resource),
        ] {
            if let Some(uid) = uid {
                vals.insert(
                    slot,
                    uid.to_cedar()
                        .map_err(|e| element_error(file, text, i, e))?,
                );
            }
        }
        policies
            .link(template, id.clone(), vals)
            .map_err(|e| element_error(file, text, i, diagnostic_text(&e)))?;
        origin.insert(id.clone(), file.to_string());
        positions.insert(id, i);
    }
    let result = Validator::new(schema.clone()).validate(policies, ValidationMode::Strict);
    if let Some(err) = result.validation_errors().next() {
        let msg = diagnostic_text(err);
        return Err(match positions.get(err.policy_id()) {
            Some(&i) => element_error(file, text, i, msg),
            None => LoadError::file(file, msg),
        });
    }
    // A link that can never apply (an entity type that can hold no agent) is a mistake,
    // not a grant: the validator only warns about it, the loader refuses it.
    for warning in result.validation_warnings() {
        if let Some(&i) = positions.get(warning.policy_id()) {
            return Err(element_error(file, text, i, diagnostic_text(warning)));
        }
    }
    Ok(positions.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The policy texts parse beside the schema, but the errors come in the order of a
    /// load done one step at a time: the schema's, an unknown lifted id, then each file's.
    #[test]
    fn parse_with_schema_reports_the_first_error_in_order() {
        let good = (
            "good.cedar".to_string(),
            "@id(\"g\") permit(principal, action, resource);".to_string(),
        );
        let bad = ("bad.cedar".to_string(), "permit(principal,".to_string());
        let invalid = (
            "invalid.cedar".to_string(),
            "@id(\"v\") permit(principal is NoSuchType, action, resource);".to_string(),
        );
        let err = |schema: &str, lifted: &[&str], files: &[(String, String)]| {
            let lifted: Vec<String> = lifted.iter().map(|s| s.to_string()).collect();
            parse_with_schema("s.cedarschema", schema, &lifted, files)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        let files = [good.clone(), invalid.clone(), bad.clone()];
        assert!(err("entity {", &["nope"], &files).contains("s.cedarschema"));
        assert!(err(BUILTIN_SCHEMA, &["nope"], &files).contains("`nope` is not a base policy"));
        assert!(err(BUILTIN_SCHEMA, &[], &files).contains("invalid.cedar"));
        assert!(err(BUILTIN_SCHEMA, &[], &[good.clone(), bad, invalid]).contains("bad.cedar"));

        let (_, sets) =
            parse_with_schema("s", BUILTIN_SCHEMA, &["quarantine".into()], &[good]).unwrap();
        let names: Vec<&str> = sets.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(names.len(), BASE_POLICIES.len() + 1);
        assert_eq!(names.last(), Some(&"good.cedar"));
        let ids: Vec<String> = sets
            .iter()
            .flat_map(|(_, set)| set.policies().map(|p| p.id().to_string()))
            .collect();
        assert!(ids.contains(&"g".to_string()) && ids.contains(&"tenant-isolation".to_string()));
        assert!(!ids.contains(&"quarantine".to_string()), "{ids:?}");
    }

    /// The JSON form shipped is the text schema's conversion. After changing
    /// `rules/policies/skillgate.cedarschema`, regenerate it with
    /// `SKILLGATE_REGENERATE=1 cargo test -p skillgate-policy builtin_schema_json`.
    #[test]
    fn builtin_schema_json_is_the_text_schema_converted() {
        let (fragment, _) = cedar_policy::SchemaFragment::from_cedarschema_str(BUILTIN_SCHEMA)
            .expect("the built-in schema parses");
        let converted: serde_json::Value =
            serde_json::from_str(&fragment.to_json_string().unwrap()).unwrap();
        if std::env::var_os("SKILLGATE_REGENERATE").is_some() {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/builtin_schema.json");
            let text = serde_json::to_string_pretty(&converted).unwrap() + "\n";
            std::fs::write(path, text).unwrap();
            return;
        }
        let shipped: serde_json::Value = serde_json::from_str(BUILTIN_SCHEMA_JSON).unwrap();
        assert_eq!(
            shipped, converted,
            "src/builtin_schema.json is stale: regenerate it with SKILLGATE_REGENERATE=1 cargo test -p skillgate-policy builtin_schema_json"
        );
    }

    /// What the loader skips for the compiled-in files holds: the built-in schema has the
    /// request shapes, and every compiled-in policy file validates strictly against it.
    #[test]
    fn compiled_in_files_validate_against_the_builtin_schema() {
        let (schema, _) = Schema::from_cedarschema_str(BUILTIN_SCHEMA).unwrap();
        crate::request::check_request_shapes(&schema).unwrap();
        for (name, text) in BASE_POLICIES.iter().chain(BUILTIN_POLICIES) {
            let parsed = PolicySet::from_str(text).unwrap();
            validate_file(&schema, name, text, &parsed).unwrap();
            assert!(known_valid(BUILTIN_SCHEMA, text), "{name}");
        }
    }

    /// Only the compiled-in pairs are trusted: the same policy text against another
    /// schema, or another policy text against the built-in schema, is validated.
    #[test]
    fn other_files_are_validated() {
        let (_, visibility) = BUILTIN_POLICIES[0];
        let other_schema = BUILTIN_SCHEMA.replace("visibility: String", "visibility: Long");
        assert!(!known_valid(&other_schema, visibility));
        let schema = parse_schema("s", &other_schema).unwrap();
        let err =
            parse_policy_file(&schema, &other_schema, "visibility.cedar", visibility).unwrap_err();
        assert_eq!(err.file, "visibility.cedar");
        let edited = format!("{visibility}\n");
        assert!(!known_valid(BUILTIN_SCHEMA, &edited));
        let builtin = parse_schema("s", BUILTIN_SCHEMA).unwrap();
        let bad =
            "@id(\"bad\") permit(principal, action, resource) when { resource.visibility == 1 };";
        assert!(parse_policy_file(&builtin, BUILTIN_SCHEMA, "bad.cedar", bad).is_err());
    }
}
