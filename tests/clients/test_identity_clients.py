"""Identity through the real clients: openstacksdk on every backend, the CLI on SQLite."""

from __future__ import annotations

import os
import uuid

import pytest

from tests.conftest import sqlite_only


def test_sdk_identity_round_trip(cloud):
    admin = cloud.sdk()
    name = f"proj-{uuid.uuid4().hex[:6]}"
    project = admin.identity.create_project(name=name, domain_id="default")
    user = admin.identity.create_user(name=f"user-{name}", password="s3cret", domain_id="default")
    member = admin.identity.find_role("member")
    admin.identity.assign_project_role_to_user(project, user, member)
    admin.identity.assign_project_role_to_user(project, user, member)  # idempotent
    assert admin.identity.validate_user_has_project_role(project, user, member)
    assignments = list(admin.identity.role_assignments(user_id=user.id))
    assert [(a.role["id"], a.scope["project"]["id"]) for a in assignments] == [
        (member.id, project.id)]
    assert admin.identity.find_project(name).id == project.id
    assert admin.identity.find_domain("Default").id == "default"
    # The new user logs in and sees its own project.
    from tests.conftest import sdk_connection

    conn = sdk_connection(None, None, auth={
        "auth_url": f"{cloud.url}/identity", "username": user.name, "password": "s3cret",
        "project_name": name, "user_domain_name": "Default", "project_domain_name": "Default"})
    assert conn.current_project_id == project.id
    admin.identity.delete_user(user)
    admin.identity.delete_project(project)
    assert admin.identity.find_project(name) is None


def test_sdk_member_forbidden(cloud):
    demo = cloud.sdk("stackling")
    from openstack import exceptions

    with pytest.raises(exceptions.ForbiddenException):
        demo.identity.create_project(name="nope", domain_id="default")


@sqlite_only
def test_cli_identity_story(cloud):
    """The issue's CLI walk-through, command by command."""
    c = cloud
    catalog = c.cli("catalog", "list", "-f", "json")
    assert "identity" in {e["Type"] for e in catalog}
    token = c.cli("token", "issue", "-f", "json")
    assert token["id"] and token["project_id"]
    c.cli("token", "revoke", token["id"], parse=False)
    name = f"cli-{uuid.uuid4().hex[:6]}"
    project = c.cli("project", "create", name, "-f", "json")
    assert project["name"] == name and project["domain_id"] == "default"
    user = c.cli("user", "create", "--project", name, "--password", "X-pass", f"u{name}",
                 "-f", "json")
    assert user["name"] == f"u{name}"
    for _ in range(2):  # granting twice is idempotent
        c.cli("role", "add", "--user", f"u{name}", "--project", name, "member", parse=False)
    rows = c.cli("role", "assignment", "list", "--user", f"u{name}", "--names", "-f", "json")
    assert [(r["Role"], r["Project"]) for r in rows] == [("member", f"{name}@Default")]
    # The new user logs in with plain OS_* variables and no clouds.yaml.
    env = {"OS_AUTH_URL": f"{c.url}/identity", "OS_USERNAME": f"u{name}",
           "OS_PASSWORD": "X-pass", "OS_PROJECT_NAME": name, "OS_USER_DOMAIN_NAME": "Default",
           "OS_PROJECT_DOMAIN_NAME": "Default", "OS_IDENTITY_API_VERSION": "3",
           "OS_CLIENT_CONFIG_FILE": os.devnull}
    issued = c.cli("token", "issue", "-f", "json", cloud="", env=env)
    assert issued["project_id"] == project["id"]
    # A member is refused project creation.
    denied = c.cli("project", "create", "nope", cloud="", env=env, check=False)
    assert denied.returncode != 0 and "403" in denied.stderr
