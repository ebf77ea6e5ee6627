"""Schema management: migrate to heads, and a cheap check that skips Alembic when current.

Each service has its own Alembic branch (label = service name), so services evolve their
tables independently; `upgrade heads` applies them all.
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import MetaData, inspect, text
from sqlalchemy.engine import Engine

from stackling.common import statements

VERSIONS = Path(__file__).parent / "versions"
MODEL_MODULES = [
    "stackling.runtime",
    "stackling.identity.models",
    "stackling.identity.group_appcred_models",
    "stackling.identity.delegation_models",
    "stackling.network.core.models",
    "stackling.network.l3.models",
    "stackling.network.quota_models",
    "stackling.network.segments.range_models",
    "stackling.network.rbac.models",
    "stackling.network.segments.models",
    "stackling.network.agent_models",
    "stackling.network.trunks.models",
    "stackling.network.address_groups.models",
    "stackling.network.port_extras.models",
    "stackling.network.default_rules.models",
    "stackling.network.qos.models",
    "stackling.network.port_forwarding.models",
    "stackling.network.conntrack.models",
    "stackling.network.metering.models",
    "stackling.network.flavors.models",
    "stackling.network.logapi.models",
    "stackling.network.local_ips.models",
    "stackling.network.ndp_proxies.models",
    "stackling.network.port_bindings.models",
    "stackling.placement.models",
    "stackling.compute.models",
    "stackling.compute.quota_models",
    "stackling.compute.move_models",
    "stackling.compute.group_models",
    "stackling.compute.transitions",
    "stackling.image.models",
    "stackling.block_storage.models",
    "stackling.orchestration.models",
    "stackling.dataplane.models",
]

_REV_RE = re.compile(r"^revision\s*=\s*['\"]([^'\"]+)['\"]", re.M)
_DOWN_RE = re.compile(r"^down_revision\s*=\s*(.+)$", re.M)


def all_metadata() -> MetaData:
    import importlib

    from stackling.common.db import Base

    for module in MODEL_MODULES:
        importlib.import_module(module)
    return Base.metadata


def script_heads() -> set[str]:
    """Head revisions, read from the version files without importing Alembic."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in VERSIONS.glob("*.py"):
        source = path.read_text()
        rev = _REV_RE.search(source)
        if not rev:
            continue
        revisions.add(rev.group(1))
        down = _DOWN_RE.search(source)
        if down:
            parents.update(re.findall(r"['\"]([^'\"]+)['\"]", down.group(1)))
    return revisions - parents


def db_heads(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return set()
        return {row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))}


def alembic_config(url: str):  # type: ignore[no-untyped-def]
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.set_main_option("version_locations", str(VERSIONS))
    cfg.set_main_option("path_separator", "os")
    return cfg


def upgrade(engine: Engine) -> bool:
    """Bring the schema to every branch head; False when it already was."""
    heads, current = script_heads(), db_heads(engine)
    if current == heads:
        return False
    if not current and _empty(engine):
        create_at_heads(engine, heads)
    else:
        migrate(engine)
    return True


def migrate(engine: Engine) -> None:
    """Every pending migration, through Alembic."""
    from alembic import command

    cfg = alembic_config(str(engine.url.render_as_string(hide_password=False)))
    with engine.begin() as conn:
        statements.lift_deadline(conn)  # a migration may take longer than a request
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "heads")


def _empty(engine: Engine) -> bool:
    with engine.connect() as conn:
        return not inspect(conn).get_table_names()


def create_at_heads(engine: Engine, heads: set[str]) -> None:
    """An empty database (a first start): the models' tables at once, stamped at every
    head, instead of replaying each migration through Alembic (whose import alone is
    ~75 ms). tests/unit/test_schema_create.py proves the result equals the migrated
    schema on each backend; later starts migrate through Alembic as before."""
    from sqlalchemy import Column, PrimaryKeyConstraint, String, Table, insert

    # Alembic's own version table, as its MigrationContext creates it.
    version = Table("alembic_version", MetaData(), Column("version_num", String(32),
                                                          nullable=False),
                    PrimaryKeyConstraint("version_num", name="alembic_version_pkc"))
    with engine.begin() as conn:
        statements.lift_deadline(conn)
        all_metadata().create_all(conn)
        version.create(conn)
        conn.execute(insert(version), [{"version_num": head} for head in sorted(heads)])


def revision(url: str, message: str, branch: str) -> None:
    """Autogenerate a migration on `branch` (a new branch starts from base)."""
    from alembic import command
    from alembic.script import ScriptDirectory

    cfg = alembic_config(url)
    labels = set()
    for rev in ScriptDirectory.from_config(cfg).walk_revisions():
        labels |= set(rev.branch_labels or ())
    if branch in labels:
        command.revision(cfg, message=message, autogenerate=True, head=f"{branch}@head")
    else:
        command.revision(cfg, message=message, autogenerate=True, head="base",
                         branch_label=branch)
