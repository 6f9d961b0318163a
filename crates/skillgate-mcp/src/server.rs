//! The MCP server: [`SkillServer`], an `rmcp` server handler over a [`Gateway`].
//!
//! - `tools/list`: the skills the caller may see (Cedar's `view`, [`Engine::list_skills`])
//!   that can be MCP tools ([`crate::tools::tool_of`]).
//! - `tools/call`: one run through the pipeline ([`Engine::request`], [`Engine::run`]); the
//!   arguments are checked against the skill's schema first (a failing argument is a tool
//!   error naming its path, and nothing runs). A tool that does not exist and a skill the
//!   caller may not see get the same JSON-RPC error (`-32602`, "unknown tool"), so the
//!   answer does not tell one from the other.
use crate::result::tool_result;
use crate::source::{SkillSource, all_skills};
use crate::tools::tool_of;
use crate::toolset::ToolSet;
use rmcp::ErrorData as McpError;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, Peer};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext, SubscriptionSink};
use skillgate::{Caller, Engine, LimitOverrides, Skill};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// The engine and the skill sources every session of a server shares, and the sessions
/// to tell when the tools change ([`crate::watch`]).
pub struct Gateway {
    /// The pipeline; `Err` when reloading changed policy files failed: then no tool is
    /// listed and no call runs (fail closed) until they load again.
    engine: RwLock<Result<Arc<Engine>, String>>,
    /// Where the engine comes from instead, when a host (`serve`) owns and swaps it.
    provider: Option<EngineProvider>,
    sources: Vec<Arc<dyn SkillSource>>,
    /// The host's own tools, offered before the skills.
    tool_sets: Vec<Arc<dyn ToolSet>>,
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Open `subscriptions/listen` streams (protocol 2026-07-28) that asked for
    /// `tools/list_changed`.
    listeners: Mutex<Vec<SubscriptionSink>>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("engine", &self.engine)
            .field("sources", &self.sources.len())
            .finish_non_exhaustive()
    }
}

/// The engine a host keeps (and swaps on reload), asked for at every request.
pub type EngineProvider = Arc<dyn Fn() -> Arc<Engine> + Send + Sync>;

impl Gateway {
    /// A gateway running `engine`'s pipeline on the skills of `sources`.
    pub fn new(engine: Arc<Engine>, sources: Vec<Arc<dyn SkillSource>>) -> Gateway {
        Gateway {
            engine: RwLock::new(Ok(engine)),
            provider: None,
            sources,
            tool_sets: Vec::new(),
            peers: Mutex::new(Vec::new()),
            listeners: Mutex::new(Vec::new()),
        }
    }

    /// A gateway whose engine belongs to a host that rebuilds it (`serve`: on reload and
    /// on publish): every request runs on the engine `provider` gives then.
    pub fn with_provider(provider: EngineProvider, sources: Vec<Arc<dyn SkillSource>>) -> Gateway {
        let engine = provider();
        Gateway {
            engine: RwLock::new(Ok(engine)),
            provider: Some(provider),
            sources,
            tool_sets: Vec::new(),
            peers: Mutex::new(Vec::new()),
            listeners: Mutex::new(Vec::new()),
        }
    }

    /// The gateway with the host's own tools `set` added (see [`ToolSet`]).
    pub fn with_tool_set(mut self, set: Arc<dyn ToolSet>) -> Gateway {
        self.tool_sets.push(set);
        self
    }

    /// The engine, or why the policy files could not be reloaded.
    pub fn engine(&self) -> Result<Arc<Engine>, String> {
        if let Some(provider) = &self.provider {
            return Ok(provider());
        }
        self.engine
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Builds the pipeline again from the current engine's configuration (its policy
    /// files changed). On failure the gateway serves nothing until a reload succeeds. A
    /// gateway [`with_provider`](Self::with_provider) builds nothing: its host does.
    pub fn reload_engine(&self, config: skillgate::Config, disabled: &[skillgate::LayerName]) {
        if self.provider.is_some() {
            // The host owns the engine and rebuilds it (serve: on reload and publish).
            return;
        }
        let next = Engine::new(config, disabled)
            .map(Arc::new)
            .map_err(|e| e.to_string());
        if let Err(e) = &next {
            tracing::error!("the policy files changed and do not load; serving no tool: {e}");
        }
        *self.engine.write().unwrap_or_else(|p| p.into_inner()) = next;
    }

    /// The skills of every source.
    pub fn skills(&self) -> Vec<Arc<Skill>> {
        all_skills(&self.sources)
    }

    /// The skills `caller` may see (the policy's `view`; every skill without a policy
    /// layer), in the sources' order. None while the policy files do not load.
    pub fn visible(&self, caller: &Caller) -> Vec<Arc<Skill>> {
        let Ok(engine) = self.engine() else {
            return Vec::new();
        };
        let skills = self.skills();
        let plain: Vec<Skill> = skills.iter().map(|s| Skill::clone(s)).collect();
        match engine.list_skills(caller, &plain) {
            None => skills,
            Some(listed) => skills
                .into_iter()
                .zip(listed)
                .filter(|(_, l)| l.decision.is_allowed())
                .map(|(s, _)| s)
                .collect(),
        }
    }

    /// The skill named `name` if `caller` may see it and it can be a tool.
    fn tool_skill(&self, caller: &Caller, name: &str) -> Option<Arc<Skill>> {
        self.visible(caller)
            .into_iter()
            .find(|s| s.name == name && tool_of(s).is_some())
    }

    /// Remembers a session, to tell it when the tools change.
    fn add_peer(&self, peer: Peer<RoleServer>) {
        self.peers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(peer);
    }

    /// Remembers a `subscriptions/listen` stream, to tell it when the tools change.
    fn add_listener(&self, sink: SubscriptionSink) {
        self.listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(sink);
    }

    /// Sends `notifications/tools/list_changed` to every session and every open
    /// `subscriptions/listen` stream; forgets the closed ones.
    pub async fn notify_tools_changed(&self) {
        let listeners =
            std::mem::take(&mut *self.listeners.lock().unwrap_or_else(|p| p.into_inner()));
        let mut open = Vec::with_capacity(listeners.len());
        for sink in listeners {
            if sink.notify_tool_list_changed().await.is_ok() {
                open.push(sink);
            }
        }
        self.listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(open);
        let peers = {
            let mut peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
            peers.retain(|p| !p.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!("a session was not told its tools changed: {e}");
            }
        }
    }
}

/// Who calls: one agent for the whole server (stdio), or the caller the HTTP request
/// carries.
#[derive(Debug, Clone)]
pub(crate) enum CallerFrom {
    /// The agent given on the command line.
    Fixed(Caller),
    /// The [`Caller`] in the HTTP request's extensions, which the authentication in
    /// front of the service put there; a request without one is refused.
    HttpRequest,
}

/// An MCP server handler: the skills of a [`Gateway`] as tools, for one caller.
#[derive(Debug, Clone)]
pub struct SkillServer {
    gateway: Arc<Gateway>,
    caller: CallerFrom,
}

impl SkillServer {
    /// A server for `caller` (stdio: the agent is fixed for the process).
    pub fn for_caller(gateway: Arc<Gateway>, caller: Caller) -> SkillServer {
        SkillServer {
            gateway,
            caller: CallerFrom::Fixed(caller),
        }
    }

    pub(crate) fn from_http(gateway: Arc<Gateway>) -> SkillServer {
        SkillServer {
            gateway,
            caller: CallerFrom::HttpRequest,
        }
    }

    /// The caller of a request; fails closed when an HTTP request carries none.
    fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<Caller, McpError> {
        match &self.caller {
            CallerFrom::Fixed(caller) => Ok(caller.clone()),
            CallerFrom::HttpRequest => ctx
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Caller>())
                .cloned()
                .ok_or_else(|| McpError::invalid_request("the request is not authenticated", None)),
        }
    }
}

/// How often a long run reports progress.
pub const PROGRESS_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// When the client asked for progress (a `progressToken`), sends a notification before
/// the run starts (so even a short run reports one) and then every
/// [`PROGRESS_INTERVAL`]: the seconds elapsed (no total: the run's limit is decided by
/// the isolation layer, and a run may end sooner). The notifications stop when the
/// returned task is dropped.
async fn report_progress(ctx: &RequestContext<RoleServer>, skill: &str) -> Option<AbortOnDrop> {
    let token = ctx.meta.get_progress_token()?;
    let skill = skill.to_owned();
    let note = move |elapsed: f64| {
        ProgressNotificationParam::new(token.clone(), elapsed)
            .with_message(format!("running `{skill}`: {elapsed:.0} s"))
    };
    let peer = ctx.peer.clone();
    peer.notify_progress(note(0.0)).await.ok()?;
    let started = Instant::now();
    let task = tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(
            tokio::time::Instant::now() + PROGRESS_INTERVAL,
            PROGRESS_INTERVAL,
        );
        loop {
            tick.tick().await;
            let elapsed = started.elapsed().as_secs_f64().floor();
            if peer.notify_progress(note(elapsed)).await.is_err() {
                return;
            }
        }
    });
    Some(AbortOnDrop(task))
}

/// Aborts its task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The answer to a call of a tool that does not exist or that the caller may not see.
pub fn unknown_tool(name: &str) -> McpError {
    McpError::invalid_params(format!("unknown tool `{name}`"), None)
}

impl rmcp::ServerHandler for SkillServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("skillgate", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Each tool is a skill that runs in skillgate's sandbox, behind its policy, \
             code and output checks. A tool error says what happened and whether to retry.",
        )
    }

    /// rmcp hands over a request it could not read as one it knows: a method of ours
    /// whose params are wrong is `-32602` (invalid params), any other `-32601`.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        const OURS: [&str; 4] = ["initialize", "ping", "tools/list", "tools/call"];
        if OURS.contains(&request.method.as_str()) {
            Err(McpError::invalid_params(
                format!("invalid params for `{}`", request.method),
                None,
            ))
        } else {
            Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: `{}`", request.method),
                None,
            ))
        }
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        self.gateway.add_peer(ctx.peer);
    }

    /// Protocol 2026-07-28 clients have no session to notify: they open a
    /// `subscriptions/listen` stream, and of its categories this server delivers
    /// `tools/list_changed`.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        if context.accepted().tools_list_changed == Some(true) {
            self.gateway.add_listener(context.sink().clone());
        }
        context.cancelled().await;
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = self.caller(&ctx)?;
        let mut tools: Vec<rmcp::model::Tool> = self
            .gateway
            .tool_sets
            .iter()
            .flat_map(|set| set.tools(&caller))
            .collect();
        let taken: std::collections::HashSet<String> =
            tools.iter().map(|t| t.name.to_string()).collect();
        tools.extend(
            self.gateway
                .visible(&caller)
                .iter()
                .filter(|s| !taken.contains(&s.name))
                .filter_map(|s| tool_of(s)),
        );
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = self.caller(&ctx)?;
        let arguments = request.arguments.unwrap_or_default();
        for set in &self.gateway.tool_sets {
            if let Some(call) = set.call(caller.clone(), &request.name, arguments.clone()) {
                // A `notifications/cancelled` for this request drops the call.
                return tokio::select! {
                    result = call => Ok(result.into()),
                    () = ctx.ct.cancelled() => {
                        Err(McpError::invalid_request("the request was cancelled", None))
                    }
                };
            }
        }
        let Some(skill) = self.gateway.tool_skill(&caller, &request.name) else {
            return Err(unknown_tool(&request.name));
        };
        let input = serde_json::Value::Object(arguments);
        if let Some(schema) = &skill.input_schema
            && let Err((status, findings)) = skillgate::check_input(schema, &input)
        {
            let text = crate::result::arguments_refused(&skill.name, status, &findings);
            return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
        }
        let Ok(engine) = self.gateway.engine() else {
            return Err(unknown_tool(&request.name));
        };
        let req = engine.request(caller, skill.clone(), input, LimitOverrides::default());
        let run_id = req.id.to_string();
        let progress = report_progress(&ctx, &skill.name).await;
        let started = Instant::now();
        let run = engine.run(req);
        // A `notifications/cancelled` for this request cancels `ctx.ct`: the run's future
        // is dropped, which kills its sandbox.
        let outcome = tokio::select! {
            outcome = run => outcome,
            () = ctx.ct.cancelled() => {
                return Err(McpError::invalid_request("the request was cancelled", None));
            }
        };
        drop(progress);
        Ok(match outcome {
            Ok(outcome) => tool_result(&skill.name, &run_id, &outcome, started.elapsed()),
            Err(e) => {
                tracing::error!(run = %run_id, "the run of `{}` failed: {e}", skill.name);
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "Failed: skillgate could not run `{}` (an internal error). Do not retry \
                     now; tell the user.",
                    skill.name
                ))])
            }
        }
        .into())
    }
}
