//! The coverage table of code-evaluating APIs in `docs/PRESCAN.md` agrees with the rule
//! packs: every row names a rule of the built-in packs or an engine finding, and its
//! example produces that finding; every dynamic-code rule has a row.
use skillgate_core::{Language, Severity};
use skillgate_prescan::{PreScanner, RuleSet, Verdict, engine_rules};
use std::collections::HashSet;
use std::path::Path;

/// One row: language, the id in the "Covered by" column, the example, the line.
struct Row {
    lang: Language,
    id: String,
    example: String,
    line: usize,
}

/// The first `` `...` `` span of a cell.
fn code_span(cell: &str) -> Option<&str> {
    let start = cell.find('`')? + 1;
    let len = cell[start..].find('`')?;
    Some(&cell[start..start + len])
}

fn rows() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/PRESCAN.md");
    let text = std::fs::read_to_string(&path).expect("docs/PRESCAN.md");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // `| lang | api | covered by | example |` splits into six cells.
        let lang = match cells.get(1) {
            Some(&"Python") => Language::Python,
            Some(&"JavaScript") => Language::JavaScript,
            Some(&"Shell") => Language::Shell,
            _ => continue,
        };
        assert_eq!(cells.len(), 6, "line {}: four columns: {line}", i + 1);
        let id = code_span(cells[3]).unwrap_or_else(|| panic!("line {}: no id", i + 1));
        let example = code_span(cells[4]).unwrap_or_else(|| panic!("line {}: no example", i + 1));
        out.push(Row {
            lang,
            id: id.to_string(),
            example: example.to_string(),
            line: i + 1,
        });
    }
    out
}

#[test]
fn every_row_of_the_coverage_table_is_a_rule_or_an_engine_finding_that_its_example_proves() {
    let rules = RuleSet::embedded().expect("default packs");
    let scanner = PreScanner::new().expect("default packs");
    let rows = rows();
    assert!(rows.len() >= 50, "only {} rows", rows.len());
    let mut failures = Vec::new();
    for row in &rows {
        let rule = rules.get(&row.id);
        match rule {
            Some(r) if r.language != row.lang => {
                failures.push(format!(
                    "line {}: `{}` is a {} rule",
                    row.line, row.id, r.language
                ));
                continue;
            }
            Some(r) if r.severity < Severity::High => {
                failures.push(format!("line {}: `{}` does not block", row.line, row.id));
                continue;
            }
            Some(_) => {}
            None if engine_rules::describe(&row.id).is_some() => {}
            None => {
                failures.push(format!("line {}: `{}` is no rule", row.line, row.id));
                continue;
            }
        }
        let report = scanner.scan(row.example.as_bytes(), row.lang);
        let fired: Vec<&str> = report.findings.iter().map(|f| f.rule_id.as_str()).collect();
        if !fired.contains(&row.id.as_str()) {
            failures.push(format!(
                "line {}: `{}` does not fire on {:?} (fired: {fired:?})",
                row.line, row.id, row.example
            ));
        } else if rule.is_some() && report.verdict != Verdict::Block {
            failures.push(format!(
                "line {}: {:?} is not blocked",
                row.line, row.example
            ));
        }
    }
    let cited: HashSet<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    for r in rules.rules() {
        if (r.id.starts_with("py.dynamic.") || r.id.starts_with("js.dynamic."))
            && !cited.contains(r.id.as_str())
        {
            failures.push(format!("rule `{}` has no row in the table", r.id));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
