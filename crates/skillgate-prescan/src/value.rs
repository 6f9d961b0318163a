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

    /// The text of a constant string or integer (as `str()`/`String()` would give it).
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Value::Str(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            _ => None,
        }
    }

    /// A list of integers 0..=255 as a (lossily decoded) string: `bytes([111, 115])`.
    pub(crate) fn bytes_to_string(items: &[Value]) -> Option<String> {
        let bytes: Option<Vec<u8>> = items
            .iter()
            .map(|v| match v {
                Value::Int(n) => u8::try_from(*n).ok(),
                _ => None,
            })
            .collect();
        bytes.map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Constant path parts joined with `/` (`os.path.join`, `path.join`).
    pub(crate) fn join_path(parts: &[Value]) -> Value {
        let parts: Option<Vec<String>> = parts.iter().map(Value::text).collect();
        match parts {
            Some(p) if !p.is_empty() => Value::string(p.join("/").replace("//", "/")),
            _ => Value::Unknown,
        }
    }

    /// Integer arithmetic both languages fold the same way.
    pub(crate) fn int_op(op: &str, a: &Value, b: &Value) -> Option<Value> {
        let (Value::Int(x), Value::Int(y)) = (a, b) else {
            return None;
        };
        Some(Value::Int(match op {
            "+" => x.saturating_add(*y),
            "-" => x.saturating_sub(*y),
            "*" => x.saturating_mul(*y),
            "^" => x ^ y,
            _ => return None,
        }))
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

/// An integer literal: decimal, `0x`, `0o`, `0b`, with `_` separators and a type suffix
/// (`l` in Python 2, `n` for JavaScript BigInt) ignored.
pub(crate) fn parse_int(t: &str) -> Option<i64> {
    let t = t.replace('_', "").to_ascii_lowercase();
    let t = t.trim_end_matches(['l', 'n']);
    if let Some(h) = t.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = t.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = t.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else {
        t.parse().ok()
    }
}
