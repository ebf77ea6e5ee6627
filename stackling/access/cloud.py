"""Which cloud a host tool means, and the settings it serves with.

`stackling serve` writes DIR/serving.json: the settings sources it ran with (its
STACKLING_* environment, its --config file, its flags). The audit and the host tools
read them from there, so a shell without the server's environment (`make run` sets
STACKLING_DATAPLANE__DRIVER) still sees the cloud as it is served. The data dir is the
one named (--data-dir, STACKLING_DATA_DIR), else the folder of the clouds.yaml the
clients read (OS_CLIENT_CONFIG_FILE, or openstacksdk's search path for --os-cloud) when
it is a served cloud's, else ./.stackling.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

RECORD = "serving.json"
ENV_PREFIX = "STACKLING_"
# Not settings, or secrets the record does not need (the passwords are in clouds.yaml).
_NOT_RECORDED = {"STACKLING_CONFIG", "STACKLING_SERVE_SETTINGS", "STACKLING_ADMIN_PASSWORD",
                 "STACKLING_DEMO_PASSWORD"}
# openstacksdk's clouds.yaml search path (openstack/config/loader.py), after
# OS_CLIENT_CONFIG_FILE; the first file that exists is the one it reads.
CLOUDS_FILES = (Path("clouds.yaml"), Path("~/.config/openstack/clouds.yaml").expanduser(),
                Path("/etc/openstack/clouds.yaml"))


def record_serving(data_dir: Path, overrides: Mapping[str, Any],
                   environ: Mapping[str, str]) -> Path:
    """DIR/serving.json (0600: a database URL in the environment may hold a password)."""
    doc = {"pid": os.getpid(), "config": environ.get("STACKLING_CONFIG"),
           "environment": {k: v for k, v in sorted(environ.items())
                           if k.startswith(ENV_PREFIX) and k not in _NOT_RECORDED},
           "overrides": {**overrides, "data_dir": str(data_dir.resolve())}}
    path = data_dir / RECORD
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(doc, fh, indent=1)
    os.replace(tmp, path)
    return path


def clients_clouds_file(environ: Mapping[str, str], os_cloud: str | None) -> Path | None:
    """The clouds.yaml openstacksdk would read for `os_cloud` (None: no file holds it)."""
    named = environ.get("OS_CLIENT_CONFIG_FILE")
    candidates = [Path(named)] if named else []
    for path in [*candidates, *CLOUDS_FILES]:
        if path.is_file():
            if os_cloud and not _holds_cloud(path, os_cloud):
                return None
            return path.resolve()
    return None


def _holds_cloud(path: Path, name: str) -> bool:
    import yaml

    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(doc, dict) and name in (doc.get("clouds") or {})


def find_data_dir(explicit: str | None, environ: Mapping[str, str],
                  os_cloud: str | None = None) -> tuple[Path, str]:
    """The cloud's data dir and how it was found (said in errors)."""
    if explicit:
        return Path(explicit).resolve(), "--data-dir"
    if environ.get("STACKLING_DATA_DIR"):
        return Path(environ["STACKLING_DATA_DIR"]).resolve(), "STACKLING_DATA_DIR"
    clouds = clients_clouds_file(environ, os_cloud or environ.get("OS_CLOUD"))
    if clouds is not None and (clouds.parent / RECORD).is_file():
        return clouds.parent, f"the folder of {clouds}"
    return Path(".stackling").resolve(), "the default, ./.stackling"


def read_record(data_dir: Path) -> dict[str, Any] | None:
    try:
        return json.loads((data_dir / RECORD).read_text())
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def serving_settings(overrides: Mapping[str, Any], environ: Mapping[str, str] | None = None,
                     os_cloud: str | None = None) -> Any:
    """The settings the cloud serves with: its record < this environment < these flags
    (a flag or variable given here wins; what is not given is the server's)."""
    from stackling.config import load_settings

    environ = dict(os.environ if environ is None else environ)
    data_dir, _ = find_data_dir(overrides.get("data_dir"), environ, os_cloud)
    record = read_record(data_dir) or {}
    merged = {**record.get("environment", {}), **environ}
    if record.get("config") and "STACKLING_CONFIG" not in environ:
        merged["STACKLING_CONFIG"] = record["config"]
    given = {k: v for k, v in overrides.items() if v is not None}
    with _environment(merged):
        return load_settings(**{**record.get("overrides", {}), **given,
                                "data_dir": str(data_dir)})


def describe(settings: Any) -> str:
    """Where a command looked, for its errors."""
    return f"data dir {Path(settings.data_dir).resolve()}"


def connect(os_cloud: str | None, data_dir: Path, default_cloud: str,
            environ: Mapping[str, str] | None = None) -> Any:
    """An openstacksdk connection as openstackclient makes it (--os-cloud, OS_CLOUD,
    OS_CLIENT_CONFIG_FILE, plain OS_* variables); with none of them, `default_cloud` of
    the data dir's own clouds.yaml."""
    import openstack
    from openstack.config import loader

    environ = os.environ if environ is None else environ
    name = os_cloud or environ.get("OS_CLOUD")
    if name is None and environ.get("OS_AUTH_URL"):
        return openstack.connect()
    files = [str(data_dir / "clouds.yaml")] if (data_dir / "clouds.yaml").is_file() else []
    config = loader.OpenStackConfig(config_files=files or None)
    return openstack.connection.Connection(config=config.get_one(cloud=name or default_cloud))


def outside(overrides: Mapping[str, Any], os_cloud: str | None = None) -> tuple[Any, str]:
    """The serving cloud's settings and its outside namespace, which must exist."""
    from stackling.access import netns
    from stackling.dataplane import interface as dataplane

    settings = serving_settings(overrides, os_cloud=os_cloud)
    namespace = dataplane.outside_namespace(settings)
    if not netns.path(namespace).exists():
        _, how = find_data_dir(overrides.get("data_dir"), os.environ, os_cloud)
        raise LookupError(
            f"no namespace {namespace} for the cloud of {describe(settings)} ({how}): is it "
            "serving with dataplane.driver netns? Name its data dir with --data-dir DIR, or "
            "point OS_CLIENT_CONFIG_FILE at its clouds.yaml")
    return settings, namespace
