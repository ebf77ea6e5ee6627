"""Default security group rules (`security-groups-default-rules`): templates of the rules a
new security group starts with, as Neutron's `/v2.0/default-security-group-rules` (list,
show, create and delete; no update). A template is used in the project's default group
(`used_in_default_sg`), in other groups (`used_in_non_default_sg`) or both; its
`remote_group_id` `PARENT` becomes the new group itself. Rules are checked as security
group rules are (the same converters and `_validate_rule`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common import memo
from stackling.common.context import RequestContext
from stackling.common.db import uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.attributes import ID, REQUIRED, Attr, Invalid, boolean, string
from stackling.network.core import security_groups as sgs
from stackling.network.default_rules.models import DefaultSecurityGroupRule
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.querying import Listing

EXTENSIONS.append(Extension(
    "security-groups-default-rules", "Default rules for security groups",
    "Configure set of security group rules used as default rules for every new security "
    "group", "2023-05-08T10:00:00-00:00"))

PARENT = "PARENT"
POLICIES: dict[str, str] = {
    "create_default_security_group_rule": pol.ADMIN,
    "get_default_security_group_rule": "role:reader or rule:admin_only",
    "delete_default_security_group_rule": pol.ADMIN,
}


class DefaultSecurityGroupRuleNotFound(errors.NotFound):
    message = "Default security group rule %(id)s does not exist"


class DefaultSecurityGroupRuleExists(errors.InUse):
    message = "Default security group rule already exists. Rule id is %(rule_id)s."


def _remote_group(value: Any) -> str | None:
    if value is None or value == PARENT:
        return value
    raise Invalid(f"'{value}' is not in [None, '{PARENT}']")


_R = sgs.RULE_ATTRS
ATTRS: dict[str, Attr] = {
    "id": ID,
    "description": Attr(post=True, default="", convert=string(255), filter=True),
    "direction": _R["direction"],
    "ethertype": _R["ethertype"],
    "protocol": _R["protocol"],
    "port_range_min": _R["port_range_min"],
    "port_range_max": _R["port_range_max"],
    "remote_ip_prefix": _R["remote_ip_prefix"],
    "remote_group_id": Attr(post=True, default=None, convert=_remote_group, filter=True,
                            sort=True),
    "remote_address_group_id": _R["remote_address_group_id"],
    "used_in_default_sg": Attr(post=True, default=False, convert=boolean, filter=True,
                               query=boolean),
    "used_in_non_default_sg": Attr(post=True, default=True, convert=boolean, filter=True,
                                   query=boolean),
}
assert ATTRS["direction"].default is REQUIRED
_D = DefaultSecurityGroupRule
LISTING = Listing(
    attrs=ATTRS,
    columns={"id": _D.id, "description": _D.description, "direction": _D.direction,
             "ethertype": _D.ethertype, "protocol": _D.protocol,
             "port_range_min": _D.port_range_min, "port_range_max": _D.port_range_max,
             "remote_ip_prefix": _D.remote_ip_prefix, "remote_group_id": _D.remote_group_id,
             "remote_address_group_id": _D.remote_address_group_id,
             "used_in_default_sg": _D.used_in_default_sg,
             "used_in_non_default_sg": _D.used_in_non_default_sg},
    id_column=_D.id,
)
_FIELDS = ("direction", "ethertype", "protocol", "port_range_min", "port_range_max",
           "remote_ip_prefix", "remote_group_id", "remote_address_group_id")


def view(r: DefaultSecurityGroupRule) -> dict[str, Any]:
    return {"id": r.id, "description": r.description,
            **{k: getattr(r, k) for k in _FIELDS},
            "used_in_default_sg": r.used_in_default_sg,
            "used_in_non_default_sg": r.used_in_non_default_sg}


def _check_read(db: Session, ctx: RequestContext) -> None:
    pol.authorize(db, ctx, "get_default_security_group_rule", {})


def list_rules(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    _check_read(db, ctx)
    return LISTING.page(db, select(DefaultSecurityGroupRule), params)


def get_rule(db: Session, ctx: RequestContext, rule_id: str) -> DefaultSecurityGroupRule:
    _check_read(db, ctx)
    rule = db.get(DefaultSecurityGroupRule, rule_id)
    if rule is None:
        raise DefaultSecurityGroupRuleNotFound(id=rule_id)
    return rule


def _new(attrs: dict[str, Any]) -> DefaultSecurityGroupRule:
    values = {k: attrs.get(k) for k in _FIELDS}
    flags = f"{attrs['used_in_default_sg']:d}{attrs['used_in_non_default_sg']:d}"
    fp = hashlib.sha256((sgs.fingerprint(values) + flags).encode()).hexdigest()
    return DefaultSecurityGroupRule(id=uuid_str(), description=attrs.get("description", ""),
                                    used_in_default_sg=attrs["used_in_default_sg"],
                                    used_in_non_default_sg=attrs["used_in_non_default_sg"],
                                    fingerprint=fp, **values)


def seed(db: Session, runtime: Any) -> None:
    """Bootstrap (once per database): Neutron's four templates, egress IPv4/IPv6 in every
    group and ingress from the group itself in a project's default group."""
    for direction, remote, in_default, in_other in (("egress", None, True, True),
                                                    ("ingress", PARENT, True, False)):
        for ethertype in ("IPv4", "IPv6"):
            db.add(_new({"direction": direction, "ethertype": ethertype,
                         "remote_group_id": remote, "used_in_default_sg": in_default,
                         "used_in_non_default_sg": in_other}))
    db.flush()


def create_rule(db: Session, ctx: RequestContext, attrs: dict[str, Any]
                ) -> DefaultSecurityGroupRule:
    pol.authorize(db, ctx, "create_default_security_group_rule", {})
    sgs.validate_rule(attrs)
    rule = _new(attrs)
    fp = rule.fingerprint
    try:
        with db.begin_nested():
            db.add(rule)
            db.flush()
    except IntegrityError:
        existing = db.scalar(select(_D.id).where(_D.fingerprint == fp))
        raise DefaultSecurityGroupRuleExists(rule_id=existing) from None
    _forget(db)
    return rule


def delete_rule(db: Session, ctx: RequestContext, rule_id: str) -> None:
    pol.authorize(db, ctx, "delete_default_security_group_rule", {})
    rule = db.get(DefaultSecurityGroupRule, rule_id)
    if rule is None:
        raise DefaultSecurityGroupRuleNotFound(id=rule_id)
    db.delete(rule)
    db.flush()
    _forget(db)


# ------------------------------------------------------------------ for new groups
_MEMO = "default_sg_rules"


def _forget(db: Session) -> None:
    memo.table(db).pop(_MEMO, None)


def templates(db: Session, default: bool) -> Sequence[dict[str, Any]]:
    """The rule values a new group starts with (`remote_group_id` PARENT kept), read once
    per transaction."""
    known = memo.table(db)
    rows = known.get(_MEMO)
    if rows is None:
        rows = known[_MEMO] = [
            ({k: getattr(r, k) for k in _FIELDS}, r.used_in_default_sg,
             r.used_in_non_default_sg)
            for r in db.scalars(select(DefaultSecurityGroupRule)
                                .order_by(_D.direction, _D.ethertype, _D.id))]
    return [values for values, in_default, in_other in rows
            if (in_default if default else in_other)]


sgs.RULE_TEMPLATES = templates
