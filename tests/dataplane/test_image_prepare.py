"""Images made root filesystems (stackling/dataplane/images): tiny images of each kind built
here (ext4 by `mkfs.ext4 -d`, GPT and MBR disks by sfdisk, qcow2 by qemu-img, squashfs,
docker save and OCI archives by tarfile), each bad image refused with its fault and nothing
written outside its directory, once per image across processes, and nothing left after."""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from stackling.dataplane.images import ImageBusy, ImageError, Limits, cleanup_all, prepare, release
from stackling.dataplane.images.mounts import loops_under, mounts_under
from tests.dataplane.conftest import eventually

TOOLS = ("losetup", "mount", "mkfs.ext4", "sfdisk", "qemu-img", "prlimit")
DEBIAN = Path(os.environ.get("STACKLING_TEST_DEBIAN_IMAGE",
                             "/var/cache/stackling/images/debian-12.qcow2"))
MiB = 1 << 20
LINUX = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
EFI = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in TOOLS),
    reason=f"images: root and {', '.join(TOOLS)} (make image-deps)")


def run(*cmd: str, **kw: object) -> None:
    subprocess.run(cmd, check=True, capture_output=True, **kw)  # type: ignore[call-overload]


def attached(path: Path) -> list[str]:
    return loops_under(path) + [str(p) for p in mounts_under(path)]


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[Path]:
    cache = tmp_path / "cache"
    yield cache
    cleanup_all(cache)
    assert attached(tmp_path) == [] and not cache.exists()
    assert str(tmp_path) not in subprocess.run(["losetup", "-a"], capture_output=True,
                                               text=True).stdout


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small root: a setuid binary, a file of uid 1000, a symlink."""
    src = tmp_path / "src"
    (src / "usr/bin").mkdir(parents=True)
    (src / "sbin").symlink_to("usr/bin")
    (src / "usr/bin/su").write_bytes(b"#!/bin/sh\n")
    (src / "usr/bin/su").chmod(0o4755)
    (src / "home/user").mkdir(parents=True)
    (src / "home/user/notes").write_text("mine")
    os.chown(src / "home/user/notes", 1000, 1000)
    (src / "etc").mkdir()
    (src / "etc/os-release").write_text("ID=tiny\n")
    return src


def ext4(tree: Path, path: Path, size: int = 16 * MiB) -> Path:
    path.touch()
    run("mkfs.ext4", "-q", "-F", "-d", str(tree), str(path), f"{size // 1024}k")
    return path


def disk(tree: Path, path: Path, label: str) -> Path:
    """A whole disk: a small first partition (EFI or FAT), the ext4 root second."""
    fs = ext4(tree, path.with_suffix(".fs"))
    with open(path, "wb") as fh:
        fh.truncate(4 * MiB + fs.stat().st_size + MiB)
    if label == "gpt":
        table = f"label: gpt\nstart=2048, size=4096, type={EFI}\nstart=8192, type={LINUX}\n"
    else:
        table = "label: dos\nstart=2048, size=4096, type=c\nstart=8192, type=83\n"
    run("sfdisk", "-q", str(path), input=table.encode())
    run("dd", f"if={fs}", f"of={path}", "bs=1M", "seek=4", "conv=notrunc,sparse", "status=none")
    fs.unlink()
    return path


def qcow2(raw: Path) -> Path:
    out = raw.with_suffix(".qcow2")
    run("qemu-img", "convert", "-f", "raw", "-O", "qcow2", str(raw), str(out))
    return out


def check_tree(root: Path) -> None:
    su = root / "usr/bin/su"
    assert su.read_bytes() == b"#!/bin/sh\n" and su.stat().st_mode & 0o7777 == 0o4755
    assert (root / "home/user/notes").stat().st_uid == 1000
    assert os.readlink(root / "sbin") == "usr/bin"
    assert (root / "etc/os-release").read_text() == "ID=tiny\n"


def image_id() -> str:
    return str(uuid.uuid4())


@pytest.mark.parametrize("label", ["gpt", "dos"])
def test_whole_disks_raw_and_qcow2(cache: Path, tree: Path, tmp_path: Path, label: str) -> None:
    raw = disk(tree, tmp_path / f"{label}.raw", label)
    for path, fmt in ((raw, "raw"), (qcow2(raw), "qcow2")):
        iid = image_id()
        got = prepare(iid, path, fmt, "bare", cache, "sltest")
        assert got.kind == "disk" and got.fstype == "ext4" and got.offset == 4 * MiB
        assert got.where == f"partition 2 of its {'GPT' if label == 'gpt' else 'MBR'}"
        assert got.root == cache / iid / "root" and got.device in loops_under(cache / iid)
        check_tree(got.root)
        with pytest.raises(OSError, match="Read-only file system"):
            (got.root / "new").write_text("x")
        # once per image: the second call finds it
        assert prepare(iid, path, fmt, "bare", cache, "sltest") == got
        assert len(loops_under(cache / iid)) == 1
    assert path.read_bytes()[:4] == b"QFI\xfb"  # the image's own file is untouched


def test_bare_filesystems(cache: Path, tree: Path, tmp_path: Path) -> None:
    got = prepare(image_id(), ext4(tree, tmp_path / "fs.ext4"), "raw", "bare", cache, "sltest")
    assert (got.kind, got.where, got.offset) == ("filesystem", "a bare ext4 filesystem", 0)
    check_tree(got.root)
    if shutil.which("mksquashfs"):
        run("mksquashfs", str(tree), str(tmp_path / "fs.squashfs"), "-quiet", "-noappend")
        got = prepare(image_id(), tmp_path / "fs.squashfs", "raw", "bare", cache, "sltest")
        assert got.fstype == "squashfs"
        check_tree(got.root)


def test_release_busy_and_lazy(cache: Path, tree: Path, tmp_path: Path) -> None:
    iid = image_id()
    got = prepare(iid, ext4(tree, tmp_path / "fs.ext4"), "raw", "bare", cache, "sltest")
    with open(got.root / "etc/os-release"):  # a user of the mount, as a guest's overlay
        with pytest.raises(ImageBusy, match=f"^Image {iid} is still in use"):
            release(iid, cache)
        assert mounts_under(cache / iid) == [got.root]
        release(iid, cache, lazy=True)
        assert not (cache / iid).exists() and mounts_under(cache) == []
    release(iid, cache)  # nothing to release: nothing done
    assert eventually(lambda: loops_under(cache) == [])


def test_a_restart_keeping_the_files_mounts_them_again(cache: Path, tree: Path, tmp_path: Path) -> None:
    iid, image = image_id(), qcow2(disk(tree, tmp_path / "r.raw", "gpt"))
    got = prepare(iid, image, "qcow2", "bare", cache, "sltest")
    converted = (cache / iid / "disk.raw").stat().st_ino
    cleanup_all(cache, keep_files=True)  # a stop that keeps the unpacked images
    assert attached(cache) == [] and (cache / iid / "prepared.json").exists()
    again = prepare(iid, image, "qcow2", "bare", cache, "sltest")
    assert again.root == got.root and (cache / iid / "disk.raw").stat().st_ino == converted
    check_tree(again.root)


# ------------------------------------------------------------------ container images
def tar_bytes(*members: tuple[str, bytes | None, dict]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, attrs in members:
            info = tarfile.TarInfo(name)
            info.mode = 0o644
            for key, value in attrs.items():
                setattr(info, key, value)
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def f(name: str, data: bytes = b"", **attrs: object) -> tuple[str, bytes, dict]:
    return name, data, attrs


def link(name: str, kind: bytes, target: str, **attrs: object) -> tuple[str, None, dict]:
    return name, None, {"type": kind, "linkname": target, **attrs}


def docker_save(path: Path, *layers: bytes) -> Path:
    names = [f"{i:064x}/layer.tar" for i in range(len(layers))]
    manifest = [{"Config": "config.json", "RepoTags": ["tiny:1"], "Layers": names}]
    path.write_bytes(tar_bytes(f("manifest.json", json.dumps(manifest).encode()),
                               f("config.json", b"{}"),
                               *[f(n, data) for n, data in zip(names, layers, strict=True)]))
    return path


def oci_layout(path: Path, *layers: bytes) -> Path:
    import hashlib

    blobs: dict[str, bytes] = {}

    def blob(data: bytes) -> dict:
        digest = hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        return {"digest": f"sha256:{digest}", "size": len(data),
                "mediaType": "application/vnd.oci.image.layer.v1.tar"}

    manifest = {"schemaVersion": 2, "config": blob(b"{}"), "layers": [blob(x) for x in layers]}
    index = {"schemaVersion": 2, "manifests": [blob(json.dumps(manifest).encode())]}
    index["manifests"][0]["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    path.write_bytes(tar_bytes(f("oci-layout", b'{"imageLayoutVersion": "1.0.0"}'),
                               f("index.json", json.dumps(index).encode()),
                               *[f(f"blobs/sha256/{d}", data) for d, data in blobs.items()]))
    return path


def test_docker_save_and_oci_layout(cache: Path, tmp_path: Path) -> None:
    base = tar_bytes(f("usr/bin/su", b"#!", mode=0o4755), f("etc/shadow", b"x", mode=0o640, gid=42),
                     f("etc/stale", b"old"), f("var/cache/a", b"a"),
                     link("sbin", tarfile.SYMTYPE, "usr/bin"), f("dev/null", type=tarfile.CHRTYPE))
    top = tar_bytes(f("etc/.wh.stale"), f("var/cache/.wh..wh..opq"), f("var/cache/b", b"b"),
                    f("home/user/notes", b"mine", uid=1000, gid=1000))
    for archive in (docker_save(tmp_path / "d.tar", base, top), oci_layout(tmp_path / "o.tar", base, top)):
        got = prepare(image_id(), archive, "raw", "docker", cache, "sltest")
        assert got.kind == "layers" and got.where == "2 layers of a container image"
        root = got.root
        assert root.is_dir() and not root.is_symlink()
        assert (root / "usr/bin/su").stat().st_mode & 0o7777 == 0o4755
        assert (root / "etc/shadow").stat().st_gid == 42
        assert (root / "home/user/notes").stat().st_uid == 1000
        assert sorted(os.listdir(root / "etc")) == ["shadow"]
        assert os.listdir(root / "var/cache") == ["b"] and not (root / "dev/null").exists()


BAD_LAYERS = {
    "dotdot": ([f("../../etc/passwd", b"x")], "layer member '../../etc/passwd' escapes the root"),
    "absolute": ([f("/etc/passwd", b"x")], "layer member '/etc/passwd' escapes the root"),
    "through-symlink": ([link("evil", tarfile.SYMTYPE, "/"), f("evil/etc/passwd", b"x")],
                        "layer member 'evil/etc/passwd' is written through the symlink 'evil'"),
    "hardlink-outside": ([link("passwd", tarfile.LNKTYPE, "../../../etc/passwd")],
                         "layer member 'passwd' escapes the root"),
    "too-many": ([f(f"f{i}") for i in range(20)], "has more than 10 layer members"),
}


@pytest.mark.parametrize("case", sorted(BAD_LAYERS))
def test_bad_container_images(cache: Path, tmp_path: Path, case: str) -> None:
    members, why = BAD_LAYERS[case]
    outside = tmp_path / "outside"
    outside.mkdir()
    archive = docker_save(outside / "bad.tar", tar_bytes(f("ok", b"fine")), tar_bytes(*members))
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    iid = image_id()
    with pytest.raises(ImageError) as caught:
        prepare(iid, archive, "raw", "docker", cache, "sltest", limits=Limits(max_members=10))
    if case == "hardlink-outside":
        why = "hard link 'passwd' to '../../../etc/passwd' escapes the root"
    assert str(caught.value) == f"Image {iid} {why}"
    # nothing written anywhere but under the cache, and the image's own directory gone
    assert not (cache / iid).exists()
    after = sorted(str(p) for p in tmp_path.rglob("*") if not str(p).startswith(str(cache)))
    assert after == [p for p in before if not p.startswith(str(cache))]
    assert not Path("/etc/passwd.x").exists()


# ------------------------------------------------------------------ bad disks
def corrupt_qcow2(tmp_path: Path, tree: Path) -> Path:
    """A qcow2 whose first refcount block is zeroed: clusters in use with refcount 0."""
    image = qcow2(disk(tree, tmp_path / "c.raw", "gpt"))
    with open(image, "r+b") as fh:
        header = fh.read(72)
        cluster = 1 << struct.unpack(">I", header[20:24])[0]
        (table,) = struct.unpack(">Q", header[48:56])
        fh.seek(table)
        (block,) = struct.unpack(">Q", fh.read(8))
        fh.seek(block)
        fh.write(b"\0" * cluster)
    return image


def test_bad_disk_images(cache: Path, tree: Path, tmp_path: Path) -> None:
    efi_only = tmp_path / "efi.raw"
    with open(efi_only, "wb") as fh:
        fh.truncate(8 * MiB)
    run("sfdisk", "-q", str(efi_only), input=f"label: gpt\nstart=2048, type={EFI}\n".encode())
    truncated = tmp_path / "t.qcow2"
    truncated.write_bytes(qcow2(ext4(tree, tmp_path / "t.ext4")).read_bytes()[:300])
    backing = tmp_path / "b.qcow2"
    run("qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", "/etc/passwd", str(backing))
    cases = [
        (tmp_path / "x.vhdx", "vhdx", "bare", "has unsupported disk_format 'vhdx'"),
        (efi_only, "raw", "bare", "has no root filesystem: no Linux partition in its GPT"),
        (efi_only, "raw", "ova", "has unsupported container_format 'ova'"),
        (tmp_path / "missing", "raw", "bare", "has no data"),
        (corrupt_qcow2(tmp_path, tree), "qcow2", "bare", "is a corrupt qcow2: ERROR "),
        (truncated, "qcow2", "bare", "is a corrupt qcow2: ERROR"),
        (backing, "qcow2", "bare", "is a qcow2 with a backing file (/etc/passwd): not allowed"),
        (ext4(tree, tmp_path / "fs.raw"), "qcow2", "bare", "is not a readable qcow2: "),
    ]
    (tmp_path / "x.vhdx").write_bytes(b"vhdxfile")
    for path, fmt, container, why in cases:
        iid = image_id()
        with pytest.raises(ImageError) as caught:
            prepare(iid, path, fmt, container, cache, "sltest")
        assert str(caught.value).startswith(f"Image {iid} {why}"), str(caught.value)
        assert not (cache / iid).exists() and attached(cache) == []


# ------------------------------------------------------------------ across processes
PREPARE = ("import sys, json; from pathlib import Path; "
           "from stackling.dataplane.images import prepare; "
           "p = prepare(sys.argv[1], Path(sys.argv[2]), 'qcow2', 'bare', Path(sys.argv[3]), 'sltest'); "
           "print(json.dumps([str(p.root), p.device]))")


def _waiting_on(lock: Path) -> bool:
    """Whether a process waits for `lock` (a blocked flock shows as `->` in /proc/locks)."""
    inode = f":{os.stat(lock).st_ino} "
    return any("->" in line and inode in line + " " for line in Path("/proc/locks").read_text().splitlines())


def test_one_preparer_per_image_across_processes(cache: Path, tree: Path, tmp_path: Path) -> None:
    import fcntl

    image, iid = qcow2(disk(tree, tmp_path / "p.raw", "gpt")), image_id()
    (cache / ".locks").mkdir(parents=True)
    lock = cache / ".locks" / f"{iid}.lock"
    lock.touch()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with open(lock) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        procs = [subprocess.Popen([sys.executable, "-c", PREPARE, iid, str(image), str(cache)],
                                  stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
        assert eventually(lambda: _waiting_on(lock), timeout=60)
        assert not (cache / iid).exists()  # neither started while the lock is held
    results = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert results[0] == results[1]  # one unpacked and attached it, the other found it
    assert len(loops_under(cache / iid)) == 1 and len(mounts_under(cache / iid)) == 1


# ------------------------------------------------------------------ make image-debian
def _resolve(root: Path, path: str) -> str:
    """`path` inside `root` with its symlinks followed as the guest sees them."""
    parts, done, hops = [p for p in path.split("/") if p], [], 0
    while parts:
        part = parts.pop(0)
        here = root.joinpath(*done, part)
        if here.is_symlink():
            hops += 1
            assert hops < 40
            target = os.readlink(here)
            parts = [p for p in target.split("/") if p] + parts
            done = [] if target.startswith("/") else done
            continue
        if part == "..":
            done = done[:-1]
        elif part != ".":
            done.append(part)
    return "/" + "/".join(done)


def test_debian_image_prepares(cache: Path) -> None:
    if not DEBIAN.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{DEBIAN} is missing: `make image-debian` builds it (CI requires it)")
        pytest.skip(f"{DEBIAN} is missing (make image-debian)")
    got = prepare(image_id(), DEBIAN, "qcow2", "bare", cache, "sltest")
    assert (got.kind, got.fstype, got.where) == ("disk", "ext4", "partition 1 of its GPT")
    root = got.root
    assert _resolve(root, "/sbin/init") == "/usr/lib/systemd/systemd"
    for binary in ("/usr/bin/python3", "/usr/sbin/sshd", "/usr/bin/cloud-init", "/usr/bin/sudo",
                   "/usr/sbin/dhclient", "/usr/bin/curl", "/usr/sbin/ip",
                   "/usr/lib/systemd/systemd-networkd"):
        assert os.access(root / _resolve(root, binary).lstrip("/"), os.X_OK), binary
    cfg = (root / "etc/cloud/cloud.cfg").read_text()
    assert "default_user:\n     name: debian" in cfg and 'sudo: ["ALL=(ALL) NOPASSWD:ALL"]' in cfg
    datasources = (root / "etc/cloud/cloud.cfg.d/90_dpkg.cfg").read_text()
    assert "OpenStack" in datasources and "ConfigDrive" in datasources
    assert "ssh_pwauth: false" in (root / "etc/cloud/cloud.cfg.d/01_debian_cloud.cfg").read_text()
    assert list((root / "etc/ssh").glob("ssh_host_*")) == []  # made at first boot
    assert (root / "etc/machine-id").read_text() == ""
    assert not list(root.glob("boot/vmlinuz*")) and "stackling" not in cfg
