//! Load errors: every problem names its file, its line and column when known, and what
//! is wrong.
use std::fmt;

/// A policy, schema, entities or grants file that cannot be used. The gate refuses to
/// start (fail closed).
///
/// ```
/// let err = skillgate_policy::LoadError::at("p.cedar", 3, 7, "unexpected token `)`");
/// assert_eq!(err.to_string(), "p.cedar:3:7: unexpected token `)`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// The file (or `built-in NAME` for the embedded defaults).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
    /// What is wrong.
    pub message: String,
}

impl LoadError {
    /// An error about a whole file.
    pub fn file(file: impl Into<String>, message: impl Into<String>) -> Self {
        LoadError {
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// An error at a line and column.
    pub fn at(file: impl Into<String>, line: u32, column: u32, message: impl Into<String>) -> Self {
        LoadError {
            file: file.into(),
            line: Some(line),
            column: Some(column),
            message: message.into(),
        }
    }

    /// An error at a byte offset of `text`, turned into line and column.
    pub(crate) fn at_offset(
        file: impl Into<String>,
        text: &str,
        offset: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        match offset {
            Some(off) => {
                let (line, column) = line_col(text, off);
                LoadError::at(file, line, column, message)
            }
            None => LoadError::file(file, message),
        }
    }

    /// An error from a Cedar diagnostic: its message, its help, and the position of its
    /// first label in `text`. A diagnostic that only wraps others (a list of parse
    /// errors) is reported by its first one; the others are counted.
    pub(crate) fn from_diagnostic(
        file: impl Into<String>,
        text: &str,
        diag: &dyn miette::Diagnostic,
    ) -> Self {
        let related: Vec<&dyn miette::Diagnostic> =
            diag.related().map(|r| r.collect()).unwrap_or_default();
        let main = match related.first() {
            Some(first) if first_offset(diag).is_none() => *first,
            _ => diag,
        };
        let mut message = main.to_string();
        if let Some(help) = main.help() {
            message.push_str(&format!(" (help: {help})"));
        }
        if related.len() > 1 {
            message.push_str(&format!(" (and {} more problems)", related.len() - 1));
        }
        LoadError::at_offset(file, text, first_offset(main), message)
    }
}

fn first_offset(diag: &dyn miette::Diagnostic) -> Option<usize> {
    diag.labels()
        .and_then(|mut labels| labels.next())
        .map(|l| l.offset())
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
    let column = before[line_start..].chars().count() + 1;
    (
        u32::try_from(line).unwrap_or(u32::MAX),
        u32::try_from(column).unwrap_or(u32::MAX),
    )
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for LoadError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_lines_and_columns() {
        let text = "ab\ncdé\nf";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 3), (2, 1));
        assert_eq!(line_col(text, 8), (3, 1));
        assert_eq!(line_col(text, 7), (2, 4));
        assert_eq!(line_col(text, 999), (3, 2));
    }
}
