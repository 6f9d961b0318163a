//! The emitted OCI profile in a real OCI runtime: a runc bundle whose rootfs holds the
//! static probe, with `linux.seccomp` set to the emitted `python` preset. Inside the
//! container an allowed call succeeds and the denied ones fail with the profile's errno;
//! the same bundle without the profile shows the calls behaving differently, so it is
//! the profile doing it.
mod common;

use common::{probe, probe_results};
use oci_spec::runtime::{LinuxSeccomp, Spec};
use skillgate_confine::{Arch, oci, preset};
use std::path::Path;
use std::process::Command;

fn runc_available() -> std::path::PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain(["/usr/sbin".into(), "/usr/bin".into(), "/sbin".into()])
        .map(|d| d.join("runc"))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| {
        panic!("runc is not installed: this test needs a real OCI runtime (apt-get install runc)")
    })
}

/// Runs the probe in a fresh container with `seccomp`, returning the probe's results.
fn run_in_container(
    runc: &Path,
    seccomp: Option<LinuxSeccomp>,
    calls: &[&str],
) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle");
    let rootfs = bundle.join("rootfs");
    std::fs::create_dir_all(&rootfs).unwrap();
    std::fs::copy(probe(), rootfs.join("probe")).unwrap();

    let mut spec = Spec::default();
    let process = spec.process_mut().as_mut().unwrap();
    let mut args = vec!["/probe".to_string()];
    args.extend(calls.iter().map(|c| c.to_string()));
    process.set_args(Some(args));
    process.set_terminal(Some(false));
    let linux = spec.linux_mut().as_mut().unwrap();
    linux.set_seccomp(seccomp);
    spec.save(bundle.join("config.json")).unwrap();

    let id = format!(
        "skillgate-confine-{}-{}",
        std::process::id(),
        dir.path().file_name().unwrap().to_string_lossy()
    );
    let state = dir.path().join("state");
    let out = Command::new(runc)
        .arg("--root")
        .arg(&state)
        .args(["run", "--bundle"])
        .arg(&bundle)
        .arg(&id)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    // `run` removes the container when it exits; delete covers a failed start.
    let _ = Command::new(runc)
        .arg("--root")
        .arg(&state)
        .args(["delete", "--force", &id])
        .output();
    assert!(
        out.status.success(),
        "runc run failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    probe_results(&out)
}

#[test]
fn runc_enforces_the_emitted_profile() {
    let runc = runc_available();
    let arch = Arch::native().expect("x86_64 or aarch64");
    let profile = preset("python").unwrap();
    let emitted = oci::to_json(&profile, &[arch]).unwrap();
    // The JSON reads back into the oci-spec type unchanged: it is what runtimes parse.
    let parsed: LinuxSeccomp = serde_json::from_str(&emitted).unwrap();
    assert_eq!(parsed, oci::to_oci(&profile, &[arch]).unwrap());

    let calls = [
        "getpid",
        "thread",
        "socket_unix",
        "ptrace",
        "unshare",
        "socket_inet",
        "clone3",
    ];
    let with = run_in_container(&runc, Some(parsed), &calls);
    let without = run_in_container(&runc, None, &calls);
    let get = |r: &[(String, String)], k: &str| {
        r.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{k} missing: {r:?}"))
    };

    // Allowed calls succeed inside the container.
    for allowed in ["getpid", "thread", "socket_unix"] {
        assert!(
            get(&with, allowed).starts_with("ret="),
            "{allowed}: {with:?}"
        );
    }
    // Denied calls fail with the profile's errno...
    for denied in ["ptrace", "unshare", "socket_inet"] {
        assert_eq!(get(&with, denied), "errno=1", "{denied}: {with:?}");
    }
    assert_eq!(get(&with, "clone3"), "errno=38", "{with:?}");
    // ...and without the profile they do not: ptrace(-1) fails otherwise (ESRCH or EIO),
    // unshare(0) succeeds, inet sockets open, clone3(NULL) gives EINVAL or EFAULT.
    assert_ne!(get(&without, "ptrace"), "errno=1", "{without:?}");
    assert_eq!(get(&without, "unshare"), "ret=0", "{without:?}");
    assert!(
        get(&without, "socket_inet").starts_with("ret="),
        "{without:?}"
    );
    assert_ne!(get(&without, "clone3"), "errno=38", "{without:?}");
}
