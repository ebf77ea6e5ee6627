"""Regenerate the console screenshots in docs/: `make screenshots`.

Starts a fresh demo cloud (SQLite, a temporary directory), gives it what an operator
would look at (a Get-Me-a-Network server with a floating IP, a routed network over the two
demo racks with servers on it, a server that could not be scheduled, a failed stack in the
demo project), signs in as admin in headless Chromium and saves the topology (a server's
details open), capacity and "Why it failed" views. Then a second cloud of 303 nodes (the
browser tests' larger topology) for the topology at its default zoom and fitted whole.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.browser.test_console import CHROMIUM, FAILING_STACK, sign_in
from tests.browser.test_console_topology import SIZES, build_topology, expected_nodes
from tests.conftest import ADMIN_PASSWORD, Cloud, create_database, free_port


def populate(cloud: Cloud) -> None:
    cloud.cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic", "auto",
              "--wait", "web-1", "-f", "json", cloud="stackling")
    admin = cloud.sdk()
    net = admin.network.create_network(name="routed", provider_network_type="vlan",
                                       provider_physical_network="physnet1")
    seg1 = next(iter(admin.network.segments(network_id=net.id)))
    admin.network.update_segment(seg1, name="rack1")
    seg2 = admin.network.create_segment(network_id=net.id, network_type="vlan",
                                        physical_network="physnet2", name="rack2")
    admin.network.create_subnet(network_id=net.id, segment_id=seg1.id, ip_version=4,
                                cidr="10.91.1.0/28", name="rack1-v4")
    admin.network.create_subnet(network_id=net.id, segment_id=seg2.id, ip_version=4,
                                cidr="10.91.2.0/24", name="rack2-v4")
    image = admin.image.find_image("cirros")
    flavor = admin.compute.find_flavor("m1.tiny")
    for name in ("db-1", "db-2"):
        server = admin.compute.create_server(name=name, flavor_id=flavor.id, image_id=image.id,
                                             networks=[{"uuid": net.id}])
        admin.compute.wait_for_server(server, status="ACTIVE", failures=["ERROR"], wait=60)
    huge = admin.compute.create_flavor(name="huge", ram=40000, vcpus=1, disk=1)
    doomed = admin.compute.create_server(name="too-big", flavor_id=huge.id, image_id=image.id,
                                         networks="none")
    admin.compute.wait_for_server(doomed, status="ERROR", failures=[], wait=60)
    demo = cloud.sdk("stackling")
    web = demo.compute.find_server("web-1")
    port = next(iter(demo.network.ports(device_id=web.id)))
    demo.network.create_ip(floating_network_id=demo.network.find_network("public").id,
                           port_id=port.id)
    stack = demo.orchestration.create_stack(name="web-tier", template=FAILING_STACK)
    demo.orchestration.wait_for_status(stack, status="CREATE_FAILED", failures=["CREATE_COMPLETE"],
                                       wait=60)


def settled(page: object) -> None:
    """The next refresh of the topology has been drawn (its status line changes)."""
    first = page.inner_text("#status")  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "(t) => document.querySelector('#status').textContent !== t", arg=first, timeout=30_000)


def main(out: str) -> None:
    from playwright.sync_api import sync_playwright

    docs = Path(out)
    docs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        cloud = Cloud("sqlite", create_database("sqlite", base / "db"), base / "data",
                      free_port()).start()
        try:
            populate(cloud)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1400, "height": 860}, bypass_csp=True)
                sign_in(page, cloud, "admin", ADMIN_PASSWORD, "admin")
                settled(page)
                page.evaluate("graph.nodes('.server.floating')[0].select().emit('tap')")
                page.screenshot(path=str(docs / "console-topology.png"))
                page.click("#tabs button[data-view=capacity]")
                page.wait_for_selector("#cap-hosts tbody tr")
                page.wait_for_selector("#cap-segments tbody tr[data-segment]")
                page.screenshot(path=str(docs / "console-capacity.png"), full_page=True)
                page.click("#tabs button[data-view=failures]")
                page.wait_for_selector(".server-failure")
                page.wait_for_selector(".stack-failure")
                page.screenshot(path=str(docs / "console-failures.png"), full_page=True)
                browser.close()
        finally:
            cloud.stop()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        cloud = Cloud("sqlite", create_database("sqlite", base / "db"), base / "data",
                      free_port()).start()
        try:
            build_topology(cloud, *SIZES["300"])
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1400, "height": 860}, bypass_csp=True)
                sign_in(page, cloud, "admin", ADMIN_PASSWORD, "admin")
                page.wait_for_function("(n) => graph.nodes().length === n",
                                       arg=expected_nodes(*SIZES["300"]), timeout=120_000)
                page.screenshot(path=str(docs / "console-topology-300.png"))
                page.click("#zoom-fit")
                page.screenshot(path=str(docs / "console-topology-300-fit.png"))
                browser.close()
        finally:
            cloud.stop()
    print(f"screenshots written to {docs}/console-*.png")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs")
