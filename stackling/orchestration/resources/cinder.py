"""OS::Cinder::Volume, OS::Cinder::VolumeAttachment, OS::Cinder::VolumeType and
OS::Cinder::QoSSpecs, as Heat's cinder plugins: they call block storage's interface in
the engine's transaction, after Cinder's policy as the stack's owner. A volume is polled
until `available` (its file is made by block storage's workers once the step commits); a
deletion until it is gone. An attachment goes through compute's door (Nova's
os-volume_attachments, under Nova's policy as the stack's owner), polled until the
volume is `in-use`; its deletion detaches and waits until the volume is `available`.
OS::Cinder::EncryptedVolumeType is not offered: block storage has no volume type
encryption API (no key manager)."""

from __future__ import annotations

import json
from typing import Any

from stackling.common.errors import ApiError
from stackling.orchestration.errors import ResourceFailure
from stackling.orchestration.properties import Constraint, Property
from stackling.orchestration.resources.base import Resource, register


def _cinder() -> Any:
    from stackling.block_storage import interface

    return interface


def _gone(err: ApiError) -> bool:
    return err.status == 404


def _nova() -> Any:
    from stackling.compute import interface

    return interface


def _nova_authorize(resource: Resource, action: str, server_id: str) -> None:
    """Nova's policy `os_compute_api:<action>` on the server's project, as the stack's
    owner (the REST handler's check)."""
    from stackling.common.errors import PolicyNotAuthorized

    rule = f"os_compute_api:{action}"
    project = _nova().server_project(resource.db, server_id) or resource.ctx.project_id
    if not resource.runtime.enforcer.enforce(rule, {"project_id": project},
                                             resource.ctx.policy_creds()):
        raise PolicyNotAuthorized(action=rule)


@register("OS::Cinder::Volume")
class Volume(Resource):
    properties_schema = {
        "size": Property("integer", "The size of the volume in GB. On update only increase "
                         "in size is supported. This property is required unless property "
                         "backup_id or source_volid or snapshot_id is specified.",
                         update_allowed=True, constraints=[Constraint("range", {"min": 1})]),
        "availability_zone": Property("string", "The availability zone in which the volume "
                                      "will be created."),
        "snapshot_id": Property("string", "If specified, the snapshot to create the volume "
                                "from."),
        "backup_id": Property("string", "If specified, the backup to create the volume "
                              "from."),
        "name": Property("string", "A name used to distinguish the volume.",
                         update_allowed=True),
        "description": Property("string", "A description of the volume.",
                                update_allowed=True),
        "volume_type": Property("string", "If specified, the type of volume to use, mapping "
                                "to a specific backend.", update_allowed=True),
        "metadata": Property("map", "Key/value pairs to associate with the volume.",
                             update_allowed=True, default={}),
        "image": Property("string", "If specified, the name or ID of the image to create "
                          "the volume from."),
        "imageRef": Property("string", "The ID of the image to create the volume from "
                             "(deprecated: use image)."),
        "source_volid": Property("string", "If specified, the volume to use as source."),
        "scheduler_hints": Property("map", "Arbitrary key-value pairs specified by the "
                                    "client to help the Cinder scheduler creating a volume."),
        "read_only": Property("boolean", "Enables or disables read-only access mode of "
                              "volume.", update_allowed=True),
        "multiattach": Property("boolean", "Whether allow the volume to be attached more "
                                "than once."),
    }
    attributes_schema = {
        "availability_zone": "The availability zone in which the volume is located.",
        "size": "The size of the volume in GB.",
        "snapshot_id": "The snapshot the volume was created from, if any.",
        "display_name": "Name of the volume.",
        "display_description": "Description of the volume.",
        "volume_type": "The type of the volume mapping to a backend, if any.",
        "metadata": "Key/value pairs associated with the volume.",
        "metadata_values": "Key/value pairs associated with the volume in raw dict form.",
        "source_volid": "The volume used as source, if any.",
        "status": "The current status of the volume.",
        "created_at": "The timestamp indicating volume creation.",
        "bootable": "Boolean indicating if the volume can be booted or not.",
        "encrypted": "Boolean indicating if the volume is encrypted or not.",
        "attachments": "A string representation of the list of attachments of the volume.",
        "attachments_list": "The list of attachments of the volume.",
        "multiattach": "Boolean indicating whether allow the volume to be attached more "
                       "than once.",
    }

    def handle_create(self) -> Any:
        cinder = _cinder()
        p = self.properties
        image = p.get("image") or p.get("imageRef")
        source = next(((kind, p[key]) for kind, key in (
            ("snapshot", "snapshot_id"), ("volume", "source_volid"), ("backup", "backup_id"))
            if p.get(key)), ("image", image) if image else ("blank", None))
        cinder.authorize(self.runtime, self.ctx, "volume:create")
        if source[0] == "image":
            cinder.authorize(self.runtime, self.ctx, "volume:create_from_image")
            source = ("image", self._image_id(image))
        info = cinder.create_volume(
            self.db, self.ctx, size=p.get("size"), source_type=source[0], source_id=source[1],
            name=p.get("name") or self.physical_resource_name(),
            description=p.get("description"), volume_type=p.get("volume_type"),
            availability_zone=p.get("availability_zone"),
            metadata={str(k): str(v) for k, v in (p.get("metadata") or {}).items()},
            multiattach=bool(p.get("multiattach")))
        self.set_resource_id(info.id)
        return {"until": "available", "read_only": p.get("read_only")}

    def _image_id(self, ref: str) -> str:
        from stackling.image import interface as images

        try:
            return images.get_image(self.db, self.ctx, ref).id
        except images.ImageNotFound:
            ids = images.image_ids_named(self.db, self.ctx, ref, 2)
            if len(ids) != 1:
                raise ResourceFailure(f"Error validating value '{ref}': No images matching "
                                      f"{{'name': u'{ref}'}}.") from None
            return ids[0]

    def _wait(self, token: Any) -> bool:
        info = _cinder().get_volume(self.db, self.ctx, self.resource_id or "")
        if info.status in ("error", "error_extending", "error_restoring"):
            raise ResourceFailure(f"Went to status {info.status} due to \"{info.fault or 'Unknown'}\"")
        wanted = token.get("until") if isinstance(token, dict) else "available"
        if info.status == wanted or (wanted == "available" and info.status == "in-use"):
            if isinstance(token, dict) and token.get("read_only") is not None:
                _cinder().set_readonly(self.db, self.ctx, info.id, bool(token["read_only"]))
                token["read_only"] = None
            return True
        _cinder().wake(self.runtime)
        return False

    def check_create_complete(self, token: Any) -> bool:
        return self._wait(token)

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        cinder = _cinder()
        vid = self.resource_id or ""
        cinder.authorize(self.runtime, self.ctx, "volume:update")
        fields = {k: self.properties.get(k) for k in ("name", "description") if k in changed}
        if "metadata" in changed:
            fields["metadata"] = {str(k): str(v) for k, v in
                                  (self.properties.get("metadata") or {}).items()}
        if fields:
            cinder.update_volume(self.db, self.ctx, vid, fields)
        if "volume_type" in changed and self.properties.get("volume_type"):
            cinder.authorize(self.runtime, self.ctx, "volume:retype")
            cinder.retype_volume(self.db, self.ctx, vid, self.properties["volume_type"])
        if "read_only" in changed and self.properties.get("read_only") is not None:
            cinder.authorize(self.runtime, self.ctx, "volume:update_readonly_flag")
            cinder.set_readonly(self.db, self.ctx, vid, bool(self.properties["read_only"]))
        if "size" in changed:
            new, old = self.properties.get("size"), old_properties.get("size")
            if new is not None and old is not None and new < old:
                raise ResourceFailure(f"The new size {new} must be greater than the current "
                                      f"size {old}.")
            if new is not None and cinder.get_volume(self.db, self.ctx, vid).size < new:
                cinder.authorize(self.runtime, self.ctx, "volume:extend")
                cinder.extend_volume(self.db, self.ctx, vid, new)
                return {"until": "available"}
        return None

    def check_update_complete(self, token: Any) -> bool:
        return True if token is None else self._wait(token)

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        cinder = _cinder()
        cinder.authorize(self.runtime, self.ctx, "volume:delete")
        try:
            cinder.delete_volume(self.db, self.ctx, self.resource_id)
        except ApiError as err:
            if _gone(err):
                return None
            raise ResourceFailure(f"Volume deletion failed: {err.text}") from None
        return True

    def check_delete_complete(self, token: Any) -> bool:
        if not token or self.resource_id is None:
            return True
        try:
            info = _cinder().get_volume(self.db, self.ctx, self.resource_id)
        except ApiError as err:
            if _gone(err):
                return True
            raise
        if info.status == "error_deleting":
            raise ResourceFailure("Volume deletion failed: error_deleting")
        _cinder().wake(self.runtime)
        return False

    def show(self) -> Any:
        return _cinder().volume_body(self.db, self.ctx, self.resource_id or "")

    def attribute(self, name: str) -> Any:
        body = self.show()
        if name == "display_name":
            return body["name"]
        if name == "display_description":
            return body["description"]
        if name == "metadata":
            return json.dumps(body["metadata"])
        if name == "metadata_values":
            return body["metadata"]
        if name == "attachments":
            return json.dumps(body["attachments"])
        if name == "attachments_list":
            return body["attachments"]
        return body.get(name)

    def handle_check(self) -> None:
        status = self.show()["status"]
        if status not in ("available", "in-use"):
            raise ResourceFailure(f"Volume is in status {status}")


@register("OS::Cinder::VolumeAttachment")
class VolumeAttachment(Resource):
    """A volume attached to a server (Nova's os-volume_attachments). The physical id is
    Nova's attachment id, the volume's id. An update of any property detaches, waits for
    the volume to be `available`, then attaches the (new) volume to the (new) server."""

    properties_schema = {
        "instance_uuid": Property("string", "The ID of the server to which the volume "
                                  "attaches.", required=True, update_allowed=True),
        "volume_id": Property("string", "The ID of the volume to be attached.",
                              required=True, update_allowed=True,
                              constraints=[Constraint("custom_constraint", "cinder.volume")]),
        "mountpoint": Property("string", "The location where the volume is exposed on the "
                               "instance. This assignment may not be honored and it is "
                               "advised that the path /dev/disk/by-id/virtio-<VolumeId> be "
                               "used instead.", update_allowed=True),
    }

    def _attach(self, server_id: str, volume_id: str, device: str | None) -> str:
        _nova_authorize(self, "os-volumes-attachments:create", server_id)
        try:
            att = _nova().attach_volume(self.db, self.ctx, server_id, volume_id,
                                        device=device or None)
        except ApiError as err:
            raise ResourceFailure(f"Failed to attach volume {volume_id} to server "
                                  f"{server_id} - {err.text} (HTTP {err.status})") from None
        _cinder().wake(self.runtime)
        return str(att["id"])

    def _detach(self, server_id: str, volume_id: str) -> None:
        """Heat's nova plugin detach_volume: a server or attachment already gone (404) or
        busy (409) is no error; anything else is."""
        _nova_authorize(self, "os-volumes-attachments:delete", server_id)
        try:
            _nova().detach_volume(self.db, self.ctx, server_id, volume_id)
        except ApiError as err:
            if err.status not in (404, 409):
                raise ResourceFailure(f"Could not detach attachment {volume_id} from server "
                                      f"{server_id}.") from None
        _cinder().wake(self.runtime)

    def _attached(self, volume_id: str) -> bool:
        """Heat's check_attach_volume_complete: in-use is done; available, attaching or
        reserved is not yet; any other status is the failure."""
        status = _cinder().get_volume(self.db, self.ctx, volume_id).status
        if status in ("available", "attaching", "reserved"):
            return False
        if status != "in-use":
            raise ResourceFailure(status)
        return True

    def _detached(self, server_id: str, volume_id: str) -> bool:
        """Heat's check_detach_volume_complete: the volume gone, or no longer attached to
        the server and `available`."""
        try:
            info = _cinder().get_volume(self.db, self.ctx, volume_id)
        except ApiError as err:
            if _gone(err):
                return True
            raise
        if not any(a.instance_uuid == server_id for a in info.attachments):
            return info.status != "detaching"
        if info.status in ("in-use", "detaching"):
            return False
        if info.status != "available":
            raise ResourceFailure("Volume in unknown status")
        return True

    def handle_create(self) -> Any:
        p = self.properties
        self.set_resource_id(self._attach(p["instance_uuid"], p["volume_id"],
                                          p.get("mountpoint")))
        return {"volume": p["volume_id"]}

    def check_create_complete(self, token: Any) -> bool:
        return self._attached(token["volume"]) if isinstance(token, dict) else True

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        if not changed:
            return None
        old_server, old_volume = old_properties["instance_uuid"], old_properties["volume_id"]
        self._detach(old_server, self.resource_id or old_volume)
        p = self.properties
        return {"detach": [old_server, self.resource_id or old_volume],
                "attach": [p["instance_uuid"], p["volume_id"], p.get("mountpoint")]}

    def check_update_complete(self, token: Any) -> bool:
        """Heat's order: the old attachment's detach complete, then the attach called
        (once: it is called when the new volume has an attachment to the new server),
        then the new volume in-use."""
        if not isinstance(token, dict):
            return True
        server_id, volume_id, device = token["attach"]
        info = _cinder().get_volume(self.db, self.ctx, volume_id)
        if not any(a.instance_uuid == server_id for a in info.attachments):
            if not self._detached(*token["detach"]):
                return False
            self.set_resource_id(self._attach(server_id, volume_id, device))
        return self._attached(volume_id)

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        server_id = self.properties["instance_uuid"]
        self._detach(server_id, self.resource_id)
        return {"detach": [server_id, self.resource_id]}

    def check_delete_complete(self, token: Any) -> bool:
        return self._detached(*token["detach"]) if isinstance(token, dict) else True


@register("OS::Cinder::VolumeType")
class VolumeType(Resource):
    properties_schema = {
        "name": Property("string", "Name of the volume type.", required=True,
                         update_allowed=True),
        "metadata": Property("map", "The extra specs key and value pairs of the volume "
                             "type.", update_allowed=True),
        "is_public": Property("boolean", "Whether the volume type is accessible to the "
                              "public.", default=True, update_allowed=True),
        "description": Property("string", "Description of the volume type.",
                                update_allowed=True),
        "projects": Property("list", "Projects to add volume type access to. NOTE: This "
                             "property is only supported since Cinder API V2.",
                             update_allowed=True, default=[]),
    }

    def handle_create(self) -> Any:
        cinder = _cinder()
        cinder.authorize(self.runtime, self.ctx, "volume_extension:type_create")
        p = self.properties
        type_id = cinder.create_volume_type(
            self.db, self.ctx, name=p["name"], description=p.get("description"),
            is_public=p.get("is_public", True) is not False,
            extra_specs=dict(p.get("metadata") or {}),
            projects=[] if p.get("is_public", True) is not False else list(
                p.get("projects") or []))
        self.set_resource_id(type_id)
        return None

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        cinder = _cinder()
        cinder.authorize(self.runtime, self.ctx, "volume_extension:type_update")
        fields: dict[str, Any] = {}
        for key in ("name", "description", "is_public"):
            if key in changed:
                fields[key] = self.properties.get(key)
        if "metadata" in changed:
            fields["extra_specs"] = dict(self.properties.get("metadata") or {})
        if "projects" in changed:
            fields["projects"] = list(self.properties.get("projects") or [])
        cinder.update_volume_type(self.db, self.ctx, self.resource_id or "", fields=fields)
        return None

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        cinder = _cinder()
        cinder.authorize(self.runtime, self.ctx, "volume_extension:type_delete")
        try:
            cinder.delete_volume_type(self.db, self.ctx, self.resource_id)
        except ApiError as err:
            if not _gone(err):
                raise ResourceFailure(str(err.text)) from None
        return None

    def show(self) -> Any:
        return _cinder().volume_type_body(self.db, self.ctx, self.resource_id or "")


@register("OS::Cinder::QoSSpecs")
class QoSSpecs(Resource):
    properties_schema = {
        "name": Property("string", "Name of the QoS.", required=True),
        "specs": Property("map", "The specs key and value pairs of the QoS.", required=True,
                          update_allowed=True),
    }

    def handle_create(self) -> Any:
        cinder = _cinder()
        cinder.authorize(self.runtime, self.ctx, "volume_extension:qos_specs_manage:create")
        self.set_resource_id(cinder.create_qos_specs(self.db, self.properties["name"],
                                                     dict(self.properties["specs"] or {})))
        return None

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        if "specs" in changed:
            cinder = _cinder()
            cinder.authorize(self.runtime, self.ctx,
                             "volume_extension:qos_specs_manage:update")
            cinder.update_qos_specs(self.db, self.resource_id or "",
                                    dict(self.properties["specs"] or {}))
        return None

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        cinder = _cinder()
        cinder.authorize(self.runtime, self.ctx, "volume_extension:qos_specs_manage:delete")
        try:
            cinder.delete_qos_specs(self.db, self.resource_id)
        except ApiError as err:
            if not _gone(err):
                raise
        return None

    def show(self) -> Any:
        return _cinder().qos_specs_body(self.db, self.resource_id or "")
