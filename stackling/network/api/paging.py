"""Neutron's `<collection>_links`, built as `neutron.api.api_common` builds them.

A page shows `next` unless it is a short page read forwards, and `previous` unless it is a
short page read backwards: a full last page still offers `next`, whose page is empty and
offers only `previous`. Each link drops the request's `marker`/`page_reverse` and sets
its own (an empty page has no item to mark, so its links carry none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from stackling.common.listing import ListParams


def page_links(url: str, query: Any, collection: str, items: Sequence[Mapping[str, Any]],
               params: ListParams) -> dict[str, list[dict[str, str]]]:
    """`{"<collection>_links": [...]}` when `limit` is in use, else `{}`."""
    if not params.limit:
        return {}
    base = [(k, v) for k, v in query.multi_items() if k not in ("marker", "page_reverse")]
    short = len(items) < params.limit
    links: list[dict[str, str]] = []
    if not (short and not params.page_reverse):
        q = [*base, ("marker", items[-1]["id"])] if items else base
        links.append({"rel": "next", "href": f"{url}?{urlencode(q)}"})
    if not (short and params.page_reverse):
        q = [*base, ("marker", items[0]["id"])] if items else list(base)
        q.append(("page_reverse", "True"))
        links.append({"rel": "previous", "href": f"{url}?{urlencode(q)}"})
    return {f"{collection}_links": links} if links else {}
