"""Serialising a project's quota checks across processes.

Counting usage and then inserting is a race: two requests may both see the last free
slot. Each service keeps one lock row per project (a table whose primary key is
`project_id`); a quota check first locks that row (`SELECT ... FOR UPDATE`, inserted on
first use), so the checks of one project run one after another until their transactions
end, on every database. On SQLite the writing transaction is already exclusive
(`BEGIN IMMEDIATE`), and the row costs nothing more.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, bindparam, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

_LOCKS: dict[Any, Select[Any]] = {}  # per lock model, built once: every create takes one


def lock_project(db: Session, model: Any, project_id: str) -> None:
    """Hold `model`'s row for `project_id` until the transaction ends (made if absent).

    Taken again on every check, never remembered: rolling a savepoint back (a build
    retried on another host) releases the row locks taken inside it.
    """
    stmt = _LOCKS.get(model)
    if stmt is None:
        stmt = _LOCKS[model] = select(model.project_id).where(
            model.project_id == bindparam("project")).with_for_update()
    if db.scalar(stmt, {"project": project_id}) is None:
        try:
            with db.begin_nested():
                db.add(model(project_id=project_id))
                db.flush()
        except IntegrityError:  # made by a concurrent first use: wait for it, then lock
            db.scalar(stmt, {"project": project_id})
