"""Volumes on the wire: each attachment of a running server is a loop device over its
volume's file, shown inside the guest as a block device node (issue 31).

As a KVM guest shows a Cinder volume: `/dev/vdX` (the attachment's device name, Nova's
`mountpoint`, in attachment order) and `/dev/disk/by-id/virtio-<first 20 characters of
the volume id>` (the virtio serial Nova sets). The node is made by the machine's root in
the guest's own `/dev` (a tmpfs the launcher mounted from the machine's side, so its
nodes open: a tmpfs of the guest's own user namespace could hold none), owned by the
guest's root (its range's first id) and only there: no other guest's `/dev` has it, and a
guest cannot make a node itself (mknod needs CAP_MKNOD of the machine's user namespace).
A read-only attachment (attach mode `ro`, a read-only volume) is a read-only loop device.

Loop devices have no names: each one of this cloud is found again by a record under the
run directory (`volumes/<server id>/<volume id>.json`) whose loop device still has the
volume's file as its backing file, so a start after kill -9 adopts what the dead process
attached and a clean stop detaches every one. A loop device still open (a filesystem of
it mounted inside the guest) is detached when its last user lets go (the kernel's
autoclear), as a stop of the guest does.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

DEVICE = re.compile(r"^vd[a-z]{1,2}$")
SERIAL = 20  # characters of the volume id in its by-id name (the virtio serial's length)
O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Disk:
    """One attachment as the guest sees it."""

    volume_id: str
    path: str  # the volume's file
    name: str  # vdb...
    readonly: bool

    @property
    def by_id(self) -> str:
        return f"virtio-{self.volume_id[:SERIAL]}"


def wanted(attachments: list[dict], taken: set[str] | None = None) -> list[Disk]:
    """The guest's disks from its attachments (oldest first: attaching/attached ones),
    each named by its device name, else the first free vdX after the root's vda."""
    out: list[Disk] = []
    used = set(taken or ()) | {"vda"}
    pending = []
    for att in attachments:
        name = (att.get("device") or "").removeprefix("/dev/")
        if DEVICE.match(name) and name not in used:
            used.add(name)
            out.append(Disk(att["volume_id"], att["path"], name, bool(att.get("readonly"))))
        else:
            pending.append(att)
    letters = (f"vd{chr(c)}" for c in range(ord("b"), ord("z") + 1))
    for att in pending:
        name = next(n for n in letters if n not in used)
        used.add(name)
        out.append(Disk(att["volume_id"], att["path"], name, bool(att.get("readonly"))))
    return sorted(out, key=lambda d: (len(d.name), d.name))


def backing_file(loop: str) -> str | None:
    """The file a loop device reads (None: not attached)."""
    try:
        text = Path(f"/sys/block/{Path(loop).name}/loop/backing_file").read_text()
    except OSError:
        return None
    return text.rstrip("\n").removesuffix(" (deleted)")


def _read_only(loop: str) -> bool:
    try:
        return Path(f"/sys/block/{Path(loop).name}/ro").read_text().strip() == "1"
    except OSError:
        return False


def file_size(path: str) -> int:
    """The volume file's size (0: none): an extend grows it (block_storage's task)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _fit(loop: str, path: str) -> None:
    """The loop device as large as its file again after an extend of an attached volume
    (Cinder 3.42; LOOP_SET_CAPACITY): the guest's disk grows in place, as a KVM guest's
    virtio disk does when Nova's libvirt driver resizes its block device."""
    try:
        sectors = int(Path(f"/sys/block/{Path(loop).name}/size").read_text())
    except (OSError, ValueError):
        return
    if sectors * 512 < file_size(path):
        result = subprocess.run(["losetup", "--set-capacity", loop], capture_output=True,
                                text=True, check=False)
        if result.returncode != 0:
            raise OSError(errno.EIO, f"losetup --set-capacity {loop}: {result.stderr.strip()}")


def _rdev(loop: str) -> int:
    return os.stat(loop).st_rdev


class Volumes:
    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir / "volumes"

    # ------------------------------------------------------------------ loop devices
    def _record(self, server_id: str, volume_id: str) -> Path:
        return self.dir / server_id / f"{volume_id}.json"

    def attached(self) -> dict[str, dict[str, dict]]:
        """server id -> volume id -> its record ({"loop", "file", "readonly"}), for every
        loop device of this cloud that is still attached to its volume's file."""
        out: dict[str, dict[str, dict]] = {}
        if not self.dir.is_dir():
            return out
        for sdir in self.dir.iterdir():
            for rec in sdir.glob("*.json"):
                try:
                    data = json.loads(rec.read_text())
                except (OSError, ValueError):
                    continue
                if backing_file(data["loop"]) == data["file"]:
                    out.setdefault(sdir.name, {})[rec.stem] = data
        return out

    def loop(self, server_id: str, disk: Disk) -> str:
        """The loop device of this attachment, attached now unless it already is (as
        wanted: same file, same read-only)."""
        rec = self._record(server_id, disk.volume_id)
        try:
            data = json.loads(rec.read_text())
        except (OSError, ValueError):
            data = None
        if data and backing_file(data["loop"]) == disk.path:
            if _read_only(data["loop"]) == disk.readonly:
                _fit(data["loop"], disk.path)
                return data["loop"]
            detach(data["loop"])  # (made read-only or writable since: attached anew)
        if not Path(disk.path).is_file():
            raise FileNotFoundError(errno.ENOENT, "volume file missing", disk.path)
        result = subprocess.run(["losetup", "--find", "--show",
                                 *(["--read-only"] if disk.readonly else []), disk.path],
                                capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise OSError(errno.EIO, f"losetup {disk.path}: {result.stderr.strip()}")
        loop = result.stdout.strip()
        rec.parent.mkdir(parents=True, exist_ok=True)
        tmp = rec.with_suffix(".tmp")
        tmp.write_text(json.dumps({"loop": loop, "file": disk.path,
                                   "readonly": disk.readonly, "name": disk.name}))
        tmp.replace(rec)
        return loop

    def release(self, server_id: str, volume_id: str) -> None:
        """Its loop device detached (when its last user lets go) and its record gone."""
        rec = self._record(server_id, volume_id)
        try:
            data = json.loads(rec.read_text())
        except (OSError, ValueError):
            data = None
        if data and backing_file(data["loop"]) == data["file"]:
            detach(data["loop"])
        rec.unlink(missing_ok=True)
        try:
            rec.parent.rmdir()
        except OSError:
            pass

    def release_server(self, server_id: str, keep: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        sdir = self.dir / server_id
        for rec in sdir.glob("*.json") if sdir.is_dir() else ():
            if rec.stem not in keep:
                self.release(server_id, rec.stem)

    def known(self) -> list[str]:
        return [p.name for p in self.dir.iterdir()] if self.dir.is_dir() else []

    def release_all(self, patience: float = 5.0) -> None:
        """Every loop device of this cloud detached; waits (bounded) for those a dying
        guest's mounts still held, so a clean stop leaves none."""
        loops = []
        for server_id in self.known():
            for data in self.attached().get(server_id, {}).values():
                loops.append(data)
            self.release_server(server_id)
        deadline = time.monotonic() + patience
        while any(backing_file(d["loop"]) == d["file"] for d in loops) \
                and time.monotonic() < deadline:
            time.sleep(0.05)

    # ------------------------------------------------------------------ the guest's /dev
    def boot_list(self, server_id: str, disks: list[Disk]) -> str:
        """The launcher's lines for the guest's /dev at boot: `name major minor mode by-id`
        (its loop devices attached first)."""
        lines = []
        for disk in disks:
            rdev = _rdev(self.loop(server_id, disk))
            lines.append(f"{disk.name} {os.major(rdev)} {os.minor(rdev)} "
                         f"{'440' if disk.readonly else '660'} {disk.by_id}")
        return "".join(f"{line}\n" for line in lines)

    def sync(self, server_id: str, pid: int, owner: int, disks: list[Disk]) -> bool:
        """Make the running guest's /dev (through `pid`, a process of it past its
        pivot) hold exactly `disks`' nodes; True when something changed. Every path is
        opened one component at a time without following a link: the guest owns the
        names in its /dev and must not steer the machine's root anywhere else."""
        want = {d.name: (d, _rdev(self.loop(server_id, d))) for d in disks}
        changed = False
        dev = _guest_dev(pid)
        try:
            for name in os.listdir(dev):
                if not DEVICE.match(name):
                    continue
                st = os.stat(name, dir_fd=dev, follow_symlinks=False)
                if stat.S_ISBLK(st.st_mode) and (name not in want or st.st_rdev != want[name][1]
                                                 or stat.S_IMODE(st.st_mode) != _mode(want[name][0])):
                    os.unlink(name, dir_fd=dev)
                    changed = True
            for name, (disk, rdev) in want.items():
                try:
                    os.stat(name, dir_fd=dev, follow_symlinks=False)
                    continue
                except FileNotFoundError:
                    pass
                os.mknod(name, stat.S_IFBLK | _mode(disk), rdev, dir_fd=dev)
                os.chmod(name, _mode(disk), dir_fd=dev)  # (not the umask's)
                os.chown(name, owner, owner, dir_fd=dev, follow_symlinks=False)
                changed = True
            changed |= self._links(dev, owner, {d.by_id: d.name for d, _ in want.values()})
        finally:
            os.close(dev)
        return changed

    @staticmethod
    def _links(dev: int, owner: int, links: dict[str, str]) -> bool:
        """`/dev/disk/by-id/virtio-*` -> ../../vdX, exactly `links`."""
        changed = False
        by_id = dev
        for part in ("disk", "by-id"):
            try:
                nxt = os.open(part, O_DIR, dir_fd=by_id)
            except FileNotFoundError:
                if not links:
                    if by_id != dev:
                        os.close(by_id)
                    return False
                os.mkdir(part, 0o755, dir_fd=by_id)
                os.chown(part, owner, owner, dir_fd=by_id, follow_symlinks=False)
                nxt = os.open(part, O_DIR, dir_fd=by_id)
            if by_id != dev:
                os.close(by_id)
            by_id = nxt
        try:
            for name in os.listdir(by_id):
                if name.startswith("virtio-") and (
                        name not in links or _readlink(name, by_id) != f"../../{links[name]}"):
                    os.unlink(name, dir_fd=by_id)
                    changed = True
            for name, target in links.items():
                if _readlink(name, by_id) is None:
                    os.symlink(f"../../{target}", name, dir_fd=by_id)
                    os.chown(name, owner, owner, dir_fd=by_id, follow_symlinks=False)
                    changed = True
        finally:
            os.close(by_id)
        return changed


def _guest_dev(pid: int) -> int:
    """The guest's /dev (through `pid`, a process of it past its pivot), opened without
    following a link; the caller closes it."""
    root = os.open(f"/proc/{pid}/root", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return os.open("dev", O_DIR, dir_fd=root)
    finally:
        os.close(root)


def nodes(pid: int) -> dict[str, int]:
    """The block device nodes `vdX` in the guest's /dev (through `pid`, a process of it
    past its pivot): name -> its device number."""
    dev = _guest_dev(pid)
    try:
        out = {}
        for name in os.listdir(dev):
            if DEVICE.match(name):
                st = os.stat(name, dir_fd=dev, follow_symlinks=False)
                if stat.S_ISBLK(st.st_mode):
                    out[name] = st.st_rdev
        return out
    finally:
        os.close(dev)


def loops_backing(directory: Path) -> dict[str, str]:
    """Every loop device whose backing file is in `directory`: loop -> file."""
    base = str(directory.resolve())
    out = {}
    for entry in Path("/sys/block").glob("loop*"):
        file = backing_file(f"/dev/{entry.name}")
        if file and os.path.dirname(file) == base:
            out[f"/dev/{entry.name}"] = file
    return out


def _mode(disk: Disk) -> int:
    return 0o440 if disk.readonly else 0o660


def _readlink(name: str, dir_fd: int) -> str | None:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:
        return None


def detach(loop: str) -> None:
    """Detach a loop device: at once, or when its last user closes it (autoclear)."""
    subprocess.run(["losetup", "--detach", loop], capture_output=True, check=False)


def guest_process(launcher: int, children: dict[int, list[int]]) -> int | None:
    """A process of the guest inside its own user namespace (so past its pivot: its
    /proc/<pid>/root is the guest's root), below its launcher."""
    mine = os.readlink("/proc/self/ns/user")
    todo = [launcher]
    while todo:
        for child in children.get(todo.pop(0), []):
            try:
                if os.readlink(f"/proc/{child}/ns/user") != mine:
                    return child
            except OSError:
                continue
            todo.append(child)
    return None
