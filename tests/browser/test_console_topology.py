"""The admin topology at 30 and at 300 nodes: laid out by network and router, zoom and pan,
labels legible at the default zoom, floating IPs drawn, nothing the graph library warns
about, and ids that read on one line in the details panel.

Each cloud is built through the APIs in a few seconds (dataplane.driver none: servers are
rows): an external network, routers with a gateway on it, one network and subnet behind
each router, servers booted there in one multi-create request per network, a floating IP on
every fifth server. The hosts' VCPU allocation ratio is raised through placement so 264
one-VCPU servers fit the four demo hosts.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_console import (  # noqa: F401 - fixtures used by name
    browser,
    page,
    sign_in,
)
from tests.conftest import ADMIN_PASSWORD, Cloud, create_database, drop_database, free_port

PLACEMENT = {"OpenStack-API-Version": "placement 1.26"}
# (routers, servers behind each): 2 external + 3 x (router, network, subnet, 5 servers) + 4
# hosts = 30 nodes; 2 + 11 x (3 + 24) + 4 = 303 nodes (under 25 a subnet's servers are
# drawn one by one).
SIZES = {"30": (3, 5), "300": (11, 24)}


def expected_nodes(routers: int, per_router: int) -> int:
    return 2 + routers * (3 + per_router) + 4


def build_topology(cloud: Cloud, routers: int, per_router: int) -> dict[str, Any]:
    """The objects, through the APIs; returns the floating IP of each server that has one."""
    http = cloud.http(cloud.token())
    ext = http.get("/networking/v2.0/networks?name=public").json()["networks"][0]["id"]
    project = http.get("/identity/v3/projects?name=admin").json()["projects"][0]["id"]
    assert http.put(f"/compute/v2.1/os-quota-sets/{project}", json={"quota_set": {
        "instances": -1, "cores": -1, "ram": -1}}).status_code == 200
    assert http.put(f"/networking/v2.0/quotas/{project}", json={"quota": {
        "port": -1, "network": -1, "subnet": -1, "router": -1, "floatingip": -1}}).status_code == 200
    for rp in http.get("/placement/resource_providers", headers=PLACEMENT).json()[
            "resource_providers"]:
        inv = http.get(f"/placement/resource_providers/{rp['uuid']}/inventories",
                       headers=PLACEMENT).json()
        if "VCPU" in inv["inventories"]:
            inv["inventories"]["VCPU"]["allocation_ratio"] = 16.0
            assert http.put(f"/placement/resource_providers/{rp['uuid']}/inventories",
                            headers=PLACEMENT, json=inv).status_code == 200
    flavor = http.post("/compute/v2.1/flavors", json={"flavor": {
        "name": "nano", "ram": 64, "vcpus": 1, "disk": 0}}).json()["flavor"]["id"]
    image = http.get("/image/v2/images?name=cirros").json()["images"][0]["id"]
    for i in range(routers):
        net = http.post("/networking/v2.0/networks", json={"network": {
            "name": f"net-{i}"}}).json()["network"]
        sub = http.post("/networking/v2.0/subnets", json={"subnet": {
            "network_id": net["id"], "cidr": f"10.{i}.0.0/24", "ip_version": 4,
            "name": f"subnet-{i}"}}).json()["subnet"]
        router = http.post("/networking/v2.0/routers", json={"router": {
            "name": f"router-{i}", "external_gateway_info": {"network_id": ext}}}).json()["router"]
        assert http.put(f"/networking/v2.0/routers/{router['id']}/add_router_interface",
                        json={"subnet_id": sub["id"]}).status_code == 200
        r = http.post("/compute/v2.1/servers", json={"server": {
            "name": f"vm-{i}", "flavorRef": flavor, "imageRef": image,
            "networks": [{"uuid": net["id"]}], "min_count": per_router,
            "max_count": per_router}})
        assert r.status_code == 202, r.text
    servers: list[dict[str, Any]] = []
    for _ in range(600):  # a condition, not a duration: every build has ended
        servers = http.get("/compute/v2.1/servers/detail").json()["servers"]
        if len(servers) == routers * per_router and all(s["status"] != "BUILD" for s in servers):
            break
        time.sleep(0.2)
    assert all(s["status"] == "ACTIVE" for s in servers), {s["status"] for s in servers}
    name_of = {s["id"]: s["name"] for s in servers}
    ports = http.get("/networking/v2.0/ports?device_owner=compute:nova").json()["ports"]
    floating = {}
    for port in sorted(ports, key=lambda p: name_of[p["device_id"]])[::5]:
        fip = http.post("/networking/v2.0/floatingips", json={"floatingip": {
            "floating_network_id": ext, "port_id": port["id"]}}).json()["floatingip"]
        floating[name_of[port["device_id"]]] = fip["floating_ip_address"]
    http.close()
    return {"floating": floating, "nodes": expected_nodes(routers, per_router)}


@pytest.fixture(scope="module", params=sorted(SIZES))
def topology(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[tuple[Cloud, dict[str, Any]]]:
    base: Path = tmp_path_factory.mktemp(f"topology{request.param}")
    url = create_database("sqlite", base / "db")
    cloud = Cloud("sqlite", url, base / "data", free_port()).start()
    try:
        yield cloud, build_topology(cloud, *SIZES[request.param])
    finally:
        cloud.stop()
        drop_database(url)


def open_topology(pg: Any, cloud: Cloud, nodes: int) -> float:
    """Signed in as admin, all `nodes` drawn; returns the default zoom."""
    sign_in(pg, cloud, "admin", ADMIN_PASSWORD, "admin")
    pg.wait_for_function("(n) => graph.nodes().length === n", arg=nodes, timeout=120_000)
    return pg.evaluate("graph.zoom()")


def test_topology_is_layered_legible_and_draws_floating_ips(
        page: Any, topology: tuple[Cloud, dict[str, Any]]) -> None:  # noqa: F811
    cloud, built = topology
    zoom = open_topology(page, cloud, built["nodes"])
    first = page.inner_text("#status")
    # Layers: external network, then each router, its network, its subnet's box, its servers.
    layers = page.evaluate("""() => graph.nodes('.router').map(r => {
        const y = (n) => n.isParent() ? n.boundingBox().y1 : n.position('y');
        const ext = graph.nodes('.external')[0];
        const net = r.outgoers('node.network')[0];
        const sub = net.outgoers('node.subnet')[0];
        return [y(ext), y(r), y(net), y(sub), Math.min(...sub.children().map(y))];
    })""")
    assert len(layers) == len(page.evaluate("graph.nodes('.router').map(n => n.id())"))
    for ys in layers:
        assert ys == sorted(ys) and len(set(ys)) == len(ys), ys
    # Every server is drawn in its subnet's box.
    assert page.evaluate("graph.nodes('.server').every(s => s.parent().hasClass('subnet'))")
    # No two nodes (with their labels) overlap.
    overlaps = page.evaluate("""() => {
        const boxes = graph.nodes().filter(n => !n.isParent()).map(n =>
            [n.data('label'), n.boundingBox({includeLabels: true})]);
        const out = [];
        for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
            const [a, p] = boxes[i], [b, q] = boxes[j];
            if (p.x1 < q.x2 && q.x1 < p.x2 && p.y1 < q.y2 && q.y1 < p.y2) out.push([a, b]);
        }
        return out.slice(0, 10);
    }""")
    assert not overlaps, overlaps
    # Labels at the default zoom: every drawn label at least 10 px on screen.
    assert zoom >= 0.9
    small = page.evaluate("""() => graph.elements().filter(e => e.style('label'))
        .map(e => [e.data('label'), parseFloat(e.style('font-size')) * graph.zoom()])
        .filter(([, px]) => px < 10)""")
    assert not small, small[:10]
    # Floating IPs: a ring on the server and the address under its name.
    drawn = dict(page.evaluate("""() => graph.nodes('.server.floating').map(n =>
        [n.data('label'), n.data('display')])"""))
    assert set(drawn) == set(built["floating"]), (sorted(drawn), sorted(built["floating"]))
    for name, address in built["floating"].items():
        assert drawn[name].split("\n") == [name, address], drawn[name]
    # A refresh later (the page polls) the graph is the same and nothing was warned of.
    page.wait_for_function("(t) => document.querySelector('#status').textContent !== t",
                           arg=first, timeout=30_000)
    assert page.evaluate("graph.nodes().length") == built["nodes"]
    assert not [t for kind, t in page.console_messages if kind in ("warning", "error")], \
        page.console_messages


EMPTY_POINT = """() => {
    const c = graph.container().getBoundingClientRect();
    const tools = document.querySelector('#graph-tools').getBoundingClientRect();
    const boxes = graph.elements().map(e => e.renderedBoundingBox({includeLabels: true}));
    for (let y = 40; y < c.height - 40; y += 12) for (let x = 40; x < c.width - 40; x += 12) {
        const px = c.left + x, py = c.top + y;
        if (px >= tools.left - 10 && py <= tools.bottom + 10) continue;
        if (!boxes.some(b => x >= b.x1 - 6 && x <= b.x2 + 6 && y >= b.y1 - 6 && y <= b.y2 + 6)) {
            return {x: px, y: py};
        }
    }
    return null;
}"""


def wheel_until(pg: Any, delta_y: int, condition: str, arg: Any) -> None:
    """Wheel notches (Cytoscape zooms some 4 % a notch) until `condition` holds."""
    for _ in range(60):
        pg.mouse.wheel(0, delta_y)
        if pg.evaluate(condition, arg):
            return
    pg.wait_for_function(condition, arg=arg, timeout=5_000)


def test_zoom_and_pan(page: Any, topology: tuple[Cloud, dict[str, Any]]  # noqa: F811
                      ) -> None:
    cloud, built = topology
    default = open_topology(page, cloud, built["nodes"])
    box = page.eval_on_selector("#graph", "g => { const r = g.getBoundingClientRect(); "
                                "return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }")
    # The wheel zooms (out: labels of the small nodes leave, networks' and routers' grow).
    page.mouse.move(box["x"], box["y"])
    wheel_until(page, 100, "(z) => graph.zoom() < z * 0.6", default)
    out = page.evaluate("graph.zoom()")
    top = page.evaluate("parseFloat(graph.nodes('.router')[0].style('font-size')) * graph.zoom()")
    assert top >= 10.9, (out, top)
    wheel_until(page, -100, "(z) => graph.zoom() > z * 1.3", out)
    # A drag on the background pans by as much.
    start = page.evaluate(EMPTY_POINT)
    assert start is not None
    before = page.evaluate("graph.pan()")
    page.mouse.move(start["x"], start["y"])
    page.mouse.down()
    page.mouse.move(start["x"] - 120, start["y"] - 70, steps=8)
    page.mouse.up()
    after = page.evaluate("graph.pan()")
    assert abs(after["x"] - before["x"] + 120) < 15 and abs(after["y"] - before["y"] + 70) < 15, \
        (before, after)
    # Buttons: zoom in, fit the whole topology in view, back to the default view.
    zoom = page.evaluate("graph.zoom()")
    page.click("#zoom-in")
    page.wait_for_function("(z) => graph.zoom() > z * 1.1", arg=zoom)
    page.click("#zoom-fit")
    inside = page.evaluate("""() => {
        const b = graph.elements().renderedBoundingBox(), c = graph.container();
        return b.x1 >= -1 && b.y1 >= -1 && b.x2 <= c.clientWidth + 1 && b.y2 <= c.clientHeight + 1;
    }""")
    assert inside
    page.click("#zoom-reset")
    page.wait_for_function("(z) => Math.abs(graph.zoom() - z) < 1e-6", arg=default)


ONE_LINE = """(key) => {
    const dt = [...document.querySelectorAll('#details dt')].find(d => d.textContent === key);
    const token = dt.nextElementSibling.querySelector('.token');
    const range = document.createRange();
    range.selectNodeContents(token);
    const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
    return {text: token.textContent, lines: tops.size, clipped: token.scrollWidth > token.clientWidth};
}"""


@pytest.mark.parametrize("topology", ["30"], indirect=True)
def test_details_keep_ids_and_addresses_on_one_line(
        page: Any, topology: tuple[Cloud, dict[str, Any]]) -> None:  # noqa: F811
    cloud, built = topology
    open_topology(page, cloud, built["nodes"])
    name, address = sorted(built["floating"].items())[0]
    server_id = page.evaluate("(name) => { const n = graph.nodes('.server').filter("
                              "s => s.data('label') === name)[0]; n.emit('tap'); "
                              "return n.data('obj').id; }", name)
    page.wait_for_selector("#details dt")
    for key, text in (("id", server_id), ("floating IPs", address), ("tenant_id", None)):
        line = page.evaluate(ONE_LINE, key)
        assert line["lines"] == 1 and not line["clipped"], (key, line)
        if text is not None:
            assert line["text"] == text
    page.evaluate("graph.nodes('.external')[0].emit('tap')")
    page.wait_for_function("document.querySelector('#details h3').textContent === 'public'")
    line = page.evaluate(ONE_LINE, "id")
    assert line["lines"] == 1 and not line["clipped"], line
