//! The semantic pass over a shell command line (tree-sitter-bash).
//!
//! Every node of the tree is visited, whatever holds it (a pipeline, a list, a subshell,
//! `$(...)` or backticks, a process substitution, the body of an `if`, `for`, `while`,
//! `case` or function, a heredoc), so no command escapes the allow-list by where it
//! stands. The facts:
//!
//! | fact | emitted for |
//! |------|-------------|
//! | `command:N` | a command whose name is the literal word `N` (also checked against the allow-list, `[commands]` of the shell packs); `declare`, `export`, `local`, `readonly`, `typeset`, `unset` count as commands |
//! | `command-dynamic` | a command whose name is not a literal word (a variable, an expansion, a substitution, quoting, an escape) |
//! | `arg:N:A` | a literal argument `A` of command `N` |
//! | `arg-dynamic:N` | an argument of command `N` the shell expands (a variable, a substitution, a glob, an escape) |
//! | `assign:V` | an assignment to the variable `V` (`PATH=/x cmd`, `export PATH=/x`, `for PATH in /x`, `${PATH:=/x}`) |
//! | `redirect:P` | a redirection to or from the literal path `P` |
//! | `redirect-outside:P` | one whose path leaves the workspace, `/tmp` and `/out` |
//! | `redirect-dynamic` | a redirection whose target the shell expands |
//! | `heredoc` | a here-document (`<<EOF`) |
//! | `line-continuation` | a backslash-newline (anywhere, comments included) |
//! | `control-character` | a control character other than tab and newline |
//! | `substitution-unparsed` | a `$(` or backtick outside single quotes and comments that the parse did not read as a substitution, or a backslash inside backticks |
//!
//! The last three mark text the scanner and the shell could cut differently: a
//! here-document ends where a line holds only its delimiter, which the two must agree on
//! for the lines after it to be read as commands; a backslash-newline is dropped by the
//! shell, joining what tree-sitter reads as two words (`tr\⏎ap` runs `trap`); and
//! tree-sitter splits words at characters (`\r`, `\v`) the shell keeps inside them.
use crate::facts::{Ctx, Fact, walk};
use tree_sitter::Node;

/// The directories a redirection may name, besides relative paths (the working
/// directory is in the workspace).
const REDIRECT_ROOTS: [&str; 3] = [skillgate_core::WORKSPACE_DIR, "/tmp", "/out"];

/// Device files a redirection may name.
const REDIRECT_DEVICES: [&str; 4] = ["/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"];

/// The keywords tree-sitter-bash parses as their own statements, which run as commands.
const DECLARATIONS: [&str; 7] = [
    "declare", "typeset", "export", "readonly", "local", "unset", "unsetenv",
];

pub(crate) fn extract<'t>(
    root: Node<'t>,
    max_depth: usize,
    ctx: &mut Ctx<'_>,
) -> Result<(), Node<'t>> {
    ambiguous_bytes(ctx);
    let mut seen = Parsed::default();
    walk(root, max_depth, |node, _, _| {
        visit(node, ctx);
        seen.note(node, ctx);
        true
    })?;
    seen.unparsed_substitutions(ctx);
    Ok(())
}

/// What the parse made of the text that starts a substitution.
#[derive(Default)]
struct Parsed {
    /// Bytes where a `$(` or a backtick the parse understood stands (a command
    /// substitution's delimiters, an arithmetic expansion's `$((`).
    delimiters: std::collections::HashSet<usize>,
    /// Text the shell never expands: single-quoted strings and comments.
    inert: Vec<(usize, usize)>,
}

impl Parsed {
    fn note(&mut self, node: Node<'_>, ctx: &mut Ctx<'_>) {
        let (start, end) = (node.start_byte(), node.end_byte());
        match node.kind() {
            "command_substitution" => {
                self.delimiters.insert(start);
                if ctx.src.get(start) == Some(&b'`') {
                    self.delimiters.insert(end.saturating_sub(1));
                    // Inside backticks the shell drops a backslash before `, $ or \ and
                    // parses the text again: `\`cmd\`` nested in them runs cmd.
                    if ctx.text(node).contains('\\') {
                        ctx.emit("substitution-unparsed", node);
                    }
                }
            }
            "arithmetic_expansion" => {
                self.delimiters.insert(start);
            }
            "raw_string" | "ansi_c_string" | "comment" => self.inert.push((start, end)),
            _ => {}
        }
    }

    /// A fact for every `$(` and backtick of the source that is neither a delimiter the
    /// parse understood nor inside inert text: the shell would run what it holds, which
    /// the parse did not read as a command (`${x:-`cmd`}`).
    fn unparsed_substitutions(&self, ctx: &mut Ctx<'_>) {
        let src = ctx.src;
        for (i, &b) in src.iter().enumerate() {
            let opens = b == b'`' || (b == b'$' && src.get(i + 1) == Some(&b'('));
            if !opens
                || self.delimiters.contains(&i)
                || self.inert.iter().any(|&(s, e)| s <= i && i < e)
            {
                continue;
            }
            if ctx.facts.len() >= crate::facts::MAX_FACTS {
                ctx.overflow = true;
                return;
            }
            ctx.facts.push(Fact {
                name: "substitution-unparsed".to_string(),
                start: i,
                end: i + 1,
            });
        }
    }
}

/// Facts for the backslash-newlines and control characters of the source (comments
/// included).
fn ambiguous_bytes(ctx: &mut Ctx<'_>) {
    let src = ctx.src;
    for (i, &b) in src.iter().enumerate() {
        let name = match b {
            b'\\'
                if src.get(i + 1) == Some(&b'\n')
                    || src.get(i + 1..i + 3) == Some(&b"\r\n"[..]) =>
            {
                "line-continuation"
            }
            b'\t' | b'\n' => continue,
            0..=0x1f | 0x7f => "control-character",
            _ => continue,
        };
        if ctx.facts.len() >= crate::facts::MAX_FACTS {
            ctx.overflow = true;
            return;
        }
        ctx.facts.push(Fact {
            name: name.to_string(),
            start: i,
            end: i + 1,
        });
    }
}

fn visit(node: Node<'_>, ctx: &mut Ctx<'_>) {
    match node.kind() {
        "command" => command(node, ctx),
        "declaration_command" | "unset_command" => {
            if let Some(k) = node.child(0).filter(|k| DECLARATIONS.contains(&k.kind())) {
                named(k.kind(), k, ctx);
            }
        }
        "variable_assignment" => {
            if let Some(n) = node.child_by_field_name("name") {
                let var = match n.kind() {
                    "subscript" => n.child_by_field_name("name").unwrap_or(n),
                    _ => n,
                };
                let var = ctx.text(var).to_string();
                ctx.emit(format!("assign:{var}"), n);
            }
        }
        // `for PATH in /x; do ...` and `${PATH:=/x}` assign too.
        "for_statement" => {
            if let Some(v) = node.child_by_field_name("variable") {
                let var = ctx.text(v).to_string();
                ctx.emit(format!("assign:{var}"), v);
            }
        }
        "expansion" => {
            let assigns = (0..node.child_count())
                .filter_map(|i| node.child(i))
                .any(|c| matches!(c.kind(), "=" | ":="));
            let var = (0..node.named_child_count())
                .filter_map(|i| node.named_child(i))
                .find(|c| c.kind() == "variable_name");
            if let (true, Some(v)) = (assigns, var) {
                let var = ctx.text(v).to_string();
                ctx.emit(format!("assign:{var}"), v);
            }
        }
        "file_redirect" => redirect(node, ctx),
        "heredoc_redirect" => ctx.emit("heredoc", node),
        _ => {}
    }
}

/// A command: its name checked (a literal word, else `command-dynamic`), its arguments
/// recorded.
fn command(node: Node<'_>, ctx: &mut Ctx<'_>) {
    let Some(name) = node.child_by_field_name("name") else {
        return;
    };
    let word = name
        .named_child(0)
        .filter(|w| name.named_child_count() == 1 && w.kind() == "word")
        .and_then(|w| literal(w, ctx));
    let Some(cmd) = word else {
        ctx.emit("command-dynamic", name);
        return;
    };
    named(&cmd, name, ctx);
    let mut cursor = node.walk();
    let args: Vec<Node<'_>> = node
        .children_by_field_name("argument", &mut cursor)
        .collect();
    for a in args {
        match literal(a, ctx) {
            Some(text) => ctx.emit(format!("arg:{cmd}:{text}"), a),
            None => ctx.emit(format!("arg-dynamic:{cmd}"), a),
        }
    }
}

/// Records command `cmd` at `node`, for the rules and the allow-list.
fn named(cmd: &str, node: Node<'_>, ctx: &mut Ctx<'_>) {
    ctx.emit(format!("command:{cmd}"), node);
    ctx.imports
        .push((cmd.to_string(), node.start_byte(), node.end_byte()));
}

/// A redirection: each target is a literal path inside the allowed places, a file
/// descriptor (`2>&1`), or a fact that says why not.
fn redirect(node: Node<'_>, ctx: &mut Ctx<'_>) {
    let dup = (0..node.child_count())
        .filter_map(|i| node.child(i))
        .any(|c| matches!(c.kind(), "<&" | ">&" | "<&-" | ">&-"));
    let mut cursor = node.walk();
    let targets: Vec<Node<'_>> = node
        .children_by_field_name("destination", &mut cursor)
        .collect();
    for t in targets {
        let Some(path) = literal(t, ctx) else {
            ctx.emit("redirect-dynamic", t);
            continue;
        };
        let fd = path == "-" || (!path.is_empty() && path.bytes().all(|b| b.is_ascii_digit()));
        if dup && fd {
            continue;
        }
        ctx.emit(format!("redirect:{path}"), t);
        if outside(&path) {
            ctx.emit(format!("redirect-outside:{path}"), t);
        }
    }
}

/// Whether a redirection to `path` leaves the workspace, `/tmp` and `/out`: an absolute
/// path elsewhere (bar a few devices), or any path with a `..` component.
fn outside(path: &str) -> bool {
    if path.is_empty() || path.split('/').any(|c| c == "..") {
        return true;
    }
    if !path.starts_with('/') {
        return false;
    }
    !(REDIRECT_DEVICES.contains(&path)
        || REDIRECT_ROOTS
            .iter()
            .any(|r| path == *r || path.strip_prefix(r).is_some_and(|p| p.starts_with('/'))))
}

/// The value of a word the shell takes exactly as written: a bare word with no escape,
/// glob or tilde, a single-quoted string, or a double-quoted one with nothing expanded
/// or escaped in it. `None` for anything the shell would expand.
fn literal(node: Node<'_>, ctx: &Ctx<'_>) -> Option<String> {
    let text = ctx.text(node);
    match node.kind() {
        "word" | "number" => (!text.is_empty()
            && !text.contains(['\\', '~', '*', '?', '[', '{', '$', '`']))
        .then(|| text.to_string()),
        "raw_string" => text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .map(str::to_string),
        "string" => {
            let plain = (0..node.named_child_count())
                .filter_map(|i| node.named_child(i))
                .all(|c| c.kind() == "string_content");
            if !plain || text.contains(['\\', '$', '`']) {
                return None;
            }
            text.strip_prefix('"')
                .and_then(|t| t.strip_suffix('"'))
                .map(str::to_string)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::outside;

    #[test]
    fn redirect_targets_stay_in_the_workspace_tmp_and_out() {
        for inside in [
            "top.csv",
            "sub/dir/x",
            "/workspace/a",
            "/tmp/x",
            "/out/chart.png",
            "/dev/null",
            "/dev/stderr",
        ] {
            assert!(!outside(inside), "{inside}");
        }
        for away in [
            "/etc/passwd",
            "../x",
            "a/../../x",
            "/tmp/../etc/x",
            "/tmpfoo",
            "/workspaces/x",
            "/dev/tcp/127.0.0.1/1",
            "",
        ] {
            assert!(outside(away), "{away}");
        }
    }
}
