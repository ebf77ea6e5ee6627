"""OS::Nova::Server with the rich `networks` property (heat-specs rich-network-prop).

Every `networks` entry with a `network` or `subnet` (and no `port`) gets a port the
server resource creates and owns ("internal" ports: at most one fixed IP each, named
`<resource>-port-<i>`, the server's security groups, tagged with the stack and resource),
recorded in resource data `internal_ports` before the server is booted on them. Entries
with `port` attach the user's port; `allocate_network` lets Nova choose. The server is
built in the engine's transaction (compute's `build_now`), so it and its ports commit
with the resource's status, or not at all.

Replacement keeps a `fixed_ip`: `prepare_for_replace` clears the fixed IPs of the old
server's internal ports (kept in data `port_fip`), so the new server's ports can take the
same addresses, and detaches the user's ports (`port` entries) so the new server can
take them; a rollback deletes the new server and its ports first, then
`restore_prev_rsrc` gives the addresses back to the old ports and re-attaches the user's.
"""

from __future__ import annotations

import base64
from typing import Any

from stackling.common.errors import ApiError
from stackling.orchestration import constraints
from stackling.orchestration.errors import (
    ResourceFailureKeep,
    ResourcePropertyConflict,
    StackValidationFailed,
)
from stackling.orchestration.properties import UNKNOWN, Constraint, Property
from stackling.orchestration.resources.base import Resource, register
from stackling.orchestration.resources.neutron import PORT_EXTRAS, not_found, port_body

NETWORK_KEYS = ("network", "subnet", "fixed_ip", "port", "floating_ip",
                "port_extra_properties", "allocate_network", "tag", "uuid")
# the keys an interface itself answers (upstream's _IFACE_MANAGED_KEYS)
IFACE_KEYS = ("port", "subnet", "network", "fixed_ip")


_DEVICE_NAME = ("A device name where the volume will be attached in the system at "
                "/dev/device_name. This value is typically vda.")
BDM_SCHEMA = {
    "device_name": Property("string", _DEVICE_NAME, required=True),
    "volume_id": Property("string", "The ID of the volume to boot from. Only one of "
                          "volume_id or snapshot_id should be provided.",
                          constraints=[Constraint("custom_constraint", "cinder.volume")]),
    "snapshot_id": Property("string", "The ID of the snapshot to create a volume from.",
                            constraints=[Constraint("custom_constraint", "cinder.snapshot")]),
    "volume_size": Property("integer", "The size of the volume, in GB. It is safe to leave "
                            "this blank and have the Compute service infer the size."),
    "delete_on_termination": Property("boolean", "Indicate whether the volume should be "
                                      "deleted when the server is terminated."),
}
BDM_V2_SCHEMA = {
    "device_name": Property("string", _DEVICE_NAME),
    "volume_id": Property("string", "The volume_id can be boot or non-boot device to the "
                          "server.",
                          constraints=[Constraint("custom_constraint", "cinder.volume")]),
    "image_id": Property("string", "The ID of the image to create a volume from "
                         "(deprecated: use image).",
                         constraints=[Constraint("custom_constraint", "glance.image")]),
    "image": Property("string", "The ID or name of the image to create a volume from.",
                      constraints=[Constraint("custom_constraint", "glance.image")]),
    "snapshot_id": Property("string", "The ID of the snapshot to create a volume from.",
                            constraints=[Constraint("custom_constraint", "cinder.snapshot")]),
    "swap_size": Property("integer", "The size of the swap, in MB."),
    "ephemeral_size": Property("integer", "The size of the local ephemeral block device, "
                               "in GB.", constraints=[Constraint("range", {"min": 1})]),
    "ephemeral_format": Property("string", "The format of the local ephemeral block "
                                 "device. If no format is specified, uses default value, "
                                 "defined in nova configuration file.",
                                 constraints=[Constraint("allowed_values", [
                                     "ext2", "ext3", "ext4", "xfs", "ntfs"])]),
    "device_type": Property("string", "Device type: at the moment we can make distinction "
                            "only between disk and cdrom.",
                            constraints=[Constraint("allowed_values", ["cdrom", "disk"])]),
    "disk_bus": Property("string", "Bus of the device: hypervisor driver chooses a suitable "
                         "default if omitted.",
                         constraints=[Constraint("allowed_values", [
                             "ide", "lame_bus", "sata", "scsi", "usb", "virtio"])]),
    "boot_index": Property("integer", "Integer used for ordering the boot disks. If it is "
                           "not specified, value \"0\" will be set for bootable sources "
                           "(volume, snapshot, image); value \"-1\" will be set for "
                           "non-bootable sources."),
    "volume_size": Property("integer", "Size of the block device in GB. If it is omitted, "
                            "hypervisor driver calculates size."),
    "delete_on_termination": Property("boolean", "Indicate whether the volume should be "
                                      "deleted when the server is terminated. Defaults to "
                                      "\"False\" in case of a volume, snapshot or image and "
                                      "to \"True\" in case of swap or ephemeral."),
    "volume_type": Property("string", "The type of volume to use when creating a volume "
                            "from image, snapshot, or blank source. Maps to a specific "
                            "Cinder backend. Requires Nova API microversion 2.67 or later."),
}


def build_block_device_mapping(bdm: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The legacy `block_device_mapping` as Nova's API takes it (what novaclient makes of
    Heat's `{device: "<id>:[snap]:<size>:<delete>"}`)."""
    out = []
    for m in bdm or []:
        item: dict[str, Any] = {"device_name": m["device_name"]}
        if m.get("snapshot_id"):
            item["snapshot_id"] = m["snapshot_id"]
        else:
            item["volume_id"] = m.get("volume_id")
        if m.get("volume_size"):
            item["volume_size"] = m["volume_size"]
        if m.get("delete_on_termination"):
            item["delete_on_termination"] = True
        out.append(item)
    return out


def build_block_device_mapping_v2(bdm: list[dict[str, Any]] | None,
                                  image_id: Any = None) -> list[dict[str, Any]]:
    """Heat's `_build_block_device_mapping_v2`: each entry's source (volume, snapshot,
    image: a boot disk by default; swap or ephemeral: a local blank disk), then the
    entry's device name and explicit fields. `image_id(ref)` resolves an image name."""
    out = []
    for m in bdm or []:
        item: dict[str, Any]
        image = m.get("image") or m.get("image_id")
        if m.get("volume_id"):
            item = {"uuid": m["volume_id"], "source_type": "volume"}
        elif m.get("snapshot_id"):
            item = {"uuid": m["snapshot_id"], "source_type": "snapshot"}
        elif image:
            item = {"uuid": image_id(image) if image_id else image, "source_type": "image"}
        else:
            item = {"source_type": "blank", "destination_type": "local", "boot_index": -1,
                    "delete_on_termination": True}
            if m.get("swap_size"):
                item.update(guest_format="swap", volume_size=m["swap_size"])
            else:
                if m.get("ephemeral_size"):
                    item["volume_size"] = m["ephemeral_size"]
                if m.get("ephemeral_format"):
                    item["guest_format"] = m["ephemeral_format"]
        if item["source_type"] != "blank":
            item.update(destination_type="volume", boot_index=0, delete_on_termination=False)
        if m.get("device_name"):
            item["device_name"] = m["device_name"]
        for key in ("device_type", "disk_bus", "boot_index", "volume_size",
                    "delete_on_termination", "volume_type"):
            if m.get(key) is not None:
                item[key] = m[key]
        out.append(item)
    return out


def _net() -> Any:
    from stackling.network import interface

    return interface


def _nova() -> Any:
    from stackling.compute import interface

    return interface


def _known(value: Any) -> bool:
    return value is not None and value is not UNKNOWN


@register("OS::Nova::Server")
class Server(Resource):
    """A Nova server, with ports it creates and owns."""

    properties_schema = {
        "name": Property("string", "Server name.", update_allowed=True),
        "image": Property("string", "The ID or name of the image to boot with.",
                          update_allowed=True,
                          constraints=[Constraint("custom_constraint", "glance.image")]),
        "image_update_policy": Property("string", "Policy on how to apply an image-id "
                                        "update.", default="REBUILD", update_allowed=True,
                                        constraints=[Constraint("allowed_values", [
                                            "REBUILD", "REPLACE",
                                            "REBUILD_PRESERVE_EPHEMERAL"])]),
        "flavor": Property("string", "The ID or name of the flavor to boot onto.",
                           required=True, update_allowed=True,
                           constraints=[Constraint("custom_constraint", "nova.flavor")]),
        "flavor_update_policy": Property("string", "Policy on how to apply a flavor update.",
                                         default="RESIZE", update_allowed=True,
                                         constraints=[Constraint("allowed_values",
                                                                 ["RESIZE", "REPLACE"])]),
        "key_name": Property("string", "Name of keypair to inject into the server."),
        "admin_pass": Property("string", "The administrator password for the server.",
                               update_allowed=True),
        "availability_zone": Property("string", "Name of the availability zone."),
        "security_groups": Property("list", "List of security group names or IDs.",
                                    default=[], schema=Property("string")),
        "networks": Property("list", "An ordered list of nics to be added to this server.",
                             update_allowed=True, schema={
                                 "network": Property("string", "Name or ID of network.",
                                                     constraints=[Constraint(
                                                         "custom_constraint",
                                                         "neutron.network")]),
                                 "uuid": Property("string", "Deprecated: network."),
                                 "subnet": Property("string", "Subnet in which to allocate "
                                                    "the IP address for port.",
                                                    constraints=[Constraint(
                                                        "custom_constraint",
                                                        "neutron.subnet")]),
                                 "fixed_ip": Property("string", "Fixed IP address.",
                                                      constraints=[Constraint(
                                                          "custom_constraint", "ip_addr")]),
                                 "port": Property("string", "ID of an existing port.",
                                                  constraints=[Constraint(
                                                      "custom_constraint", "neutron.port")]),
                                 "floating_ip": Property("string", "ID of the floating IP "
                                                         "to associate."),
                                 "port_extra_properties": Property(
                                     "map", "Extra properties for the port Heat creates.",
                                     schema=PORT_EXTRAS),
                                 "allocate_network": Property("string", "auto or none.",
                                                              constraints=[Constraint(
                                                                  "allowed_values",
                                                                  ["auto", "none"])]),
                                 "tag": Property("string", "Port tag."),
                             }),
        "scheduler_hints": Property("map", "Arbitrary key-value pairs for the scheduler."),
        "metadata": Property("map", "Arbitrary key/value metadata.", update_allowed=True),
        "user_data_format": Property("string", "How the user_data should be formatted.",
                                     default="HEAT_CFNTOOLS", constraints=[Constraint(
                                         "allowed_values", ["HEAT_CFNTOOLS", "RAW",
                                                            "SOFTWARE_CONFIG"])]),
        "user_data": Property("string", "User data script.", default="", update_allowed=True),
        "user_data_update_policy": Property("string", "Policy on how to apply a user_data "
                                            "update.", default="REPLACE", update_allowed=True,
                                            constraints=[Constraint("allowed_values", [
                                                "REPLACE", "IGNORE", "REBUILD"])]),
        "config_drive": Property("boolean", "Enable config drive on the server."),
        "diskConfig": Property("string", "Control how the disk is partitioned.",
                               constraints=[Constraint("allowed_values",
                                                       ["AUTO", "MANUAL"])]),
        "tags": Property("list", "Server tags.", update_allowed=True,
                         schema=Property("string")),
        "reservation_id": Property("string", "A UUID for the set of servers being requested."),
        "block_device_mapping": Property("list", "Block device mappings for this server.",
                                         schema=BDM_SCHEMA),
        "block_device_mapping_v2": Property("list", "Block device mappings v2 for this "
                                            "server.", schema=BDM_V2_SCHEMA),
        "personality": Property("map", "Files to inject (removed at compute 2.57).",
                                default={}),
        "software_config_transport": Property("string", "How the server receives software "
                                              "configuration.", default="POLL_SERVER_CFN",
                                              update_allowed=True),
        "deployment_swift_data": Property("map", "Swift container and object for "
                                          "deployment data.", default={},
                                          update_allowed=True),
    }
    attributes_schema = {
        "show": "A dict of all server details as returned by the API.",
        "addresses": "A dict of all network addresses with corresponding port_id.",
        "networks": "A dict of assigned network addresses of the form {name: [ip, ...]}.",
        "first_address": "Convenience attribute to fetch the first assigned network address.",
        "name": "Name of the server.",
        "instance_name": "AWS compatible instance name.",
        "accessIPv4": "The manually assigned alternative public IPv4 address.",
        "accessIPv6": "The manually assigned alternative public IPv6 address.",
        "console_urls": "URLs of server's consoles.",
        "tags": "Tags from the server.",
        "os_collect_config": "The os-collect-config configuration.",
    }

    # ------------------------------------------------------------------ validation
    @classmethod
    def implicit_dependencies(cls, name: str, definition: dict[str, Any],
                              definitions: dict[str, dict[str, Any]]) -> list[str]:
        """As upstream: the stack's subnets on the server's networks, and every subnet of
        the stack (and one whose network is unknown) when an entry names no network
        (`port`, `subnet`): the server may be on any of them."""
        props = definition.get("properties") or {}
        nets = props.get("networks")
        if not isinstance(nets, list) or not nets:
            return []
        wanted = [(entry.get("network") or entry.get("uuid")) if isinstance(entry, dict) else None
                  for entry in nets]
        out = []
        for n, d in definitions.items():
            if d.get("type") != "OS::Neutron::Subnet":
                continue
            subnet_net = (d.get("properties") or {}).get("network")
            if not subnet_net or any(not w or w == subnet_net for w in wanted):
                out.append(n)
        return out

    def _validate_block_device_mapping(self) -> None:
        """Heat's checks: one syntax; per legacy mapping one of volume_id/snapshot_id; per
        v2 mapping one source; something to boot from, and (v2) exactly one."""
        bdm = self.properties.get("block_device_mapping") or []
        bdm_v2 = self.properties.get("block_device_mapping_v2") or []
        if bdm is UNKNOWN or bdm_v2 is UNKNOWN:
            return
        if bdm and bdm_v2:
            raise ResourcePropertyConflict(props="block_device_mapping, "
                                                 "block_device_mapping_v2")
        image = self.properties.get("image")
        bootable = image is not None
        for m in bdm:
            if m is UNKNOWN:
                return
            if m.get("device_name") == "vda":
                bootable = True
            if m.get("volume_id") is not None and m.get("snapshot_id") is not None:
                raise ResourcePropertyConflict(props="volume_id, snapshot_id")
            if m.get("volume_id") is None and m.get("snapshot_id") is None:
                raise StackValidationFailed(f"Either volume_id or snapshot_id must be "
                                            f"specified for device mapping "
                                            f"{m.get('device_name')}")
        bootable_devs = [image]
        for m in bdm_v2:
            if m is UNKNOWN:
                return
            sources = (m.get("volume_id"), m.get("snapshot_id"),
                       m.get("image") or m.get("image_id"), m.get("swap_size"),
                       m.get("ephemeral_size") or m.get("ephemeral_format"))
            given = sum(1 for v in sources if v is not None)
            if given > 1:
                raise ResourcePropertyConflict(props="volume_id, snapshot_id, image, "
                                                     "swap_size, ephemeral_size, "
                                                     "ephemeral_format")
            if given == 0:
                raise StackValidationFailed("Either volume_id, snapshot_id, image_id, "
                                            "swap_size, ephemeral_size or ephemeral_format "
                                            "must be specified.")
            if any(v is not None for v in sources[:3]) and m.get("boot_index") in (None, 0):
                bootable = True
                bootable_devs.extend(sources[:3])
        if not bootable:
            raise StackValidationFailed(f"Neither image nor bootable volume is specified for "
                                        f"instance {self.name}")
        if bdm_v2 and sum(1 for d in bootable_devs if d is not None) != 1:
            raise StackValidationFailed(f"Multiple bootable sources for instance {self.name}.")

    def validate(self) -> None:
        self._validate_block_device_mapping()
        nets = self.properties.get("networks") or []
        if nets is UNKNOWN:
            return
        for entry in nets:
            if entry is UNKNOWN:
                continue
            given = {k for k, v in entry.items() if v is not None}
            if not given & {"network", "port", "subnet", "allocate_network", "uuid"}:
                raise StackValidationFailed(
                    f'Property error: resources.{self.name}.properties.networks: One of the '
                    f'properties "network", "port", "allocate_network" or "subnet" should be '
                    f'set for the specified network of server "{self.name}".')
            if "allocate_network" in given:
                if len(given) > 1:
                    raise StackValidationFailed(
                        'Can not specify "allocate_network" with other keys of networks at '
                        "the same time.")
                if len(nets) > 1:
                    raise StackValidationFailed(
                        "If \"allocate_network\" property is set, \"networks\" must contain "
                        "only one network.")
            if "fixed_ip" in given and "port" in given:
                raise ResourcePropertyConflict(props="fixed_ip, port")
            if "floating_ip" in given and not given & {"port", "subnet",
                                                       "port_extra_properties"}:
                raise StackValidationFailed(
                    'Property "floating_ip" is not supported if only "network" is specified, '
                    "because the corresponding port can not be retrieved.")
            if "port" in given and self.properties.get("security_groups"):
                raise ResourcePropertyConflict(props="security_groups, networks/port")
            network, subnet = entry.get("network") or entry.get("uuid"), entry.get("subnet")
            if _known(network) and _known(subnet):
                try:
                    net_id = self.find(constraints.find_network, network)["id"]
                    sub = self.find(constraints.find_subnet, subnet)
                except ValueError:
                    continue  # the custom constraint reports it
                if sub["network_id"] != net_id:
                    raise StackValidationFailed(
                        f"Specified subnet {subnet} does not belongs to network {network}.")

    # ------------------------------------------------------------------ ports
    def _internal(self) -> list[dict[str, Any]]:
        return list(self.data_get("internal_ports") or [])

    def _security_group_ids(self) -> list[str] | None:
        groups = self.properties.get("security_groups") or []
        if not groups:
            return None
        return [self.find(constraints.find_security_group, g)["id"] for g in groups]

    def _create_port(self, index: int, entry: dict[str, Any],
                     unrecorded: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """An internal port for entry `index`: recorded in data before it is used, or
        appended to `unrecorded` for the caller to record (with the server's id: one
        write of the resource row instead of two)."""
        network = entry.get("network") or entry.get("uuid")
        subnet = entry.get("subnet")
        body: dict[str, Any] = {"name": f"{self.name}-port-{index}",
                                "tags": [f"heat-stack:{self.scope.stack.id}",
                                         f"heat-resource:{self.name}"]}
        if subnet:
            sub = self.find(constraints.find_subnet, subnet)
            body["network_id"] = sub["network_id"]
            ip = {"subnet_id": sub["id"]}
            if entry.get("fixed_ip"):
                ip["ip_address"] = entry["fixed_ip"]
            body["fixed_ips"] = [ip]
        else:
            body["network_id"] = self.find(constraints.find_network, network)["id"]
            if entry.get("fixed_ip"):
                body["fixed_ips"] = [{"ip_address": entry["fixed_ip"]}]
        groups = self._security_group_ids()
        if groups is not None:
            body["security_groups"] = groups
        body.update(port_body(self.db, self.ctx, entry.get("port_extra_properties") or {}))
        port = _net().create_port(self.db, self.ctx, body)
        made = {"id": port["id"], "index": index, "entry": _entry_key(entry)}
        if unrecorded is not None:
            unrecorded.append(made)
        else:
            self.data_set("internal_ports", self._internal() + [made])
        return port

    def _port_for(self, entry: dict[str, Any]) -> str | None:
        key = _entry_key(entry)
        for p in self._internal():
            if p.get("entry") == key:
                return p["id"]
        if entry.get("port"):
            return constraints.find_port(self.db, self.ctx, entry["port"])["id"]
        return None

    def _associate(self, entry: dict[str, Any], port_id: str) -> None:
        body: dict[str, Any] = {"port_id": port_id}
        if entry.get("fixed_ip"):
            body["fixed_ip_address"] = entry["fixed_ip"]
        _net().update_resource(self.db, self.ctx, "floatingip", entry["floating_ip"], body,
                               render=False)

    def _disassociate(self, entry: dict[str, Any]) -> None:
        try:
            _net().update_resource(self.db, self.ctx, "floatingip", entry["floating_ip"],
                                   {"port_id": None}, render=False)
        except ApiError as err:
            if not not_found(err):
                raise

    def _nics(self, nets: list[dict[str, Any]], unrecorded: list[dict[str, Any]]) -> Any:
        if len(nets) == 1 and nets[0].get("allocate_network"):
            return nets[0]["allocate_network"]
        nics = []
        for index, entry in enumerate(nets):
            if entry.get("port"):
                nic = {"port": constraints.find_port(self.db, self.ctx, entry["port"])["id"]}
            else:
                port = self._create_port(index, entry, unrecorded)
                nic = {"port": port["id"]}
            if entry.get("tag"):
                nic["tag"] = entry["tag"]
            nics.append(nic)
        return nics

    # ------------------------------------------------------------------ lifecycle
    def handle_create(self) -> Any:
        props = self.properties
        flavor = self.find(constraints.find_flavor, props["flavor"])
        server: dict[str, Any] = {"name": props.get("name") or self.physical_resource_name(),
                                  "flavorRef": flavor["id"]}
        if props.get("image"):
            server["imageRef"] = self.find(constraints.find_image, props["image"])["id"]
        if props.get("block_device_mapping"):
            server["block_device_mapping"] = build_block_device_mapping(
                props["block_device_mapping"])
        if props.get("block_device_mapping_v2"):
            server["block_device_mapping_v2"] = build_block_device_mapping_v2(
                props["block_device_mapping_v2"],
                lambda ref: self.find(constraints.find_image, ref)["id"])
        nets = props.get("networks") or []
        # The ports are recorded with the server's id, before it is built on them; a
        # failure before that rolls the savepoint (ports included) back.
        made: list[dict[str, Any]] = []
        server["networks"] = self._nics(nets, made) if nets else "auto"
        if props.get("security_groups") and not isinstance(server["networks"], list):
            server["security_groups"] = [{"name": g} for g in props["security_groups"]]
        for key, target in (("key_name", "key_name"), ("availability_zone",
                                                        "availability_zone"),
                            ("config_drive", "config_drive"), ("admin_pass", "adminPass"),
                            ("diskConfig", "OS-DCF:diskConfig")):
            if props.get(key) is not None:
                server[target] = props[key]
        if props.get("metadata"):
            server["metadata"] = _metadata(props["metadata"])
        if props.get("user_data"):
            server["user_data"] = base64.b64encode(props["user_data"].encode()).decode()
        if props.get("tags"):
            server["tags"] = props["tags"]
        # as Heat hands them to Nova: strings and lists as they are, other values as text
        hints = {k: v if isinstance(v, (str, list)) else str(v)
                 for k, v in (props.get("scheduler_hints") or {}).items()}
        created = _nova().create_server(self.db, self.ctx, server, render=False,
                                        scheduler_hints=hints or None)[0]
        self.set_resource_id(created["id"])
        if made:
            self.data_set("internal_ports", self._internal() + made)
        built = _nova().build_now(self.db, self.ctx, created["id"])
        if built["status"] == "ERROR":
            raise ResourceFailureKeep(_error(built))
        if built["status"] != "ACTIVE":  # its volumes are being made: the build goes on
            return {"build": True}
        self._after_build()
        return None

    def check_create_complete(self, token: Any) -> bool:
        """A server waiting for its volumes (image, snapshot or blank sources) is built by
        compute's workers once Cinder made them: polled until ACTIVE, as Heat does."""
        if not token:
            return True
        server = _nova().get_server(self.db, self.ctx, self.resource_id)
        if server["status"] == "ERROR":
            raise ResourceFailureKeep(_error(server))
        if server["status"] != "ACTIVE":
            from stackling.block_storage import interface as cinder

            cinder.wake(self.runtime)  # (the volumes' files)
            _nova().wake_builder(self.runtime)
            return False
        self._after_build()
        return True

    def _after_build(self) -> None:
        nets = self.properties.get("networks") or []
        server_networks = "auto" if not nets else (
            nets[0]["allocate_network"] if len(nets) == 1 and nets[0].get("allocate_network")
            else nets)
        for entry in nets:
            if entry.get("floating_ip"):
                port_id = self._port_for(entry)
                if port_id is not None:
                    self._associate(entry, port_id)
        if not isinstance(server_networks, list) or any(e.get("port") for e in nets):
            self._refresh_external()
        else:  # every nic is a port this resource made: no interface listing needed
            self.data_set("external_ports", [])

    def _refresh_external(self) -> None:
        internal = {p["id"] for p in self._internal()}
        try:
            ifaces = _nova().list_interfaces(self.db, self.ctx, self.resource_id)
        except ApiError:
            return
        self.data_set("external_ports", [{"id": i["port_id"]} for i in ifaces
                                         if i["port_id"] not in internal])

    def handle_delete(self) -> Any:
        for entry in self.properties.get("networks") or []:
            if entry.get("floating_ip") and entry.get("port"):
                self._disassociate(entry)
        if self.resource_id is not None:
            try:
                _nova().delete_server(self.db, self.ctx, self.resource_id)
            except ApiError as err:
                if not not_found(err):
                    raise
        for port in self._internal():
            try:
                _net().delete_port(self.db, self.ctx, port["id"])
            except ApiError as err:
                if not not_found(err):
                    raise
        self.data_set("internal_ports", [])
        return None

    def needs_replace(self, old_properties: dict[str, Any], changed: set[str]) -> bool:
        p = self.properties
        if "image" in changed and p.get("image_update_policy") == "REPLACE":
            return True
        if "flavor" in changed and p.get("flavor_update_policy") == "REPLACE":
            return True
        if "user_data" in changed and p.get("user_data_update_policy") == "REPLACE":
            return True
        return super().needs_replace(old_properties, changed)

    def handle_update(self, old_properties: dict[str, Any], changed: set[str]) -> Any:
        p = self.properties
        sid = self.resource_id
        rebuilt = False
        if "flavor" in changed:
            flavor = self.find(constraints.find_flavor, p["flavor"])
            old = self.find(constraints.find_flavor, old_properties["flavor"])
            if flavor["id"] != old["id"]:
                _nova().resize_server(self.db, self.ctx, sid, flavor["id"])
        if "image" in changed or ("user_data" in changed
                                  and p.get("user_data_update_policy") == "REBUILD"):
            values: dict[str, Any] = {"imageRef": self.find(constraints.find_image,
                                                            p["image"])["id"]}
            _nova().rebuild_server(self.db, self.ctx, sid, values)
            rebuilt = True
        if "name" in changed:
            _nova().update_server(self.db, self.ctx, sid,
                                  {"name": p.get("name") or self.physical_resource_name()})
        if "metadata" in changed:  # replaces the server's metadata, as Heat's meta_update
            _nova().set_server_metadata(self.db, self.ctx, sid, _metadata(p.get("metadata")))
        if "tags" in changed:
            _nova().set_server_tags(self.db, self.ctx, sid, list(p.get("tags") or []))
        if "networks" in changed:
            self._update_networks(old_properties.get("networks") or [],
                                  p.get("networks") or [])
        return "rebuild" if rebuilt else None

    def check_update_complete(self, token: Any) -> bool:
        """As Heat's check_rebuild: the update ends once the server left REBUILD (compute
        holds it there for its minimum action duration)."""
        if token != "rebuild":
            return True
        return _nova().get_server(self.db, self.ctx, self.resource_id)["status"] != "REBUILD"

    def _update_networks(self, old: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
        """Upstream's network update: each old entry is completed with the interface it
        made (port, network, first fixed IP and subnet), then each new entry, in order, is
        matched one to one against them (`_best_match`); only what is left over is
        detached (old) or attached (new), so a kept interface keeps its port and address
        (e.g. `network` -> `subnet` of that network, or -> `port` of that very port)."""
        nova, neutron, sid = _nova(), _net(), self.resource_id
        records = self._internal()
        internal_ids = {r["id"] for r in records}
        olds = self._with_interfaces(old, records)
        kept: list[tuple[int, str | None]] = []  # (new index, port id)
        to_add: list[tuple[int, dict[str, Any]]] = []
        for index, entry in enumerate(new):
            want = self._normalized(entry)
            reduced = {k: v for k, v in want.items() if k not in IFACE_KEYS or v is not None}
            match = _best_match(olds, reduced)
            if match is None:  # the same interface with other port_extra_properties
                match = _best_match(olds, {k: v for k, v in reduced.items()
                                           if k != "port_extra_properties"})
                if match is not None and match["port"] in internal_ids:
                    neutron.update_port(self.db, self.ctx, match["port"], port_body(
                        self.db, self.ctx, entry.get("port_extra_properties") or {}))
                else:
                    match = None
            if match is None:
                to_add.append((index, entry))
                continue
            olds.remove(match)
            kept.append((index, match["port"]))
        for gone in olds:  # detach first, one at a time
            if gone.get("floating_ip"):
                self._disassociate(gone)
            port_id = gone["port"]
            if port_id is None:
                continue
            try:
                nova.detach_interface(self.db, self.ctx, sid, port_id)
            except ApiError as err:
                if not not_found(err):
                    raise
            if port_id in internal_ids:
                try:
                    neutron.delete_port(self.db, self.ctx, port_id)
                except ApiError as err:
                    if not not_found(err):
                        raise
        made: list[dict[str, Any]] = []
        for index, entry in to_add:
            if entry.get("allocate_network"):
                if entry["allocate_network"] == "auto":
                    nova.attach_interface(self.db, self.ctx, sid)
                continue
            if entry.get("port"):
                port_id = constraints.find_port(self.db, self.ctx, entry["port"])["id"]
            else:
                port_id = self._create_port(index, entry, made)["id"]
            nova.attach_interface(self.db, self.ctx, sid, port_id=port_id)
            if entry.get("floating_ip"):
                self._associate(entry, port_id)
        # the internal ports, each under the new entry it serves now (kept ones keep
        # their port, so `_port_for` finds them by the new entry)
        self.data_set("internal_ports", sorted(
            [{"id": pid, "index": i, "entry": _entry_key(new[i])} for i, pid in kept
             if pid in internal_ids] + made, key=lambda r: r["index"]))
        if not new and not kept:
            nova.attach_interface(self.db, self.ctx, sid)
        self._refresh_external()

    def _normalized(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Every key present (None when not given), names resolved to ids (`uuid` is
        `network`), as upstream's translated properties are compared."""
        out: dict[str, Any] = {k: entry.get(k) or None for k in NETWORK_KEYS if k != "uuid"}
        out["network"] = entry.get("network") or entry.get("uuid") or None
        finders = {"network": constraints.find_network, "subnet": constraints.find_subnet,
                   "port": constraints.find_port}
        for key, finder in finders.items():
            if out[key] is not None:
                try:
                    out[key] = finder(self.db, self.ctx, out[key])["id"]
                except (ValueError, ApiError):
                    pass  # gone or ambiguous: compared as given
        return out

    def _with_interfaces(self, old: list[dict[str, Any]], records: list[dict[str, Any]]
                         ) -> list[dict[str, Any]]:
        """The old entries, each completed with its interface's port, network, first
        fixed IP and subnet (upstream's `update_networks_matching_iface_port`): the
        internal port recorded for it, else its own `port`, else the best match."""
        ifaces = []
        for port in _net().list_ports(self.db, self.ctx, device_id=self.resource_id):
            ip = port["fixed_ips"][0] if port["fixed_ips"] else {}
            ifaces.append({"port": port["id"], "network": port["network_id"],
                           "fixed_ip": ip.get("ip_address"), "subnet": ip.get("subnet_id")})
        by_index = {(r.get("index"), r.get("entry")): r["id"] for r in records}
        out = []
        for index, entry in enumerate(old):
            norm = self._normalized(entry)
            port_id = by_index.get((index, _entry_key(entry))) or self._port_for_key(
                entry, records)
            if port_id is not None:
                iface = next((i for i in ifaces if i["port"] == port_id), None)
            else:
                reduced = {k: v for k, v in norm.items() if k in IFACE_KEYS and v is not None}
                iface = _best_match(ifaces, reduced)
            if iface is not None:
                ifaces.remove(iface)
                norm.update(iface)
            else:
                norm["port"] = port_id
            out.append(norm)
        return out

    def _port_for_key(self, entry: dict[str, Any], records: list[dict[str, Any]]
                      ) -> str | None:
        key = _entry_key(entry)
        found = next((r["id"] for r in records if r.get("entry") == key), None)
        if found is None and entry.get("port"):
            try:
                found = constraints.find_port(self.db, self.ctx, entry["port"])["id"]
            except (ValueError, ApiError):
                return None
        return found

    # ------------------------------------------------------------------ replacement
    def _user_ports(self) -> list[str]:
        """The ports of `port` entries this server has (data `external_ports`)."""
        return [p["id"] for p in self.data_get("external_ports") or []]

    def prepare_for_replace(self) -> None:
        """Free the fixed IPs of the internal ports for the replacement server, and detach
        the user's ports from this one so that the replacement can take them (upstream's
        `prepare_ports_for_replace`); otherwise its build fails PortInUse."""
        neutron = _net()
        for port_id in self._user_ports():
            try:
                _nova().detach_interface(self.db, self.ctx, self.resource_id, port_id)
            except ApiError as err:
                if not not_found(err):
                    raise
        saved = {}
        for p in self._internal():
            try:
                port = neutron.get_port(self.db, self.ctx, p["id"])
            except ApiError:
                continue
            if port["fixed_ips"]:
                saved[p["id"]] = [{"subnet_id": f["subnet_id"], "ip_address": f["ip_address"]}
                                  for f in port["fixed_ips"]]
                neutron.update_port(self.db, self.ctx, p["id"], {"fixed_ips": []})
        if saved:
            self.data_set("port_fip", saved)

    def restore_prev_rsrc(self) -> None:
        """After the replacement is deleted: the internal ports' addresses back, the
        user's ports attached again (upstream's `restore_ports_after_rollback`)."""
        neutron = _net()
        for port_id, ips in (self.data_get("port_fip") or {}).items():
            try:
                neutron.update_port(self.db, self.ctx, port_id, {"fixed_ips": ips})
            except ApiError as err:
                if not not_found(err):
                    raise
        self.data_delete("port_fip")
        if self.resource_id is None:
            return
        attached = {i["port_id"] for i in _nova().list_interfaces(self.db, self.ctx,
                                                                   self.resource_id)}
        for port_id in self._user_ports():
            if port_id in attached:
                continue
            try:
                _nova().attach_interface(self.db, self.ctx, self.resource_id,
                                         port_id=port_id)
            except ApiError as err:
                if not not_found(err):
                    raise

    # ------------------------------------------------------------------ suspend/resume
    def handle_suspend(self) -> None:
        _nova().server_action(self.db, self.ctx, self.resource_id, "suspend")

    def handle_resume(self) -> None:
        _nova().server_action(self.db, self.ctx, self.resource_id, "resume")

    def handle_check(self) -> None:
        server = _nova().get_server(self.db, self.ctx, self.resource_id)
        if server["status"] != "ACTIVE":
            raise ApiError(f"Server {self.resource_id} is {server['status']}")

    # ------------------------------------------------------------------ attributes
    def show(self) -> Any:
        return _nova().get_server(self.db, self.ctx, self.resource_id)

    def attribute(self, name: str) -> Any:
        server = self.show()
        if name == "name":
            return server["name"]
        if name in ("accessIPv4", "accessIPv6"):
            return server.get(name)
        if name == "instance_name":
            return server.get("OS-EXT-SRV-ATTR:instance_name")
        if name == "tags":
            return server.get("tags")
        if name == "networks":
            return self._networks(server)
        if name == "first_address":
            nets = self._networks(server)
            for label in sorted(nets, reverse=True):
                if nets[label]:
                    return nets[label][0]
            return ""
        if name == "addresses":
            return self._addresses(server)
        return None

    def _networks(self, server: dict[str, Any]) -> dict[str, list[str]]:
        """Each network's addresses, fixed then floating, under its name and its id."""
        addresses = self._addresses(server)
        out = {label: [a["addr"] for a in items] for label, items in addresses.items()}
        for label, items in addresses.items():
            fixed = next((a for a in items if a.get("network")), None)
            if fixed is not None:
                out[fixed["network"]["id"]] = out[label]
        return out

    def _addresses(self, server: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
        """As Nova's `addresses` (per network name: each port's fixed addresses, then its
        floating ones), each with upstream's `port`, `subnets` and `network` (None for a
        floating address, whose (address, MAC) is no interface's)."""
        neutron = _net()
        out: dict[str, list[dict[str, Any]]] = {}
        ports = neutron.list_ports(self.db, self.ctx, device_id=self.resource_id)
        fips = neutron.list_floatingips(self.db, self.ctx, port_id=[p["id"] for p in ports]
                                        ) if ports else []
        networks: dict[str, dict[str, Any]] = {}
        for port in ports:
            if port["network_id"] not in networks:
                networks[port["network_id"]] = neutron.get_network(self.db, self.ctx,
                                                                   port["network_id"])
            network = networks[port["network_id"]]
            items = out.setdefault(network.get("name") or port["network_id"], [])
            mac = port["mac_address"]
            for ip in port["fixed_ips"]:
                items.append({"addr": ip["ip_address"],
                              "version": 6 if ":" in ip["ip_address"] else 4,
                              "OS-EXT-IPS-MAC:mac_addr": mac, "OS-EXT-IPS:type": "fixed",
                              "port": port["id"],
                              "subnets": [neutron.get_subnet(self.db, self.ctx,
                                                             ip["subnet_id"])],
                              "network": network})
            for f in fips:
                if f.get("port_id") == port["id"]:
                    items.append({"addr": f["floating_ip_address"], "version": 4,
                                  "OS-EXT-IPS-MAC:mac_addr": mac,
                                  "OS-EXT-IPS:type": "floating", "port": None,
                                  "subnets": None, "network": None})
        return out


def _error(server: dict[str, Any]) -> str:
    fault = server.get("fault") or {}
    return (f'Went to status ERROR due to "Message: {fault.get("message")}, Code: '
            f'{fault.get("code")}"')


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def _metadata(value: dict[str, Any] | None) -> dict[str, str]:
    """Nova takes string values only: Heat sends the others as JSON."""
    return {k: v if isinstance(v, str) else _json(v) for k, v in (value or {}).items()}


def _entry_key(entry: dict[str, Any]) -> str:
    """An entry's identity for matching old and new `networks` lists."""
    import json

    return json.dumps({k: v for k, v in sorted(entry.items()) if v is not None},
                      sort_keys=True, default=str)


def _best_match(candidates: list[dict[str, Any]], wanted: dict[str, Any]
                ) -> dict[str, Any] | None:
    """Upstream's `_find_best_match`: by `port`, else by `fixed_ip`, else the first
    candidate of which `wanted` is a subset, preferring more matching keys."""
    def subset(c: dict[str, Any]) -> bool:
        return all(k in c and c[k] == v for k, v in wanted.items())

    for key in ("port", "fixed_ip"):
        if wanted.get(key) is not None:
            return next((c for c in candidates if c.get(key) == wanted[key] and subset(c)),
                        None)
    best, most = None, -1
    for c in candidates:
        if subset(c):
            count = sum(1 for k, v in wanted.items() if k in c and c[k] == v)
            if count > most:
                best, most = c, count
    return best
