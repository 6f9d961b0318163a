//! Skill folders from fuzz bytes (the `skill_folder` and `http_decode` targets).
//!
//! The format keeps the seeds readable: files are separated by a NUL byte; each file is
//! its path, a newline, and its contents. Paths are cleaned to safe relative ones (at most
//! three parts of `[A-Za-z0-9._-]`, no `..`), so a folder written from them stays inside
//! its temporary directory; the loader under test still sees odd names, empty files and
//! nested folders.

/// One file: a relative path and its bytes.
pub type File = (String, Vec<u8>);

/// The files `data` describes (the first wins when two clean to the same path).
pub fn split_files(data: &[u8]) -> Vec<File> {
    let mut files: Vec<File> = Vec::new();
    for part in data.split(|&b| b == 0) {
        let (path, body) = match part.iter().position(|&b| b == b'\n') {
            Some(i) => (&part[..i], &part[i + 1..]),
            None => (part, &[][..]),
        };
        let Some(path) = clean(path) else { continue };
        if files.iter().any(|(p, _)| {
            *p == path || p.starts_with(&format!("{path}/")) || path.starts_with(&format!("{p}/"))
        }) {
            continue;
        }
        files.push((path, body.to_vec()));
    }
    files
}

/// `raw` as a safe relative path, or `None`.
fn clean(raw: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(raw).ok()?;
    let parts: Vec<&str> = text.split('/').filter(|p| !p.is_empty()).collect();
    let ok = |p: &&str| {
        *p != "."
            && *p != ".."
            && p.len() <= 64
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    };
    (!parts.is_empty() && parts.len() <= 3 && parts.iter().all(ok)).then(|| parts.join("/"))
}

/// The inverse of [`split_files`], for writing seeds.
pub fn join_files(files: &[File]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, (path, body)) in files.iter().enumerate() {
        if i > 0 {
            out.push(0);
        }
        out.extend_from_slice(path.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(body);
    }
    out
}

/// Writes `files` under `dir` (which must exist).
pub fn write(dir: &std::path::Path, files: &[File]) -> std::io::Result<()> {
    for (path, body) in files {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(target, body)?;
    }
    Ok(())
}

/// `files` as a gzip-compressed tar, as a client would upload them.
pub fn tar_gz(files: &[File]) -> std::io::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (path, body) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(body.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, path, &body[..])?;
    }
    tar.into_inner()?.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_unsafe_paths() {
        let files = vec![
            ("SKILL.md".to_string(), b"---\nname: a\n---\n".to_vec()),
            ("scripts/main.py".to_string(), b"print(1)\x01".to_vec()),
        ];
        assert_eq!(split_files(&join_files(&files)), files);
        assert!(
            split_files(b"../x\nbody\0/etc/passwd\n\0a/./b\n")
                .iter()
                .all(|(p, _)| p == "etc/passwd")
        );
        assert!(
            split_files(b"a\n1\0a/b\n2").len() == 1,
            "a file and a folder of one name"
        );
    }
}
