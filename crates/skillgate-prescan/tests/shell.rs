//! The shell pre-scan (tree-sitter-bash): every command of a shell step, wherever it
//! stands, is a literal word on the allow-list; what runs strings or other programs,
//! computed names, network and out-of-workspace redirections, and code that does not
//! parse are blocked; suppression comments change nothing.
use skillgate_core::{Language, Severity};
use skillgate_prescan::{
    PreScanner, RuleSet, ScanOptions, ScanReport, UnknownModuleAction, Verdict,
};
use std::sync::Arc;

fn scan(code: &str) -> ScanReport {
    PreScanner::new()
        .expect("the default packs load")
        .scan(code.as_bytes(), Language::Shell)
}

fn ids(r: &ScanReport) -> Vec<&str> {
    r.findings.iter().map(|f| f.rule_id.as_str()).collect()
}

/// Blocked, with a finding of `rule`.
#[track_caller]
fn blocked_by(code: &str, rule: &str) {
    let r = scan(code);
    assert_eq!(r.verdict, Verdict::Block, "{code:?}: {:?}", r.findings);
    assert!(
        ids(&r).contains(&rule),
        "{code:?}: wanted {rule}, got {:?}",
        ids(&r)
    );
}

#[test]
fn a_pipeline_of_listed_commands_is_allowed() {
    for code in [
        "sort data.csv | head -n 3 > top.csv",
        "cat data.csv | cut -d, -f1 | tr a-z A-Z | uniq | wc -l",
        "mkdir -p out && cp top.csv out/ || echo failed >&2",
        "for f in a b; do echo \"$f\" >> /tmp/list; done; test -s /tmp/list",
        "if grep -q x data.csv; then echo yes; else echo no; fi 2>/dev/null",
        "n=$(wc -l < data.csv); printf '%s\\n' \"$n\" > /out/count.txt",
        "# a comment\nls -la",
        "",
    ] {
        let r = scan(code);
        assert_eq!(r.verdict, Verdict::Allow, "{code:?}: {:?}", r.findings);
    }
}

#[test]
fn an_unlisted_command_is_blocked_wherever_it_stands() {
    // `foo` is on no list and no rule: only the allow-list can catch it.
    for code in [
        "foo",
        "ls | foo",
        "ls && foo",
        "ls || foo",
        "ls; foo",
        "foo &",
        "( foo )",
        "{ foo; }",
        "! foo",
        "echo $(foo)",
        "echo `foo`",
        "echo \"$(foo)\"",
        "cat <(foo)",
        "echo ${x:-$(foo)}",
        "if foo; then ls; fi",
        "if ls; then foo; elif ls; then ls; else ls; fi",
        "if ls; then ls; else foo; fi",
        "for f in a; do foo; done",
        "for ((i = 0; i < 2; i++)); do foo; done",
        "while foo; do ls; done",
        "until ls; do foo; done",
        "case x in x) foo ;; esac",
        "f() { foo; }",
        "function f { foo; }",
        "x=$(foo)",
        "export x=$(foo)",
        "[ \"$(foo)\" = y ]",
        "/bin/ls",
        "./ls",
    ] {
        let r = scan(code);
        assert_eq!(r.verdict, Verdict::Block, "{code:?}: {:?}", r.findings);
        let unlisted: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.rule_id == "sh.command.unlisted")
            .collect();
        assert!(!unlisted.is_empty(), "{code:?}: {:?}", ids(&r));
        assert!(unlisted.iter().all(|f| f.severity == Severity::Critical));
    }
}

#[test]
fn a_shell_function_is_not_a_listed_command() {
    // The body is checked, and calling the function is a command off the list.
    blocked_by(
        "show() { cat \"$1\"; }\nshow data.csv",
        "sh.command.unlisted",
    );
}

#[test]
fn the_allow_list_is_strict_whatever_unknown_module_says() {
    let scanner = PreScanner::with_rules(
        Arc::new(RuleSet::embedded().unwrap()),
        ScanOptions {
            unknown_module: UnknownModuleAction::Warn,
            ..ScanOptions::default()
        },
    );
    let r = scan_with(&scanner, "foo");
    assert_eq!(r.verdict, Verdict::Block, "{:?}", r.findings);
}

fn scan_with(scanner: &PreScanner, code: &str) -> ScanReport {
    scanner.scan(code.as_bytes(), Language::Shell)
}

#[test]
fn a_computed_command_name_is_blocked() {
    for code in [
        "$(echo rm) x",
        "`echo rm` x",
        "$cmd x",
        "${cmd} x",
        "\"rm\" x",
        "'ls'",
        "l\\s",
        "l\"s\"",
        "l*",
    ] {
        blocked_by(code, "sh.command.dynamic");
    }
}

#[test]
fn commands_that_run_strings_or_other_programs_are_blocked() {
    for (code, rule) in [
        ("eval 'rm -rf /workspace'", "sh.command.eval"),
        ("exec cat data.csv", "sh.command.eval"),
        (". ./x.sh", "sh.command.eval"),
        ("source ./x.sh", "sh.command.eval"),
        ("command rm x", "sh.command.eval"),
        ("builtin echo x", "sh.command.eval"),
        ("sh -c 'rm -rf /workspace'", "sh.command.runs-another"),
        ("bash -c ls", "sh.command.runs-another"),
        ("env rm x", "sh.command.runs-another"),
        ("ls | xargs rm", "sh.command.runs-another"),
        ("python3 -c 'print(1)'", "sh.command.runs-another"),
        ("curl http://127.0.0.1:9/x", "sh.command.network"),
        (
            "sort --compress-program=sh data.csv",
            "sh.sort.compress-program",
        ),
        ("sort $opt data.csv", "sh.sort.compress-program"),
        ("PATH=/workspace ls", "sh.assign.environment"),
    ] {
        blocked_by(code, rule);
    }
}

#[test]
fn redirections_are_parsed_and_checked() {
    for (code, rule) in [
        ("cat </dev/tcp/127.0.0.1/1", "sh.redirect.network"),
        ("echo x > /dev/udp/127.0.0.1/53", "sh.redirect.network"),
        ("echo x > /etc/profile", "sh.redirect.outside"),
        ("cat < /proc/self/environ", "sh.redirect.outside"),
        ("echo x >> ../x", "sh.redirect.outside"),
        ("echo x &> /root/x", "sh.redirect.outside"),
        ("ls 2>> /var/log/x", "sh.redirect.outside"),
        ("echo x > $f", "sh.redirect.dynamic"),
        ("echo x > \"$HOME/x\"", "sh.redirect.dynamic"),
        ("echo x > ~/x", "sh.redirect.dynamic"),
        ("echo $(cat < /etc/passwd)", "sh.redirect.outside"),
        ("f() { echo x > /etc/x; }", "sh.redirect.outside"),
        ("ls > >(cat)", "sh.redirect.dynamic"),
    ] {
        blocked_by(code, rule);
    }
}

#[test]
fn a_redirection_the_grammar_does_not_know_is_blocked() {
    // `<>` (read-write) is not in tree-sitter-bash's file_redirect: whatever the parser
    // makes of it, the step is blocked (a parse error, or the pieces' own findings).
    let r = scan("exec 3<>/dev/tcp/127.0.0.1/80");
    assert_eq!(r.verdict, Verdict::Block, "{:?}", r.findings);
}

#[test]
fn text_the_scanner_and_the_shell_could_cut_differently_is_blocked() {
    for code in [
        // The shell joins `tr` and `ap` into `trap`.
        "tr\\\nap 'cat secret' EXIT",
        "echo x\rcurl http://x",
        "cat <<EOF\n$(foo)\nEOF\n",
        "cat <<-EOF\n\tx\n\tEOF\n",
    ] {
        blocked_by(code, "sh.source.ambiguous");
    }
}

#[test]
fn a_substitution_the_parse_does_not_see_is_blocked() {
    for code in [
        // Nested in backticks, escaped backticks are a substitution to the shell.
        "echo `echo \\`curl x\\``",
        // tree-sitter-bash reads the backticks in this default as a word.
        "echo ${x:-`curl x`}",
    ] {
        blocked_by(code, "sh.source.unparsed-substitution");
    }
    for code in [
        "echo '`curl x` $(curl x)'",
        "ls # `curl x`",
        "echo `date` $(date)",
    ] {
        let r = scan(code);
        assert_eq!(r.verdict, Verdict::Allow, "{code:?}: {:?}", r.findings);
    }
}

#[test]
fn arithmetic_with_a_substitution_is_blocked() {
    let r = scan("echo $(( $(foo) + 1 ))");
    assert_eq!(r.verdict, Verdict::Block, "{:?}", r.findings);
}

#[test]
fn code_that_does_not_parse_is_blocked() {
    for code in [
        "echo (",
        "if ls; then echo",
        "ls |",
        "echo \"unterminated",
        "case x in",
    ] {
        blocked_by(code, "prescan.parse-error");
    }
}

#[test]
fn suppression_comments_are_never_honoured() {
    for code in [
        "curl http://x # nosec",
        "# nosec\ncurl http://x",
        "# skillgate: allow sh.command.network\ncurl http://x",
        "curl http://x # noqa # pragma: no cover # nolint",
    ] {
        blocked_by(code, "sh.command.network");
    }
}

#[test]
fn huge_or_deeply_nested_input_is_a_clear_finding() {
    let huge = "echo x\n".repeat(200_000);
    blocked_by(&huge, "prescan.too-large");
    let deep = format!("{}ls{}", "( ".repeat(400), " )".repeat(400));
    blocked_by(&deep, "prescan.too-deep");
    let subst = format!("echo {}x{}", "$(echo ".repeat(400), ")".repeat(400));
    blocked_by(&subst, "prescan.too-deep");
}

#[test]
fn a_replacing_rules_folder_without_shell_packs_allows_no_command() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/prescan");
    for lang in ["python", "javascript"] {
        std::fs::create_dir(dir.path().join(lang)).unwrap();
        std::fs::copy(
            root.join(lang).join("process.toml"),
            dir.path().join(lang).join("process.toml"),
        )
        .unwrap();
    }
    let rules = Arc::new(RuleSet::load_dir(dir.path()).expect("loads without shell/"));
    let scanner = PreScanner::with_rules(rules, ScanOptions::default());
    let r = scan_with(&scanner, "ls");
    assert_eq!(r.verdict, Verdict::Block, "{:?}", r.findings);
    assert_eq!(ids(&r), ["sh.command.unlisted"]);
}
