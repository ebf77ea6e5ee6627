"""Settings: one pydantic-settings class with nested groups.

Sources, strongest first: explicit keyword arguments (the CLI flags), environment
variables `STACKLING_<GROUP>__<KEY>`, the YAML file given by `--config`
(or `STACKLING_CONFIG`), then the defaults below (which are the demo cloud's).
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict


class IdentitySettings(BaseModel):
    token_expiration: int = 3600  # seconds, as Keystone's [token] expiration
    allow_expired_window: int = 172800  # seconds, as Keystone's [token] allow_expired_window
    password_hash_rounds: int = 10  # bcrypt cost; Keystone's crypt_strength floor is 4
    admin_password: str | None = None  # else STACKLING_ADMIN_PASSWORD, else generated
    demo_password: str | None = None  # else STACKLING_DEMO_PASSWORD, else generated
    region: str = "RegionOne"


class ML2Settings(BaseModel):
    """ML2-style type driver configuration (neutron's [ml2] and [ml2_type_*])."""

    type_drivers: list[str] = ["flat", "vlan", "vxlan", "gre", "geneve"]
    tenant_network_types: list[str] = ["vxlan"]
    flat_networks: list[str] = ["public", "physnet1", "physnet2"]
    network_vlan_ranges: list[str] = ["physnet1:100:199", "physnet2:200:299"]
    vni_ranges: list[str] = ["1:16777215"]  # vxlan
    tunnel_id_ranges: list[str] = ["1:4294967295"]  # gre
    geneve_vni_ranges: list[str] = ["1:16777215"]
    physical_network_mtus: list[str] = []
    global_physnet_mtu: int = 1500
    path_mtu: int = 0


class NetworkSettings(BaseModel):
    ml2: ML2Settings = Field(default_factory=ML2Settings)
    # service_plugins-like switches
    network_segment_range: bool = True
    base_mac: str = "fa:16:3e:00:00:00"
    pagination_max_limit: int = -1
    default_subnetpool_v4: str = "10.0.0.0/8"
    default_subnetpool_v4_prefixlen: int = 26
    default_subnetpool_v6: str = "fd00::/48"
    default_subnetpool_v6_prefixlen: int = 64
    public_cidr: str = "172.24.4.0/24"


class HostSettings(BaseModel):
    name: str
    vcpus: int = 8
    memory_mb: int = 16384
    disk_gb: int = 160
    availability_zone: str = "nova"
    physical_networks: list[str] = []


def _demo_hosts() -> list[HostSettings]:
    # Four hosts over two racks: rack 1 reaches physnet1, rack 2 reaches physnet2.
    return [
        HostSettings(name="compute-r1-1", physical_networks=["public", "physnet1"]),
        HostSettings(name="compute-r1-2", physical_networks=["public", "physnet1"]),
        HostSettings(name="compute-r2-1", physical_networks=["public", "physnet2"]),
        HostSettings(name="compute-r2-2", physical_networks=["public", "physnet2"]),
    ]


class ComputeSettings(BaseModel):
    hosts: list[HostSettings] = Field(default_factory=_demo_hosts)
    build_workers: int = 2


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="STACKLING_", env_nested_delimiter="__", extra="ignore"
    )

    data_dir: Path = Path(".stackling")
    database_url: str | None = None  # default: sqlite in data_dir
    host: str = "127.0.0.1"
    port: int = 8900
    workers: int = 1
    public_url: str | None = None  # default: from the request's Host header
    policy_file: str | None = None
    identity: IdentitySettings = Field(default_factory=IdentitySettings)
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    compute: ComputeSettings = Field(default_factory=ComputeSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _YamlSource(settings_cls))

    @property
    def db_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'stackling.db').resolve()}"


class _YamlSource(PydanticBaseSettingsSource):
    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = os.environ.get("STACKLING_CONFIG")
        if not path:
            return {}
        import yaml

        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: the configuration file must be a mapping")
        return data


def load_settings(**overrides: Any) -> Settings:
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()
