//! The catalogue: the operator's record of each skill, keyed by the skill's digest.
//!
//! A skill's tenant, owner and visibility decide who may run it, so they cannot come from
//! the skill itself: anyone who can write a skill folder can write its `SKILL.md`. The gate
//! takes them from a [`Record`] the operator keeps, found by the skill's digest
//! (`Skill::digest`: for a skill folder, the sha256 of all its files, which
//! `skillgate policy digest DIR` prints):
//!
//! - a skill whose digest has a record is that record's skill: its tenant, owner,
//!   visibility and `TENANT/NAME` id (what grants name) are the record's. A `SKILL.md` that
//!   says otherwise (`name`, `skillgate.tenant`, `skillgate.owner`,
//!   `skillgate.visibility`) is refused, naming the field;
//! - a skill without a record is the caller's own code, like a bare script: it belongs to
//!   the calling agent's tenant, only that agent may run it (policy `own-code`), and no
//!   grant names it.
//!
//! A catalogue file is a JSON array of records:
//!
//! ```json
//! [{"name": "analyze-rows", "tenant": "acme", "owner": "builder-alice",
//!   "visibility": "public", "digest": "<64 lowercase hex digits>"}]
//! ```
use crate::error::LoadError;
use crate::json_array::{element_error, parse_array};
use serde::{Deserialize, Serialize};
use skillgate_core::{Skill, Visibility};
use std::collections::HashMap;

/// The operator's record of one skill version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// The skill's name (its folder's name).
    pub name: String,
    /// Lowercase hex sha256 digest of the skill (`Skill::digest`).
    pub digest: String,
    /// The tenant it belongs to.
    pub tenant: String,
    /// The builder who owns it (needed for a private skill to run for anyone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Who may run it.
    pub visibility: Visibility,
}

impl Record {
    /// Checks what the skill says about itself against the record: a field the skill sets
    /// to another value is refused, naming it. A tenant or owner the skill leaves out is
    /// not a disagreement; its visibility always counts (its default is `private`).
    ///
    /// ```
    /// use skillgate_core::{Language, Skill, Visibility};
    /// use skillgate_policy::catalogue::Record;
    /// let skill = Skill::builder("s", Language::Python, b"".to_vec())
    ///     .tenant("globex").visibility(Visibility::Public).build();
    /// let record = Record { name: "s".into(), digest: skill.digest.clone(),
    ///     tenant: "acme".into(), owner: None, visibility: Visibility::Public };
    /// let err = record.check_claims(&skill).unwrap_err();
    /// assert!(err.contains("skillgate.tenant"), "{err}");
    /// ```
    pub fn check_claims(&self, skill: &Skill) -> Result<(), String> {
        let differs = |field: &str, says: &str, record: &str| {
            format!(
                "skill `{}`: its `{field}` is `{says}`, but the catalogue's record for its digest says `{record}`",
                skill.name
            )
        };
        if skill.name != self.name {
            return Err(differs("name", &skill.name, &self.name));
        }
        if let Some(t) = skill.tenant.as_deref().filter(|t| *t != self.tenant) {
            return Err(differs("skillgate.tenant", t, &self.tenant));
        }
        if let Some(o) = skill.owner.as_deref() {
            match &self.owner {
                Some(r) if r == o => {}
                Some(r) => return Err(differs("skillgate.owner", o, r)),
                None => return Err(differs("skillgate.owner", o, "(no owner)")),
            }
        }
        if skill.visibility != self.visibility {
            return Err(differs(
                "skillgate.visibility",
                skill.visibility.as_str(),
                self.visibility.as_str(),
            ));
        }
        Ok(())
    }
}

/// The records, by digest. The default catalogue is empty: every skill is then its
/// caller's own code.
#[derive(Debug, Clone, Default)]
pub struct Catalogue {
    by_digest: HashMap<String, Record>,
}

/// Whether `d` is a lowercase hex sha256 digest.
fn is_digest(d: &str) -> bool {
    d.len() == 64
        && d.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl Catalogue {
    /// A catalogue of `records`. A malformed digest, an empty name or tenant, or two
    /// records of one digest are refused.
    pub fn new(records: impl IntoIterator<Item = Record>) -> Result<Catalogue, String> {
        let mut by_digest = HashMap::new();
        for r in records {
            r.check()?;
            if let Some(first) = by_digest.get(&r.digest) {
                let first: &Record = first;
                return Err(format!(
                    "digest {} has two records (`{}/{}` and `{}/{}`)",
                    r.digest, first.tenant, first.name, r.tenant, r.name
                ));
            }
            by_digest.insert(r.digest.clone(), r);
        }
        Ok(Catalogue { by_digest })
    }

    /// Parses a catalogue file (a JSON array of [`Record`]s); `file` names it in errors,
    /// which point at the record's line.
    pub fn from_json(file: &str, text: &str) -> Result<Catalogue, LoadError> {
        let items = parse_array(file, text)?;
        let mut records: Vec<Record> = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let r: Record = serde_json::from_value(item)
                .map_err(|e| element_error(file, text, i, e.to_string()))?;
            r.check().map_err(|e| element_error(file, text, i, e))?;
            if let Some(j) = records.iter().position(|o| o.digest == r.digest) {
                return Err(element_error(
                    file,
                    text,
                    i,
                    format!(
                        "digest {} already has a record (record {})",
                        r.digest,
                        j + 1
                    ),
                ));
            }
            records.push(r);
        }
        Catalogue::new(records).map_err(|e| LoadError::file(file, e))
    }

    /// The record of the skill with digest `digest`.
    pub fn get(&self, digest: &str) -> Option<&Record> {
        self.by_digest.get(digest)
    }

    /// Every record, in no particular order.
    pub fn records(&self) -> impl Iterator<Item = &Record> {
        self.by_digest.values()
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.by_digest.len()
    }

    /// Whether there is no record.
    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }
}

impl Record {
    fn check(&self) -> Result<(), String> {
        if !is_digest(&self.digest) {
            return Err(format!(
                "record `{}`: `digest` must be 64 lowercase hex digits (sha256; `skillgate policy digest DIR` prints it), not `{}`",
                self.name, self.digest
            ));
        }
        if self.name.is_empty() || self.tenant.is_empty() {
            return Err(format!(
                "record of digest {}: `name` and `tenant` must not be empty",
                self.digest
            ));
        }
        if self.name.contains(['/', '@']) {
            return Err(format!(
                "record `{}`: a name holds no `/` or `@`",
                self.name
            ));
        }
        Ok(())
    }
}
