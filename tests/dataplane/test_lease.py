"""With `--workers 4` on PostgreSQL one process programs the kernel (the lease row names
it), and another takes over when it is killed."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from sqlalchemy import create_engine, text

from tests.dataplane.conftest import DataplaneCloud


def _holder(url: str) -> tuple[str, bool] | None:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            row = conn.execute(text("SELECT holder, expires_at > now() FROM dataplane_lease "
                                    "WHERE name = 'dataplane'")).first()
    finally:
        engine.dispose()
    return (row[0], bool(row[1])) if row else None


def test_one_worker_owns_the_dataplane_and_another_takes_over(
        dataplane_clouds: Callable[..., DataplaneCloud]) -> None:
    dp = dataplane_clouds("postgresql", workers=4, extra_env={
        "STACKLING_DATAPLANE__LEASE_TTL": "3", "STACKLING_DATAPLANE__RESYNC_INTERVAL": "0.5"})
    net, _ = dp.network("dp-lease", "10.91.0.0/24")
    one = dp.server("vm-l1", net.id)
    two = dp.server("vm-l2", net.id)
    assert dp.wait_ssh(dp.names.guest(one.id), dp.address(two)).strip() == "vm-l2"

    holder = _holder(dp.cloud.database_url)
    assert holder is not None and holder[1]
    owner_pid = int(holder[0].split(":")[1])
    # a worker process of the service (forked by its forkserver, a child of the service)
    workers = [w for c in _children(dp.cloud.proc.pid) for w in [c, *_children(c)]]
    assert owner_pid in workers
    # every worker but the owner holds no dataplane object: the guests' launchers and the
    # dnsmasqs were started by the owner only (a launcher's parent is the owner or init)
    for pid in _launchers(dp.prefix):
        assert _parent(pid) in (owner_pid, 1)

    os.kill(owner_pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    new = None
    while time.monotonic() < deadline:
        new = _holder(dp.cloud.database_url)
        if new and new[1] and new[0] != holder[0]:
            break
        time.sleep(0.2)
    assert new and new[1] and new[0] != holder[0], new
    assert int(new[0].split(":")[1]) != owner_pid

    # the new owner programs the kernel: a new server answers, the old ones still do
    three = dp.server("vm-l3", net.id)
    assert dp.wait_ssh(dp.names.guest(one.id), dp.address(three)).strip() == "vm-l3"
    assert dp.wait_ssh(dp.names.guest(three.id), dp.address(two)).strip() == "vm-l2"


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _parent(int(entry)) == pid:
            out.append(int(entry))
    return out


def _parent(pid: int) -> int | None:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _launchers(prefix: str) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = open(f"/proc/{entry}/cmdline", "rb").read()
            except OSError:
                continue
            if cmd.startswith(b"unshare") and f"/run/stackling/{prefix}/".encode() in cmd:
                out.append(int(entry))
    return out
