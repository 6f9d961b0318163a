#!/usr/bin/env python3
"""Image archives for scripts/services' k8s cluster (standard library only).

  image.py pause BINARY NAME OUT.tar
      a one-layer image whose only file is /pause (BINARY), entrypoint /pause, written as a
      docker-archive (`ctr images import` names it NAME)
  image.py name ARCHIVE NAME OUT.tar
      a copy of the OCI image-layout tarball ARCHIVE (one image, as `skillgate runtime
      export` writes it) whose index names its image NAME (annotation
      io.containerd.image.name, which `ctr images import` takes as the full name)
"""
import hashlib
import io
import json
import sys
import tarfile


def add(tar, name, data, mode=0o644):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def pause(binary, name, out):
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=tarfile.GNU_FORMAT) as t:
        with open(binary, "rb") as f:
            add(t, "pause", f.read(), 0o755)
    layer = layer.getvalue()
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": "amd64",
        "os": "linux",
        "config": {"Entrypoint": ["/pause"], "User": "65535:65535"},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "scripts/k8s/image.py pause"}],
    }, sort_keys=True).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    layer_name = diff_id[len("sha256:"):] + "/layer.tar"
    manifest = json.dumps([{"Config": config_name, "RepoTags": [name], "Layers": [layer_name]}]).encode()
    with tarfile.open(out, "w", format=tarfile.GNU_FORMAT) as t:
        add(t, config_name, config)
        add(t, layer_name, layer)
        add(t, "manifest.json", manifest)


def rename(archive, name, out):
    with tarfile.open(archive, "r:*") as src, tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as dst:
        seen = False
        for m in src:
            if m.name.lstrip("./") == "index.json" and m.isfile():
                index = json.load(src.extractfile(m))
                manifests = index.get("manifests") or []
                if len(manifests) != 1:
                    sys.exit(f"image.py: {archive}: index.json lists {len(manifests)} images, not one")
                ann = manifests[0].setdefault("annotations", {})
                ann["io.containerd.image.name"] = name
                ann["org.opencontainers.image.ref.name"] = name.rsplit(":", 1)[-1] if "@" not in name else name
                add(dst, m.name, json.dumps(index, indent=2).encode())
                seen = True
            elif m.isfile():
                dst.addfile(m, src.extractfile(m))
            else:
                dst.addfile(m)
        if not seen:
            sys.exit(f"image.py: {archive}: no index.json (not an OCI image layout)")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "pause":
        pause(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "name":
        rename(*sys.argv[2:])
    else:
        sys.exit(__doc__)
