//! One module per subcommand.
pub(crate) mod emit;
pub(crate) mod executor;
pub(crate) mod keys;
pub(crate) mod mcp;
pub(crate) mod monitor;
pub(crate) mod policy;
pub(crate) mod rules;
pub(crate) mod run;
pub(crate) mod runtime;
pub(crate) mod scan_code;
pub(crate) mod scan_output;
pub(crate) mod serve;
pub(crate) mod session;
pub(crate) mod skill;
