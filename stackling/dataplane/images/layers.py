"""Container images (`docker save` archives and OCI image layouts) applied as a tree: their
layers in order, whiteouts included, through a strict filter.

Nothing is written outside the tree: a member path must stay below its root (no `..`, not
absolute), a hard link's target too, and no member is written through a symlink of the
tree (each parent is checked to be a real directory; a symlink member may point anywhere,
it is never followed). Device nodes are skipped; modes (setuid included), owners and times
are the image's. Bounded by a member count and a byte total over all layers.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from stackling.dataplane.images.errors import Refused

OPAQUE = ".wh..wh..opq"
WHITEOUT = ".wh."
CHUNK = 1 << 20
_DIGEST = re.compile(r"sha256:([0-9a-f]{64})")
_INDEX = ("application/vnd.oci.image.index.v1+json",
          "application/vnd.docker.distribution.manifest.list.v2+json")


@dataclass(frozen=True)
class Limits:
    max_members: int = 2_000_000  # tar members over all layers
    max_bytes: int = 64 << 30  # bytes of file data over all layers (and a disk's size)


class Budget:
    """What is left of the limits while layers are applied."""

    def __init__(self, limits: Limits) -> None:
        self.limits, self.members, self.bytes = limits, 0, 0

    def member(self) -> None:
        self.members += 1
        if self.members > self.limits.max_members:
            raise Refused(f"has more than {self.limits.max_members} layer members")

    def room(self, n: int) -> None:
        if self.bytes + n > self.limits.max_bytes:
            raise Refused(f"unpacks to more than {self.limits.max_bytes} bytes")

    def data(self, n: int) -> None:
        self.bytes += n
        if self.bytes > self.limits.max_bytes:
            raise Refused(f"unpacks to more than {self.limits.max_bytes} bytes")


def member_path(name: str, what: str = "layer member") -> str:
    """A member's path relative to the root ("" for the root itself); Refused when it
    would leave the root (absolute, or any `..` component)."""
    if name.startswith("/") or any(part == ".." for part in name.split("/")):
        raise Refused(f"{what} '{name}' escapes the root")
    if "\0" in name:
        raise Refused(f"{what} '{name}' has a NUL in its name")
    return "/".join(part for part in name.split("/") if part not in ("", "."))


def _parent(root: Path, rel: str, name: str, *, create: bool) -> Path | None:
    """The real directory `rel` (a relative path) of the tree, each component checked:
    never a symlink, never a file. Missing components are made (`create`) or None."""
    here = root
    for part in [p for p in rel.split("/") if p]:
        here = here / part
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(here, 0o755)
            continue
        if stat.S_ISLNK(st.st_mode):
            raise Refused(f"layer member '{name}' is written through the symlink "
                          f"'{here.relative_to(root)}'")
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(f"layer member '{name}' is below '{here.relative_to(root)}', "
                          "which is not a directory")
    return here


def _remove(path: Path) -> None:
    """Remove whatever is at `path` (a directory's tree without following its links)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _owner_and_times(path: Path | int, member: tarfile.TarInfo, *, link: bool = False) -> None:
    """The member's owner (as root: the image's ids, kept), mode and mtime; `link`: of the
    symlink itself (its mode means nothing)."""
    if os.geteuid() == 0:
        os.chown(path, member.uid, member.gid, follow_symlinks=not link)
    if not link:
        os.chmod(path, member.mode & 0o7777)  # after chown, which clears setuid
    if isinstance(path, int):
        os.utime(path, (member.mtime, member.mtime))
    else:
        os.utime(path, (member.mtime, member.mtime), follow_symlinks=not link)


def _xattrs(fd: int, member: tarfile.TarInfo) -> None:
    for key, value in member.pax_headers.items():
        if key.startswith("SCHILY.xattr.") and key[13:].split(".")[0] in ("user", "security"):
            try:
                os.setxattr(fd, key[13:], value.encode("utf-8", "surrogateescape"))
            except OSError:
                pass  # a file capability or label this filesystem cannot hold


def apply_layer(layer: tarfile.TarFile, root: Path, budget: Budget) -> None:
    """One layer's members into the tree at `root` (a real directory), in order. A
    whiteout hides what the layers below made, never this layer's own entries."""
    made: set[str] = set()
    dirs: list[tuple[Path, tarfile.TarInfo]] = []
    for member in layer:
        budget.member()
        rel = member_path(member.name)
        parent_rel, _, base = rel.rpartition("/")
        if base.startswith(WHITEOUT):
            _whiteout(root, parent_rel, base, member.name, made)
            continue
        if rel == "":
            if member.isdir():
                dirs.append((root, member))
            continue
        try:
            parent = _parent(root, parent_rel, member.name, create=True)
            assert parent is not None
            target = parent / base
            if _write(layer, member, root, target, budget):
                made.add(rel)
                if member.isdir():
                    dirs.append((target, member))
        except OSError as e:
            raise Refused(f"layer member '{member.name}' cannot be written: "
                          f"{e.strerror or e}") from None
    for path, member in reversed(dirs):  # after their contents, which change their times
        _owner_and_times(path, member)


def _write(layer: tarfile.TarFile, member: tarfile.TarInfo, root: Path, target: Path,
           budget: Budget) -> bool:
    existing = None
    try:
        existing = os.lstat(target)
    except FileNotFoundError:
        pass
    if member.isdir():
        if existing is not None and not stat.S_ISDIR(existing.st_mode):
            os.unlink(target)
            existing = None
        if existing is None:
            os.mkdir(target, 0o700)
        return True
    if member.ischr() or member.isblk():
        return False  # device nodes come from the guest's own /dev
    if existing is not None:
        _remove(target)
    if member.isreg():
        budget.room(member.size)  # what its header claims, before reading any
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)
        try:
            source = layer.extractfile(member)
            assert source is not None
            while chunk := source.read(CHUNK):
                budget.data(len(chunk))
                os.write(fd, chunk)
            _xattrs(fd, member)
            _owner_and_times(fd, member)
        finally:
            os.close(fd)
    elif member.issym():
        os.symlink(member.linkname, target)
        _owner_and_times(target, member, link=True)
    elif member.islnk():
        rel = member_path(member.linkname, what=f"hard link '{member.name}' to")
        parent_rel, _, base = rel.rpartition("/")
        parent = _parent(root, parent_rel, member.name, create=False)
        source_path = parent / base if parent is not None and base else None
        if source_path is None or not os.path.lexists(source_path) or \
                stat.S_ISDIR(os.lstat(source_path).st_mode):
            raise Refused(f"layer member '{member.name}' is a hard link to "
                          f"'{member.linkname}', which the layers do not hold")
        os.link(source_path, target, follow_symlinks=False)
    elif member.isfifo():
        os.mkfifo(target, 0o600)
        _owner_and_times(target, member)
    else:
        return False
    return True


def _whiteout(root: Path, parent_rel: str, base: str, name: str, made: set[str]) -> None:
    parent = _parent(root, parent_rel, name, create=base == OPAQUE)
    if parent is None:
        return  # nothing below to hide
    if base == OPAQUE:
        prefix = f"{parent_rel}/" if parent_rel else ""
        for child in os.listdir(parent):
            if f"{prefix}{child}" not in made:
                _remove(parent / child)
        return
    hidden = base[len(WHITEOUT):]
    if hidden in ("", ".", "..") or f"{parent_rel}/{hidden}".lstrip("/") in made:
        return
    _remove(parent / hidden)


# ------------------------------------------------------------------ the archives
class _Hashing:
    """A reader that hashes what passes through it (a blob is checked against its digest)."""

    def __init__(self, inner: IO[bytes]) -> None:
        self.inner, self.sha = inner, hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self.inner.read(n)
        self.sha.update(data)
        return data


def _json(archive: tarfile.TarFile, name: str) -> Any:
    try:
        fh = archive.extractfile(member_path(name, what="archive entry"))
        if fh is None:
            raise KeyError(name)
        return json.loads(fh.read(16 << 20))
    except KeyError:
        raise Refused(f"is a container image without '{name}'") from None
    except ValueError:
        raise Refused(f"is a container image whose '{name}' is not JSON") from None


def _blob(digest: Any) -> str:
    match = _DIGEST.fullmatch(digest if isinstance(digest, str) else "")
    if match is None:
        raise Refused(f"is an OCI image with a bad digest {digest!r}")
    return f"blobs/sha256/{match.group(1)}"


def _oci_layers(archive: tarfile.TarFile) -> list[tuple[str, str | None]]:
    """The layers of an OCI layout's image for linux/amd64 (or its only one)."""
    node, seen = _json(archive, "index.json"), 0
    while True:
        seen += 1
        manifests = node.get("manifests") if isinstance(node, dict) else None
        if seen > 4 or not isinstance(manifests, list) or not manifests:
            raise Refused("is an OCI image layout without an image manifest")
        pick = next((m for m in manifests if isinstance(m, dict)
                     and (m.get("platform") or {}).get("os", "linux") == "linux"
                     and (m.get("platform") or {}).get("architecture", "amd64") == "amd64"),
                    None)
        if pick is None:
            raise Refused("is an OCI image without a linux/amd64 manifest")
        node = _json(archive, _blob(pick.get("digest")))
        if pick.get("mediaType") not in _INDEX and "layers" in node:
            break
    layers = node.get("layers")
    if not isinstance(layers, list):
        raise Refused("is an OCI image whose manifest has no layers")
    out: list[tuple[str, str | None]] = []
    for layer in layers:
        digest = layer.get("digest") if isinstance(layer, dict) else None
        if "zstd" in str(layer.get("mediaType", "") if isinstance(layer, dict) else ""):
            raise Refused("has a layer compressed with zstd, which this cloud cannot read")
        out.append((_blob(digest), str(digest).split(":", 1)[1]))
    return out


def image_layers(archive: tarfile.TarFile) -> list[tuple[str, str | None]]:
    """The layers' entries in the archive, lowest first, with their sha256 when it is
    known: a `docker save` archive's manifest.json, else an OCI layout's index.json."""
    names = set(archive.getnames())
    if "manifest.json" in names:
        manifest = _json(archive, "manifest.json")
        if not isinstance(manifest, list) or not manifest or not isinstance(manifest[0], dict):
            raise Refused("is a docker archive whose manifest.json lists no image")
        layers = manifest[0].get("Layers")
        if not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
            raise Refused("is a docker archive whose manifest.json lists no layers")
        return [(member_path(x, what="layer"), None) for x in layers]
    if "index.json" in names and "oci-layout" in names:
        return _oci_layers(archive)
    raise Refused("is not a container image: no manifest.json (docker save) and no "
                  "index.json with oci-layout (OCI image layout)")


def _open_layers(path: Path) -> Iterator[tuple[str, tarfile.TarFile, _Hashing, str | None]]:
    try:
        archive = tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError) as e:
        raise Refused(f"is not a container image archive ({e})") from None
    with archive:
        for entry, digest in image_layers(archive):
            try:
                raw = archive.extractfile(entry)
            except KeyError:
                raw = None
            if raw is None:
                raise Refused(f"is a container image without its layer '{entry}'")
            hashing = _Hashing(raw)
            try:
                layer = tarfile.open(fileobj=hashing, mode="r|*")  # type: ignore[arg-type]
            except tarfile.TarError as e:
                raise Refused(f"has a layer '{entry}' that is not a tar ({e})") from None
            with layer:
                yield entry, layer, hashing, digest


def apply_image(path: Path, root: Path, limits: Limits) -> int:
    """Every layer of the archive at `path` into `root` (an empty real directory), in
    order; returns the number of layers."""
    budget, count = Budget(limits), 0
    for entry, layer, hashing, digest in _open_layers(path):
        try:
            apply_layer(layer, root, budget)
        except tarfile.TarError as e:
            raise Refused(f"has a layer '{entry}' that is not a valid tar ({e})") from None
        while hashing.read(CHUNK):  # the rest of the blob, for its digest
            pass
        if digest is not None and hashing.sha.hexdigest() != digest:
            raise Refused(f"has a layer '{entry}' whose sha256 does not match its digest")
        count += 1
    return count
