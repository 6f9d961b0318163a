//! One module per subcommand.
pub(crate) mod monitor;
pub(crate) mod run;
