"""Per-transaction memo of stable reads (network quota limits, a project's default
security group, the rows a compute create inserted), kept in the session's `info` so it
never outlives the transaction.

Many processes share the database, so nothing here is cached across transactions or
in the process. A memo entry is only as good as the (sub)transaction that read it: any
rollback, a savepoint's included (a Heat resource that failed, a lost insert race), and
the end of the transaction clear the whole memo, so a value read or made inside a
rolled-back savepoint is never used again. Writers of a memoized value forget it
(`forget`) in the same transaction.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event
from sqlalchemy.orm import Session

_KEY = "stackling.memo"


def table(db: Session) -> dict[Any, Any]:
    """The memo of `db`'s current transaction (made on first use)."""
    memo = db.info.get(_KEY)
    if memo is None:
        memo = db.info[_KEY] = {}
    return memo


def forget(db: Session, key: Any) -> None:
    memo = db.info.get(_KEY)
    if memo is not None:
        memo.pop(key, None)


def _clear(session: Session, *_: Any) -> None:
    session.info.pop(_KEY, None)


def _ended(session: Session, transaction: Any) -> None:
    if transaction.parent is None:  # the outermost one (savepoint releases keep it)
        session.info.pop(_KEY, None)


# any rollback (savepoints included: this fires for nested transactions too) and the end
# of the outermost transaction, committed or not
event.listen(Session, "after_soft_rollback", _clear)
event.listen(Session, "after_transaction_end", _ended)
