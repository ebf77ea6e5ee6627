"""No connection to be had is a 503 with Retry-After in each service's own error body,
never a 500 (issue 19, item 14; the live races are tests/concurrency/test_database_overload).

The database refusing a connection (its, a role's or an account's limit) is retried first;
a pool that stays exhausted for its timeout is not (the request has waited already).
"""

from __future__ import annotations

import contextlib
import threading

import pytest
from sqlalchemy import exc

from stackling.common.db import PoolPlan

REFUSED = exc.OperationalError("connect", {}, Exception(
    'FATAL:  too many connections for role "stackling"'))
MARIADB_REFUSED = exc.OperationalError("connect", {}, Exception(
    1226, "User 'stackling' has exceeded the 'max_user_connections' resource"))
POOL_EMPTY = exc.TimeoutError("QueuePool limit of size 3 overflow 0 reached, connection "
                              "timed out, timeout 30.00")

ROUTES = [
    ("/identity/v3/auth/projects", lambda b: b["error"]["code"] == 503),
    ("/networking/v2.0/networks", lambda b: b["NeutronError"]["type"]),
    ("/compute/v2.1/servers", lambda b: b["serviceUnavailable"]["code"] == 503),
    ("/image/v2/images", lambda b: b["code"] == 503),
    ("/placement/resource_providers", lambda b: b["errors"][0]["status"] == 503),
]


@pytest.fixture
def refusing(api, monkeypatch):
    """Make every transaction fail to connect with `error`, counting the tries of requests.

    Only request threads (anyio's workers) count: the background loops (compute
    transitions, Heat's engine) fail here too, and their rounds are not the request's tries.
    """
    db = api.runtime.db
    real = db.transaction
    state = {"error": None, "tries": 0}

    @contextlib.contextmanager
    def transaction(*, write: bool = True):
        if state["error"] is not None:
            if threading.current_thread().name == "AnyIO worker thread":
                state["tries"] += 1
            raise state["error"]
        with real(write=write) as session:
            yield session

    monkeypatch.setattr(db, "transaction", transaction)
    yield state
    state["error"] = None


@pytest.mark.parametrize("error", [REFUSED, MARIADB_REFUSED, POOL_EMPTY],
                         ids=["postgresql-refused", "mariadb-refused", "pool-timeout"])
def test_overloaded_database_is_503_with_retry_after(api, refusing, error):
    token = api.token("admin")
    refusing["error"] = error
    for url, body_ok in ROUTES:
        refusing["tries"] = 0
        r = api.get(url, token=token)
        assert r.status_code == 503, r.text
        assert int(r.headers["Retry-After"]) >= 1
        assert body_ok(r.json()), r.text
        # a refused connection was tried again; a pool timeout was not
        assert refusing["tries"] == 1 if error is POOL_EMPTY else refusing["tries"] >= 8
    refusing["error"] = None
    assert api.get("/networking/v2.0/networks", token=token).status_code == 200


def test_pool_shares_the_limit_between_workers():
    # PostgreSQL's default (100, 3 reserved): four workers never open more than 88
    plan = PoolPlan.for_limit(97, "max_connections 100 less 3 reserved", 4)
    assert (plan.size, plan.overflow) == (10, 12)
    assert (plan.size + plan.overflow) * 4 <= 97
    # one worker keeps SQLAlchemy's defaults
    assert (PoolPlan.for_limit(97, "x", 1).size, PoolPlan.for_limit(97, "x", 1).overflow) \
        == (10, 20)
    small = PoolPlan.for_limit(16, "the role's CONNECTION LIMIT", 4)
    assert small.size + small.overflow == 3
    assert "database connection limit 16 (the role's CONNECTION LIMIT); 4 workers x at most 3" \
        in small.describe()
    assert "too many workers" in PoolPlan.for_limit(5, "x", 4).describe()
