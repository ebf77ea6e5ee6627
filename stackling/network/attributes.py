"""Neutron's attribute maps: which attributes a resource has, which may be POSTed or
PUT, their defaults, converters and validators, and which are filterable/sortable.

`parse_create`/`parse_update` apply neutron's generic request-body checks in neutron's
order (body, wrapper, project, unknown attributes, read-only attributes, required
attributes, conversion); every failure is a 400 and happens before anything is written.
Values are checked here for shape only; rules that need the database live in the logic.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import netaddr

from stackling.common.context import RequestContext
from stackling.common.listing import to_bool
from stackling.network import errors


class Invalid(ValueError):
    """A value failed conversion or validation; the message is neutron's reason."""


REQUIRED = object()  # marks an attribute without default (must be POSTed)
UNSET = object()  # an optional attribute the caller did not give (logic decides)

Converter = Callable[[Any], Any]


@dataclass(frozen=True)
class Attr:
    post: bool = False
    put: bool = False
    default: Any = UNSET
    convert: Converter | None = None
    filter: bool = False
    sort: bool = False
    # Converter for query-string filter values (defaults to `convert` for scalars).
    query: Converter | None = None


# ------------------------------------------------------------------ converters
def string(max_len: int | None = 255, *, nullable: bool = False) -> Converter:
    def conv(value: Any) -> Any:
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise Invalid(f"'{value}' is not a valid string")
        if max_len is not None and len(value) > max_len:
            raise Invalid(f"'{value}' exceeds maximum length of {max_len}")
        return value

    return conv


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        try:
            return to_bool(value)
        except ValueError:
            pass
    raise Invalid(f"'{value}' cannot be converted to boolean")


def integer(lo: int | None = None, hi: int | None = None, *, nullable: bool = False
            ) -> Converter:
    def conv(value: Any) -> Any:
        if value is None and nullable:
            return None
        if isinstance(value, bool):
            raise Invalid(f"'{value}' is not an integer")
        if isinstance(value, str):
            text = value.strip()
            if not re.fullmatch(r"[+-]?\d+", text):
                raise Invalid(f"'{value}' is not an integer")
            value = int(text)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise Invalid(f"'{value}' is not an integer")
        if not -2**63 <= value < 2**63:  # what every backend's BIGINT holds
            raise Invalid(f"'{value}' is out of range")
        if lo is not None and value < lo:
            raise Invalid(f"'{value}' is too small - must be at least '{lo}'")
        if hi is not None and value > hi:
            raise Invalid(f"'{value}' is too large - must be no larger than '{hi}'")
        return value

    return conv


def uuid_value(value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid(f"'{value}' is not a valid UUID")
    try:
        return str(uuid.UUID(value)) if len(value) in (32, 36) else _bad_uuid(value)
    except ValueError:
        return _bad_uuid(value)


def _bad_uuid(value: Any) -> str:
    raise Invalid(f"'{value}' is not a valid UUID")


def uuid_or_none(value: Any) -> str | None:
    return None if value is None else uuid_value(value)


def ip_address(value: Any) -> str:
    """A canonical IPv4/IPv6 address (netaddr's forms, no zone, no prefix)."""
    if not isinstance(value, str) or not value or value != value.strip():
        raise Invalid(f"'{value}' is not a valid IP address")
    try:
        if ":" in value:
            ip = netaddr.IPAddress(value, 6)
        else:
            # Refuse inet_aton's shorthand forms ("1", "1.2") that netaddr accepts.
            if value.count(".") != 3:
                raise ValueError
            ip = netaddr.IPAddress(value, 4, flags=netaddr.INET_PTON)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        raise Invalid(f"'{value}' is not a valid IP address") from None
    return str(ip)


def ip_or_none(value: Any) -> str | None:
    return None if value is None else ip_address(value)


def cidr(value: Any) -> str:
    """A subnet in CIDR form; host bits are tolerated here (the logic canonicalises)."""
    if not isinstance(value, str) or "/" not in value:
        raise Invalid(f"'{value}' is not a valid IP subnet")
    addr, _, plen = value.partition("/")
    try:
        ip_address(addr)
        if not plen.isdigit():
            raise ValueError
        net = netaddr.IPNetwork(value)
    except (Invalid, netaddr.AddrFormatError, ValueError, TypeError):
        raise Invalid(f"'{value}' is not a valid IP subnet") from None
    if int(plen) > (32 if net.version == 4 else 128):
        raise Invalid(f"'{value}' is not a valid IP subnet")
    return value


def cidr_or_ip(value: Any) -> str:
    """remote_ip_prefix / allowed address pair ip: an address or a CIDR."""
    if isinstance(value, str) and "/" in value:
        cidr(value)
        return str(netaddr.IPNetwork(value).cidr)
    return ip_address(value)


MAC_RE = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$")


def mac_address(value: Any) -> str:
    if not isinstance(value, str) or not MAC_RE.match(value):
        raise Invalid(f"'{value}' is not a valid MAC address")
    mac = value.lower().replace("-", ":")
    if mac == "00:00:00:00:00:00" or int(mac.split(":")[0], 16) & 1:
        raise Invalid(f"'{value}' is not a valid MAC address")
    return mac


def mac_or_none(value: Any) -> str | None:
    return None if value is None else mac_address(value)


def list_of(item: Converter, *, unique: bool = False, nullable_as_empty: bool = False
            ) -> Converter:
    def conv(value: Any) -> Any:
        if value is None and nullable_as_empty:
            return []
        if not isinstance(value, list):
            raise Invalid(f"'{value}' is not a list")
        out = [item(v) for v in value]
        if unique:
            seen: set[Any] = set()
            for v in out:
                key = repr(v)
                if key in seen:
                    raise Invalid(f"Duplicate items in the list: '{v}'")
                seen.add(key)
        return out

    return conv


def dict_of(spec: Mapping[str, tuple[Converter, bool]], *, name: str = "dict") -> Converter:
    """A dict with known keys: key -> (converter, required)."""

    def conv(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise Invalid(f"'{value}' is not a dictionary")
        unknown = sorted(set(value) - set(spec))
        if unknown:
            raise Invalid(f"Unexpected keys supplied: {', '.join(map(str, unknown))}")
        out = {}
        for key, (c, required) in spec.items():
            if key not in value:
                if required:
                    raise Invalid(f"Validation of dictionary's keys failed. Expected keys: "
                                  f"{set(k for k, (_, r) in spec.items() if r)} Provided keys: "
                                  f"{set(value)}")
                continue
            out[key] = c(value[key])
        return out

    return conv


def any_dict(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid(f"'{value}' is not a dictionary")
    return value


def one_of(*choices: Any, nullable: bool = False) -> Converter:
    def conv(value: Any) -> Any:
        if value is None and nullable:
            return None
        if value not in choices:
            raise Invalid(f"'{value}' is not in {list(choices)}")
        return value

    return conv


def ip_version(value: Any) -> int:
    v = integer()(value)
    if v not in (4, 6):
        raise Invalid(f"'{v}' is not in [4, 6]")
    return v


# ------------------------------------------------------------------ shared attributes
NAME = Attr(post=True, put=True, default="", convert=string(), filter=True, sort=True)
DESCRIPTION = Attr(post=True, put=True, default="", convert=string(), filter=True)
PROJECT = Attr(post=True, convert=string(255), filter=True, sort=True)
ID = Attr(filter=True, sort=True, query=str)
READ = Attr(filter=True)
STANDARD: dict[str, Attr] = {
    "id": ID,
    "project_id": PROJECT,
    "tenant_id": PROJECT,
    "description": DESCRIPTION,
    "created_at": Attr(),
    "updated_at": Attr(),
    "revision_number": Attr(filter=True, query=integer()),
    "tags": Attr(post=True, convert=list_of(string(255))),
}
TAG_FILTERS = ("tags", "tags-any", "not-tags", "not-tags-any")


# ------------------------------------------------------------------ request bodies
def _bad(msg: str) -> errors.BadRequest:
    return errors.BadRequest(msg)


def _project(ctx: RequestContext, item: dict[str, Any]) -> None:
    """Neutron's populate_project_info plus the 'other project needs admin' rule."""
    for key in ("project_id", "tenant_id"):
        if key in item and item[key] is None:  # null is not a project (type:string)
            raise _bad(f"Invalid input for {key}. Reason: 'None' is not a valid string.")
    project = item.get("project_id")
    tenant = item.get("tenant_id")
    if project is not None and tenant is not None and project != tenant:
        raise _bad("'project_id' and 'tenant_id' do not match")
    value = project if project is not None else tenant
    if value is None:
        return
    if not isinstance(value, str) or len(value) > 255:
        attr = "project_id" if project is not None else "tenant_id"
        raise _bad(f"Invalid input for {attr}. Reason: '{value}' is not a valid string.")
    if value != ctx.project_id and not (ctx.is_admin or ctx.is_service):
        raise _bad("Specifying 'project_id' or 'tenant_id' other than the authenticated "
                   "project in request requires admin privileges")
    item["project_id"] = item["tenant_id"] = value


def items_of(body: Any, resource: str, collection: str, *, allow_bulk: bool = True,
             allow_empty: bool = False) -> tuple[list[Any], bool]:
    """The resource dicts of a POST body and whether it was a bulk request.

    `allow_empty`: a missing body means "all defaults" (POST /networks)."""
    if body is None or body == {}:
        if allow_empty:
            return [{}], False
        raise _bad("Resource body required")
    if not isinstance(body, dict):
        raise _bad("Body contains invalid data")
    if allow_bulk and collection in body:
        items = body[collection]
        if not isinstance(items, list) or not items:
            raise _bad("Resources required")
        return items, True
    if resource not in body:
        raise _bad(f"Unable to find '{resource}' in request body")
    return [body[resource]], False


def parse_create(ctx: RequestContext, item: Any, attrs: Mapping[str, Attr]) -> dict[str, Any]:
    """One resource dict of a POST: validated, converted, defaults filled (UNSET kept
    out: an absent optional attribute without a static default is simply missing)."""
    if not isinstance(item, dict):
        raise _bad("Body contains invalid data")
    item = dict(item)
    _project(ctx, item)
    unknown = [k for k in item if k not in attrs]
    if unknown:
        raise _bad(f"Unrecognized attribute(s) '{', '.join(map(str, unknown))}'")
    for key in item:
        if not attrs[key].post:
            raise _bad(f"Attribute '{key}' not allowed in POST")
    out: dict[str, Any] = {}
    for key, attr in attrs.items():
        if key in item:
            value = item[key]
            if attr.convert is not None and key not in ("project_id", "tenant_id"):
                value = _convert(key, attr, value)
            out[key] = value
        elif attr.post and attr.default is REQUIRED:
            raise _bad(f"Failed to parse request. Required attribute '{key}' not specified")
        elif attr.post and attr.default is not UNSET:
            out[key] = attr.default() if callable(attr.default) else attr.default
    if "project_id" not in item:
        out["project_id"] = out["tenant_id"] = ctx.project_id
    out.pop("tenant_id", None)
    return out


def parse_update(ctx: RequestContext, body: Any, resource: str, attrs: Mapping[str, Attr]
                 ) -> dict[str, Any]:
    if body is None:
        raise _bad("Resource body required")
    if not isinstance(body, dict):
        raise _bad("Body contains invalid data")
    if resource not in body:
        raise _bad(f"Unable to find '{resource}' in request body")
    item = body[resource]
    if not isinstance(item, dict):
        raise _bad("Body contains invalid data")
    unknown = [k for k in item if k not in attrs]
    if unknown:
        raise _bad(f"Unrecognized attribute(s) '{', '.join(map(str, unknown))}'")
    out = {}
    for key, value in item.items():
        attr = attrs[key]
        if not attr.put:
            raise _bad(f"Cannot update read-only attribute {key}")
        out[key] = _convert(key, attr, value) if attr.convert is not None else value
    return out


def _convert(key: str, attr: Attr, value: Any) -> Any:
    try:
        return attr.convert(value)  # type: ignore[misc]
    except Invalid as exc:
        raise _bad(f"Invalid input for {key}. Reason: {exc}.") from None
    except (TypeError, ValueError, OverflowError, AttributeError):
        raise _bad(f"Invalid input for {key}. Reason: '{value}' is not valid.") from None


# ------------------------------------------------------------------ query strings
def filter_keys(attrs: Mapping[str, Attr], extra: tuple[str, ...] = ()) -> set[str]:
    return {k for k, a in attrs.items() if a.filter} | set(TAG_FILTERS) | set(extra)


def sort_keys(attrs: Mapping[str, Attr]) -> set[str]:
    return {k for k, a in attrs.items() if a.sort}


def query_value(key: str, attr: Attr | None, value: str) -> Any:
    """Convert one filter value from the query string (booleans, ints, ...)."""
    conv = attr.query if attr is not None and attr.query is not None else None
    if conv is None and attr is not None and attr.convert is boolean:
        conv = boolean
    if conv is None:
        return value
    try:
        return conv(value)
    except (Invalid, ValueError, TypeError) as exc:
        raise _bad(f"Invalid input for {key}. Reason: {exc}.") from None
