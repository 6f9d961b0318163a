//! One module per subcommand.
pub(crate) mod rules;
pub(crate) mod run;
pub(crate) mod scan_code;
