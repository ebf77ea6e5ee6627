"""Glance's multi-store backends, as local `file` stores (settings `image.stores`).

With no stores configured the image service has one store, `file`, and no multi-store
API (Glance without `enabled_backends`). With stores configured, each image records the
stores holding its data (`Image.stores`, Glance's locations' `store`), shown as `stores`;
data goes to the stores an upload or import names (the default store otherwise) and the
`copy-image` import method copies it into more. The default store keeps its files where
the single store does (<data_dir>/images/<id>), the others under
<data_dir>/images/stores/<store>/<id>.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stackling.common import storage
from stackling.common.errors import BadRequest
from stackling.image.models import Image

SINGLE = "file"  # the one store without multi-store


@dataclass(frozen=True)
class Stores:
    ids: tuple[str, ...]
    default: str
    multi: bool  # Glance's enabled_backends is set

    def info(self) -> list[dict[str, Any]]:
        """`GET /v2/info/stores`: Glance marks the default with the string "true"."""
        if not self.multi:
            return [{"id": SINGLE, "description": "Local filesystem store", "default": True}]
        out: list[dict[str, Any]] = []
        for sid in self.ids:
            store: dict[str, Any] = {"id": sid, "description": f"Local filesystem store {sid}"}
            if sid == self.default:
                store["default"] = "true"
            out.append(store)
        return out

    def check(self, store: Any) -> str:
        """A store id an upload or import names, else glance_store's UnknownScheme (a 400
        for an upload, a 409 for an import, as Glance answers them)."""
        if not isinstance(store, str) or store not in self.ids:
            raise UnknownStore(f"Unknown scheme '{store}' found in URI")
        return store

    def detail(self, data_dir: Path) -> list[dict[str, Any]]:
        """`GET /v2/info/stores/detail` (admins): each store's type and file properties."""
        out = self.info()
        for store in out:
            folder = data_dir if store["id"] == self.default else data_dir / "stores" / store["id"]
            store.update({"type": "file", "weight": 0, "properties": {
                "data_dir": str(folder), "chunk_size": 65536, "thin_provisioning": False}})
        return out


class UnknownStore(BadRequest):
    pass


def configured(settings: Any) -> Stores:
    ids = tuple(dict.fromkeys(s for s in (settings.image.stores or []) if s))
    if not ids:
        return Stores((SINGLE,), SINGLE, False)
    default = settings.image.default_store or ids[0]
    if default not in ids:
        raise ValueError(f"image.default_store {default!r} is not one of image.stores")
    return Stores(ids, default, True)


def path(data_dir: Path, stores: Stores, store: str, image_id: str) -> Path:
    """Where `store` keeps the image's data (`data_dir` is <data_dir>/images)."""
    if store == stores.default:
        return data_dir / image_id
    return data_dir / "stores" / store / image_id


def held_by(image: Image, stores: Stores) -> list[str]:
    """The stores holding the image's data: recorded, else (an image written before
    multi-store was on) the default store once the image has data."""
    if image.stores is not None:
        return list(image.stores)
    return [stores.default] if image.status in ("active", "deactivated") else []


def source(data_dir: Path, stores: Stores, image: Image) -> Path | None:
    """The first data file of the image's stores (the default store first), or None (an
    image with metadata only, as the demo cirros)."""
    held = held_by(image, stores)
    for store in sorted(held, key=lambda s: s != stores.default):
        candidate = path(data_dir, stores, store, image.id)
        if candidate.is_file():
            return candidate
    return None


def copy_into(data_dir: Path, stores: Stores, image: Image, store: str) -> None:
    """Copy the image's data into `store` (a whole new file, renamed into place); an image
    with no data file has nothing to copy and is recorded there all the same."""
    src = source(data_dir, stores, image)
    if src is None:
        if image.size:
            raise FileNotFoundError(f"Image {image.id} has no data in any of its stores")
        return
    storage.copy_file(src, path(data_dir, stores, store, image.id))  # StorageFull | OSError


def place(data_dir: Path, stores: Stores, image: Image, written: Path,
          targets: list[str]) -> None:
    """Data just written at `written` goes into each of `targets` (moved into the first,
    copied into the others); the image records them."""
    first = path(data_dir, stores, targets[0], image.id)
    first.parent.mkdir(parents=True, exist_ok=True)
    if written != first:
        written.replace(first)
    image.stores = [targets[0]]
    for store in targets[1:]:
        copy_into(data_dir, stores, image, store)
        image.stores = [*image.stores, store]


def discard(data_dir: Path, image_id: str) -> None:
    """Remove the image's data from every store, configured now or before (a deleted
    image)."""
    (data_dir / image_id).unlink(missing_ok=True)
    extra = data_dir / "stores"
    if extra.is_dir():
        for store_dir in extra.iterdir():
            (store_dir / image_id).unlink(missing_ok=True)


def delete_from_store(data_dir: Path, stores: Stores, image: Image, store: str) -> None:
    """`DELETE /v2/stores/{store}/{image}`: the image's data leaves one store (Glance's
    checks: an unknown store 409, not active 409, its only store 403, not there 404)."""
    from stackling.common.errors import Conflict, Forbidden, NotFound

    if store not in stores.ids:
        raise Conflict(f"The selected store {store} is not available on this node.")
    if image.status != "active":
        raise Conflict("It's not allowed to remove image data from store if image status is "
                       "not 'active'")
    held = held_by(image, stores)
    if len(held) == 1:
        raise Forbidden("Cannot delete image data from the only store containing it. "
                        "Consider deleting the image instead.")
    if store not in held:
        raise NotFound(f"Image {image.id} is not stored in store {store}.")
    image.stores = [s for s in held if s != store]
    path(data_dir, stores, store, image.id).unlink(missing_ok=True)
