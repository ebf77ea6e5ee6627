"""/flavors (+ os-extra_specs) and /os-keypairs."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import BadRequest, NotFound
from stackling.common.http import ApiRequest
from stackling.common.listing import parse_list_params
from stackling.compute import extra_spec_rules, schemas, views
from stackling.compute import flavors as flavors_logic
from stackling.compute import keypairs as keypairs_logic
from stackling.compute import quotas as compute_quotas
from stackling.compute.api.common import (
    allowed,
    authorize,
    body,
    known_query,
    links,
    since,
    takes_query,
    version,
)
from stackling.compute.models import KeyPair


# ------------------------------------------------------------------ flavors
def _page(rq: ApiRequest, render: Any) -> Any:
    sortable = ("flavorid", "name", "memory_mb", "vcpus", "root_gb", "id", "created_at",
                "swap", "ephemeral_gb", "rxtx_factor")
    if version(rq).matches("2.102"):  # rxtx_factor is gone
        sortable = sortable[:-1]
    params = parse_list_params(rq.query, filterable=None, sortable=sortable)
    filters = {k: v[-1] for k, v in params.filters.items()}
    if not version(rq).matches("2.102"):
        filters.pop("name", None)  # a regular expression over names from 2.102
    page = flavors_logic.list_flavors(rq.db, rq.ctx, filters, params)
    items = [render(links(rq), f, version(rq)) for f in page.rows]
    out: dict[str, Any] = {"flavors": items}
    if params.limit and len(items) == params.limit:
        suffix = "/detail" if rq.request.url.path.endswith("/detail") else ""
        out["flavors_links"] = [{"rel": "next", "href": f"{links(rq).versioned}/flavors"
                                 f"{suffix}?limit={params.limit}&marker={items[-1]['id']}"}]
    return out


# The query parameters Nova's schemas name (others are a 400 from 2.75: known_query).
FLAVOR_QUERY = frozenset({"limit", "marker", "is_public", "minRam", "minDisk", "sort_key", "sort_dir"})
KEYPAIR_QUERY = frozenset({"user_id", "limit", "marker"})


def _flavor_query(rq: ApiRequest) -> frozenset[str]:
    return FLAVOR_QUERY | {"name"} if version(rq).matches("2.102") else FLAVOR_QUERY


@takes_query(*FLAVOR_QUERY, "name")
def flavor_index(rq: ApiRequest) -> Any:
    known_query(rq, _flavor_query(rq))
    return _page(rq, views.flavor_brief)


def _detail_view(rq: ApiRequest) -> Any:
    specs = allowed(rq, "os-flavor-extra-specs:index")
    return lambda lk, f, v: views.flavor_detail(lk, f, v, show_extra_specs=specs)


@takes_query(*FLAVOR_QUERY, "name")
def flavor_detail_list(rq: ApiRequest) -> Any:
    known_query(rq, _flavor_query(rq))
    return _page(rq, _detail_view(rq))


def flavor_show(rq: ApiRequest) -> Any:
    flavor = flavors_logic.get_flavor(rq.db, rq.ctx, rq.path_params["flavor_id"])
    return {"flavor": _detail_view(rq)(links(rq), flavor, version(rq))}


def flavor_create(rq: ApiRequest) -> Any:
    authorize(rq, "os-flavor-manage:create")
    data = body(rq, schemas.FLAVOR_CREATES, versioned=True)["flavor"]
    flavor = flavors_logic.create_flavor(rq.db, rq.ctx, data)
    return {"flavor": _detail_view(rq)(links(rq), flavor, version(rq))}


def flavor_update(rq: ApiRequest) -> Any:
    since(rq, "2.55")
    authorize(rq, "os-flavor-manage:update")
    data = body(rq, schemas.FLAVOR_UPDATE)["flavor"]
    flavor = flavors_logic.set_description(rq.db, rq.ctx, rq.path_params["flavor_id"],
                                           data["description"])
    return {"flavor": _detail_view(rq)(links(rq), flavor, version(rq))}


def flavor_delete(rq: ApiRequest) -> Any:
    authorize(rq, "os-flavor-manage:delete")
    flavors_logic.delete_flavor(rq.db, rq.ctx, rq.path_params["flavor_id"])
    return 202, None


def extra_specs_index(rq: ApiRequest) -> Any:
    authorize(rq, "os-flavor-extra-specs:index")
    flavor = flavors_logic.get_flavor(rq.db, rq.ctx, rq.path_params["flavor_id"])
    return {"extra_specs": dict(flavor.extra_specs or {})}


def _check_known_specs(rq: ApiRequest, specs: dict[str, Any]) -> None:
    """2.86: the extra specs Nova knows are validated (numbers and booleans as text)."""
    if not version(rq).matches("2.86"):
        return
    for name, value in specs.items():
        found = extra_spec_rules.problem(name, value if isinstance(value, str) else str(value))
        if found:
            raise BadRequest(found)


def extra_specs_create(rq: ApiRequest) -> Any:
    authorize(rq, "os-flavor-extra-specs:create")
    data = body(rq, schemas.EXTRA_SPECS)["extra_specs"]
    _check_known_specs(rq, data)
    specs = flavors_logic.set_extra_specs(rq.db, rq.ctx, rq.path_params["flavor_id"], data)
    return {"extra_specs": {k: specs[k] for k in data}}


def extra_spec_show(rq: ApiRequest) -> Any:
    authorize(rq, "os-flavor-extra-specs:show")
    flavor = flavors_logic.get_flavor(rq.db, rq.ctx, rq.path_params["flavor_id"])
    key = rq.path_params["key"]
    if key not in (flavor.extra_specs or {}):
        raise NotFound(f"Flavor {flavor.flavorid} has no extra specs with key {key}.")
    return {key: flavor.extra_specs[key]}


def extra_spec_update(rq: ApiRequest) -> Any:
    authorize(rq, "os-flavor-extra-specs:update")
    data = rq.json()
    key = rq.path_params["key"]
    if not isinstance(data, dict) or len(data) != 1 or key not in data:
        raise BadRequest("Request body and URI mismatch")
    _check_known_specs(rq, data)
    flavors_logic.set_extra_specs(rq.db, rq.ctx, rq.path_params["flavor_id"], data)
    return {key: str(data[key])}


def extra_spec_delete(rq: ApiRequest) -> Any:
    authorize(rq, "os-flavor-extra-specs:delete")
    flavors_logic.delete_extra_spec(rq.db, rq.ctx, rq.path_params["flavor_id"],
                                    rq.path_params["key"])
    return 200, None  # Nova's extra-spec delete has no explicit code: 200


# ------------------------------------------------------------------ flavor access
def flavor_access_index(rq: ApiRequest) -> Any:
    authorize(rq, "os-flavor-access")
    return {"flavor_access": flavors_logic.list_access(rq.db, rq.ctx,
                                                       rq.path_params["flavor_id"])}


def flavor_action(rq: ApiRequest) -> Any:
    """addTenantAccess / removeTenantAccess (the only actions on a flavor)."""
    from stackling.identity import interface as identity

    data = rq.json(malformed="Malformed request body")
    action = next(iter(data), None) if isinstance(data, dict) and len(data) == 1 else None
    if action not in ("addTenantAccess", "removeTenantAccess"):
        raise BadRequest("There is no such action: %s" % (action or ""))
    policy = "add_tenant_access" if action == "addTenantAccess" else "remove_tenant_access"
    authorize(rq, f"os-flavor-access:{policy}")
    tenant = body(rq, schemas.FLAVOR_ACCESS_ACTIONS[action])[action]["tenant"]
    if not identity.project_exists(rq.db, tenant):
        raise BadRequest(f"Project ID {tenant} is not a valid project.")
    flavorid = rq.path_params["flavor_id"]
    if action == "addTenantAccess":
        rows = flavors_logic.add_access(rq.db, rq.ctx, flavorid, tenant,
                                        refuse_public=version(rq).matches("2.7"))
    else:
        rows = flavors_logic.remove_access(rq.db, rq.ctx, flavorid, tenant)
    return {"flavor_access": rows}


# ------------------------------------------------------------------ keypairs
def _keypair_user(rq: ApiRequest, requested: str | None = None) -> str:
    user_id = requested or rq.query.get("user_id") if version(rq).matches("2.10") else None
    user_id = user_id or rq.ctx.user_id or ""
    authorize(rq, "os-keypairs:" + ("index" if rq.method == "GET" else "create"),
              {"user_id": user_id})
    return user_id


def _keypair_view(rq: ApiRequest, kp: KeyPair, *, full: bool) -> dict[str, Any]:
    view: dict[str, Any] = {"name": kp.name, "public_key": kp.public_key,
                            "fingerprint": kp.fingerprint}
    if version(rq).matches("2.2"):
        view["type"] = kp.type
    if full:
        view.update(user_id=kp.user_id, id=kp.id, created_at=views.naive(kp.created_at),
                    deleted=False, deleted_at=None, updated_at=None)
    return view


@takes_query(*KEYPAIR_QUERY)
def keypair_index(rq: ApiRequest) -> Any:
    known_query(rq, KEYPAIR_QUERY)
    user_id = _keypair_user(rq)
    params = parse_list_params(rq.query, filterable=None)
    if not version(rq).matches("2.35"):
        params.limit, params.marker = None, None
    page = keypairs_logic.list_keypairs(rq.db, user_id, params)
    items = [{"keypair": _keypair_view(rq, kp, full=False)} for kp in page.rows]
    out: dict[str, Any] = {"keypairs": items}
    if params.limit and len(items) == params.limit:
        out["keypairs_links"] = [{"rel": "next", "href": f"{links(rq).versioned}/os-keypairs?"
                                  f"limit={params.limit}&marker={page.rows[-1].name}"}]
    return out


def keypair_create(rq: ApiRequest) -> Any:
    data = body(rq, schemas.KEYPAIR_CREATE, versioned=True)["keypair"]
    user_id = _keypair_user(rq, data.get("user_id"))
    compute_quotas.check_key_pairs(rq.db, rq.ctx.project_id or "", user_id)
    kp, private = keypairs_logic.create_keypair(rq.db, user_id, data["name"],
                                                data.get("public_key"),
                                                data.get("type", "ssh"))
    view = {"name": kp.name, "public_key": kp.public_key, "fingerprint": kp.fingerprint,
            "user_id": kp.user_id}
    if private is not None:
        view["private_key"] = private
    if version(rq).matches("2.2"):
        view["type"] = kp.type
        return 201, {"keypair": view}
    return {"keypair": view}


@takes_query("user_id")
def keypair_show(rq: ApiRequest) -> Any:
    known_query(rq, {"user_id"})
    user_id = _keypair_user(rq)
    kp = keypairs_logic.get_keypair(rq.db, user_id, rq.path_params["name"])
    return {"keypair": _keypair_view(rq, kp, full=True)}


def keypair_delete(rq: ApiRequest) -> Any:
    known_query(rq, {"user_id"})
    user_id = (rq.query.get("user_id") if version(rq).matches("2.10") else None) or \
        rq.ctx.user_id or ""
    authorize(rq, "os-keypairs:delete", {"user_id": user_id})
    keypairs_logic.delete_keypair(rq.db, user_id, rq.path_params["name"])
    return (204, None) if version(rq).matches("2.2") else (202, None)


def add_routes(s: Any) -> None:
    s.add("/v2.1/flavors", get=flavor_index, post=flavor_create)
    s.add("/v2.1/flavors/detail", get=flavor_detail_list)
    s.add("/v2.1/flavors/{flavor_id}", get=flavor_show, put=flavor_update, delete=flavor_delete)
    s.add("/v2.1/flavors/{flavor_id}/os-flavor-access", get=flavor_access_index)
    s.add("/v2.1/flavors/{flavor_id}/action", post=flavor_action)
    s.add("/v2.1/flavors/{flavor_id}/os-extra_specs", get=extra_specs_index,
          post=extra_specs_create)
    s.add("/v2.1/flavors/{flavor_id}/os-extra_specs/{key}", get=extra_spec_show,
          put=extra_spec_update, delete=extra_spec_delete)
    s.add("/v2.1/os-keypairs", get=keypair_index, post=keypair_create)
    s.add("/v2.1/os-keypairs/{name}", get=keypair_show, delete=keypair_delete)
