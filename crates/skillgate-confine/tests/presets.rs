//! The presets as data: they load, they never allow what the issue forbids (checked with
//! the reference semantics, including argument conditions), and they emit valid OCI.
use skillgate_confine::profile::{
    AF_INET, AF_INET6, AF_UNIX, CLONE_NAMESPACE_FLAGS, NEVER_ALLOWED, evaluate,
};
use skillgate_confine::{Arch, Violation, oci, parse_preset, preset, preset_names};
use skillgate_core::SeccompAction;

const NAMESPACE_FLAGS: &[(&str, u64)] = &[
    ("CLONE_NEWNS", 0x0002_0000),
    ("CLONE_NEWCGROUP", 0x0200_0000),
    ("CLONE_NEWUTS", 0x0400_0000),
    ("CLONE_NEWIPC", 0x0800_0000),
    ("CLONE_NEWUSER", 0x1000_0000),
    ("CLONE_NEWPID", 0x2000_0000),
    ("CLONE_NEWNET", 0x4000_0000),
    ("CLONE_NEWTIME", 0x0000_0080),
];

fn allowed(a: SeccompAction) -> bool {
    matches!(a, SeccompAction::Allow | SeccompAction::Log)
}

#[test]
fn there_are_the_four_presets() {
    assert_eq!(preset_names(), vec!["python", "node", "strict", "shell"]);
}

#[test]
fn no_preset_allows_a_never_allowed_call_with_any_arguments() {
    let samples: [[u64; 6]; 4] = [
        [0; 6],
        [u64::MAX; 6],
        [1, 2, 3, 4, 5, 6],
        [AF_INET, 1, 0, 0, 0, 0],
    ];
    for name in preset_names() {
        let p = preset(name).unwrap();
        assert_eq!(
            p.default_action,
            SeccompAction::Errno(1),
            "{name}: EPERM by default"
        );
        for call in NEVER_ALLOWED {
            for args in &samples {
                let a = evaluate(&p, call, args);
                assert!(!allowed(a), "{name} allows {call}({args:?}): {a:?}");
            }
            assert!(
                !p.syscalls
                    .iter()
                    .any(|r| allowed(r.action) && r.names.iter().any(|n| n == call)),
                "{name}: no allowing rule may even name {call}"
            );
        }
    }
}

#[test]
fn clone_passes_without_namespace_flags_only_and_clone3_gets_enosys() {
    let mut all = 0;
    for (_, f) in NAMESPACE_FLAGS {
        all |= f;
    }
    assert_eq!(
        all, CLONE_NAMESPACE_FLAGS,
        "the mask is the union of the flags"
    );
    let thread_flags = 0x003d_0f00; // what glibc's pthread_create passes
    for name in preset_names() {
        let p = preset(name).unwrap();
        assert_eq!(
            evaluate(&p, "clone", &[17, 0, 0, 0, 0, 0]),
            SeccompAction::Allow,
            "{name}: fork"
        );
        assert_eq!(
            evaluate(&p, "clone", &[thread_flags, 0, 0, 0, 0, 0]),
            SeccompAction::Allow,
            "{name}: threads"
        );
        for (flag_name, flag) in NAMESPACE_FLAGS {
            let a = evaluate(&p, "clone", &[flag | 17, 0, 0, 0, 0, 0]);
            assert!(!allowed(a), "{name}: clone with {flag_name} is {a:?}");
        }
        assert_eq!(
            evaluate(&p, "clone3", &[0; 6]),
            SeccompAction::Errno(38),
            "{name}"
        );
    }
}

#[test]
fn sockets_are_unix_only() {
    for name in preset_names() {
        let p = preset(name).unwrap();
        for call in ["socket", "socketpair"] {
            assert_eq!(
                evaluate(&p, call, &[AF_UNIX, 1, 0, 0, 0, 0]),
                SeccompAction::Allow,
                "{name}"
            );
            for family in [
                AF_INET, AF_INET6, 16, /* netlink */
                17, /* packet */
                40, /* vsock */
            ] {
                assert!(
                    !allowed(evaluate(&p, call, &[family, 1, 0, 0, 0, 0])),
                    "{name}: {call} family {family}"
                );
            }
        }
    }
}

#[test]
fn presets_are_generated_by_the_committed_derivation_script() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules/seccomp");
    let script = std::fs::read_to_string(dir.join("derive.sh")).unwrap();
    for name in preset_names() {
        let text = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
        assert!(
            text.starts_with(&format!(
                "# Seccomp preset `{name}`, derived by measurement"
            )),
            "{name}"
        );
        assert!(
            script.contains(&format!("\"{name}\": (")),
            "derive.sh makes {name}"
        );
    }
    // The script's never-allowed list covers the crate's.
    for call in NEVER_ALLOWED {
        assert!(script.contains(call), "derive.sh drops {call}");
    }
}

#[test]
fn bad_preset_files_are_clear_errors() {
    let err = parse_preset("name = \"x\"\nallow = [\"read\", \"opne\"]\n", "mine.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("opne"), "{err}");
    let err = parse_preset("name = \"x\"\nviolation = \"explode\"\n", "mine.toml")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("mine.toml") && err.contains("explode"),
        "{err}"
    );
    let err = parse_preset("name = \"x\"\nalow = []\n", "mine.toml")
        .unwrap_err()
        .to_string();
    assert!(err.contains("alow"), "{err}");
    let p = parse_preset(
        "name = \"x\"\nviolation = \"kill\"\nallow = [\"read\"]\n",
        "mine.toml",
    )
    .unwrap();
    assert_eq!(p.default_action, Violation::Kill.action());
}

#[test]
fn emitted_oci_json_reads_back_into_the_oci_spec_types_fully_resolved() {
    for name in preset_names() {
        let p = preset(name).unwrap();
        let json = oci::to_json(&p, &[]).unwrap();
        let parsed: oci_spec::runtime::LinuxSeccomp = serde_json::from_str(&json).unwrap();
        assert_eq!(parsed, oci::to_oci(&p, &[]).unwrap(), "{name}");
        // Inside a whole runtime spec too.
        let mut spec = oci_spec::runtime::Spec::default();
        spec.linux_mut().as_mut().unwrap().set_seccomp(Some(parsed));
        let text = serde_json::to_string(&spec).unwrap();
        let back: oci_spec::runtime::Spec = serde_json::from_str(&text).unwrap();
        assert_eq!(back, spec);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        for docker_only in ["includes", "excludes", "minKernel", "comment"] {
            assert!(!json.contains(docker_only), "{name}: {docker_only}");
        }
        assert_eq!(
            value["architectures"],
            serde_json::json!(["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"])
        );
        // Every name is a real system call somewhere; the clone rule carries its mask.
        for rule in value["syscalls"].as_array().unwrap() {
            for n in rule["names"].as_array().unwrap() {
                assert!(Arch::is_known_anywhere(n.as_str().unwrap()), "{n}");
            }
        }
        let clone = value["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["names"] == serde_json::json!(["clone"]))
            .unwrap();
        assert_eq!(clone["args"][0]["op"], "SCMP_CMP_MASKED_EQ");
        assert_eq!(clone["args"][0]["value"], CLONE_NAMESPACE_FLAGS);
        assert_eq!(clone["args"][0]["valueTwo"], 0);
    }
}

#[test]
fn names_missing_on_an_architecture_are_left_out_there() {
    // `open` exists on x86_64 only: the aarch64 profile lists it nowhere.
    let p = parse_preset("name = \"x\"\nallow = [\"open\", \"openat\"]\n", "t").unwrap();
    let arm = serde_json::to_value(oci::to_oci(&p, &[Arch::Aarch64]).unwrap()).unwrap();
    let names: Vec<&str> = arm["syscalls"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r["names"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap())
        })
        .collect();
    assert!(
        names.contains(&"openat") && !names.contains(&"open"),
        "{names:?}"
    );
}
