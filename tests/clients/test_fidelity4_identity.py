"""Identity fidelity IV (issue 32) through openstacksdk, on every backend: a user's access
rules list in the order their application credentials made them."""

from __future__ import annotations

import uuid


def test_sdk_access_rules_in_creation_order(cloud):
    made = cloud.new_project_member()
    conn, user = made["sdk"], made["user"]
    paths = []
    for batch in range(2):
        rules = [{"service": "compute", "method": "GET",
                  "path": f"/v2.1/servers/{uuid.uuid4().hex}"} for _ in range(4)]
        conn.identity.create_application_credential(
            user, name=f"ar-{batch}-{uuid.uuid4().hex[:6]}", access_rules=rules)
        paths += [r["path"] for r in rules]
    listed = [r.path for r in conn.identity.access_rules(user)]
    assert listed == paths
