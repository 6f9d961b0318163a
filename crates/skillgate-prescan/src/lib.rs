//! Layer 2 of skillgate: the AST pre-scan of Python and JavaScript skills.
//!
//! The code is parsed with tree-sitter (bounded in size, nesting depth and time), a
//! semantic pass turns it into [facts](facts) (`import:subprocess`, `call:os.system`,
//! `ref:eval`, `path:/proc/self/environ`, ...) while seeing through aliases, constant
//! string folding (concatenation, f-strings and templates, `%`/`.format`, `join`,
//! slicing, `chr`/`String.fromCharCode`, base64/hex/rot13 decoded in place), NFKC
//! identifiers and JavaScript identifier escapes; then the [rule packs](rules) (data, with
//! their own examples) match facts and tree-sitter queries. The [`Verdict`] is `block`
//! when a finding reaches the threshold, `warn` for lower findings, `allow` otherwise.
//! Code that cannot be scanned is blocked.
//!
//! A session's shell step is scanned too, with tree-sitter-bash: every command it runs
//! must be a literal word on the shell packs' allow-list (see [`shell`]).
//!
//! ```
//! use skillgate_prescan::{PreScanner, Verdict};
//! use skillgate_core::Language;
//! let scanner = PreScanner::new().unwrap();
//! let code = b"m = __import__('o' + 's')\ngetattr(m, 'sys' 'tem')('id')  # nosec\n";
//! let report = scanner.scan(code, Language::Python);
//! assert_eq!(report.verdict, Verdict::Block);
//! ```
//!
//! It is a filter in front of the sandbox, not a replacement for it.

mod cache;
mod decode;
pub mod facts;
pub mod fuzz;
mod grammar;
mod javascript;
mod layer;
mod prefilter;
mod python;
pub mod rules;
pub mod ruletest;
pub mod sarif;
mod scanner;
pub mod shell;
mod value;

pub use cache::{DEFAULT_CAPACITY, VerdictCache};
pub use decode::glob_match;
pub use facts::Fact;
pub use layer::{PreScanLayer, PreScanService};
pub use rules::{Rule, RuleError, RuleSet};
pub use scanner::{
    PreScanner, ScanLimits, ScanOptions, ScanReport, UnknownModuleAction, Verdict, engine_rules,
};
