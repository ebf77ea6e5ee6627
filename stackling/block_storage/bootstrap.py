"""Block storage's bootstrap: the `__DEFAULT__` volume type, and the `volumev3` catalog
entry DevStack registers beside `block-storage` (both at /volume/v3)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from stackling.block_storage import types
from stackling.runtime import CatalogEntry

VOLUMEV3 = CatalogEntry(type="volumev3", name="cinderv3", path="/volume/v3")


def default_type(db: Session, runtime: Any) -> None:
    types.system_default(db)


def volumev3_entry(db: Session, runtime: Any) -> None:
    registrar = next((c.on_catalog_entry for c in runtime.components if c.on_catalog_entry),
                     None)
    if registrar is not None:
        registrar(db, runtime, VOLUMEV3)
