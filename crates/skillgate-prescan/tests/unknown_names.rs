//! Names the scanner cannot pin down are blocked, never guessed (issue 19): an attribute
//! name on a module that does not fold to a constant (or would fold to a wrong one), and a
//! module name no import in the file binds.
use skillgate_core::Language;
mod common;

use common::scan;
use skillgate_prescan::Verdict;

fn assert_blocked(cases: &[&str], lang: Language) {
    for code in cases {
        let (verdict, ids) = scan(code, lang);
        assert_eq!(verdict, Verdict::Block, "{code}\n  findings: {ids:?}");
    }
}

/// Each name reaches `os.system` at run time; the folder used to fold it to some other
/// constant (ignoring a codec, a count, a format spec or Python's idea of white space).
#[test]
fn a_python_attribute_name_the_folder_cannot_compute_is_unknown_not_a_wrong_constant() {
    assert_blocked(
        &[
            // cp1026 (EBCDIC) given by keyword, or to str()/bytes()
            "import os\ngetattr(os, b'\\xa2\\xa8\\xa2\\xa3\\x85\\x94'.decode(encoding='cp1026'))('id')",
            "import os\ngetattr(os, str(b'\\xa2\\xa8\\xa2\\xa3\\x85\\x94', 'cp1026'))('id')",
            "import os\nimport codecs\ngetattr(os, codecs.decode(b'\\xa2\\xa8\\xa2\\xa3\\x85\\x94', encoding='cp1026'))('id')",
            "import os\ngetattr(os, bytes('system', 'utf-16').decode('utf-16'))('id')",
            // a replace count, a maxsplit and a format spec change the text
            "import os\ngetattr(os, 'system'.replace('s', 'S', 0))('id')",
            "import os\ngetattr(os, 'x.sys.tem'.split('.', 1)[1].replace('.', ''))('id')",
            "import os\ngetattr(os, '{:.6}'.format('systemd'))('id')",
            // Python strips the information separators
            "import os\ngetattr(os, '\\x1fsystem'.strip())('id')",
            // str.translate and a filtered comprehension do not fold
            "import os\ngetattr(os, 'sxstem'.translate({120: 121}))('id')",
            "import os\ngetattr(os, ''.join(c for c in 'sy_stem' if c != '_'))('id')",
        ],
        Language::Python,
    );
}

#[test]
fn a_computed_lookup_in_a_module_namespace_is_blocked() {
    assert_blocked(
        &[
            "import os\nk = input()\nvars(os)[k]('id')",
            "import os\nk = input()\nos.__dict__[k]('id')",
            "import os\nk = input()\nos.__dict__.get(k)('id')",
            "k = input()\nvars()[k]('id')",
            "import operator, os\nk = input()\noperator.attrgetter(k)(os)('id')",
            "import operator, os\noperator.methodcaller('system', 'id')(os)",
        ],
        Language::Python,
    );
    // A constant harmless key stays harmless.
    let (verdict, ids) = scan(
        "import os\nprint(os.__dict__['sep'])\nprint(vars(os)['sep'])",
        Language::Python,
    );
    assert_ne!(verdict, Verdict::Block, "{ids:?}");
}

#[test]
fn a_module_no_import_binds_is_read_as_that_module() {
    assert_blocked(
        &[
            // an injected global
            "os.system('id')",
            "subprocess.run(['id'])",
            "def f():\n    return os.popen('id').read()",
            // a star import of a module that imported os
            "from helpers import *\nos.system('id')",
            "from helpers import *\nx = os\nx.system('id')",
            // a parameter of that name elsewhere does not hide the module here
            "from helpers import *\ndef _(os):\n    pass\nos.system('id')",
            "from helpers import *\nf = lambda subprocess: subprocess\nsubprocess.run(['id'])",
            "from helpers import *\n[os for os in ()]\nos.system('id')",
        ],
        Language::Python,
    );
    // The same names bound in the file are not modules: a parameter, a local, a loop
    // variable, an assignment of something unknown.
    for code in [
        "def f(os):\n    return os.system('linux')",
        "def g():\n    subprocess = make()\n    return subprocess.run()",
        "for os in ['linux']:\n    print(os.system)",
        "profile = load()\nprint(profile.run())",
        "def h(*, code=None):\n    return code.interact",
    ] {
        let (verdict, ids) = scan(code, Language::Python);
        assert_eq!(verdict, Verdict::Allow, "{code}\n  findings: {ids:?}");
    }
}

/// Each string folds to `child_process` in Node; the folder used to fold it to another
/// (a warning for an unlisted module at most).
#[test]
fn a_javascript_module_name_the_folder_cannot_compute_is_unknown_not_a_wrong_constant() {
    assert_blocked(
        &[
            // fromCharCode takes its codes modulo 2^16
            "require(String.fromCharCode(0x10063, 104, 105, 108, 100, 95, 112, 114, 111, 99, 101, 115, 115))",
            // full-width letters normalised; a byte-order mark trimmed
            "require('\\uff43hild_process'.normalize('NFKC'))",
            "require('\\ufeffchild_process'.trim())",
            // encodings that change the bytes
            "require(Buffer.from('\\u00e3hild_process', 'latin1').toString('ascii'))",
            "require('child_process_x'.split('_', 2).join('_'))",
        ],
        Language::JavaScript,
    );
}

/// Thousands of functions each binding the name: their own uses stay unflagged, and a free
/// use after them is still read as the module.
#[test]
fn many_scopes_binding_a_name_neither_hide_a_free_use_nor_flag_their_own() {
    let mut own = String::new();
    for i in 0..2000 {
        own.push_str(&format!("def f{i}(os):\n    return os.system\n"));
    }
    let (verdict, ids) = scan(&own, Language::Python);
    assert_eq!(verdict, Verdict::Allow, "{ids:?}");
    let free = format!("{own}from helpers import *\nos.system('id')\n");
    let (verdict, ids) = scan(&free, Language::Python);
    assert_eq!(verdict, Verdict::Block, "{ids:?}");
    assert!(ids.iter().any(|i| i == "py.process.os-exec"), "{ids:?}");
}
