"""QoS policies and their rules, as Neutron's QoS service plugin with the Open vSwitch
driver: bandwidth-limit rules per direction, DSCP marking, minimum bandwidth and
minimum packet rate; a project's default policy (`qos-default`); sharing through
`shared` and RBAC policies of object type `qos_policy`.

Policies are admin-made (Neutron's defaults): projects read their own and shared ones and
name them as `qos_policy_id` of their ports and networks (`qos/bindings.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.db import uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, quotas, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    ID,
    NAME,
    PROJECT,
    REQUIRED,
    Attr,
    boolean,
    integer,
    one_of,
)
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.qos.models import (
    QosDefault,
    QosNetworkPolicy,
    QosPolicy,
    QosPortPolicy,
    QosRule,
)
from stackling.network.querying import Listing
from stackling.network.rbac import visibility
from stackling.network.rbac import wildcards as rbac
from stackling.network.rbac.visibility import SHARED

for _alias, _name, _desc, _updated in (
        ("qos", "Quality of Service", "The Quality of Service extension.",
         "2015-06-08T10:00:00-00:00"),
        ("qos-default", "QoS default policy", "Expose the QoS default policy per project",
         "2017-04-10T10:00:00-00:00"),
        ("qos-bw-limit-direction", "Direction for QoS bandwidth limit rule",
         "Allow to configure QoS bandwidth limit rule with specific direction: ingress or "
         "egress", "2017-04-10T10:00:00-00:00"),
        ("qos-bw-minimum-ingress", "Ingress direction for QoS minimum bandwidth rule",
         "Allow to configure QoS minumum bandwidth rule with ingress direction.",
         "2018-07-09T10:00:00-00:00"),
        ("qos-pps-minimum", "QoS minimum packet rate rule",
         "Adds support for minimum packet rate rule", "2021-06-01T10:00:00-00:00"),
        ("qos-rule-type-details", "Details of QoS rule types",
         "Expose details about QoS rule types supported by loaded backend drivers",
         "2017-06-22T10:00:00-00:00"),
        ("qos-rule-type-filter", "QoS rule type filter",
         "Add the QoS rule type filter parameters", "2021-12-01T10:00:00-00:00")):
    EXTENSIONS.append(Extension(_alias, _name, _desc, _updated))

SHARED_READ = "rule:shared_qos_policy"
POLICIES: dict[str, str] = {
    # upstream's `field:policies:shared=True` (the engine has no `field:` checks)
    "shared_qos_policy": "'True':%(policies:shared)s",
    "get_policy": f"{pol.READER} or {SHARED_READ}",
    "create_policy": pol.ADMIN,
    "update_policy": pol.ADMIN,
    "delete_policy": pol.ADMIN,
    "get_rule_type": pol.READER,
    # a port's placement request: Neutron's admin-only read (compute reads it in-process)
    "get_port:resource_request": pol.SERVICE,
}

DIRECTIONS = ("egress", "ingress")
VALID_DSCP_MARKS = (0, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 46,
                    48, 56)
_KBPS = integer(0, 2**31 - 1)


@dataclass(frozen=True)
class RuleType:
    name: str  # "bandwidth_limit"
    fields: dict[str, Attr]  # besides id
    supported: list[dict[str, Any]]  # the Open vSwitch driver's parameters

    @property
    def resource(self) -> str:
        return f"{self.name}_rule"

    @property
    def collection(self) -> str:
        return f"{self.name}_rules"


def _range(lo: int, hi: int) -> dict[str, int]:
    return {"start": lo, "end": hi}


RULE_TYPES: dict[str, RuleType] = {t.name: t for t in (
    RuleType("bandwidth_limit", {
        "max_kbps": Attr(post=True, put=True, default=REQUIRED, convert=_KBPS),
        "max_burst_kbps": Attr(post=True, put=True, default=0, convert=_KBPS),
        "direction": Attr(post=True, put=True, default="egress", convert=one_of(*DIRECTIONS)),
    }, [{"parameter_name": "max_kbps", "parameter_type": "range",
         "parameter_values": _range(0, 2**31 - 1)},
        {"parameter_name": "max_burst_kbps", "parameter_type": "range",
         "parameter_values": _range(0, 2**31 - 1)},
        {"parameter_name": "direction", "parameter_type": "choices",
         "parameter_values": list(DIRECTIONS)}]),
    RuleType("dscp_marking", {
        "dscp_mark": Attr(post=True, put=True, default=REQUIRED,
                          convert=one_of(*VALID_DSCP_MARKS)),
    }, [{"parameter_name": "dscp_mark", "parameter_type": "choices",
         "parameter_values": list(VALID_DSCP_MARKS)}]),
    RuleType("minimum_bandwidth", {
        "min_kbps": Attr(post=True, put=True, default=REQUIRED, convert=_KBPS),
        "direction": Attr(post=True, put=True, default="egress", convert=one_of(*DIRECTIONS)),
    }, [{"parameter_name": "min_kbps", "parameter_type": "range",
         "parameter_values": _range(0, 2**31 - 1)},
        {"parameter_name": "direction", "parameter_type": "choices",
         "parameter_values": list(DIRECTIONS)}]),
    RuleType("minimum_packet_rate", {
        "min_kpps": Attr(post=True, put=True, default=REQUIRED, convert=_KBPS),
        "direction": Attr(post=True, put=True, default="egress",
                          convert=one_of(*DIRECTIONS, "any")),
    }, [{"parameter_name": "min_kpps", "parameter_type": "range",
         "parameter_values": _range(0, 2**31 - 1)},
        {"parameter_name": "direction", "parameter_type": "choices",
         "parameter_values": [*DIRECTIONS, "any"]}]),
)}
for _t in RULE_TYPES.values():
    POLICIES[f"get_policy_{_t.resource}"] = f"{pol.READER} or {SHARED_READ}"
    for _verb in ("create", "update", "delete"):
        POLICIES[f"{_verb}_policy_{_t.resource}"] = pol.ADMIN


# ------------------------------------------------------------------ errors (neutron's)
class QosPolicyNotFound(errors.NotFound):
    message = "QoS policy %(policy_id)s could not be found."


class QosRuleNotFound(errors.NotFound):
    message = "QoS rule %(rule_id)s for policy %(policy_id)s could not be found."


class QosPolicyInUse(errors.InUse):
    message = "QoS Policy %(policy_id)s is used by %(object_type)s %(object_id)s."


class QoSPolicyDefaultAlreadyExists(errors.Conflict):
    message = "A default QoS policy exists for project %(project_id)s."


class QoSRulesConflict(errors.Conflict):
    message = ("Rule %(new_rule_type)s conflicts with rule %(rule_id)s which already exists "
               "in QoS Policy %(policy_id)s.")


class QoSRuleParameterConflict(errors.Conflict):
    message = ("Unable to add the rule with value %(rule_value)s to the policy %(policy_id)s "
               "as the existing rule of type %(existing_rule)s restricts the bandwidth to "
               "%(existing_value)s.")


class QosRuleTypeNotFound(errors.NotFound):
    message = "QoS rule type %(rule_type)s could not be found."


# ------------------------------------------------------------------ attributes
ATTRS: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "name": NAME,
    "description": DESCRIPTION,
    "shared": Attr(post=True, put=True, default=False, convert=boolean, filter=True,
                   sort=True),
    "is_default": Attr(post=True, put=True, default=False, convert=boolean),
    "rules": Attr(),
    "created_at": Attr(),
    "updated_at": Attr(),
    "revision_number": Attr(filter=True, query=integer()),
}
_Q = QosPolicy
LISTING = Listing(
    attrs=ATTRS,
    columns={"id": _Q.id, "name": _Q.name, "description": _Q.description,
             "project_id": _Q.project_id, "tenant_id": _Q.project_id, "shared": _Q.shared,
             "revision_number": _Q.revision_number},
    id_column=_Q.id,
)


def rule_attrs(rule_type: RuleType) -> dict[str, Attr]:
    return {"id": ID, **rule_type.fields}


# ------------------------------------------------------------------ reads
def _clause(ctx: RequestContext) -> Any:
    if ctx.is_admin or ctx.is_service:
        return None
    return or_(_Q.project_id == ctx.project_id, _Q.shared.is_(True),
               visibility.granted("qos_policy", _Q.id, ctx.project_id))


def visible_to(db: Session, ctx: RequestContext, policy: QosPolicy,
               project_id: str | None = None) -> bool:
    project = project_id or ctx.project_id
    if ctx.is_admin or ctx.is_service or policy.project_id == project or policy.shared:
        return True
    return bool(visibility.granted_ids(db, "qos_policy", [policy.id], project))


def _read_target(db: Session, ctx: RequestContext, policy: QosPolicy) -> dict[str, Any]:
    """A policy shared with the caller reads as shared (`rule:shared_qos_policy`)."""
    shared = policy.shared or (policy.project_id != ctx.project_id and visible_to(
        db, ctx, policy))
    return {"project_id": policy.project_id, "tenant_id": policy.project_id,
            "policies:shared": shared}


def get_visible(db: Session, ctx: RequestContext, policy_id: str) -> QosPolicy:
    policy = db.get(QosPolicy, policy_id)
    if policy is None or not visible_to(db, ctx, policy):
        raise QosPolicyNotFound(policy_id=policy_id)
    return policy


def get_readable(db: Session, ctx: RequestContext, policy_id: str,
                 action: str = "get_policy") -> QosPolicy:
    policy = get_visible(db, ctx, policy_id)
    if not pol.allowed(db, ctx, action, _read_target(db, ctx, policy)):
        raise QosPolicyNotFound(policy_id=policy_id)
    return policy


def list_policies(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(QosPolicy)
    clause = _clause(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    return LISTING.page(db, stmt, params)


def rule_view(rule: QosRule) -> dict[str, Any]:
    out: dict[str, Any] = {"id": rule.id}
    for name in RULE_TYPES[rule.type].fields:
        out[name] = getattr(rule, name)
    return out


def _shared_to_caller(db: Session, ctx: RequestContext, policies: Sequence[QosPolicy]
                      ) -> set[str]:
    others = [p.id for p in policies if p.project_id != ctx.project_id and not p.shared]
    return visibility.granted_ids(db, "qos_policy", others, ctx.project_id)


def render(db: Session, ctx: RequestContext, policies: Sequence[QosPolicy]
           ) -> list[dict[str, Any]]:
    ids = [p.id for p in policies]
    rules: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    defaults: set[str] = set()
    for chunk in standard.chunks(ids, 500):
        for r in db.scalars(select(QosRule).where(QosRule.qos_policy_id.in_(chunk))
                            .order_by(QosRule.type, QosRule.direction)):
            rules[r.qos_policy_id].append({**rule_view(r), "qos_policy_id": r.qos_policy_id,
                                           "type": r.type})
        defaults.update(db.scalars(select(QosDefault.qos_policy_id)
                                   .where(QosDefault.qos_policy_id.in_(chunk))))
    granted = _shared_to_caller(db, ctx, policies)
    return [{"id": p.id, "name": p.name, "description": p.description,
             "project_id": p.project_id, "tenant_id": p.project_id,
             "shared": p.shared or p.id in granted, "is_default": p.id in defaults,
             "rules": rules[p.id], "created_at": standard.iso(p.created_at),
             "updated_at": standard.iso(p.updated_at), "revision_number": p.revision_number}
            for p in policies]


# ------------------------------------------------------------------ policy writes
def _target(policy: QosPolicy) -> dict[str, Any]:
    return {"project_id": policy.project_id, "tenant_id": policy.project_id}


def _set_default(db: Session, policy: QosPolicy, on: bool) -> None:
    quotas.forget_fact(db, policy.project_id, "qos_default")
    current = db.get(QosDefault, policy.project_id)
    if not on:
        if current is not None and current.qos_policy_id == policy.id:
            db.delete(current)
            db.flush()
        return
    if current is not None:
        if current.qos_policy_id == policy.id:
            return
        raise QoSPolicyDefaultAlreadyExists(project_id=policy.project_id)
    try:
        with db.begin_nested():  # the project key decides a race
            db.add(QosDefault(project_id=policy.project_id, qos_policy_id=policy.id))
            db.flush()
    except IntegrityError:
        raise QoSPolicyDefaultAlreadyExists(project_id=policy.project_id) from None


def create_policy(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> QosPolicy:
    pol.authorize(db, ctx, "create_policy", {"project_id": attrs["project_id"]})
    policy = QosPolicy(id=uuid_str(), project_id=attrs["project_id"],
                       name=attrs.get("name", ""), description=attrs.get("description", ""),
                       shared=bool(attrs.get("shared")))
    db.add(policy)
    db.flush()
    if policy.shared:
        rbac.sync_wildcard(db, "qos_policy", policy.id, policy.project_id, SHARED, True)
    if attrs.get("is_default"):
        _set_default(db, policy, True)
    return policy


def update_policy(db: Session, ctx: RequestContext, policy_id: str, attrs: dict[str, Any],
                  if_match: int | None = None) -> QosPolicy:
    policy = get_visible(db, ctx, policy_id)
    pol.authorize(db, ctx, "update_policy", _target(policy))
    standard.check_revision(policy, if_match)
    for key in ("name", "description"):
        if key in attrs:
            setattr(policy, key, attrs[key])
    if "shared" in attrs and bool(attrs["shared"]) != policy.shared:
        policy.shared = bool(attrs["shared"])
        rbac.sync_wildcard(db, "qos_policy", policy.id, policy.project_id, SHARED,
                           policy.shared)
    if "is_default" in attrs:
        _set_default(db, policy, bool(attrs["is_default"]))
    standard.touch(policy)
    db.flush()
    return policy


def _lock(db: Session, policy_id: str) -> None:
    """Rule writes, bindings and the delete of one policy take turns on its row."""
    db.execute(select(QosPolicy.id).where(QosPolicy.id == policy_id).with_for_update())


def delete_policy(db: Session, ctx: RequestContext, policy_id: str,
                  if_match: int | None = None) -> None:
    policy = get_visible(db, ctx, policy_id)
    pol.authorize(db, ctx, "delete_policy", _target(policy))
    standard.check_revision(policy, if_match)
    _lock(db, policy.id)
    for model, column, kind in ((QosNetworkPolicy, QosNetworkPolicy.network_id, "network"),
                                (QosPortPolicy, QosPortPolicy.port_id, "port")):
        user = db.scalar(select(column).where(model.qos_policy_id == policy.id).limit(1))
        if user is not None:
            raise QosPolicyInUse(policy_id=policy.id, object_type=kind, object_id=user)
    rbac.delete_for(db, "qos_policy", policy.id)
    db.execute(delete(QosRule).where(QosRule.qos_policy_id == policy.id))
    db.execute(delete(QosDefault).where(QosDefault.qos_policy_id == policy.id))
    quotas.forget_fact(db, policy.project_id, "qos_default")
    db.delete(policy)
    try:
        db.flush()
    except IntegrityError:  # bound meanwhile (SQLite has no row lock to wait on)
        raise QosPolicyInUse(policy_id=policy.id, object_type="port or network",
                             object_id="") from None


def default_policy_id(db: Session, project_id: str) -> str | None:
    read, found = quotas.fact(db, project_id, "qos_default")  # with the quota lock
    if read:
        return found
    return db.scalar(select(QosDefault.qos_policy_id).where(QosDefault.project_id == project_id))


quotas.FACTS["qos_default"] = lambda project: select(QosDefault.qos_policy_id).where(
    QosDefault.project_id == project).scalar_subquery()


# ------------------------------------------------------------------ rules
def rule_type_of(name: str) -> RuleType:
    return RULE_TYPES[name]


def list_rules(db: Session, ctx: RequestContext, rule_type: RuleType, policy_id: str
               ) -> list[QosRule]:
    policy = get_readable(db, ctx, policy_id, f"get_policy_{rule_type.resource}")
    return list(db.scalars(select(QosRule).where(QosRule.qos_policy_id == policy.id,
                                                 QosRule.type == rule_type.name)
                           .order_by(QosRule.direction, QosRule.id)))


def get_rule(db: Session, ctx: RequestContext, rule_type: RuleType, policy_id: str,
             rule_id: str) -> QosRule:
    policy = get_readable(db, ctx, policy_id, f"get_policy_{rule_type.resource}")
    rule = db.get(QosRule, rule_id)
    if rule is None or rule.qos_policy_id != policy.id or rule.type != rule_type.name:
        raise QosRuleNotFound(rule_id=rule_id, policy_id=policy_id)
    return rule


def _check_conflicts(db: Session, policy_id: str, rule: QosRule) -> None:
    """Neutron's checks: one rule per type and direction (a minimum packet rate `any`
    conflicts with a directional one), and a minimum bandwidth never above the
    bandwidth limit of its direction."""
    with db.no_autoflush:  # an updated rule is checked before it is written
        others = [r for r in db.scalars(select(QosRule).where(
            QosRule.qos_policy_id == policy_id)) if r.id != rule.id]
    for other in others:
        if other.type != rule.type:
            continue
        if other.direction == rule.direction or (
                rule.type == "minimum_packet_rate" and "any" in (other.direction, rule.direction)):
            raise QoSRulesConflict(new_rule_type=rule.type, rule_id=other.id,
                                   policy_id=policy_id)
    for other in others:
        if other.direction != rule.direction:
            continue
        if rule.type == "minimum_bandwidth" and other.type == "bandwidth_limit" \
                and (rule.min_kbps or 0) > (other.max_kbps or 0):
            raise QoSRuleParameterConflict(rule_value=rule.min_kbps, policy_id=policy_id,
                                           existing_rule=other.type,
                                           existing_value=other.max_kbps)
        if rule.type == "bandwidth_limit" and other.type == "minimum_bandwidth" \
                and (other.min_kbps or 0) > (rule.max_kbps or 0):
            raise QoSRuleParameterConflict(rule_value=rule.max_kbps, policy_id=policy_id,
                                           existing_rule=other.type,
                                           existing_value=other.min_kbps)


def _write_policy(db: Session, ctx: RequestContext, rule_type: RuleType, policy_id: str,
                  verb: str) -> QosPolicy:
    policy = get_visible(db, ctx, policy_id)
    pol.authorize(db, ctx, f"{verb}_policy_{rule_type.resource}", _target(policy))
    _lock(db, policy.id)
    return policy


def create_rule(db: Session, ctx: RequestContext, rule_type: RuleType, policy_id: str,
                attrs: dict[str, Any]) -> QosRule:
    policy = _write_policy(db, ctx, rule_type, policy_id, "create")
    rule = QosRule(id=uuid_str(), qos_policy_id=policy.id, type=rule_type.name,
                   direction=attrs.get("direction", ""))
    for name in rule_type.fields:
        if name != "direction":
            setattr(rule, name, attrs.get(name))
    _check_conflicts(db, policy.id, rule)
    try:
        with db.begin_nested():
            db.add(rule)
            db.flush()
    except IntegrityError:  # the same type and direction, added concurrently
        raise QoSRulesConflict(new_rule_type=rule_type.name, rule_id="",
                               policy_id=policy.id) from None
    standard.touch(policy)
    db.flush()
    return rule


def update_rule(db: Session, ctx: RequestContext, rule_type: RuleType, policy_id: str,
                rule_id: str, attrs: dict[str, Any]) -> QosRule:
    policy = _write_policy(db, ctx, rule_type, policy_id, "update")
    rule = get_rule(db, ctx.elevated(), rule_type, policy.id, rule_id)
    for name in rule_type.fields:
        if name in attrs:
            setattr(rule, name, attrs[name])
    _check_conflicts(db, policy.id, rule)
    standard.touch(policy)
    try:
        db.flush()
    except IntegrityError:
        raise QoSRulesConflict(new_rule_type=rule_type.name, rule_id=rule.id,
                               policy_id=policy.id) from None
    return rule


def delete_rule(db: Session, ctx: RequestContext, rule_type: RuleType, policy_id: str,
                rule_id: str) -> None:
    policy = _write_policy(db, ctx, rule_type, policy_id, "delete")
    rule = get_rule(db, ctx.elevated(), rule_type, policy.id, rule_id)
    db.delete(rule)
    standard.touch(policy)
    db.flush()


# ------------------------------------------------------------------ rule types
def rule_types(db: Session, ctx: RequestContext, all_rules: bool = False,
               all_supported: bool = False) -> list[dict[str, str]]:
    pol.authorize(db, ctx, "get_rule_type")
    return [{"type": name} for name in RULE_TYPES]


def rule_type_details(db: Session, ctx: RequestContext, name: str) -> dict[str, Any]:
    pol.authorize(db, ctx, "get_rule_type")
    if not ctx.is_admin:  # (Neutron's QoS plugin: the drivers' details are an admin's)
        raise errors.NotAuthorized()
    rule_type = RULE_TYPES.get(name)
    if rule_type is None:
        raise QosRuleTypeNotFound(rule_type=name)
    return {"type": name, "drivers": [{"name": "openvswitch",
                                       "supported_parameters": rule_type.supported}]}
