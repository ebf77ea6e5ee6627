"""The request context: who is calling, in which scope, with which roles."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any


def new_request_id() -> str:
    return f"req-{uuid.uuid4()}"


@dataclasses.dataclass
class RequestContext:
    user_id: str | None = None
    user_name: str | None = None
    user_domain_id: str | None = None
    project_id: str | None = None
    project_name: str | None = None
    project_domain_id: str | None = None
    domain_id: str | None = None  # domain-scoped tokens
    system_scope: str | None = None  # "all" for system-scoped tokens
    roles: tuple[str, ...] = ()
    auth_token: str | None = None
    audit_id: str | None = None
    expires_at: str | None = None
    request_id: str = dataclasses.field(default_factory=new_request_id)
    # Set by trusted in-process callers (e.g. compute calling network as a service).
    is_service: bool = False
    # A restricted application credential's access rules (common/access_rules.py): the
    # requests its token may make. None: unrestricted.
    access_rules: tuple[dict[str, Any], ...] | None = None

    @property
    def is_admin(self) -> bool:
        return "admin" in self.roles

    @property
    def authenticated(self) -> bool:
        return self.user_id is not None or self.is_service

    def elevated(self) -> RequestContext:
        """A copy with admin rights, for internal calls made on a user's behalf."""
        roles = tuple(dict.fromkeys((*self.roles, "admin", "service")))
        return dataclasses.replace(self, roles=roles, is_service=True)

    def policy_creds(self) -> dict[str, object]:
        return {
            "user_id": self.user_id,
            "project_id": self.project_id,
            "tenant_id": self.project_id,
            "domain_id": self.domain_id,
            "user_domain_id": self.user_domain_id,
            "project_domain_id": self.project_domain_id,
            "system_scope": self.system_scope,
            "roles": list(self.roles),
            "is_admin": self.is_admin,
        }


def admin_context(project_id: str | None = None) -> RequestContext:
    """Context for bootstrap and background work that acts as the cloud itself."""
    return RequestContext(user_id=None, project_id=project_id, roles=("admin", "member", "reader",
                                                                     "service"), is_service=True)
