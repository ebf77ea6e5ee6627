"""The operator console in a real headless Chromium (Debian's package, driven by Playwright).

The console is a client of the public APIs: these tests sign in as a user would, look at
the graph the page drew (Cytoscape's model, read back from the page), and change the cloud
through the CLI and openstacksdk to see the page follow.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_PASSWORD, DEMO_PASSWORD, Cloud, create_database, drop_database, free_port

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    # `make test` installs Debian's chromium when it is missing; no skip if it is not there.
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def console_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cloud]:
    base = tmp_path_factory.mktemp("console")
    url = create_database("sqlite", base / "db")
    server = Cloud("sqlite", url, base / "data", free_port()).start()
    yield server
    server.stop()
    drop_database(url)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    # bypass_csp: Playwright's wait_for_function evaluates strings, which the page's CSP forbids.
    context = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    # What the page logged (Cytoscape warns there, e.g. of edges it cannot draw).
    pg.console_messages = []
    pg.on("console", lambda m: pg.console_messages.append((m.type, m.text)))
    # Every request the page makes succeeds, but those a test expects to be refused
    # (added to `pg.expected_failures` as (status, path fragment)).
    failed: list[tuple[int, str]] = []
    pg.on("response", lambda r: r.status >= 400 and failed.append((r.status, r.url)))
    # A request the page's own navigation cancels (ERR_ABORTED) is not a failure.
    pg.on("requestfailed", lambda r: "ERR_ABORTED" not in (r.failure or "")
          and failed.append((0, f"{r.url} ({r.failure})")))
    pg.expected_failures = []
    yield pg
    seen = list(failed)
    context.close()
    assert not errors, errors  # no uncaught script error on any page
    warned = [text for kind, text in pg.console_messages if kind == "warning"]
    assert not warned, warned  # no warning of the graph library (e.g. "invalid endpoints")
    unexpected = [(status, url) for status, url in seen if not any(
        status == want and fragment in url for want, fragment in pg.expected_failures)]
    assert not unexpected, unexpected  # the browser's log shows no failed request


def sign_in(page: Any, cloud: Cloud, user: str, password: str, project: str) -> None:
    page.goto(cloud.url + "/")
    page.fill("#login-user", user)
    page.fill("#login-password", password)
    page.fill("#login-project", project)
    page.click("#login-submit")
    page.wait_for_function("window.stacklingTimings !== undefined", timeout=30_000)


def graph_labels(page: Any, kind: str | None = None) -> list[str]:
    return page.evaluate(
        "(kind) => graph.nodes().filter(n => !kind || n.data('kind') === kind)"
        ".map(n => n.data('label'))", kind)


def graph_edges(page: Any) -> list[tuple[str, str]]:
    return [tuple(e) for e in page.evaluate(
        "() => graph.edges().map(e => [e.source().data('label'), e.target().data('label')])")]


def wait_for_node(page: Any, kind: str, label: str, timeout_ms: int = 30_000) -> None:
    page.wait_for_function(
        "([kind, label]) => graph.nodes().some(n => n.data('kind') === kind && n.data('label') === label)",
        arg=[kind, label], timeout=timeout_ms)


def test_bad_credentials_are_refused(page: Any, console_cloud: Cloud) -> None:
    page.expected_failures.append((401, "/identity/v3/auth/tokens"))
    page.goto(console_cloud.url + "/")
    page.fill("#login-user", "admin")
    page.fill("#login-password", "not-the-password")
    page.fill("#login-project", "admin")
    page.click("#login-submit")
    page.wait_for_function("document.querySelector('#login-error').textContent.length > 0")
    assert "authentication" in page.inner_text("#login-error").lower()
    assert page.is_hidden("#tabs")
    assert page.evaluate("sessionStorage.getItem('stackling.session')") is None


def test_member_sees_only_their_project_admin_sees_all(page: Any, browser: Any,
                                                       console_cloud: Cloud) -> None:
    admin = console_cloud.sdk()
    secret = admin.network.create_network(name=f"admin-only-{uuid.uuid4().hex[:6]}")
    sign_in(page, console_cloud, "demo", DEMO_PASSWORD, "demo")
    labels = graph_labels(page, "network")
    assert "public" in labels
    assert secret.name not in labels
    assert "(admin)" not in page.inner_text("#who-name")

    other = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
    try:
        admin_page = other.new_page()
        sign_in(admin_page, console_cloud, "admin", ADMIN_PASSWORD, "admin")
        assert secret.name in graph_labels(admin_page, "network")
    finally:
        other.close()


def test_nic_auto_server_from_the_cli_appears_with_its_topology(page: Any,
                                                                console_cloud: Cloud) -> None:
    sign_in(page, console_cloud, "demo", DEMO_PASSWORD, "demo")
    name = f"vm-{uuid.uuid4().hex[:6]}"
    assert name not in graph_labels(page, "server")
    console_cloud.cli("server", "create", "--flavor", "m1.tiny", "--image", "cirros", "--nic",
                      "auto", "--wait", name, "-f", "json", cloud="stackling")
    # No reload: the page polls the APIs and redraws.
    wait_for_node(page, "server", name)
    wait_for_node(page, "router", "auto_allocated_router")
    edges = graph_edges(page)
    assert ("public", "auto_allocated_router") in edges  # external network -> router
    assert ("auto_allocated_router", "auto_allocated_network") in edges  # router -> network
    # The server is drawn in the box of its first subnet, its other subnets' edges reach it.
    boxes = page.evaluate("(name) => graph.nodes().filter(n => n.data('label') === name)"
                          ".map(n => n.parent().data('label'))[0]", name)
    reached = [src for src, dst in edges if dst == name]
    assert boxes is not None and boxes.startswith("auto_allocated_subnet_v"), boxes
    assert any(s.startswith("auto_allocated_subnet_v4") for s in [boxes, *reached]), (boxes, reached)


def test_routed_network_shows_segments_and_racks(page: Any, console_cloud: Cloud) -> None:
    admin = console_cloud.sdk()
    net = admin.network.create_network(name=f"routed-{uuid.uuid4().hex[:6]}",
                                       provider_network_type="vlan",
                                       provider_physical_network="physnet1")
    seg1 = next(iter(admin.network.segments(network_id=net.id)))
    admin.network.update_segment(seg1, name="rack1")
    seg2 = admin.network.create_segment(network_id=net.id, network_type="vlan",
                                        physical_network="physnet2", name="rack2")
    admin.network.create_subnet(network_id=net.id, segment_id=seg1.id, ip_version=4,
                                cidr="10.91.1.0/24")
    admin.network.create_subnet(network_id=net.id, segment_id=seg2.id, ip_version=4,
                                cidr="10.91.2.0/24")
    sign_in(page, console_cloud, "admin", ADMIN_PASSWORD, "admin")
    wait_for_node(page, "segment", "rack1")
    wait_for_node(page, "segment", "rack2")
    edges = graph_edges(page)
    assert (net.name, "rack1") in edges and (net.name, "rack2") in edges
    assert ("rack1", "compute-r1-1") in edges and ("rack2", "compute-r2-1") in edges
    assert ("rack1", "compute-r2-1") not in edges

    page.click("#tabs button[data-view=capacity]")
    page.wait_for_selector(f"#cap-segments tr[data-segment='{seg1.id}']")
    row = page.inner_text(f"#cap-segments tr[data-segment='{seg1.id}']")
    # Neutron's IPV4_ADDRESS inventory of a /24 with a gateway and DHCP: total = pool
    # (253) + 1, reserved 2 (gateway, DHCP), none used, 252 free.
    assert row.split("\t")[3:7] == ["254", "2", "0", "252"], row


def test_server_in_error_shows_why(page: Any, console_cloud: Cloud) -> None:
    admin = console_cloud.sdk()
    # More memory than any host has (16 GiB x 1.5), within the project's RAM quota.
    flavor = admin.compute.create_flavor(name=f"huge-{uuid.uuid4().hex[:6]}", ram=40000,
                                         vcpus=1, disk=1)
    image = admin.image.find_image("cirros")
    server = admin.compute.create_server(name="doomed", flavor_id=flavor.id,
                                         image_id=image.id, networks="none")
    admin.compute.wait_for_server(server, status="ERROR", failures=[], wait=60)
    sign_in(page, console_cloud, "admin", ADMIN_PASSWORD, "admin")
    page.click("#tabs button[data-view=failures]")
    card = f".server-failure[data-server='{server.id}']"
    page.wait_for_selector(card)
    text = page.inner_text(card)
    assert "No valid host was found" in text
    assert "doomed" in text
    # The scheduler's recorded decision: every host, and what excluded it.
    decision = page.inner_text(f"{card} .decision")
    for host in ("compute-r1-1", "compute-r1-2", "compute-r2-1", "compute-r2-2"):
        assert host in decision
    assert "not enough MEMORY_MB" in decision, decision


def test_audit_view_reports_a_consistent_cloud(page: Any, console_cloud: Cloud) -> None:
    sign_in(page, console_cloud, "admin", ADMIN_PASSWORD, "admin")
    page.click("#tabs button[data-view=audit]")
    page.click("#audit-run")
    page.wait_for_selector("#audit-result .chosen, #audit-result .excluded")
    assert "No difference" in page.inner_text("#audit-result"), page.inner_text("#audit-result")


def visible_tabs(page: Any) -> list[str]:
    return page.eval_on_selector_all("#tabs button", "bs => bs.filter(b => !b.hidden)"
                                     ".map(b => b.textContent.trim())")


def test_a_member_has_no_admin_tabs(page: Any, browser: Any, console_cloud: Cloud) -> None:
    # The token's roles decide: no tab that could only answer "needs an admin".
    sign_in(page, console_cloud, "demo", DEMO_PASSWORD, "demo")
    assert visible_tabs(page) == ["Topology", "Capacity", "Why it failed"]
    assert page.is_hidden("#tabs button[data-view=audit]")
    assert page.is_hidden("#tabs button[data-view=path]")
    # ... and the API still refuses them (the tab's absence is not the protection).
    token = page.evaluate("JSON.parse(sessionStorage.getItem('stackling.session')).token")
    assert httpx.get(console_cloud.url + "/audit", headers={"X-Auth-Token": token}).status_code == 403
    other = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
    try:
        admin_page = other.new_page()
        sign_in(admin_page, console_cloud, "admin", ADMIN_PASSWORD, "admin")
        assert visible_tabs(admin_page) == ["Topology", "Capacity", "Why it failed", "Audit", "Path"]
    finally:
        other.close()


FAILING_STACK = {"heat_template_version": "2018-08-31", "resources": {
    "fine": {"type": "OS::Heat::TestResource"},
    "broken": {"type": "OS::Heat::TestResource", "properties": {"fail": True}}}}


def test_admin_sees_failed_stacks_of_every_project(page: Any, console_cloud: Cloud) -> None:
    demo = console_cloud.sdk("stackling")
    name = f"demo-broken-{uuid.uuid4().hex[:6]}"
    stack = demo.orchestration.create_stack(name=name, template=FAILING_STACK)
    demo.orchestration.wait_for_status(stack, status="CREATE_FAILED", failures=["CREATE_COMPLETE"],
                                       wait=60)
    demo_project = demo.current_project_id
    sign_in(page, console_cloud, "admin", ADMIN_PASSWORD, "admin")
    page.click("#tabs button[data-view=failures]")
    card = f".stack-failure[data-stack='{stack.id}']"
    page.wait_for_selector(card)
    text = page.inner_text(card)
    assert name in text and "CREATE_FAILED" in text, text
    assert "project demo" in text, text  # whose it is
    assert page.get_attribute(card, "data-project") == demo_project
    assert "broken" in text, text  # the reason names the failed resource
    page.click("#logout")
    # The member sees their own failed stack with its failed resource.
    sign_in(page, console_cloud, "demo", DEMO_PASSWORD, "demo")
    page.click("#tabs button[data-view=failures]")
    page.wait_for_selector(f"{card} .excluded")
    assert "broken (OS::Heat::TestResource)" in page.inner_text(card)


def _seed_servers(cloud: Cloud, count: int) -> None:
    """One server booted through the API, then copies of its row: the page's cost is
    what is measured here, not a thousand builds."""
    from sqlalchemy import create_engine, insert, select

    from stackling.compute.models import Instance

    admin = cloud.sdk()
    image = admin.image.find_image("cirros")
    flavor = admin.compute.find_flavor("m1.tiny")
    first = admin.compute.create_server(name="bulk-0", flavor_id=flavor.id, image_id=image.id,
                                        networks="none")
    admin.compute.wait_for_server(first, status="ACTIVE", failures=["ERROR"], wait=60)
    engine = create_engine(cloud.database_url)
    with engine.begin() as conn:
        table = Instance.__table__
        row = dict(conn.execute(select(table).where(table.c.uuid == first.id)).mappings().one())
        row.pop("id")
        copies = [{**row, "uuid": str(uuid.uuid4()), "display_name": f"bulk-{i}",
                   "hostname": f"bulk-{i}"} for i in range(1, count)]
        conn.execute(insert(table), copies)
    engine.dispose()


def test_first_paint_with_1000_servers(browser: Any, tmp_path: Path) -> None:
    url = create_database("sqlite", tmp_path / "db")
    cloud = Cloud("sqlite", url, tmp_path / "data", free_port()).start()
    try:
        _seed_servers(cloud, 1000)
        context = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
        page = context.new_page()
        sign_in(page, cloud, "admin", ADMIN_PASSWORD, "admin")
        assert "1000 servers" in page.inner_text("#status")
        assert "1000 servers" in graph_labels(page, "servers")  # one group node
        page.reload()  # the console's own first paint, the session already open
        page.wait_for_function("window.stacklingTimings !== undefined", timeout=60_000)
        timings = page.evaluate("""() => ({
            fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime,
            topology: window.stacklingTimings.topologyReady})""")
        report = (f"console with 1000 servers: first contentful paint {timings['fcp']:.0f} ms, "
                  f"topology drawn {timings['topology']:.0f} ms after navigation")
        print(report)
        (tmp_path / "timing.txt").write_text(report)
        context.close()
    finally:
        cloud.stop()
        drop_database(url)


def test_console_assets_are_served_compressed(console_cloud: Cloud) -> None:
    r = httpx.get(console_cloud.url + "/console/static/cytoscape.min.js",
                  headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
    again = httpx.get(console_cloud.url + "/console/static/cytoscape.min.js",
                      headers={"If-None-Match": r.headers["etag"]})
    assert again.status_code == 304
    assert httpx.get(console_cloud.url + "/console/static/../app.py").status_code == 404
