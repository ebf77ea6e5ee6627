"""The compute route table: every path below /compute, in one place."""

from __future__ import annotations

import re
from typing import Any

from stackling.common.http import Service
from stackling.compute import microversions
from stackling.compute.api import admin, flavors, proxies, quotas, server_actions, servers, versions

# `/v2.1/{project_id}/...` (optional since 2.18) is served as `/v2.1/...`.
_PROJECT_IN_PATH = re.compile(r"^/(v2(?:\.1)?)/[0-9a-f]{32}(?=/|$)")


def _rewrite(path: str) -> str:
    path = _PROJECT_IN_PATH.sub(r"/\1", path)
    if path.startswith("/v2/") and path != "/v2/":
        path = "/v2.1/" + path[4:]  # the legacy v2 endpoint serves the same API
    return path


def build(runtime: Any) -> Service:
    s = Service(name="compute", prefix="/compute", family="compute",
                microversions=microversions.SPEC, rewrite_path=_rewrite)
    s.add("/", public=True, get=versions.root)
    # Upstream redirects these to the trailing-slash form; strict clients want the
    # document itself from the catalog URL (client-requirements), so both answer 200.
    s.add("/v2", public=True, get=versions.v20)
    s.add("/v2.1", public=True, get=versions.v21)
    s.add("/v2/", public=True, get=versions.v20)
    s.add("/v2.1/", public=True, get=versions.v21)
    servers.add_routes(s)
    server_actions.add_routes(s)
    flavors.add_routes(s)
    admin.add_routes(s)
    proxies.add_routes(s)
    from stackling.compute.api import usage

    usage.add_routes(s)
    quotas.add_routes(s)
    from stackling.compute.api import server_groups

    server_groups.add_routes(s)
    from stackling.compute.api import admin_extras, images, server_password, server_shares

    images.add_routes(s)
    admin_extras.add_routes(s)
    server_password.add_routes(s)
    server_shares.add_routes(s)
    from stackling.compute.api import volume_attachments

    volume_attachments.add_routes(s)
    _strict_queries(s)
    return s


# The proxy APIs are gone from 2.36: their 404 answers whatever the query.
_REMOVED_BEFORE_2_102 = ("stackling.compute.api.images", "stackling.compute.api.proxies")


def _strict_queries(s: Service) -> None:
    """2.102: every GET but version discovery refuses a query parameter Nova's schema does
    not name (common.takes_query declares them per handler)."""
    from stackling.compute.api.common import strict_query

    for route in s.routes:
        handler = route.methods.get("GET")
        if handler is None or route.is_public("GET") \
                or handler.__module__ in _REMOVED_BEFORE_2_102:
            continue
        route.methods["GET"] = strict_query(handler)
