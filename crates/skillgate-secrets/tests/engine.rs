//! Engine behaviour: decoders, modes, the layer, gitleaks import, and properties.
use base64::Engine as _;
use proptest::prelude::*;
use skillgate_core::{
    Artifact, BoxError, Caller, ExecOutcome, ExecRequest, Language, LayerName, Skill, Status,
};
use skillgate_secrets::{
    Encoding, Mode, RuleSetBuilder, SecretScanner, SecretsLayer, import_gitleaks, redact,
};
use std::sync::OnceLock;
use tower::{Layer, ServiceExt, service_fn};

fn scanner() -> &'static SecretScanner {
    static S: OnceLock<SecretScanner> = OnceLock::new();
    S.get_or_init(|| SecretScanner::default_pack().unwrap())
}

const KEY: &str = "AKIAZ3MSJV4WXQ7LTN2H";

#[test]
fn secrets_behind_encodings_are_found_and_say_which() {
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("aws_access_key_id={KEY}"));
    let text = format!("payload: {b64}\n");
    let found = scanner().scan(text.as_bytes());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].decoded_from, vec![Encoding::Base64]);
    assert_eq!(&text[found[0].start..found[0].end], b64);

    let hexed = hex::encode(format!("key {KEY} end"));
    let found = scanner().scan(hexed.as_bytes());
    assert_eq!(found[0].decoded_from, vec![Encoding::Hex]);

    let escaped = format!(r#"{{"log": "key=\u0041KIA{}"}}"#, &KEY[4..]);
    let found = scanner().scan(escaped.as_bytes());
    assert_eq!(found[0].decoded_from, vec![Encoding::JsonEscape]);
    assert_eq!(
        &escaped[found[0].start..found[0].end],
        format!(r"\u0041KIA{}", &KEY[4..])
    );

    let pct = "https://x.test/cb?k=AKIA%5A3MSJV4WXQ7LTN2H&x=1";
    let found = scanner().scan(pct.as_bytes());
    assert_eq!(found[0].decoded_from, vec![Encoding::Percent]);
    assert_eq!(&pct[found[0].start..found[0].end], "AKIA%5A3MSJV4WXQ7LTN2H");

    // Two levels: base64 of a JSON string with an escape.
    let inner = format!(r#"{{"k": "\u0041KIA{}"}}"#, &KEY[4..]);
    let two = base64::engine::general_purpose::STANDARD.encode(inner);
    let found = scanner().scan(two.as_bytes());
    assert_eq!(
        found[0].decoded_from,
        vec![Encoding::Base64, Encoding::JsonEscape]
    );
    // Depth 0 turns decoding off.
    let flat = SecretScanner::default_pack().unwrap().with_decode_depth(0);
    assert!(flat.scan(two.as_bytes()).is_empty());
}

#[test]
fn a_secret_in_plain_sight_is_reported_once_not_again_through_a_decoding() {
    let text = format!(r#"{{"a": "{KEY}", "b": "x\/y"}}"#);
    let found = scanner().scan(text.as_bytes());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].decoded_from.is_empty());
}

#[test]
fn generic_rules_yield_to_provider_rules() {
    let text = format!("api_key = \"{KEY}\"");
    let found = scanner().scan(text.as_bytes());
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].rule_id, "aws-access-key-id");
}

#[test]
fn redaction_is_byte_exact_around_secrets() {
    let text = "héllo\r\nAKIAZ3MSJV4WXQ7LTN2H\tbinary:\u{0}\u{1} ghp_0123456789abcdefghijABCDEFGHIJ012345!\n";
    let (out, found) = scanner().redact(text.as_bytes());
    assert_eq!(found.len(), 2);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "héllo\r\n[REDACTED:aws-access-key-id]\tbinary:\u{0}\u{1} [REDACTED:github-pat]!\n"
    );
    assert_eq!((found[0].line, found[0].column), (2, 1));
    assert_eq!((found[1].line, found[1].column), (2, 32));
    assert_eq!(redact(b"nothing here", &[]), b"nothing here");
}

/// A secret longer than its rule's pattern used to allow (a run of 1,200 characters after
/// `curl --user api:`, found by the `secrets_scan` campaign) was redacted 200 characters a
/// round, and after the last round its tail was still in the output and still matched. A
/// secret is its whole run: each is redacted at once, with nothing of it left.
#[test]
fn a_long_secret_is_redacted_whole() {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut run = |n: usize, alphabet: &[u8]| -> String {
        (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % alphabet.len() as u64) as usize] as char
            })
            .collect()
    };
    let alnum = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let hex = b"0123456789abcdef";
    let cases: Vec<(&str, String, String)> = vec![
        (
            "curl-user-password",
            "curl -s --user \"api:key-".into(),
            run(1200, alnum),
        ),
        (
            "odbc",
            "Server=db01;Database=app;Password=".into(),
            run(1200, alnum),
        ),
        (
            "psexec",
            "psexec \\\\host -u admin -p ".into(),
            run(1200, alnum),
        ),
        (
            "viserver",
            "Connect-VIServer -Server vc01 -User admin -Password ".into(),
            run(1200, alnum),
        ),
        (
            "netrc",
            "machine api.corp.test login deploy password ".into(),
            run(1200, alnum),
        ),
        ("sshpass", "sshpass -p ".into(), run(1200, alnum)),
        (
            "kubeconfig",
            "users:\n- name: u\n  user:\n    token: ".into(),
            run(6000, alnum),
        ),
        (
            "npmrc",
            "//registry.npmjs.org/:_authToken=".into(),
            run(1200, alnum),
        ),
        ("yarnrc", "npmAuthToken: ".into(), run(1200, alnum)),
        ("jwt-secret", "jwt_secret: ".into(), run(1200, alnum)),
        (
            "krb5asrep",
            format!("$krb5asrep$23$user@CORP.TEST:{}$", run(32, hex)),
            run(20000, hex),
        ),
    ];
    for (what, prefix, secret) in cases {
        let text = format!("{prefix}{secret} done\n");
        let found = scanner().scan(text.as_bytes());
        assert!(!found.is_empty(), "{what}: not found");
        let (out, _) = scanner().redact(text.as_bytes());
        let out = String::from_utf8(out).unwrap();
        let tail = &secret[secret.len() - 24..];
        assert!(
            !out.contains(tail),
            "{what}: the secret's tail is left: {out}"
        );
        assert!(out.ends_with(" done\n"), "{what}: {out}");
        let again = scanner().scan(out.as_bytes());
        assert!(again.is_empty(), "{what}: {again:?} in {out}");
    }
}

/// A rule pack whose redaction does not converge (the old `curl-user-password` pattern,
/// which took at most 200 characters of a longer secret) does not get to pass what is
/// left: the whole text is withheld, and a finding says so.
#[test]
fn a_redaction_that_does_not_converge_withholds_the_text() {
    let pack = r#"
[[rule]]
id = "bounded-curl"
description = "curl --user with a bounded password"
keywords = ["curl"]
regex = '''(?i)\bcurl\b[^\n]{0,400}?\s(?:-u|--user)[\s=]*["']?[^\s"':]*:([^\s"']{3,200})'''
examples = ["curl -u deploy:Hq7vT2pLx https://ci.corp.test/api"]
"#;
    let mut b = RuleSetBuilder::new();
    b.add_toml(pack, "bounded.toml").unwrap();
    let scanner = SecretScanner::new(b.build().unwrap());
    let secret: String = (0..1200)
        .map(|i| (b'a' + (i * 7 % 26) as u8) as char)
        .collect();
    let text = format!("before\ncurl -s --user \"api:key-{secret}\"\nafter\n");
    let (out, found) = scanner.redact(text.as_bytes());
    assert_eq!(out, b"[REDACTED:redaction-incomplete]");
    let last = found.last().unwrap();
    assert_eq!(last.rule_id, skillgate_secrets::REDACTION_INCOMPLETE);
    assert_eq!((last.start, last.end), (0, text.len()));
    assert!(scanner.scan(&out).is_empty());

    // A short secret converges and is redacted as before.
    let (out, found) = scanner.redact(b"curl -u deploy:Hq7vT2pLx x\n");
    assert_eq!(out, b"curl -u deploy:[REDACTED:bounded-curl] x\n");
    assert_eq!(found.len(), 1);
}

fn outcome() -> ExecOutcome {
    let content = format!("col,key\n1,{KEY}\n").into_bytes();
    ExecOutcome {
        status: Status::Ok,
        exit_code: Some(0),
        stdout: format!("{{\"token\": \"{KEY}\"}}").into_bytes(),
        stderr: b"warning: nothing secret\n".to_vec(),
        artifacts: vec![
            Artifact {
                name: "out.csv".into(),
                raw_name: None,
                size: content.len() as u64,
                sha256: String::new(),
                content,
            },
            Artifact {
                name: "img.bin".into(),
                raw_name: None,
                size: 4,
                sha256: String::new(),
                content: b"\0\0AKIAZ3MSJV4WXQ7LTN2H".to_vec(),
            },
        ],
        ..Default::default()
    }
}

async fn run(mode: Mode) -> ExecOutcome {
    let inner = service_fn(|_req: ExecRequest| async { Ok::<_, BoxError>(outcome()) });
    let svc = SecretsLayer::new(scanner().clone(), mode).layer(inner);
    let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
    let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    svc.oneshot(req).await.unwrap()
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn the_layer_redacts_stdout_and_text_artifacts_and_records_findings() {
    let out = block_on(run(Mode::Redact));
    assert_eq!(out.status, Status::Ok);
    assert_eq!(out.stdout, b"{\"token\": \"[REDACTED:aws-access-key-id]\"}");
    assert_eq!(out.stderr, b"warning: nothing secret\n");
    let csv = &out.artifacts[0];
    assert_eq!(csv.content, b"col,key\n1,[REDACTED:aws-access-key-id]\n");
    assert_eq!(csv.size, csv.content.len() as u64);
    assert_eq!(csv.sha256.len(), 64);
    // Binary artifacts are not text: left alone.
    assert!(out.artifacts[1].content.ends_with(KEY.as_bytes()));
    assert_eq!(out.findings.len(), 2);
    assert!(out.findings.iter().all(|f| f.layer == LayerName::Secrets));
    assert!(out.findings[0].message.starts_with("stdout:"));
    assert!(out.findings[1].message.starts_with("artifact out.csv:"));
    assert!(
        out.findings
            .iter()
            .all(|f| !f.snippet.as_ref().unwrap().contains(KEY))
    );
    assert!(out.layer_timing(LayerName::Secrets).is_some());
}

#[test]
fn block_mode_withholds_output_and_report_mode_passes_it() {
    let out = block_on(run(Mode::Block));
    assert_eq!(out.status, Status::Blocked);
    assert!(out.stdout.is_empty() && out.stderr.is_empty() && out.artifacts.is_empty());
    assert_eq!(out.findings.len(), 2);
    let out = block_on(run(Mode::Report));
    assert_eq!(out.status, Status::Ok);
    assert_eq!(out.stdout, outcome().stdout);
    assert_eq!(out.findings.len(), 2);
    assert_eq!("block".parse::<Mode>().unwrap(), Mode::Block);
    assert!(
        "drop"
            .parse::<Mode>()
            .unwrap_err()
            .contains("redact, block or report")
    );
}

#[test]
fn gitleaks_configs_import_and_report_what_cannot_be() {
    let cfg = r#"
title = "custom"
[allowlist]
stopwords = ["dummy"]

[[rules]]
id = "acme-api-key"
description = "ACME key"
regex = '''(?i)acme[_-]?key\s*=\s*['"]?(acme_[a-z0-9]{24})'''
secretGroup = 1
entropy = 3.0
keywords = ["acme"]
[[rules.allowlists]]
regexes = ['''acme_0{24}''']

[[rules]]
id = "look-behind"
regex = '''(?<=token=)[a-z]{20}'''
keywords = ["token="]

[[rules]]
id = "pkcs12-file"
path = '''\.p12$'''

[[rules]]
id = "scoped"
regex = '''scoped_[a-z]{10}'''
path = '''\.env$'''
keywords = ["scoped_"]
[rules.allowlist]
condition = "AND"
regexes = ['''x''']
paths = ['''y''']
"#;
    let import = import_gitleaks(cfg, "gl.toml").unwrap();
    let ids: Vec<&str> = import.rules.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["acme-api-key", "scoped"]);
    let bad: Vec<(&str, &str)> = import
        .untranslated
        .iter()
        .map(|u| (u.id.as_str(), u.reason.as_str()))
        .collect();
    assert_eq!(bad.len(), 2);
    assert_eq!(bad[0].0, "look-behind");
    assert!(bad[0].1.contains("regex"), "{}", bad[0].1);
    assert_eq!(bad[1].0, "pkcs12-file");
    assert!(bad[1].1.contains("path-only"));
    assert!(
        import
            .notes
            .iter()
            .any(|n| n.contains("scoped") && n.contains("AND"))
    );
    assert_eq!(import.rules[0].allowlist.stopwords, ["dummy"]);

    let mut b = RuleSetBuilder::with_default_pack().unwrap();
    let report = b.add_gitleaks(cfg, "gl.toml").unwrap();
    assert_eq!(report.rules.len(), 2);
    let s = SecretScanner::new(b.build().unwrap());
    let found = s.scan(b"ACME_KEY = 'acme_q8w7e6r5t4y3u2i1o9p8a7s6'");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].rule_id, "acme-api-key");
    assert!(s.scan(b"acme_key=acme_000000000000000000000000").is_empty());
    assert!(
        import_gitleaks("[[rules]\n", "broken.toml")
            .unwrap_err()
            .to_string()
            .contains("broken.toml")
    );
}

#[test]
fn bad_rule_files_are_clear_errors() {
    let mut b = RuleSetBuilder::new();
    let err = b
        .add_toml(
            "[[rule]]\nid = \"x\"\ndescription = \"d\"\nregex = \"(\"\n",
            "bad.toml",
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.toml") && err.contains("`x`") && err.contains("regex"),
        "{err}"
    );
    let err = b
        .add_toml(
            "[[rule]]\nid = \"x\"\ndescription = \"d\"\nregex = \"a\"\nsecret_group = 3\n",
            "g.toml",
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("secret_group 3"), "{err}");
    let err = b
        .add_toml(
            "[[rule]]\nid = \"x\"\ndescription = \"d\"\nregx = \"a\"\n",
            "typo.toml",
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("regx"), "{err}");
    let mut b = RuleSetBuilder::with_default_pack().unwrap();
    let err = b
        .add_toml(
            "[[rule]]\nid = \"jwt\"\ndescription = \"d\"\nregex = \"a\"\n",
            "dup.toml",
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("duplicate rule id `jwt`"), "{err}");
}

fn pieces() -> Vec<String> {
    let mut v: Vec<String> = scanner()
        .rules()
        .rules()
        .iter()
        .flat_map(|r| {
            r.def()
                .examples
                .iter()
                .chain(&r.def().negative_examples)
                .cloned()
        })
        .collect();
    v.extend(
        [
            "\n",
            " ",
            "\"",
            "=",
            ":",
            "{\"k\": ",
            "}",
            "data:image/png;base64,",
            "%41",
            "\\u0041",
            "row 1  0.52  eu-west-1\n",
            "3f2b8c4e-9d1a-4e6f-8b2c-7a9d0e1f2a3b",
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        ]
        .map(String::from),
    );
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn after_redaction_nothing_is_found(idx in prop::collection::vec(any::<prop::sample::Index>(), 1..12),
                                        noise in "[ -~\n]{0,40}") {
        let p = pieces();
        let mut text = noise.clone();
        for i in idx {
            text.push_str(&p[i.index(p.len())]);
        }
        let (redacted, _) = scanner().redact(text.as_bytes());
        let again = scanner().scan(&redacted);
        prop_assert!(again.is_empty(), "{again:?} in {}", String::from_utf8_lossy(&redacted));
    }

    #[test]
    fn streaming_finds_what_a_whole_scan_finds(idx in prop::collection::vec(any::<prop::sample::Index>(), 1..12),
                                               cuts in prop::collection::vec(1usize..3000, 1..40)) {
        let p = pieces();
        let filler = "ts=2026-11-30 level=info msg=ok\n".repeat(1500);
        let mut text = String::new();
        for i in idx {
            text.push_str(&p[i.index(p.len())]);
            text.push_str(&filler[..(text.len() * 7919) % filler.len()]);
        }
        let bytes = text.as_bytes();
        let whole = scanner().scan(bytes);
        let mut stream = scanner().stream();
        let mut found = Vec::new();
        let mut at = 0;
        for c in cuts.iter().cycle() {
            if at >= bytes.len() { break; }
            let end = (at + c * 37).min(bytes.len());
            found.extend(stream.feed(&bytes[at..end]));
            at = end;
        }
        found.extend(stream.finish());
        prop_assert_eq!(found, whole);
    }
}
