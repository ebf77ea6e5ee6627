"""README, "Reach your server": the walkthrough through the openstack CLI."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.dataplane.conftest import SSH_OPTS, DataplaneCloud


def test_reach_your_server(dataplane_cloud: DataplaneCloud) -> None:
    dp = dataplane_cloud
    cli = dp.cloud.cli
    pub = dp.key.with_suffix(".pub")
    cli("keypair", "create", "--public-key", str(pub), "mykey", "-f", "json", cloud="stackling")
    cli("security", "group", "rule", "create", "--protocol", "tcp", "--dst-port", "22",
        "default", "-f", "json", cloud="stackling")
    server = cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "auto",
                 "--key-name", "mykey", "--wait", "vm1", "-f", "json", cloud="stackling")
    fip = cli("floating", "ip", "create", "public", "-f", "json", cloud="stackling")
    cli("server", "add", "floating", "ip", "vm1", fip["floating_ip_address"], cloud="stackling",
        parse=False)

    stackling = str(Path(sys.executable).parent / "stackling")
    command = [stackling, "outside", "--data-dir", str(dp.cloud.data_dir), "--database-url",
               dp.cloud.database_url, "--", "ssh", "-i", str(dp.key), *SSH_OPTS,
               f"cirros@{fip['floating_ip_address']}", "hostname"]
    deadline = time.monotonic() + 60
    while True:
        out = subprocess.run(command, capture_output=True, text=True, timeout=30)
        if out.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert out.stdout.strip() == "vm1", out

    log = cli("console", "log", "show", server["id"], cloud="stackling", parse=False)
    assert "udhcpc: lease of" in log and "vm1 login:" in log, log
