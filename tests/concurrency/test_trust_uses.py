"""A trust's `remaining_uses` under concurrency (issue 23, Identity): parallel logins
through one trust on several processes sharing the database never spend more uses than
the trust has. With N uses and 3N parallel logins, exactly N get a token."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

BACKENDS = ["sqlite", "postgresql", "mariadb"]


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", BACKENDS)
def test_parallel_trust_logins_spend_each_use_once(cloud_factory, backend):
    server = cloud_factory(backend, workers=1 if backend == "sqlite" else 3)
    admin = server.sdk()
    trustee = server.new_project_member()
    n = 4
    trust = admin.identity.create_trust(
        trustor_user_id=admin.current_user_id, trustee_user_id=trustee["user"].id,
        project_id=admin.current_project_id, impersonation=True, roles=[{"name": "member"}],
        remaining_uses=n)
    login = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "id": trustee["user"].id, "password": trustee["password"]}}},
        "scope": {"OS-TRUST:trust": {"id": trust.id}}}}
    barrier = threading.Barrier(3 * n)

    def one(_: int) -> int:
        with httpx.Client(base_url=server.url, timeout=120) as http:
            barrier.wait()
            return http.post("/identity/v3/auth/tokens", json=login).status_code

    with ThreadPoolExecutor(3 * n) as pool:
        codes = sorted(pool.map(one, range(3 * n)))
    assert codes == [201] * n + [401] * (2 * n)
    assert admin.identity.get_trust(trust.id).remaining_uses == 0
