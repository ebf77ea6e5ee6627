"""The image properties a server keeps (2.98 shows them under `image.properties`).

Nova copies an image's properties into the instance's system metadata when it boots or
rebuilds, and shows back only those it knows as image metadata (`ImageMetaProps`'
fields and their legacy names), values as the text it stored. Kept here as the same
snapshot: a later change to the image does not show on the server.
"""

from __future__ import annotations

from typing import Any

# ImageMetaProps' fields (Nova's nova/objects/image_meta.py).
KNOWN = frozenset("""
hw_architecture hw_emulation_architecture hw_auto_disk_config hw_boot_menu hw_cdrom_bus
hw_cpu_cores hw_cpu_sockets hw_cpu_max_cores hw_cpu_max_sockets hw_cpu_max_threads
hw_cpu_policy hw_cpu_thread_policy hw_cpu_realtime_mask hw_cpu_threads hw_device_id
hw_disk_bus hw_disk_type hw_floppy_bus hw_firmware_type hw_firmware_stateless hw_input_bus
hw_ipxe_boot hw_locked_memory hw_machine_type hw_mem_encryption hw_mem_encryption_model
hw_mem_page_size hw_numa_nodes hw_numa_cpus hw_numa_mem hw_pci_numa_affinity_policy
hw_pointer_model hw_pmu hw_qemu_guest_agent hw_rescue_bus hw_rescue_device hw_rng_model
hw_time_hpet hw_serial_port_count hw_scsi_model hw_video_model hw_video_ram hw_vif_model
hw_viommu_model hw_vm_mode hw_watchdog_action hw_vif_multiqueue_enabled hw_tpm_model
hw_tpm_version hw_ephemeral_encryption hw_ephemeral_encryption_format
hw_ephemeral_encryption_secret_uuid hw_virtio_packed_ring hw_maxphysaddr_mode
hw_maxphysaddr_bits hw_sound_model hw_usb_model hw_redirected_usb_ports
img_bittorrent img_bdm_v2 img_block_device_mapping img_cache_in_nova img_compression_level
img_hv_requested_version img_hv_type img_config_drive img_linked_clone img_mappings
img_owner_id img_root_device_name img_use_agent img_version img_signature
img_signature_hash_method img_signature_certificate_uuid img_signature_key_type
img_hide_hypervisor_id os_admin_user os_command_line os_distro os_require_quiesce
os_secure_boot os_skip_agent_inject_files_at_boot os_skip_agent_inject_ssh os_type
traits_required
""".split()) | frozenset("""
architecture owner_id vmware_disktype vmware_image_version vmware_ostype auto_disk_config
ipxe_boot xenapi_device_id xenapi_image_compression_level vmware_linked_clone
xenapi_use_agent xenapi_skip_agent_inject_ssh xenapi_skip_agent_inject_files_at_boot
cache_in_nova vm_mode bittorrent mappings block_device_mapping bdm_v2 root_device_name
hypervisor_version_requires hypervisor_type
""".split())  # ... and the legacy names Nova still maps onto them

_MAX = 255  # system metadata values are truncated to their column


def snapshot(properties: dict[str, Any] | None) -> dict[str, str]:
    """What Nova would show of an image's `properties`: the known keys, as text."""
    return {key: _text(value)[:_MAX] for key, value in (properties or {}).items()
            if key in KNOWN and value is not None}


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value) if isinstance(value, list | dict) else str(value)
