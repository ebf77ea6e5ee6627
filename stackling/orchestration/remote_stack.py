"""OS::Heat::Stack: a stack made through the orchestration service of a region, as
upstream's remote stack. The only region here is this cloud's own (`context.region_name`
equal to it, or absent): the remote stack is a top-level stack of the same project,
made, updated, deleted, suspended, resumed, checked and snapshotted through the stack
logic the API uses. The resource runs each of those actions itself (a driven action, as
a nested stack's): in its own step when nothing waits, else polled in later steps.
Another region is upstream's validation failure (a 400 when the region is known at
request time, else CREATE_FAILED with the same message)."""

from __future__ import annotations

from typing import Any

from stackling.common.errors import ApiError
from stackling.orchestration.errors import ResourceFailure, StackValidationFailed
from stackling.orchestration.nested_stacks import check_driven, continue_driven
from stackling.orchestration.properties import UNKNOWN, Property, contains_unknown
from stackling.orchestration.resources.base import Resource, register


@register("OS::Heat::Stack")
class RemoteStack(Resource):
    """A Resource representing a stack made through a region's orchestration API."""

    properties_schema = {
        "context": Property("map", "Context for this stack.", update_allowed=True, schema={
            "region_name": Property("string", "Region name in which this stack will be "
                                    "created."),
            "credential_secret_id": Property("string", "A Barbican secret ID with a "
                                             "credential for a remote cloud.",
                                             update_allowed=True),
            "ca_cert": Property("string", "CA Cert for SSL.", update_allowed=True),
            "insecure": Property("boolean", "If set, then the server's certificate will "
                                 "not be verified.", default=False, update_allowed=True)}),
        "template": Property("string", "Template that specifies the stack to be created as "
                             "a resource.", required=True, update_allowed=True),
        "timeout": Property("integer", "Number of minutes to wait for this stack creation.",
                            update_allowed=True),
        "parameters": Property("map", "Set of parameters passed to this stack.", default={},
                               update_allowed=True),
    }
    attributes_schema = {"stack_name": "Name of the stack.",
                         "outputs": "A dict of key-value pairs output from the stack."}

    # --- where
    def _context(self) -> dict[str, Any]:
        value = self.properties.get("context")
        return value if isinstance(value, dict) else {}

    def _here(self) -> str:
        """This cloud's region (the stack owner's context's)."""
        settings = getattr(self.runtime, "settings", None)
        return settings.identity.region if settings is not None else "RegionOne"

    def _region(self) -> Any:
        return self._context().get("region_name") or self._here()

    def _location(self) -> str:
        if self._context().get("credential_secret_id"):
            return "remote cloud"
        return f'region "{self._region()}"'

    def _check_reachable(self, exc: type[Exception]) -> None:
        """Upstream's failure to reach the region's endpoint, with its message."""
        if self._context().get("credential_secret_id"):
            raise exc('Cannot establish connection to Heat endpoint at remote cloud due to '
                      '"the key manager service (Barbican) is not available"')
        region = self._region()
        if region != self._here():
            raise exc(f'Cannot establish connection to Heat endpoint at region "{region}" '
                      f'due to "public endpoint for orchestration service in {region} '
                      f'region not found"')

    # --- what
    def _body(self) -> dict[str, Any]:
        """The create/update request for the remote stack (the parent's files; its
        environment's registry; these parameters), as upstream sends it."""
        from stackling.orchestration.template import parse_document

        stack = self.scope.stack
        env: dict[str, Any] = {}
        if (stack.environment or {}).get("resource_registry"):
            registry = {k: v for k, v in stack.environment["resource_registry"].items()
                        if k != "resources"}
            if registry:
                env["resource_registry"] = registry
        return {"template": parse_document(self.properties["template"]),
                "parameters": dict(self.properties.get("parameters") or {}),
                "files": dict(stack.files or {}), "environment": env,
                "timeout_mins": self.properties.get("timeout")}

    def validate(self) -> None:
        if contains_unknown(self.properties.get("context")):
            return
        self._check_reachable(StackValidationFailed)
        if self.properties.get("template") in (None, UNKNOWN) or contains_unknown(
                self.properties.get("parameters")):
            return
        from stackling.orchestration import stacks

        try:
            body = self._body()
            spec, _ = stacks.spec_from_body({k: v for k, v in body.items()
                                             if k != "parameters"})
            stacks.validate_spec(self.db, self.ctx, self.runtime, spec, stack_name="validate",
                                 stack_id="None", strict=False)
        except ApiError as err:
            raise StackValidationFailed(
                f"Failed validating stack template using Heat endpoint at "
                f'{self._location()} due to "ERROR: {err.text}"') from None

    # --- the remote stack
    def remote(self) -> Any:
        from stackling.orchestration.models import Stack

        if self.resource_id is None:
            return None
        stack = self.db.get(Stack, self.resource_id)
        if stack is None or stack.project_id != self.ctx.project_id:
            return None
        return stack

    def _live(self, action: str) -> Any:
        stack = self.remote()
        if stack is None or stack.deleted_at is not None:
            raise ResourceFailure(f"Cannot {action} {self.name}, resource not found")
        return stack

    def handle_create(self) -> Any:
        from stackling.orchestration import stacks

        self._check_reachable(ResourceFailure)
        body = {**self._body(), "stack_name": self.physical_resource_name(),
                "disable_rollback": True}
        stack = stacks.create_stack(self.db, self.ctx, self.runtime, body)
        self.set_resource_id(stack.id)
        return continue_driven(self, stack, "CREATE")

    def needs_replace(self, old_properties: dict[str, Any], changed: set[str]) -> bool:
        """Another region is another stack (upstream: `region_name` is not updatable)."""
        old = (old_properties.get("context") or {}).get("region_name")
        return "context" in changed and self._context().get("region_name") != old

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        from stackling.orchestration import stacks

        stack = self.remote()
        if stack is None or stack.deleted_at is not None:
            return self.handle_create()
        body = {**self._body(), "disable_rollback": self.scope.stack.disable_rollback}
        stacks.update_stack(self.db, self.ctx, self.runtime, stack, body, patch=False)
        return continue_driven(self, stack, "UPDATE")

    def handle_delete(self) -> Any:
        from stackling.orchestration import stacks

        stack = self.remote()
        if stack is None or stack.deleted_at is not None:
            return None
        stacks.delete_stack(self.db, self.ctx, stack)
        return continue_driven(self, stack, "DELETE")

    def _action(self, kind: str) -> Any:
        from stackling.orchestration import stacks

        stack = self._live(kind.lower())
        stacks.stack_action(self.db, self.ctx, stack, {kind.lower(): None})
        return continue_driven(self, stack, kind)

    def handle_suspend(self) -> Any:
        return self._action("SUSPEND")

    def handle_resume(self) -> Any:
        return self._action("RESUME")

    def handle_check(self) -> Any:
        return self._action("CHECK")

    def handle_snapshot(self) -> Any:
        """A snapshot of the remote stack too (its id kept in this resource's data)."""
        from stackling.orchestration import snapshots

        stack = self._live("snapshot")
        made = snapshots.create(self.db, self.ctx, stack, {})
        self.data_set("snapshot_id", made.id)
        return continue_driven(self, stack, "SNAPSHOT")

    def check_create_complete(self, token: Any) -> bool:
        return check_driven(self, token)

    check_update_complete = check_delete_complete = check_create_complete
    check_suspend_complete = check_resume_complete = check_create_complete
    check_check_complete = check_snapshot_complete = check_create_complete

    # --- attributes
    def attribute(self, name: str) -> Any:
        stack = self.remote()
        if stack is None:
            return None
        if name == "stack_name":
            return stack.name
        if name == "outputs":
            from stackling.orchestration import stacks

            return {o["output_key"]: o.get("output_value")
                    for o in stacks.outputs(self.db, self.runtime, stack)}
        return None

    def show(self) -> Any:
        stack = self.remote()
        if stack is None:
            return None
        return {"id": stack.id, "stack_name": stack.name,
                "stack_status": f"{stack.action}_{stack.status}",
                "stack_status_reason": stack.status_reason}
