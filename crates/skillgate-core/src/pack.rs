//! A custom rules folder's `pack.toml`: whether the folder's rules replace the built-in
//! pack or add to it. Shared by every rule pack that can be customised (pre-scan rules,
//! monitor detections), so they all say it the same way:
//!
//! ```toml
//! # rules/custom/pack.toml
//! extends = "builtin"   # add these rules to the built-in ones (an id used twice is an error)
//! ```
//!
//! Without a `pack.toml` (or without `extends`), the folder replaces the built-in pack.
//!
//! ```
//! let meta: skillgate_core::PackMeta = serde_json::from_str(r#"{"extends": "builtin"}"#).unwrap();
//! assert!(meta.extends_builtin());
//! assert!(!skillgate_core::PackMeta::default().extends_builtin());
//! ```
use serde::Deserialize;

/// The name of the file, in a rules folder, that holds its [`PackMeta`].
pub const PACK_FILE: &str = "pack.toml";

/// A rules folder's `pack.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackMeta {
    /// `"builtin"`: the folder's rules add to the built-in ones.
    pub extends: Option<Extends>,
}

/// What a rules folder can extend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Extends {
    /// The pack built into the binary.
    Builtin,
}

impl PackMeta {
    /// Whether the folder's rules add to the built-in pack.
    pub fn extends_builtin(&self) -> bool {
        self.extends == Some(Extends::Builtin)
    }
}
