//! One module per subcommand.
pub(crate) mod policy;
pub(crate) mod run;
