"""What a token and a grant need of application credentials, below both: whether the
credential still holds, its access rules, its part of the token body, and dropping a
user's credentials on a project when a grant there goes. The credentials' own API and
authentication method (`app_credentials.py`) sit above tokens and grants.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import delete
from sqlalchemy.orm import Session

from stackling.common.errors import Unauthorized
from stackling.identity.group_appcred_models import ApplicationCredential


def access_rules_of(db: Session, cred_id: str) -> tuple[dict[str, Any], ...] | None:
    """The rules a token of the credential is held to; None when it has none."""
    cred = db.get(ApplicationCredential, cred_id)
    if cred is None:
        raise Unauthorized()
    if not cred.access_rules:
        return None
    return tuple(cred.access_rules)


def delete_for_user_on_project(db: Session, user_id: str, project_id: str) -> None:
    """Keystone drops a user's credentials on a project when a grant there is revoked."""
    db.execute(delete(ApplicationCredential).where(
        ApplicationCredential.user_id == user_id, ApplicationCredential.project_id == project_id))


def still_valid(db: Session, cred_id: str) -> bool:
    cred = db.get(ApplicationCredential, cred_id)
    return cred is not None and (cred.expires_at is None
                                 or cred.expires_at > dt.datetime.now(dt.UTC))


def token_section(db: Session, cred_id: str) -> dict[str, Any]:
    cred = db.get(ApplicationCredential, cred_id)
    if cred is None:
        raise Unauthorized()
    section = {"id": cred.id, "name": cred.name, "restricted": not cred.unrestricted}
    if cred.access_rules:
        section["access_rules"] = list(cred.access_rules)
    return section
