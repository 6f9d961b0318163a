//! `skillgate policy`: validate, check, test and list with the Cedar policy gate.
//!
//! Exit codes: `check` 0 allow, 1 deny; `test` 0 when every case passes, 1 otherwise;
//! `validate` and `list-skills` 0; every command 2 for a usage, config or load error.
use crate::UsageError;
use crate::render::Format;
use clap::{Args, Subcommand};
use skillgate::{Caller, Config, ExecRequest, Skill, skill_dir};
use skillgate_policy::{Action, Decision, Policy, PolicySources, RunFacts, testfile};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub(crate) struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Debug, Subcommand)]
enum PolicyCommand {
    /// Load and strictly validate the schema, policies, entities, grants and publish policies.
    Validate(SourceArgs),
    /// May an agent execute a skill? Prints {"decision", "reasons", "errors"}; exit 0 allow, 1 deny.
    Check(CheckArgs),
    /// May a builder publish a skill folder to the registry (`skillgate serve`)? Decided by
    /// the publish policies on the pre-scan's verdict, as `POST /v1/skills`; exit 0 allow, 1 deny.
    CheckPublish(CheckPublishArgs),
    /// Run a policy test file (requests with expected decisions); exit 1 if a case fails.
    Test(TestArgs),
    /// The skills (folders under --skills) an agent may see (`view`, as `check --action view` decides).
    ListSkills(ListArgs),
    /// Print a skill folder's digest: what its catalogue record's `digest` must be.
    Digest(DigestArgs),
}

/// The policy layer's files, overriding the config's `[policy]` section (also flattened
/// into `skillgate run`).
#[derive(Debug, Args)]
pub(crate) struct PolicyFileArgs {
    /// A folder of *.cedar files (and optionally a *.cedarschema) instead of the built-in policies.
    #[arg(long, value_name = "DIR")]
    policies: Option<PathBuf>,
    /// The Cedar entities JSON file (tenants, agents, agent groups, builders).
    #[arg(long, value_name = "FILE")]
    entities: Option<PathBuf>,
    /// The grants file (restricted-skill grants).
    #[arg(long, value_name = "FILE")]
    grants: Option<PathBuf>,
    /// The catalogue file: each skill's tenant, owner and visibility, by digest.
    #[arg(long, value_name = "FILE")]
    catalogue: Option<PathBuf>,
}

impl PolicyFileArgs {
    /// Puts the files given on the command line in place of the config's.
    pub(crate) fn apply(&self, sources: &mut PolicySources) {
        if let Some(p) = &self.policies {
            sources.policies = Some(p.clone());
        }
        if let Some(p) = &self.entities {
            sources.entities = Some(p.clone());
        }
        if let Some(p) = &self.grants {
            sources.grants = Some(p.clone());
        }
        if let Some(p) = &self.catalogue {
            sources.catalogue = Some(p.clone());
        }
    }
}

/// Where the policies, entities and grants come from: the config's `[policy]` section,
/// overridden by the flags.
#[derive(Debug, Args)]
struct SourceArgs {
    #[command(flatten)]
    files: PolicyFileArgs,
    /// The config file whose [policy] section to start from.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

impl SourceArgs {
    fn sources(&self) -> Result<(PolicySources, Config), UsageError> {
        let config = Config::load_or_default(self.config.as_deref())?;
        let mut sources = config.policy.clone();
        self.files.apply(&mut sources);
        Ok((sources, config))
    }

    /// Loads the gate; warns on stderr for every base policy turned off.
    fn load(&self) -> Result<(Policy, Config), UsageError> {
        let (sources, config) = self.sources()?;
        let policy = Policy::load(&sources)?;
        for finding in skillgate_policy::lifted_findings(&policy) {
            anstream::eprintln!("warning: {}", finding.message);
        }
        Ok((policy, config))
    }

    /// As [`load`](Self::load), seeing the quarantines of the monitor's state directory
    /// (`state_dir`, else the config's, else the default), as `skillgate run` does.
    fn load_with_quarantine(
        &self,
        state_dir: Option<&Path>,
    ) -> Result<(Policy, Config), UsageError> {
        let (policy, config) = self.load()?;
        let quarantine: std::sync::Arc<dyn skillgate::QuarantineSource> = match &config.store.url {
            // `[store] url`: the quarantines every replica records.
            Some(url) => std::sync::Arc::new(skillgate_monitor::PgState::open(url)?),
            None => std::sync::Arc::new(skillgate_monitor::StateQuarantine::from_config(
                &config.monitor,
                state_dir,
            )?),
        };
        Ok((policy.with_quarantine(quarantine), config))
    }
}

/// The monitor state whose quarantines a decision sees, as `skillgate run` sees them.
#[derive(Debug, Args)]
struct StateDirArg {
    /// The monitor's state directory, for its quarantines (default `[monitor] state_dir`,
    /// else `$XDG_STATE_HOME/skillgate` or `~/.local/state/skillgate`, as `run`).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The agent's id.
    #[arg(long, value_name = "ID")]
    agent: String,
    /// The agent's tenant, only for an agent the entities file does not declare (the file
    /// decides a declared agent's tenant; a --tenant that disagrees is refused).
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
    /// The skill folder.
    #[arg(long, value_name = "DIR")]
    skill: PathBuf,
    /// The action: execute or view.
    #[arg(long, default_value = "execute", value_parser = parse_action)]
    action: Action,
    #[command(flatten)]
    sources: SourceArgs,
    #[command(flatten)]
    state: StateDirArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Args)]
struct CheckPublishArgs {
    /// The builder's id (its tenant comes from the entities file).
    #[arg(long, value_name = "ID")]
    builder: String,
    /// The tenant to publish in, only for a builder the entities file does not declare
    /// (which the publish policies deny anyway; a --tenant that disagrees is refused).
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
    /// The skill folder.
    #[arg(long, value_name = "DIR")]
    skill: PathBuf,
    /// A folder of publish policies instead of the config's `[policy] publish_policies`.
    #[arg(long, value_name = "DIR")]
    publish_policies: Option<PathBuf>,
    #[command(flatten)]
    sources: SourceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Args)]
struct TestArgs {
    /// The test file (see `skillgate_policy::testfile` for its format).
    file: PathBuf,
    #[command(flatten)]
    sources: SourceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Args)]
struct ListArgs {
    /// The agent's id.
    #[arg(long, value_name = "ID")]
    agent: String,
    /// The agent's tenant, only for an agent the entities file does not declare.
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
    /// A folder of skill folders (or one skill folder); repeatable.
    #[arg(long, value_name = "DIR", default_value = ".")]
    skills: Vec<PathBuf>,
    /// Also list the skills the agent may not see, with the decision.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    sources: SourceArgs,
    #[command(flatten)]
    state: StateDirArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Args)]
struct DigestArgs {
    /// The skill folder.
    dir: PathBuf,
    /// `text`: the digest alone; `json`: a catalogue record to fill in, from what the
    /// folder's SKILL.md says.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

fn parse_action(s: &str) -> Result<Action, String> {
    s.parse()
}

pub(crate) fn run(args: PolicyArgs) -> Result<ExitCode, UsageError> {
    match args.command {
        PolicyCommand::Validate(a) => validate(a),
        PolicyCommand::Check(a) => check(a),
        PolicyCommand::CheckPublish(a) => check_publish(a),
        PolicyCommand::Test(a) => test(a),
        PolicyCommand::ListSkills(a) => list(a),
        PolicyCommand::Digest(a) => digest(a),
    }
}

fn validate(args: SourceArgs) -> Result<ExitCode, UsageError> {
    let (policy, _) = args.load()?;
    let ids = policy.policy_ids();
    println!(
        "ok: {} policies and grants, {} entities, {} catalogue records",
        ids.len(),
        policy.entities().len(),
        policy.catalogue().len()
    );
    for (id, file) in ids {
        println!("  {id}  ({file})");
    }
    let publish = policy.publish_gate()?.policy_ids();
    println!("publish policies: {}", publish.len());
    for (id, file) in publish {
        println!("  {id}  ({file})");
    }
    Ok(ExitCode::SUCCESS)
}

/// The calling agent's tenant ([`skillgate::engine::tenant_of`]), as a usage error when
/// --tenant contradicts the entities file.
pub(crate) fn caller_tenant(
    policy: Option<&Policy>,
    agent: &str,
    claimed: Option<&str>,
) -> Result<String, UsageError> {
    skillgate::engine::tenant_of(policy, agent, claimed)
        .map_err(|e| UsageError(format!("{e} (--tenant)")))
}

fn caller(policy: &Policy, agent: &str, tenant: &Option<String>) -> Result<Caller, UsageError> {
    Ok(Caller::new(
        agent,
        caller_tenant(Some(policy), agent, tenant.as_deref())?,
    ))
}

fn print_decision(d: &Decision, format: Format) -> Result<(), UsageError> {
    match format {
        Format::Json => println!("{}", serde_json::to_string(d)?),
        Format::Text => {
            println!("{}", d.decision);
            for r in &d.reasons {
                println!("  reason: {r}");
            }
            for e in &d.errors {
                println!("  error: {e}");
            }
        }
    }
    Ok(())
}

fn check(args: CheckArgs) -> Result<ExitCode, UsageError> {
    let (policy, config) = args
        .sources
        .load_with_quarantine(args.state.state_dir.as_deref())?;
    let skill = skill_dir::load(&args.skill)?;
    let caller = caller(&policy, &args.agent, &args.tenant)?;
    // The limits `run` would decide on: the skill's requests clamped to the maxima.
    let req = ExecRequest::new(caller, skill, serde_json::Value::Null);
    let (limits, _) = skillgate::isolation::limits_for(&config.limits, &config.isolation, &req);
    let d = policy.authorize(
        &req.caller,
        &req.skill,
        args.action,
        &RunFacts::for_limits(&req.skill, &limits),
    );
    print_decision(&d, args.format)?;
    Ok(if d.is_allowed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn check_publish(args: CheckPublishArgs) -> Result<ExitCode, UsageError> {
    let (mut sources, config) = args.sources.sources()?;
    if let Some(dir) = &args.publish_policies {
        sources.publish_policies = Some(dir.clone());
    }
    let policy = Policy::load(&sources)?;
    let tenant = match (policy.builder_tenant(&args.builder), args.tenant) {
        (Some(known), Some(claimed)) if known != claimed => {
            return Err(UsageError(format!(
                "builder `{}` belongs to tenant `{known}` in the entities file, not to `{claimed}` (--tenant)",
                args.builder
            )));
        }
        (Some(known), _) => known,
        (None, claimed) => claimed.unwrap_or_default(),
    };
    let skill = skill_dir::load(&args.skill)?;
    let scanner = skillgate::assemble::prescanner(&config.prescan)?;
    let verdict = skillgate_server::registry::publish_verdict(scanner.scan_skill(&skill).verdict);
    let d = skillgate_server::registry::publish_decision(
        Some(&policy),
        &args.builder,
        &tenant,
        &skill,
        &[],
        verdict,
    );
    print_decision(&d, args.format)?;
    Ok(if d.is_allowed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn test(args: TestArgs) -> Result<ExitCode, UsageError> {
    let (policy, _) = args.sources.load()?;
    let report = testfile::run_file(&policy, &args.file)?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string(&report)?),
        Format::Text => {
            for c in &report.cases {
                println!("{} {}", if c.passed { "pass" } else { "FAIL" }, c.name);
                for p in &c.problems {
                    println!("     {p}");
                }
            }
            println!("{} cases, {} failed", report.cases.len(), report.failures());
        }
    }
    Ok(if report.failures() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn list(args: ListArgs) -> Result<ExitCode, UsageError> {
    let (policy, config) = args
        .sources
        .load_with_quarantine(args.state.state_dir.as_deref())?;
    let mut skills: Vec<Skill> = Vec::new();
    for dir in &args.skills {
        for path in skill_dir::discover(dir)? {
            // One broken folder hides only itself.
            match skill_dir::load(&path) {
                Ok(skill) => skills.push(skill),
                Err(e) => anstream::eprintln!("warning: skipped {}: {e}", path.display()),
            }
        }
    }
    let caller = caller(&policy, &args.agent, &args.tenant)?;
    let listed: Vec<_> = policy
        .list_skills(&caller, &skills, &config.limits)
        .into_iter()
        .filter(|l| args.all || l.decision.is_allowed())
        .collect();
    match args.format {
        Format::Json => println!("{}", serde_json::to_string(&listed)?),
        Format::Text => {
            for l in &listed {
                println!(
                    "{}\t{}\t{}\t{}",
                    l.decision.decision,
                    l.name,
                    l.tenant.as_deref().unwrap_or("-"),
                    l.visibility
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn digest(args: DigestArgs) -> Result<ExitCode, UsageError> {
    let skill = skill_dir::load(&args.dir)?;
    match args.format {
        Format::Text => println!("{}", skill.digest),
        Format::Json => {
            let record = skillgate_policy::Record {
                name: skill.name.clone(),
                digest: skill.digest.clone(),
                tenant: skill.tenant.clone().unwrap_or_default(),
                owner: skill.owner.clone(),
                visibility: skill.visibility,
            };
            println!("{}", serde_json::to_string(&record)?);
        }
    }
    Ok(ExitCode::SUCCESS)
}
