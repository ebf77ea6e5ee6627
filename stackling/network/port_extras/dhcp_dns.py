"""Extra DHCP options and DNS attributes of ports, networks and floating IPs, as
Neutron's `extra_dhcp_opt`, `dns-integration` and `dns-domain-ports` (without an
external DNS driver: the values are stored and shown).

- `extra_dhcp_opts` of a port: `[{opt_name, opt_value, ip_version}]`; an update merges by
  (opt_name, ip_version): a null `opt_value` removes that option, others stay.
- `dns_name` of a port and `dns_assignment` (one `{hostname, ip_address, fqdn}` per fixed
  IP): with the setting `network.dns_domain` at Neutron's default `openstacklocal`, the
  hostname is `host-<address with - for . and :>` whatever the dns_name; with another
  domain, a port with a dns_name takes it as its hostname, `<dns_name>.<dns_domain>.` as
  its FQDN (an FQDN dns_name must end in that domain).
- `dns_domain` of ports (`dns-domain-ports`), networks and floating IPs, and a floating
  IP's `dns_name`: stored and shown (they feed an external DNS service upstream).
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.network import errors, standard
from stackling.network import policy as pol
from stackling.network.attributes import Attr, Invalid
from stackling.network.core import networks, ports
from stackling.network.core.models import Port
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.l3 import floatingips
from stackling.network.port_extras.models import (
    ExtraDhcpOpt,
    FloatingIPDns,
    NetworkDnsDomain,
    PortDnsDomain,
)

for _alias, _name, _desc, _updated in (
        ("extra_dhcp_opt", "Neutron Extra DHCP options",
         "Extra options configuration for DHCP. For example PXE boot options to DHCP "
         "clients can be specified (e.g. tftp-server, server-ip-address, bootfile-name)",
         "2013-03-17T12:00:00-00:00"),
        ("dns-integration", "DNS Integration", "Provides integration with DNS.",
         "2015-08-15T18:00:00-00:00"),
        ("dns-domain-ports", "dns_domain for ports",
         "Allows the DNS domain to be specified for a network port.",
         "2017-06-26T10:00:00-00:00")):
    EXTENSIONS.append(Extension(_alias, _name, _desc, _updated))

DEFAULT_DNS_DOMAIN = "openstacklocal"
FQDN_MAX_LEN = 255
BLANK_OPTS = ("router", "classless-static-route")  # options that may have an empty value
_LABEL = re.compile(r"^[a-z0-9-]{1,63}$", re.IGNORECASE)


class ExtraDhcpOptBadData(errors.InvalidInput):
    message = "Invalid data format for extra-dhcp-opt: %(data)s."


# ------------------------------------------------------------------ converters
def _extra_dhcp_opts(value: Any) -> list[dict[str, Any]]:
    """neutron-lib's extra DHCP option check (ExtraDhcpOptBadData, 400)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ExtraDhcpOptBadData(data=value)
    out = []
    for opt in value:
        if not isinstance(opt, dict):
            raise ExtraDhcpOptBadData(data=f"'{opt}' is not a dictionary")
        unknown = sorted(set(opt) - {"opt_name", "opt_value", "ip_version"})
        if unknown:
            raise ExtraDhcpOptBadData(data=f"Unexpected keys supplied: {', '.join(unknown)}")
        for key in ("opt_name", "opt_value"):
            if key not in opt:
                raise ExtraDhcpOptBadData(data=f"Validation of dictionary's keys failed. "
                                          f"Expected keys: {{'{key}'}} Provided keys: "
                                          f"{set(opt)}")
        name, val = opt["opt_name"], opt["opt_value"]
        if not isinstance(name, str) or not name or len(name) > 64:
            raise ExtraDhcpOptBadData(data=f"'{name}' is not a valid opt_name")
        blank_ok = name in BLANK_OPTS
        if val is not None and (not isinstance(val, str) or len(val) > 255
                                or (not val and not blank_ok)):
            raise ExtraDhcpOptBadData(data=f"'{val}' is not a valid opt_value")
        version = opt.get("ip_version", 4)
        try:
            version = int(version)
        except (TypeError, ValueError):
            raise ExtraDhcpOptBadData(data=f"'{version}' is not an integer") from None
        if version not in (4, 6):
            raise ExtraDhcpOptBadData(data=f"'{version}' is not in [4, 6]")
        out.append({"opt_name": name, "opt_value": val, "ip_version": version})
    return out


def _dns_format(value: str) -> str | None:
    """neutron-lib's DNS name format check: the reason it fails, or None."""
    trimmed = value[:-1] if value.endswith(".") else value
    if len(trimmed) > FQDN_MAX_LEN:
        return f"'{trimmed}' exceeds the {FQDN_MAX_LEN} character FQDN limit"
    labels = trimmed.split(".")
    for label in labels:
        if not label:
            return "Encountered an empty component"
        if label.startswith("-") or label.endswith("-"):
            return f"Name '{label}' must not start or end with a hyphen"
        if not _LABEL.match(label):
            return (f"Name '{label}' must be 1-63 characters long, each of which can only be "
                    "alphanumeric or a hyphen")
    if len(labels) > 1 and labels[-1].isdigit():
        return f"TLD '{labels[-1]}' must not be all numeric"
    return None


def _dns_domain_name(value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid(f"'{value}' is not a valid string")
    if value:
        reason = _dns_format(value)
        if reason:
            raise Invalid(reason)
    return value


def _dns_name_format(value: Any) -> str:
    if not isinstance(value, str):
        raise Invalid(f"'{value}' not a valid string")
    if value:
        reason = _dns_format(value)
        if reason:
            raise Invalid(reason)
    return value


ports.ATTRS.update({
    "extra_dhcp_opts": Attr(post=True, put=True, convert=_extra_dhcp_opts),
    "dns_name": Attr(post=True, put=True, convert=_dns_name_format, filter=True),
    "dns_domain": Attr(post=True, put=True, convert=_dns_domain_name),
    "dns_assignment": Attr(),
})
ports.LISTING.columns["dns_name"] = Port.dns_name  # type: ignore[index]
networks.ATTRS["dns_domain"] = Attr(post=True, put=True, convert=_dns_domain_name,
                                    filter=True)
floatingips.ATTRS.update({
    "dns_name": Attr(post=True, convert=_dns_name_format, filter=True),
    "dns_domain": Attr(post=True, convert=_dns_domain_name, filter=True),
})


# ------------------------------------------------------------------ DNS rules
def dns_domain(db: Session) -> str:
    """The setting `network.dns_domain`, ending in a dot (upstream's _get_dns_domain)."""
    runtime = pol.runtime_of(db)
    # the dataplane's sessions have no runtime but carry the settings
    settings = getattr(runtime, "settings", None) if runtime is not None else \
        db.info.get("stackling.settings")
    value = getattr(getattr(settings, "network", None), "dns_domain", DEFAULT_DNS_DOMAIN)
    if not value:
        return ""
    return value if value.endswith(".") else f"{value}."


def _request_dns_name(db: Session, dns_name: str) -> str:
    domain = dns_domain(db)
    return dns_name if domain and domain != f"{DEFAULT_DNS_DOMAIN}." else ""


def _check_dns_name(db: Session, dns_name: str) -> None:
    """A port's dns_name against the configured domain (upstream's
    `_validate_dns_name_with_dns_domain`, 400)."""
    name = _request_dns_name(db, dns_name)
    if not name:
        return
    domain = dns_domain(db)
    if name.endswith("."):
        if not name.endswith(f".{domain}") or name == f".{domain}":
            raise errors.BadRequest(
                f"Invalid input for dns_name. Reason: The dns_name passed is a FQDN. Its "
                f"higher level labels must be equal to the dns_domain option in neutron.conf, "
                f"that has been set to '{domain}'. It must also include one or more valid DNS "
                f"labels to the left of '{domain}'.")
        return
    if len(name) + len(domain) + 1 > FQDN_MAX_LEN:
        raise errors.BadRequest(
            f"Invalid input for dns_name. Reason: The dns_name passed is a PQDN and its size "
            f"is '{len(name)}'. The dns_domain option in neutron.conf is set to {domain}, "
            f"with a length of '{len(domain)}'. When the two are concatenated to form a FQDN "
            f"(with a '.' at the end), the resulting length exceeds the maximum size of "
            f"'{FQDN_MAX_LEN}'.")


def dns_assignment(db: Session, dns_name: str, fixed_ips: list[dict[str, str]]
                   ) -> list[dict[str, str]]:
    domain = dns_domain(db)
    name = _request_dns_name(db, dns_name)
    out = []
    for ip in fixed_ips:
        if name:
            hostname = name
            fqdn = name if name.endswith(".") else f"{name}.{domain}"
        else:
            hostname = "host-" + ip["ip_address"].replace(".", "-").replace(":", "-")
            fqdn = f"{hostname}.{domain}" if domain else hostname
        out.append({"hostname": hostname, "ip_address": ip["ip_address"], "fqdn": fqdn})
    return out


# ------------------------------------------------------------------ ports
def write_port(db: Session, ctx: RequestContext, port: Port, attrs: dict[str, Any],
               created: bool) -> None:
    if "dns_name" in attrs:
        _check_dns_name(db, attrs["dns_name"])
        port.dns_name = attrs["dns_name"]
    if "dns_domain" in attrs:
        _set_value(db, PortDnsDomain, PortDnsDomain.port_id, port.id, attrs["dns_domain"])
    if "extra_dhcp_opts" in attrs:
        _merge_opts(db, port.id, attrs["extra_dhcp_opts"], created)
    if created:  # what render_new shows, without reading it back
        opts = attrs.get("extra_dhcp_opts") or []
        standard.written(port).update(
            dns_domain=attrs.get("dns_domain") or "",
            extra_dhcp_opts=[{"opt_name": o["opt_name"], "opt_value": o["opt_value"],
                              "ip_version": o["ip_version"]}
                             for o in sorted(opts, key=lambda o: (o["opt_name"],
                                                                  o["ip_version"]))
                             if o["opt_value"] is not None])


def _set_value(db: Session, model: Any, key: Any, obj_id: str, value: str) -> None:
    db.execute(delete(model).where(key == obj_id))
    if value:
        db.add(model(**{key.key: obj_id, "dns_domain": value}))
        db.flush()


def _merge_opts(db: Session, port_id: str, opts: list[dict[str, Any]], created: bool) -> None:
    """Create: the options with values. Update: by (name, version), null removes."""
    current = {} if created else {
        (o.opt_name, o.ip_version): o for o in db.scalars(
            select(ExtraDhcpOpt).where(ExtraDhcpOpt.port_id == port_id))}
    for opt in opts:
        key = (opt["opt_name"], opt["ip_version"])
        row = current.get(key)
        if opt["opt_value"] is None:
            if row is not None:
                db.delete(row)
                current.pop(key)
        elif row is not None:
            row.opt_value = opt["opt_value"]
        else:
            row = ExtraDhcpOpt(port_id=port_id, opt_name=opt["opt_name"],
                               ip_version=opt["ip_version"], opt_value=opt["opt_value"])
            db.add(row)
            current[key] = row
    db.flush()


def render_ports(db: Session, views: list[dict[str, Any]]) -> None:
    ids = [v["id"] for v in views]
    opts: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    domains: dict[str, str] = {}
    for chunk in standard.chunks(ids, 500):
        for o in db.scalars(select(ExtraDhcpOpt).where(ExtraDhcpOpt.port_id.in_(chunk))
                            .order_by(ExtraDhcpOpt.opt_name, ExtraDhcpOpt.ip_version)):
            opts[o.port_id].append({"opt_name": o.opt_name, "opt_value": o.opt_value,
                                    "ip_version": o.ip_version})
        domains.update(db.execute(select(PortDnsDomain.port_id, PortDnsDomain.dns_domain)
                                  .where(PortDnsDomain.port_id.in_(chunk))).all())
    for v in views:
        name = v.get("dns_name") or ""  # a port column: the port view has it
        v["dns_domain"] = domains.get(v["id"], "")
        v["dns_assignment"] = dns_assignment(db, name, v.get("fixed_ips") or [])
        v["extra_dhcp_opts"] = opts[v["id"]]


def render_new_ports(db: Session, views: list[dict[str, Any]],
                     written: list[dict[str, Any]]) -> None:
    """render_ports of ports made in this request, from what write_port wrote."""
    for v, w in zip(views, written, strict=True):
        v["dns_domain"] = w.get("dns_domain", "")
        v["dns_assignment"] = dns_assignment(db, v.get("dns_name") or "",
                                             v.get("fixed_ips") or [])
        v["extra_dhcp_opts"] = w.get("extra_dhcp_opts", [])


# ------------------------------------------------------------------ networks, floating IPs
def write_network(db: Session, ctx: RequestContext, net: Any, attrs: dict[str, Any],
                  created: bool) -> None:
    if "dns_domain" in attrs:
        _set_value(db, NetworkDnsDomain, NetworkDnsDomain.network_id, net.id,
                   attrs["dns_domain"])
    if created:
        standard.written(net)["dns_domain"] = attrs.get("dns_domain") or ""


def render_networks(db: Session, views: list[dict[str, Any]]) -> None:
    found: dict[str, str] = {}
    for chunk in standard.chunks([v["id"] for v in views], 500):
        found.update(db.execute(select(NetworkDnsDomain.network_id, NetworkDnsDomain.dns_domain)
                                .where(NetworkDnsDomain.network_id.in_(chunk))).all())
    for v in views:
        v["dns_domain"] = found.get(v["id"], "")


def render_new_networks(db: Session, views: list[dict[str, Any]],
                        written: list[dict[str, Any]]) -> None:
    for v, w in zip(views, written, strict=True):
        v["dns_domain"] = w.get("dns_domain", "")


def write_floatingip(db: Session, ctx: RequestContext, fip: Any, attrs: dict[str, Any],
                     created: bool) -> None:
    name, domain = attrs.get("dns_name") or "", attrs.get("dns_domain") or ""
    if created and (name or domain):
        db.add(FloatingIPDns(floatingip_id=fip.id, dns_name=name, dns_domain=domain))
        db.flush()


def render_floatingips(db: Session, views: list[dict[str, Any]]) -> None:
    found: dict[str, tuple[str, str]] = {}
    for chunk in standard.chunks([v["id"] for v in views], 500):
        for fid, name, domain in db.execute(
                select(FloatingIPDns.floatingip_id, FloatingIPDns.dns_name,
                       FloatingIPDns.dns_domain).where(FloatingIPDns.floatingip_id.in_(chunk))):
            found[fid] = (name, domain)
    for v in views:
        v["dns_name"], v["dns_domain"] = found.get(v["id"], ("", ""))


ports.RENDER_EXTENSIONS.append(render_ports)
ports.RENDER_NEW[render_ports] = render_new_ports
ports.ATTR_WRITERS.append(write_port)
networks.RENDER_EXTENSIONS.append(render_networks)
networks.RENDER_NEW[render_networks] = render_new_networks
networks.ATTR_WRITERS.append(write_network)
floatingips.RENDER_EXTENSIONS.append(render_floatingips)
floatingips.ATTR_WRITERS.append(write_floatingip)
