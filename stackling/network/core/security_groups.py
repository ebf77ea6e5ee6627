"""Security groups and rules, including each project's lazily created `default` group.

One default group per project is a primary key (`network_default_security_group`); a
request that loses the creation race reads the winner's group. Duplicate rules collide
on (security_group_id, fingerprint), the fingerprint hashing the rule's match fields.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import netaddr
from sqlalchemy import (
    String,
    bindparam,
    cast,
    delete,
    insert,
    literal_column,
    null,
    or_,
    select,
    union_all,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, lazyload

from stackling.common import memo
from stackling.common.context import RequestContext
from stackling.common.db import utcnow, uuid_str
from stackling.common.listing import ListParams, Page
from stackling.network import errors, quotas, standard
from stackling.network import policy as pol
from stackling.network.attributes import (
    DESCRIPTION,
    REQUIRED,
    STANDARD,
    Attr,
    Invalid,
    boolean,
    cidr_or_ip,
    integer,
    string,
    uuid_or_none,
    uuid_value,
)
from stackling.network.core.models import (
    DefaultSecurityGroup,
    PortSecurityGroup,
    SecurityGroup,
    SecurityGroupRule,
    Tag,
)
from stackling.network.querying import Listing

# IANA names neutron accepts (neutron_lib.constants.IP_PROTOCOL_MAP) -> number.
PROTOCOLS = {
    "ah": 51, "dccp": 33, "egp": 8, "esp": 50, "gre": 47, "hopopt": 0, "icmp": 1, "igmp": 2,
    "ip": 0, "ipip": 4, "ipv6-encap": 41, "ipv6-frag": 44, "ipv6-icmp": 58, "icmpv6": 58,
    "ipv6-nonxt": 59, "ipv6-opts": 60, "ipv6-route": 43, "ospf": 89, "pgm": 113,
    "rsvp": 46, "sctp": 132, "tcp": 6, "udp": 17, "udplite": 136, "vrrp": 112,
}
PORT_PROTOCOLS = {6, 17, 33, 132, 136}
ICMP_PROTOCOLS = {1, 58}
IPV6_ONLY = {"ipv6-encap", "ipv6-frag", "ipv6-icmp", "icmpv6", "ipv6-nonxt", "ipv6-opts",
             "ipv6-route"}


def _protocol(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise Invalid(f"'{value}' is not a valid protocol")
    if isinstance(value, int):
        value = str(value)
    if not isinstance(value, str):
        raise Invalid(f"'{value}' is not a valid protocol")
    text = value.strip().lower()
    if text == "any":
        return None
    if text in PROTOCOLS:
        return text
    if text.isdigit() and 0 <= int(text) <= 255:
        return str(int(text))
    raise errors.SecurityGroupRuleInvalidProtocol(
        protocol=value, values=sorted(set(PROTOCOLS)) + [None])


def _ethertype(value: Any) -> str:
    if isinstance(value, str):
        for name in ("IPv4", "IPv6"):
            if value.lower() == name.lower():
                return name
    raise errors.SecurityGroupRuleInvalidEtherType(ethertype=value, values=["IPv4", "IPv6"])


def _direction(value: Any) -> str:
    if value not in ("ingress", "egress"):
        raise Invalid(f"'{value}' is not in ['ingress', 'egress']")
    return value


def _port(value: Any) -> int | None:
    """neutron's convert_validate_port_value: anything int() takes, 0-65535; otherwise
    its own 400 naming the value as given."""
    if value is None:
        return None
    try:
        v = int(value)
    except (ValueError, TypeError):
        raise errors.SecurityGroupInvalidPortValue(port=value) from None
    if isinstance(value, bool) or not 0 <= v <= 65535:
        raise errors.SecurityGroupInvalidPortValue(port=value)
    return v


def _remote_group(value: Any) -> str | None:
    """No UUID check, as upstream: an unknown id is the group lookup's 404."""
    return None if value is None else string(255)(value)


def _name_not_default(value: Any) -> str:
    """neutron's `type:name_not_default`: `default` (any case) is the project's own."""
    name = string(255)(value)
    if name.lower() == "default":
        raise errors.SecurityGroupDefaultAlreadyExists()
    return name


SG_ATTRS: dict[str, Attr] = {
    **STANDARD,
    "name": Attr(post=True, put=True, default="", convert=_name_not_default, filter=True,
                 sort=True),
    "description": DESCRIPTION,
    "stateful": Attr(post=True, put=True, default=True, convert=boolean, filter=True),
    "shared": Attr(filter=True, query=boolean),
    "security_group_rules": Attr(),
}
RULE_ATTRS: dict[str, Attr] = {
    **STANDARD,
    "description": Attr(post=True, default="", convert=string(255), filter=True),
    "security_group_id": Attr(post=True, default=REQUIRED, convert=uuid_value, filter=True,
                              sort=True),
    "direction": Attr(post=True, default=REQUIRED, convert=_direction, filter=True,
                      sort=True),
    "ethertype": Attr(post=True, default="IPv4", convert=_ethertype, filter=True, sort=True),
    "protocol": Attr(post=True, default=None, convert=_protocol, filter=True, sort=True),
    "port_range_min": Attr(post=True, default=None, convert=_port, filter=True, sort=True,
                           query=integer()),
    "port_range_max": Attr(post=True, default=None, convert=_port, filter=True, sort=True,
                           query=integer()),
    "remote_ip_prefix": Attr(post=True, default=None, convert=lambda v: None if v is None
                             else cidr_or_ip(v), filter=True, sort=True),
    "remote_group_id": Attr(post=True, default=None, convert=_remote_group, filter=True,
                            sort=True),
    "remote_address_group_id": Attr(post=True, default=None, convert=uuid_or_none,
                                    filter=True),
    "normalized_cidr": Attr(),
    "belongs_to_default_sg": Attr(filter=True, query=boolean),
}
RULE_ATTRS.pop("tags")

SG_LISTING = Listing(
    attrs=SG_ATTRS,
    columns={"id": SecurityGroup.id, "name": SecurityGroup.name,
             "description": SecurityGroup.description, "stateful": SecurityGroup.stateful,
             "project_id": SecurityGroup.project_id, "tenant_id": SecurityGroup.project_id,
             "revision_number": SecurityGroup.revision_number},
    id_column=SecurityGroup.id,
    # `shared` depends on the caller: `list_groups` applies it
    special={"shared": lambda values: SecurityGroup.id.is_not(None)},
)
R = SecurityGroupRule
RULE_LISTING = Listing(
    attrs=RULE_ATTRS,
    columns={"id": R.id, "security_group_id": R.security_group_id, "direction": R.direction,
             "ethertype": R.ethertype, "protocol": R.protocol,
             "port_range_min": R.port_range_min, "port_range_max": R.port_range_max,
             "remote_ip_prefix": R.remote_ip_prefix, "remote_group_id": R.remote_group_id,
             "remote_address_group_id": R.remote_address_group_id,
             "description": R.description, "project_id": R.project_id,
             "tenant_id": R.project_id, "revision_number": R.revision_number},
    id_column=R.id,
    special={"belongs_to_default_sg": lambda values: R.security_group_id.in_(
        select(DefaultSecurityGroup.security_group_id)) if values[0] else
        R.security_group_id.not_in(select(DefaultSecurityGroup.security_group_id))},
)


# ------------------------------------------------------------------ default group
def _rule_row(sg_id: str, project_id: str, direction: str, ethertype: str,
              remote_group_id: str | None, now: Any) -> dict[str, Any]:
    values = {"security_group_id": sg_id, "direction": direction, "ethertype": ethertype,
              "protocol": None, "port_range_min": None, "port_range_max": None,
              "remote_ip_prefix": None, "remote_group_id": remote_group_id,
              "remote_address_group_id": None}
    return {**values, "id": uuid_str(), "project_id": project_id, "description": "",
            "created_at": now, "updated_at": now, "revision_number": 0,
            "fingerprint": fingerprint(values)}


# The templates of a new group's rules (`default_rules.templates`, registered by that
# module): (db, for the default group) -> rule values, `remote_group_id` PARENT for the
# group itself. Unset: Neutron's built-in defaults.
RULE_TEMPLATES: Callable[[Session, bool], Sequence[dict[str, Any]]] | None = None


def _starting_rules(db: Session, sg_id: str, project_id: str, default: bool, now: Any
                    ) -> list[dict[str, Any]]:
    if RULE_TEMPLATES is None:
        rules = [_rule_row(sg_id, project_id, "egress", e, None, now) for e in ("IPv4", "IPv6")]
        if default:
            rules += [_rule_row(sg_id, project_id, "ingress", e, sg_id, now)
                      for e in ("IPv4", "IPv6")]
        return rules
    rows = []
    for t in RULE_TEMPLATES(db, default):
        values = {"security_group_id": sg_id, **t,
                  "remote_group_id": sg_id if t["remote_group_id"] == "PARENT"
                  else t["remote_group_id"]}
        rows.append({**values, "id": uuid_str(), "project_id": project_id, "description": "",
                     "created_at": now, "updated_at": now, "revision_number": 0,
                     "fingerprint": fingerprint(values)})
    return rows


def _insert_group(db: Session, project_id: str, name: str, description: str,
                  stateful: bool, default: bool) -> str:
    now = utcnow()
    sg_id = uuid_str()
    db.execute(insert(SecurityGroup).values(
        id=sg_id, project_id=project_id, name=name, description=description,
        stateful=stateful, created_at=now, updated_at=now, revision_number=1))
    if default:
        db.execute(insert(DefaultSecurityGroup).values(project_id=project_id,
                                                       security_group_id=sg_id))
    rules = _starting_rules(db, sg_id, project_id, default, now)
    if rules:
        db.execute(insert(SecurityGroupRule), rules)
    return sg_id


_DEFAULT_GROUP = select(DefaultSecurityGroup.security_group_id).where(
    DefaultSecurityGroup.project_id == bindparam("project"))  # built once: every port asks


def ensure_default(db: Session, project_id: str | None) -> str | None:
    """The project's default group id, created (with neutron's rules) on first use.

    Known once per transaction (`memo`: a rollback, a savepoint's included, forgets it;
    so does deleting a default group)."""
    if not project_id:
        return None
    known = memo.table(db)
    key = ("default_sg", project_id)
    found = known.get(key)
    if found is not None:
        return found
    read, found = quotas.fact(db, project_id, "default_sg")  # with the quota lock
    if not read:
        found = db.scalar(_DEFAULT_GROUP, {"project": project_id})
    if found is None:
        try:
            with db.begin_nested():
                found = _insert_group(db, project_id, "default", "Default security group",
                                      True, default=True)
        except IntegrityError:
            # Another request created it first: use theirs.
            found = db.scalar(select(DefaultSecurityGroup.security_group_id).where(
                DefaultSecurityGroup.project_id == project_id))
    if found is not None:
        memo.table(db)[key] = found
    return found


def _forget_defaults(db: Session) -> None:
    known = memo.table(db)
    for key in [k for k in known if isinstance(k, tuple) and k[0] == "default_sg"]:
        del known[key]
    for key in [k for k in known if isinstance(k, tuple) and k[0] == "project_facts"]:
        quotas.forget_fact(db, key[1], "default_sg")


quotas.FACTS["default_sg"] = lambda project: select(
    DefaultSecurityGroup.security_group_id).where(
    DefaultSecurityGroup.project_id == project).scalar_subquery()


def default_ids(db: Session, sg_ids: Sequence[str]) -> set[str]:
    if not sg_ids:
        return set()
    return set(db.scalars(select(DefaultSecurityGroup.security_group_id).where(
        DefaultSecurityGroup.security_group_id.in_(list(sg_ids)))))


# ------------------------------------------------------------------ views
def rule_view(rule: SecurityGroupRule, is_default: bool) -> dict[str, Any]:
    prefix = rule.remote_ip_prefix
    return {
        "id": rule.id, "tenant_id": rule.project_id, "project_id": rule.project_id,
        "security_group_id": rule.security_group_id, "direction": rule.direction,
        "ethertype": rule.ethertype, "protocol": rule.protocol,
        "port_range_min": rule.port_range_min, "port_range_max": rule.port_range_max,
        "remote_ip_prefix": prefix, "remote_group_id": rule.remote_group_id,
        "remote_address_group_id": rule.remote_address_group_id,
        "normalized_cidr": str(netaddr.IPNetwork(prefix).cidr) if prefix else None,
        "belongs_to_default_sg": is_default,
        **standard.standard_view(rule, []),
    }


def render_groups(db: Session, groups: Sequence[SecurityGroup],
                  ctx: RequestContext | None = None) -> list[dict[str, Any]]:
    """`shared`: shared with the caller's project (or every project) by RBAC; without a
    caller, shared with anyone."""

    known = standard.take_known(groups)
    if known is not None:  # just created: nothing to read back
        return [_group_view(g, *k) for g, k in zip(groups, known, strict=True)]
    ids = [g.id for g in groups]
    defaults: set[str] = set()
    tags: dict[str, list[str]] = {i: [] for i in ids}
    shared: set[str] = set()
    stmt = _GROUP_PARTS if ctx is None else _GROUP_PARTS_FOR
    params: dict[str, Any] = {} if ctx is None else {"project": ctx.project_id or ""}
    for chunk in standard.chunks(ids, 500):  # one statement: default, tags, shared
        for kind, sg_id, tag in db.execute(stmt, {**params, "ids": chunk}):
            if kind == 0:
                defaults.add(sg_id)
            elif kind == 1:
                tags[sg_id].append(tag)
            else:
                shared.add(sg_id)
    return [_group_view(g, g.id in defaults, tags[g.id], g.id in shared) for g in groups]


def _group_view(g: SecurityGroup, is_default: bool, tags: list[str], shared: bool
                ) -> dict[str, Any]:
    return {"id": g.id, "name": g.name, "tenant_id": g.project_id, "project_id": g.project_id,
            "stateful": g.stateful, "shared": shared,
            "security_group_rules": [rule_view(r, is_default) for r in g.rules],
            **standard.standard_view(g, tags)}


def _group_parts(for_project: bool) -> Any:
    """Which groups are default ones, their tags (by tag) and which are shared (with the
    bound `project`, or with anyone): (kind, group id, tag) rows of one UNION ALL."""
    from stackling.network.rbac import visibility
    from stackling.network.rbac.models import RbacPolicy

    ids = bindparam("ids", expanding=True)
    no_str = cast(null(), String(255))
    rbac = select(literal_column("2"), RbacPolicy.object_id, no_str).where(
        RbacPolicy.object_type == "security_group", RbacPolicy.object_id.in_(ids),
        RbacPolicy.action == visibility.SHARED)
    if for_project:
        rbac = rbac.where(RbacPolicy.target_tenant.in_([visibility.WILDCARD,
                                                        bindparam("project")]))
    union = union_all(
        select(literal_column("0").label("kind"),
               DefaultSecurityGroup.security_group_id.label("owner"), no_str.label("tag"))
        .where(DefaultSecurityGroup.security_group_id.in_(ids)),
        select(literal_column("1"), Tag.resource_id, Tag.tag).where(Tag.resource_id.in_(ids)),
        rbac)
    cols = union.selected_columns
    return union.order_by(cols.kind, cols.tag)


_GROUP_PARTS = _group_parts(False)  # built once: every rendered group asks
_GROUP_PARTS_FOR = _group_parts(True)


def render_rules(db: Session, rules: Sequence[SecurityGroupRule]) -> list[dict[str, Any]]:
    known = [r.__dict__.get("known_default") for r in rules]
    if rules and all(k is not None for k in known):
        return [rule_view(r, bool(k)) for r, k in zip(rules, known, strict=True)]
    defaults = default_ids(db, list({r.security_group_id for r in rules}))
    return [rule_view(r, r.security_group_id in defaults) for r in rules]


# ------------------------------------------------------------------ groups
def _visible(ctx: RequestContext) -> Any:
    from stackling.network.rbac import visibility

    return visibility.security_group_clause(ctx)


def get_visible(db: Session, ctx: RequestContext, sg_id: str, *, rules: bool = True
                ) -> SecurityGroup:
    """The group, or 404. `rules=False`: its rules are loaded only if read (a rule
    create does not)."""
    from stackling.network.rbac import visibility

    sg = db.get(SecurityGroup, sg_id) if rules else \
        db.get(SecurityGroup, sg_id, options=[lazyload(SecurityGroup.rules)])
    if sg is None or not visibility.security_group_visible(db, ctx, sg):
        raise errors.SecurityGroupNotFound(id=sg_id)
    return sg


def list_groups(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    projects = params.filters.get("project_id") or params.filters.get("tenant_id")
    if ctx.is_admin and projects:
        for project in projects:
            ensure_default(db, project)
    elif ctx.project_id:
        ensure_default(db, ctx.project_id)
    stmt = select(SecurityGroup)
    clause = _visible(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    if "shared" in params.filters:  # shared with the caller's project by RBAC
        from stackling.network.attributes import query_value
        from stackling.network.rbac import visibility

        wanted = {bool(v) for v in (query_value("shared", SG_ATTRS["shared"], raw)
                                     for raw in params.filters["shared"])}
        shared = visibility.granted("security_group", SecurityGroup.id, ctx.project_id)
        if wanted != {True, False}:
            stmt = stmt.where(shared if True in wanted else ~shared)
    return SG_LISTING.page(db, stmt, params)


def create_group(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> SecurityGroup:
    project_id = attrs["project_id"]
    pol.authorize(db, ctx, "create_security_group", {"project_id": project_id})
    # Counted before the project's default group is made: that one is made even at quota.
    quotas.check(db, project_id, "security_group")
    ensure_default(db, project_id)
    now = utcnow()
    sg_id = uuid_str()
    starting = _starting_rules(db, sg_id, project_id, False, now)
    # its starting rules count against the rule quota (409 OverQuota, upstream)
    if starting:
        quotas.check(db, project_id, "security_group_rule", len(starting))
    sg = SecurityGroup(id=sg_id, project_id=project_id, name=attrs.get("name", ""),
                       description=attrs.get("description", ""),
                       stateful=attrs.get("stateful", True), created_at=now, updated_at=now,
                       revision_number=1)
    # the rules as a read would order them (created_at, then id)
    sg.rules = sorted((R(**row) for row in starting), key=lambda r: r.id)
    db.add(sg)
    db.flush()
    tags = list(dict.fromkeys(attrs.get("tags") or []))
    if tags:
        standard.set_tags(db, "security_group", sg.id, tags, new=True)
    # what render_groups would read back (not a default group, no RBAC policy yet)
    sg.known_parts = (False, sorted(tags), False)  # type: ignore[attr-defined]
    return sg


def _owner_target(sg: SecurityGroup) -> dict[str, Any]:
    return {"project_id": sg.project_id, "security_group:tenant_id": sg.project_id}


def update_group(db: Session, ctx: RequestContext, sg_id: str, attrs: dict[str, Any],
                 if_match: int | None = None) -> SecurityGroup:
    sg = get_visible(db, ctx, sg_id)
    pol.authorize(db, ctx, "update_security_group", _owner_target(sg))
    standard.check_revision(sg, if_match)
    is_default = bool(default_ids(db, [sg.id]))
    if "name" in attrs and attrs["name"] != sg.name and is_default:
        raise errors.SecurityGroupCannotUpdateDefault()
    if "stateful" in attrs and attrs["stateful"] != sg.stateful and _in_use(db, sg.id):
        raise errors.SecurityGroupInUse(id=sg.id, reason="in use: cannot change stateful")
    changed = False
    for key in ("name", "description", "stateful"):
        if key in attrs and getattr(sg, key) != attrs[key]:
            setattr(sg, key, attrs[key])
            changed = True
    if changed:
        standard.touch(sg)
    db.flush()
    return sg


def _in_use(db: Session, sg_id: str) -> bool:
    return db.scalar(select(PortSecurityGroup.port_id).where(
        PortSecurityGroup.security_group_id == sg_id).limit(1)) is not None


def delete_group(db: Session, ctx: RequestContext, sg_id: str,
                 if_match: int | None = None) -> None:
    sg = get_visible(db, ctx, sg_id)
    pol.authorize(db, ctx, "delete_security_group", _owner_target(sg))
    standard.check_revision(sg, if_match)
    if default_ids(db, [sg.id]) and not ctx.is_admin:
        raise errors.SecurityGroupCannotRemoveDefault()
    if _in_use(db, sg.id):
        raise errors.SecurityGroupInUse(id=sg.id, reason="in use")
    rule_ids = list(db.scalars(select(R.id).where(or_(R.security_group_id == sg.id,
                                                      R.remote_group_id == sg.id))))
    db.execute(delete(R).where(R.id.in_(rule_ids)))
    db.execute(delete(DefaultSecurityGroup).where(DefaultSecurityGroup.security_group_id == sg.id))
    _forget_defaults(db)
    from stackling.network.rbac import wildcards

    wildcards.delete_for(db, "security_group", sg.id)
    standard.delete_tags(db, [sg.id])
    db.expire(sg)
    db.execute(delete(SecurityGroup).where(SecurityGroup.id == sg.id))


# ------------------------------------------------------------------ rules
def fingerprint(values: dict[str, Any]) -> str:
    prefix = values.get("remote_ip_prefix")
    norm = str(netaddr.IPNetwork(prefix).cidr) if prefix else None
    protocol = values.get("protocol")
    if protocol is not None and not protocol.isdigit():
        protocol = str(PROTOCOLS[protocol])
    key = "|".join(str(v) for v in (
        values["direction"], values["ethertype"], protocol, values.get("port_range_min"),
        values.get("port_range_max"), norm, values.get("remote_group_id"),
        values.get("remote_address_group_id")))
    return hashlib.sha256(key.encode()).hexdigest()


def validate_rule(attrs: dict[str, Any]) -> None:
    """A rule's checks (also of default rule templates)."""
    _validate_rule(attrs)


def _validate_rule(attrs: dict[str, Any]) -> None:
    remotes = [k for k in ("remote_ip_prefix", "remote_group_id", "remote_address_group_id")
               if attrs.get(k) is not None]
    if len(remotes) > 1:
        if "remote_address_group_id" in remotes:
            from stackling.network.address_groups.address_groups import (
                SecurityGroupMultipleRemoteEntites,
            )

            raise SecurityGroupMultipleRemoteEntites()
        raise errors.SecurityGroupRemoteGroupAndRemoteIpPrefix()
    protocol = attrs.get("protocol")
    pmin, pmax = attrs.get("port_range_min"), attrs.get("port_range_max")
    if protocol is None and (pmin is not None or pmax is not None):
        raise errors.SecurityGroupProtocolRequiredWithPorts()
    number = None if protocol is None else (
        int(protocol) if protocol.isdigit() else PROTOCOLS[protocol])
    if number in PORT_PROTOCOLS:
        if (pmin is not None and pmin == 0) or (pmax is not None and pmax == 0):
            raise errors.SecurityGroupInvalidPortValue(port=0)
        if pmin is not None and pmax is not None and pmin > pmax:
            raise errors.SecurityGroupInvalidPortRange()
        if pmin is None and pmax is not None:
            raise errors.SecurityGroupInvalidPortRange()
        if pmin is not None and pmax is None:
            attrs["port_range_max"] = pmin
    elif number in ICMP_PROTOCOLS:
        for field, attr, value in (("type", "port_range_min", pmin),
                                   ("code", "port_range_max", pmax)):
            if value is not None and not 0 <= value <= 255:
                raise errors.SecurityGroupInvalidIcmpValue(field=field, attr=attr, value=value)
        if pmin is None and pmax is not None:
            raise errors.SecurityGroupMissingIcmpType(value=pmax)
    elif pmin is not None or pmax is not None:
        raise errors.InvalidInput(error_message=f"Invalid protocol {protocol} for port range, "
                                                "only supported for TCP, UDP, UDPLITE, SCTP "
                                                "and DCCP")
    ethertype = attrs.get("ethertype", "IPv4")
    if protocol in IPV6_ONLY and ethertype == "IPv4":
        raise errors.InvalidInput(error_message=f"Ethertype IPv4 is not valid for protocol "
                                                f"{protocol}")
    prefix = attrs.get("remote_ip_prefix")
    if prefix is not None:
        version = netaddr.IPNetwork(prefix).version
        if ethertype != f"IPv{version}":
            raise errors.SecurityGroupRuleParameterConflict(ethertype=ethertype, cidr=prefix)


def create_rule(db: Session, ctx: RequestContext, attrs: dict[str, Any]) -> SecurityGroupRule:
    sg = get_visible(db, ctx, attrs["security_group_id"], rules=False)
    pol.authorize(db, ctx, "create_security_group_rule", _owner_target(sg))
    _validate_rule(attrs)
    if attrs.get("remote_group_id"):
        get_visible(db, ctx, attrs["remote_group_id"], rules=False)
    if attrs.get("remote_address_group_id"):
        from stackling.network.address_groups import address_groups

        # one the rule's project sees (404 otherwise), as upstream's check_address_group
        address_groups.check_remote(db, ctx, attrs["remote_address_group_id"],
                                    attrs["project_id"])
    values = {k: attrs.get(k) for k in (
        "security_group_id", "direction", "ethertype", "protocol", "port_range_min",
        "port_range_max", "remote_ip_prefix", "remote_group_id", "remote_address_group_id")}
    fp = fingerprint(values)
    _check_duplicate(db, sg.id, fp)
    now = utcnow()
    rule_id = uuid_str()
    project_id = attrs["project_id"] if attrs["project_id"] != ctx.project_id else sg.project_id
    quotas.check(db, project_id, "security_group_rule")
    rule = R(id=rule_id, project_id=project_id, description=attrs.get("description", ""),
             created_at=now, updated_at=now, revision_number=0, fingerprint=fp, **values)
    try:
        with db.begin_nested():
            db.add(rule)
            db.flush()
    except IntegrityError:
        _check_duplicate(db, sg.id, fp)
        raise
    standard.touch(sg)
    db.flush()
    default = memo.table(db).get(("default_sg", sg.project_id))
    if default is not None:  # known this transaction: render_rules need not ask
        rule.known_default = default == sg.id  # type: ignore[attr-defined]
    return rule


def _check_duplicate(db: Session, sg_id: str, fp: str) -> None:
    existing = db.scalar(select(R.id).where(R.security_group_id == sg_id, R.fingerprint == fp))
    if existing is not None:
        raise errors.SecurityGroupRuleExists(rule_id=existing)


def _rule_visible(ctx: RequestContext) -> Any:
    if ctx.is_admin or ctx.is_service:
        return None
    return or_(R.project_id == ctx.project_id, R.security_group_id.in_(
        select(SecurityGroup.id).where(SecurityGroup.project_id == ctx.project_id)))


def get_rule(db: Session, ctx: RequestContext, rule_id: str) -> SecurityGroupRule:
    rule = db.get(R, rule_id)
    if rule is None:
        raise errors.SecurityGroupRuleNotFound(id=rule_id)
    if not (ctx.is_admin or ctx.is_service or rule.project_id == ctx.project_id):
        sg = db.get(SecurityGroup, rule.security_group_id)
        if sg is None or sg.project_id != ctx.project_id:
            raise errors.SecurityGroupRuleNotFound(id=rule_id)
    return rule


def list_rules(db: Session, ctx: RequestContext, params: ListParams) -> Page:
    stmt = select(R)
    clause = _rule_visible(ctx)
    if clause is not None:
        stmt = stmt.where(clause)
    return RULE_LISTING.page(db, stmt, params)


def delete_rule(db: Session, ctx: RequestContext, rule_id: str,
                if_match: int | None = None) -> None:
    rule = get_rule(db, ctx, rule_id)
    sg = db.get_one(SecurityGroup, rule.security_group_id)
    pol.authorize(db, ctx, "delete_security_group_rule",
                  {"project_id": rule.project_id, "security_group:tenant_id": sg.project_id})
    standard.check_revision(rule, if_match)
    db.execute(delete(R).where(R.id == rule.id))
    db.expire(sg)
    standard.touch(sg)
    db.flush()


standard.register_taggable("security_groups", standard.Taggable(
    "security_group", get_visible,
    lambda db, ctx, sg: pol.authorize(db, ctx, "update_security_group", _owner_target(sg))))
