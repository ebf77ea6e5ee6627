"""The dataplane lease: exactly one process programs a cloud's kernel objects.

A conditional UPDATE takes or renews the row (it is ours, or its holder let it expire);
the first process inserts it, and a concurrent insert loses on the primary key. The
database decides, so `serve --workers N` on PostgreSQL or MariaDB has one owner, and
another worker takes over `ttl` seconds after the owner dies - at once when the owner was a
process of this machine (same boot, same PID namespace: its holder name says so) that is
gone, as after a kill -9 and a start (the TTL was most of that restart's wait).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import socket
import uuid
from functools import cache
from pathlib import Path

from sqlalchemy import or_, update
from sqlalchemy.exc import IntegrityError, OperationalError

from stackling.common.db import Database, utcnow_precise
from stackling.dataplane.models import DataplaneLease

NAME = "dataplane"


@cache
def _machine() -> str:
    """This machine's boot and PID namespace: where a holder's pid means this process."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = socket.gethostname()
    return hashlib.sha256(f"{boot}:{os.stat('/proc/self/ns/pid').st_ino}".encode()
                          ).hexdigest()[:12]


def holder_name() -> str:
    """host:pid:nonce:machine - a holder another process of this machine can tell is gone."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}:{_machine()}"


def _gone_here(holder: str) -> bool:
    """The holder was a process of this machine that no longer runs (a zombie is gone)."""
    parts = holder.split(":")
    if len(parts) != 4 or parts[3] != _machine() or not parts[1].isdigit():
        return False
    try:
        stat = Path(f"/proc/{parts[1]}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def try_acquire(database: Database, holder: str, ttl: float) -> bool:
    """Take or renew the lease for `ttl` seconds; False when another process holds it."""
    now = utcnow_precise()
    expires = now + dt.timedelta(seconds=ttl)
    try:
        with database.transaction() as db:
            taken = db.execute(
                update(DataplaneLease)
                .where(DataplaneLease.name == NAME,
                       or_(DataplaneLease.holder == holder, DataplaneLease.expires_at < now))
                .values(holder=holder, expires_at=expires)).rowcount
            if taken:
                return True
            row = db.get(DataplaneLease, NAME)
            if row is not None:
                if row.holder == holder or not _gone_here(row.holder):
                    return False
                return bool(db.execute(  # its dead holder's, and only if still its
                    update(DataplaneLease)
                    .where(DataplaneLease.name == NAME, DataplaneLease.holder == row.holder)
                    .values(holder=holder, expires_at=expires)).rowcount)
            db.add(DataplaneLease(name=NAME, holder=holder, expires_at=expires))
            db.flush()
            return True
    except (IntegrityError, OperationalError):
        return False  # another process inserted or holds the row: not ours this time


def release(database: Database, holder: str) -> None:
    """Give the lease up at a clean stop, so a survivor takes over at once."""
    with database.transaction() as db:
        db.execute(update(DataplaneLease)
                   .where(DataplaneLease.name == NAME, DataplaneLease.holder == holder)
                   .values(expires_at=utcnow_precise() - dt.timedelta(seconds=1)))


def holder_of(database: Database) -> str | None:
    with database.transaction(write=False) as db:
        row = db.get(DataplaneLease, NAME)
        return row.holder if row is not None and row.expires_at > utcnow_precise() else None
