"""Container image layers applied through the strict filter (dataplane/images/layers.py):
whiteouts, and every member that would write outside the tree refused."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from stackling.dataplane.images.errors import Refused
from stackling.dataplane.images.layers import Budget, Limits, apply_image, apply_layer, member_path


def member(name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"", **kw: object) -> tuple:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = kw.pop("mode", 0o755 if kind == tarfile.DIRTYPE else 0o644)  # type: ignore[assignment]
    for key, value in kw.items():
        setattr(info, key, value)
    if kind == tarfile.REGTYPE:
        info.size = len(data)
    return info, data


def layer_bytes(*members: tuple) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buf.getvalue()


def apply(root: Path, *members: tuple, limits: Limits | None = None) -> None:
    data = layer_bytes(*members)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r|*") as layer:
        apply_layer(layer, root, Budget(limits or Limits()))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "root").mkdir()
    return tmp_path / "root"


def test_member_paths() -> None:
    assert member_path("./etc/passwd") == "etc/passwd"
    assert member_path("usr//bin/") == "usr/bin"
    assert member_path("./") == ""
    for bad in ("../../etc/passwd", "/etc/passwd", "a/../../b", "a/.."):
        with pytest.raises(Refused, match="escapes the root"):
            member_path(bad)


def test_files_dirs_links_modes_and_owners(tree: Path) -> None:
    apply(tree, member("usr", tarfile.DIRTYPE), member("usr/bin", tarfile.DIRTYPE),
          member("usr/bin/sudo", data=b"#!", mode=0o4755, uid=0, gid=0),
          member("usr/bin/sudoedit", tarfile.SYMTYPE, linkname="sudo"),
          member("bin", tarfile.SYMTYPE, linkname="usr/bin"),
          member("etc/shadow", data=b"root:*:", mode=0o640, uid=0, gid=42),
          member("usr/bin/sudo2", tarfile.LNKTYPE, linkname="usr/bin/sudo"),
          member("dev/null", tarfile.CHRTYPE, devmajor=1, devminor=3),
          member("anywhere", tarfile.SYMTYPE, linkname="/etc/../../outside"))
    sudo = tree / "usr/bin/sudo"
    assert sudo.read_bytes() == b"#!" and oct(sudo.stat().st_mode & 0o7777) == "0o4755"
    assert os.readlink(tree / "bin") == "usr/bin"
    assert (tree / "usr/bin/sudo2").stat().st_ino == sudo.stat().st_ino
    assert not (tree / "dev/null").exists()  # device nodes are skipped
    assert os.readlink(tree / "anywhere") == "/etc/../../outside"  # may point anywhere
    if os.geteuid() == 0:
        assert (tree / "etc/shadow").stat().st_gid == 42
    assert oct((tree / "etc/shadow").stat().st_mode & 0o777) == "0o640"


def test_whiteouts_hide_the_lower_layers_only(tree: Path) -> None:
    apply(tree, member("etc/a", data=b"a"), member("etc/b", data=b"b"),
          member("var/cache/x", data=b"x"), member("var/cache/y", data=b"y"))
    apply(tree, member("etc/.wh.a"), member("var/cache/new", data=b"n"),
          member("var/cache/.wh..wh..opq"), member("etc/c", data=b"c"),
          member("etc/.wh.c"), member(".wh.missing"))
    assert sorted(os.listdir(tree / "etc")) == ["b", "c"]  # c: the same layer's, kept
    assert os.listdir(tree / "var/cache") == ["new"]


def test_a_file_replaces_a_symlink_instead_of_writing_through_it(tree: Path, tmp_path: Path) -> None:
    (tmp_path / "outside").write_text("safe")
    apply(tree, member("x", tarfile.SYMTYPE, linkname=str(tmp_path / "outside")))
    apply(tree, member("x", data=b"new"))
    assert (tmp_path / "outside").read_text() == "safe"
    assert not (tree / "x").is_symlink() and (tree / "x").read_bytes() == b"new"


@pytest.mark.parametrize(("members", "error"), [
    ([member("../../etc/passwd", data=b"x")], "layer member '../../etc/passwd' escapes the root"),
    ([member("/etc/passwd", data=b"x")], "layer member '/etc/passwd' escapes the root"),
    ([member("evil", tarfile.SYMTYPE, linkname="/"), member("evil/etc/passwd", data=b"x")],
     "layer member 'evil/etc/passwd' is written through the symlink 'evil'"),
    ([member("up", tarfile.SYMTYPE, linkname=".."), member("up/.wh.outside")],
     "layer member 'up/.wh.outside' is written through the symlink 'up'"),
    ([member("passwd", tarfile.LNKTYPE, linkname="../outside")],
     "hard link 'passwd' to '../outside' escapes the root"),
    ([member("passwd", tarfile.LNKTYPE, linkname="/etc/passwd")],
     "hard link 'passwd' to '/etc/passwd' escapes the root"),
    ([member("ln", tarfile.SYMTYPE, linkname="/etc"), member("p", tarfile.LNKTYPE, linkname="ln/passwd")],
     "layer member 'p' is written through the symlink 'ln'"),
])
def test_escapes_are_refused(tree: Path, tmp_path: Path, members: list, error: str) -> None:
    (tmp_path / "outside").write_text("safe")
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(Refused) as caught:
        apply(tree, *members)
    assert str(caught.value) == error
    assert (tmp_path / "outside").read_text() == "safe"
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_limits(tree: Path) -> None:
    many = [member(f"f{i}") for i in range(11)]
    with pytest.raises(Refused, match="has more than 10 layer members"):
        apply(tree, *many, limits=Limits(max_members=10))
    with pytest.raises(Refused, match="unpacks to more than 100 bytes"):
        apply(tree, member("big", data=b"x" * 101), limits=Limits(max_bytes=100))


def _oci(tmp_path: Path, layers: list[bytes], *, bad_digest: bool = False) -> Path:
    blobs: dict[str, bytes] = {}

    def blob(data: bytes) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return digest

    digests = [blob(data) for data in layers]
    if bad_digest:
        digests[0] = "sha256:" + "0" * 64
        blobs[digests[0]] = layers[0]
    config = blob(json.dumps({"architecture": "amd64", "os": "linux"}).encode())
    manifest = blob(json.dumps({"schemaVersion": 2, "config": {"digest": config},
                                "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                                            "digest": d} for d in digests]}).encode())
    index = {"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest,
        "platform": {"architecture": "amd64", "os": "linux"}}]}
    path = tmp_path / "oci.tar"
    files = [(member("oci-layout"), json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
             (member("index.json"), json.dumps(index).encode())]
    files += [(member(f"blobs/sha256/{d.split(':')[1]}"), data) for d, data in blobs.items()]
    path.write_bytes(layer_bytes(*[member(i.name, data=d) for (i, _), d in files]))
    return path


def test_oci_layout_and_docker_save(tmp_path: Path) -> None:
    lower = layer_bytes(member("etc/os-release", data=b"ID=test\n"), member("etc/gone", data=b"g"))
    upper = layer_bytes(member("etc/.wh.gone"), member("usr/bin/tool", data=b"t", mode=0o755))
    (tmp_path / "oci").mkdir()
    assert apply_image(_oci(tmp_path, [lower, upper]), tmp_path / "oci", Limits()) == 2
    assert sorted(os.listdir(tmp_path / "oci/etc")) == ["os-release"]
    # docker save: manifest.json naming <id>/layer.tar entries
    manifest = [{"Config": "c.json", "RepoTags": ["t:1"], "Layers": ["a/layer.tar", "b/layer.tar"]}]
    archive = tmp_path / "docker.tar"
    archive.write_bytes(layer_bytes(member("manifest.json", data=json.dumps(manifest).encode()),
                                    member("c.json", data=b"{}"),
                                    member("a/layer.tar", data=lower), member("b/layer.tar", data=upper)))
    (tmp_path / "docker").mkdir()
    assert apply_image(archive, tmp_path / "docker", Limits()) == 2
    assert (tmp_path / "docker/usr/bin/tool").read_bytes() == b"t"


def test_oci_blob_whose_digest_does_not_match(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    with pytest.raises(Refused, match="whose sha256 does not match its digest"):
        apply_image(_oci(tmp_path, [layer_bytes(member("f", data=b"x"))], bad_digest=True),
                    tmp_path / "root", Limits())


def test_not_a_container_image(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "x.tar").write_bytes(layer_bytes(member("hello", data=b"x")))
    with pytest.raises(Refused, match="is not a container image: no manifest.json"):
        apply_image(tmp_path / "x.tar", tmp_path / "root", Limits())
    (tmp_path / "y.tar").write_bytes(b"not a tar at all")
    with pytest.raises(Refused, match="is not a container image archive"):
        apply_image(tmp_path / "y.tar", tmp_path / "root", Limits())
