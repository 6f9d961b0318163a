//! The code a kernel executes for one run: the skill wrapped so that it reads its input
//! from `sys.stdin`, and its exit code can be read back.
//!
//! A kernel has no process stdin and no exit code, so the prelude:
//! - decodes the skill's source and its input from base64 literals (never interpolated
//!   as code: base64's alphabet cannot close a Python string), and sets `sys.stdin` to a
//!   text stream over the input (with a `.buffer` for binary reads), and `input()` to
//!   read its lines (a kernel's own `input()` asks the client, which allows none);
//! - runs the source as `__main__` in a fresh namespace;
//! - turns `SystemExit` into an exit code as the interpreter does (`None` is 0, an int is
//!   taken modulo 256, anything else is printed to stderr and is 1), and an uncaught
//!   exception into exit 1 with its traceback on stderr (the prelude's own frame left
//!   out);
//! - stores the code in [`EXIT_VARIABLE`], which the execute request reads back through
//!   its `user_expressions`.
use base64::Engine as _;

/// The kernel variable holding the run's exit code after the prelude ran.
pub const EXIT_VARIABLE: &str = "_skillgate_exit";

/// The code a kernel executes to run `source` with `input` on its stdin; `filename` is
/// the name tracebacks show.
pub fn prelude(source: &[u8], input: &[u8], filename: &str) -> String {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let filename = serde_json::to_string(filename).unwrap_or_else(|_| "\"skill.py\"".into());
    format!(
        r#"def _skillgate_run():
    import base64, builtins, io, sys, traceback
    source = base64.b64decode("{source}")
    data = base64.b64decode("{input}")
    saved_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    def read_line(prompt=""):
        if prompt:
            sys.stdout.write(str(prompt))
        line = sys.stdin.readline()
        if not line:
            raise EOFError("EOF when reading a line")
        return line[:-1] if line.endswith("\n") else line
    names = dict(vars(builtins))
    names["input"] = read_line
    code = 0
    try:
        exec(compile(source, {filename}, "exec"), {{"__name__": "__main__", "__builtins__": names}})
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code & 0xFF
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException as e:
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        code = 1
    finally:
        sys.stdin = saved_stdin
        sys.stdout.flush()
        sys.stderr.flush()
    return code
{exit} = _skillgate_run()
del _skillgate_run
"#,
        source = b64(source),
        input = b64(input),
        exit = EXIT_VARIABLE,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Runs the prelude in a plain interpreter (it needs nothing of a kernel) and prints
    /// the exit variable on a last line of stdout.
    fn run(source: &str, input: &str) -> (String, String, i32) {
        let code = format!(
            "{}\nimport sys\nprint()\nprint({EXIT_VARIABLE})\n",
            prelude(source.as_bytes(), input.as_bytes(), "skill.py")
        );
        let out = Command::new("python3")
            .args(["-c", &code])
            .output()
            .expect("python3 runs");
        assert!(out.status.success(), "{out:?}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let (body, exit) = stdout.trim_end().rsplit_once('\n').unwrap();
        (
            body.trim_end_matches('\n').to_string(),
            String::from_utf8(out.stderr).unwrap(),
            exit.parse().unwrap(),
        )
    }

    #[test]
    fn the_input_is_stdin_and_the_output_stdout() {
        let (out, _, code) = run(
            "import json,sys\nd=json.load(sys.stdin)\nprint(json.dumps({'sum': sum(d['n'])}))\n",
            r#"{"n": [1, 2, 3]}"#,
        );
        assert_eq!((out.as_str(), code), (r#"{"sum": 6}"#, 0));
    }

    #[test]
    fn input_that_looks_like_code_stays_data() {
        // Quotes, newlines, backslashes and a would-be injection come back byte for byte.
        let input = "\"\"\"'''\\\n\"); import os; os._exit(9) #";
        let (out, _, code) = run("import sys\nsys.stdout.write(sys.stdin.read())\n", input);
        assert_eq!((out.as_str(), code), (input, 0));
        let (out, _, _) = run(
            "import sys\nsys.stdout.write(sys.stdin.buffer.read().hex())\n",
            "é",
        );
        assert_eq!(out, "c3a9");
    }

    #[test]
    fn input_reads_lines_of_the_input() {
        let (out, _, code) = run(
            "a = input()\nb = input('> ')\ntry:\n    input()\nexcept EOFError:\n    print('eof', a, b)\n",
            "one\ntwo",
        );
        assert_eq!((out.as_str(), code), ("> eof one two", 0));
    }

    #[test]
    fn system_exit_becomes_the_exit_code() {
        assert_eq!(run("import sys\nsys.exit(3)\n", "").2, 3);
        assert_eq!(run("import sys\nsys.exit()\n", "").2, 0);
        assert_eq!(run("import sys\nsys.exit(256 + 7)\n", "").2, 7);
        let (_, err, code) = run("import sys\nsys.exit('bad input')\n", "");
        assert_eq!((err.as_str(), code), ("bad input\n", 1));
    }

    #[test]
    fn an_uncaught_exception_is_exit_1_with_its_traceback() {
        let (_, err, code) = run("def f():\n    raise ValueError('nope')\nf()\n", "");
        assert_eq!(code, 1);
        assert!(err.contains("ValueError: nope"), "{err}");
        assert!(err.contains("File \"skill.py\", line 3"), "{err}");
        assert!(!err.contains("_skillgate_run"), "{err}");
    }

    #[test]
    fn the_skill_runs_as_main_without_the_kernels_names() {
        let (out, _, _) = run(
            "print(__name__, '_skillgate_run' in globals(), 'sys' in globals())\n",
            "",
        );
        assert_eq!(out, "__main__ False False");
    }
}
