"""OS::Nova::KeyPair, OS::Nova::Flavor and OS::Nova::ServerGroup.

They call compute's logic in the engine's transaction, after the same checks the REST
handlers make: Nova's policy (as the stack owner), its request schema and, for key
pairs, the key_pairs quota.
"""

from __future__ import annotations

from typing import Any

from stackling.common.errors import ApiError, PolicyNotAuthorized
from stackling.orchestration.properties import Constraint, Property
from stackling.orchestration.resources.base import Resource, register


def _authorize(resource: Resource, action: str, target: dict[str, Any] | None = None) -> None:
    rule = f"os_compute_api:{action}"
    target = {"project_id": resource.ctx.project_id, **(target or {})}
    if not resource.runtime.enforcer.enforce(rule, target, resource.ctx.policy_creds()):
        raise PolicyNotAuthorized(action=rule)


def _compute() -> Any:
    from stackling.compute import interface

    return interface


@register("OS::Nova::KeyPair")
class KeyPair(Resource):
    """A key pair of the stack owner; generated unless `public_key` is given."""

    properties_schema = {
        "name": Property("string", "The name of the key pair.", required=True,
                         constraints=[Constraint("length", {"min": 1, "max": 255})]),
        "save_private_key": Property("boolean", "True if the system should remember a "
                                     "generated private key; False otherwise.", default=False),
        "public_key": Property("string", "The optional public key. This allows users to "
                               "supply the public key from a pre-existing key pair. If not "
                               "supplied, a new key pair will be generated."),
        "type": Property("string", "Keypair type. Supported since Nova api version 2.2.",
                         constraints=[Constraint("allowed_values", ["ssh", "x509"])]),
        "user": Property("string", "ID or name of user to whom to add key-pair. The usage "
                         "of this property is limited to being used by administrators only."),
    }
    attributes_schema = {
        "public_key": "The public key.",
        "private_key": "The private key if it has been saved.",
    }

    def _user_id(self) -> str:
        return self.properties.get("user") or self.ctx.user_id or ""

    def handle_create(self) -> Any:
        compute = _compute()
        user_id = self._user_id()
        body: dict[str, Any] = {"name": self.properties["name"]}
        for key in ("public_key", "type"):
            if self.properties.get(key) is not None:
                body[key] = self.properties[key]
        if self.properties.get("user"):
            body["user_id"] = user_id
        compute.validate_request("keypair_create", {"keypair": body})
        _authorize(self, "os-keypairs:create", {"user_id": user_id})
        compute.check_key_pairs_quota(self.db, self.ctx.project_id or "", user_id)
        keypair, private = compute.create_keypair(self.db, user_id, body["name"],
                                                  body.get("public_key"),
                                                  body.get("type", "ssh"))
        self.set_resource_id(keypair.name)
        self.data_set("user_id", user_id)
        if private is not None and self.properties.get("save_private_key"):
            self.data_set("private_key", private)
        return None

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        try:
            _compute().delete_keypair(self.db, self.data_get("user_id") or self._user_id(),
                                      self.resource_id)
        except ApiError as err:
            if err.status != 404:
                raise
        return None

    def show(self) -> Any:
        kp = _compute().get_keypair(self.db, self.data_get("user_id") or self._user_id(),
                                    self.resource_id or "")
        return {"name": kp.name, "public_key": kp.public_key, "fingerprint": kp.fingerprint,
                "type": kp.type, "user_id": kp.user_id}

    def attribute(self, name: str) -> Any:
        if name == "private_key":
            return self.data_get("private_key", "")
        return self.show().get(name)

    def handle_check(self) -> None:
        self.show()


@register("OS::Nova::Flavor")
class Flavor(Resource):
    """A flavor (admin-only, by Nova's default policy)."""

    properties_schema = {
        "name": Property("string", "Name of the flavor."),
        "ram": Property("integer", "Memory in MB for the flavor.", required=True,
                        constraints=[Constraint("range", {"min": 1})]),
        "vcpus": Property("integer", "Number of VCPUs for the flavor.", required=True,
                          constraints=[Constraint("range", {"min": 1})]),
        "disk": Property("integer", "Size of local disk in GB. The \"0\" size is a special "
                         "case that uses the native base image size as the size of the "
                         "ephemeral root volume.", default=0,
                         constraints=[Constraint("range", {"min": 0})]),
        "swap": Property("integer", "Swap space in MB.", default=0,
                         constraints=[Constraint("range", {"min": 0})]),
        "rxtx_factor": Property("number", "RX/TX factor.", default=1.0),
        "ephemeral": Property("integer", "Size of a secondary ephemeral data disk in GB.",
                              default=0, constraints=[Constraint("range", {"min": 0})]),
        "is_public": Property("boolean", "Scope of flavor accessibility. Public or private. "
                              "Default value is True, means public, shared across all "
                              "projects.", default=True),
        "flavorid": Property("string", "Unique ID of the flavor. If not specified, an UUID "
                             "will be auto generated and used."),
        "extra_specs": Property("map", "Key/Value pairs to extend the capabilities of the "
                                "flavor.", update_allowed=True),
        "description": Property("string", "The description of the flavor.",
                                update_allowed=True),
    }
    attributes_schema = {
        "is_public": "Whether the flavor is shared across all projects.",
        "extra_specs": "Extra specs of the flavor in key-value pairs.",
        "name": "The name of the flavor.",
    }

    def handle_create(self) -> Any:
        compute = _compute()
        p = self.properties
        flavor: dict[str, Any] = {
            "name": p.get("name") or self.physical_resource_name(), "ram": p["ram"],
            "vcpus": p["vcpus"], "disk": p["disk"], "swap": p["swap"],
            "rxtx_factor": p["rxtx_factor"], "OS-FLV-EXT-DATA:ephemeral": p["ephemeral"],
            "os-flavor-access:is_public": p["is_public"]}
        if p.get("flavorid"):
            flavor["id"] = p["flavorid"]
        if p.get("description") is not None:
            flavor["description"] = p["description"]
        compute.validate_request("flavor_create", {"flavor": flavor})
        _authorize(self, "os-flavor-manage:create")
        created = compute.create_flavor(self.db, self.ctx, flavor)
        self.set_resource_id(created.flavorid)
        if p.get("extra_specs"):
            _authorize(self, "os-flavor-extra-specs:create")
            compute.set_flavor_extra_specs(self.db, self.ctx, created.flavorid,
                                           p["extra_specs"])
        return None

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        compute = _compute()
        if "extra_specs" in changed:
            _authorize(self, "os-flavor-extra-specs:update")
            new = {k: str(v) for k, v in (self.properties.get("extra_specs") or {}).items()}
            for key in set(old_properties.get("extra_specs") or {}) - set(new):
                compute.delete_flavor_extra_spec(self.db, self.ctx, self.resource_id or "", key)
            if new:
                compute.set_flavor_extra_specs(self.db, self.ctx, self.resource_id or "", new)
        if "description" in changed:
            _authorize(self, "os-flavor-manage:update")
            compute.set_flavor_description(self.db, self.ctx, self.resource_id or "",
                                           self.properties.get("description"))
        return None

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        _authorize(self, "os-flavor-manage:delete")
        try:
            _compute().delete_flavor(self.db, self.ctx, self.resource_id)
        except ApiError as err:
            if err.status != 404:
                raise
        return None

    def show(self) -> Any:
        f = _compute().get_flavor(self.db, self.ctx, self.resource_id or "")
        return {"id": f.flavorid, "name": f.name, "ram": f.memory_mb, "vcpus": f.vcpus,
                "disk": f.root_gb, "swap": f.swap, "OS-FLV-EXT-DATA:ephemeral": f.ephemeral_gb,
                "rxtx_factor": f.rxtx_factor, "os-flavor-access:is_public": f.is_public,
                "extra_specs": dict(f.extra_specs or {}), "description": f.description}

    def attribute(self, name: str) -> Any:
        view = self.show()
        return view["os-flavor-access:is_public"] if name == "is_public" else view.get(name)

    def handle_check(self) -> None:
        self.show()


@register("OS::Nova::ServerGroup")
class ServerGroup(Resource):
    """A server group; servers join it through `scheduler_hints: {group: <its id>}`."""

    properties_schema = {
        "name": Property("string", "Server Group name."),
        "policies": Property("list", "A list of string policies to apply. Defaults to "
                             "anti-affinity.", default=["anti-affinity"],
                             schema=Property("string", constraints=[Constraint(
                                 "allowed_values", ["anti-affinity", "affinity",
                                                    "soft-anti-affinity",
                                                    "soft-affinity"])])),
        "rules": Property("map", "A dict of rules to apply (max_server_per_host, for "
                          "anti-affinity only)."),
    }
    attributes_schema = {"name": "The name of the server group.",
                         "policies": "The policies of the server group.",
                         "members": "The servers of the group."}

    def handle_create(self) -> Any:
        policies = self.properties.get("policies") or ["anti-affinity"]
        if len(policies) != 1:  # Nova takes exactly one since 2.64, as Heat sends it
            raise ValueError("Only one policy may be given.")
        _authorize(self, "os-server-groups:create")
        group_id = _compute().create_server_group(
            self.db, self.ctx, self.properties.get("name") or self.physical_resource_name(),
            policies[0], self.properties.get("rules"))
        self.set_resource_id(group_id)
        return None

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        try:
            group = _compute().server_group(self.db, self.resource_id)
            _authorize(self, "os-server-groups:delete", {"project_id": group["project_id"]})
            _compute().delete_server_group(self.db, self.resource_id)
        except ApiError as err:
            if err.status != 404:
                raise
        return None

    def show(self) -> Any:
        return _compute().server_group(self.db, self.resource_id or "")

    def attribute(self, name: str) -> Any:
        return self.show().get(name)

    def handle_check(self) -> None:
        self.show()
