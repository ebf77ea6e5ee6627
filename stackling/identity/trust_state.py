"""What tokens need to know of trusts, apart from trusts.py (which issues tokens, so
tokens cannot import it): whether a trust still stands, and its token section."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy.orm import Session

from stackling.common.errors import Unauthorized
from stackling.identity.delegation_models import Trust


def expired(trust: Trust, now: dt.datetime | None = None) -> bool:
    return trust.expires_at is not None and trust.expires_at <= (now or dt.datetime.now(dt.UTC))


def still_valid(db: Session, trust_id: str) -> bool:
    return trustor_if_valid(db, trust_id) is not None


def trustor_if_valid(db: Session, trust_id: str) -> str | None:
    """The trust's trustor while the trust stands (None once deleted or expired)."""
    trust = db.get(Trust, trust_id)
    return None if trust is None or expired(trust) else trust.trustor_user_id


def token_section(db: Session, trust_id: str) -> dict[str, Any]:
    """The token body's `OS-TRUST:trust`."""
    trust = db.get(Trust, trust_id)
    if trust is None:
        raise Unauthorized()
    return {"id": trust.id, "impersonation": trust.impersonation,
            "trustee_user": {"id": trust.trustee_user_id},
            "trustor_user": {"id": trust.trustor_user_id}}
