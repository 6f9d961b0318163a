//! Exporting an installed runtime as an OCI image layout tarball (`oci-archive`), the
//! same runtime the native sandbox uses, for container executors.
//!
//! The image has one uncompressed layer holding:
//! - the runtime's tree at `/runtime` (the sandbox's place for it), entry point
//!   `/runtime/bin/python3` (or the base interpreter for runtimes without a tree);
//! - the base interpreter at its host path, with every link leading to it, and for
//!   Python its standard library (`sysconfig`'s `stdlib`, without the host's
//!   `dist-packages`);
//! - every shared library `ldd` finds for the interpreter and for each `*.so` of the
//!   tree and the standard library, with the links leading to them (the loader, and
//!   merged-`/usr` links such as `/lib64`);
//! - `/etc/passwd` and `/etc/group` naming the unprivileged user (1000), empty `/tmp`,
//!   `/work` and `/out` (`/tmp` and `/work` mode 1777: the tmpfs a container mounts there
//!   gets that mode from runc).
//!
//! The config sets the runtime's environment, `User 1000:1000` and `WorkingDir /work`.
use crate::{Installed, RuntimeError};
use sha2::{Digest, Sha256};
use skillgate_core::Language;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `installed` as an OCI image layout tarball to `out`; returns the manifest's
/// digest (`sha256:...`).
pub fn export_oci_archive(installed: &Installed, out: &Path) -> Result<String, RuntimeError> {
    let io = |what: String| move |e: std::io::Error| RuntimeError::io(what, e);
    let scratch = tempfile::tempdir().map_err(io("creating a scratch directory".into()))?;
    let layer_path = scratch.path().join("layer.tar");
    let layer_file = std::fs::File::create(&layer_path)
        .map_err(io(format!("creating {}", layer_path.display())))?;
    let mut layer = tar::Builder::new(layer_file);
    layer.follow_symlinks(false);
    let mut added = BTreeSet::new();
    let mut elf = Vec::new();

    // The runtime's tree.
    let entry = match &installed.interpreter.tree {
        Some(tree) => {
            layer
                .append_dir_all("runtime", tree)
                .map_err(io(format!("adding {}", tree.display())))?;
            collect_so(tree, &mut elf)?;
            let rel = installed
                .interpreter
                .program
                .strip_prefix(tree)
                .unwrap_or(Path::new("bin/python3"));
            Path::new("/runtime").join(rel)
        }
        None => installed.base_program.clone(),
    };
    // The base interpreter, its standard library, and the libraries they load.
    add_path(&mut layer, &mut added, &installed.base_program)?;
    elf.push(installed.base_program.clone());
    if installed.language == Language::Python {
        let stdlib = python_stdlib(&installed.base_program)?;
        add_path(&mut layer, &mut added, &stdlib)?;
        collect_so(&stdlib, &mut elf)?;
    }
    for lib in ldd(&elf, installed.interpreter.tree.as_deref())? {
        add_path(&mut layer, &mut added, &lib)?;
    }
    for (name, text) in [
        (
            "etc/passwd",
            "root:x:0:0:root:/:/usr/sbin/nologin\nskill:x:1000:1000:skill:/work:/usr/sbin/nologin\n",
        ),
        ("etc/group", "root:x:0:\nskill:x:1000:\n"),
    ] {
        append_bytes(&mut layer, name, text.as_bytes(), 0o644)?;
    }
    // /tmp and /work are sticky and open to every uid: a runtime (runc) gives the tmpfs
    // a container mounts there the mode of this folder, whatever the mount asks for.
    for dir in ["tmp", "work", "out"] {
        let scratch = dir != "out";
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Directory);
        h.set_mode(if scratch { 0o1777 } else { 0o755 });
        h.set_uid(if scratch { 0 } else { 1000 });
        h.set_gid(if scratch { 0 } else { 1000 });
        h.set_size(0);
        layer
            .append_data(&mut h, dir, std::io::empty())
            .map_err(io(format!("adding /{dir}")))?;
    }
    layer
        .into_inner()
        .map_err(io("finishing the layer".into()))?
        .sync_all()
        .ok();

    let layer_digest = crate::manifest::sha256_file(&layer_path)?;
    let layer_size = std::fs::metadata(&layer_path)
        .map_err(io("reading the layer".into()))?
        .len();
    let mut env: Vec<String> = vec![
        "PATH=/usr/local/bin:/usr/bin:/bin".into(),
        "LANG=C.UTF-8".into(),
    ];
    env.extend(installed.env.iter().map(|(k, v)| format!("{k}={v}")));
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": arch,
        "os": "linux",
        "config": {
            "User": "1000:1000",
            "WorkingDir": "/work",
            "Env": env,
            "Entrypoint": [entry],
            "Labels": { "org.skillgate.runtime": installed.name },
        },
        "rootfs": { "type": "layers", "diff_ids": [format!("sha256:{layer_digest}")] },
    }))
    .map_err(|e| RuntimeError::io("encoding the image config", std::io::Error::other(e)))?;
    let config_digest = hex::encode(Sha256::digest(&config));
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": format!("sha256:{config_digest}"),
            "size": config.len(),
        },
        "layers": [{
            "mediaType": "application/vnd.oci.image.layer.v1.tar",
            "digest": format!("sha256:{layer_digest}"),
            "size": layer_size,
        }],
    }))
    .map_err(|e| RuntimeError::io("encoding the image manifest", std::io::Error::other(e)))?;
    let manifest_digest = hex::encode(Sha256::digest(&manifest));
    let index = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": format!("sha256:{manifest_digest}"),
            "size": manifest.len(),
            "annotations": { "org.opencontainers.image.ref.name": installed.name },
        }],
    }))
    .map_err(|e| RuntimeError::io("encoding the image index", std::io::Error::other(e)))?;

    // Written next to `out` and renamed, so a failure leaves no partial archive.
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::NamedTempFile::new_in(parent)
        .map_err(io(format!("creating a file in {}", parent.display())))?;
    let mut archive = tar::Builder::new(tmp);
    append_bytes(
        &mut archive,
        "oci-layout",
        br#"{"imageLayoutVersion":"1.0.0"}"#,
        0o644,
    )?;
    append_bytes(&mut archive, "index.json", &index, 0o644)?;
    append_bytes(
        &mut archive,
        &format!("blobs/sha256/{manifest_digest}"),
        &manifest,
        0o644,
    )?;
    append_bytes(
        &mut archive,
        &format!("blobs/sha256/{config_digest}"),
        &config,
        0o644,
    )?;
    archive
        .append_path_with_name(&layer_path, format!("blobs/sha256/{layer_digest}"))
        .map_err(io("adding the layer".into()))?;
    let mut tmp = archive
        .into_inner()
        .map_err(io("finishing the archive".into()))?;
    tmp.flush().map_err(io("writing the archive".into()))?;
    // Readable like any file written by a command (a temporary file starts 0600).
    let mut perms = tmp
        .as_file()
        .metadata()
        .map_err(io("reading the archive's permissions".into()))?
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o644);
    tmp.as_file()
        .set_permissions(perms)
        .map_err(io(format!("writing {}", out.display())))?;
    tmp.persist(out)
        .map_err(|e| RuntimeError::io(format!("writing {}", out.display()), e.error))?;
    Ok(format!("sha256:{manifest_digest}"))
}

fn append_bytes<W: Write>(
    b: &mut tar::Builder<W>,
    name: &str,
    bytes: &[u8],
    mode: u32,
) -> Result<(), RuntimeError> {
    let mut h = tar::Header::new_gnu();
    h.set_size(bytes.len() as u64);
    h.set_mode(mode);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, name, bytes)
        .map_err(|e| RuntimeError::io(format!("adding {name}"), e))
}

/// Adds host path `p` at the same path: every link met on the way (in a parent or the
/// path itself) is added as a link and followed; a directory is added whole.
fn add_path<W: Write>(
    b: &mut tar::Builder<W>,
    added: &mut BTreeSet<PathBuf>,
    p: &Path,
) -> Result<(), RuntimeError> {
    let mut todo = vec![p.to_path_buf()];
    let mut hops = 0;
    while let Some(p) = todo.pop() {
        hops += 1;
        if hops > 256 {
            return Err(RuntimeError::io(
                format!("too many links resolving {}", p.display()),
                std::io::ErrorKind::InvalidData.into(),
            ));
        }
        let mut cur = PathBuf::from("/");
        let comps: Vec<_> = p.components().skip(1).collect();
        let mut followed = false;
        for (i, c) in comps.iter().enumerate() {
            cur.push(c);
            let m = std::fs::symlink_metadata(&cur)
                .map_err(|e| RuntimeError::io(format!("reading {}", cur.display()), e))?;
            if m.file_type().is_symlink() {
                let target = std::fs::read_link(&cur)
                    .map_err(|e| RuntimeError::io(format!("reading {}", cur.display()), e))?;
                if added.insert(cur.clone()) {
                    let rel = cur.strip_prefix("/").unwrap_or(&cur);
                    b.append_path_with_name(&cur, rel)
                        .map_err(|e| RuntimeError::io(format!("adding {}", cur.display()), e))?;
                }
                let mut next = cur.parent().unwrap_or(Path::new("/")).join(target);
                for rest in &comps[i + 1..] {
                    next.push(rest);
                }
                todo.push(next);
                followed = true;
                break;
            }
        }
        if followed || !added.insert(cur.clone()) {
            continue;
        }
        let rel = cur.strip_prefix("/").unwrap_or(&cur).to_path_buf();
        let result = if cur.is_dir() {
            b.append_dir_all(&rel, &cur)
        } else {
            b.append_path_with_name(&cur, &rel)
        };
        result.map_err(|e| RuntimeError::io(format!("adding {}", cur.display()), e))?;
    }
    Ok(())
}

/// Every `*.so*` regular file under `dir`.
fn collect_so(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), RuntimeError> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let rd = std::fs::read_dir(&d)
            .map_err(|e| RuntimeError::io(format!("reading {}", d.display()), e))?;
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() && e.file_name().to_string_lossy().contains(".so") {
                out.push(p);
            }
        }
    }
    Ok(())
}

/// The shared libraries `ldd` resolves for `files` (absolute host paths), except those
/// inside `tree` (a wheel's bundled libraries, already in the image).
fn ldd(files: &[PathBuf], tree: Option<&Path>) -> Result<BTreeSet<PathBuf>, RuntimeError> {
    let mut libs = BTreeSet::new();
    for chunk in files.chunks(200) {
        let out = Command::new("ldd")
            .args(chunk)
            .output()
            .map_err(|e| RuntimeError::io("running ldd", e))?;
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let path = match line.split_once("=>") {
                Some((_, right)) => right.split_whitespace().next(),
                None => line
                    .split_whitespace()
                    .next()
                    .filter(|w| w.starts_with('/')),
            };
            if let Some(p) = path.filter(|p| p.starts_with('/')) {
                let p = PathBuf::from(p);
                if !tree.is_some_and(|t| p.starts_with(t)) && p.exists() {
                    libs.insert(p);
                }
            }
        }
    }
    Ok(libs)
}

/// The standard library directory of a Python interpreter.
fn python_stdlib(program: &Path) -> Result<PathBuf, RuntimeError> {
    let out = Command::new(program)
        .args([
            "-I",
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .map_err(|e| RuntimeError::io(format!("running {}", program.display()), e))?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !out.status.success() || !dir.is_absolute() || !dir.is_dir() {
        return Err(RuntimeError::io(
            format!("{} did not name its standard library", program.display()),
            std::io::ErrorKind::NotFound.into(),
        ));
    }
    Ok(dir)
}
