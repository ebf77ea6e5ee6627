"""The app's static manifest matches what the components declare."""

from __future__ import annotations

import os
import subprocess
import sys

from stackling.app import BOOTSTRAP_STEPS, COMPONENTS, EAGER, create_runtime
from stackling.config import load_settings


def test_manifest_matches_components(tmp_path):
    runtime = create_runtime(load_settings(data_dir=str(tmp_path)))
    keys = set()
    for component in runtime.components:
        keys |= {f"{component.name}.{name}" for name, _ in component.bootstrap}
        if component.catalog is not None:
            keys.add(f"catalog.{component.catalog.type}")
    # A new bootstrap step must be listed, or a progressive start would skip it.
    assert keys == BOOTSTRAP_STEPS
    prefixes = {path: prefix for path, prefix in COMPONENTS}
    for component, (path, _) in zip(runtime.components, COMPONENTS, strict=True):
        assert component.build(runtime).prefix == prefixes[path]
    assert set(EAGER) == {"stackling.identity.component"}


def test_progressive_runtime_defers_all_but_identity(tmp_path):
    runtime = create_runtime(load_settings(data_dir=str(tmp_path)), progressive=True)
    assert [c.name for c in runtime.components] == ["identity"]
    assert [p for p, _ in runtime.pending] == [p for p, _ in COMPONENTS if p not in EAGER]
    assert not runtime.loaded.is_set()


def test_progressive_start_maps_identity_apart_then_every_model(tmp_path):
    """In a fresh interpreter: before serving, identity's models are mapped in their own
    registry and the shared one holds no identity model (a token request never configures
    it while the loader imports the other services' models: a half-imported model module
    once broke a request); the loader's first step then maps every model."""
    code = f"""
import sys
from stackling.app import create_runtime, map_models
from stackling.config import load_settings
from stackling.migrations.schema import MODEL_MODULES
from stackling.common.db import Base, IdentityBase
runtime = create_runtime(load_settings(data_dir={str(tmp_path)!r}), progressive=True)
assert not IdentityBase.registry._new_mappers
assert all(m.configured for m in IdentityBase.registry.mappers)
assert {{m.class_.__name__ for m in IdentityBase.registry.mappers}} >= {{"User", "Project"}}
assert {{m.class_.__module__ for m in Base.registry.mappers}} <= {{"stackling.runtime"}}
assert "stackling.network.api" not in sys.modules  # the services themselves are deferred
map_models()
assert all(m in sys.modules for m in MODEL_MODULES), [m for m in MODEL_MODULES if m not in sys.modules]
assert not Base.registry._new_mappers
assert all(m.configured for m in Base.registry.mappers)
assert IdentityBase.metadata is Base.metadata  # one schema
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_collector_back_on_after_loading():
    """`stackling serve` loads with the cyclic collector off; it is on again afterwards,
    and a collector nobody turned off is left as it was (nothing frozen)."""
    code = """
import gc
from stackling.app import collect_garbage_again
frozen = gc.get_freeze_count()
collect_garbage_again()
assert gc.isenabled() and gc.get_freeze_count() == frozen
gc.disable()
collect_garbage_again()
assert gc.isenabled() and gc.get_freeze_count() > frozen
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_token_while_other_models_map(tmp_path):
    """Before the background loader has mapped the other services' models, a password
    token is issued and validated: identity's requests never configure the shared registry
    (a broken mapping on it stands for a module the loader is still importing)."""
    env = {**os.environ, "STACKLING_ADMIN_PASSWORD": "pw-admin-1"}
    subprocess.run([sys.executable, "-m", "stackling.cli", "bootstrap", "--data-dir",
                    str(tmp_path)], check=True, env=env, capture_output=True)
    code = f"""
from sqlalchemy import Column, Integer
from sqlalchemy.orm import relationship
from starlette.testclient import TestClient
from stackling.app import create_app, create_runtime
from stackling.common.db import Base
from stackling.config import load_settings

runtime = create_runtime(load_settings(data_dir={str(tmp_path)!r}), progressive=True)
app = create_app(runtime)

class HalfImported(Base):
    __tablename__ = "half_imported"
    id = Column(Integer, primary_key=True)
    other = relationship("NotYetImported")

runtime.start()  # identity's start hook alone (its requests wait for it)
client = TestClient(app)  # no lifespan: the loader never runs
body = {{"auth": {{"identity": {{"methods": ["password"], "password": {{"user": {{
    "name": "admin", "domain": {{"id": "default"}}, "password": "pw-admin-1"}}}}}},
    "scope": {{"project": {{"name": "admin", "domain": {{"id": "default"}}}}}}}}}}
r = client.post("/identity/v3/auth/tokens", json=body)
assert r.status_code == 201, r.text
token = r.headers["X-Subject-Token"]
r = client.get("/identity/v3/auth/tokens", headers={{"X-Auth-Token": token,
                                                     "X-Subject-Token": token}})
assert r.status_code == 200, r.text
"""
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
