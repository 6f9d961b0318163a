//! The layer's modes say what they did, and compressed artifacts are scanned or said not
//! to be.
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use skillgate_core::{Artifact, ExecOutcome, Status};
use skillgate_secrets::{MAX_DECOMPRESSED_BYTES, Mode, SecretScanner, scan_outcome};
use std::io::{Read, Write};
use std::sync::OnceLock;

fn scanner() -> &'static SecretScanner {
    static S: OnceLock<SecretScanner> = OnceLock::new();
    S.get_or_init(|| SecretScanner::default_pack().unwrap())
}

const KEY: &str = "AKIAZ3MSJV4WXQ7LTN2H";

fn gz(plain: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(plain).unwrap();
    e.finish().unwrap()
}

fn gunzip(z: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    GzDecoder::new(z).read_to_end(&mut out).unwrap();
    out
}

fn with_artifact(content: Vec<u8>) -> ExecOutcome {
    ExecOutcome {
        status: Status::Ok,
        exit_code: Some(0),
        stdout: format!("key={KEY}\n").into_bytes(),
        artifacts: vec![Artifact {
            name: "data.gz".into(),
            raw_name: None,
            size: content.len() as u64,
            sha256: String::new(),
            content,
        }],
        ..Default::default()
    }
}

#[test]
fn report_mode_findings_say_the_secret_was_left_in() {
    let mut out = with_artifact(gz(b"nothing"));
    let findings = scan_outcome(scanner(), Mode::Report, &mut out);
    assert!(String::from_utf8_lossy(&out.stdout).contains(KEY));
    assert_eq!(findings.len(), 1, "{findings:?}");
    let msg = &findings[0].message;
    assert!(
        msg.contains("NOT redacted") && msg.contains("report mode"),
        "{msg}"
    );

    let mut out = with_artifact(gz(b"nothing"));
    let findings = scan_outcome(scanner(), Mode::Redact, &mut out);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY));
    assert!(findings[0].message.ends_with("; redacted"), "{findings:?}");
}

#[test]
fn gzip_artifacts_are_scanned_and_redacted_inside() {
    let plain = format!("col,key\n1,{KEY}\n");
    let mut out = with_artifact(gz(plain.as_bytes()));
    let findings = scan_outcome(scanner(), Mode::Redact, &mut out);
    let on_artifact: Vec<_> = findings
        .iter()
        .filter(|f| f.message.starts_with("artifact data.gz (gzip):"))
        .collect();
    assert_eq!(on_artifact.len(), 1, "{findings:?}");
    let a = &out.artifacts[0];
    assert_eq!(
        gunzip(&a.content),
        b"col,key\n1,[REDACTED:aws-access-key-id]\n"
    );
    assert_eq!(a.size, a.content.len() as u64);

    let mut out = with_artifact(gz(plain.as_bytes()));
    scan_outcome(scanner(), Mode::Block, &mut out);
    assert_eq!(out.status, Status::Blocked);
    assert!(out.artifacts.is_empty());
}

// A gzip stream with no NUL byte in its first 8 KiB (an 9,000-byte extra field of text, a
// non-zero time, best compression) is still decompressed and scanned, not taken for text.
#[test]
fn a_gzip_artifact_that_looks_like_text_is_scanned_inside() {
    let plain = format!("col,key\n1,{KEY}\n");
    let mut e = flate2::GzBuilder::new()
        .extra(vec![b'A'; 9000])
        .mtime(0x0101_0101)
        .operating_system(3)
        .write(Vec::new(), Compression::best());
    e.write_all(plain.as_bytes()).unwrap();
    let z = e.finish().unwrap();
    assert!(!z[..8192].contains(&0), "the stream must look like text");
    let mut out = with_artifact(z);
    let findings = scan_outcome(scanner(), Mode::Redact, &mut out);
    assert!(
        findings
            .iter()
            .any(|f| f.message.starts_with("artifact data.gz (gzip):")),
        "{findings:?}"
    );
    assert_eq!(
        gunzip(&out.artifacts[0].content),
        b"col,key\n1,[REDACTED:aws-access-key-id]\n"
    );
}

#[test]
fn gzip_artifacts_that_cannot_be_scanned_say_so_and_are_withheld_unless_reporting() {
    // A bomb: more than the cap once decompressed.
    let bomb = gz(&vec![b'a'; MAX_DECOMPRESSED_BYTES as usize + 1]);
    let corrupt = {
        let mut z = gz(KEY.as_bytes());
        z.truncate(12);
        z
    };
    for content in [bomb, corrupt] {
        let mut out = with_artifact(content.clone());
        let findings = scan_outcome(scanner(), Mode::Redact, &mut out);
        let ns: Vec<_> = findings
            .iter()
            .filter(|f| f.rule_id == "secrets.not_scanned")
            .collect();
        assert_eq!(ns.len(), 1, "{findings:?}");
        assert!(ns[0].message.contains("withheld"), "{}", ns[0].message);
        assert!(out.artifacts.is_empty());

        let mut out = with_artifact(content.clone());
        let findings = scan_outcome(scanner(), Mode::Report, &mut out);
        assert!(findings.iter().any(|f| f.rule_id == "secrets.not_scanned"));
        assert_eq!(out.artifacts[0].content, content);
    }
}

/// Runs `layer` around an executor answering `out`.
fn through(layer: skillgate_secrets::SecretsLayer, out: ExecOutcome) -> ExecOutcome {
    use skillgate_core::{BoxError, Caller, ExecRequest, Language, Skill};
    use tower::{Layer, ServiceExt, service_fn};
    let inner = service_fn(move |_req: ExecRequest| {
        let out = out.clone();
        async move { Ok::<_, BoxError>(out) }
    });
    let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
    let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(layer.layer(inner).oneshot(req))
        .unwrap()
}

#[test]
fn a_layer_building_its_rules_on_a_thread_scans_like_a_built_one() {
    use skillgate_secrets::SecretsLayer;
    for mode in [Mode::Redact, Mode::Block, Mode::Report] {
        let building = SecretsLayer::building(
            || SecretScanner::default_pack().map_err(|e| e.to_string()),
            mode,
        );
        let built = SecretsLayer::new(scanner().clone(), mode);
        let a = through(building, with_artifact(gz(KEY.as_bytes())));
        let b = through(built, with_artifact(gz(KEY.as_bytes())));
        assert_eq!(
            (a.status, &a.stdout, &a.artifacts),
            (b.status, &b.stdout, &b.artifacts)
        );
        assert_eq!(a.findings, b.findings);
        assert!(!a.findings.is_empty());
    }
}

#[test]
fn a_rule_build_that_fails_or_panics_withholds_every_output() {
    use skillgate_secrets::SecretsLayer;
    let failing = SecretsLayer::building(|| Err("broken pack".into()), Mode::Report);
    #[allow(clippy::panic)]
    let panicking = SecretsLayer::building(|| panic!("while building"), Mode::Redact);
    for (layer, why) in [(failing, "broken pack"), (panicking, "panicked")] {
        let out = through(layer, with_artifact(gz(b"nothing secret")));
        assert_eq!(out.status, Status::Error);
        assert!(out.stdout.is_empty() && out.stderr.is_empty() && out.artifacts.is_empty());
        assert_eq!(out.findings.len(), 1, "{:?}", out.findings);
        assert_eq!(out.findings[0].rule_id, "secrets.unavailable");
        assert!(
            out.findings[0].message.contains(why),
            "{}",
            out.findings[0].message
        );
    }
}
