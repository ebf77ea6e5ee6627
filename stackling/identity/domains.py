"""Domain writes: create, update (disabling revokes the tokens of the domain's users and
projects), delete (only once disabled, as Keystone) with everything the domain owns."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from stackling.common.errors import Forbidden
from stackling.identity import groups, logic, tokens
from stackling.identity.group_appcred_models import Group
from stackling.identity.logic import GROUP_DOMAIN, USER_DOMAIN
from stackling.identity.models import Assignment, Domain, Project, Role, User

DEFAULT_DOMAIN = "default"


def create_domain(db: Session, values: dict[str, Any]) -> Domain:
    domain = Domain(id=values.get("id") or logic.new_id(), name=values["name"],
                    description=values.get("description") or "",
                    enabled=values.get("enabled", True))
    logic._insert_unique(db, domain, "domain", domain.name)
    return domain


def _revoke_domain_tokens(db: Session, domain: Domain) -> None:
    for user_id in list(db.scalars(select(User.id).where(User.domain_id == domain.id))):
        tokens.revoke(db, user_id=user_id)
    for project_id in list(db.scalars(select(Project.id).where(
            Project.domain_id == domain.id))):
        tokens.revoke(db, project_id=project_id)


def update_domain(db: Session, domain: Domain, values: dict[str, Any]) -> Domain:
    if "enabled" in values and not values["enabled"] and domain.enabled:
        if domain.id == DEFAULT_DOMAIN:
            # stackling's bootstrap admin lives there: refused rather than lock everyone out
            raise Forbidden("You are not authorized to perform the requested action: "
                            "disable the default domain.")
        _revoke_domain_tokens(db, domain)
    for key in ("name", "enabled"):
        if key in values:
            setattr(domain, key, values[key])
    if "description" in values:
        domain.description = values["description"] or ""
    logic._insert_unique(db, domain, "domain", domain.name)
    return domain


def delete_domain(db: Session, domain: Domain) -> None:
    if domain.enabled:
        raise Forbidden("Cannot delete a domain that is enabled, please disable it first.")
    for project in list(db.scalars(select(Project).where(Project.domain_id == domain.id))):
        logic.delete_project(db, project)
    for user in list(db.scalars(select(User).where(User.domain_id == domain.id))):
        logic.delete_user(db, user)
    for group in list(db.scalars(select(Group).where(Group.domain_id == domain.id))):
        groups.delete_group(db, group)
    db.execute(delete(Assignment).where(Assignment.target_id == domain.id,
                                        Assignment.type.in_((USER_DOMAIN, GROUP_DOMAIN))))
    for role in list(db.scalars(select(Role).where(Role.domain_id == domain.id))):
        db.delete(role)
    db.flush()
    db.delete(domain)
