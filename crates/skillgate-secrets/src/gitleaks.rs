//! Import of gitleaks-format TOML configurations.
//!
//! Each `[[rules]]` entry becomes a [`RuleDef`]: `regex`, `keywords`, `entropy`,
//! `secretGroup`, `description`, and the `stopwords` and `regexes` of its allow-lists (and
//! of the global one) carry over. What cannot carry over is reported, rule by rule:
//! path-only rules (skillgate scans output, not file names), regexes the Rust regex engine
//! does not accept (look-arounds, back-references), allow-lists whose `condition = "AND"`
//! cannot be expressed. Dropped parts that only make the rule stricter to pass (path
//! restrictions, commit allow-lists, `regexTarget = "line"`) become notes.
use crate::rule::{Allowlist, Rule, RuleDef};
use crate::ruleset::RuleSetError;
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Config {
    rules: Vec<GlRule>,
    allowlist: Option<GlAllowlist>,
    allowlists: Vec<GlAllowlist>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GlRule {
    id: String,
    description: String,
    regex: Option<String>,
    secret_group: Option<usize>,
    entropy: Option<f64>,
    keywords: Vec<String>,
    path: Option<String>,
    allowlist: Option<GlAllowlist>,
    allowlists: Vec<GlAllowlist>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GlAllowlist {
    condition: Option<String>,
    regexes: Vec<String>,
    regex_target: Option<String>,
    stopwords: Vec<String>,
    paths: Vec<String>,
    commits: Vec<String>,
}

/// A rule that could not be translated, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untranslated {
    /// The gitleaks rule id.
    pub id: String,
    /// Why.
    pub reason: String,
}

/// The result of an import.
#[derive(Debug, Clone, Default)]
pub struct GitleaksImport {
    /// The translated rules (each compiles).
    pub rules: Vec<RuleDef>,
    /// The rules that could not be translated.
    pub untranslated: Vec<Untranslated>,
    /// Parts of translated rules that were dropped, per rule.
    pub notes: Vec<String>,
}

/// Translates a gitleaks TOML configuration.
///
/// ```
/// let cfg = r#"
/// [[rules]]
/// id = "acme-key"
/// regex = '''acme_[a-z0-9]{16}'''
/// keywords = ["acme_"]
///
/// [[rules]]
/// id = "env-file"
/// path = '''\.env$'''
/// "#;
/// let import = skillgate_secrets::import_gitleaks(cfg, "gitleaks.toml").unwrap();
/// assert_eq!(import.rules.len(), 1);
/// assert_eq!(import.untranslated[0].id, "env-file");
/// ```
pub fn import_gitleaks(text: &str, origin: &str) -> Result<GitleaksImport, RuleSetError> {
    let cfg: Config = toml::from_str(text).map_err(|e| RuleSetError::Parse {
        origin: origin.to_string(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let mut import = GitleaksImport::default();
    let mut global = Allowlist::default();
    for al in cfg.allowlist.iter().chain(&cfg.allowlists) {
        merge_allowlist("(global)", al, &mut global, &mut import.notes);
    }
    for r in cfg.rules {
        let id = normalise_id(&r.id);
        let Some(regex) = r.regex.clone().filter(|s| !s.is_empty()) else {
            import.untranslated.push(Untranslated {
                id,
                reason: "path-only rule: skillgate scans output, not file paths".into(),
            });
            continue;
        };
        if r.path.is_some() {
            import.notes.push(format!(
                "{id}: the path restriction is dropped (output has no path); the rule applies everywhere"
            ));
        }
        let mut allowlist = global.clone();
        for al in r.allowlist.iter().chain(&r.allowlists) {
            merge_allowlist(&id, al, &mut allowlist, &mut import.notes);
        }
        let def = RuleDef {
            id: id.clone(),
            description: if r.description.is_empty() {
                format!("gitleaks rule {}", r.id)
            } else {
                r.description
            },
            keywords: r.keywords,
            regex,
            secret_group: r.secret_group.filter(|&g| g > 0),
            entropy: r.entropy,
            window: None,
            severity: None,
            allowlist,
            references: Vec::new(),
            examples: Vec::new(),
            negative_examples: Vec::new(),
        };
        match Rule::compile(def.clone()) {
            Ok(_) => import.rules.push(def),
            Err(e) => import.untranslated.push(Untranslated {
                id,
                reason: e.message,
            }),
        }
    }
    Ok(import)
}

fn normalise_id(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() {
        "gitleaks-rule".into()
    } else {
        s
    }
}

fn merge_allowlist(id: &str, al: &GlAllowlist, into: &mut Allowlist, notes: &mut Vec<String>) {
    let criteria = usize::from(!al.regexes.is_empty())
        + usize::from(!al.stopwords.is_empty())
        + usize::from(!al.paths.is_empty())
        + usize::from(!al.commits.is_empty());
    if al
        .condition
        .as_deref()
        .is_some_and(|c| c.eq_ignore_ascii_case("and"))
        && criteria > 1
    {
        notes.push(format!(
            "{id}: an allow-list with condition AND is dropped (it cannot be expressed); more is reported, not less"
        ));
        return;
    }
    if !al.paths.is_empty() || !al.commits.is_empty() {
        notes.push(format!("{id}: allow-list paths and commits are dropped"));
    }
    if !al.regexes.is_empty() {
        match al.regex_target.as_deref() {
            None | Some("secret") => into.regexes.extend(al.regexes.iter().cloned()),
            Some(t) => notes.push(format!(
                "{id}: allow-list regexes with regexTarget = \"{t}\" are dropped (only the secret is matched)"
            )),
        }
    }
    into.stopwords.extend(al.stopwords.iter().cloned());
}

impl crate::RuleSetBuilder {
    /// Adds the translatable rules of a gitleaks configuration; rules whose id is already
    /// loaded are reported as untranslated.
    pub fn add_gitleaks(
        &mut self,
        text: &str,
        origin: &str,
    ) -> Result<GitleaksImport, RuleSetError> {
        let mut import = import_gitleaks(text, origin)?;
        let rules = std::mem::take(&mut import.rules);
        for def in rules {
            let id = def.id.clone();
            match self.add_def(def.clone(), origin) {
                Ok(_) => import.rules.push(def),
                Err(e) => import.untranslated.push(Untranslated {
                    id,
                    reason: e.to_string(),
                }),
            }
        }
        Ok(import)
    }
}
