"""Settings: typed dataclasses in nested groups, loaded from layered sources.

Sources, strongest first: explicit keyword arguments (the CLI flags, tests), environment
variables `STACKLING_<GROUP>__<KEY>` (e.g. `STACKLING_IDENTITY__TOKEN_EXPIRATION=120`), the
YAML file given by `--config` (or `STACKLING_CONFIG`), then the defaults below, which are
the demo cloud's. Values are checked and converted at start; a wrong type or an unknown key
in the file is refused with its dotted path.

This is plain dataclasses rather than pydantic-settings on purpose: it keeps the same
layering and checks, and takes ~1 ms to import instead of ~120 ms, which is a quarter
of the start-up budget.
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV_PREFIX = "STACKLING_"


class SettingsError(ValueError):
    """A setting that is missing, unknown or of the wrong type; the message names it."""


# STACKLING_* variables that are not settings (read elsewhere).
_NOT_SETTINGS = {"CONFIG", "SERVE_SETTINGS", "ADMIN_PASSWORD", "DEMO_PASSWORD"}


@dataclass
class IdentitySettings:
    token_expiration: int = 3600  # seconds, as Keystone's [token] expiration
    allow_expired_window: int = 172800  # seconds, as Keystone's [token] allow_expired_window
    password_hash_rounds: int = 10  # bcrypt cost; Keystone's crypt_strength floor is 4
    admin_password: str | None = None  # else STACKLING_ADMIN_PASSWORD, else generated
    demo_password: str | None = None  # else STACKLING_DEMO_PASSWORD, else generated
    region: str = "RegionOne"


@dataclass
class ML2Settings:
    """ML2-style type driver configuration (neutron's [ml2] and [ml2_type_*])."""

    type_drivers: list[str] = field(default_factory=lambda: ["flat", "vlan", "vxlan", "gre",
                                                             "geneve"])
    tenant_network_types: list[str] = field(default_factory=lambda: ["vxlan"])
    flat_networks: list[str] = field(default_factory=lambda: ["public", "physnet1", "physnet2"])
    network_vlan_ranges: list[str] = field(
        default_factory=lambda: ["physnet1:100:199", "physnet2:200:299"])
    vni_ranges: list[str] = field(default_factory=lambda: ["1:16777215"])  # vxlan
    tunnel_id_ranges: list[str] = field(default_factory=lambda: ["1:4294967295"])  # gre
    geneve_vni_ranges: list[str] = field(default_factory=lambda: ["1:16777215"])
    physical_network_mtus: list[str] = field(default_factory=list)
    global_physnet_mtu: int = 1500
    path_mtu: int = 0


@dataclass
class NetworkSettings:
    ml2: ML2Settings = field(default_factory=ML2Settings)
    # service_plugins-like switches
    network_segment_range: bool = True
    base_mac: str = "fa:16:3e:00:00:00"
    pagination_max_limit: int = -1
    default_subnetpool_v4: str = "10.0.0.0/8"
    default_subnetpool_v4_prefixlen: int = 26
    default_subnetpool_v6: str = "fd00::/48"
    default_subnetpool_v6_prefixlen: int = 64
    public_cidr: str = "172.24.4.0/24"
    # neutron's dns_domain: ports' dns_assignment FQDNs; a port's dns_name is its
    # hostname only under another domain than the default
    dns_domain: str = "openstacklocal"


@dataclass
class HostSettings:
    name: str
    vcpus: int = 8
    memory_mb: int = 16384
    disk_gb: int = 160
    availability_zone: str = "nova"
    physical_networks: list[str] = field(default_factory=list)
    # Neutron's Open vSwitch agent `resource_provider_bandwidths`: "<physnet or
    # br-<physnet>>:<egress kbps>:<ingress kbps>" ("rp_tunnelled:..." for tunnelled
    # networks); each becomes a placement provider under the host's compute node that
    # minimum-bandwidth QoS ports are scheduled against (empty: no bandwidth to give)
    resource_provider_bandwidths: list[str] = field(default_factory=list)
    # Neutron's `resource_provider_packet_processing_without_direction` (kpps): the
    # host's agent provider's NET_PACKET_RATE_KILOPACKET_PER_SEC (0: none)
    resource_provider_packet_processing_without_direction: int = 0


def _demo_hosts() -> list[HostSettings]:
    # Four hosts over two racks: rack 1 reaches physnet1, rack 2 reaches physnet2.
    return [
        HostSettings(name="compute-r1-1", physical_networks=["public", "physnet1"]),
        HostSettings(name="compute-r1-2", physical_networks=["public", "physnet1"]),
        HostSettings(name="compute-r2-1", physical_networks=["public", "physnet2"]),
        HostSettings(name="compute-r2-2", physical_networks=["public", "physnet2"]),
    ]


@dataclass
class ComputeSettings:
    hosts: list[HostSettings] = field(default_factory=_demo_hosts)
    build_workers: int = 2
    # Seconds a reboot or rebuild stays in its task state (REBOOT, HARD_REBOOT, REBUILD) so
    # that pollers see it: 2 s outlasts a 1 s poll interval (tempest's, gophercloud's) that
    # starts with a sleep, with room for the round trip. 0: done within the request.
    action_min_duration: float = 2.0


@dataclass
class OrchestrationSettings:
    """Heat's engine limits, named and defaulted as upstream's heat.conf options."""

    max_stacks_per_tenant: int = 512
    max_resources_per_stack: int = 1000
    max_nested_stack_depth: int = 5
    max_events_per_stack: int = 1000
    stack_action_timeout: int = 3600  # seconds, for a stack without `timeout_mins`
    max_snapshots_per_stack: int = 32  # upstream's; admins are not limited
    # Upstream has these off by default; on here (a deviation): a user testing templates
    # expects `openstack stack abandon`/`adopt` to work.
    enable_stack_abandon: bool = True
    enable_stack_adopt: bool = True


@dataclass
class ImageSettings:
    """Glance's import filtering for `web-download` ([import_filtering_opts], its defaults),
    applied to the URI, to every redirect and to every address the host resolves to
    (image/web_download.py). An allowed list, when not empty, makes its disallowed list
    ignored, as Glance's. Beyond Glance, addresses off the public internet (loopback,
    private, link-local, ...) are refused unless in `web_download_allowed_networks`: a local
    mirror needs its network there and its port in `web_download_allowed_ports`."""

    web_download_allowed_schemes: list[str] = field(default_factory=lambda: ["http", "https"])
    web_download_disallowed_schemes: list[str] = field(default_factory=list)
    # host names or addresses (empty: any host not disallowed)
    web_download_allowed_hosts: list[str] = field(default_factory=list)
    web_download_disallowed_hosts: list[str] = field(default_factory=list)
    web_download_allowed_ports: list[int] = field(default_factory=lambda: [80, 443])
    web_download_disallowed_ports: list[int] = field(default_factory=list)
    # CIDRs off the public internet that may be fetched from (e.g. ["127.0.0.1/32"]).
    web_download_allowed_networks: list[str] = field(default_factory=list)
    # Seconds a whole fetch may take (connecting, redirects, headers and body); 0: no limit.
    web_download_timeout: float = 3600.0
    # Bytes a second the body must average once web_download_read_timeout has passed
    # (0: no minimum).
    web_download_min_rate: int = 16384
    # Seconds to connect, or without a byte from the server.
    web_download_read_timeout: float = 30.0
    # Glance's enabled_backends, every one a local `file` store here (e.g. "fast,cheap"):
    # set, Glance's multi-store API is on (`stores` on images, the copy-image import
    # method, `X-Image-Meta-Store`). Empty: one store `file` and no multi-store.
    stores: list[str] = field(default_factory=list)
    # Glance's [glance_store] default_backend (empty: the first of `stores`); it keeps its
    # data where the single store does (<data_dir>/images), the others under
    # <data_dir>/images/stores/<id>.
    default_store: str = ""
    # The Debian 12 cloud image `make image-debian` builds (images/debian/build.py):
    # uploaded at start as the public image `debian-12` when the file exists ("": never).
    debian_image: str = "/var/cache/stackling/images/debian-12.qcow2"

    def __post_init__(self) -> None:
        import ipaddress

        for i, net in enumerate(self.web_download_allowed_networks):
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError:
                raise SettingsError(f"image.web_download_allowed_networks[{i}]: {net!r} is "
                                    "not a network (CIDR)") from None


@dataclass
class ObservabilitySettings:
    log_format: str = "text"  # or "json": one object per line
    log_level: str = "warning"  # of everything but the access lines (always logged); --verbose: info
    # /metrics answers without a token only to loopback clients unless this is true;
    # other clients need an admin token.
    metrics_public: bool = False


@dataclass
class HttpSettings:
    """Request limits (docs/security.md), with upstream's defaults."""

    # oslo.middleware [oslo_middleware] max_request_body_size: 112 KiB for JSON bodies.
    max_request_body_size: int = 114688
    # Heat's own limit instead (heat.conf max_json_body_size: 1 MiB), for its templates.
    orchestration_max_request_body_size: int = 1048576
    # Glance's image_size_cap (1 TiB): image data uploads are streamed, never buffered.
    image_size_cap: int = 1099511627776
    # JSON nesting deeper than this is a 400 (Python's own parser would recurse ~1,000 deep).
    max_json_depth: int = 64
    # Seconds a client may take to send a request's headers, or between two body chunks
    # (eventlet's client_socket_timeout in upstream services is 900; 60 suits an API).
    client_timeout: int = 60
    # Seconds a request body may take as a whole however steadily it trickles (a byte every
    # few seconds had held connections for minutes): 408 past it.
    body_timeout: int = 60
    # Streamed image data instead must average this many bytes a second once body_timeout
    # has passed (0: no minimum): 408 below it.
    min_upload_rate: int = 16384
    # Request bodies one client address may be sending at once, per server process: 429
    # past it (the address is X-Forwarded-For's only with enable_proxy_headers_parsing).
    max_body_readers_per_client: int = 16
    # Seconds an idle keep-alive connection stays open (uvicorn's timeout_keep_alive).
    keep_alive_timeout: int = 30
    # oslo.middleware's enable_proxy_headers_parsing: trust X-Forwarded-Proto/-Host only
    # behind a proxy that sets them (any client can send them).
    enable_proxy_headers_parsing: bool = False
    # The most values one list filter may carry after de-duplication (`tags=a,b,...`, a
    # repeated `?id=`): more is a 400. A tag filter is one indexed query at any count.
    max_filter_values: int = 1000
    # Seconds one SQL statement may run on PostgreSQL (statement_timeout) and MariaDB
    # (max_statement_time); past it the request answers 503 with Retry-After. 0: no limit.
    statement_timeout: float = 30.0
    # Seconds a stop (SIGTERM) waits for requests in flight before cancelling their SQL.
    shutdown_timeout: float = 10.0


@dataclass
class ComputeQuotaSettings:
    """Nova's [quota] defaults, per project (key_pairs per user); -1 is unlimited."""

    instances: int = 10
    cores: int = 20
    ram: int = 51200  # MB
    metadata_items: int = 128
    injected_files: int = 5
    injected_file_content_bytes: int = 10240
    injected_file_path_bytes: int = 255
    key_pairs: int = 100
    server_groups: int = 10
    server_group_members: int = 10  # servers per group
    # Not a Nova option: the most servers one POST /servers may create whatever the quota
    # (an unlimited quota must not let max_count=10**30 loop in one transaction).
    max_count: int = 1000


@dataclass
class NetworkQuotaSettings:
    """Neutron's [quotas] quota_<resource> defaults, per project; -1 is unlimited."""

    network: int = 100
    subnet: int = 100
    port: int = 500
    router: int = 10
    floatingip: int = 50
    security_group: int = 10
    security_group_rule: int = 100
    subnetpool: int = -1
    rbac_policy: int = 10
    # Not a Neutron option: the most items one bulk POST may create (larger is a 400), so
    # one request cannot hold the write lock for long (bench/quotas.py: 1,000 networks
    # took 39 s on a loaded host).
    max_bulk: int = 100


@dataclass
class DataplaneSettings:
    """stackling/dataplane/README.md: `none` keeps servers as rows; `netns` makes them guests."""

    driver: str = "none"  # or "netns"
    resync_interval: float = 2.0  # seconds between full passes besides the wake-ups
    lease_ttl: float = 10.0  # seconds a dead owner keeps the dataplane before another takes it
    # processes a guest may have at once (its cgroup's pids.max: a fork bomb stops there)
    guest_processes: int = 1024
    # seconds a stop or soft reboot waits for the guest's init to power off before it is
    # killed (Nova's [DEFAULT] shutdown_timeout; an image's os_shutdown_timeout overrides)
    shutdown_timeout: float = 60.0
    # The metadata service's bounds (metadata.py), as Neutron's haproxy metadata proxy sets
    # them: connections a guest (a source address on a network) may hold open, and all of
    # this process's; seconds a connection may wait before its request starts, and for the
    # request line and headers once it has; their size at most (431 or 414 beyond)
    metadata_connections_per_guest: int = 50
    metadata_connections: int = 1000
    metadata_idle_timeout: float = 10.0
    metadata_request_timeout: float = 10.0
    metadata_request_bytes: int = 8192


@dataclass
class BlockStorageSettings:
    """The block-storage service (stackling/block_storage): its file backend and workers."""

    # Where the file backend keeps volumes (sparse files) and snapshots; "" is
    # <data_dir>/volumes. Backups go to backup_dir ("" is <data_dir>/backups).
    backend_dir: str = ""
    backup_dir: str = ""
    backup_chunk_size: int = 4194304  # bytes per backup chunk (a SHA-256 each)
    workers: int = 2  # threads per process doing volume copies and backups
    # seconds a worker's claim on a task lasts unless renewed (a third of it): a process
    # killed mid-copy has its work taken over by another this long after
    lease_seconds: float = 60.0
    # Cinder's [DEFAULT] quota_* defaults, per project; -1 is unlimited.
    quota_volumes: int = 10
    quota_snapshots: int = 10
    quota_gigabytes: int = 1000
    quota_backups: int = 10
    quota_backup_gigabytes: int = 1000
    quota_groups: int = 10
    per_volume_size_limit: int = -1


@dataclass
class QuotaSettings:
    """docs/security.md, "Quotas"."""

    compute: ComputeQuotaSettings = field(default_factory=ComputeQuotaSettings)
    network: NetworkQuotaSettings = field(default_factory=NetworkQuotaSettings)


@dataclass
class Settings:
    data_dir: Path = Path(".stackling")
    database_url: str | None = None  # default: sqlite in data_dir
    host: str = "127.0.0.1"
    port: int = 8900
    workers: int = 1
    public_url: str | None = None  # default: from the request's Host header
    policy_file: str | None = None
    identity: IdentitySettings = field(default_factory=IdentitySettings)
    network: NetworkSettings = field(default_factory=NetworkSettings)
    compute: ComputeSettings = field(default_factory=ComputeSettings)
    orchestration: OrchestrationSettings = field(default_factory=OrchestrationSettings)
    image: ImageSettings = field(default_factory=ImageSettings)
    quota: QuotaSettings = field(default_factory=QuotaSettings)
    http: HttpSettings = field(default_factory=HttpSettings)
    observability: ObservabilitySettings = field(default_factory=ObservabilitySettings)
    dataplane: DataplaneSettings = field(default_factory=DataplaneSettings)
    block_storage: BlockStorageSettings = field(default_factory=BlockStorageSettings)

    @property
    def db_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'stackling.db').resolve()}"


# ------------------------------------------------------------------ loading
def load_settings(**overrides: Any) -> Settings:
    """Defaults < YAML file < environment < keyword overrides (None means "not given")."""
    raw: dict[str, Any] = {}
    _merge(raw, _yaml_source())
    _merge(raw, _env_source(os.environ))
    _merge(raw, {k: v for k, v in overrides.items() if v is not None})
    return _build(Settings, raw, "")


def _yaml_source() -> dict[str, Any]:
    path = os.environ.get("STACKLING_CONFIG")
    if not path:
        return {}
    import yaml

    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh) or {}
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: the configuration file must be a mapping")
    return data


def _env_source(environ: typing.Mapping[str, str]) -> dict[str, Any]:
    """`STACKLING_A__B=v` becomes {"a": {"b": "v"}} (converted when built)."""
    out: dict[str, Any] = {}
    known = {f.name for f in dataclasses.fields(Settings)}
    for key, value in environ.items():
        if not key.startswith(ENV_PREFIX) or key[len(ENV_PREFIX):] in _NOT_SETTINGS:
            continue
        path = key[len(ENV_PREFIX):].lower().split("__")
        if path[0] not in known:
            continue  # other STACKLING_* variables are not ours to refuse
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = _EnvValue(value)
    return out


class _EnvValue(str):
    """A string from the environment: converted to the field's type when built."""


def _merge(into: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _build(cls: type, data: Any, path: str) -> Any:
    if isinstance(data, cls):
        return data
    if isinstance(data, _EnvValue):
        data = json.loads(data)
    if not isinstance(data, dict):
        raise SettingsError(f"{path or 'settings'}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise SettingsError(f"{path + '.' if path else ''}{unknown[0]}: unknown setting")
    kwargs = {name: _convert(hints[name], value, f"{path + '.' if path else ''}{name}")
              for name, value in data.items()}
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise SettingsError(f"{path or 'settings'}: {exc}") from None


def _convert(hint: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if value is None or (isinstance(value, _EnvValue) and value == ""):
            return None
        return _convert(args[0], value, path)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, path)
    if origin is list:
        (item,) = typing.get_args(hint)
        if isinstance(value, _EnvValue):
            value = (json.loads(value) if value.strip().startswith("[")
                     else [v.strip() for v in value.split(",") if v.strip()])
        if not isinstance(value, list | tuple):
            raise SettingsError(f"{path}: expected a list, got {value!r}")
        return [_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if hint is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise SettingsError(f"{path}: expected a boolean, got {value!r}")
    if hint in (int, float):
        if isinstance(value, bool):
            raise SettingsError(f"{path}: expected {hint.__name__}, got {value!r}")
        try:
            return hint(value)
        except (TypeError, ValueError):
            raise SettingsError(f"{path}: expected {hint.__name__}, got {value!r}") from None
    if hint is Path:
        return Path(value)
    if hint is str:
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise SettingsError(f"{path}: expected a string, got {value!r}")
        return str(value)
    return value
