"""Identity fidelity IV (issue 32), in-process: a user's access rules list in the order
they were made (Keystone's auto-increment key), across credentials."""

from __future__ import annotations

import uuid

V3 = "/identity/v3"


def test_access_rules_list_in_creation_order(api):
    user_id = api.get(f"{V3}/auth/tokens", user="demo", headers={
        "X-Subject-Token": api.token("demo")}).json()["token"]["user"]["id"]
    made = []
    for batch in range(3):  # enough rules that random ids would shuffle them
        rules = [{"service": "compute", "method": "GET",
                  "path": f"/v2.1/servers/{uuid.uuid4().hex}"} for _ in range(4)]
        r = api.post(f"{V3}/users/{user_id}/application_credentials", user="demo",
                     json={"application_credential": {"name": f"ar-{batch}-{uuid.uuid4().hex[:6]}",
                                                      "access_rules": rules}})
        assert r.status_code == 201, r.text
        made += [rule["path"] for rule in rules]
    listed = api.get(f"{V3}/users/{user_id}/access_rules", user="demo").json()["access_rules"]
    assert [r["path"] for r in listed if r["path"] in made] == made
