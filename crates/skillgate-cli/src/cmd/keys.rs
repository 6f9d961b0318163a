//! `skillgate keys`: the API keys of `skillgate serve` (create, list, revoke).
use crate::UsageError;
use clap::{Args, Subcommand};
use skillgate_server::Settings;
use skillgate_store::Role;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub(crate) struct KeysArgs {
    #[command(subcommand)]
    command: KeysCommand,
    /// The config file (skillgate.toml): its entities check an agent's tenant, its
    /// `[monitor] state_dir` holds the keys.
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// The state directory holding the keys (default: `[monitor] state_dir`, else
    /// `$XDG_STATE_HOME/skillgate` or `~/.local/state/skillgate`).
    #[arg(long, value_name = "DIR", global = true)]
    state_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Create a key; it is printed once, alone on the last line of stdout.
    #[command(group(clap::ArgGroup::new("who").required(true).args(["agent", "builder", "operator"])))]
    Create {
        /// An agent key (runs skills as this agent).
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// A builder key (publishes skills owned by this builder).
        #[arg(long, value_name = "ID")]
        builder: Option<String>,
        /// An operator key (`POST /v1/admin/reload`; runs and publishes nothing).
        #[arg(long, value_name = "NAME")]
        operator: Option<String>,
        /// The tenant (for an agent the entities file declares, it must be its tenant).
        #[arg(long, value_name = "ID")]
        tenant: String,
        /// An agent group the key's caller asserts (repeatable).
        #[arg(long = "group", value_name = "ID")]
        groups: Vec<String>,
    },
    /// List the keys (never their secrets).
    List,
    /// Revoke a key by its id (exit 1 when there was none to revoke).
    Revoke {
        /// The key's id, as `keys list` shows it.
        id: String,
    },
}

pub(crate) fn run(args: KeysArgs) -> Result<ExitCode, UsageError> {
    let settings = Settings {
        config: args.config,
        state_dir: args.state_dir,
    };
    let config = settings.load()?;
    let store = config.store.open(&settings.state_dir(&config)?)?;
    let now = skillgate_server::now_ms();
    match args.command {
        KeysCommand::Create {
            agent,
            builder,
            operator,
            tenant,
            groups,
        } => {
            let (role, principal) = match (agent, builder, operator) {
                (Some(a), None, None) => (Role::Agent, a),
                (None, Some(b), None) => (Role::Builder, b),
                (None, None, Some(o)) => (Role::Operator, o),
                _ => {
                    return Err(UsageError(
                        "give one of --agent, --builder or --operator".into(),
                    ));
                }
            };
            let policy = skillgate_policy::Policy::load(&config.policy)?;
            skillgate_server::keys::check_tenant(Some(&policy), role, &principal, &tenant)
                .map_err(|e| UsageError(format!("{e} (--tenant)")))?;
            let key = skillgate_server::keys::create(
                store.as_ref(),
                role,
                &principal,
                &tenant,
                groups,
                now,
            )?;
            println!(
                "created {} key {} for {} of tenant {}",
                role.as_str(),
                key.record.id,
                principal,
                tenant
            );
            println!("{}", key.secret);
            Ok(ExitCode::SUCCESS)
        }
        KeysCommand::List => {
            for k in store.list_keys()? {
                let state = match k.revoked_ms {
                    Some(ms) => format!("revoked {}", skillgate_monitor::audit::rfc3339(ms)),
                    None => "active".into(),
                };
                println!(
                    "{}  {:<7}  {}  tenant {}  groups [{}]  created {}  {state}",
                    k.id,
                    k.role.as_str(),
                    k.principal,
                    k.tenant,
                    k.groups.join(","),
                    skillgate_monitor::audit::rfc3339(k.created_ms)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        KeysCommand::Revoke { id } => {
            if store.revoke_key(&id, now)? {
                println!("revoked key {id}");
                Ok(ExitCode::SUCCESS)
            } else {
                anstream::eprintln!("no active key {id}");
                Ok(ExitCode::from(1))
            }
        }
    }
}
