"""`server image create` (Nova's createImage, issue 30): the server's filesystem, its image
under its own changes, uploaded as a new image that boots with them (dataplane/snapshots.py).
A snapshot that cannot be written is deleted, as Nova's; one a crash interrupts is written
by the next process; cirros (the kit, no image data) keeps its metadata-only snapshot."""

from __future__ import annotations

import time
from typing import Any

import pytest
from openstack import exceptions

from tests.dataplane.conftest import DataplaneCloud, eventually
from tests.dataplane.test_images_boot import _boot, _cloud_init_done, _debian, _ssh_allowed


def _host_key(dp: DataplaneCloud, ns: str, ip: str) -> str:
    return dp.in_ns(ns, "ssh-keyscan", "-t", "ed25519", ip).stdout.split()[-1]


def _task_state(dp: DataplaneCloud, server: Any) -> str | None:
    return dp.sdk.compute.get_server(server.id).task_state


def _active(dp: DataplaneCloud, image_id: str, timeout: float = 600) -> Any:
    """The image once active (a deleted one fails at once: its snapshot failed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        image = dp.sdk.image.find_image(image_id)
        assert image is not None, f"snapshot {image_id} was deleted:\n{dp.cloud.log_tail()}"
        if image.status == "active":
            return image
        time.sleep(0.2)
    raise AssertionError(f"snapshot {image_id} not active: {image.status}")


def _last_action(dp: DataplaneCloud, server: Any, action: str) -> Any:
    found = [a for a in dp.sdk.compute.server_actions(server) if a.action == action]
    latest = max(found, key=lambda a: a.start_time)
    return dp.sdk.compute.get_server_action(latest.request_id, server)


def test_snapshot_of_a_changed_debian_server_boots_with_its_changes(
        dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    image = _debian(dp)
    net, _ = dp.network("dp-snap", "10.91.0.0/24")
    src = _boot(dp, "vm-snap-src", [net.id], image.id)
    ns, ip = dp.names.dhcp(net.id), dp.address(src)
    _cloud_init_done(dp, ns, ip)
    # a file written, a user installed, a file of the image deleted (the layer's whiteout)
    out = dp.ssh(ns, ip, "echo changed | sudo tee /etc/stackling-snapshot >/dev/null && "
                 "sudo useradd -m -s /bin/bash bob && echo hi | sudo tee /home/bob/note "
                 ">/dev/null && sudo chown bob: /home/bob/note && sudo rm /etc/motd && "
                 "sync && echo ok", user="debian")
    assert out.stdout.strip() == "ok", out
    src_key = _host_key(dp, ns, ip)

    # a snapshot that cannot be written (its work directory unusable) is deleted, as
    # Nova's; the server's task is cleared and its createImage action says why
    blocker = dp.cloud.data_dir / "dataplane" / "snapshots"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("in the way\n")
    failed = dp.sdk.compute.create_server_image(src, "snap-fails")
    assert eventually(lambda: dp.sdk.image.find_image(failed.id) is None, timeout=120)
    assert eventually(lambda: _task_state(dp, src) is None, timeout=30)
    action = _last_action(dp, src, "createImage")
    assert action.message == "Error", action
    assert "Snapshot failed" in (action.events[-1].get("traceback") or ""), action.events
    assert dp.sdk.compute.get_server(src.id).status == "ACTIVE"
    blocker.unlink()

    # the live snapshot: queued/saving while the server shows image_uploading (a second
    # one meanwhile is Nova's 409), then active with its data
    snap = dp.sdk.compute.create_server_image(src, "snap-deb")
    pending = dp.sdk.image.get_image(snap.id)
    assert pending.status in ("queued", "saving"), pending.status
    assert _task_state(dp, src) == "image_uploading"
    with pytest.raises(exceptions.ConflictException):
        dp.sdk.compute.create_server_image(src, "snap-twice")
    done = _active(dp, snap.id)
    assert done.size > 0 and done.checksum and done.hash_algo == "sha512" \
        and done.hash_value, done
    assert (done.disk_format, done.container_format) == ("qcow2", "bare"), done
    assert done.virtual_size and done.virtual_size > 0, done
    assert done.instance_uuid == src.id, done
    assert eventually(lambda: _task_state(dp, src) is None, timeout=30)
    assert dp.sdk.compute.get_server(src.id).status == "ACTIVE"
    assert not dp.sdk.image.find_image("snap-twice")
    # the source ran on (unfrozen), itself
    assert dp.wait_ssh(ns, ip, "cat /etc/stackling-snapshot", user="debian").strip() == "changed"

    # a server booted from it has the changes, and its own hostname and host keys
    # (cloud-init's per-instance modules: a new instance id)
    copy = _boot(dp, "vm-snap-copy", [net.id], done.id)
    cip = dp.address(copy)
    status = _cloud_init_done(dp, ns, cip)
    assert "status: done" in status, status
    out = dp.ssh(ns, cip, "cat /etc/stackling-snapshot; id -un bob; sudo cat /home/bob/note; "
                 "stat -c %U /home/bob/note; test -e /etc/motd && echo motd || echo no-motd; "
                 "hostname", user="debian")
    assert out.stdout.split() == ["changed", "bob", "hi", "bob", "no-motd", "vm-snap-copy"], out
    copy_key = _host_key(dp, ns, cip)
    assert copy_key != src_key
    assert _host_key(dp, ns, ip) == src_key

    # a crash midway (kill -9 while it is `saving`, its guest frozen for the copy): the next
    # process's lease holder writes it, and the guest runs on
    dp.ssh(ns, cip, "echo second | sudo tee /etc/stackling-second >/dev/null", user="debian")
    second = dp.sdk.compute.create_server_image(copy, "snap-after-crash")
    assert eventually(lambda: dp.sdk.image.get_image(second.id).status == "saving",
                      timeout=120), dp.sdk.image.get_image(second.id).status
    dp.cloud.stop(kill=True)
    dp.cloud.start()
    resumed = _active(dp, second.id)
    assert resumed.size > 0 and resumed.checksum, resumed
    assert eventually(lambda: _task_state(dp, copy) is None, timeout=30)
    assert dp.wait_ssh(ns, cip, "cat /etc/stackling-second", user="debian").strip() == "second"

    # a stopped server's snapshot is its disk as it was left
    dp.sdk.compute.stop_server(src)
    dp.sdk.compute.wait_for_server(src, status="SHUTOFF", wait=120, interval=0.2)
    stopped = _active(dp, dp.sdk.compute.create_server_image(src, "snap-stopped").id)
    assert stopped.size > 0 and stopped.checksum != done.checksum, stopped
    assert eventually(lambda: _task_state(dp, src) is None, timeout=30)

    # a server deleted during its snapshot takes the snapshot's image with it, as Nova's
    gone = dp.sdk.compute.create_server_image(copy, "snap-of-deleted")
    dp.sdk.compute.delete_server(copy)
    dp.sdk.compute.wait_for_delete(copy, wait=120, interval=0.2)
    assert eventually(lambda: dp.sdk.image.find_image(gone.id) is None, timeout=120)


def test_cirros_snapshot_stays_metadata_only(dataplane_cloud: DataplaneCloud) -> None:
    """Cirros is the kit's root filesystem (its image has no data): its snapshot is an
    image record as before, active at once, and boots the kit again (the changes of the
    server are not in it)."""
    dp = dataplane_cloud
    net, _ = dp.network("dp-snap-cirros", "10.92.0.0/24")
    _ssh_allowed(dp)
    vm = dp.server("vm-cirros-src", net.id)
    ns, ip = dp.names.dhcp(net.id), dp.address(vm)
    dp.wait_ssh(ns, ip, "touch ~/mine")
    snap = dp.sdk.compute.create_server_image(vm, "snap-cirros")
    done = _active(dp, snap.id, timeout=120)
    assert done.instance_uuid == vm.id, done
    assert eventually(lambda: _task_state(dp, vm) is None, timeout=60)
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny")
    copy = dp.sdk.compute.create_server(name="vm-cirros-copy", image_id=done.id,
                                        flavor_id=flavor.id, key_name=dp.keypair().name,
                                        networks=[{"uuid": net.id}])
    copy = dp.sdk.compute.wait_for_server(copy, wait=120, interval=0.2)
    cip = dp.address(copy)
    assert dp.wait_ssh(ns, cip, "hostname").strip() == "vm-cirros-copy"
    assert dp.ssh(ns, cip, "ls ~").stdout.split() == []
