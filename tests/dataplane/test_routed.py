"""README "Routed networks", extended onto the wire (issue 22): a server on each rack,
`stackling outside -- ssh` into the rack-2 server, which pings the rack-1 server through
both racks' ToR routers (traceroute shows them); the rack-1 server live-migrates to the
other rack-1 host and stays reachable; a move to rack 2 is refused and nothing moves."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.dataplane.conftest import SSH_OPTS, DataplaneCloud


def outside_ssh(dp: DataplaneCloud, address: str, command: str, timeout: float = 60
                ) -> subprocess.CompletedProcess:
    """`stackling outside -- ssh cirros@<address> <command>`, until it answers."""
    stackling = str(Path(sys.executable).parent / "stackling")
    argv = [stackling, "outside", "--data-dir", str(dp.cloud.data_dir), "--database-url",
            dp.cloud.database_url, "--", "ssh", "-i", str(dp.key), *SSH_OPTS,
            f"cirros@{address}", command]
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if out.returncode == 0 or time.monotonic() > deadline:
            return out
        time.sleep(0.2)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_routed_network_walkthrough_on_the_wire(dataplane_clouds: Any, backend: str) -> None:
    dp: DataplaneCloud = dataplane_clouds(backend)
    cli = dp.cloud.cli
    admin, demo = "stackling-admin", "stackling"
    cli("network", "create", "--project", "demo", "--provider-network-type", "vlan",
        "--provider-physical-network", "physnet1", "--provider-segment", "2016", "routed",
        "-f", "json", cloud=admin)
    (first,) = cli("network", "segment", "list", "--network", "routed", "-f", "json", cloud=admin)
    cli("network", "segment", "set", "--name", "rack1", first["ID"], cloud=admin, parse=False)
    cli("network", "segment", "create", "--network", "routed", "--network-type", "vlan",
        "--physical-network", "physnet2", "--segment", "2017", "rack2", "-f", "json",
        cloud=admin)
    for rack in ("rack1", "rack2"):
        cli("subnet", "create", "--project", "demo", "--network", "routed", "--network-segment",
            rack, "--subnet-range", f"10.91.{rack[-1]}.0/24", f"routed-{rack}", "-f", "json",
            cloud=admin)

    # the extension: a key, SSH and ICMP allowed, a server on each rack (its port's address
    # is on that rack's segment, so the scheduler picks a host of that rack)
    cli("keypair", "create", "--public-key", str(dp.key.with_suffix(".pub")), "mykey",
        "-f", "json", cloud=demo)
    for rule in (("--protocol", "tcp", "--dst-port", "22"), ("--protocol", "icmp")):
        cli("security", "group", "rule", "create", *rule, "default", "-f", "json", cloud=demo)
    servers = {}
    for rack in ("1", "2"):
        cli("port", "create", "--network", "routed", "--fixed-ip",
            f"subnet=routed-rack{rack},ip-address=10.91.{rack}.10", f"rack{rack}-port",
            "-f", "json", cloud=demo)
        servers[rack] = cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros",
                            "--key-name", "mykey", "--port", f"rack{rack}-port", "--wait",
                            f"rack{rack}-vm", "-f", "json", cloud=demo)
    hosts = {rack: cli("server", "show", s["id"], "-f", "json", cloud=admin)
             ["OS-EXT-SRV-ATTR:host"] for rack, s in servers.items()}
    assert hosts["1"].startswith("compute-r1-") and hosts["2"].startswith("compute-r2-"), hosts

    out = outside_ssh(dp, "10.91.2.10",
                      "hostname; /bin/ping -c 1 -W 2 10.91.1.10; /bin/traceroute -n -q 1 -w 2 10.91.1.10")
    assert out.returncode == 0, out
    lines = out.stdout.splitlines()
    assert lines[0] == "rack2-vm", out.stdout
    assert "1 packets received" in out.stdout and "ttl=62" in out.stdout, out.stdout  # 2 routers
    hops = [m.group(1) for m in re.finditer(r"(?m)^\s*\d+\s+(\d+\.\d+\.\d+\.\d+)\s",
                                             out.stdout)]
    # rack 2's ToR (its segment's gateway), rack 1's ToR (on the spine), the server
    assert hops == ["10.91.2.1", "198.19.0.10", "10.91.1.10"], out.stdout

    # the rack-1 server moves to the other rack-1 host, live, and stays reachable
    other = "compute-r1-2" if hosts["1"] == "compute-r1-1" else "compute-r1-1"
    cli("server", "migrate", "--live-migration", "--host", other, "--wait",
        servers["1"]["id"], cloud=admin, parse=False)
    moved = cli("server", "show", servers["1"]["id"], "-f", "json", cloud=admin)
    assert moved["OS-EXT-SRV-ATTR:host"] == other
    out = outside_ssh(dp, "10.91.2.10", "/bin/ping -c 1 -W 2 10.91.1.10")
    assert "1 packets received" in out.stdout, out
    log = cli("console", "log", "show", servers["1"]["id"], cloud=demo, parse=False)
    assert log.count("rack1-vm login:") == 1, log  # a live migration is no boot

    # a move to rack 2 is refused before anything moves
    refused = cli("server", "migrate", "--live-migration", "--host", "compute-r2-1",
                  servers["1"]["id"], cloud=admin, check=False)
    assert refused.returncode != 0 and "cannot reach" in refused.stderr, refused
    still = cli("server", "show", servers["1"]["id"], "-f", "json", cloud=admin)
    assert still["OS-EXT-SRV-ATTR:host"] == other and still["status"] == "ACTIVE"
    out = outside_ssh(dp, "10.91.1.10", "hostname")
    assert out.stdout.strip() == "rack1-vm", out
