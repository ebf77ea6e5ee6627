"""Heat's JSON views of stacks, resources and events."""

from __future__ import annotations

from typing import Any

from stackling.orchestration.models import Event, Resource, Stack
from stackling.orchestration.template import description_of


def ts(value: Any) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value is not None else None


def stack_url(base: str, stack: Stack) -> str:
    return f"{base}/v1/{stack.project_id}/stacks/{stack.name}/{stack.id}"


def stack_summary(base: str, stack: Stack) -> dict[str, Any]:
    return {
        "id": stack.id,
        "links": [{"href": stack_url(base, stack), "rel": "self"}],
        "stack_name": stack.name,
        "description": description_of(stack.template or {}),
        "stack_status": f"{stack.action}_{stack.status}",
        "stack_status_reason": stack.status_reason,
        "creation_time": ts(stack.created_at),
        "updated_time": ts(stack.updated_at),
        "deletion_time": ts(stack.deleted_at),
        "stack_owner": (stack.context or {}).get("user_name"),
        "parent": stack.parent_id,
        "stack_user_project_id": stack.project_id,
        "tags": list(stack.tags) if stack.tags else None,
    }


def stack_detail(base: str, stack: Stack, parameters: dict[str, str],
                 outputs: list[dict[str, Any]] | None) -> dict[str, Any]:
    view = stack_summary(base, stack)
    view.update({
        "disable_rollback": stack.disable_rollback,
        "timeout_mins": stack.timeout_mins,
        "parameters": parameters,
        "template_description": view["description"],
        "notification_topics": [],
        "capabilities": [],
    })
    if outputs is not None:
        view["outputs"] = outputs
    return view


def resource_view(base: str, stack: Stack, row: Resource, required_by: list[str],
                  nested: Stack | None = None, parent_resource: str | None = None
                  ) -> dict[str, Any]:
    url = stack_url(base, stack)
    links = [{"href": f"{url}/resources/{row.name}", "rel": "self"},
             {"href": url, "rel": "stack"}]
    if nested is not None:  # clients take the nested stack's name and id from it
        links.append({"href": stack_url(base, nested), "rel": "nested"})
    view = {
        "resource_name": row.name,
        "logical_resource_id": row.name,
        "physical_resource_id": row.physical_resource_id or "",
        "resource_type": row.type,
        "resource_status": f"{row.action}_{row.status}",
        "resource_status_reason": row.status_reason,
        "creation_time": ts(row.created_at),
        "updated_time": ts(row.updated_at or row.created_at),
        "required_by": required_by,
        "links": links,
    }
    if parent_resource is not None:
        view["parent_resource"] = parent_resource
    return view


def event_view(base: str, stack: Stack, event: Event, detail: bool = False) -> dict[str, Any]:
    url = stack_url(base, stack)
    res_url = f"{url}/resources/{event.resource_name}"
    view = {
        "id": event.id,
        "event_time": ts(event.created_at),
        "resource_name": event.resource_name,
        "logical_resource_id": event.resource_name,
        "physical_resource_id": event.physical_resource_id or "",
        "resource_status": f"{event.action}_{event.status}",
        "resource_status_reason": event.status_reason,
        "links": [{"href": f"{res_url}/events/{event.id}", "rel": "self"},
                  {"href": res_url, "rel": "resource"},
                  {"href": url, "rel": "stack"}],
    }
    if detail:
        view["resource_type"] = event.resource_type
        view["resource_properties"] = event.properties or {}
    return view
