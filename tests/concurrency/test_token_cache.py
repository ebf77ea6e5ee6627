"""The token cache (issue 35, identity/tokens.py: TokenCache) under `--workers 4` on
PostgreSQL: every worker has validated and cached a token; the token revoked in one
process (its own revocation, or its user's deletion) is refused by the next request on
any worker."""

from __future__ import annotations

import httpx
import pytest

ROUNDS = 60  # fresh connections: spread over the 4 workers' accepts


def _codes(url: str, token: str) -> set[int]:
    codes = set()
    for _ in range(ROUNDS):
        with httpx.Client(base_url=url, timeout=60) as http:  # a new connection each
            codes.add(http.get("/networking/v2.0/networks?limit=1",
                               headers={"X-Auth-Token": token}).status_code)
    return codes


@pytest.mark.concurrency
def test_revocation_reaches_every_worker_at_once(cloud_factory):
    server = cloud_factory("postgresql", workers=4)
    admin = server.token()
    member = server.new_project_member()
    revoked = server.token(member["user"].name, member["project"].name, member["password"])
    deleted_user = server.new_project_member()
    orphan = server.token(deleted_user["user"].name, deleted_user["project"].name,
                          deleted_user["password"])
    assert _codes(server.url, revoked) == {200}  # validated, and cached, by every worker
    assert _codes(server.url, orphan) == {200}

    with httpx.Client(base_url=server.url, timeout=60) as http:
        r = http.delete("/identity/v3/auth/tokens",
                        headers={"X-Auth-Token": admin, "X-Subject-Token": revoked})
        assert r.status_code == 204, r.text
        r = http.delete(f"/identity/v3/users/{deleted_user['user'].id}",
                        headers={"X-Auth-Token": admin})
        assert r.status_code == 204, r.text
    assert _codes(server.url, revoked) == {401}
    assert _codes(server.url, orphan) == {401}
    assert _codes(server.url, admin) == {200}  # the others' cached tokens still serve
