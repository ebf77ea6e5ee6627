"""No input makes any route answer 5xx: a bounded, derandomized fuzz of every route of
every service, driven by each service's own schemas (compute, placement and image
jsonschemas; Neutron's attribute maps), on SQLite, PostgreSQL and MariaDB.

Routes are walked from the services' route tables, so routes added later are fuzzed
without listing them here. Each route gets malformed path ids, hostile query strings and
bodies built from the schemas with one value at a time replaced by something hostile,
plus, per route, each string field in turn a lone surrogate, a surrogate key and a body
that is not UTF-8; the cases of a route are a fixed sample seeded by the route, so a
failure reproduces. Nested bodies no flat spec reaches (SHAPES: application credential
access rules) have every leaf replaced by every one of a few wrong shapes.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
import re
import shutil
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import create_database, drop_database, make_api

PLACEHOLDER = re.compile(r"\{([^}:]+)(?::[^}]+)?\}")
BODY_CASES = 4  # schema-driven bodies per route and method, plus two malformed ones
QUERY_CASES = 2  # hostile query strings per GET route
# Values a schema never expects: each replaces one leaf of a well-formed body in turn.
HOSTILE: list[Any] = [
    None, True, "", "x" * 300, 2**63, -(2**63) - 1, 10**30, -1, 1.5, [], {}, [{}], [None],
    {"": {}}, "\x00", "not-a-uuid", "0" * 40, "1e309", "\ud800", "a\udfffb",
]
# Stands for bytes that are not UTF-8: JSON text cannot hold them, so the serialized body's
# marker is replaced by them (run_fuzz).
NOT_UTF8 = "@not-utf8@"
HOSTILE.append(NOT_UTF8)
PATH_IDS = ["9" * 25, "a" * 300, "%00", "-1.5", "%ED%A0%80", "caf%E9"]
QUERIES = [
    "limit=" + "9" * 20, "limit=-1", "limit=abc", "marker=" + "9" * 25, "marker=%00",
    "sort_key=%00", "sort_dir=sideways", "enabled=maybe", "effective=maybe",
    "all_tenants=maybe", "is_public=maybe", "name=%00", "id=" + "9" * 30, "fields=%00",
    "project_id=" + "x" * 300, "limit=1&marker=x", "page_reverse=maybe",
    "changes-since=yesterday", "member_of=in:%00", "resources=VCPU:" + "9" * 30,
    "required=%00", "in_tree=x", "uuid=x", "tags=%00", "visibility=x", "protected=maybe",
]
# Nested bodies the flat specs never reach (objects in a list in the envelope): each leaf
# in turn is every one of SHAPE_VALUES, none sampled away. `{self}` is the caller's own
# user id (a user makes its application credentials itself only).
SHAPES: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/identity/v3/users/{self}/application_credentials", {"application_credential": {
        "name": "fuzz-shapes", "access_rules": [
            {"service": "compute", "method": "GET", "path": "/v2.1/servers"}]}}),
]
SHAPE_VALUES: list[Any] = [None, [], {}, ["x"], {"x": 1}, "", 7, True]
SCHEMA_MODULES = {
    "compute": ["stackling.compute.schemas"],
    "placement": ["stackling.placement.schemas"],
    "image": ["stackling.image.validation"],
}


# ------------------------------------------------------------------ schemas
def _is_schema(value: Any) -> bool:
    return isinstance(value, dict) and ("properties" in value or "type" in value)


def service_schemas(service: str) -> list[dict[str, Any]]:
    """Every request schema a service module defines (versioned tables included)."""
    found: list[dict[str, Any]] = []
    for name in SCHEMA_MODULES.get(service, []):
        module = importlib.import_module(name)
        for attr in sorted(vars(module)):
            value = getattr(module, attr)
            if _is_schema(value) and value.get("type") == "object":
                found.append(value)
            elif isinstance(value, dict) and value and all(
                    re.fullmatch(r"\d+\.\d+", str(k)) and _is_schema(v) for k, v in value.items()):
                found.extend(v for v in value.values() if v.get("type") == "object")
    return found


def network_attribute_maps() -> dict[str, dict[str, Any]]:
    """{module name: ATTRS} for every Neutron resource module with an attribute map."""
    import stackling.network as network

    maps: dict[str, dict[str, Any]] = {}
    for info in pkgutil.walk_packages(network.__path__, "stackling.network."):
        try:
            module = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 - a module another engineer is writing
            continue
        attrs = getattr(module, "ATTRS", None)
        if isinstance(attrs, dict) and attrs:
            maps[info.name.rsplit(".", 1)[-1]] = attrs
    return maps


def identity_specs() -> dict[str, dict[str, Any]]:
    """{envelope: attributes} from Keystone's body specs (`PROJECT_SPEC`, ...)."""
    specs: dict[str, dict[str, Any]] = {}
    import stackling.identity as identity

    names = [f"stackling.identity.{m.name}" for m in pkgutil.iter_modules(identity.__path__)
             if m.name == "api" or m.name.endswith("_api")]
    for name in sorted(names):
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if attr.endswith("_SPEC") and isinstance(value, dict):
                specs[attr[:-5].lower()] = {k: "x" for k in value}
    return specs


# A well-formed token request: its fields are mutated one at a time like the others.
AUTH = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
    "name": "admin", "domain": {"id": "default"}, "password": "x"}}},
    "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}


def example(schema: Any, depth: int = 0) -> Any:
    """A plausible instance of `schema` (first choice of each alternative)."""
    if not isinstance(schema, dict) or depth > 6:
        return "x"
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    for key in ("oneOf", "anyOf"):
        if schema.get(key):
            return example(schema[key][0], depth + 1)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: example(v, depth + 1) for k, v in props.items()}
    if kind == "array":
        return [example(schema.get("items", {}), depth + 1)]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if schema.get("format") == "uuid":
        return "6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41"
    return "x"


def leaf_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from leaf_paths(sub, (*prefix, key))
    elif isinstance(value, list) and value:
        yield from leaf_paths(value[0], (*prefix, 0))


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    node = copy
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = new
    return copy


def mutations(base: Any, rng: random.Random, n: int) -> list[Any]:
    paths = list(leaf_paths(base))
    cases = [(p, h) for p in paths for h in HOSTILE]
    return [replaced(base, p, h) for p, h in rng.sample(cases, min(n, len(cases)))]


# ------------------------------------------------------------------ routes
def singular(collection: str) -> str:
    name = collection.replace("-", "_").removeprefix("os_")
    if name.endswith("ies"):
        return name[:-3] + "y"
    return name[:-1] if name.endswith("s") else name


def route_bodies(service: Any, path: str, rng: random.Random, schemas: list[dict[str, Any]],
                 attr_maps: dict[str, dict[str, Any]]) -> list[Any]:
    statics = [p for p in path.split("/") if p and "{" not in p]
    collection = statics[-1] if statics else ""
    envelope = singular(collection)
    bases: list[Any] = [{envelope: {}}]
    if service.name == "identity":
        spec = attr_maps.get(f"identity:{envelope}")
        if spec:
            bases.append({envelope: spec})
        if path.endswith("/auth/tokens"):
            bases = [AUTH]
    if service.name == "network":
        attrs = attr_maps.get(collection.replace("-", "_"))
        if attrs:
            bases.append({envelope: {name: "x" for name, a in attrs.items()
                                     if getattr(a, "post", False) or getattr(a, "put", False)}})
    for schema in rng.sample(schemas, min(3, len(schemas))):
        bases.append(example(schema))
    bodies = rng.sample([[], "x", 7, None, {envelope: None}, {envelope: "x" * 300}], 2)
    for base in rng.sample(bases, min(len(bases), BODY_CASES)):
        bodies.extend(mutations(base, rng, max(1, BODY_CASES // len(bases))))
    return bodies[:2 + BODY_CASES] + text_bodies(bases, envelope, flat=bases[1:2] if len(
        bases) > 1 and service.name in ("identity", "network") else [])


def text_bodies(bases: list[Any], envelope: str, flat: list[Any]) -> list[Any]:
    """Every string field in turn a lone surrogate; a key one; one body not UTF-8. The
    all-"x" attribute specs (Keystone's, Neutron's) are invalid as a whole, so each of
    their attributes goes alone, where it can reach the database."""
    out: list[Any] = []
    seen: set[str] = set()
    for base in bases:
        for path in leaf_paths(base):
            if not path or not isinstance(_leaf(base, path), str):
                continue
            flat_base = any(base is f for f in flat)
            body = {envelope: {path[-1]: "\ud800"}} if flat_base else replaced(base, path, "\ud800")
            key = json.dumps(body, sort_keys=True)
            if key not in seen:
                seen.add(key)
                out.append(body)
    out.append({envelope: {"\udc00": "x"}})
    out.append({envelope: {"name": NOT_UTF8}})
    return out


def _leaf(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


class Ids:
    """Real ids for placeholders, so bodies reach past the lookups."""

    def __init__(self, api: Any) -> None:
        self.by_name: dict[str, str] = {}
        self.by_collection: dict[str, str] = {}

        def post(url: str, body: dict[str, Any], key: str, *names: str) -> str | None:
            r = api.post(url, json=body)
            if r.status_code >= 300:
                return None
            value = r.json()[key]["id"] if key else r.json()["id"]
            for name in names:
                self.by_name.setdefault(name, value)
            return value

        net = post("/networking/v2.0/networks", {"network": {"name": "fuzz"}}, "network",
                   "network_id")
        if net:
            self.by_collection["networks"] = net
            sub = post("/networking/v2.0/subnets", {"subnet": {
                "network_id": net, "cidr": "10.99.0.0/24", "ip_version": 4}}, "subnet",
                "subnet_id")
            self.by_collection["subnets"] = sub or "x"
            port = post("/networking/v2.0/ports", {"port": {"network_id": net}}, "port",
                        "port_id")
            self.by_collection["ports"] = port or "x"
            parent = post("/networking/v2.0/ports", {"port": {"network_id": net}}, "port")
            trunk = post("/networking/v2.0/trunks", {"trunk": {"port_id": parent}}, "trunk",
                         "trunk_id") if parent else None
            self.by_collection["trunks"] = trunk or "x"
        group = post("/networking/v2.0/address-groups", {"address_group": {"name": "fuzz"}},
                     "address_group", "address_group_id")
        self.by_collection["address_groups"] = group or "x"
        rule = post("/networking/v2.0/default-security-group-rules", {
            "default_security_group_rule": {"direction": "ingress", "protocol": "tcp",
                                            "port_range_min": 8443, "port_range_max": 8443}},
            "default_security_group_rule", "default_rule_id")
        self.by_collection["default_security_group_rules"] = rule or "x"
        qos = post("/networking/v2.0/qos/policies", {"policy": {"name": "fuzz"}}, "policy",
                   "qos_policy_id")
        for kind, rule in (("bandwidth_limit", {"max_kbps": 1000}),
                           ("dscp_marking", {"dscp_mark": 8}),
                           ("minimum_bandwidth", {"min_kbps": 10}),
                           ("minimum_packet_rate", {"min_kpps": 10})):
            if qos:
                post(f"/networking/v2.0/qos/policies/{qos}/{kind}_rules",
                     {f"{kind}_rule": rule}, f"{kind}_rule", f"{kind}_rule_id")
        self.by_name["rule_type"] = "bandwidth_limit"
        label = post("/networking/v2.0/metering/metering-labels", {"metering_label": {
            "name": "fuzz"}}, "metering_label", "metering_label_id")
        if label:
            post("/networking/v2.0/metering/metering-label-rules", {"metering_label_rule": {
                "metering_label_id": label, "remote_ip_prefix": "10.0.0.0/8"}},
                 "metering_label_rule", "metering_label_rule_id")
        flavor = post("/networking/v2.0/flavors", {"flavor": {
            "name": "fuzz", "service_type": "L3_ROUTER_NAT"}}, "flavor", "network_flavor_id")
        profile = post("/networking/v2.0/service_profiles", {"service_profile": {
            "driver": "neutron.services.l3_router.service_providers.ha.HaDriver"}},
            "service_profile", "service_profile_id")
        if flavor and profile:
            api.post(f"/networking/v2.0/flavors/{flavor}/service_profiles",
                     json={"service_profile": {"id": profile}})
        post("/networking/v2.0/log/logs", {"log": {"resource_type": "security_group"}}, "log",
             "log_id")
        if net:
            post("/networking/v2.0/local_ips", {"local_ip": {"network_id": net}}, "local_ip",
                 "local_ip_id")
            lip_port = post("/networking/v2.0/ports", {"port": {"network_id": net}}, "port",
                            "fixed_port_id")
            if lip_port and self.by_name.get("local_ip_id"):
                api.post(f"/networking/v2.0/local_ips/{self.by_name['local_ip_id']}"
                         "/port_associations", json={"port_association": {
                             "fixed_port_id": lip_port}})
            # a compute port bound to one host with an INACTIVE binding on another
            bound = post("/networking/v2.0/ports", {"port": {
                "network_id": net, "device_owner": "compute:nova",
                "binding:host_id": "fuzz-src"}}, "port", "binding_port_id")
            if bound and api.post(f"/networking/v2.0/ports/{bound}/bindings", json={
                    "binding": {"host": "fuzz-dst"}}).status_code == 201:
                self.by_name["host"] = "fuzz-dst"
        fip = post("/networking/v2.0/floatingips", {"floatingip": {
            "floating_network_id": api.get("/networking/v2.0/networks?name=public").json()[
                "networks"][0]["id"]}}, "floatingip", "pf_floatingip_id")
        if fip and port:
            post(f"/networking/v2.0/floatingips/{fip}/port_forwardings", {"port_forwarding": {
                "protocol": "tcp", "internal_port": 22, "external_port": 22,
                "internal_port_id": port}}, "port_forwarding", "port_forwarding_id")
        router = post("/networking/v2.0/routers", {"router": {"name": "fuzz"}}, "router",
                      "router_id")
        self.by_collection["routers"] = router or "x"
        if router:
            post(f"/networking/v2.0/routers/{router}/conntrack_helpers", {"conntrack_helper": {
                "protocol": "tcp", "port": 21, "helper": "ftp"}}, "conntrack_helper",
                 "conntrack_helper_id")
        self._ndp_proxy(api, post)
        sg = post("/networking/v2.0/security-groups", {"security_group": {"name": "fuzz"}},
                  "security_group", "sg_id")
        self.by_collection["security_groups"] = sg or "x"
        self.by_collection["security-groups"] = sg or "x"
        project = post("/identity/v3/projects", {"project": {"name": "fuzz"}}, "project")
        self.by_collection["projects"] = project or "x"
        user = post("/identity/v3/users", {"user": {"name": "fuzz"}}, "user", "user_id")
        self.by_collection["users"] = user or "x"
        group = post("/identity/v3/groups", {"group": {"name": "fuzz"}}, "group", "group_id")
        self.by_collection["groups"] = group or "x"
        image = post("/image/v2/images", {"name": "fuzz"}, "", "image_id")
        self.by_collection["images"] = image or "x"
        agg = api.post("/compute/v2.1/os-aggregates", json={"aggregate": {"name": "fuzz"}})
        if agg.status_code == 200:
            self.by_name["aggregate_id"] = str(agg.json()["aggregate"]["id"])
        rps = api.get("/placement/resource_providers").json().get("resource_providers", [])
        if rps:
            self.by_name["uuid"] = rps[0]["uuid"]
        self.by_name["flavor_id"] = "1"
        self.by_name["tenant_id"] = _admin_project(api)
        self.by_name["domain_id"] = "default"
        self.by_name["collection"] = "networks"
        self.by_name["resource_id"] = net or "x"

    @staticmethod
    def _ndp_proxy(api: Any, post: Any) -> None:
        """An NDP proxy (`ndp_proxy_id`) on its own topology: an IPv6 address scope and
        pool, an external network with an IPv6 subnet, an NDP-proxying router, a port."""
        scope = post("/networking/v2.0/address-scopes", {"address_scope": {
            "name": "fuzz", "ip_version": 6, "shared": True}}, "address_scope")
        pool = post("/networking/v2.0/subnetpools", {"subnetpool": {
            "name": "fuzz-ndp", "prefixes": ["2001:db8:fe::/48"], "default_prefixlen": 64,
            "address_scope_id": scope}}, "subnetpool") if scope else None
        ext = post("/networking/v2.0/networks", {"network": {
            "name": "fuzz-ndp-ext", "router:external": True}}, "network") if pool else None
        net = post("/networking/v2.0/networks", {"network": {"name": "fuzz-ndp"}},
                   "network") if ext else None
        if not net:
            return
        post("/networking/v2.0/subnets", {"subnet": {
            "network_id": ext, "ip_version": 6, "subnetpool_id": pool}}, "subnet")
        sub = post("/networking/v2.0/subnets", {"subnet": {
            "network_id": net, "ip_version": 6, "subnetpool_id": pool}}, "subnet")
        router = post("/networking/v2.0/routers", {"router": {
            "name": "fuzz-ndp", "enable_ndp_proxy": True,
            "external_gateway_info": {"network_id": ext}}}, "router")
        port = post("/networking/v2.0/ports", {"port": {"network_id": net}}, "port")
        if sub and router and port and api.put(
                f"/networking/v2.0/routers/{router}/add_router_interface",
                json={"subnet_id": sub}).status_code == 200:
            post("/networking/v2.0/ndp_proxies", {"ndp_proxy": {
                "router_id": router, "port_id": port}}, "ndp_proxy", "ndp_proxy_id")

    def real_path(self, path: str) -> str | None:
        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            before = path[:match.start()].rstrip("/").rsplit("/", 1)[-1]
            value = self.by_name.get(name) or self.by_collection.get(before)
            if value is None:
                raise KeyError(name)
            return quote(value, safe="")

        try:
            return PLACEHOLDER.sub(sub, path)
        except KeyError:
            return None


def _admin_project(api: Any) -> str:
    r = api.get("/identity/v3/auth/projects")
    return next((p["id"] for p in r.json().get("projects", []) if p["name"] == "admin"), "x")


def cases(api: Any) -> Iterator[tuple[str, str, Any, dict[str, str]]]:
    """(method, url, json body or _NO_BODY, headers) for every route, in a fixed order."""
    attr_maps: dict[str, Any] = network_attribute_maps()
    attr_maps.update({f"identity:{k}": v for k, v in identity_specs().items()})
    ids = Ids(api)
    order = {"GET": 0, "HEAD": 1, "POST": 2, "PUT": 3, "PATCH": 4, "DELETE": 5}
    routes = []
    for service in api.runtime.services.values():
        schemas = service_schemas(service.name)
        for route in service.routes:
            for method in route.methods:
                routes.append((order.get(method, 6), service, route, method, schemas))
    routes.sort(key=lambda r: (r[0], r[1].prefix, r[2].path))
    fuzzed_paths: set[str] = set()
    own_id = api.get("/identity/v3/auth/tokens", headers={
        "X-Subject-Token": api.token("admin")}).json()["token"]["user"]["id"]
    for method, template, base in SHAPES:
        for path in leaf_paths(base):
            for value in SHAPE_VALUES if path else []:
                yield method, template.replace("{self}", own_id), replaced(base, path, value), {}
    for _, service, route, method, schemas in routes:
        rng = random.Random(f"{service.name} {method} {route.path}")
        template = service.prefix + route.path
        headers: dict[str, str] = {}
        spec = service.microversions
        if spec is not None:
            version = spec.max_version if rng.random() < 0.5 else spec.min_version
            headers["OpenStack-API-Version"] = f"{spec.service_type} {version}"
        if method == "PATCH" and service.name == "image":
            headers["Content-Type"] = "application/openstack-images-v2.1-json-patch"
        real = ids.real_path(template)
        if template not in fuzzed_paths and PLACEHOLDER.search(template):
            fuzzed_paths.add(template)  # once per path, whichever method comes first
            for bad in rng.sample(PATH_IDS, 3):
                yield method, PLACEHOLDER.sub(bad, template), _NO_BODY, headers
        if method in ("GET", "HEAD"):
            for query in rng.sample(QUERIES, QUERY_CASES):
                yield method, f"{real or PLACEHOLDER.sub('x', template)}?{query}", _NO_BODY, headers
            continue
        if method == "DELETE":
            continue  # the ids above; deleting the real ones would end the fuzz early
        url = real or PLACEHOLDER.sub("x", template)
        for body in route_bodies(service, route.path, rng, schemas, attr_maps):
            yield method, url, body, headers


_NO_BODY = object()


def run_fuzz(api: Any) -> list[str]:
    failures: list[str] = []
    count = 0
    for method, url, body, headers in cases(api):
        kwargs: dict[str, Any] = {"headers": headers}
        if body is not _NO_BODY:
            kwargs["content"] = json.dumps(body).encode().replace(NOT_UTF8.encode(), b"\xff\xfe")
            kwargs["headers"] = {"Content-Type": "application/json", **headers}
        r = api.request(method, url, **kwargs)
        count += 1
        if r.status_code >= 500:
            shown = "" if body is _NO_BODY else json.dumps(body)[:200]
            failures.append(f"{r.status_code} {method} {url[:200]} {shown} -> {r.text[:300]}")
    assert count > 1000, count  # every service's table was walked
    return failures


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def fuzz_api(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Any]:
    if request.param == "sqlite":
        yield from make_api(tmp_path / "data")
        return
    url = create_database(request.param, tmp_path / "db")
    try:
        yield from make_api(tmp_path / "data", database_url=url)
    finally:
        drop_database(url)
        shutil.rmtree(tmp_path / "data", ignore_errors=True)


def test_no_route_answers_5xx_to_malformed_input(fuzz_api):
    failures = run_fuzz(fuzz_api)
    assert not failures, f"{len(failures)} 5xx answers:\n" + "\n".join(failures[:60])


# ------------------------------------------------------------------ list extremes
HUGE, NEGATIVE = "9" * 23, "-" + "9" * 23
# Paging and filter values past every integer type, negative, repeated, and tag lists at
# and past the filter bound (settings.http.max_filter_values): each on every list.
TAGS_1000 = ",".join(f"t{i}" for i in range(1000))
LIST_EXTREMES = [
    f"limit={HUGE}", f"limit={2**63}", f"limit={NEGATIVE}", "limit=0", f"marker={HUGE}",
    f"marker={NEGATIVE}", f"limit=1&marker={HUGE}", f"limit={HUGE}&marker={NEGATIVE}",
    f"limit={HUGE}&page_reverse=true&marker=6f1c5b3a-9d2e-4c8b-a1f0-3e7d2c9b8a41",
    f"tags={TAGS_1000}", f"tags-any={TAGS_1000}", f"not-tags={TAGS_1000}",
    f"not-tags-any={TAGS_1000}", f"tags={TAGS_1000},t1000", "tags=" + ",".join(["t"] * 1000),
    "&".join(["id=x"] * 300), "&".join(f"name=n{i}" for i in range(300)),
    f"id={HUGE}", f"project_id={HUGE}", f"host={HUGE}", f"changes-since={HUGE}",
]


def list_extreme_cases(api: Any) -> Iterator[tuple[str, dict[str, str]]]:
    """(url, headers) for every GET route with every extreme, and for every network list
    each of its filters at a huge and a negative integer."""
    ids = Ids(api)
    filters = {name.replace("_", "-"): [k for k, a in attrs.items() if getattr(a, "filter", False)]
               for name, attrs in network_attribute_maps().items()}
    for service in api.runtime.services.values():
        spec = service.microversions
        headers = {"OpenStack-API-Version": f"{spec.service_type} {spec.max_version}"} if spec else {}
        for route in service.routes:
            if "GET" not in route.methods:
                continue
            url = ids.real_path(service.prefix + route.path)
            if url is None:
                continue
            for query in LIST_EXTREMES:
                yield f"{url}?{query}", headers
            collection = route.path.rstrip("/").rsplit("/", 1)[-1]
            if service.name == "network" and "{" not in collection:
                for key in filters.get(collection.replace("_", "-"), []):
                    for value in (HUGE, NEGATIVE):
                        yield f"{url}?{quote(key)}={value}", headers


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_no_list_answers_5xx_to_paging_and_filter_extremes(backend, tmp_path):
    url = None if backend == "sqlite" else create_database(backend, tmp_path / "db")
    try:
        api = make_api(tmp_path / "data", **({"database_url": url} if url else {}))
        client = next(api)
        failures = []
        for target, headers in list_extreme_cases(client):
            r = client.get(target, headers=headers)
            if r.status_code >= 500:
                failures.append(f"{r.status_code} GET {target[:160]} -> {r.text[:200]}")
        api.close()
    finally:
        if url:
            drop_database(url)
    assert not failures, f"{len(failures)} 5xx answers:\n" + "\n".join(failures[:60])
