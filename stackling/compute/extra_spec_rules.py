"""Nova's known flavor extra specs (2.86 validation), as data: one row per spec,
(name, value type, value constraints, name parameters). A `{param}` in the name matches
its pattern; `resources{group}:` and `trait{group}:` specs are checked against the
os-resource-classes and os-traits catalogues (as Nova builds its table from them).

An unknown key in a namespace Nova knows (`hw:`, `os:`, `quota:`...) is refused; keys
outside those namespaces are anyone's and pass.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import os_resource_classes
import os_traits

from stackling.common.listing import FALSE_STRINGS, TRUE_STRINGS

_GROUP = {"group": r"([a-zA-Z0-9_-]{1,64})?"}

ROWS: tuple[tuple[str, str, dict[str, Any], dict[str, str]], ...] = (
    ('accel:device_profile', 'str', {}, {}),
    ('aggregate_instance_extra_specs:{key}', 'str', {}, {'key': '.+'}),
    ('capabilities:id', 'str', {}, {}),
    ('capabilities:uuid', 'str', {}, {}),
    ('capabilities:service_id', 'str', {}, {}),
    ('capabilities:host', 'str', {}, {}),
    ('capabilities:vcpus', 'str', {}, {}),
    ('capabilities:memory_mb', 'str', {}, {}),
    ('capabilities:local_gb', 'str', {}, {}),
    ('capabilities:vcpus_used', 'str', {}, {}),
    ('capabilities:memory_mb_used', 'str', {}, {}),
    ('capabilities:local_gb_used', 'str', {}, {}),
    ('capabilities:hypervisor_type', 'str', {}, {}),
    ('capabilities:hypervisor_version', 'str', {}, {}),
    ('capabilities:hypervisor_hostname', 'str', {}, {}),
    ('capabilities:free_ram_mb', 'str', {}, {}),
    ('capabilities:free_disk_gb', 'str', {}, {}),
    ('capabilities:current_workload', 'str', {}, {}),
    ('capabilities:running_vms', 'str', {}, {}),
    ('capabilities:disk_available_least', 'str', {}, {}),
    ('capabilities:host_ip', 'str', {}, {}),
    ('capabilities:mapped', 'str', {}, {}),
    ('capabilities:cpu_allocation_ratio', 'str', {}, {}),
    ('capabilities:ram_allocation_ratio', 'str', {}, {}),
    ('capabilities:disk_allocation_ratio', 'str', {}, {}),
    ('capabilities:total_usable_ram_mb', 'str', {}, {}),
    ('capabilities:total_usable_disk_gb', 'str', {}, {}),
    ('capabilities:disk_mb_used', 'str', {}, {}),
    ('capabilities:free_disk_mb', 'str', {}, {}),
    ('capabilities:vcpus_total', 'str', {}, {}),
    ('capabilities:vcpus_used', 'str', {}, {}),
    ('capabilities:num_instances', 'str', {}, {}),
    ('capabilities:num_io_ops', 'str', {}, {}),
    ('capabilities:failed_builds', 'str', {}, {}),
    ('capabilities:aggregates', 'str', {}, {}),
    ('capabilities:cell_uuid', 'str', {}, {}),
    ('capabilities:updated', 'str', {}, {}),
    ('capabilities:cpu_info{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:metrics{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:stats{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:numa_topology{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:supported_hv_specs{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:pci_device_pools{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:nodename{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:pci_stats{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:supported_instances{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:limits{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('capabilities:instances{filter}', 'str', {}, {'filter': '(:\\w+)*'}),
    ('hw:cpu_realtime', 'bool', {}, {}),
    ('hw:cpu_realtime_mask', 'str', {'pattern': '(\\^)?\\d+((-\\d+)?(,\\^?\\d+(-\\d+)?)?)*'}, {}),
    ('hw:hide_hypervisor_id', 'bool', {}, {}),
    ('hw:cpu_policy', 'str', {'enum': ['dedicated', 'shared', 'mixed']}, {}),
    ('hw:cpu_thread_policy', 'str', {'enum': ['prefer', 'isolate', 'require']}, {}),
    ('hw:emulator_threads_policy', 'str', {'enum': ['isolate', 'share']}, {}),
    ('hw:cpu_dedicated_mask', 'str', {'pattern': '\\^?\\d+((-\\d+)?(,\\^?\\d+(-\\d+)?)?)*'}, {}),
    ('hw:mem_page_size', 'str', {'pattern': '(large|small|any|\\d+([kKMGT]i?)?(b|bit|B)?)'}, {}),
    ('hw:locked_memory', 'bool', {}, {}),
    ('hw:numa_nodes', 'int', {'min': 1}, {}),
    ('hw:numa_cpus.{num}', 'str', {'pattern': '\\^?\\d+((-\\d+)?(,\\^?\\d+(-\\d+)?)?)*'}, {'num': '\\d+'}),
    ('hw:numa_mem.{num}', 'int', {'min': 1}, {'num': '\\d+'}),
    ('hw:pci_numa_affinity_policy', 'str', {'enum': ['required', 'preferred', 'legacy', 'socket']}, {}),
    ('hw:cpu_sockets', 'int', {'min': 1}, {}),
    ('hw:cpu_cores', 'int', {'min': 1}, {}),
    ('hw:cpu_threads', 'int', {'min': 1}, {}),
    ('hw:cpu_max_sockets', 'int', {'min': 1}, {}),
    ('hw:cpu_max_cores', 'int', {'min': 1}, {}),
    ('hw:cpu_max_threads', 'int', {'min': 1}, {}),
    ('hw:boot_menu', 'bool', {}, {}),
    ('hw:vif_multiqueue_enabled', 'bool', {}, {}),
    ('hw:mem_encryption', 'bool', {}, {}),
    ('hw:mem_encryption_model', 'str', {'enum': ['amd-sev', 'amd-sev-es', 'amd-sev-snp']}, {}),
    ('hw:pmem', 'str', {'pattern': '([a-zA-Z0-9_]+(,)?)+'}, {}),
    ('hw:pmu', 'bool', {}, {}),
    ('hw:serial_port_count', 'int', {'min': 0}, {}),
    ('hw:tpm_model', 'str', {'enum': ['tpm-tis', 'tpm-crb']}, {}),
    ('hw:tpm_version', 'str', {'enum': ['1.2', '2.0']}, {}),
    ('hw:tpm_secret_security', 'str', {'enum': ['user', 'host', 'deployment']}, {}),
    ('hw:watchdog_action', 'str', {'enum': ['none', 'pause', 'poweroff', 'reset', 'disabled']}, {}),
    ('hw:viommu_model', 'str', {'enum': ['intel', 'smmuv3', 'virtio', 'auto']}, {}),
    ('hw:virtio_packed_ring', 'bool', {}, {}),
    ('hw:sound_model', 'str',
     {'enum': ['sb16', 'es1370', 'pcspk', 'ac97', 'ich6', 'ich9', 'usb', 'virtio']}, {}),
    ('hw:usb_model', 'str', {'enum': ['none', 'nec-xhci', 'qemu-xhci']}, {}),
    ('hw:redirected_usb_ports', 'int', {'min': 0, 'max': 15}, {}),
    ('hw:ephemeral_encryption', 'bool', {}, {}),
    ('hw:ephemeral_encryption_format', 'str', {'enum': ['plain', 'luks', 'luksv2']}, {}),
    ('hw_rng:allowed', 'bool', {}, {}),
    ('hw_rng:rate_bytes', 'int', {'min': 0}, {}),
    ('hw_rng:rate_period', 'int', {'min': 0}, {}),
    ('hw_video:ram_max_mb', 'int', {'min': 0}, {}),
    ('hide_hypervisor_id', 'bool', {}, {}),
    ('group_policy', 'str', {'enum': ['isolate', 'none']}, {}),
    ('os:secure_boot', 'str', {'enum': ['disabled', 'required']}, {}),
    ('pci_passthrough:alias', 'str', {'pattern': '[^:]+:\\d+(?:\\s*,\\s*[^:]+:\\d+)*'}, {}),
    ('quota:cpu_limit', 'int', {'min': 0}, {}),
    ('quota:cpu_reservation', 'int', {}, {}),
    ('quota:cpu_shares_level', 'str', {'enum': ['custom', 'high', 'normal', 'low']}, {}),
    ('quota:cpu_shares_share', 'int', {'min': 0}, {}),
    ('quota:memory_limit', 'int', {'min': 0}, {}),
    ('quota:memory_reservation', 'int', {}, {}),
    ('quota:memory_shares_level', 'str', {'enum': ['custom', 'high', 'normal', 'low']}, {}),
    ('quota:memory_shares_share', 'int', {'min': 0}, {}),
    ('quota:disk_io_limit', 'int', {'min': 0}, {}),
    ('quota:disk_io_reservation', 'int', {}, {}),
    ('quota:disk_io_shares_level', 'str', {'enum': ['custom', 'high', 'normal', 'low']}, {}),
    ('quota:disk_io_shares_share', 'int', {'min': 0}, {}),
    ('quota:vif_limit', 'int', {'min': 0}, {}),
    ('quota:vif_reservation', 'int', {}, {}),
    ('quota:vif_shares_level', 'str', {'enum': ['custom', 'high', 'normal', 'low']}, {}),
    ('quota:vif_shares_share', 'int', {'min': 0}, {}),
    ('quota:cpu_shares', 'int', {'min': 0}, {}),
    ('quota:cpu_period', 'int', {'min': 0}, {}),
    ('quota:cpu_quota', 'int', {}, {}),
    ('quota:disk_read_bytes_sec', 'int', {'min': 0}, {}),
    ('quota:disk_read_iops_sec', 'int', {'min': 0}, {}),
    ('quota:disk_write_bytes_sec', 'int', {'min': 0}, {}),
    ('quota:disk_write_iops_sec', 'int', {'min': 0}, {}),
    ('quota:disk_total_bytes_sec', 'int', {'min': 0}, {}),
    ('quota:disk_total_iops_sec', 'int', {'min': 0}, {}),
    ('quota:vif_inbound_average', 'int', {'min': 0}, {}),
    ('quota:vif_inbound_peak', 'int', {'min': 0}, {}),
    ('quota:vif_inbound_burst', 'int', {'min': 0}, {}),
    ('quota:vif_outbound_average', 'int', {'min': 0}, {}),
    ('quota:vif_outbound_peak', 'int', {'min': 0}, {}),
    ('quota:vif_outbound_burst', 'int', {'min': 0}, {}),
    ('vmware:hw_version', 'str', {}, {}),
    ('vmware:storage_policy', 'str', {}, {}),
)


@cache
def _table() -> tuple[dict[str, tuple[str, dict[str, Any]]],
                      list[tuple[re.Pattern[str], str, dict[str, Any]]], frozenset[str]]:
    """Exact names, patterned names (compiled), and the known namespaces."""
    rows = list(ROWS)
    rows += [(f"resources{{group}}:{rc}", "int", {}, _GROUP)
             for rc in os_resource_classes.STANDARDS]
    rows.append(("resources{group}:CUSTOM_{resource}", "int", {},
                 {**_GROUP, "resource": r"[A-Z0-9_]+"}))
    required = {"enum": ["required", "forbidden"]}
    rows += [(f"trait{{group}}:{t}", "str", required, _GROUP) for t in os_traits.get_traits()]
    rows.append(("trait{group}:CUSTOM_{trait}", "str", required,
                 {**_GROUP, "trait": r"[A-Z0-9_]+"}))
    exact: dict[str, tuple[str, dict[str, Any]]] = {}
    patterned: list[tuple[re.Pattern[str], str, dict[str, Any]]] = []
    namespaces: set[str] = set()
    for name, kind, value, params in rows:
        regex = name
        for param, pattern in params.items():
            regex = regex.replace(f"{{{param}}}", f"(?P<{param}>{pattern})")
        exact[name] = (kind, value)
        patterned.append((re.compile(regex), kind, value))
        if ":" in regex:
            namespaces.add(regex.split(":", 1)[0])
    return exact, patterned, frozenset(namespaces)


def problem(name: str, value: str) -> str | None:
    """Nova's ValidationError message for this extra spec, or None when it is valid."""
    exact, patterned, namespaces = _table()
    rule = exact.get(name)
    if rule is None:
        rule = next(((kind, spec) for rx, kind, spec in patterned if rx.fullmatch(name)), None)
    if rule is None:
        if ":" in name and any(re.fullmatch(ns, name.split(":", 1)[0]) for ns in namespaces):
            return (f"Validation failed; extra spec '{name}' does not appear to be a valid "
                    "extra spec.")
        return None
    kind, spec = rule
    if kind == "int":
        try:
            number = int(value)
        except ValueError:
            return f"Validation failed; '{value}' is not a valid integer value."
        if "max" in spec and spec["max"] < number:
            return (f"Validation failed; '{value}' is greater than the max value of "
                    f"'{spec['max']}'.")
        if "min" in spec and spec["min"] > number:
            return f"Validation failed; '{value}' is less than the min value of '{spec['min']}'."
        return None
    if kind == "bool":
        if value.strip().lower() not in TRUE_STRINGS | FALSE_STRINGS:
            return f"Validation failed; '{value}' is not a valid boolean-like value."
        return None
    if "pattern" in spec:
        if not re.fullmatch(spec["pattern"], value):
            return f"Validation failed; '{value}' is not of the format '{spec['pattern']}'."
    elif "enum" in spec and value not in spec["enum"]:
        return (f"Validation failed; '{value}' is not one of: "
                f"{', '.join(str(x) for x in spec['enum'])}.")
    return None
