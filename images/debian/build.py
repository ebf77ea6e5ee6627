"""Build a Debian 12 cloud image from Debian's packages: qcow2, GPT, one ext4 root partition.

    python3 images/debian/build.py [--cache-dir /var/cache/stackling/images] [--force]

An ordinary Debian cloud image (nothing in it knows stackling) without a kernel or a boot
loader, for system containers: mmdebstrap makes the tree from the machine's own configured
Debian mirror, `mkfs.ext4 -d` makes the filesystem from it without mounting anything,
sfdisk writes the partition table and qemu-img the compressed qcow2. The result is cached
under its inputs' digest (this directory's files, the mirror and the suite), so a second
run returns at once; `<cache>/debian-12.qcow2` links to the newest. Beside the image,
`<image>.digests.json` holds its size, mtime, md5, sha512 and virtual size, so the cloud
that uploads it need not read it again (stackling/image/bootstrap.py reads the same file).

Root only (mmdebstrap --mode=root, in a mount namespace of its own so no mount of the build
is seen outside it). Standard library only.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAME = "debian-12"
SUITE = "bookworm"
# The suites of the release taken from the machine's sources (security and point updates).
SUITES = (SUITE, f"{SUITE}-updates", f"{SUITE}-security")
# Systemd's discoverable-partitions type of an x86-64 root filesystem.
ROOT_X86_64 = "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"
MiB = 1 << 20
# Leave out what a cloud image's user never reads (licences kept), as Debian's slim images.
DPKG_EXCLUDES = [
    "path-exclude=/usr/share/man/*", "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/doc/*", "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/locale/*", "path-include=/usr/share/locale/locale.alias",
    "path-exclude=/usr/share/lintian/*", "path-exclude=/usr/share/linda/*",
]


def packages() -> list[str]:
    lines = (HERE / "packages.txt").read_text().splitlines()
    return [p for line in lines if (p := line.split("#", 1)[0].strip())]


def machine_sources(suites: tuple[str, ...] = SUITES) -> list[str]:
    """The machine's configured apt sources for `suites`, as one-line `deb` entries (both
    the one-line and the deb822 format; disabled files and other suites left out)."""
    entries: list[str] = []
    files = ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list"))]
    for name in files:
        if os.path.isfile(name):
            entries += _one_line_entries(Path(name).read_text(), suites)
    for name in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        entries += _deb822_entries(Path(name).read_text(), suites)
    return list(dict.fromkeys(entries))


def _one_line_entries(text: str, suites: tuple[str, ...]) -> list[str]:
    out = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 3 or words[0] != "deb":
            continue
        options = ""
        if words[1].startswith("["):
            end = next(i for i, w in enumerate(words) if w.endswith("]"))
            options, words = " ".join(words[1:end + 1]), [words[0], *words[end + 1:]]
        if len(words) >= 4 and words[2] in suites:
            out.append(" ".join(["deb", *([options] if options else []), *words[1:]]))
    return out


def _deb822_entries(text: str, suites: tuple[str, ...]) -> list[str]:
    out = []
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line or line[:1].isspace():
                continue
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled", "yes") == "no":
            continue
        signed = fields.get("signed-by", "")
        options = f"[signed-by={signed}] " if signed.startswith("/") else ""
        for uri in fields.get("uris", "").split():
            for suite in fields.get("suites", "").split():
                if suite in suites:
                    out.append(f"deb {options}{uri} {suite} {fields.get('components', 'main')}")
    return out


def inputs_digest(sources: list[str]) -> str:
    """What the image is made of: this directory's files, the mirror, the suite."""
    h = hashlib.sha256()
    for path in sorted(p for p in HERE.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(HERE)).encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(json.dumps([SUITE, sources]).encode())
    return h.hexdigest()


def run(*cmd: str, **kw: object) -> None:
    subprocess.run(cmd, check=True, **kw)  # type: ignore[call-overload]


def mmdebstrap(root: Path, sources: list[str]) -> None:
    cmd = ["unshare", "--mount", "--propagation", "private", "--",
           "mmdebstrap", "--quiet", "--mode=root", "--variant=apt", "--format=directory",
           f"--include={','.join(packages())}", '--aptopt=Acquire::Languages "none"',
           *[f"--dpkgopt={o}" for o in DPKG_EXCLUDES], SUITE, str(root), *sources]
    run(*cmd)


def first_boot_state(root: Path) -> None:
    """As Debian's cloud images leave it: no host keys (cloud-init makes them at first
    boot), an empty machine-id (systemd makes one; dbus reads it), no hostname, no build
    logs, no package lists."""
    for key in root.glob("etc/ssh/ssh_host_*"):
        key.unlink()
    for name in ("etc/machine-id", "etc/hostname"):
        (root / name).write_text("")
        (root / name).chmod(0o644)
    for name in ("var/lib/dbus/machine-id", "var/log/bootstrap.log", "var/log/dpkg.log",
                 "var/log/alternatives.log", "var/cache/debconf/templates.dat-old",
                 "var/cache/debconf/config.dat-old", "var/lib/dpkg/status-old"):
        path = root / name
        if path.is_file() or path.is_symlink():
            path.unlink()
    for name in ("var/log/apt", "var/lib/apt/lists", "var/cache/apt", "tmp", "var/tmp"):
        path = root / name
        if path.is_dir():
            for child in path.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                elif child.name != "lock":
                    child.unlink()
    # systemd-networkd enabled (Debian ships it disabled; netplan's generator enabled it in
    # genericcloud): the links `systemctl enable` makes, from its units' [Install] sections
    for unit, target in (("systemd-networkd.service", "multi-user.target"),
                         ("systemd-networkd.socket", "sockets.target"),
                         ("systemd-networkd-wait-online.service", "network-online.target")):
        wants = root / "etc/systemd/system" / f"{target}.wants"
        wants.mkdir(parents=True, exist_ok=True)
        link = wants / unit
        if not link.is_symlink():
            link.symlink_to(f"/lib/systemd/system/{unit}")
    # No password logins over SSH, set where cloud-init's ssh_pwauth looks (the main
    # sshd_config), so its first boot finds nothing to change and does not restart sshd
    sshd = root / "etc/ssh/sshd_config"
    text = sshd.read_text()
    if "\nPasswordAuthentication no\n" not in text:
        sshd.write_text(text.replace("#PasswordAuthentication yes\n",
                                     "PasswordAuthentication no\n", 1))
    # This image's own configuration (cloud-init's datasources in 90_dpkg.cfg, where its
    # debconf question would write them), owned by root.
    for src in (HERE / "files").rglob("*"):
        if src.is_file():
            dst = root / src.relative_to(HERE / "files")
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            os.chown(dst, 0, 0)
            dst.chmod(0o644)


def tree_bytes(root: Path) -> int:
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            st = os.lstat(os.path.join(dirpath, name))
            total += max(st.st_blocks * 512, 4096 if name in dirnames else 0)
    return total


def disk_image(root: Path, work: Path, key: str) -> Path:
    """A whole-disk raw image: GPT, one ext4 partition (type: x86-64 root) from `root`."""
    fs_size = (tree_bytes(root) * 5 // 4 + 128 * MiB + 4 * MiB - 1) // (4 * MiB) * (4 * MiB)
    fs = work / "root.ext4"
    fs.touch()
    fs_uuid = str(uuid.UUID(key[:32]))
    run("mkfs.ext4", "-q", "-F", "-L", "root", "-U", fs_uuid, "-E", f"hash_seed={fs_uuid}",
        "-d", str(root), str(fs), str(fs_size // 1024) + "k")
    disk = work / "disk.raw"
    with open(disk, "wb") as fh:  # 1 MiB before (MBR, GPT), 1 MiB after (the backup GPT)
        fh.truncate(fs_size + 2 * MiB)
    table = (f"label: gpt\nlabel-id: {uuid.UUID(key[32:64])}\n"
             f"start=2048, size={fs_size // 512}, type={ROOT_X86_64}, name=root, "
             f"uuid={uuid.UUID(key[:32][::-1])}\n")
    run("sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", str(disk), input=table.encode())
    run("dd", f"if={fs}", f"of={disk}", "bs=1M", "seek=1", "conv=notrunc,sparse", "status=none")
    fs.unlink()
    return disk


def digests(path: Path) -> dict[str, object]:
    """The memo stackling's bootstrap reads: keyed by size and mtime, so a changed file is
    read again."""
    md5, sha512 = hashlib.md5(usedforsecurity=False), hashlib.sha512()
    with open(path, "rb") as fh:
        while chunk := fh.read(MiB):
            md5.update(chunk)
            sha512.update(chunk)
        fh.seek(24)  # the qcow2 header's virtual size
        (virtual_size,) = struct.unpack(">Q", fh.read(8))
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "md5": md5.hexdigest(),
            "sha512": sha512.hexdigest(), "virtual_size": virtual_size}


def build(cache: Path, force: bool = False) -> Path:
    sources = machine_sources()
    if not sources:
        raise SystemExit(f"no apt source for {SUITE} in /etc/apt/sources.list(.d)")
    key = inputs_digest(sources)
    image = cache / f"{NAME}-{key[:16]}.qcow2"
    memo = image.with_name(image.name + ".digests.json")
    link = cache / f"{NAME}.qcow2"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".{NAME}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build per machine at a time
        if force or not (image.is_file() and memo.is_file()):
            work = cache / f".build-{key[:16]}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            try:
                root = work / "root"
                mmdebstrap(root, sources)
                first_boot_state(root)
                disk = disk_image(root, work, key)
                shutil.rmtree(root)
                partial = work / "image.qcow2"
                run("qemu-img", "convert", "-q", "-f", "raw", "-O", "qcow2", "-c", "-m", "2",
                    "-W", str(disk), str(partial))
                os.replace(partial, image)
                memo_partial = work / "digests.json"
                memo_partial.write_text(json.dumps(digests(image)))
                os.replace(memo_partial, memo)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        tmp = cache / f".{NAME}.qcow2.link"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(image.name)
        os.replace(tmp, link)
        for old in cache.glob(f"{NAME}-*.qcow2*"):  # earlier builds
            if old.name not in (image.name, memo.name):
                old.unlink()
    return image


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", default="/var/cache/stackling/images", type=Path)
    parser.add_argument("--force", action="store_true", help="build even when cached")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("make image-debian builds as root (mmdebstrap --mode=root)", file=sys.stderr)
        return 1
    started = time.monotonic()
    image = build(args.cache_dir, args.force)
    size = image.stat().st_size
    print(f"{image} ({size / MiB:.0f} MiB, {time.monotonic() - started:.1f} s); "
          f"{args.cache_dir / (NAME + '.qcow2')} -> {image.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
