//! Prints every finding of every corpus file (for comparing builds).
fn main() {
    let sc = skillgate_prescan::PreScanner::new().unwrap();
    let mut stack: Vec<std::path::PathBuf> = std::env::args().skip(1).map(Into::into).collect();
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p)
            } else {
                files.push(p)
            }
        }
    }
    files.sort();
    for p in files {
        let lang = match p.extension().and_then(|x| x.to_str()) {
            Some("py") => skillgate_core::Language::Python,
            Some("js" | "mjs" | "cjs") => skillgate_core::Language::JavaScript,
            _ => continue,
        };
        let code = std::fs::read(&p).unwrap();
        let r = sc.scan(&code, lang);
        println!("{} {:?}", p.display(), r.verdict);
        for f in r.findings {
            println!("  {} {:?} {:?}", f.rule_id, f.location, f.snippet);
        }
    }
}
