//! One module per subcommand.
pub(crate) mod emit;
pub(crate) mod policy;
pub(crate) mod monitor;
pub(crate) mod run;
