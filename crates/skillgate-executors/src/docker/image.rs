//! The runtime's image in the engine: `skillgate runtime export NAME --format oci-archive`
//! writes it; [`load_oci_archive`] puts it into Docker Engine or Podman.
//!
//! Docker Engine 20.10's `/images/load` takes only its own `docker save` format, not an
//! OCI image layout, so the archive's single layer is imported through `/images/create`
//! (`fromSrc`), which both engines take (the image's user and working directory are not
//! carried over; every container sets its own). Nothing is pulled from a registry.
use bollard::Docker;
use bollard::query_parameters::CreateImageOptions;
use futures_util::StreamExt;
use skillgate_core::ExecError;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The image of the runtime `name`, as [`load_oci_archive`] names it.
pub fn runtime_image(name: &str) -> String {
    format!("skillgate-runtime-{name}:latest")
}

pub use crate::run_dir::program_in_container as program_in_image;

fn bad(archive: &Path, what: impl std::fmt::Display) -> ExecError {
    ExecError::Other(format!("OCI archive {}: {what}", archive.display()))
}

/// Reads one blob (`sha256:…`) of the OCI layout in `archive` into memory.
fn blob(archive: &Path, name: &str) -> Result<Vec<u8>, ExecError> {
    let file = std::fs::File::open(archive).map_err(|e| bad(archive, e))?;
    let mut tar = tar::Archive::new(file);
    for entry in tar.entries().map_err(|e| bad(archive, e))? {
        let mut entry = entry.map_err(|e| bad(archive, e))?;
        let path = entry.path().map_err(|e| bad(archive, e))?.into_owned();
        if path == Path::new(name) || path == Path::new(".").join(name) {
            let mut out = Vec::new();
            entry.read_to_end(&mut out).map_err(|e| bad(archive, e))?;
            return Ok(out);
        }
    }
    Err(bad(archive, format!("no `{name}` in it")))
}

fn blob_path(digest: &str) -> Option<String> {
    let hex = digest.strip_prefix("sha256:")?;
    hex.bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then(|| format!("blobs/sha256/{hex}"))
}

/// The path in `archive` of the image's single layer.
fn layer_of(archive: &Path) -> Result<String, ExecError> {
    let json = |bytes: Vec<u8>| -> Result<serde_json::Value, ExecError> {
        serde_json::from_slice(&bytes).map_err(|e| bad(archive, e))
    };
    let index = json(blob(archive, "index.json")?)?;
    let manifest = index["manifests"][0]["digest"]
        .as_str()
        .and_then(blob_path)
        .ok_or_else(|| bad(archive, "index.json names no manifest"))?;
    let manifest = json(blob(archive, &manifest)?)?;
    let layers = manifest["layers"].as_array().cloned().unwrap_or_default();
    match &layers[..] {
        [layer] => layer["digest"]
            .as_str()
            .and_then(blob_path)
            .ok_or_else(|| bad(archive, "the layer has no sha256 digest")),
        _ => Err(bad(
            archive,
            format!(
                "expected one layer (as `skillgate runtime export` writes), found {}",
                layers.len()
            ),
        )),
    }
}

/// The label naming the layer an image was imported from.
pub const LAYER_LABEL: &str = "io.skillgate.layer";

/// Imports the OCI archive `archive` (from `skillgate runtime export`) into the engine as
/// `image` (`name:tag`), labelled with its layer's digest ([`LAYER_LABEL`]). When `image` already holds that layer nothing is
/// imported; when it held another, that older image is removed (if no container uses it),
/// so loading again does not pile up images.
pub async fn load_oci_archive(
    docker: &Docker,
    archive: &Path,
    image: &str,
) -> Result<(), ExecError> {
    let (repo, tag) = image.rsplit_once(':').unwrap_or((image, "latest"));
    let archive_owned: PathBuf = archive.to_owned();
    let layer_path = tokio::task::spawn_blocking(move || layer_of(&archive_owned))
        .await
        .map_err(|e| ExecError::Other(format!("reading {}: {e}", archive.display())))??;
    let digest = layer_path.trim_start_matches("blobs/sha256/").to_string();
    let previous = docker.inspect_image(image).await.ok();
    let held = previous
        .as_ref()
        .and_then(|i| i.config.as_ref())
        .and_then(|c| c.labels.as_ref())
        .and_then(|l| l.get(LAYER_LABEL));
    if held == Some(&digest) {
        return Ok(());
    }
    let archive_owned: PathBuf = archive.to_owned();
    let layer = tokio::task::spawn_blocking(move || blob(&archive_owned, &layer_path))
        .await
        .map_err(|e| ExecError::Other(format!("reading {}: {e}", archive.display())))??;
    let opts = CreateImageOptions {
        from_src: Some("-".into()),
        repo: Some(repo.into()),
        tag: Some(tag.into()),
        // One change only: Podman's compatible import reads several as one line (the
        // user, working directory and the rest are set per container anyway).
        changes: vec![format!("LABEL {LAYER_LABEL}={digest}")],
        ..Default::default()
    };
    let mut progress = docker.create_image(
        Some(opts),
        Some(bollard::body_full(bytes::Bytes::from(layer))),
        None,
    );
    while let Some(step) = progress.next().await {
        let step = step.map_err(|e| ExecError::Other(format!("importing {image}: {e}")))?;
        if let Some(err) = step.error_detail.and_then(|d| d.message) {
            return Err(ExecError::Other(format!("importing {image}: {err}")));
        }
    }
    if let Some(old) = previous.and_then(|i| i.id) {
        // Untagged now; in use by a container, it stays (and is not an error).
        let _ = docker
            .remove_image(
                &old,
                None::<bollard::query_parameters::RemoveImageOptions>,
                None,
            )
            .await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sha256_digests_name_blobs() {
        assert_eq!(
            blob_path("sha256:ab12").as_deref(),
            Some("blobs/sha256/ab12")
        );
        assert_eq!(blob_path("sha256:../../etc"), None);
        assert_eq!(blob_path("md5:ab"), None);
    }
}
