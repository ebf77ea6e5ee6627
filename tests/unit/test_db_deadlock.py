"""`is_deadlock` recognises a deadlock hidden behind MariaDB's lost savepoint."""

from __future__ import annotations

from sqlalchemy import exc

from stackling.common.db import is_deadlock


def _op(message: str) -> exc.OperationalError:
    return exc.OperationalError("stmt", {}, Exception(message))


def test_savepoint_lost_after_a_deadlock_is_a_deadlock():
    deadlock = _op("(1213, 'Deadlock found when trying to get lock')")
    try:
        try:
            raise deadlock
        except exc.OperationalError:
            raise _op("(1305, 'SAVEPOINT sa_savepoint_1 does not exist')") from None
    except exc.OperationalError as masked:
        assert is_deadlock(masked)
    assert is_deadlock(deadlock)
    assert is_deadlock(_op("(1305, 'SAVEPOINT sa_savepoint_2 does not exist')"))
    assert not is_deadlock(_op("(1146, \"Table 'x' doesn't exist\")"))
    assert not is_deadlock(exc.IntegrityError("stmt", {}, Exception("Duplicate entry")))
