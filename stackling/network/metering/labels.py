"""Metering labels and rules (`metering`, `metering_source_and_destination_fields`), as
Neutron's metering plugin: admin-only; a rule names `remote_ip_prefix` (deprecated) or
`source_ip_prefix`/`destination_ip_prefix`, not both kinds; rules of one label with the
same direction and exclusion never overlap (409 `MeteringLabelRuleOverlaps`). Nothing is
metered (no agent): the objects are stored and shown."""

from __future__ import annotations

from typing import Any

import netaddr
from sqlalchemy import select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors
from stackling.network import policy as pol
from stackling.network.attributes import (
    ID,
    PROJECT,
    REQUIRED,
    Attr,
    boolean,
    cidr,
    one_of,
    string,
    uuid_value,
)
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.metering.models import MeteringLabel, MeteringLabelRule
from stackling.network.querying import Listing

for _alias, _name, _desc, _updated in (
        ("metering", "Neutron Metering", "Neutron Metering extension.",
         "2013-06-12T10:00:00-00:00"),
        ("metering_source_and_destination_fields",
         "Neutron Metering with source and destination filtering",
         "Neutron Metering extension that enables the use of source and destination IP "
         "prefixes to create metering label rules.", "2020-08-20T10:00:00-00:00")):
    EXTENSIONS.append(Extension(_alias, _name, _desc, _updated))

POLICIES: dict[str, str] = {
    "create_metering_label": pol.ADMIN,
    "get_metering_label": pol.ADMIN,
    "delete_metering_label": pol.ADMIN,
    "create_metering_label_rule": pol.ADMIN,
    "get_metering_label_rule": pol.ADMIN,
    "delete_metering_label_rule": pol.ADMIN,
}


class MeteringLabelNotFound(errors.NotFound):
    message = "Metering label %(label_id)s does not exist."


class MeteringLabelRuleNotFound(errors.NotFound):
    message = "Metering label rule %(rule_id)s does not exist."


class MeteringLabelRuleOverlaps(errors.Conflict):
    message = "Metering label rule with remote_ip_prefix %(remote_ip_prefix)s overlaps another."


def _cidr_or_none(value: Any) -> str | None:
    return None if value is None else cidr(value)


LABEL_ATTRS: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "name": Attr(post=True, default="", convert=string(255), filter=True, sort=True),
    "description": Attr(post=True, default="", convert=string(1024), filter=True, sort=True),
    "shared": Attr(post=True, default=False, convert=boolean, filter=True, sort=True),
}
RULE_ATTRS: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "metering_label_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True,
                              sort=True),
    "direction": Attr(post=True, default="ingress", convert=one_of("ingress", "egress"),
                      filter=True, sort=True),
    "excluded": Attr(post=True, default=False, convert=boolean, filter=True, sort=True),
    "remote_ip_prefix": Attr(post=True, convert=_cidr_or_none, filter=True, sort=True),
    "source_ip_prefix": Attr(post=True, convert=_cidr_or_none, filter=True, sort=True),
    "destination_ip_prefix": Attr(post=True, convert=_cidr_or_none, filter=True, sort=True),
}
_L, _R = MeteringLabel, MeteringLabelRule
LABEL_LISTING = Listing(attrs=LABEL_ATTRS, columns={
    "id": _L.id, "project_id": _L.project_id, "tenant_id": _L.project_id, "name": _L.name,
    "description": _L.description, "shared": _L.shared}, id_column=_L.id)
RULE_LISTING = Listing(attrs=RULE_ATTRS, columns={
    "id": _R.id, "metering_label_id": _R.metering_label_id, "direction": _R.direction,
    "excluded": _R.excluded, "remote_ip_prefix": _R.remote_ip_prefix,
    "source_ip_prefix": _R.source_ip_prefix,
    "destination_ip_prefix": _R.destination_ip_prefix}, id_column=_R.id)


def label_view(label: MeteringLabel) -> dict[str, Any]:
    return {"id": label.id, "name": label.name, "description": label.description,
            "shared": label.shared, "project_id": label.project_id,
            "tenant_id": label.project_id}


def rule_view(rule: MeteringLabelRule, project_id: str) -> dict[str, Any]:
    return {"id": rule.id, "metering_label_id": rule.metering_label_id,
            "direction": rule.direction, "excluded": rule.excluded,
            "remote_ip_prefix": rule.remote_ip_prefix, "source_ip_prefix": rule.source_ip_prefix,
            "destination_ip_prefix": rule.destination_ip_prefix, "project_id": project_id,
            "tenant_id": project_id}


def rule_views(db: Session, rules: list[MeteringLabelRule]) -> list[dict[str, Any]]:
    owners: dict[str, str] = {}
    if rules:
        for label_id, project_id in db.execute(select(_L.id, _L.project_id).where(
                _L.id.in_({r.metering_label_id for r in rules}))):
            owners[label_id] = project_id
    return [rule_view(r, owners.get(r.metering_label_id, "")) for r in rules]


# ------------------------------------------------------------------ labels
def list_labels(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(MeteringLabel)
    if not pol.allowed(db, ctx, "get_metering_label", {"project_id": ctx.project_id}):
        stmt = stmt.where(_L.id.is_(None))
    return LABEL_LISTING.page(db, stmt, params)


def get_label(db: Session, ctx: RequestContext, label_id: str,
              action: str = "get_metering_label") -> MeteringLabel:
    label = db.get(MeteringLabel, label_id)
    if label is None or not pol.allowed(db, ctx, action, {"project_id": label.project_id}):
        raise MeteringLabelNotFound(label_id=label_id)
    return label


def create_label(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> MeteringLabel:
    pol.authorize(db, ctx, "create_metering_label", {"project_id": attrs["project_id"]})
    label = MeteringLabel(id=uuid_str(), project_id=attrs["project_id"],
                          name=attrs.get("name", ""), description=attrs.get("description", ""),
                          shared=bool(attrs.get("shared")))
    db.add(label)
    db.flush()
    return label


def delete_label(db: Session, ctx: RequestContext, label_id: str) -> None:
    label = get_label(db, ctx, label_id, "delete_metering_label")
    db.delete(label)
    db.flush()


# ------------------------------------------------------------------ rules
def list_rules(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(MeteringLabelRule)
    if not pol.allowed(db, ctx, "get_metering_label_rule", {"project_id": ctx.project_id}):
        stmt = stmt.where(_R.id.is_(None))
    return RULE_LISTING.page(db, stmt, params)


def get_rule(db: Session, ctx: RequestContext, rule_id: str,
             action: str = "get_metering_label_rule") -> MeteringLabelRule:
    rule = db.get(MeteringLabelRule, rule_id)
    label = db.get(MeteringLabel, rule.metering_label_id) if rule is not None else None
    if rule is None or label is None or not pol.allowed(
            db, ctx, action, {"project_id": label.project_id}):
        raise MeteringLabelRuleNotFound(rule_id=rule_id)
    return rule


def create_rule(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> MeteringLabelRule:
    pol.authorize(db, ctx, "create_metering_label_rule", {"project_id": attrs["project_id"]})
    label = get_label(db, ctx, attrs["metering_label_id"])
    remote = attrs.get("remote_ip_prefix")
    source, dest = attrs.get("source_ip_prefix"), attrs.get("destination_ip_prefix")
    if remote and (source or dest):
        raise errors.BadRequest("Cannot use 'remote-ip-prefix' in conjunction with "
                                "'source-ip-prefix' or 'destination-ip-prefix'.")
    if not (remote or source or dest):
        raise errors.BadRequest("You must define at least one of the following parameters "
                                "'remote_ip_prefix', or 'source_ip_prefix' or "
                                "'destination_ip_prefix'.")
    # the label's row lock: two rules of one label are checked one after the other
    db.execute(select(_L.id).where(_L.id == label.id).with_for_update())
    if remote:
        for other in db.scalars(select(MeteringLabelRule).where(
                _R.metering_label_id == label.id, _R.direction == attrs["direction"],
                _R.excluded == bool(attrs.get("excluded")), _R.remote_ip_prefix.is_not(None))):
            if netaddr.IPSet([remote]) & netaddr.IPSet([other.remote_ip_prefix]):
                raise MeteringLabelRuleOverlaps(remote_ip_prefix=remote)
    rule = MeteringLabelRule(id=uuid_str(), metering_label_id=label.id,
                             direction=attrs["direction"], excluded=bool(attrs.get("excluded")),
                             remote_ip_prefix=remote, source_ip_prefix=source,
                             destination_ip_prefix=dest)
    db.add(rule)
    db.flush()
    return rule


def delete_rule(db: Session, ctx: RequestContext, rule_id: str) -> None:
    rule = get_rule(db, ctx, rule_id, "delete_metering_label_rule")
    db.delete(rule)
    db.flush()
