"""`GET|DELETE /v2.0/auto-allocated-topology/{project_id}` (`?fields=dry-run`)."""

from __future__ import annotations

from typing import Any

from stackling.common.http import ApiRequest, Service
from stackling.network import errors
from stackling.network.api import common
from stackling.network.extensions import EXTENSIONS, Extension
from stackling.network.l3 import auto_allocate


def show_topology(rq: ApiRequest) -> Any:
    fields = common.fields_of(rq)
    dry_run = auto_allocate.DRY_RUN in fields
    if fields and not dry_run:
        raise errors.BadResourceRequest("Unrecognized field", "auto_allocate")
    topology = auto_allocate.get_topology(rq.db, rq.ctx, _project_id(rq), dry_run=dry_run)
    return {"auto_allocated_topology": topology}


def delete_topology(rq: ApiRequest) -> Any:
    auto_allocate.delete_topology(rq.db, rq.ctx, _project_id(rq))


def _project_id(rq: ApiRequest) -> str:
    """Project ids are at most 255 characters (Neutron's column): longer is a 400."""
    project_id = rq.path_params["project_id"]
    if len(project_id) > 255:
        raise errors.BadRequest(f"Invalid input for project_id. Reason: '{project_id[:64]}...' "
                                "exceeds maximum length of 255.")
    return project_id


def register(s: Service) -> None:
    s.add("/v2.0/auto_allocated_topology/{project_id}", get=show_topology,
          delete=delete_topology)


EXTENSIONS.append(
    Extension("auto-allocated-topology", "Auto Allocated Topology Services",
              "Auto Allocated Topology Services.", "2016-01-01T00:00:00-00:00"))
