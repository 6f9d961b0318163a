//! `export_oci_archive`: a valid OCI image layout whose digests match, and whose one
//! layer is self-contained: the runtime's interpreter runs in a chroot of it.
use sha2::{Digest, Sha256};
use skillgate_runtime::{Catalog, InstallOptions, Store, export_oci_archive};
use std::collections::BTreeMap;
use std::io::Read;
use std::process::Command;

#[test]
fn the_exported_image_is_a_valid_layout_and_runs_in_a_chroot() {
    let t = tempfile::tempdir().unwrap();
    let store = Store::new(t.path().join("runtimes"));
    let def = Catalog::builtin().unwrap().get("python").unwrap().clone();
    let opts = InstallOptions {
        wheel_cache: t.path().join("wheels"),
        offline: true,
        force: false,
    };
    let installed = store.install(&def, &opts, &mut |_| {}).unwrap();
    let out = t.path().join("python.tar");
    let digest = export_oci_archive(&installed, &out).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(out.metadata().unwrap().permissions().mode() & 0o777, 0o644);

    let mut files = BTreeMap::new();
    let mut archive = tar::Archive::new(std::fs::File::open(&out).unwrap());
    for e in archive.entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        e.read_to_end(&mut bytes).unwrap();
        files.insert(name, bytes);
    }
    let json = |name: &str| -> serde_json::Value { serde_json::from_slice(&files[name]).unwrap() };
    let blob = |d: &serde_json::Value| {
        let d = d
            .as_str()
            .unwrap()
            .strip_prefix("sha256:")
            .unwrap()
            .to_string();
        let bytes = files[&format!("blobs/sha256/{d}")].clone();
        assert_eq!(hex::encode(Sha256::digest(&bytes)), d, "blob digest");
        bytes
    };
    assert_eq!(json("oci-layout")["imageLayoutVersion"], "1.0.0");
    let index = json("index.json");
    assert_eq!(index["manifests"][0]["digest"], digest);
    assert_eq!(
        index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"],
        "python"
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&blob(&index["manifests"][0]["digest"])).unwrap();
    let config: serde_json::Value =
        serde_json::from_slice(&blob(&manifest["config"]["digest"])).unwrap();
    let layer = blob(&manifest["layers"][0]["digest"]);
    assert_eq!(
        config["rootfs"]["diff_ids"][0],
        manifest["layers"][0]["digest"]
    );
    assert_eq!(config["config"]["User"], "1000:1000");
    assert_eq!(config["config"]["Entrypoint"][0], "/runtime/bin/python3");

    // The layer alone runs the runtime's interpreter with its standard library.
    let root = t.path().join("rootfs");
    tar::Archive::new(&layer[..]).unpack(&root).unwrap();
    assert!(
        !root.join("usr/lib/python3/dist-packages").exists(),
        "no host packages"
    );
    let run = Command::new("chroot")
        .arg(&root)
        .args([
            "/runtime/bin/python3",
            "-c",
            "import decimal, hashlib, json, sys; print(json.dumps([sys.prefix, str(decimal.Decimal('0.1') * 3), hashlib.sha256(b'x').hexdigest()[:8]]))",
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        r#"["/runtime", "0.3", "2d711642"]"#
    );
}
