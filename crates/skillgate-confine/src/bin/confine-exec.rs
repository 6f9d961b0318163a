//! `confine-exec`: runs a command under a seccomp preset, without a sandbox around it.
//!
//! ```text
//! confine-exec [--preset NAME | --preset-file FILE] [--kill] [--inet] -- PROGRAM [ARGS...]
//! ```
//!
//! It compiles the profile for this machine's architecture, installs the filters on its
//! own (single) thread and `exec`s the program, which inherits them. The tests use it to
//! show presets running real skills and denying what they must; it is also a quick way to
//! try a preset on a workload. Exit code 125 means the filter could not be set up.
use skillgate_confine::profile::{permit_inet, with_violation};
use skillgate_confine::{Arch, Violation, bpf, load_preset, preset};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

fn fail(msg: &str) -> ExitCode {
    eprintln!("confine-exec: {msg}");
    ExitCode::from(125)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut preset_name = String::from("strict");
    let mut preset_file: Option<PathBuf> = None;
    let mut violation = Violation::Errno;
    let mut inet = false;
    let mut command: Vec<String> = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--preset" => match args.next() {
                Some(n) => preset_name = n,
                None => return fail("--preset needs a name"),
            },
            "--preset-file" => match args.next() {
                Some(p) => preset_file = Some(p.into()),
                None => return fail("--preset-file needs a path"),
            },
            "--kill" => violation = Violation::Kill,
            "--inet" => inet = true,
            "--" => {
                command = args.by_ref().collect();
                break;
            }
            other => return fail(&format!("unknown argument `{other}`")),
        }
    }
    let Some((program, rest)) = command.split_first() else {
        return fail(
            "usage: confine-exec [--preset NAME | --preset-file FILE] [--kill] [--inet] -- PROGRAM [ARGS...]",
        );
    };
    let profile = match &preset_file {
        Some(path) => load_preset(path),
        None => preset(&preset_name),
    };
    let mut profile = match profile {
        Ok(p) => with_violation(p, violation.action()),
        Err(e) => return fail(&e.to_string()),
    };
    if inet {
        permit_inet(&mut profile);
    }
    let Some(arch) = Arch::native() else {
        return fail("this architecture is not supported (x86_64 and aarch64 are)");
    };
    let filters = match bpf::compile(&profile, arch) {
        Ok(f) => f,
        Err(e) => return fail(&e.to_string()),
    };
    if let Err(e) = bpf::install(&filters) {
        return fail(&e.to_string());
    }
    let err = Command::new(program).args(rest).exec();
    fail(&format!("cannot execute {program}: {err}"))
}
