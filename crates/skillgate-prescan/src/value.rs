//! The abstract values the semantic pass folds expressions to.

/// What an expression is known to evaluate to, as far as the scanner can tell without
/// running it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Value {
    /// Not known.
    #[default]
    Unknown,
    /// A constant string (bytes are decoded as UTF-8, lossily).
    Str(String),
    /// A constant integer.
    Int(i64),
    /// A list or tuple of values.
    List(Vec<Value>),
    /// A module, function or attribute with a fully qualified name (`os.system`,
    /// `child_process.exec`, `eval`).
    Name(String),
    /// A namespace dictionary (`globals()`, `locals()`): indexing it with a string looks
    /// the name up.
    Scope,
}

impl Value {
    /// The string, if this is a constant string.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The qualified name, if this is a name.
    pub(crate) fn as_name(&self) -> Option<&str> {
        match self {
            Value::Name(s) => Some(s),
            _ => None,
        }
    }

    /// A string value made of `s`, capped so folding cannot grow without bound.
    pub(crate) fn string(s: String) -> Value {
        if s.len() > MAX_FOLDED_LEN {
            Value::Unknown
        } else {
            Value::Str(s)
        }
    }
}

/// Longest string the folder keeps (longer results become unknown).
pub(crate) const MAX_FOLDED_LEN: usize = 64 * 1024;

/// Deepest expression nesting the folder follows (deeper parts become unknown).
pub(crate) const MAX_FOLD_DEPTH: usize = 48;
