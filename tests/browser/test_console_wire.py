"""The console shows the wire (a live cloud with dataplane.driver netns, as root): the
topology marks the host each server runs on and the physical networks each host reaches,
and the Path view lists the hops between two servers and says where and why a path is cut.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_console import (  # noqa: F401 - fixtures used by name
    browser,
    graph_edges,
    page,
    sign_in,
    wait_for_node,
)
from tests.conftest import ADMIN_PASSWORD, DEMO_PASSWORD
from tests.dataplane.conftest import (  # noqa: F401 - fixtures used by name
    DataplaneCloud,
    dataplane_cloud,
    dataplane_clouds,
    netns_guard,
)

pytestmark = pytest.mark.dataplane


def trace(pg: Any, source: str, destination: str, protocol: str = "icmp",
          port: int | None = None) -> str:
    pg.select_option("#path-source", source)
    pg.select_option("#path-destination", destination)
    pg.select_option("#path-protocol", protocol)
    if port is not None:
        pg.fill("#path-port", str(port))
    pg.evaluate("document.querySelector('#path-result').innerHTML = ''")
    pg.click("#path-trace")
    pg.wait_for_selector("#path-verdict", timeout=60_000)
    return pg.inner_text("#path-result")


def test_topology_marks_hosts_and_physnets_and_path_says_why(
        page: Any, dataplane_cloud: DataplaneCloud) -> None:  # noqa: F811
    dp = dataplane_cloud
    net, _ = dp.network("dp-console", "10.74.0.0/24")
    a = dp.server("vm-console-a", net.id)
    b = dp.server("vm-console-b", net.id)
    closed = dp.sdk.network.create_security_group(name="dp-console-closed")
    c = dp.server("vm-console-c", net.id, security_groups=[closed.name])
    assert dp.wait_ssh(dp.names.guest(a.id), dp.address(b)).strip() == "vm-console-b"
    host_a = dp.sdk.compute.get_server(a.id).compute_host

    sign_in(page, dp.cloud, "admin", ADMIN_PASSWORD, "admin")
    wait_for_node(page, "server", "vm-console-a")
    wait_for_node(page, "host", host_a)
    page.wait_for_function(
        "([h, s]) => graph.edges().some(e => e.source().data('label') === h "
        "&& e.target().data('label') === s)", arg=[host_a, "vm-console-a"], timeout=30_000)
    edges = graph_edges(page)
    assert (host_a, "vm-console-a") in edges
    # the hosts' cables: each reaches the physical networks it is mapped to, and no other
    physnets = {dst for src, dst in edges if src == host_a and
                page.evaluate("(l) => graph.nodes().some(n => n.data('kind') === 'physnet' "
                              "&& n.data('label') === l)", dst)}
    assert physnets, edges
    wire = dp.sdk.session.get(dp.cloud.url + "/dataplane/v1/wire").json()["wire"]
    assert physnets == set(next(h for h in wire["hosts"] if h["name"] == host_a)[
        "physical_networks"])

    page.click("#tabs button[data-view=path]")
    page.wait_for_selector(f"#path-source option[value='{a.id}']", state="attached")
    text = trace(page, a.id, b.id)
    assert page.get_attribute("#path-verdict", "data-reached") == "true", text
    kinds = page.eval_on_selector_all("#path-hops li", "els => els.map(e => e.dataset.kind)")
    assert kinds[0] == "guest" and kinds[-1] == "guest" and "host" in kinds, kinds
    assert host_a in text

    text = trace(page, a.id, c.id, "tcp", 22)
    assert page.get_attribute("#path-verdict", "data-reason") == "security group", text
    assert dp.names.guest(c.id) in text and "tcp port 22" in text


def test_a_member_is_refused_the_path(page: Any, dataplane_cloud: DataplaneCloud  # noqa: F811
                                      ) -> None:
    dp = dataplane_cloud
    net, _ = dp.network("dp-console-m", "10.75.0.0/24")
    dp.server("vm-console-m1", net.id)
    page.expected_failures.append((403, "/dataplane/v1/path"))
    sign_in(page, dp.cloud, "demo", DEMO_PASSWORD, "demo")
    # No Path tab for a member's token; the API refuses the trace all the same.
    assert page.is_hidden("#tabs button[data-view=path]")
    server = dp.sdk.compute.find_server("vm-console-m1")
    status = page.evaluate("""async (id) => (await fetch(
        `/dataplane/v1/path?source=${id}&destination=${id}`, {headers: {"X-Auth-Token":
        JSON.parse(sessionStorage.getItem("stackling.session")).token}})).status""", server.id)
    assert status == 403
