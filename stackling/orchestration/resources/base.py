"""The resource plugin interface: what a resource type implements, and what it may use.

A type is a subclass of `Resource` registered with `@register("OS::Neutron::Net")`. The
engine builds one instance per resource operation, inside the step's transaction, with
the resolved and validated properties in `self.properties`. Everything a handler does
(in-process calls to network/compute, `set_resource_id`, `data_set`) commits together
with the resource's new status, or not at all: a handler just raises on failure.
See stackling/orchestration/README.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy.orm import Session

from stackling.common.context import RequestContext
from stackling.common.errors import ApiError
from stackling.orchestration.errors import InvalidTemplateAttribute
from stackling.orchestration.properties import Property

if TYPE_CHECKING:
    from stackling.orchestration.models import Resource as ResourceRow
    from stackling.orchestration.models import Stack

REGISTRY: dict[str, type[Resource]] = {}


def register(*type_names: str) -> Callable[[type[Resource]], type[Resource]]:
    def deco(cls: type[Resource]) -> type[Resource]:
        for name in type_names:
            REGISTRY[name] = cls
        if not cls.type_name:
            cls.type_name = type_names[0]
        return cls

    return deco


class StackScope:
    """What a resource sees of its stack and the cloud: the session, the stack owner's
    context (the engine acts as the user who created the stack), the runtime, and the
    stack's other resources (by name) for `get_resource`-like look-ups."""

    def __init__(self, db: Session, ctx: RequestContext, runtime: Any, stack: Stack,
                 lookup: Callable[[str], Resource | None]) -> None:
        self.db = db
        self.ctx = ctx
        self.runtime = runtime
        self.stack = stack
        self.lookup = lookup
        # Name-or-id look-ups of stable objects (flavor, image, subnet, security group)
        # found once per step: a 100-member group would otherwise repeat each per member.
        self.found: dict[tuple[str, str], Any] = {}


class Resource:
    # --- what a type declares
    type_name: ClassVar[str] = ""
    properties_schema: ClassVar[dict[str, Property]] = {}
    attributes_schema: ClassVar[dict[str, str]] = {}  # name -> description ("show" is implicit)
    # OS::Heat::None takes any properties: no schema check at all.
    accepts_any_properties: ClassVar[bool] = False

    def __init__(self, scope: StackScope, row: ResourceRow, properties: dict[str, Any]) -> None:
        self.scope = scope
        self.row = row
        self.name = row.name
        self.properties = properties

    # --- conveniences
    @property
    def db(self) -> Session:
        return self.scope.db

    @property
    def ctx(self) -> RequestContext:
        return self.scope.ctx

    @property
    def runtime(self) -> Any:
        return self.scope.runtime

    @property
    def resource_id(self) -> str | None:
        return self.row.physical_resource_id

    def set_resource_id(self, physical_id: str | None) -> None:
        """Record the physical id: call it right after the object exists (same
        transaction), so a later failure in the handler still deletes it on rollback."""
        self.row.physical_resource_id = physical_id

    def find(self, finder: Callable[[Session, RequestContext, str], Any], value: str) -> Any:
        """`finder(db, ctx, value)` (a name-or-id look-up of `constraints`), memoized for
        the step: the same flavor, image, network or subnet is named by many resources."""
        key = (finder.__name__, value)
        found = self.scope.found.get(key)
        if found is None:
            found = self.scope.found[key] = finder(self.db, self.ctx, value)
        return found

    def data_get(self, key: str, default: Any = None) -> Any:
        return (self.row.data or {}).get(key, default)

    def data_set(self, key: str, value: Any) -> None:
        self.row.data = {**(self.row.data or {}), key: value}

    def data_delete(self, key: str) -> None:
        self.row.data = {k: v for k, v in (self.row.data or {}).items() if k != key}

    def physical_resource_name(self) -> str:
        """Heat's default name for the physical object: `<stack>-<resource>-<12 chars>`."""
        short = hashlib.sha256(self.row.uuid.encode()).hexdigest()[:12]
        return f"{self.scope.stack.name}-{self.name}-{short}"

    # --- validation (synchronous, at create/update request time)
    def validate(self) -> None:
        """Cross-property rules; raise StackValidationFailed / ResourcePropertyConflict.
        Property values may be `properties.UNKNOWN` (not resolvable before the run)."""

    @classmethod
    def implicit_dependencies(cls, name: str, definition: dict[str, Any],
                              definitions: dict[str, dict[str, Any]]) -> list[str]:
        """Names of other resources this one must follow beyond its references (e.g. a
        server after the subnets of its networks). `definitions` are the stack's
        resource snippets (unresolved)."""
        return []

    # --- lifecycle: override what the type supports
    def handle_create(self) -> Any:
        """Create the physical object(s); `set_resource_id` at once. Return a true value
        to be polled: the resource stays IN_PROGRESS (committed) and the engine calls
        `check_create_complete(that value)` in later steps until it returns True."""

    def check_create_complete(self, token: Any) -> bool:
        return True

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        """Apply the changed `update_allowed` properties in place (`self.properties`
        holds the new values). A true result is polled like handle_create's."""

    def check_update_complete(self, token: Any) -> bool:
        return True

    def handle_delete(self) -> Any:
        """Delete the physical object(s); an already-gone object is not an error. A true
        result is polled like handle_create's."""

    def check_delete_complete(self, token: Any) -> bool:
        return True

    def handle_suspend(self) -> None:
        pass

    def handle_resume(self) -> None:
        pass

    def handle_check(self) -> None:
        """Raise if the physical object is missing or broken."""

    def handle_snapshot(self) -> Any:
        """Part of a stack snapshot (the snapshot keeps every resource's data)."""

    # Suspend, resume, check and snapshot handlers may return a token too: polled here.
    def check_suspend_complete(self, token: Any) -> bool:
        return True

    def check_resume_complete(self, token: Any) -> bool:
        return True

    def check_check_complete(self, token: Any) -> bool:
        return True

    def check_snapshot_complete(self, token: Any) -> bool:
        return True

    def handle_adopt(self, resource_data: dict[str, Any] | None) -> Any:
        """A stack adopt: take the physical object of the abandon data (its id, data and
        metadata) instead of creating one, as upstream's `handle_adopt`."""
        from stackling.orchestration.errors import ResourceFailure

        data = resource_data if isinstance(resource_data, dict) else {}
        if not data.get("resource_id"):
            if data and data.get("status") == "COMPLETE" and data.get("action") != "INIT":
                # It had no physical object (e.g. OS::Heat::Value): made again, its data
                # kept (upstream fails it: a deviation, see the README).
                token = self.handle_create()
                self._adopt_data(data)
                return token
            raise ResourceFailure("Resource ID was not provided.")
        self.set_resource_id(str(data["resource_id"]))
        self._adopt_data(data)
        return None

    def _adopt_data(self, data: dict[str, Any]) -> None:
        for key, value in (data.get("resource_data") or {}).items():
            self.data_set(key, _stored_value(value))
        if isinstance(data.get("metadata"), dict):
            self.row.rsrc_metadata = data["metadata"]

    def needs_replace(self, old_properties: dict[str, Any], changed: set[str]) -> bool:
        """True when the update cannot be made in place: by default when a changed
        property is not `update_allowed`."""
        return any(not self.properties_schema[k].update_allowed for k in changed
                   if k in self.properties_schema)

    def prepare_for_replace(self) -> None:
        """On the old resource, before its replacement is created (e.g. release a fixed
        IP the new one will take)."""

    def restore_prev_rsrc(self) -> None:
        """On the old resource, when a rollback brings it back (undo prepare_for_replace)."""

    # --- outputs
    def get_reference_id(self) -> Any:
        """`get_resource`: the physical id (the resource name when it has none)."""
        return self.resource_id if self.resource_id is not None else self.name

    def get_attribute(self, name: str) -> Any:
        """`get_attr`: override `attribute(name)`; this checks the name first."""
        if name != "show" and name not in self.attributes_schema:
            raise InvalidTemplateAttribute(resource=self.name, key=name)
        if self.resource_id is None and name != "show":
            return None
        try:
            if name == "show":
                return self.show()
            return self.attribute(name)
        except ApiError:
            return None  # the object is gone: attributes resolve to null, as upstream

    def attribute(self, name: str) -> Any:
        return None

    def show(self) -> Any:
        """The `show` attribute: the physical object as its API's GET returns it."""
        return None


def _stored_value(value: Any) -> Any:
    """Abandon data carries each data value as a string (upstream's resource data are
    strings; structured values are JSON text here): a JSON map or list comes back as one."""
    import json

    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
