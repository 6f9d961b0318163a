//! One module per subcommand.
pub(crate) mod emit;
pub(crate) mod run;
