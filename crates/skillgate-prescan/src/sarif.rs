//! SARIF 2.1.0 output, for code-scanning dashboards.
use crate::{RuleSet, ScanReport};
use serde_sarif::sarif::{
    ArtifactContent, ArtifactLocation, Location, Message, MultiformatMessageString,
    PhysicalLocation, Region, ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif,
    Tool, ToolComponent,
};
use skillgate_core::Severity;

/// The SARIF level of a severity: `error` from `high` up, `warning` for `medium`,
/// `note` below.
pub fn level(severity: Severity) -> ResultLevel {
    match severity {
        Severity::Critical | Severity::High => ResultLevel::Error,
        Severity::Medium => ResultLevel::Warning,
        Severity::Low | Severity::Info => ResultLevel::Note,
    }
}

/// One SARIF log with one run holding the results of every scanned file (`path`,
/// report); the rules of `rules` are the driver's rules.
///
/// ```
/// use skillgate_prescan::{PreScanner, sarif};
/// use skillgate_core::Language;
/// let scanner = PreScanner::new().unwrap();
/// let report = scanner.scan(b"eval('1')\n", Language::Python);
/// let log = sarif::to_sarif(&[("skill.py".to_string(), report)], scanner.rules());
/// let json = serde_json::to_value(&log).unwrap();
/// assert_eq!(json["version"], "2.1.0");
/// assert_eq!(json["runs"][0]["results"][0]["ruleId"], "py.dynamic.exec");
/// ```
pub fn to_sarif(files: &[(String, ScanReport)], rules: &RuleSet) -> Sarif {
    let descriptors: Vec<ReportingDescriptor> = rules
        .rules()
        .iter()
        .map(|r| {
            ReportingDescriptor::builder()
                .id(r.id.clone())
                .short_description(
                    MultiformatMessageString::builder()
                        .text(r.message.clone())
                        .build(),
                )
                .full_description(
                    MultiformatMessageString::builder()
                        .text(r.what.clone())
                        .build(),
                )
                .help(
                    MultiformatMessageString::builder()
                        .text(format!("{}\n\nExample:\n{}", r.why, r.example))
                        .build(),
                )
                .build()
        })
        .collect();
    let driver = ToolComponent::builder()
        .name("skillgate-prescan")
        .version(env!("CARGO_PKG_VERSION"))
        .rules(descriptors)
        .build();
    let mut results = Vec::new();
    for (path, report) in files {
        for f in &report.findings {
            let mut region = Region::builder().build();
            if let Some(l) = f.location {
                region.start_line = Some(i64::from(l.line));
                region.start_column = Some(i64::from(l.column));
                region.end_line = l.end_line.map(i64::from);
                region.end_column = l.end_column.map(i64::from);
            }
            if let Some(s) = &f.snippet {
                region.snippet = Some(ArtifactContent::builder().text(s.clone()).build());
            }
            let location = Location::builder()
                .physical_location(
                    PhysicalLocation::builder()
                        .artifact_location(ArtifactLocation::builder().uri(path.clone()).build())
                        .region(region)
                        .build(),
                )
                .build();
            results.push(
                SarifResult::builder()
                    .rule_id(f.rule_id.clone())
                    .level(level(f.severity))
                    .message(Message::builder().text(f.message.clone()).build())
                    .locations(vec![location])
                    .build(),
            );
        }
    }
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .build();
    Sarif::builder()
        .version(serde_json::json!("2.1.0"))
        .schema(serde_sarif::sarif::SCHEMA_URL)
        .runs(vec![run])
        .build()
}
