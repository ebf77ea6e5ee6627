"""Moves on the wire (issue 22): cold migration (confirm and revert), resize, live migration
and evacuation move the guest to the destination host's namespace with the same port, and
it answers before and after each; an SSH session open through a live migration survives."""

from __future__ import annotations

import subprocess
import threading
from typing import Any

import pytest

from tests.dataplane.conftest import SSH_OPTS, DataplaneCloud, eventually
from tests.dataplane.test_wire import links


def boot_on(dp: DataplaneCloud, name: str, network_id: str, host: str) -> Any:
    image = dp.sdk.image.find_image("cirros")
    flavor = next(f for f in dp.sdk.compute.flavors() if f.name == "m1.tiny")
    server = dp.sdk.compute.create_server(
        name=name, image_id=image.id, flavor_id=flavor.id, key_name=dp.keypair().name,
        networks=[{"uuid": network_id}], availability_zone=f"nova:{host}")
    return dp.sdk.compute.wait_for_server(server, wait=120, interval=0.2)


def open_session(dp: DataplaneCloud, namespace: str, address: str
                 ) -> tuple[subprocess.Popen, list[int]]:
    """An SSH session that prints a counter every 50 ms, once it has printed a few lines (a
    connect that fails at once, the guest still settling after the last move, is made
    again; the migration under test starts only with a session open)."""
    stderr = ""
    for _ in range(5):
        lines: list[int] = []  # each attempt's own (a killed one's reader may still add)
        session = subprocess.Popen(
            ["nsenter", f"--net=/run/netns/{namespace}", "--", "ssh", "-i", str(dp.key),
             *SSH_OPTS, f"cirros@{address}",
             "i=0; while [ $i -lt 1200 ]; do echo $i; i=$((i + 1)); usleep 50000; done"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=lambda s=session, out=lines: out.extend(int(x) for x in s.stdout),
                         daemon=True).start()
        if eventually(lambda s=session, out=lines: len(out) > 5 or s.poll() is not None) \
                and len(lines) > 5:
            return session, lines
        session.kill()
        session.wait()
        stderr = session.stderr.read() if session.stderr else ""
    raise AssertionError(f"no SSH session to {address}: {stderr}\n{dp.consoles(address)}")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_every_move_keeps_the_server_reachable(dataplane_clouds: Any, backend: str) -> None:
    dp: DataplaneCloud = dataplane_clouds(backend)
    sdk = dp.sdk
    net, _ = dp.network("dp-moves", "10.73.0.0/24")  # a tenant network: VXLAN
    peer = boot_on(dp, "peer", net.id, "compute-r1-1")
    mover = boot_on(dp, "mover", net.id, "compute-r2-1")
    address = dp.address(mover)
    port = next(iter(sdk.network.ports(device_id=mover.id)))
    tap = dp.names.tap(port.id)
    peer_ns = dp.names.guest(peer.id)

    def host() -> str:
        return sdk.compute.get_server(mover.id).compute_host

    def on_host_only(name: str) -> bool:
        """The guest's tap hangs off `name`'s namespace and no other host's."""
        return all((tap in links(dp, dp.names.host(h))) == (h == name)
                   for h in ("compute-r1-1", "compute-r1-2", "compute-r2-1", "compute-r2-2"))

    def reachable() -> None:
        assert dp.wait_ssh(peer_ns, address).strip() == "mover"
        assert eventually(lambda: on_host_only(host()))

    def wait(status: str) -> None:
        sdk.compute.wait_for_server(sdk.compute.get_server(mover.id), status=status, wait=60,
                                    interval=0.2)

    reachable()
    # cold migration, confirmed: on another host, reachable in VERIFY_RESIZE and after
    source = host()
    sdk.compute.migrate_server(mover)
    wait("VERIFY_RESIZE")
    assert host() != source
    reachable()
    sdk.compute.confirm_server_resize(mover)
    wait("ACTIVE")
    reachable()

    # cold migration, reverted: back on its source host
    source = host()
    sdk.compute.migrate_server(mover)
    wait("VERIFY_RESIZE")
    assert host() != source
    reachable()
    sdk.compute.revert_server_resize(mover)
    wait("ACTIVE")
    assert host() == source
    reachable()

    # resize to a bigger flavor, confirmed
    small = next(f for f in sdk.compute.flavors() if f.name == "m1.small")
    sdk.compute.resize_server(mover, small.id)
    wait("VERIFY_RESIZE")
    reachable()
    sdk.compute.confirm_server_resize(mover)
    wait("ACTIVE")
    reachable()

    # live migration with an SSH session open through it: the session goes on
    session, lines = open_session(dp, peer_ns, address)
    try:
        source = host()
        sdk.compute.live_migrate_server(mover, host=None, block_migration="auto")
        assert eventually(lambda: host() != source and on_host_only(host()))
        seen = len(lines)
        assert eventually(lambda: len(lines) > seen + 5)  # still talking, from the new host
        assert session.poll() is None, session.stderr.read() if session.stderr else ""
        assert lines == list(range(len(lines)))  # one session, nothing lost or repeated
    finally:
        session.kill()
        session.wait()
    log = sdk.compute.get_server_console_output(mover)["output"]
    boots = log.count("mover login:")
    reachable()

    # evacuation: its host is down; rebuilt elsewhere with the same port
    source = host()
    service = next(s for s in sdk.compute.services() if s.host == source
                   and s.binary == "nova-compute")
    sdk.compute.update_service_forced_down(service, source, "nova-compute", forced=True)
    try:
        sdk.compute.evacuate_server(mover)
        assert eventually(lambda: host() != source)
        wait("SHUTOFF")  # since 2.95 an evacuated server is stopped at its destination
        sdk.compute.start_server(mover)
        wait("ACTIVE")
        reachable()
    finally:
        sdk.compute.update_service_forced_down(service, source, "nova-compute", forced=False)
    # a live migration was no boot; the start after the evacuation was one
    assert eventually(lambda: sdk.compute.get_server_console_output(mover)["output"]
                      .count("mover login:") == boots + 1)
