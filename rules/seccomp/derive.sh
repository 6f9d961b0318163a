#!/usr/bin/env bash
# Re-derives the seccomp presets rules/seccomp/{python,node,strict,shell}.toml by
# measurement.
#
# How: every workload below runs under `strace -f -c` (all threads and children, a count
# of each system call); the union of the calls seen is the preset's allow-list. Then:
#   - calls on the never-allowed list (see NEVER below and issue 6) are dropped, whatever
#     the trace says: a workload that needs them does not run in a skillgate sandbox;
#   - clone, clone3, socket and socketpair are never allowed by name: they get argument
#     rules instead (clone without namespace flags; socket/socketpair for AF_UNIX only,
#     the network layer adds AF_INET/AF_INET6 when the network policy allows destinations;
#     clone3 fails with ENOSYS, because BPF cannot read its flags, and libc falls back to
#     clone);
#   - BASE is added: what a sandbox needs between installing the filter and the
#     interpreter's first instruction (execve and the exit and signal-return calls);
#   - COMMON is added to python and node (not strict): calls a skill's own code commonly
#     makes that one traced run may miss (sleeping, polling, directory and file
#     housekeeping inside its sandbox, waiting for its own children). None of them
#     reaches outside the process's own files, memory, children or clock.
# Presets:
#   python  the example Python skill plus pandas, numpy and matplotlib workloads
#   node    the example JavaScript skill
#   strict  the example skills only (both languages): the tightest measured set
#   shell   a session's shell step: dash running the shell allow-list's commands
#
# Needs: strace, /usr/bin/python3 with python3-pandas and python3-matplotlib, node, dash.
#   apt-get install -y strace python3-pandas python3-matplotlib nodejs
# Usage: rules/seccomp/derive.sh [PRESET...]            (writes the presets, default all)
#        rules/seccomp/derive.sh --check [PRESET...]    (fails if committed presets differ)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-/usr/bin/python3}"
node="${NODE:-$(command -v node)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
check=0
[[ "${1:-}" == "--check" ]] && check=1 && shift
only=("$@")
# want NAME...: whether any of the presets NAME is asked for (all are, by default).
want() {
  [[ ${#only[@]} -eq 0 ]] && return 0
  local n
  for n in "$@"; do [[ " ${only[*]} " == *" $n "* ]] && return 0; done
  return 1
}

# trace NAME INPUT DIR CMD...: runs CMD in DIR (skills run from their folder, with
# relative paths, as a sandbox runs them) and writes the sorted call names to
# $work/NAME.calls
trace() {
  local name="$1" input="$2" dir="$3"; shift 3
  (cd "$dir" && SKILLGATE_OUTPUT_DIR="$work" strace -f -qq -c -o "$work/$name.strace" "$@" <"$input" >"$work/$name.out")
  awk 'NF>=5 && $NF ~ /^[a-z_0-9]+$/ && $NF != "syscall" && $NF != "total" {print $NF}' \
    "$work/$name.strace" | sort -u >"$work/$name.calls"
  echo "traced $name: $(wc -l <"$work/$name.calls") distinct calls" >&2
}

skills="$root/examples/skills"
loads="$root/corpora/confine/workloads"
echo '{"n": 48, "series": [3, 1, 4, 1, 5, 9, 2, 6], "data": [{"k": 1, "v": 2.5}, {"k": 1, "v": 3.5}, {"k": 2, "v": 1.0}]}' >"$work/load-input.json"

if want python strict; then
  trace py-example "$skills/analyze-rows/sample-input.json" "$skills/analyze-rows" "$py" scripts/main.py
fi
if want node strict; then
  trace js-example "$skills/count-items/sample-input.json" "$skills/count-items" "$node" scripts/main.js
fi
if want python; then
  trace py-pandas "$work/load-input.json" "$loads" "$py" pandas_stats.py
  trace py-numpy "$work/load-input.json" "$loads" "$py" numpy_linalg.py
  trace py-matplotlib "$work/load-input.json" "$loads" "$py" matplotlib_plot.py
fi
if want shell; then
  # In a scratch folder of its own: the step writes and removes files where it runs.
  mkdir "$work/sh-scratch"
  trace sh-example "$work/load-input.json" "$work/sh-scratch" dash "$loads/shell_pipeline.sh"
fi

"$py" - "$work" "$here" "$check" "${only[@]}" <<'PY'
import datetime, pathlib, sys

work, out_dir, check = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3] == "1"
only = set(sys.argv[4:])
NEVER = set("""ptrace process_vm_readv process_vm_writev mount umount2 pivot_root chroot unshare
setns bpf perf_event_open keyctl add_key request_key userfaultfd io_uring_setup io_uring_enter
io_uring_register kexec_load kexec_file_load init_module finit_module delete_module reboot
swapon swapoff acct open_by_handle_at name_to_handle_at personality fsopen fsmount fsconfig
move_mount open_tree mount_setattr iopl ioperm quotactl lookup_dcookie vhangup""".split())
CONDITIONAL = {"clone", "clone3", "socket", "socketpair"}
BASE = {"execve", "exit", "exit_group", "rt_sigreturn", "rt_sigprocmask", "restart_syscall"}
COMMON = set("""clock_gettime clock_getres clock_nanosleep nanosleep gettimeofday time poll ppoll
select pselect6 epoll_create1 epoll_ctl epoll_wait epoll_pwait eventfd2 pipe pipe2 dup dup2 dup3
getcwd chdir fchdir getdents64 stat lstat fstat newfstatat statx readv writev pread64 pwrite64
ftruncate fsync fdatasync flock rename renameat renameat2 unlink unlinkat mkdir mkdirat rmdir
readlink readlinkat umask sched_yield sched_getaffinity getppid getpgrp getpid gettid getrusage
times wait4 waitid sigaltstack tgkill mremap msync madvise membarrier futex getrandom
close_range fadvise64 fcntl ioctl lseek uname sysinfo prlimit64""".split())

def calls(*names):
    seen = set()
    for n in names:
        seen |= set((work / f"{n}.calls").read_text().split())
    return seen

PRESETS = {  # name: (description, traced runs, add COMMON)
    "python": ("Python skills: the standard library, pandas, numpy and matplotlib.",
               ["py-example", "py-pandas", "py-numpy", "py-matplotlib"], True),
    "node": ("JavaScript skills on Node.js with its built-in modules.", ["js-example"], True),
    "strict": ("The example skills of both languages and nothing more: the tightest measured set.",
               ["py-example", "js-example"], False),
    "shell": ("Shell steps: dash and the commands of the shell allow-list.",
              ["sh-example"], True),
}
SOURCES = {
    "py-example": "examples/skills/analyze-rows",
    "js-example": "examples/skills/count-items",
    "py-pandas": "corpora/confine/workloads/pandas_stats.py",
    "py-numpy": "corpora/confine/workloads/numpy_linalg.py",
    "py-matplotlib": "corpora/confine/workloads/matplotlib_plot.py",
    "sh-example": "corpora/confine/workloads/shell_pipeline.sh",
}
RULES = '''
# clone for threads and processes, never with a namespace flag (CLONE_NEWNS, NEWCGROUP,
# NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME: mask 0x7E020080).
[[rules]]
names = ["clone"]
action = { action = "allow" }
args = [{ index = 0, op = { masked_eq = 0x7E020080 }, value = 0 }]

# clone3 passes its flags in memory, which BPF cannot read: fail it with ENOSYS so libc
# falls back to clone, whose flags the rule above checks.
[[rules]]
names = ["clone3"]
action = { action = "errno", errno = 38 }

# Sockets of the unix family only; the network layer adds AF_INET and AF_INET6 when the
# run's network policy allows destinations.
[[rules]]
names = ["socket", "socketpair"]
action = { action = "allow" }
args = [{ index = 0, op = "eq", value = 1 }]
'''

status = 0
for name, (description, runs, common) in PRESETS.items():
    if only and name not in only:
        continue
    seen = calls(*runs) | (COMMON if common else set())
    dropped = sorted(seen & NEVER)
    allow = sorted((seen | BASE) - NEVER - CONDITIONAL)
    lines = [
        f"# Seccomp preset `{name}`, derived by measurement: rules/seccomp/derive.sh traced",
        *[f"#   {SOURCES[r]}" for r in runs],
        "# under `strace -f -c`; the allow-list is the union of the calls seen plus the",
        "# exec/exit/signal-return base" + (" and the common housekeeping calls" if common else "") + ", minus the never-allowed list. Re-run the script to",
        "# re-derive it; edit the script, not this file.",
    ]
    if dropped:
        lines.append(f"# Seen but never allowed (they fail with the violation action): {', '.join(dropped)}.")
    lines += [
        f'name = "{name}"',
        f'description = "{description}"',
        'violation = "errno"',
        "allow = [",
        *[f'  "{c}",' for c in allow],
        "]",
    ]
    text = "\n".join(lines) + "\n" + RULES
    path = out_dir / f"{name}.toml"
    if check:
        if not path.exists() or path.read_text() != text:
            print(f"{path} differs from a fresh derivation", file=sys.stderr)
            status = 1
    else:
        path.write_text(text)
        print(f"wrote {path}: {len(allow)} allowed calls", file=sys.stderr)
sys.exit(status)
PY
