"""The dataplane lease: exactly one process programs a cloud's kernel objects.

A conditional UPDATE takes or renews the row (it is ours, or its holder let it expire);
the first process inserts it, and a concurrent insert loses on the primary key. The
database decides, so `serve --workers N` on PostgreSQL or MariaDB has one owner, and
another worker takes over `ttl` seconds after the owner dies.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import or_, update
from sqlalchemy.exc import IntegrityError, OperationalError

from stackling.common.db import Database, utcnow_precise
from stackling.dataplane.models import DataplaneLease

NAME = "dataplane"


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
            if db.get(DataplaneLease, NAME) is not None:
                return False
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
