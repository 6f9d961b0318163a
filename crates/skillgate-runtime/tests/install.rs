//! Installing runtimes for real (a virtualenv over `/usr/bin/python3`, pip with
//! `--require-hashes`), offline from a wheel folder this test builds: success, no-op
//! reinstall, detection of changes, and bad input leaving nothing behind.
use skillgate_runtime::{Definition, InstallOptions, RuntimeError, Store};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds `skgdemo-1.0-py3-none-any.whl` (module `skgdemo`, `VALUE = 42`) in `dir` and
/// returns its sha256.
fn demo_wheel(dir: &Path) -> String {
    let script = r#"
import base64, hashlib, sys, zipfile
files = {
    "skgdemo/__init__.py": b"VALUE = 42\n",
    "skgdemo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: skgdemo\nVersion: 1.0\n",
    "skgdemo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def h(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
record = "".join(f"{n},{h(b)},{len(b)}\n" for n, b in files.items()) + "skgdemo-1.0.dist-info/RECORD,,\n"
path = sys.argv[1] + "/skgdemo-1.0-py3-none-any.whl"
with zipfile.ZipFile(path, "w") as z:
    for n, b in files.items():
        z.writestr(n, b)
    z.writestr("skgdemo-1.0.dist-info/RECORD", record)
print(hashlib.sha256(open(path, "rb").read()).hexdigest())
"#;
    let out = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn def(name: &str, package: &str, hash: &str) -> Definition {
    Definition::parse(
        name,
        &format!(
            "language = \"python\"\ninterpreter = \"/usr/bin/python3\"\n[env]\nMPLBACKEND = \"Agg\"\n\
             [[packages]]\nname = \"{package}\"\nversion = \"1.0\"\nsha256 = [\"{hash}\"]\n"
        ),
        "test",
    )
    .unwrap()
}

struct Fixture {
    _t: tempfile::TempDir,
    store: Store,
    opts: InstallOptions,
    hash: String,
}

fn fixture() -> Fixture {
    let t = tempfile::tempdir().unwrap();
    let wheels = t.path().join("wheels");
    std::fs::create_dir(&wheels).unwrap();
    let hash = demo_wheel(&wheels);
    Fixture {
        store: Store::new(t.path().join("runtimes")),
        opts: InstallOptions {
            wheel_cache: wheels,
            offline: true,
            force: false,
        },
        hash,
        _t: t,
    }
}

/// The entries of the store's directory (nothing half-installed may stay).
fn entries(store: &Store) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(store.root())
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn import_value(program: &Path) -> String {
    let out = Command::new(program)
        .args([
            "-c",
            "import skgdemo, sys; print(skgdemo.VALUE, sys.prefix != sys.base_prefix)",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn installs_into_a_content_addressed_dir_and_again_is_a_no_op() {
    let f = fixture();
    let d = def("demo", "skgdemo", &f.hash);
    assert!(matches!(
        f.store.resolve(&d),
        Err(RuntimeError::NotInstalled { .. })
    ));
    let mut steps = Vec::new();
    let inst = f
        .store
        .install(&d, &f.opts, &mut |s| steps.push(s.to_string()))
        .unwrap();
    let name = inst.dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("demo-") && name.len() == "demo-".len() + 16,
        "{name}"
    );
    assert_eq!(entries(&f.store), [name]);
    // The store (often inside the monitor's state directory, which it may create) is private.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(f.store.root())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    assert!(inst.interpreter.program.ends_with("env/bin/python3"));
    assert_eq!(inst.interpreter.prefix, PathBuf::from("/usr"));
    assert_eq!(inst.env["MPLBACKEND"], "Agg");
    assert_eq!(import_value(&inst.interpreter.program), "42 True");
    assert_eq!(f.store.resolve(&d).unwrap(), inst);
    assert_eq!(
        f.store.list().unwrap(),
        [("demo".to_string(), inst.dir.clone())]
    );

    // Again: nothing is built, and the tree is untouched.
    let before = std::fs::metadata(inst.dir.join("env"))
        .unwrap()
        .modified()
        .unwrap();
    let mut again = Vec::new();
    let second = f
        .store
        .install(&d, &f.opts, &mut |s| again.push(s.to_string()))
        .unwrap();
    assert_eq!(second, inst);
    assert_eq!(again, ["already installed"]);
    assert_eq!(
        std::fs::metadata(inst.dir.join("env"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );
    assert!(f.store.verify(&d).unwrap().differences.is_empty());
}

#[test]
fn a_runtime_changed_after_install_is_detected_and_refused_until_forced() {
    let f = fixture();
    let d = def("demo", "skgdemo", &f.hash);
    let inst = f.store.install(&d, &f.opts, &mut |_| {}).unwrap();
    let site = inst.dir.join("env/lib/python3.11/site-packages");
    std::fs::write(site.join("evil.pth"), "import os; os.system('id')\n").unwrap();
    let err = f.store.resolve(&d).unwrap_err().to_string();
    assert!(
        err.contains("changed after it was installed") && err.contains("--force"),
        "{err}"
    );
    let report = f.store.verify(&d).unwrap();
    assert_eq!(
        report.differences,
        ["added: lib/python3.11/site-packages/evil.pth"]
    );
    // Installing again does not paper over it...
    let err = f.store.install(&d, &f.opts, &mut |_| {}).unwrap_err();
    assert!(matches!(err, RuntimeError::Modified { .. }), "{err}");
    // ...unless forced, which replaces it whole.
    let forced = InstallOptions {
        force: true,
        ..f.opts.clone()
    };
    let again = f.store.install(&d, &forced, &mut |_| {}).unwrap();
    assert!(
        !again
            .dir
            .join("env/lib/python3.11/site-packages/evil.pth")
            .exists()
    );
    assert!(f.store.verify(&d).unwrap().differences.is_empty());
    assert_eq!(entries(&f.store).len(), 1, "{:?}", entries(&f.store));
}

#[test]
fn a_hash_mismatch_or_a_missing_package_fails_clearly_and_leaves_nothing() {
    let f = fixture();
    let wrong = "0".repeat(64);
    let err = f
        .store
        .install(&def("demo", "skgdemo", &wrong), &f.opts, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("installing runtime `demo` failed"), "{err}");
    assert!(err.contains("HASHES"), "pip's own words: {err}");
    assert!(entries(&f.store).is_empty(), "{:?}", entries(&f.store));

    let err = f
        .store
        .install(&def("demo", "skgnothere", &f.hash), &f.opts, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("skgnothere"), "{err}");
    assert!(entries(&f.store).is_empty(), "{:?}", entries(&f.store));
}

#[test]
fn a_wrong_python_version_or_an_unresolvable_interpreter_is_refused() {
    let f = fixture();
    let d = Definition::parse(
        "old",
        "language = \"python\"\ninterpreter = \"/usr/bin/python3\"\npython_version = \"2.7\"\n",
        "t",
    )
    .unwrap();
    let err = f
        .store
        .install(&d, &f.opts, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs 2.7"), "{err}");
    // A shim that cannot say where its interpreter is.
    let shim = f.store.root().parent().unwrap().join("python3");
    std::fs::write(&shim, "#!/bin/sh\nexit 3\n").unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(&shim)
        .status()
        .unwrap();
    let d = Definition::parse(
        "shim",
        &format!(
            "language = \"python\"\ninterpreter = \"{}\"\n",
            shim.display()
        ),
        "t",
    )
    .unwrap();
    let err = f
        .store
        .install(&d, &f.opts, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cannot be resolved to a real executable"),
        "{err}"
    );
    assert!(entries(&f.store).is_empty());
}

#[test]
fn concurrent_installs_of_one_runtime_both_succeed_with_one_directory() {
    let f = fixture();
    let d = def("demo", "skgdemo", &f.hash);
    let results: Vec<_> = std::thread::scope(|s| {
        let a = s.spawn(|| f.store.install(&d, &f.opts, &mut |_| {}));
        let b = s.spawn(|| f.store.install(&d, &f.opts, &mut |_| {}));
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    let dirs: Vec<_> = results.into_iter().map(|r| r.unwrap().dir).collect();
    assert_eq!(dirs[0], dirs[1]);
    assert_eq!(entries(&f.store).len(), 1, "{:?}", entries(&f.store));
    assert!(f.store.verify(&d).unwrap().differences.is_empty());
}

// An install killed mid-way (SIGKILL) cannot remove its scratch tree; the next install
// removes those whose process is gone, and leaves a live install's and anything else alone.
#[test]
fn the_next_install_removes_what_a_killed_install_left() {
    let f = fixture();
    let root = f.store.root().to_path_buf();
    std::fs::create_dir_all(&root).unwrap();
    // A process that has exited: its pid names no running process (until reused, which
    // a fresh child's pid right after it exits is not in practice).
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let mine = std::process::id();
    for d in [
        format!("tmp-{dead}-abc/tree/lib"),
        format!("old-{dead}-xyz/runtime"),
        format!("tmp-{mine}-live/tree"),
        "tmp-notapid/tree".to_string(),
        "unrelated/tree".to_string(),
    ] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let d = def("demo", "skgdemo", &f.hash);
    let inst = f.store.install(&d, &f.opts, &mut |_| {}).unwrap();
    let name = inst.dir.file_name().unwrap().to_string_lossy().into_owned();
    let mut want = vec![
        name,
        format!("tmp-{mine}-live"),
        "tmp-notapid".to_string(),
        "unrelated".to_string(),
    ];
    want.sort();
    assert_eq!(entries(&f.store), want);
}
