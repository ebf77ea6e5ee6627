"""Server snapshots (Nova's createImage, issue 30): the server's filesystem, its image's tree
under its own copy-on-write layer (disks.py), written into its snapshot image as a bootable
disk, as Nova's libvirt driver uploads an instance's disk.

Compute leaves the image `queued` and the server in task state `image_uploading`
(`compute.server_actions.create_image`); each pass of the lease holder finds it in the
desired state (`image.interface.pending_snapshots`) and, in a thread of its own, claims it
(`saving`), then in a child process with a private mount namespace (`unshare --mount`:
nothing shows in the machine's mount table) mounts a merged, read-only view of the layer
over the image's tree (overlayfs with two lower layers, the layer first and no upper dir, so
its whiteouts hide what the guest deleted) under the cloud's run directory, makes an ext4
filesystem of it (`mkfs.ext4 -d`: the files' canonical owners, modes, links and xattrs
kept) and converts it to qcow2 (`disk_format` qcow2, `container_format` bare: what
`images.prepare` mounts as a bare ext4 filesystem). The image's data is stored through the
image service's door with its size, checksums and virtual size, and the server's task state
is cleared. A running server is captured as it runs (Nova's live snapshot), its cgroup
frozen while its files are read (unfrozen after; a process that died meanwhile leaves the
next lease holder's first pass to thaw it).

A failure (the disk full, a tool's error, the server deleted meanwhile) deletes the image,
as Nova deletes the image of a failed snapshot, clears the server's task state and records
the reason in its createImage action's event (and the log). A snapshot left `saving` by a
process that died (or stopped cleanly) is begun again by the next pass of whoever holds the
lease: the work is claimed from the database, not from memory.

A config drive's seed on the root disk (reconciler.CONFIG_DRIVE) is left out: Nova's config
drive is a disk of its own, never in a snapshot, and a server booted from the snapshot must
read its own instance's data (cloud-init's per-instance modules: its hostname, host keys).
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from stackling.common import storage
from stackling.common.db import Database
from stackling.compute import interface as compute
from stackling.dataplane import images
from stackling.dataplane.guests import Guests
from stackling.image import interface as image_service

LOG = logging.getLogger(__name__)
MiB = 1 << 20
FREEZE_WAIT = 10.0  # seconds a guest's cgroup has to report frozen (else read as it runs)
# A config drive's seed (reconciler.CONFIG_DRIVE: not imported, the reconciler imports us)
CONFIG_DRIVE = "var/lib/cloud/seed/config_drive"

# The child: in its own mount namespace (unshare --mount, propagation private), the merged
# view mounted at $tree, measured, made an ext4 filesystem and a qcow2. Positional:
# layer upper, image root, empty dir, mask dir, tree, raw file, qcow2 out, minimum MiB.
SCRIPT = r"""
set -eu
upper=$1 root=$2 empty=$3 mask=$4 tree=$5 raw=$6 out=$7 min_mb=$8 drive=$9
[ -d "$upper" ] || upper=$empty
lower="$upper:$root"
mount -t overlay stackling-snapshot -o "ro,lowerdir=$lower" "$tree"
if [ -e "$tree/$drive" ] || [ -L "$tree/$drive" ]; then
    # hidden by a whiteout in a third, topmost layer whose directories have the modes and
    # owners of those they cover
    path=
    for part in $(echo "$drive" | tr / ' '); do
        path=${path:+$path/}$part
        [ "$path" = "$drive" ] && break
        mkdir -p "$mask/$path"
        chown --reference="$tree/$path" "$mask/$path"
        chmod --reference="$tree/$path" "$mask/$path"
    done
    mknod "$mask/$drive" c 0 0
    umount "$tree"
    mount -t overlay stackling-snapshot -o "ro,lowerdir=$mask:$lower" "$tree"
fi
used=$(du -sxm "$tree" | cut -f1)
files=$(find "$tree" -xdev | wc -l)
mb=$((used + used / 4 + 256))
[ "$mb" -ge "$min_mb" ] || mb=$min_mb
rm -f "$raw"
truncate -s "${mb}M" "$raw"
mkfs.ext4 -q -F -m 0 -N $((files + files / 2 + 16384)) -L cloudimg-rootfs -d "$tree" "$raw"
umount "$tree"
echo frozen-done
qemu-img convert -f raw -O qcow2 "$raw" "$out"
"""


class SnapshotFailed(Exception):
    pass


class Snapshots:
    """The pending snapshots of a pass, each captured by a thread of its own."""

    def __init__(self, database: Database, prefix: str, run_dir: Path, data_dir: Path,
                 images_dir: Path, guests: Guests) -> None:
        self.database = database
        self.prefix = prefix
        self.run_dir = run_dir / "snapshots"  # the merged views' mount points
        self.work_dir = data_dir / "dataplane" / "snapshots"  # the raw filesystems
        self.images_dir = images_dir
        self.guests = guests
        self._threads: dict[str, threading.Thread] = {}
        self._children: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thawed = False

    # ------------------------------------------------------------------ the pass's hook
    def reconcile(self, d: Any) -> None:
        """Start a capture for each pending snapshot of a server of ours that none runs."""
        if self._stopping.is_set():
            return
        with self._lock:
            busy = {i for i, t in self._threads.items() if t.is_alive()}
            self._threads = {i: t for i, t in self._threads.items() if i in busy}
        if not self._thawed:  # a process that died mid-capture left its guest frozen
            self._thawed = True
            for server_id, server in d.servers.items():
                if server["state"] == "running":  # (a paused one is the guests' own)
                    self._thaw(server_id)
        for snap in d.snapshots:
            if snap["id"] in busy:
                continue
            server = d.servers.get(snap["instance_uuid"])
            if server is None:  # (read after the snapshots: gone since)
                self._end(snap["id"], snap["instance_uuid"],
                          "the server was deleted during its snapshot")
                continue
            found = server.get("image")
            if found is not None and not found.get("data"):
                continue  # compute's own snapshot: the kit's root (cirros) has no image data
            if found is None and not server.get("image_ref"):
                continue  # (a volume-backed server's snapshot is compute's)
            if server.get("task_state") != "image_uploading":
                self._end(snap["id"], server["id"], "the server's snapshot task was reset "
                          f"(task state {server.get('task_state')})")
                continue
            if found is None:
                self._end(snap["id"], server["id"], "the server's image was deleted")
                continue
            thread = threading.Thread(target=self._capture, args=(snap, server, found),
                                      name=f"snapshot-{snap['id'][:8]}", daemon=True)
            with self._lock:
                self._threads[snap["id"]] = thread
            thread.start()

    def stop(self) -> None:
        """A clean stop: the captures' children killed and their threads waited for; their
        snapshots stay `saving`, begun again by the next lease holder."""
        self._stopping.set()
        with self._lock:
            children = list(self._children.values())
            threads = list(self._threads.values())
        for child in children:
            child.kill()  # (its PID namespace goes with it: --kill-child)
        for thread in threads:
            thread.join(timeout=30)

    # ------------------------------------------------------------------ one capture
    def _capture(self, snap: dict[str, Any], server: dict[str, Any],
                 found: dict[str, Any]) -> None:
        image_id, server_id = snap["id"], server["id"]
        target: Path | None = None
        stored = False
        try:
            with self.database.transaction() as db:
                target = image_service.begin_snapshot_upload(db, image_id)
            if target is None:
                return  # (deleted, or done, meanwhile)
            prepared = images.prepare(found["id"], Path(found["data"]),
                                      found.get("disk_format"), found.get("container_format"),
                                      self.images_dir, self.prefix)
            virtual_size = self._write(image_id, server_id, prepared.root,
                                       max(prepared.size, 0), target,
                                       live=server.get("state") != "off")
            size, md5, sha512 = _digests(target)
            with self.database.transaction() as db:
                if compute.snapshot_done(db, server_id):
                    stored = image_service.store_snapshot(db, image_id, target, size=size,
                                                          md5=md5, sha512=sha512,
                                                          virtual_size=virtual_size)
                else:  # the server went away meanwhile: its image goes too, as Nova's
                    image_service.fail_snapshot(db, image_id)
            if stored:
                LOG.info("dataplane: snapshot %s of server %s stored (%d bytes)", image_id,
                         server_id, size)
        except Exception as exc:  # noqa: BLE001 - the snapshot fails, the others go on
            if self._stopping.is_set():
                return  # (left `saving`: the next lease holder begins it again)
            reason = exc.args[0] if isinstance(exc, SnapshotFailed) else \
                f"{type(exc).__name__}: {exc}"
            LOG.warning("dataplane: snapshot %s of server %s failed: %s", image_id, server_id,
                        reason)
            try:
                self._end(image_id, server_id, reason)
            except Exception:  # noqa: BLE001 - the next pass finds it again
                LOG.exception("dataplane: snapshot %s: recording its failure failed", image_id)
        finally:
            if target is not None and not stored:
                target.unlink(missing_ok=True)

    def _end(self, image_id: str, server_id: str, reason: str) -> None:
        """The snapshot failed: its image deleted (as Nova), the server's task cleared."""
        with self.database.transaction() as db:
            if image_service.fail_snapshot(db, image_id):
                compute.snapshot_done(db, server_id, f"Snapshot failed: {reason}")

    def _write(self, image_id: str, server_id: str, root: Path, min_bytes: int,
               target: Path, *, live: bool) -> int:
        """The merged view made an ext4 filesystem in a qcow2 at `target`; its virtual
        size."""
        here = self.run_dir / image_id
        shutil.rmtree(here, ignore_errors=True)
        for d in ("tree", "mask", "empty"):
            (here / d).mkdir(parents=True, mode=0o700)
        self.work_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        raw = self.work_dir / f"{image_id}.raw"
        try:
            with self.guests.disks.upper(server_id, self.guests.gdir(server_id),
                                         here / "fs") as upper:
                return self._run(image_id, server_id, upper, root, min_bytes, target, raw,
                                 here, live=live)
        finally:
            raw.unlink(missing_ok=True)
            shutil.rmtree(here, ignore_errors=True)

    def _run(self, image_id: str, server_id: str, upper: Path, root: Path, min_bytes: int,
             target: Path, raw: Path, here: Path, *, live: bool) -> int:
        """The capture's script over `upper` and the image's `root`, the guest frozen
        while it copies; the raw file's size."""
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
        # (its own mount and PID namespaces; killed with this process: setpriv's parent
        # death signal kills unshare, whose --kill-child kills the namespace's first
        # process, and the kernel the rest of it, so no orphan writes on)
        args = ["setpriv", "--pdeathsig", "KILL", "--",
                "unshare", "--mount", "--propagation", "private", "--pid", "--fork",
                "--kill-child", "--", "sh", "-c", SCRIPT,
                "snapshot", str(upper), str(root), str(here / "empty"), str(here / "mask"),
                str(here / "tree"), str(raw), str(target),
                str(max(1, -(-min_bytes // MiB))), CONFIG_DRIVE]
        frozen = self._freeze(server_id) if live else False
        try:
            with self._lock:
                if self._stopping.is_set():
                    raise SnapshotFailed("the dataplane is stopping")
                with open(here / "errors", "wb") as errors:  # (warnings per file: no pipe)
                    child = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.PIPE, stderr=errors, env=env,
                                             close_fds=True)
                self._children[image_id] = child
            try:
                assert child.stdout is not None
                for line in child.stdout:  # its files read: the guest runs on meanwhile
                    if line.strip() == b"frozen-done" and frozen:
                        self._thaw(server_id)
                        frozen = False
                child.wait()
            finally:
                with self._lock:
                    self._children.pop(image_id, None)
            if child.returncode != 0:
                message = (here / "errors").read_text(errors="replace").strip().splitlines()
                raise SnapshotFailed(f"writing the server's disk failed (exit "
                                     f"{child.returncode}): {message[-1] if message else ''}")
            return raw.stat().st_size
        finally:
            if frozen:
                self._thaw(server_id)

    # ------------------------------------------------------------------ the guest's cgroup
    def _freeze_file(self, server_id: str) -> Path | None:
        v2 = self.guests.cgroups.v2
        if v2 is None:
            return None
        path = v2 / self.prefix / server_id / "cgroup.freeze"
        return path if path.exists() else None

    def _freeze(self, server_id: str) -> bool:
        """The guest's processes frozen (cgroup v2's freezer, out of its reach: not the
        SIGSTOP of a pause) while its files are read; whether it was."""
        path = self._freeze_file(server_id)
        if path is None:
            return False
        try:
            path.write_text("1")
        except OSError:
            return False
        events = path.with_name("cgroup.events")
        deadline = time.monotonic() + FREEZE_WAIT
        while time.monotonic() < deadline:  # (the kernel's condition, polled)
            try:
                if "frozen 1" in events.read_text():
                    return True
            except OSError:
                break
            time.sleep(0.05)
        return True  # (frozen or not yet: thawed after all the same)

    def _thaw(self, server_id: str) -> None:
        path = self._freeze_file(server_id)
        if path is None:
            return
        try:
            if path.read_text().strip() != "0":
                path.write_text("0")
        except OSError:
            pass


def _digests(path: Path) -> tuple[int, str, str]:
    digests = storage.file_digests(path, MiB)
    return digests.size, digests.md5, digests.sha512
