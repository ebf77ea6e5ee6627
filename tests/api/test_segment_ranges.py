"""Network segment ranges over the in-process app (demo configuration): the resource,
its validation, policy, listing, tags and the `used`/`available` views."""

from __future__ import annotations

import re

import pytest

N = "/networking/v2.0"
R = f"{N}/network_segment_ranges"
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
FIELDS = {"id", "name", "default", "shared", "project_id", "network_type", "physical_network",
          "minimum", "maximum", "used", "available", "description", "created_at",
          "updated_at", "revision_number", "tags"}


def neutron_error(r, status: int, type_: str | None = None, message: str | None = None) -> str:
    assert r.status_code == status, r.text
    err = r.json()["NeutronError"]
    assert err["detail"] == ""
    if type_:
        assert err["type"] == type_, err
    if message:
        assert message in err["message"], err
    return err["message"]


def new_range(api, **body) -> dict:
    r = api.post(R, json={"network_segment_range": body})
    assert r.status_code == 201, r.text
    return r.json()["network_segment_range"]


def demo_project(api) -> str:
    return api.get("/identity/v3/projects?name=demo").json()["projects"][0]["id"]


# ------------------------------------------------------------------ discovery and defaults
def test_extension_and_both_paths(api):
    r = api.get(f"{N}/extensions/network-segment-range")
    assert r.status_code == 200
    assert r.json()["extension"]["name"] == "Neutron Network Segment Range"
    aliases = {e["alias"] for e in api.get(f"{N}/extensions").json()["extensions"]}
    assert "network-segment-range" in aliases
    a = api.get(f"{N}/network-segment-ranges").json()
    b = api.get(f"{R}.json").json()
    assert a == b and a["network_segment_ranges"]
    collections = {x["collection"] for x in api.get(f"{N}/", user=None).json()["resources"]}
    assert "network_segment_ranges" in collections


def test_default_ranges_mirror_the_configuration(api):
    ranges = api.get(f"{R}?sort_key=id").json()["network_segment_ranges"]
    defaults = {(r["network_type"], r["physical_network"], r["minimum"], r["maximum"])
                for r in ranges if r["default"]}
    assert defaults == {("vlan", "physnet1", 100, 199), ("vlan", "physnet2", 200, 299),
                        ("vxlan", "", 1, 2**24 - 1), ("gre", "", 1, 2**32 - 1),
                        ("geneve", "", 1, 2**24 - 1)}
    for r in ranges:
        if r["default"]:
            assert set(r) == FIELDS
            assert r["shared"] is True and r["project_id"] is None and r["name"] == ""
            assert "tenant_id" not in r
            assert TIME_RE.match(r["created_at"]) and r["revision_number"] == 0
    vlan = next(r for r in ranges if r["default"] and r["physical_network"] == "physnet2")
    assert vlan["available"] == list(range(200, 300)) and vlan["used"] == {}
    gre = next(r for r in ranges if r["network_type"] == "gre")
    assert gre["available"] == list(range(1, 4097))  # a bounded part of 2^32 ids


def test_default_ranges_are_read_only(api):
    default = next(r for r in api.get(R).json()["network_segment_ranges"] if r["default"])
    for r in (api.put(f"{R}/{default['id']}", json={"network_segment_range": {"name": "x"}}),
              api.delete(f"{R}/{default['id']}")):
        neutron_error(r, 400, "NetworkSegmentRangeDefaultReadOnly",
                      f"Network Segment Range {default['id']} is a default segment range "
                      "which could not be updated or deleted.")


# ------------------------------------------------------------------ create / show / update / delete
def test_create_show_update_delete(api):
    project = demo_project(api)
    rng = new_range(api, name="r-demo", description="for demo", shared=False,
                    project_id=project, network_type="vlan", physical_network="physnet1",
                    minimum=1000, maximum=1009)
    assert set(rng) == FIELDS
    assert rng["default"] is False and rng["shared"] is False
    assert rng["project_id"] == project and rng["physical_network"] == "physnet1"
    assert rng["available"] == list(range(1000, 1010)) and rng["used"] == {}
    assert rng["revision_number"] == 0 and rng["tags"] == []
    shown = api.get(f"{R}/{rng['id']}").json()["network_segment_range"]
    assert shown == rng
    only = api.get(f"{R}/{rng['id']}?fields=name&fields=available").json()
    assert only == {"network_segment_range": {"name": "r-demo",
                                              "available": list(range(1000, 1010))}}
    r = api.put(f"{R}/{rng['id']}", json={"network_segment_range": {
        "name": "r-demo-2", "minimum": 1005, "maximum": 1020}})
    assert r.status_code == 200, r.text
    upd = r.json()["network_segment_range"]
    assert (upd["name"], upd["minimum"], upd["maximum"]) == ("r-demo-2", 1005, 1020)
    assert upd["revision_number"] == 1 and upd["available"] == list(range(1005, 1021))
    neutron_error(api.put(f"{R}/{rng['id']}", headers={"If-Match": "revision_number=0"},
                          json={"network_segment_range": {"name": "stale"}}),
                  412, "RevisionNumberConstraintFailed")
    for key, value in (("shared", True), ("project_id", "x"), ("network_type", "vxlan"),
                       ("physical_network", "physnet2")):
        neutron_error(api.put(f"{R}/{rng['id']}", json={"network_segment_range": {key: value}}),
                      400, message=f"Cannot update read-only attribute {key}")
    assert api.delete(f"{R}/{rng['id']}").status_code == 204
    neutron_error(api.get(f"{R}/{rng['id']}"), 404, "NetworkSegmentRangeNotFound",
                  f"Network Segment Range {rng['id']} could not be found.")
    neutron_error(api.delete(f"{R}/{rng['id']}"), 404, "NetworkSegmentRangeNotFound")


def test_shared_tunnel_range_and_project_defaults(api):
    rng = new_range(api, name="shared-gre", network_type="gre", minimum=5, maximum=9,
                    physical_network="ignored-for-tunnels")
    assert rng["shared"] is True and rng["project_id"] is None
    assert rng["physical_network"] == ""
    # not shared and no project named: the caller's project, as neutron fills it
    mine = new_range(api, name="own-gre", shared=False, network_type="gre", minimum=10,
                     maximum=12)
    admin_project = api.get("/identity/v3/projects?name=admin").json()["projects"][0]["id"]
    assert mine["project_id"] == admin_project
    bulk = api.post(R, json={"network_segment_ranges": [
        {"network_type": "gre", "minimum": 20, "maximum": 21},
        {"network_type": "gre", "minimum": 22, "maximum": 23}]})
    assert bulk.status_code == 201 and len(bulk.json()["network_segment_ranges"]) == 2
    bad = api.post(R, json={"network_segment_ranges": [
        {"network_type": "gre", "minimum": 30, "maximum": 31},
        {"network_type": "gre", "minimum": 31, "maximum": 32}]})
    neutron_error(bad, 409, "NetworkSegmentRangeOverlaps")
    listed = api.get(f"{R}?network_type=gre").json()["network_segment_ranges"]
    assert not [r for r in listed if r["minimum"] == 30]  # the bulk request left nothing
    for r in (rng, mine, *bulk.json()["network_segment_ranges"]):
        assert api.delete(f"{R}/{r['id']}").status_code == 204


# ------------------------------------------------------------------ validation
BAD = [
    ({"network_type": "flat", "minimum": 1, "maximum": 2}, "HTTPBadRequest",
     "Invalid input for network_type. Reason: 'flat' is not in"),
    ({"network_type": "vlan", "minimum": 1, "maximum": 2}, "BadRequest",
     "Network type vlan requires 'physical_network' to be specified"),
    ({"network_type": "vlan", "physical_network": "physnet1", "minimum": 0, "maximum": 2},
     "HTTPBadRequest", "Invalid input for minimum. Reason: '0' is too small - must be at least '1'"),
    ({"network_type": "vlan", "physical_network": "physnet1", "minimum": 4000,
      "maximum": 4095}, "NetworkVlanRangeError",
     "Invalid network VLAN range: '4000:4095' - '4095 is not a valid VLAN tag'."),
    ({"network_type": "vlan", "physical_network": "physnet1", "minimum": 30, "maximum": 20},
     "NetworkVlanRangeError", "End of VLAN range is less than start of VLAN range"),
    ({"network_type": "vxlan", "minimum": 1, "maximum": 2**24}, "NetworkTunnelRangeError",
     f"Invalid network tunnel range: '1:{2**24}' - {2**24} is not a valid vxlan identifier."),
    ({"network_type": "geneve", "minimum": 2**24, "maximum": 2**24 + 1},
     "NetworkTunnelRangeError", f"{2**24} is not a valid geneve identifier"),
    ({"network_type": "gre", "minimum": 1, "maximum": 2**32}, "HTTPBadRequest",
     f"Reason: '{2**32}' is too large - must be no larger than '{2**32 - 1}'"),
    ({"network_type": "gre", "minimum": 9, "maximum": 8}, "NetworkTunnelRangeError",
     "End of tunnel range is less than start of tunnel range"),
    ({"network_type": "vxlan", "minimum": "x", "maximum": 8}, "HTTPBadRequest",
     "Invalid input for minimum"),
    ({"network_type": "vxlan", "maximum": 8}, "HTTPBadRequest",
     "Required attribute 'minimum' not specified"),
    ({"minimum": 1, "maximum": 8}, "HTTPBadRequest",
     "Required attribute 'network_type' not specified"),
    # A null project is refused by the generic type:string check first, as Neutron's API layer.
    ({"network_type": "vxlan", "minimum": 1, "maximum": 8, "shared": False,
      "project_id": None}, "HTTPBadRequest", "'None' is not a valid string"),
    ({"network_type": "vxlan", "minimum": 1, "maximum": 8, "shared": False,
      "project_id": ""}, "InvalidInput", "not shared needs a project_id"),
    ({"network_type": "vxlan", "minimum": 1, "maximum": 8, "shared": True,
      "project_id": "p1"}, "InvalidInput", "A shared network segment range has no project"),
    ({"network_type": "vxlan", "minimum": 1, "maximum": 8, "default": True}, "HTTPBadRequest",
     "Attribute 'default' not allowed in POST"),
    ({"network_type": "vxlan", "minimum": 1, "maximum": 8, "used": {}}, "HTTPBadRequest",
     "Attribute 'used' not allowed in POST"),
]


@pytest.mark.parametrize("body,type_,message", BAD)
def test_validation_errors_are_400(api, body, type_, message):
    before = len(api.get(R).json()["network_segment_ranges"])
    neutron_error(api.post(R, json={"network_segment_range": body}), 400, type_, message)
    assert len(api.get(R).json()["network_segment_ranges"]) == before


def test_update_validation(api):
    rng = new_range(api, network_type="vxlan", minimum=40, maximum=49)
    for attrs, type_, message in (
            ({"maximum": 30}, "NetworkTunnelRangeError", "End of tunnel range is less"),
            ({"maximum": 2**24}, "NetworkTunnelRangeError", "not a valid vxlan identifier"),
            ({"minimum": 0}, "HTTPBadRequest", "too small"),
            ({"name": 5}, "HTTPBadRequest", "Invalid input for name")):
        neutron_error(api.put(f"{R}/{rng['id']}", json={"network_segment_range": attrs}),
                      400, type_, message)
    assert api.delete(f"{R}/{rng['id']}").status_code == 204


def test_overlap_is_409_for_every_type(api):
    made = [new_range(api, network_type="vxlan", minimum=100, maximum=199),
            new_range(api, network_type="geneve", minimum=100, maximum=199),
            new_range(api, network_type="gre", minimum=100, maximum=199),
            new_range(api, network_type="vlan", physical_network="physnet1", minimum=500,
                      maximum=599)]
    for rng in made:
        body = {k: rng[k] for k in ("network_type", "minimum", "maximum")}
        if rng["network_type"] == "vlan":
            body["physical_network"] = "physnet1"
        body.update(minimum=rng["minimum"] + 50, maximum=rng["maximum"] + 50)
        neutron_error(api.post(R, json={"network_segment_range": body}), 409,
                      "NetworkSegmentRangeOverlaps",
                      f"Network segment range overlaps with range(s) with id {rng['id']}")
    # another physnet is another pool; default ranges may be overlapped
    other = new_range(api, network_type="vlan", physical_network="physnet2", minimum=500,
                      maximum=599)
    inside_default = new_range(api, network_type="vlan", physical_network="physnet1",
                               minimum=150, maximum=160)
    neighbour = new_range(api, network_type="vxlan", minimum=200, maximum=210)
    neutron_error(api.put(f"{R}/{neighbour['id']}", json={"network_segment_range": {
        "minimum": 199}}), 409, "NetworkSegmentRangeOverlaps")
    for rng in (*made, other, inside_default, neighbour):
        assert api.delete(f"{R}/{rng['id']}").status_code == 204


def test_type_driver_must_be_loaded(tmp_path):
    from tests.conftest import make_api

    gen = make_api(tmp_path, network={"ml2": {"type_drivers": ["flat", "vlan", "vxlan"]}})
    api = next(gen)
    try:
        neutron_error(api.post(R, json={"network_segment_range": {
            "network_type": "gre", "minimum": 1, "maximum": 2}}), 400,
            "NetworkSegmentRangeNetTypeNotSupported",
            "Network type gre does not support network segment ranges.")
        kinds = {r["network_type"] for r in api.get(R).json()["network_segment_ranges"]}
        assert kinds == {"vlan", "vxlan"}
    finally:
        gen.close()


# ------------------------------------------------------------------ policy
def test_admin_only(api):
    rng = new_range(api, network_type="vxlan", minimum=300, maximum=309, shared=False,
                    project_id=demo_project(api))
    assert api.get(R, user="demo").json() == {"network_segment_ranges": []}
    neutron_error(api.get(f"{R}/{rng['id']}", user="demo"), 404,
                  "NetworkSegmentRangeNotFound")
    neutron_error(api.post(R, user="demo", json={"network_segment_range": {
        "network_type": "vxlan", "minimum": 310, "maximum": 319}}), 403,
        "PolicyNotAuthorized", "rule:create_network_segment_range is disallowed by policy")
    # the caller cannot see ranges (even its project's): update and delete hide them
    neutron_error(api.put(f"{R}/{rng['id']}", user="demo",
                          json={"network_segment_range": {"name": "mine"}}), 404)
    neutron_error(api.delete(f"{R}/{rng['id']}", user="demo"), 404)
    neutron_error(api.get(f"{R}/{rng['id']}/tags", user="demo"), 404)
    assert api.get(R, user=None).status_code == 401
    assert api.get(f"{R}/{rng['id']}").json()["network_segment_range"]["name"] == ""
    assert api.delete(f"{R}/{rng['id']}").status_code == 204


# ------------------------------------------------------------------ listing
def test_filters_sorting_paging_tags(api):
    made = [new_range(api, name=f"lst-{i}", network_type="geneve", minimum=1000 + 10 * i,
                      maximum=1009 + 10 * i) for i in range(3)]
    names = [r["name"] for r in api.get(
        f"{R}?network_type=geneve&name=lst-0&name=lst-2&sort_key=name&sort_dir=desc"
    ).json()["network_segment_ranges"]]
    assert names == ["lst-2", "lst-0"]
    body = api.get(f"{R}?network_type=geneve&physical_network=&sort_key=name&limit=2"
                   "&fields=name").json()
    assert [r["name"] for r in body["network_segment_ranges"]] == ["", "lst-0"]
    assert any(link["rel"] == "next" for link in body["network_segment_ranges_links"])
    for bad in ("shared=true", "default=true", "minimum=1", "available=1"):
        neutron_error(api.get(f"{R}?{bad}"), 400, message="is invalid attribute for filtering")
    neutron_error(api.get(f"{R}?sort_key=minimum"), 400)
    project_ranges = api.get(f"{R}?project_id={demo_project(api)}").json()
    assert project_ranges["network_segment_ranges"] == []
    rid = made[1]["id"]
    assert api.put(f"{R}/{rid}/tags", json={"tags": ["blue", "red"]}).status_code == 200
    assert api.put(f"{R}/{rid}/tags/green").status_code == 201
    tagged = api.get(f"{R}?tags=red&tags-any=green").json()["network_segment_ranges"]
    assert [r["id"] for r in tagged] == [rid]
    assert tagged[0]["tags"] == ["blue", "green", "red"] and tagged[0]["revision_number"] == 2
    for rng in made:
        assert api.delete(f"{R}/{rng['id']}").status_code == 204


# ------------------------------------------------------------------ views at any size
def test_available_is_bounded_above_the_threshold(api):
    small = new_range(api, network_type="gre", minimum=2**32 - 4096, maximum=2**32 - 1)
    assert small["available"] == list(range(2**32 - 4096, 2**32))
    vlan = new_range(api, network_type="vlan", physical_network="physnet9", minimum=1,
                     maximum=4094)
    assert vlan["available"] == list(range(1, 4095))  # a whole VLAN space stays a list
    big = new_range(api, network_type="gre", minimum=1000, maximum=5199)
    assert big["available"] == list(range(1000, 1000 + 4096))  # the first 4,096 free ids
    # taking ids splits the free intervals; back under the threshold they are ids again
    nets = [api.post(f"{N}/networks", json={"network": {
        "name": f"gre-{i}", "provider:network_type": "gre",
        "provider:segmentation_id": seg}}) for i, seg in enumerate((1000, 1500, 1501, 2024))]
    assert all(n.status_code == 201 for n in nets)
    big = api.get(f"{R}/{big['id']}").json()["network_segment_range"]
    # every free interval shows, the short ones whole, the last cut to the budget
    assert big["available"] == [*range(1001, 1500), *range(1502, 2024), *range(2025, 5100)]
    project = api.get("/identity/v3/projects?name=admin").json()["projects"][0]["id"]
    assert big["used"] == {"1000": project, "1500": project, "1501": project, "2024": project}
    # shrinking past an id in use (2024) is refused until its network is gone
    shrink = {"network_segment_range": {"minimum": 1000, "maximum": 1600}}
    assert api.put(f"{R}/{big['id']}", json=shrink).status_code == 409
    last = nets.pop()
    assert api.delete(f"{N}/networks/{last.json()['network']['id']}").status_code == 204
    upd = api.put(f"{R}/{big['id']}", json=shrink).json()["network_segment_range"]
    assert upd["available"] == [*range(1001, 1500), *range(1502, 1601)]
    for n in nets:
        assert api.delete(f"{N}/networks/{n.json()['network']['id']}").status_code == 204
    for rng in (small, big):
        assert api.delete(f"{R}/{rng['id']}").status_code == 204


def test_a_2_to_the_32_range_shows_a_bounded_list(api):
    # Enumerating its ids would take minutes and gigabytes; bench/segments.py times it.
    default = [r for r in api.get(f"{R}?network_type=gre").json()["network_segment_ranges"]
               if r["default"]][0]
    shown = api.get(f"{R}/{default['id']}").json()["network_segment_range"]
    assert shown["maximum"] - shown["minimum"] + 1 == 2**32 - 1
    assert all(isinstance(x, int) for x in shown["available"])
    assert shown["available"][:2] == [1, 2] and len(shown["available"]) == 4096
