//! Layer 6 of skillgate: a streaming secret scanner for what skills print and write.
//!
//! - [`RuleSet`]: rules as data (`rules/secrets/*.toml`, embedded as the default pack;
//!   see [`rule`] for the format), plus gitleaks configurations ([`import_gitleaks`]).
//! - [`SecretScanner`]: one keyword-prefilter pass over all rule keywords, then each rule's own
//!   regex only in a window around its keyword hits (never one giant alternation);
//!   entropy thresholds, allow-lists and false-positive guards; base64, hex, percent and
//!   escape decoding to a bounded depth ([`decode_segments`]).
//! - [`StreamScanner`]: the same over chunks, each secret reported once.
//! - [`redact`] and [`Mode`]: `[REDACTED:<rule-id>]`, byte-exact elsewhere.
//! - [`SecretsLayer`]: the tower layer.
//!
//! ```
//! use skillgate_secrets::SecretScanner;
//! let scanner = SecretScanner::default_pack().unwrap();
//! let out = b"connecting to postgres://app:s3cr3tP4ssw0rd@db:5432/app\n";
//! let (redacted, found) = scanner.redact(out);
//! assert_eq!(found[0].rule_id, "database-url-password");
//! assert_eq!(redacted, b"connecting to postgres://app:[REDACTED:database-url-password]@db:5432/app\n");
//! ```

mod decode;
mod entropy;
pub mod fuzz;
mod gitleaks;
mod guards;
mod layer;
mod prefilter;
mod prefilter_avx2;
mod redact;
pub mod rule;
mod ruleset;
mod scanner;
mod stream;
#[cfg(test)]
mod testing;

include!(concat!(env!("OUT_DIR"), "/default_pack.rs"));

pub use decode::{Decoded, Encoding, MAX_SEGMENT, MIN_BASE64, MIN_HEX, decode_segments, is_text};
pub use entropy::shannon_entropy;
pub use gitleaks::{GitleaksImport, Untranslated, import_gitleaks};
pub use layer::{
    MAX_DECOMPRESSED_BYTES, SecretsLayer, SecretsService, is_text_artifact, scan_outcome,
};
pub use redact::{MAX_REDACTION_ROUNDS, Mode, REDACTION_INCOMPLETE, redact};
pub use rule::{Allowlist, DEFAULT_WINDOW, MAX_WINDOW, Rule, RuleDef, RuleError, RuleFile};
pub use ruleset::{RuleSet, RuleSetBuilder, RuleSetError};
pub use scanner::{DEFAULT_DECODE_DEPTH, SecretFinding, SecretScanner, mask};
pub use stream::StreamScanner;

/// The embedded default rule files: `(file name, TOML text)`.
pub fn default_rule_files() -> &'static [(&'static str, &'static str)] {
    DEFAULT_PACK
}
