"""`/v2.0/service-providers` (`service-type`), `/v2.0/flavors[/{id}]`,
`/v2.0/flavors/{id}/service_profiles[/{profile_id}]`, `/v2.0/flavors/{id}/next_providers`
and `/v2.0/service_profiles[/{id}]` (`flavors`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.common.listing import select_fields
from stackling.network import errors
from stackling.network.api import common
from stackling.network.flavors import flavors


def list_service_providers(rq: ApiRequest) -> Any:
    filters: dict[str, list[str]] = {}
    for key in ("service_type", "name", "default"):
        values = rq.query.getlist(key)
        if values:
            filters[key] = values
    items = flavors.list_service_providers(rq.db, rq.ctx, filters)
    return {"service_providers": [select_fields(i, common.fields_of(rq)) for i in items]}


def list_flavors(rq: ApiRequest) -> Any:
    params = common.list_params(rq, flavors.FLAVOR_LISTING)
    page = flavors.list_flavors(rq.db, rq.ctx, params)
    return common.list_body(rq, "flavors", flavors.flavor_views(rq.db, list(page.rows)),
                            params, page)


def show_flavor(rq: ApiRequest) -> Any:
    flavor = flavors.get_flavor(rq.db, rq.ctx, rq.path_params["network_flavor_id"])
    return common.show_body(rq, "flavor", flavors.flavor_views(rq.db, [flavor])[0])


def create_flavor(rq: ApiRequest) -> Any:
    return common.create(rq, "flavor", "flavors", flavors.FLAVOR_ATTRS,
                         lambda attrs: flavors.create_flavor(rq.db, rq.ctx, attrs),
                         lambda objs: flavors.flavor_views(rq.db, objs))


def update_flavor(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "flavor", flavors.FLAVOR_ATTRS)
    flavor = flavors.update_flavor(rq.db, rq.ctx, rq.path_params["network_flavor_id"], attrs)
    return {"flavor": flavors.flavor_views(rq.db, [flavor])[0]}


def delete_flavor(rq: ApiRequest) -> Any:
    flavors.delete_flavor(rq.db, rq.ctx, rq.path_params["network_flavor_id"])


def associate(rq: ApiRequest) -> Any:
    body = rq.json(bad_request=errors.BadRequest, malformed="Malformed request body")
    sp_id = flavors.associate(rq.db, rq.ctx, rq.path_params["network_flavor_id"], body)
    return 201, {"service_profile": {"id": sp_id}}


def disassociate(rq: ApiRequest) -> Any:
    flavors.disassociate(rq.db, rq.ctx, rq.path_params["network_flavor_id"],
                         rq.path_params["service_profile_id"])


def next_providers(rq: ApiRequest) -> Any:
    items = flavors.next_providers(rq.db, rq.ctx, rq.path_params["network_flavor_id"])
    return {"next_providers": [select_fields(i, common.fields_of(rq)) for i in items]}


def list_profiles(rq: ApiRequest) -> Any:
    params = common.list_params(rq, flavors.PROFILE_LISTING)
    page = flavors.list_profiles(rq.db, rq.ctx, params)
    return common.list_body(rq, "service_profiles",
                            [flavors.profile_view(x) for x in page.rows], params, page)


def show_profile(rq: ApiRequest) -> Any:
    profile = flavors.get_profile(rq.db, rq.ctx, rq.path_params["service_profile_id"])
    return common.show_body(rq, "service_profile", flavors.profile_view(profile))


def create_profile(rq: ApiRequest) -> Any:
    return common.create(rq, "service_profile", "service_profiles", flavors.PROFILE_ATTRS,
                         lambda attrs: flavors.create_profile(rq.db, rq.ctx, attrs),
                         lambda objs: [flavors.profile_view(x) for x in objs])


def update_profile(rq: ApiRequest) -> Any:
    attrs = common.update_attrs(rq, "service_profile", flavors.PROFILE_ATTRS)
    profile = flavors.update_profile(rq.db, rq.ctx, rq.path_params["service_profile_id"],
                                     attrs)
    return {"service_profile": flavors.profile_view(profile)}


def delete_profile(rq: ApiRequest) -> Any:
    flavors.delete_profile(rq.db, rq.ctx, rq.path_params["service_profile_id"])


def register(s: Service) -> None:
    # (served as /v2.0/service-providers too: the collection segment is rewritten)
    s.add("/v2.0/service_providers", get=list_service_providers)
    s.add("/v2.0/flavors", get=list_flavors, post=create_flavor)
    s.add("/v2.0/flavors/{network_flavor_id}", get=show_flavor, put=update_flavor,
          delete=delete_flavor)
    s.add("/v2.0/flavors/{network_flavor_id}/service_profiles", post=associate)
    s.add("/v2.0/flavors/{network_flavor_id}/service_profiles/{service_profile_id}",
          delete=disassociate)
    s.add("/v2.0/flavors/{network_flavor_id}/next_providers", get=next_providers)
    s.add("/v2.0/service_profiles", get=list_profiles, post=create_profile)
    s.add("/v2.0/service_profiles/{service_profile_id}", get=show_profile,
          put=update_profile, delete=delete_profile)
