"""`stackling audit` covers the wire: every kernel object the desired state asks for exists
and nothing else with the cloud's prefix does; findings as JSON lines, exit status 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.dataplane.conftest import DataplaneCloud, eventually, wire_findings

STACKLING = str(Path(sys.executable).parent / "stackling")
# No periodic pass: a change made by hand stays until an API write wakes the reconciler.
QUIET = {"STACKLING_DATAPLANE__RESYNC_INTERVAL": "3600"}


def audit(dp: DataplaneCloud) -> tuple[int, list[dict[str, Any]]]:
    run = subprocess.run([STACKLING, "audit", "--database-url", dp.cloud.database_url,
                          "--data-dir", str(dp.cloud.data_dir)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "STACKLING_DATAPLANE__DRIVER": "netns"})
    assert run.returncode in (0, 1), run.stderr
    return run.returncode, [json.loads(line) for line in run.stdout.splitlines()]


def audit_clean(dp: DataplaneCloud, timeout: float = 60) -> bool:
    """Whether `stackling audit` comes to find nothing: polled on the serving cloud's
    GET /audit (a request; each `stackling audit` loads every service, seconds of CPU the
    reconciler's repair waits behind), then asked of the command itself."""
    return eventually(lambda: not wire_findings(dp), timeout=timeout) and eventually(
        lambda: audit(dp) == (0, []), timeout=timeout)


def converged(dp: DataplaneCloud) -> bool:
    status = Path(f"/run/stackling/{dp.prefix}/status.json")
    try:
        return bool(json.loads(status.read_text())["converged"])
    except (OSError, ValueError, KeyError):
        return False


def resources(findings: list[dict[str, Any]]) -> set[str]:
    return {f["resource"] for f in findings}


def test_audit_is_empty_when_converged_and_names_what_was_changed_by_hand(
        dataplane_clouds: Any) -> None:
    dp: DataplaneCloud = dataplane_clouds("sqlite", extra_env=QUIET)
    public = dp.sdk.network.find_network("public")
    net, sub = dp.network("dp-audit", "10.71.0.0/24")
    router = dp.sdk.network.create_router(name="dp-audit-gw", external_gateway_info={
        "network_id": public.id})
    dp.sdk.network.add_interface_to_router(router, subnet=sub.id)
    one = dp.server("vm-audit-1", net.id)
    two = dp.server("vm-audit-2", net.id)
    assert dp.wait_ssh(dp.names.guest(one.id), dp.address(two)).strip() == "vm-audit-2"
    assert eventually(lambda: converged(dp))

    # converged: nothing missing, nothing extra
    code, findings = audit(dp)
    assert (code, findings) == (0, []), findings

    # a port's link removed by hand (its veth goes, both ends), a stray prefixed namespace
    port = next(iter(dp.sdk.network.ports(device_id=two.id)))
    tap = dp.names.tap(port.id)
    holder = next(ns for ns in _namespaces(dp) if f" {tap}@" in _links(ns))  # its host's
    subprocess.run(["ip", "-n", holder, "link", "del", tap], check=True)
    stray = f"{dp.prefix}-zstray"
    subprocess.run(["ip", "netns", "add", stray], check=True)
    # a process started under the cloud's run directory that no pid file owns
    squatter = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)",
                                 f"/run/stackling/{dp.prefix}/squatter"])
    try:
        code, findings = audit(dp)
        assert code == 1
        assert {f"link {holder}/{tap}", f"namespace {stray}"} <= resources(findings), findings
        assert any(f["resource"].startswith(f"process {squatter.pid}:") for f in findings)
        squatter.kill()
        squatter.wait()
        missing = next(f for f in findings if f["resource"] == f"link {holder}/{tap}")
        assert (missing["check"], missing["expected"], missing["actual"]) == (
            "dataplane.wire", "present", "missing")
        assert next(f for f in findings if f["resource"] == f"namespace {stray}")[
            "expected"] == "absent"

        # an API write wakes the reconciler: it repairs the link and removes the stray
        dp.sdk.network.create_network(name="dp-audit-wake")
        assert audit_clean(dp), audit(dp)
    finally:
        squatter.kill()
        squatter.wait()
        subprocess.run(["ip", "netns", "del", stray], capture_output=True)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_a_dead_guest_is_a_finding(dataplane_clouds: Any, backend: str) -> None:
    dp: DataplaneCloud = dataplane_clouds(backend, extra_env=QUIET)
    net, _ = dp.network("dp-audit-p", "10.72.0.0/24")
    server = dp.server("vm-audit-p", net.id)
    assert dp.wait_ssh(dp.names.guest(server.id), dp.address(server)).strip() == "vm-audit-p"
    assert eventually(lambda: converged(dp))
    assert audit(dp) == (0, [])

    pid = int(Path(f"/run/stackling/{dp.prefix}/guests/{server.id}/pid").read_text())
    subprocess.run(["kill", "-9", str(pid)], check=True)
    assert eventually(lambda: f"guest {server.id}" in resources(audit(dp)[1]))
    dp.sdk.compute.reboot_server(server, "HARD")  # a write: the reconciler boots it again
    assert audit_clean(dp), audit(dp)


def _namespaces(dp: DataplaneCloud) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(dp.prefix + "-")]


def _links(ns: str) -> str:
    return subprocess.run(["ip", "-n", ns, "-o", "link"], capture_output=True, text=True).stdout


def test_with_the_driver_off_anything_with_the_prefix_is_a_finding(netns_guard: None,
                                                                   api: Any) -> None:
    """A cloud serving with `dataplane.driver: none` wants no kernel object: a namespace
    with its prefix (left by an earlier run with the driver on) is named by GET /audit."""
    from stackling.dataplane.names import cloud_prefix

    assert [f for f in api.get("/audit").json()["findings"]
            if f["check"] == "dataplane.wire"] == []
    left = f"{cloud_prefix(api.runtime.settings.db_url)}-zleft"
    subprocess.run(["ip", "netns", "add", left], check=True)
    try:
        findings = [f for f in api.get("/audit").json()["findings"]
                    if f["check"] == "dataplane.wire"]
        assert [(f["resource"], f["expected"]) for f in findings] == [
            (f"namespace {left}", "absent")]
    finally:
        subprocess.run(["ip", "netns", "del", left], check=True)
