"""The metadata service is bounded as Neutron's haproxy metadata proxy is (issue 29 item 4):
1,000 idle connections from one guest cost the serving process neither a thread nor a file
descriptor each; beyond its limit the guest is refused at once, the API keeps answering,
and once its connections are gone the guest gets its metadata again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.dataplane.conftest import DataplaneCloud, eventually

PER_GUEST = 50  # metadata_connections_per_guest's default

# Run inside the guest's network namespace: open CONNECTIONS to the service and send
# nothing; report how many the service refused (reset or closed) once it has answered them
# all, hold the rest until told on stdin, then close them.
HOLD = r"""
import json, resource, select, socket, sys, time
n, limit = int(sys.argv[1]), int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held, refused, unconnected = [], 0, 0
for _ in range(n):
    s = socket.socket()
    s.settimeout(10)
    try:
        s.connect(("169.254.169.254", 80))
    except ConnectionResetError:  # refused before connect() returned
        refused += 1
        s.close()
        continue
    except OSError:
        unconnected += 1
        s.close()
        continue
    held.append(s)
poller = select.poll()
for s in held:
    poller.register(s, select.POLLIN | select.POLLHUP | select.POLLERR)
by_fd = {s.fileno(): s for s in held}
deadline = time.monotonic() + 60  # the condition: what the service keeps is the limit
while len(by_fd) > limit and time.monotonic() < deadline:
    for fd, _ in poller.poll(200):
        s = by_fd.pop(fd)
        poller.unregister(fd)
        try:
            s.recv(1)
        except OSError:
            pass
        s.close()
        refused += 1
print(json.dumps({"held": len(by_fd), "refused": refused, "unconnected": unconnected}),
      flush=True)
sys.stdin.readline()
for s in by_fd.values():
    s.close()
print("closed", flush=True)
"""

# One request on a fresh connection; its status line and body.
FETCH = r"""
import socket
s = socket.create_connection(("169.254.169.254", 80), timeout=10)
s.sendall(b"GET /openstack/latest/meta_data.json HTTP/1.0\r\nHost: x\r\n\r\n")
data = b""
while chunk := s.recv(65536):
    data += chunk
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode())
print(body.decode())
"""


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines()
                    if line.startswith("Threads:")))


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _fetch(dp: DataplaneCloud, namespace: str) -> tuple[str, str]:
    got = dp.in_ns(namespace, sys.executable, "-c", FETCH)
    status, _, body = got.stdout.partition("\n")
    return status, body


def test_idle_connections_from_a_guest_are_bounded(dataplane_clouds) -> None:
    # the guest's connections stay open until the test closes them (no race with the idle
    # timeout on a slow machine); the limits are the defaults
    dp: DataplaneCloud = dataplane_clouds(
        "sqlite", extra_env={"STACKLING_DATAPLANE__METADATA_IDLE_TIMEOUT": "600"})
    net, _ = dp.network("md-net", "10.57.0.0/24")
    vm = dp.server("md-vm", net.id)
    ns = dp.names.guest(vm.id)
    assert dp.wait_ssh(ns, dp.address(vm)).strip() == "md-vm"  # it booted with its metadata
    assert eventually(lambda: _fetch(dp, ns)[0] == "HTTP/1.0 200 OK")
    assert dp.cloud.proc is not None
    pid = dp.cloud.proc.pid  # one worker: the process that serves metadata
    threads, fds = _threads(pid), _fds(pid)

    hold = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{ns}", "--", sys.executable, "-c", HOLD, "1000",
         str(PER_GUEST)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert hold.stdout is not None and hold.stdin is not None
        report = json.loads(hold.stdout.readline() or "{}")
        held_threads, held_fds = _threads(pid), _fds(pid)
        print(f"serving process: threads {threads} -> {held_threads}, fds {fds} -> {held_fds};"
              f" guest: {report}")
        # the guest keeps its limit and is refused beyond it
        assert report == {"held": PER_GUEST, "refused": 1000 - PER_GUEST, "unconnected": 0}
        # no thread per connection; a descriptor only per connection kept
        assert held_threads <= threads + 5, (threads, held_threads)
        assert held_fds <= fds + PER_GUEST + 20, (fds, held_fds)
        # the API answers meanwhile
        r = dp.cloud.http(dp.cloud.token()).get("/compute/v2.1/servers")
        assert r.status_code == 200 and [s["id"] for s in r.json()["servers"]] == [vm.id]
        # the guest's limit is held: another connection of it is refused
        assert _fetch(dp, ns)[0] == ""
        hold.stdin.write("close\n")
        hold.stdin.flush()
        assert hold.stdout.readline().strip() == "closed"
    finally:
        if hold.poll() is None:
            hold.kill()
        hold.wait()
    # its connections gone, the guest gets its metadata on a fresh one
    assert eventually(lambda: _fetch(dp, ns)[0] == "HTTP/1.0 200 OK")
    status, body = _fetch(dp, ns)
    assert status == "HTTP/1.0 200 OK" and json.loads(body)["uuid"] == vm.id
    # and the process is back where it was
    assert eventually(lambda: _fds(pid) <= fds + 5), (fds, _fds(pid))
