"""A project's segment range under many processes: 80 racing network creates against a
50-id project range with no shared id left for that project give exactly 50 networks with
distinct VNIs inside the range and 30 clean 503s, and nothing half-made; racing creates of
overlapping ranges make exactly one."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from sqlalchemy import create_engine, text

N = "/networking/v2.0"
R = f"{N}/network_segment_ranges"
CONFIG = "network:\n  ml2:\n    tenant_network_types: [vxlan]\n    vni_ranges: ['1000:1999']\n"


def _parallel(server, token: str, calls: list[tuple[str, dict]], threads: int = 20
              ) -> list[httpx.Response]:
    local = threading.local()

    def run(call: tuple[str, dict]) -> httpx.Response:
        if not hasattr(local, "http"):
            local.http = httpx.Client(base_url=server.url, headers={"X-Auth-Token": token},
                                      timeout=120)
        return local.http.post(call[0], json=call[1])

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(run, calls))


@pytest.mark.concurrency
@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_racing_creates_fill_a_project_range_exactly(cloud_factory, backend, tmp_path):
    config = tmp_path / "ranges.yaml"
    config.write_text(CONFIG)
    server = cloud_factory(backend, workers=4, config=config)
    admin = server.sdk()
    member = server.new_project_member()
    other = server.new_project_member()
    project = member["project"].id
    mine = admin.network.create_network_segment_range(
        name="fifty", shared=False, project_id=project, network_type="vxlan",
        minimum=1000, maximum=1049)
    # the rest of the shared default belongs to another project: nothing shared is left
    theirs = admin.network.create_network_segment_range(
        name="the-rest", shared=False, project_id=other["project"].id,
        network_type="vxlan", minimum=1050, maximum=1999)
    token = server.token(user=member["user"].name, project=member["project"].name,
                         password=member["password"])

    results = _parallel(server, token, [(f"{N}/networks", {"network": {"name": f"race-{i}"}})
                                        for i in range(80)])
    codes = sorted(r.status_code for r in results)
    assert codes == [201] * 50 + [503] * 30, [r.text for r in results
                                               if r.status_code not in (201, 503)][:3]
    assert {r.json()["NeutronError"]["type"] for r in results if r.status_code == 503} == {
        "NoNetworkAvailable"}

    nets = list(admin.network.networks(project_id=project))
    assert len(nets) == 50
    vnis = sorted(n.provider_segmentation_id for n in nets)
    assert vnis == list(range(1000, 1050))
    shown = admin.network.get_network_segment_range(mine.id)
    assert shown.available == [] and shown.used == {str(v): project for v in vnis}
    assert admin.network.get_network_segment_range(theirs.id).used == {}
    # nothing half-made: one allocation and one segment per network, no orphans
    engine = create_engine(server.database_url)
    try:
        with engine.connect() as conn:
            allocations = conn.execute(text(
                "SELECT count(*) FROM network_segment_allocation "
                "WHERE network_type = 'vxlan'")).scalar()
            segments = conn.execute(text(
                "SELECT count(*) FROM network_segment WHERE network_type = 'vxlan'")).scalar()
            networks = conn.execute(text(
                "SELECT count(*) FROM network_network WHERE project_id = :p"),
                {"p": project}).scalar()
    finally:
        engine.dispose()
    assert (allocations, segments, networks) == (50, 50, 50)

    # ten racing creates of pairwise-overlapping ranges: exactly one is made
    results = _parallel(server, server.token(), [(R, {"network_segment_range": {
        "network_type": "geneve", "minimum": 3000 + i, "maximum": 3010 + i}})
        for i in range(10)])
    assert sorted(r.status_code for r in results) == [201] + [409] * 9
    assert {r.json()["NeutronError"]["type"] for r in results if r.status_code == 409} == {
        "NetworkSegmentRangeOverlaps"}
    made = [r for r in admin.network.network_segment_ranges(network_type="geneve")
            if not r.default]
    assert len(made) == 1
