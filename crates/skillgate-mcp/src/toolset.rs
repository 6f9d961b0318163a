//! Tools that are not skills: a host adds its own to a [`Gateway`](crate::Gateway)
//! (`serve`: the `session_*` tools over its sessions). They are listed before the
//! skills, a skill of the same name is hidden behind them, and a call of one of them is
//! answered by its set, for the same caller the skills are served to.
use rmcp::model::{CallToolResult, JsonObject, Tool};
use skillgate::Caller;
use std::future::Future;
use std::pin::Pin;

/// The answer of a [`ToolSet`] call.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = CallToolResult> + Send + 'a>>;

/// A host's own tools.
pub trait ToolSet: Send + Sync {
    /// The tools `caller` is offered.
    fn tools(&self, caller: &Caller) -> Vec<Tool>;

    /// Calls tool `name` with `arguments` for `caller`; `None` when the set has no tool
    /// of that name for `caller`. Dropping the future cancels the call.
    fn call<'a>(
        &'a self,
        caller: Caller,
        name: &'a str,
        arguments: JsonObject,
    ) -> Option<ToolFuture<'a>>;
}
