//! What the server shares between requests: the engine (swapped whole on reload or
//! publish, so runs in flight keep the one they started with), the store, and the
//! registry's loaded skills.
use arc_swap::ArcSwap;
use skillgate::{Config, Engine};
use skillgate_core::Skill;
use skillgate_store::{PublishVerdict, SkillVersion, Store};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Where the server's configuration comes from.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The config file (`None`: the defaults).
    pub config: Option<PathBuf>,
    /// The state directory (`--state-dir`; else `[monitor] state_dir`, else the default).
    pub state_dir: Option<PathBuf>,
}

impl Settings {
    /// The configuration as the file says now, with the state directory applied.
    pub fn load(&self) -> Result<Config, String> {
        let mut config =
            Config::load_or_default(self.config.as_deref()).map_err(|e| e.to_string())?;
        if let Some(dir) = &self.state_dir {
            config.monitor.state_dir = Some(dir.clone());
        }
        Ok(config)
    }

    /// The state directory the configuration resolves to.
    pub fn state_dir(&self, config: &Config) -> Result<PathBuf, String> {
        skillgate_monitor::resolve_state_dir(&config.monitor, self.state_dir.as_deref())
            .map_err(|e| e.to_string())
    }
}

/// The shared state of a running server.
pub struct ServerState {
    engine: Arc<ArcSwap<Engine>>,
    settings: Settings,
    store: Arc<dyn Store>,
    /// The monitor's store, for the records the server itself writes (refused credentials).
    monitor: Arc<dyn skillgate_monitor::MonitorState>,
    /// Skills of the registry already loaded, by version.
    skills: Mutex<HashMap<String, Arc<Skill>>>,
    /// One engine rebuild at a time (reload, publish).
    rebuild: tokio::sync::Mutex<()>,
    draining: AtomicBool,
    /// Protection settings.
    pub limits: crate::protect::Limits,
    /// The concurrency limit of runs.
    pub admission: crate::admission::Admission,
    /// The per-caller rate limit.
    pub rate: crate::ratelimit::RateLimiter,
    /// The agents' sessions (`/v1/sessions`, the MCP `session_*` tools).
    sessions: Arc<crate::sessions::NativeSessions>,
    /// Verifies JWTs sent as credentials; `None`: API keys only. Swapped on reload.
    jwt: arc_swap::ArcSwapOption<crate::jwt::JwtVerifier>,
    /// HTTPS: where the certificate and keys are, and the configuration in use (swapped on
    /// reload); `None`: plain HTTP.
    tls: Option<(crate::tls::TlsFiles, crate::tls::SharedConfig)>,
}

impl std::fmt::Debug for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerState")
            .field("settings", &self.settings)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

/// The file the registry's catalogue is written to for the policy gate, in the state dir.
pub const REGISTRY_CATALOGUE: &str = "registry-catalogue.json";

/// Whether `engine`'s policy gate records `digest` in its catalogue (a published skill).
pub fn knows(engine: &Engine, digest: &str) -> bool {
    engine
        .policy()
        .is_some_and(|p| p.catalogue().get(digest).is_some())
}

/// The catalogue records of the registry's runnable versions (blocked ones are not
/// records: they never run), one per skill digest.
pub fn registry_records(versions: &[SkillVersion]) -> Vec<skillgate_policy::Record> {
    let mut seen = std::collections::HashSet::new();
    versions
        .iter()
        .filter(|v| v.verdict != PublishVerdict::Block)
        .filter(|v| seen.insert(v.digest.clone()))
        .filter_map(|v| {
            Some(skillgate_policy::Record {
                name: v.name.clone(),
                digest: v.digest.clone(),
                tenant: v.tenant.clone(),
                owner: Some(v.owner.clone()),
                visibility: v.visibility.parse().ok()?,
            })
        })
        .collect()
}

/// Builds an engine from `settings`, with the registry's versions as catalogue records
/// ([`with_registry_catalogue`]).
fn build_engine(settings: &Settings, store: &dyn Store) -> Result<Engine, String> {
    let config = settings.load()?;
    let dir = settings.state_dir(&config)?;
    let config = with_registry_catalogue(config, &dir, store)?;
    Engine::new(config, &[]).map_err(|e| e.to_string())
}

/// `config` with the registry's runnable versions as catalogue records beside the
/// operator's catalogue file: both are written to one catalogue file in the state
/// directory `dir` ([`REGISTRY_CATALOGUE`]), which the policy gate then loads (and checks)
/// like any catalogue (written even when the registry is empty, so a process that
/// reloads it sees what another one publishes later). For every front end that runs
/// registry skills (`serve`, `skillgate mcp`).
pub fn with_registry_catalogue(
    mut config: Config,
    dir: &std::path::Path,
    store: &dyn Store,
) -> Result<Config, String> {
    let versions = store.all_versions().map_err(|e| e.to_string())?;
    let mut records = registry_records(&versions);
    if let Some(path) = &config.policy.catalogue {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the catalogue {}: {e}", path.display()))?;
        let operator = skillgate_policy::Catalogue::from_json(&path.display().to_string(), &text)
            .map_err(|e| e.to_string())?;
        let registry: std::collections::HashSet<String> =
            records.iter().map(|r| r.digest.clone()).collect();
        records.extend(
            operator
                .records()
                .filter(|r| !registry.contains(&r.digest))
                .cloned(),
        );
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(REGISTRY_CATALOGUE);
    // A temporary name of this process's own: several processes (replicas, an MCP server)
    // may write the same catalogue at once.
    let tmp = dir.join(format!("{REGISTRY_CATALOGUE}.{}.tmp", std::process::id()));
    let json = serde_json::to_vec_pretty(&records).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, json)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    config.policy.catalogue = Some(path);
    Ok(config)
}

impl ServerState {
    /// Opens the store of the state directory and builds the engine.
    pub fn open(settings: Settings) -> Result<ServerState, String> {
        let config = settings.load()?;
        let dir = settings.state_dir(&config)?;
        // `[store] url`: the keys and the registry every replica naming it shares.
        let store: Arc<dyn Store> = config.store.open(&dir).map_err(|e| e.to_string())?.into();
        ServerState::with_store(settings, store)
    }

    /// Builds the engine over `store`.
    pub fn with_store(settings: Settings, store: Arc<dyn Store>) -> Result<ServerState, String> {
        let engine = build_engine(&settings, store.as_ref())?;
        let dir = settings.state_dir(engine.config())?;
        let monitor: Arc<dyn skillgate_monitor::MonitorState> = match &engine.config().store.url {
            Some(url) => {
                Arc::new(skillgate_monitor::PgState::open(url).map_err(|e| e.to_string())?)
            }
            None => Arc::new(
                skillgate_monitor::Store::open(&dir, engine.config().monitor.durability)
                    .map_err(|e| e.to_string())?,
            ),
        };
        let log = skillgate_session::open_store(&engine.config().store, &dir)
            .map_err(|e| format!("cannot open the session store: {e}"))?;
        let session_settings = skillgate_session::Settings::from_config(engine.config())
            .map_err(|e| format!("invalid config: {e}"))?;
        let engine = Arc::new(ArcSwap::from_pointee(engine));
        let sessions = crate::sessions::native(log, &engine, session_settings);
        Ok(ServerState {
            engine,
            settings,
            store,
            monitor,
            skills: Mutex::default(),
            rebuild: tokio::sync::Mutex::new(()),
            draining: AtomicBool::new(false),
            limits: crate::protect::Limits::default(),
            admission: crate::admission::Admission::new(
                crate::admission::default_concurrent(),
                crate::admission::DEFAULT_QUEUE,
                crate::admission::DEFAULT_MAX_WAIT,
                crate::admission::QueueOrder::default(),
            ),
            rate: crate::ratelimit::RateLimiter::new(crate::ratelimit::DEFAULT_PER_MINUTE),
            sessions,
            jwt: arc_swap::ArcSwapOption::empty(),
            tls: None,
        })
    }

    /// Accepts JWTs that `verifier` verifies as credentials, beside the API keys.
    pub fn with_jwt(self, verifier: crate::jwt::JwtVerifier) -> ServerState {
        self.jwt.store(Some(Arc::new(verifier)));
        self
    }

    /// Serves HTTPS with the certificate and key of `files` (and client certificates,
    /// with a client CA); the files are read again on reload. Errors name the file.
    pub fn with_tls(mut self, files: crate::tls::TlsFiles) -> Result<ServerState, String> {
        let config = files.server_config()?;
        self.tls = Some((files, Arc::new(ArcSwap::new(config))));
        Ok(self)
    }

    /// The TLS configuration in use, when the server serves HTTPS.
    pub fn tls_config(&self) -> Option<crate::tls::SharedConfig> {
        self.tls.as_ref().map(|(_, c)| c.clone())
    }

    /// The JWT verifier, when the server accepts tokens.
    pub fn jwt(&self) -> Option<Arc<crate::jwt::JwtVerifier>> {
        self.jwt.load_full()
    }

    /// Sets how sessions behave (the lock wait, the upload and download caps, ...);
    /// [`Self::sessions`]`().settings()` are the ones the configuration gave.
    pub fn with_session_settings(mut self, settings: skillgate_session::Settings) -> ServerState {
        let log = self.sessions.store().clone();
        self.sessions = crate::sessions::native(log, &self.engine, settings);
        self
    }

    /// The agents' sessions.
    pub fn sessions(&self) -> &Arc<crate::sessions::NativeSessions> {
        &self.sessions
    }

    /// Sets the admission limits: at most `concurrent` runs at once and `queue` more
    /// waiting, each for at most `max_wait`, a freed slot going to the waiter `order`
    /// says; beyond that, 429.
    pub fn with_admission(
        mut self,
        concurrent: usize,
        queue: usize,
        max_wait: std::time::Duration,
        order: crate::admission::QueueOrder,
    ) -> ServerState {
        self.admission = crate::admission::Admission::new(concurrent, queue, max_wait, order);
        self
    }

    /// Sets how fast shed answers go out (see [`crate::admission::ShedPace`]); call it
    /// after [`with_admission`](Self::with_admission).
    pub fn with_shed_pace(mut self, pace: crate::admission::ShedPace) -> ServerState {
        self.admission = self.admission.with_shed_pace(pace);
        self
    }

    /// Sets the per-caller rate limit: `per_minute` requests a minute per key.
    pub fn with_rate_limit(mut self, per_minute: u32) -> ServerState {
        self.rate = crate::ratelimit::RateLimiter::new(per_minute);
        self
    }

    /// The engine now; a request keeps the one it got to its end.
    pub fn engine(&self) -> Arc<Engine> {
        self.engine.load_full()
    }

    /// The key and registry store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The monitor's state (where refused credentials are audited).
    pub fn monitor(&self) -> &Arc<dyn skillgate_monitor::MonitorState> {
        &self.monitor
    }

    /// What SIGHUP and `POST /v1/admin/reload` do: the JWT keys and the TLS certificate
    /// read again (an identity provider's rotation, a renewed certificate) and the engine
    /// rebuilt; any of them failing keeps all of them as they were.
    pub async fn reload(self: &Arc<Self>) -> Result<Vec<String>, String> {
        let jwt = match self.jwt() {
            Some(v) => Some(Arc::new(
                v.reload().map_err(|e| format!("the JWT keys: {e}"))?,
            )),
            None => None,
        };
        let tls = match &self.tls {
            Some((files, _)) => Some(files.server_config()?),
            None => None,
        };
        let notices = self.rebuild().await?;
        if jwt.is_some() {
            self.jwt.store(jwt);
        }
        if let (Some(config), Some((_, shared))) = (tls, &self.tls) {
            shared.store(config);
        }
        Ok(notices)
    }

    /// Rebuilds the engine from the config file and the registry, and swaps it in. A
    /// configuration that does not load is refused, naming the problem, and the engine in
    /// use stays.
    pub async fn rebuild(self: &Arc<Self>) -> Result<Vec<String>, String> {
        let _one = self.rebuild.lock().await;
        let me = self.clone();
        let engine =
            tokio::task::spawn_blocking(move || build_engine(&me.settings, me.store.as_ref()))
                .await
                .map_err(|e| format!("the rebuild failed: {e}"))??;
        let notices = engine.notices().to_vec();
        self.engine.store(Arc::new(engine));
        Ok(notices)
    }

    /// The engine in use, rebuilt first when its policy gate does not know every one of
    /// `digests` as a catalogue record: with `[store] url`, another replica may have
    /// published them (the registry is shared, each process's engine is its own). A
    /// registry skill the gate does not know as published must never be judged as the
    /// caller's own code: callers refuse a digest still unknown after the rebuild.
    pub async fn engine_knowing(self: &Arc<Self>, digests: &[String]) -> Arc<Engine> {
        let engine = self.engine();
        if digests.iter().all(|d| knows(&engine, d)) {
            return engine;
        }
        if let Err(e) = self.rebuild().await {
            tracing::error!("the registry changed and the engine cannot be rebuilt: {e}");
        }
        self.engine()
    }

    /// The digests of the registry's runnable versions (every tenant's).
    pub fn registry_digests(&self) -> Result<Vec<String>, skillgate_store::StoreError> {
        Ok(crate::registry::latest_versions(self.store.as_ref(), None)?
            .into_iter()
            .map(|v| v.digest)
            .collect())
    }

    /// A loaded registry skill, by version.
    pub fn cached_skill(&self, version: &str) -> Option<Arc<Skill>> {
        self.skills
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(version)
            .cloned()
    }

    /// Keeps a loaded registry skill.
    pub fn cache_skill(&self, version: &str, skill: Arc<Skill>) {
        self.skills
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(version.to_string(), skill);
    }

    /// The server stops taking work (shutdown began).
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Whether shutdown began.
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }
}
