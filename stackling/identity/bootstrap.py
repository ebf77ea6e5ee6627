"""What `keystone-manage bootstrap` plus DevStack's demo project create, once per database."""

from __future__ import annotations

import os
import secrets
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.identity import logic, tokens
from stackling.identity.models import CatalogService, Domain, Endpoint, ImpliedRole, Region

DEFAULT_DOMAIN = "default"
# Keystone's bootstrap roles and implications: admin > manager > member > reader.
ROLES = ("reader", "member", "manager", "admin", "service")
IMPLIES = (("admin", "manager"), ("manager", "member"), ("member", "reader"))
INTERFACES = ("public", "internal", "admin")


def _password(settings_value: str | None, env: str) -> str:
    return settings_value or os.environ.get(env) or secrets.token_urlsafe(12)


# user -> (password, its hash being computed): started by hash_passwords_ahead.
_AHEAD: dict[str, tuple[str, Future[str]]] = {}


def hash_passwords_ahead(settings: Any) -> None:
    """Start hashing the bootstrap users' passwords in two threads: bcrypt releases the GIL,
    so on a first start the two hashes (~50 ms each at the default cost) overlap loading
    the services instead of following it. Same cost, same salt rules: only earlier."""
    pool = ThreadPoolExecutor(2, thread_name_prefix="bootstrap-hash")
    for user, value, env in (("admin", settings.admin_password, "STACKLING_ADMIN_PASSWORD"),
                             ("demo", settings.demo_password, "STACKLING_DEMO_PASSWORD")):
        password = _password(value, env)
        _AHEAD[user] = (password, pool.submit(logic.hash_password, password,
                                              settings.password_hash_rounds))
    pool.shutdown(wait=False)


def _user_password(user: str, value: str | None, env: str, rounds: int) -> tuple[str, str]:
    """The bootstrap user's password and its hash (hashed ahead if it was)."""
    ahead = _AHEAD.pop(user, None)
    if ahead is not None:
        return ahead[0], ahead[1].result()
    password = _password(value, env)
    return password, logic.hash_password(password, rounds)


def bootstrap_identity(db: Session, runtime: Any) -> None:
    settings = runtime.settings.identity
    rounds = settings.password_hash_rounds
    tokens.create_signing_key(db)
    db.add(Domain(id=DEFAULT_DOMAIN, name="Default", description="The default domain"))
    db.add(Region(id=settings.region))
    db.flush()
    roles = {name: logic.create_role(db, name) for name in ROLES}
    for prior, implied in IMPLIES:
        db.add(ImpliedRole(prior_role_id=roles[prior].id, implied_role_id=roles[implied].id))
    projects = {}
    for name, description in (("admin", "Bootstrap project for initializing the cloud."),
                              ("demo", "The demo project"), ("service", "Service users")):
        projects[name] = logic.create_project(db, {"name": name, "domain_id": DEFAULT_DOMAIN,
                                                   "description": description, "extra": {}})
    admin_pw, admin_hash = _user_password("admin", settings.admin_password,
                                          "STACKLING_ADMIN_PASSWORD", rounds)
    demo_pw, demo_hash = _user_password("demo", settings.demo_password,
                                        "STACKLING_DEMO_PASSWORD", rounds)
    admin = logic.create_user(db, {"name": "admin", "domain_id": DEFAULT_DOMAIN,
                                   "extra": {}}, rounds)
    demo = logic.create_user(db, {"name": "demo", "domain_id": DEFAULT_DOMAIN, "extra": {},
                                  "default_project_id": projects["demo"].id}, rounds)
    admin.password_hash, demo.password_hash = admin_hash, demo_hash
    logic.grant(db, logic.USER_PROJECT, admin.id, projects["admin"].id, roles["admin"].id)
    logic.grant(db, logic.USER_SYSTEM, admin.id, logic.SYSTEM_ALL, roles["admin"].id)
    logic.grant(db, logic.USER_PROJECT, demo.id, projects["demo"].id, roles["member"].id)
    runtime.state["identity.bootstrap_passwords"] = {"admin": admin_pw, "demo": demo_pw}


def add_catalog_entry(db: Session, runtime: Any, entry: Any) -> None:
    """One catalog service with public/internal/admin endpoints (URL templates)."""
    existing = db.scalars(select(CatalogService).where(CatalogService.type == entry.type)).first()
    if existing is not None:
        return
    service = CatalogService(id=logic.new_id(), type=entry.type, name=entry.name)
    db.add(service)
    db.flush()
    for interface in INTERFACES:
        db.add(Endpoint(id=logic.new_id(), service_id=service.id, interface=interface,
                        region_id=runtime.settings.identity.region,
                        url="%(base_url)s" + entry.path))


def write_clouds_yaml(data_dir: Path, auth_url: str, region: str,
                      passwords: dict[str, str] | None) -> Path:
    """Write DIR/clouds.yaml (0600); on later starts only the auth_url is refreshed."""
    path = data_dir / "clouds.yaml"
    if path.exists():
        doc = yaml.safe_load(path.read_text()) or {}
    else:
        doc = {}
    clouds = doc.setdefault("clouds", {})
    for cloud, user, project in (("stackling-admin", "admin", "admin"),
                                 ("stackling", "demo", "demo")):
        entry = clouds.setdefault(cloud, {})
        auth = entry.setdefault("auth", {})
        auth.update(auth_url=auth_url, username=user, project_name=project,
                    user_domain_name="Default", project_domain_name="Default")
        if passwords and user in passwords:
            auth["password"] = passwords[user]
        entry.update(region_name=region, interface="public", identity_api_version=3)
    if passwords is None and not path.exists():
        return path  # nothing to say without the passwords
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        yaml.safe_dump(doc, fh, sort_keys=False)
    os.replace(tmp, path)
    os.chmod(path, 0o600)
    return path
