"""Tag filters: a network list filtered by 1, 10, 100 and the most tags a filter may carry
(`http.max_filter_values`, 1,000), on PostgreSQL with 10,000 tagged networks; the time at
the maximum must stay within 2x of one tag (issue 19: 100 tags had taken 27 s).

    python -m bench.filters [samples]

One `stackling serve` on a fresh PostgreSQL database (127.0.0.1:5432, user postgres, or
STACKLING_BENCH_PG), seeded straight into the database: 10,000 networks, each tagged `all`
and one of 1,000 tags `o0`..`o999` (ten networks each). Two series of filters of N tags:
`o0` and N-1 tags no network holds (only the count grows: the criterion), and `o0`..
`o{N-1}` (the rows read grow too, ten per tag: shown, not judged). Each request asks for
the first page of 100 (`limit=100`), so every answer is at most a page. Times are the server's own
(its access line: from the request's arrival to its answer), free of the client's and
TCP's delays (on this host those were a fixed ~40 ms on some answers); each sample is
followed by a floor call (GET /networking/v2.0/extensions) to show the machine's load.
Last, the same filters in the form they had before (one EXISTS per tag) are timed
straight in SQL, under a 20 s statement timeout, for comparison.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import and_, exists, insert, select, text

from bench.common import Server, free_port, median_ms, report, table
from stackling.common.db import Database
from stackling.network.core.models import Network, Tag

N = "/networking/v2.0"
NETWORKS, VOCABULARY, COUNTS = 10_000, 1_000, (1, 10, 100, 1000)
KINDS = ("tags", "tags-any", "not-tags", "not-tags-any")
PG = os.environ.get("STACKLING_BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432")
# "GET <path> <status> <ms>ms": the server's access line.
ACCESS_LINE = re.compile(r"GET (\S+) 200 ([0-9.]+)ms")


def _create_database() -> str:
    import psycopg

    name = f"stackling_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                         autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def _drop_database(name: str) -> None:
    import psycopg

    with psycopg.connect("host=127.0.0.1 port=5432 user=postgres dbname=postgres",
                         autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def seed(db: Database, project_id: str) -> None:
    """NETWORKS networks tagged `all` and `o<i % VOCABULARY>`, in one transaction."""
    with db.transaction() as s:
        ids = [str(uuid.uuid4()) for _ in range(NETWORKS)]
        s.execute(insert(Network), [{"id": i, "project_id": project_id, "name": f"b{n}"}
                                    for n, i in enumerate(ids)])
        rows = [{"resource_id": i, "tag": "all", "resource_type": "networks"} for i in ids]
        rows += [{"resource_id": i, "tag": f"o{n % VOCABULARY}", "resource_type": "networks"}
                 for n, i in enumerate(ids)]
        s.execute(insert(Tag), rows)
    with db.engine.connect() as conn:
        conn.execute(text("ANALYZE network_tag"))
        conn.execute(text("ANALYZE network_network"))
        conn.commit()


def tags(n: int) -> list[str]:
    """N tags held by 10 networks each (rows read grow with N)."""
    return [f"o{k}" for k in range(n)]


def one_held(n: int) -> list[str]:
    """`o0` (10 networks) and N-1 tags no network holds (rows read stay the same)."""
    return ["o0", *(f"none{k}" for k in range(1, n))]


def old_clause(kind: str, names: list[str]) -> Any:
    """The filter as it was: one correlated EXISTS per tag (or one EXISTS ... IN)."""
    def has(tag: str) -> Any:
        return exists(select(Tag.tag).where(Tag.resource_id == Network.id, Tag.tag == tag))

    any_of = exists(select(Tag.tag).where(Tag.resource_id == Network.id, Tag.tag.in_(names)))
    return {"tags": and_(*[has(t) for t in names]), "tags-any": any_of,
            "not-tags": ~and_(*[has(t) for t in names]), "not-tags-any": ~any_of}[kind]


def time_old(db: Database, kind: str, n: int) -> str:
    stmt = (select(Network.id).where(old_clause(kind, tags(n))).order_by(Network.id)
            .limit(101))
    with db.engine.connect() as conn:
        conn.execute(text("SET statement_timeout = 20000"))
        t0 = time.perf_counter()
        try:
            conn.execute(stmt).all()
        except Exception:  # noqa: BLE001 - the statement timeout
            return "> 20000"
        finally:
            conn.rollback()
        return f"{(time.perf_counter() - t0) * 1000:.1f}"


def main() -> None:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 15
    name = _create_database()
    url = f"{PG}/{name}"
    tmp = Path(tempfile.mkdtemp(prefix="stackling-bench-"))
    srv = Server(tmp / "data", free_port(), ["--database-url", url])
    try:
        srv.start(timeout=180)
        c = srv.client()
        project = next(p["id"] for p in c.get("/identity/v3/auth/projects").json()["projects"]
                       if p["name"] == "admin")
        db = Database(url)
        seed(db, project)

        access = open(srv.log, errors="replace")  # noqa: SIM115 - read as the server writes
        access.seek(0, 2)

        def served_ms(path: str) -> float:
            """The server's own latency of its last answer on `path` (its access line),
            free of the client's and the network stack's delays."""
            found = None
            for line in access.read().splitlines():
                match = ACCESS_LINE.search(line)
                if match and match.group(1) == path:
                    found = float(match.group(2))
            if found is None:
                raise RuntimeError(f"no access line for {path} in {srv.log}")
            return found

        def floor() -> float:
            c.get(f"{N}/extensions").raise_for_status()
            return served_ms(f"{N}/extensions")

        def call(query: str) -> tuple[float, int]:
            r = c.get(f"{N}/networks?{query}&limit=100")
            if r.status_code != 200:
                raise RuntimeError(f"{query[:80]}: {r.status_code} {r.text[:300]}")
            return served_ms(f"{N}/networks") / 1000, len(r.json()["networks"])

        def series(queries: list[tuple[str, int, str]]
                   ) -> tuple[list[list[Any]], float, float]:
            """(label, tag count, query) rows; the first of each label is its base. Rounds
            interleave every query (then a floor call), so load drift hits all alike."""
            times: dict[int, list[float]] = {i: [] for i in range(len(queries))}
            floors: list[float] = []
            counts = {i: call(q)[1] for i, (_, _, q) in enumerate(queries)}
            for _ in range(samples):
                for i, (_, _, query) in enumerate(queries):
                    times[i].append(call(query)[0])
                floors.append(floor() / 1000)
            floor_ms = median_ms(floors)
            rows: list[list[Any]] = []
            worst, base = 0.0, {}
            for i, (label, n, _) in enumerate(queries):
                ms = median_ms(times[i])
                base.setdefault(label.split(" ")[0], ms)
                ratio = ms / base[label.split(" ")[0]]
                worst = max(worst, ratio)
                rows.append([label, n, counts[i], ms, ms / floor_ms, ratio])
            return rows, worst, floor_ms

        def queries(pick: Any) -> list[tuple[str, int, str]]:
            return [(kind, n, f"{kind}={','.join(pick(n))}") for kind in KINDS for n in COUNTS]

        # The request too: one tag repeated costs what one tag does.
        rows, worst, floor_a = series([*queries(one_held),
                                       ("tags (o0 x 1000)", 1000, "tags=" + ",".join(["o0"] * 1000))])
        rows_held, worst_held, floor_b = series(queries(tags))
        old = [[kind, n, time_old(db, kind, n)] for kind in ("tags", "not-tags")
               for n in (1, 10, 100)]
        db.dispose()
        head = ["filter", "tags", "networks", "ms", "x floor", "x one tag"]
        text_out = (
            f"PostgreSQL, {NETWORKS:,} networks, {2 * NETWORKS:,} tag rows; median of "
            f"{samples} requests each (server-side ms), first page of 100\n\n"
            "A filter of N tags: `o0` (10 networks) and N-1 tags no network holds, so the "
            "rows read stay the same and only the tag count grows:\n\n"
            + table(head, rows)
            + f"\n\nfloor (GET {N}/extensions): {floor_a:.2f} ms; max / one tag, worst "
            f"filter: {worst:.2f}x (must be <= 2x)\n\n"
            "A filter of N tags each held by 10 networks (the rows read grow with N, "
            "10 per tag):\n\n" + table(head, rows_held)
            + f"\n\nfloor: {floor_b:.2f} ms; max / one tag, worst filter: "
            f"{worst_held:.2f}x\n\n"
            "The filter as it was (one EXISTS per tag), the same rows, straight SQL:\n\n"
            + table(["filter", "tags", "ms"], old))
        report("filters", text_out)
    finally:
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
        _drop_database(name)


if __name__ == "__main__":
    main()
