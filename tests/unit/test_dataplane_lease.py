"""The dataplane lease (stackling/dataplane/lease.py): one holder at a time; a holder that
was a process of this machine and is gone loses it at once (a kill -9 and a start need not
wait out the TTL), a live one or one of another machine keeps it until it expires."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator

import pytest

from stackling.common.db import Database
from stackling.dataplane import lease
from stackling.dataplane.models import DataplaneLease


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    database = Database(database_url)
    DataplaneLease.__table__.create(database.engine, checkfirst=True)
    yield database
    database.dispose()


def test_a_gone_holder_of_this_machine_loses_the_lease_at_once(db: Database) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()  # reaped: its pid runs nothing of ours now
    dead = f"{socket.gethostname()}:{gone.pid}:deadbeef:{lease._machine()}"
    assert lease.try_acquire(db, dead, ttl=600)
    mine = lease.holder_name()
    assert lease.try_acquire(db, mine, ttl=600)  # long before the 600 s
    assert lease.holder_of(db) == mine
    # this process runs: another holder waits for the lease to expire
    assert not lease.try_acquire(db, lease.holder_name(), ttl=600)
    assert lease.holder_of(db) == mine


def test_a_holder_of_another_machine_keeps_the_lease_until_it_expires(db: Database) -> None:
    elsewhere = "another-host:1:cafe0000:000000000000"
    assert lease.try_acquire(db, elsewhere, ttl=600)
    assert not lease.try_acquire(db, lease.holder_name(), ttl=600)
    assert lease.holder_of(db) == elsewhere
    lease.release(db, elsewhere)  # expired (a clean stop gives it up)
    mine = lease.holder_name()
    assert lease.try_acquire(db, mine, ttl=600)
    assert lease.holder_of(db) == mine
