"""A stop or soft reboot asks the image's init to power off and kills it after a bounded
time (Nova's shutdown_timeout, dataplane.shutdown_timeout); a HARD reboot kills at once
(issue 30). The server is SHUTOFF only once its guest is gone."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.dataplane.conftest import DataplaneCloud, eventually
from tests.dataplane.test_images_boot import (
    _boot,
    _cloud_init_done,
    _debian,
    _docker_archive,
    _ssh_allowed,
)


def _console(dp: DataplaneCloud, server: Any) -> str:
    """The console log as the API serves it, read from its file (the API refuses it while
    the server is in a task state, powering-off included)."""
    log = dp.cloud.data_dir / "dataplane" / "console" / f"{server.id}.log"
    return log.read_text(errors="replace") if log.exists() else ""


def _guest_gone(dp: DataplaneCloud, server_id: str) -> bool:
    """No process of the guest is left: its run directory has no live launcher."""
    run = Path("/run/stackling") / dp.prefix / "guests" / server_id
    try:
        pid = int((run / "pid").read_text())
    except (OSError, ValueError):
        return True
    return not Path(f"/proc/{pid}").exists()


def _shutoff_once_gone(dp: DataplaneCloud, server: Any, wait: float = 180) -> str:
    """Waits for SHUTOFF; the console log as it was when SHUTOFF was first seen, and the
    guest checked gone then (SHUTOFF comes only once it is)."""
    seen: dict[str, str] = {}

    def shutoff() -> bool:
        log = _console(dp, server)
        if dp.sdk.compute.get_server(server.id).status != "SHUTOFF":
            return False
        seen["log"], seen["gone"] = log, str(_guest_gone(dp, server.id))
        return True

    assert eventually(shutoff, timeout=wait), dp.sdk.compute.get_server(server.id).status
    assert seen["gone"] == "True", "SHUTOFF while the guest still ran"
    return seen["log"]


def test_debian_stop_runs_systemds_shutdown(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    image = _debian(dp)
    net, _ = dp.network("dp-off", "10.93.0.0/24")
    vm = _boot(dp, "vm-off", [net.id], image.id)
    ns, ip = dp.names.dhcp(net.id), dp.address(vm)
    _cloud_init_done(dp, ns, ip)
    assert dp.ssh(ns, ip, "touch ~/kept", user="debian").returncode == 0
    before = _console(dp, vm).count("Exiting container.")

    dp.cloud.cli("server", "stop", vm.id, parse=False)
    _shutoff_once_gone(dp, vm)
    # systemd's own power-off: its targets, then systemd-shutdown's last lines (the console's
    # copier may write those a moment after the guest's last process is gone)
    lines = ("Stopped", "Reached target", "poweroff.target", "Powering off.",
             "Exiting container.")

    def shut_down() -> bool:
        log = _console(dp, vm)
        tail = log[log.rfind("Debian GNU/Linux 12"):]
        return all(line in tail for line in lines) and \
            log.count("Exiting container.") == before + 1

    assert eventually(shut_down, timeout=30), _console(dp, vm)[-3000:]
    assert dp.unreachable(ns, ip)

    # a start boots it again, with its disk
    dp.sdk.compute.start_server(vm)
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=120, interval=0.2)
    assert dp.wait_ssh(ns, ip, "ls ~", user="debian", timeout=240).split() == ["kept"]

    # a clean stop of the cloud asks it too (every guest at once, a short bounded wait)
    dp.wait_ssh(ns, ip, "systemctl is-system-running --wait", user="debian", timeout=240)
    dp.cloud.stop()
    assert _console(dp, vm).count("Exiting container.") == before + 2, _console(dp, vm)[-3000:]


# An init that hears the power-off (it has a handler for SIGPWR, LXC's halt signal) and
# ignores it; the kit's busybox runs it (the image holds nothing else).
IGNORING_INIT = """#!/run/guest/kit/bin/busybox sh
trap 'echo "stackling-test: power-off ignored"' PWR
echo "stackling-test: init ready"
while :; do /run/guest/kit/bin/busybox sleep 1 & wait; done
"""


def _ignoring_image(dp: DataplaneCloud, tmp_path: Path) -> Any:
    tree = tmp_path / "tree"
    (tree / "sbin").mkdir(parents=True)
    (tree / "sbin/init").write_text(IGNORING_INIT)
    (tree / "sbin/init").chmod(0o755)
    archive = tmp_path / "ignoring.tar"
    _docker_archive(tree, archive)
    return dp.sdk.image.create_image(name="ignores-power-off", filename=str(archive),
                                     disk_format="raw", container_format="docker",
                                     visibility="private", wait=True)


def test_an_init_that_ignores_the_power_off_is_killed_after_the_timeout(
        dataplane_clouds: Any, tmp_path: Path) -> None:
    timeout = 4
    dp = dataplane_clouds(extra_env={"STACKLING_DATAPLANE__SHUTDOWN_TIMEOUT": str(timeout)})
    image = _ignoring_image(dp, tmp_path)
    net, _ = dp.network("dp-ign", "10.94.0.0/24")
    vm = _boot(dp, "vm-ign", [net.id], image.id)

    def ready(n: int) -> bool:
        return _console(dp, vm).count("stackling-test: init ready") >= n

    assert eventually(lambda: ready(1), timeout=120), _console(dp, vm)[-2000:]

    started = time.monotonic()
    dp.sdk.compute.stop_server(vm)
    assert eventually(lambda: "power-off ignored" in _console(dp, vm), timeout=60)
    status = dp.sdk.compute.get_server(vm.id).status  # (powering off: not SHUTOFF yet)
    assert status == "ACTIVE" or time.monotonic() - started >= timeout, status
    log = _shutoff_once_gone(dp, vm)
    assert time.monotonic() - started >= timeout
    assert log.count("power-off ignored") == 1, log

    # a soft reboot asks too, and is killed the same way, then boots again
    dp.sdk.compute.start_server(vm)
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=120, interval=0.2)
    assert eventually(lambda: ready(2), timeout=120)
    dp.sdk.compute.reboot_server(vm, "SOFT")
    assert eventually(lambda: ready(3), timeout=120), _console(dp, vm)[-2000:]
    assert _console(dp, vm).count("power-off ignored") == 2

    # a HARD reboot is not asked: killed at once
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=120, interval=0.2)
    dp.sdk.compute.reboot_server(vm, "HARD")
    assert eventually(lambda: ready(4), timeout=120), _console(dp, vm)[-2000:]
    assert _console(dp, vm).count("power-off ignored") == 2

    # the image's os_shutdown_timeout overrides the setting; 0 is no chance to shut down
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=120, interval=0.2)
    dp.sdk.image.update_image(image, os_shutdown_timeout="0")
    dp.sdk.compute.stop_server(vm)
    log = _shutoff_once_gone(dp, vm)
    assert log.count("power-off ignored") == 2, log[-2000:]


def _booted_once_active(dp: DataplaneCloud, server: Any) -> tuple[list[str], str]:
    """Waits for ACTIVE; the statuses seen on the way, and the boot token of the guest last
    started as its run directory held it when ACTIVE was first seen (in the same poll)."""
    run = Path("/run/stackling") / dp.prefix / "guests" / server.id
    seen: list[str] = []
    token: dict[str, str] = {}

    def active() -> bool:
        status = dp.sdk.compute.get_server(server.id).status
        if not seen or seen[-1] != status:
            seen.append(status)
        if status != "ACTIVE":
            return False
        token["spec"] = (run / "spec").read_text()  # (written as its launcher starts)
        return True

    assert eventually(active, timeout=180), seen
    return seen, token["spec"]


def test_a_reboot_start_or_rebuild_is_active_once_its_new_boot_has_started(
        dataplane_cloud: DataplaneCloud) -> None:
    """ACTIVE after a reboot, a start or a rebuild is the new boot's (as Nova clears the
    task when the driver's reboot, power_on or spawn returns): a client that waits for ACTIVE and logs in
    reaches the new boot, never the old guest on its way down."""
    dp = dataplane_cloud
    net, _ = dp.network("dp-rb", "10.93.2.0/24")
    _ssh_allowed(dp)  # from the network's DHCP namespace, as a user's machine
    vm = dp.server("vm-rb", net.id)
    ns, ip = dp.names.dhcp(net.id), dp.address(vm)
    assert dp.wait_ssh(ns, ip).strip() == "vm-rb"
    run = Path("/run/stackling") / dp.prefix / "guests" / vm.id
    for kind in ("HARD", "SOFT"):
        before = (run / "spec").read_text()
        assert dp.ssh(ns, ip, "touch /dev/shm/old-boot").returncode == 0
        dp.sdk.compute.reboot_server(vm, kind)
        seen, spec = _booted_once_active(dp, vm)
        assert seen[0] == ("HARD_REBOOT" if kind == "HARD" else "REBOOT"), seen
        assert spec != before, (kind, spec, before)  # the new boot had started
        assert dp.wait_ssh(ns, ip, "test -e /dev/shm/old-boot || echo new").strip() == "new"
    # a start likewise: SHUTOFF (task powering-on) until the guest's boot has started
    dp.sdk.compute.stop_server(vm)
    _shutoff_once_gone(dp, vm)
    before = (run / "spec").read_text()
    dp.sdk.compute.start_server(vm)
    seen, spec = _booted_once_active(dp, vm)
    assert seen[0] == "SHUTOFF" and spec != before, (seen, spec, before)
    assert dp.wait_ssh(ns, ip).strip() == "vm-rb"
    # and a rebuild: REBUILD until the rebuilt guest's boot has started
    before = (run / "spec").read_text()
    dp.sdk.compute.rebuild_server(vm, image=dp.sdk.image.find_image("cirros").id)
    seen, spec = _booted_once_active(dp, vm)
    assert seen[0] == "REBUILD" and spec != before, (seen, spec, before)
    assert dp.wait_ssh(ns, ip).strip() == "vm-rb"
