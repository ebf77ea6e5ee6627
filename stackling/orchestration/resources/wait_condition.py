"""OS::Heat::WaitConditionHandle and WaitCondition (signals through the API), and
OS::Heat::SwiftSignal(Handle), refused as upstream refuses it without Swift.

A handle keeps its signals in its resource metadata, keyed by each signal's id (as
upstream: `GET .../resources/<handle>/metadata` shows them). The wait condition is a
persisted wait: the engine polls `check_create_complete`, which reads the handle's row
(written by the signal requests, each holding that row's lock)."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from typing import Any

from sqlalchemy import or_, select

from stackling.common.db import utcnow_precise
from stackling.orchestration.errors import (
    ResourceFailure,
    ResourceTypeUnavailable,
    StackValidationFailed,
)
from stackling.orchestration.models import Resource as ResourceRow
from stackling.orchestration.properties import UNKNOWN, Constraint, Property
from stackling.orchestration.resources.base import Resource, register

SUCCESS, FAILURE = "SUCCESS", "FAILURE"
TOKEN_KEY = "signal_token"  # resource data: the handle's own signal credential


class WaitConditionFailure(ResourceFailure):
    pass


class WaitConditionTimeout(ResourceFailure):
    pass


def endpoint_base(runtime: Any) -> str:
    """The orchestration service's public URL (no request at hand in the engine)."""
    settings = runtime.settings
    if settings.public_url:
        return settings.public_url.rstrip("/") + "/orchestration"
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return f"http://{host}:{settings.port}/orchestration"


class Signalled(Resource):
    """A type that takes signals: `handle_signal(details)` runs in the signal request's
    transaction with this resource's row locked."""

    def handle_signal(self, details: Any) -> str:
        """Apply the signal; returns the SIGNAL event's reason."""
        return signal_reason(details)


def signal_reason(details: Any) -> str:
    if details is None:
        return "No signal details provided"
    if isinstance(details, str):
        return details
    if isinstance(details, dict) and details.get("reason") is not None:
        return f"Signal: {details['reason']}"
    return "Unknown"


@register("OS::Heat::WaitConditionHandle")
class WaitConditionHandle(Signalled):
    properties_schema = {
        "signal_transport": Property(
            "string", "How the client will signal the wait condition.",
            default="TOKEN_SIGNAL", constraints=[Constraint("allowed_values", [
                "CFN_SIGNAL", "TEMP_URL_SIGNAL", "HEAT_SIGNAL", "NO_SIGNAL", "ZAQAR_SIGNAL",
                "TOKEN_SIGNAL"])]),
    }
    attributes_schema = {
        "token": "Token for stack-user which can be used for signalling handle.",
        "endpoint": "Endpoint/url which can be used for signalling handle.",
        "curl_cli": "Convenience attribute, provides curl CLI command prefix, which can be "
                    "used for signalling handle completion or failure.",
        "signal": "JSON serialized map that includes the endpoint, token and/or other "
                  "attributes the client must use for signalling this handle.",
    }

    def validate(self) -> None:
        transport = self.properties.get("signal_transport")
        if transport not in (None, UNKNOWN, "TOKEN_SIGNAL", "NO_SIGNAL"):
            raise StackValidationFailed(
                f"Property error: resources.{self.name}.properties.signal_transport: "
                f"{transport} is not available in this cloud (only TOKEN_SIGNAL)")

    def handle_create(self) -> None:
        self.set_resource_id(self.physical_resource_name())
        self.data_set(TOKEN_KEY, secrets.token_urlsafe(32))

    def endpoint(self) -> str:
        stack = self.scope.stack
        return (f"{endpoint_base(self.runtime)}/v1/{stack.project_id}/stacks/{stack.name}/"
                f"{stack.id}/resources/{self.name}/signal")

    def attribute(self, name: str) -> Any:
        token = self.data_get(TOKEN_KEY)
        if name == "token":
            return token
        if name == "endpoint":
            return self.endpoint()
        if name == "curl_cli":
            return (f"curl -i -X POST -H 'X-Auth-Token: {token}' -H 'Content-Type: "
                    f"application/json' -H 'Accept: application/json' {self.endpoint()}")
        if name == "signal":
            return json.dumps({"endpoint": self.endpoint(), "token": token})
        return None

    def handle_signal(self, details: Any) -> str:
        signals = dict(self.row.rsrc_metadata or {})
        number = len(signals) + 1
        meta = dict(details) if isinstance(details, dict) else {}
        meta.setdefault("reason", f"Signal {number} received")
        meta.setdefault("data", None)
        meta.setdefault("id", number)
        meta.setdefault("status", SUCCESS)
        if meta["status"] not in (SUCCESS, FAILURE):
            raise StackValidationFailed("Metadata format invalid")
        key = str(meta.pop("id"))
        signals[key] = {k: meta[k] for k in ("status", "reason", "data")}
        self.row.rsrc_metadata = signals
        return signal_reason(meta)

    def statuses(self) -> list[dict[str, Any]]:
        return list((self.row.rsrc_metadata or {}).values())


@register("OS::Heat::WaitCondition")
class WaitCondition(Resource):
    properties_schema = {
        "handle": Property("string", "A reference to the wait condition handle used to "
                           "signal this wait condition.", required=True),
        "timeout": Property("number", "The number of seconds to wait for the correct "
                            "number of signals to arrive.", required=True,
                            constraints=[Constraint("range", {"min": 1, "max": 43200})]),
        "count": Property("integer", "The number of success signals that must be received "
                          "before the stack creation process continues.", default=1,
                          update_allowed=True,
                          constraints=[Constraint("range", {"min": 1})]),
    }
    attributes_schema = {"data": "JSON string containing data associated with wait "
                                 "condition signals sent to the handle."}

    def _handle(self) -> WaitConditionHandle:
        ref = self.properties.get("handle")
        name = self.scope.db.scalar(select(ResourceRow.name).where(
            ResourceRow.stack_id == self.scope.stack.id, ResourceRow.role == "current",
            or_(ResourceRow.physical_resource_id == ref, ResourceRow.name == ref)))
        plugin = self.scope.lookup(name) if name is not None else None
        if isinstance(plugin, WaitConditionHandle):
            return plugin
        raise ResourceFailure(f"{ref} is not a valid wait condition handle.")

    def handle_create(self) -> Any:
        self.set_resource_id(self.physical_resource_name())
        return self._deadline()

    def _deadline(self) -> str:
        secs = float(self.properties.get("timeout") or 0)
        return (utcnow_precise() + dt.timedelta(seconds=secs)).isoformat()

    def check_create_complete(self, token: Any) -> bool:
        handle = self._handle()
        self.scope.db.refresh(handle.row)  # the signals committed since this step began
        statuses = handle.statuses()
        failures = [s.get("reason") or "" for s in statuses if s.get("status") == FAILURE]
        if failures:
            raise WaitConditionFailure(";".join(failures))
        successes = [s.get("reason") or "" for s in statuses if s.get("status") == SUCCESS]
        count = int(self.properties.get("count") or 1)
        if len(successes) >= count:
            return True
        if utcnow_precise() >= dt.datetime.fromisoformat(token):
            message = f"{len(successes)} of {count} received"
            if successes:
                message += " - " + ";".join(successes)
            raise WaitConditionTimeout(message)
        return False

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        return self._deadline() if "count" in changed else None

    def check_update_complete(self, token: Any) -> bool:
        return self.check_create_complete(token)

    def attribute(self, name: str) -> Any:
        try:
            statuses = self._handle().row.rsrc_metadata or {}
        except ResourceFailure:
            return None
        return json.dumps({k: v.get("data") for k, v in statuses.items()})


class _NeedsSwift(Resource):
    accepts_any_properties = True

    def validate(self) -> None:
        raise ResourceTypeUnavailable(service_name="swift", resource_type=self.row.type,
                                      reason="Service endpoint not in service catalog.")


@register("OS::Heat::SwiftSignal")
class SwiftSignal(_NeedsSwift):
    pass


@register("OS::Heat::SwiftSignalHandle")
class SwiftSignalHandle(_NeedsSwift):
    pass
