//! Where the elements of a top-level JSON array start, so errors about the Nth entity or
//! grant can name its line.
use crate::error::LoadError;

/// Parses `text` as a JSON array, naming the line and column of a syntax error.
pub(crate) fn parse_array(file: &str, text: &str) -> Result<Vec<serde_json::Value>, LoadError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let line = u32::try_from(e.line()).unwrap_or(u32::MAX);
        let column = u32::try_from(e.column()).unwrap_or(u32::MAX);
        LoadError::at(file, line, column, format!("not valid JSON: {e}"))
    })?;
    match value {
        serde_json::Value::Array(items) => Ok(items),
        other => Err(LoadError::file(
            file,
            format!(
                "expected a JSON array at the top level, found {}",
                kind_of(&other)
            ),
        )),
    }
}

fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The 1-based line on which element `index` of the top-level array in `text` starts.
/// `text` must be valid JSON (callers parse it first).
pub(crate) fn element_line(text: &str, index: usize) -> Option<u32> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut line = 1u32;
    let mut seen = 0usize;
    let mut expecting_element = false;
    for c in text.chars() {
        if c == '\n' {
            line = line.saturating_add(1);
        }
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if expecting_element && !c.is_whitespace() && c != ']' {
            if seen == index {
                return Some(line);
            }
            seen += 1;
            expecting_element = false;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                if depth == 1 && c == '[' {
                    expecting_element = true;
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => expecting_element = true,
            _ => {}
        }
    }
    None
}

/// An error about element `index` of the array in `text`, at its line when found.
pub(crate) fn element_error(
    file: &str,
    text: &str,
    index: usize,
    message: impl Into<String>,
) -> LoadError {
    let message = format!("element {}: {}", index + 1, message.into());
    match element_line(text, index) {
        Some(line) => LoadError {
            file: file.to_string(),
            line: Some(line),
            column: None,
            message,
        },
        None => LoadError::file(file, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_line_of_each_element() {
        let text = "[\n  {\"a\": \"x,{\\\"\"},\n  {\"b\": [1, 2]},\n\n  3\n]";
        assert_eq!(element_line(text, 0), Some(2));
        assert_eq!(element_line(text, 1), Some(3));
        assert_eq!(element_line(text, 2), Some(5));
        assert_eq!(element_line(text, 3), None);
    }

    #[test]
    fn syntax_errors_name_line_and_column() {
        let err = parse_array("e.json", "[\n  {\"a\": }\n]").unwrap_err();
        assert_eq!((err.file.as_str(), err.line), ("e.json", Some(2)));
        let err = parse_array("e.json", "{}").unwrap_err();
        assert!(err.message.contains("an object"), "{err}");
    }
}
