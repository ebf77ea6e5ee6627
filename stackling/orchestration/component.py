"""The orchestration service (Heat v1) as a stackling component: routes, Heat's
secure-RBAC policy defaults, the catalog entry and the stack-action workers."""

from __future__ import annotations

from typing import Any

from stackling.observability import metrics
from stackling.orchestration import api, limits, worker
from stackling.runtime import CatalogEntry, Component

READER = "rule:context_is_admin or rule:project_reader_api"
MEMBER = "rule:context_is_admin or rule:project_member_api"
ADMIN = "rule:context_is_admin"

POLICIES = {
    **{f"stacks:{a}": READER for a in (
        "index", "show", "lookup", "template", "environment", "files", "list_outputs",
        "show_output", "list_template_versions", "list_template_functions", "preview")},
    # heat/policies/stacks.py: validating a template and previewing an update are member
    # actions (SYSTEM_ADMIN_OR_PROJECT_MEMBER); previewing a new stack is a reader's
    **{f"stacks:{a}": MEMBER for a in ("create", "update", "update_patch", "delete",
                                        "validate_template", "preview_update",
                                        "preview_update_patch")},
    "stacks:global_index": ADMIN,
    **{f"actions:{a}": MEMBER for a in ("action", "suspend", "resume", "check",
                                         "cancel_update", "cancel_without_rollback")},
    "resource:index": READER,
    "resource:show": READER,
    "resource:metadata": READER,
    "resource:mark_unhealthy": MEMBER,
    "resource:signal": MEMBER,
    "events:index": READER,
    "events:show": READER,
    "resource_types:index": READER,
    "resource_types:show": READER,
    "build_info:build_info": READER,
    "resource_types:template": READER,
    "service:index": ADMIN,  # heat/policies/service.py: context_is_admin
    "stacks:export": MEMBER,
    "stacks:abandon": MEMBER,
    "stacks:snapshot": MEMBER,
    "stacks:restore_snapshot": MEMBER,
    "stacks:delete_snapshot": MEMBER,
    "stacks:show_snapshot": READER,
    "stacks:list_snapshots": READER,
    # heat/policies/software_configs.py and software_deployments.py
    "software_configs:global_index": ADMIN,
    **{f"software_configs:{a}": READER for a in ("index", "show")},
    **{f"software_configs:{a}": MEMBER for a in ("create", "delete")},
    **{f"software_deployments:{a}": READER for a in ("index", "show", "metadata")},
    **{f"software_deployments:{a}": MEMBER for a in ("create", "update", "delete")},
}


def _start(runtime: Any) -> None:
    limits.configure(runtime.settings.orchestration)
    w = worker.StackWorker(runtime, threads=2)
    runtime.state["orchestration.worker"] = w
    w.start()
    metrics.PENDING_WORK["stack_actions"] = worker.pending_count


def _stop(runtime: Any) -> None:
    w = runtime.state.pop("orchestration.worker", None)
    if w is not None:
        w.stop()


COMPONENT = Component(
    name="orchestration",
    build=api.build,
    policies=POLICIES,
    catalog=CatalogEntry(type="orchestration", name="heat",
                         path="/orchestration/v1/%(project_id)s"),
    start=_start,
    stop=_stop,
)
