"""Suspend/resume and shelve/unshelve act on the guest as a hypervisor would: gone while
suspended or shelved (unreachable), booted again by resume or unshelve (reachable)."""

from __future__ import annotations

from tests.dataplane.conftest import DataplaneCloud, eventually


def test_suspend_resume_shelve_unshelve(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-power", "10.84.0.0/24")
    probe = dp.server("vm-probe", net.id)
    vm = dp.server("vm-power", net.id)
    ns, ip = dp.names.guest(probe.id), dp.address(vm)
    assert dp.wait_ssh(ns, ip).strip() == "vm-power"

    dp.sdk.compute.suspend_server(vm)
    dp.sdk.compute.wait_for_server(vm, status="SUSPENDED", wait=60, interval=0.2)
    assert eventually(lambda: dp.unreachable(ns, ip))
    dp.sdk.compute.resume_server(vm)
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=60, interval=0.2)
    assert dp.wait_ssh(ns, ip).strip() == "vm-power"

    dp.sdk.compute.shelve_server(vm)
    dp.sdk.compute.wait_for_server(vm, status="SHELVED_OFFLOADED", wait=60, interval=0.2)
    assert eventually(lambda: dp.unreachable(ns, ip))
    dp.sdk.compute.unshelve_server(vm)
    dp.sdk.compute.wait_for_server(vm, status="ACTIVE", wait=60, interval=0.2)
    assert dp.wait_ssh(ns, ip).strip() == "vm-power"
    assert dp.cloud.cli("console", "log", "show", vm.id, parse=False).count(
        "vm-power login:") >= 3  # booted, resumed, unshelved
