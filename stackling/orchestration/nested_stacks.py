"""Resources backed by a nested stack: OS::Heat::ResourceGroup and template resources
(a type that names a template in `files`, directly or through the resource_registry).

The nested stack is a child `heat_stack` row (`parent_id`, `owner_resource`). Its action
runs inline, inside the parent resource's step (and savepoint): a nested create, update or
delete is atomic with the parent resource's status — a failure rolls the whole nested
action back, a crash loses none of it half-done.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import uuid
from typing import Any, ClassVar

from sqlalchemy import select

from stackling.common.db import utcnow
from stackling.common.errors import ApiError
from stackling.orchestration import limits
from stackling.orchestration.errors import ResourceFailure, StackValidationFailed
from stackling.orchestration.properties import UNKNOWN, Constraint, Property, contains_unknown
from stackling.orchestration.resources import register_template_resource
from stackling.orchestration.resources.base import Resource, register


def _engine() -> Any:
    from stackling.orchestration import engine

    return engine


class StackResource(Resource):
    dynamic_attributes: ClassVar[bool] = False

    # --- what a subclass provides
    def child_template(self) -> dict[str, Any]:
        raise NotImplementedError

    def child_parameters(self) -> dict[str, Any]:
        return {}

    def child_files(self) -> dict[str, Any]:
        return dict(self.scope.stack.files or {})

    def child_environment(self) -> dict[str, Any]:
        """The registry, its per-resource section narrowed as upstream's child
        environments: `resources: {<this resource>: {<nested name>: {hooks: ...}}}`
        becomes the nested stack's `resources: {<nested name>: {hooks: ...}}`."""
        env = self.scope.stack.environment or {}
        registry = dict(env.get("resource_registry") or {})
        per_resource = registry.pop("resources", None) or {}
        mine: dict[str, Any] = {}
        for pattern, entry in per_resource.items():
            if isinstance(entry, dict) and fnmatch.fnmatchcase(self.name, str(pattern)):
                mine.update({k: v for k, v in entry.items() if isinstance(v, dict)})
        if mine:
            registry["resources"] = mine
        return {"resource_registry": registry} if "resource_registry" in env else {}

    # --- the child stack
    def child(self) -> Any:
        from stackling.orchestration.models import Stack

        if self.resource_id is None:
            return None
        return self.db.get(Stack, self.resource_id)

    def child_runner(self) -> Any:
        child = self.child()
        return _engine().Runner(self.db, self.runtime, child) if child is not None else None

    def check_size(self) -> None:
        """Refuses, before the child template is built, what cannot fit the limits."""

    def _check_limits(self, template: dict[str, Any], child: Any = None) -> None:
        """Upstream's checks when a nested stack is made or updated: the parent's depth,
        and the tree's resources with the child's new ones (its old ones replaced)."""
        root, depth = limits.ancestry(self.db, self.scope.stack)
        if depth >= limits.MAX_NESTED_STACK_DEPTH:
            raise ResourceFailure(f"Request limit exceeded: {limits.depth_message()}")
        added = len(template.get("resources") or {})
        if child is not None:
            added -= limits.resource_count(self.db, [child.id])
        if added > 0 and limits.tree_resources(self.db, root) + added > \
                limits.MAX_RESOURCES_PER_STACK:
            raise ResourceFailure(f"Request limit exceeded: {limits.RESOURCES_EXCEEDED}")

    def _run(self, child: Any, kind: str, work: dict[str, Any] | None = None) -> Any:
        return drive_stack(self, child, kind, work)

    def handle_create(self) -> Any:
        return self._make("CREATE")

    def handle_adopt(self, resource_data: dict[str, Any] | None) -> Any:
        """The nested stack adopts its resources from the data's `resources`."""
        data = resource_data if isinstance(resource_data, dict) else {}
        return self._make("ADOPT", {"adopt": data.get("resources") or {}})

    def _make(self, kind: str, work: dict[str, Any] | None = None) -> Any:
        from stackling.orchestration.models import Stack

        parent = self.scope.stack
        self.check_size()
        template = self.child_template()
        self._check_limits(template)
        short = hashlib.sha256(self.row.uuid.encode()).hexdigest()[:12]
        child = Stack(id=str(uuid.uuid4()), name=f"{parent.name}-{self.name}-{short}",
                      live_name=None, project_id=parent.project_id, user_id=parent.user_id,
                      context=dict(parent.context or {}), parent_id=parent.id,
                      owner_resource=self.name, template=template,
                      environment=self.child_environment(), files=self.child_files(),
                      parameters=self.child_parameters(), tags=[], disable_rollback=True,
                      timeout_mins=None, generation=0, action="CREATE",
                      status="IN_PROGRESS", status_reason="", created_at=utcnow())
        self.db.add(child)
        self.db.flush()
        self.set_resource_id(child.id)
        return self._run(child, kind, work)

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        child = self.child()
        if child is None:
            return self.handle_create()
        engine = _engine()
        previous = engine.spec_of(child).to_dict()
        self.check_size()
        template = self.child_template()
        self._check_limits(template, child)
        child.template = template
        child.parameters = self.child_parameters()
        child.files = self.child_files()
        child.environment = self.child_environment()  # e.g. new hooks on its resources
        engine.purge_actions(self.db, child.id)  # one its driver gave up on
        return self._run(child, "UPDATE", {"previous": previous})

    def handle_delete(self) -> Any:
        child = self.child()
        if child is None or child.deleted_at is not None:
            return None
        _engine().purge_actions(self.db, child.id)
        return self._run(child, "DELETE")

    def _simple(self, kind: str) -> Any:
        child = self.child()
        if child is None:
            return None
        return self._run(child, kind)

    def handle_suspend(self) -> Any:
        return self._simple("SUSPEND")

    def handle_resume(self) -> Any:
        return self._simple("RESUME")

    def handle_check(self) -> Any:
        return self._simple("CHECK")

    def check_create_complete(self, token: Any) -> bool:
        return check_driven(self, token)

    check_update_complete = check_delete_complete = check_create_complete
    check_suspend_complete = check_resume_complete = check_create_complete
    check_check_complete = check_create_complete

    def member(self, name: str) -> Any:
        runner = self.child_runner()
        if runner is None:
            return None
        row = runner.current(name)
        return runner.plugin(row) if row is not None else None


@register("OS::Heat::ResourceGroup")
class ResourceGroup(StackResource):
    """Creates one or more identically configured nested resources."""

    properties_schema = {
        "count": Property("integer", "The number of resources to create.", default=1,
                          update_allowed=True, constraints=[Constraint("range", {"min": 0})]),
        "index_var": Property("string", "A variable replaced with the current index of the "
                              "resource in the group.", default="%index%",
                              constraints=[Constraint("length", {"min": 3})]),
        "resource_def": Property("map", "Resource definition for the resources in the group.",
                                 required=True, update_allowed=True, schema={
                                     "type": Property("string", required=True),
                                     "properties": Property("map", default={}),
                                     "metadata": Property("map", default={})}),
        "removal_policies": Property("list", "Policies for removal of resources on update.",
                                     default=[], update_allowed=True, schema={
                                         "resource_list": Property("list", default=[],
                                                                   schema=Property("any"))}),
        "removal_policies_mode": Property("string", "How to handle the removal_policies.",
                                          default="append", update_allowed=True,
                                          constraints=[Constraint("allowed_values",
                                                                  ["append", "update"])]),
    }
    attributes_schema = {
        "refs": "A list of resource IDs for the resources in the group.",
        "refs_map": "A map of resource names to IDs for the resources in the group.",
        "attributes": "A map of resource names to the specified attribute of each resource.",
        "removed_rsrc_list": "A list of removed resource names.",
    }
    dynamic_attributes = True  # resource.<n>[.<attr>]

    def check_size(self) -> None:
        if (self.properties.get("count") or 0) > limits.MAX_RESOURCES_PER_STACK:
            raise ResourceFailure(f"Request limit exceeded: {limits.RESOURCES_EXCEEDED}")

    def validate(self) -> None:
        rdef = self.properties.get("resource_def")
        if not rdef or rdef is UNKNOWN or contains_unknown(rdef.get("type")):
            return
        from stackling.orchestration.environment import resolve_type
        from stackling.orchestration.resources import resource_class

        resolved = resolve_type(self.scope.stack.environment or {}, rdef["type"])
        if resource_class(resolved, self.scope.stack.files) is None:
            from stackling.orchestration.errors import ResourceTypeNotFound

            raise ResourceTypeNotFound(type_name=resolved)

    def _names(self) -> list[str]:
        removed = set(self.data_get("removed", []))
        names, i = [], 0
        while len(names) < (self.properties.get("count") or 0):
            if str(i) not in removed:
                names.append(str(i))
            i += 1
        return names

    def child_template(self) -> dict[str, Any]:
        rdef = self.properties["resource_def"]
        index_var = self.properties.get("index_var") or "%index%"
        for policy in self.properties.get("removal_policies") or []:
            removed = set(self.data_get("removed", []))
            removed |= {str(r) for r in policy.get("resource_list") or []}
            self.data_set("removed", sorted(removed))
        resources = {}
        for name in self._names():
            snippet: dict[str, Any] = {"type": rdef["type"]}
            if rdef.get("properties"):
                snippet["properties"] = _replace(copy.deepcopy(rdef["properties"]),
                                                 index_var, name)
            if rdef.get("metadata"):
                snippet["metadata"] = _replace(copy.deepcopy(rdef["metadata"]), index_var,
                                               name)
            resources[name] = snippet
        return {"heat_template_version": "2015-04-30", "resources": resources}

    def _members(self) -> list[tuple[str, Any]]:
        runner = self.child_runner()
        if runner is None:
            return []
        rows = [r for r in runner.rows if r.role == "current"]
        rows.sort(key=lambda r: int(r.name) if r.name.isdigit() else r.name)
        return [(r.name, runner.plugin(r)) for r in rows]

    def get_attribute(self, name: str) -> Any:
        if name.startswith("resource."):
            parts = name.split(".", 2)
            member = self.member(parts[1])
            if member is None:
                from stackling.orchestration.errors import InvalidTemplateAttribute

                raise InvalidTemplateAttribute(resource=self.name, key=name)
            if len(parts) == 2:
                return member.get_reference_id()
            return member.get_attribute(parts[2])
        if name == "refs":
            return [m.get_reference_id() for _, m in self._members()]
        if name == "refs_map":
            return {n: m.get_reference_id() for n, m in self._members()}
        if name == "removed_rsrc_list":
            return list(self.data_get("removed", []))
        if name == "show":
            return None
        if name == "attributes":
            return None
        # any other name: that attribute of every member (Heat's get_attr [group, attr])
        return [m.get_attribute(name) for _, m in self._members()]


def _replace(value: Any, var: str, index: str) -> Any:
    if isinstance(value, str):
        return value.replace(var, index)
    if isinstance(value, dict):
        return {k: _replace(v, var, index) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, var, index) for v in value]
    return value


class TemplateResource(StackResource):
    """A resource whose type is a template: its properties are the template's parameters
    and its attributes the template's outputs."""

    accepts_any_properties = True
    dynamic_attributes = True
    template_name: ClassVar[str] = ""

    def _template(self) -> dict[str, Any]:
        from stackling.orchestration.template import parse_document

        files = self.scope.stack.files or {}
        name = self.row.type
        if name not in files:
            raise StackValidationFailed(f"Could not fetch remote template \"{name}\": "
                                        f"not in the files section")
        return parse_document(files[name])

    def child_template(self) -> dict[str, Any]:
        return self._template()

    def child_parameters(self) -> dict[str, Any]:
        return {k: v for k, v in self.properties.items() if v is not None}

    def validate(self) -> None:
        from stackling.orchestration.definition import Definition, Spec

        tmpl = self._template()
        params = {k: ("" if contains_unknown(v) else v) for k, v in self.properties.items()}
        declared = tmpl.get("parameters") or {}
        for key in params:
            if key not in declared:
                raise StackValidationFailed(
                    f"Property error: resources.{self.name}.properties: Unknown Property {key}")
        params = {k: v for k, v in params.items() if v != "" or k not in declared or
                  declared[k].get("type") == "string"}
        Definition(Spec(tmpl, {}, self.scope.stack.files or {}, params),
                   stack_name=self.name, stack_id="None", project_id="", strict=False)

    def get_attribute(self, name: str) -> Any:
        if name == "show":
            return None
        child = self.child()
        if child is None:
            return None
        for output in _engine().stack_outputs(self.db, self.runtime, child):
            if output["output_key"] == name:
                if "output_error" in output:  # the nested error, named, as upstream
                    from stackling.orchestration.errors import TemplateOutputError

                    raise TemplateOutputError(resource=self.name, attribute=name,
                                              error=output["output_error"])
                return output.get("output_value")
        from stackling.orchestration.errors import InvalidTemplateAttribute

        raise InvalidTemplateAttribute(resource=self.name, key=name)


register_template_resource(TemplateResource)


def drive_stack(resource: Resource, stack: Any, kind: str,
                work: dict[str, Any] | None = None) -> Any:
    """Start `kind` on `stack` (a nested one, or a remote stack the resource made) and
    run it in this step, as far as it goes: done (None; a failure raises, undoing it all
    with the handler's savepoint), or waiting for something outside (a hook, a signal):
    the token the engine polls with `check_driven` (the resource stays IN_PROGRESS)."""
    _engine().begin_driven(resource.db, stack, kind, resource.row.uuid, work)
    return continue_driven(resource, stack, kind)


def continue_driven(resource: Resource, stack: Any, kind: str) -> Any:
    """`drive_stack` for an action already begun on `stack` (e.g. through the API's
    own logic for a remote stack): the resource takes it over and runs it."""
    engine = _engine()
    engine.take_over(resource.db, stack.id, resource.row.uuid)
    finished = engine.drive(resource.db, resource.runtime, stack.id)
    resource.db.flush()
    if finished:
        _outcome(stack, kind)
        return None
    return {"stack": stack.id, "action": kind}


def check_driven(resource: Resource, token: Any) -> bool:
    """A step of the driven action; True once it completed, raises when it failed."""
    if not isinstance(token, dict) or "stack" not in token:
        return True
    from stackling.orchestration.models import Stack

    stack = resource.db.get(Stack, token["stack"])
    if stack is None:
        return True
    if not _engine().poll_driven(resource.db, resource.runtime, stack.id, resource.row.uuid):
        return False
    resource.db.flush()
    return _outcome(stack, token["action"])


def _outcome(stack: Any, kind: str) -> bool:
    if stack.action == kind and stack.status == "COMPLETE":
        return True
    if stack.action != kind:  # e.g. the stack itself was deleted meanwhile
        raise ResourceFailure(f"Stack {kind} interrupted: the stack is "
                              f"{stack.action}_{stack.status}")
    raise ResourceFailure(stack.status_reason)


def nested_stacks_of(db: Any, stack_id: str) -> list[Any]:
    from stackling.orchestration.models import Stack

    return list(db.scalars(select(Stack).where(Stack.parent_id == stack_id)))


# ------------------------------------------------------------------ limits
class TreeCount:
    """The resources a new stack's tree will hold, counted from its template before
    anything is made: nested templates from `files`, groups by their count. More than
    upstream's limit (or nested deeper) is a 400 at create or update (upstream checks
    each nested stack alone and fails the stack midway; here a tree over the limit is
    refused up front: stricter). A count known only at run time is checked then."""

    def __init__(self, env: dict[str, Any], files: dict[str, Any]) -> None:
        self.env, self.files = env or {}, files or {}
        self.total = 0
        self._below: dict[tuple[str, int], int] = {}

    def add(self, type_name: Any, props: Any, name: str | None = None) -> None:
        self.total += 1 + self.below(type_name, props, 0, name)
        self._check(self.total)

    @staticmethod
    def _check(total: int) -> None:
        if total > limits.MAX_RESOURCES_PER_STACK:
            raise limits.RequestLimitExceeded(message=limits.RESOURCES_EXCEEDED)

    def below(self, type_name: Any, props: Any, depth: int, name: str | None = None) -> int:
        """Resources in the nested stack (at depth + 1) a resource of this type makes."""
        try:
            resolved = nested_type(self.env, self.files, type_name, name)
        except ApiError:
            return 0  # reported by the type's own validation
        if resolved is None:
            return 0
        if resolved == GROUP:
            props = props if isinstance(props, dict) else {}
            count = _count(props.get("count", 1))
            if count == 0:
                return 0
            _check_depth(depth + 1)
            self._check(count)
            rdef = props.get("resource_def")
            rdef = rdef if isinstance(rdef, dict) else {}
            each = 1 + self.below(rdef.get("type"), rdef.get("properties"), depth + 1)
            self._check(count * each)
            return count * each
        key = (resolved, depth)
        if key not in self._below:
            _check_depth(depth + 1)
            from stackling.orchestration.template import parse_document

            try:
                child = parse_document(self.files[resolved])
            except ApiError:
                child = {}
            resources = child.get("resources")
            total = 0
            for rname, snippet in (resources if isinstance(resources, dict) else {}).items():
                if isinstance(snippet, dict):
                    total += 1 + self.below(snippet.get("type"), snippet.get("properties"),
                                            depth + 1, rname)
                    self._check(total)
            self._below[key] = total
        return self._below[key]


GROUP = "OS::Heat::ResourceGroup"


def nested_type(env: dict[str, Any], files: dict[str, Any], type_name: Any,
                name: str | None = None) -> str | None:
    """The resolved type when a resource of `type_name` makes a nested stack (a group,
    or a template from `files`), else None; a type the registry cannot resolve raises."""
    from stackling.orchestration.environment import resolve_type

    if not isinstance(type_name, str):
        return None
    resolved = resolve_type(env, type_name, name)
    return resolved if resolved == GROUP or resolved in files else None


def _count(value: Any) -> int:
    """A group's count as far as it is known before the run (else 0: checked then)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(value, 0)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return 0


def _check_depth(depth: int) -> None:
    if depth > limits.MAX_NESTED_STACK_DEPTH:
        raise limits.RequestLimitExceeded(message=limits.depth_message())
