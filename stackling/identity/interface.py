"""The identity service's in-process interface: what other services and the composition
layer (cli, app) may use of identity. Everything else in `stackling.identity` is its own.

Functions take the caller's session and commit nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.identity.models import Project

__all__ = ["ADMIN_PROJECT", "admin_project_id", "hash_bootstrap_passwords_ahead", "project_exists",
           "write_clouds_yaml"]

ADMIN_PROJECT = "admin"  # the project bootstrap creates for the admin user


def project_exists(db: Session, project_id: str) -> bool:
    """Whether the project exists (Nova's verify_project_id asks Keystone the same)."""
    return db.get(Project, project_id) is not None


def admin_project_id(db: Session) -> str | None:
    """The id of the bootstrap's admin project (owner of the default images and networks);
    None before identity's bootstrap ran."""
    return db.scalar(select(Project.id).where(Project.name == ADMIN_PROJECT))


def write_clouds_yaml(data_dir: Path, auth_url: str, region: str,
                      passwords: dict[str, str] | None) -> Path:
    """Write DATA_DIR/clouds.yaml (0600) for the bootstrap users; on later starts only the
    auth_url is refreshed."""
    from stackling.identity import bootstrap

    return bootstrap.write_clouds_yaml(data_dir, auth_url, region, passwords)


def hash_bootstrap_passwords_ahead(settings: Any) -> None:
    """A first start: hash the bootstrap users' passwords (at the configured bcrypt cost) in
    background threads while the services load; identity's bootstrap then takes them."""
    from stackling.identity import bootstrap

    bootstrap.hash_passwords_ahead(settings.identity)
