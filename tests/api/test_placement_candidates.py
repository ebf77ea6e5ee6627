"""Allocation candidates: the one-query path for flat clouds answers exactly like the general
tree-aware search; and bad input is a 400 that writes nothing."""

from __future__ import annotations

import uuid

import pytest

V = {"OpenStack-API-Version": "placement 1.39"}


def make_host(api, name, inventories, traits=(), aggregates=()):
    r = api.post("/placement/resource_providers", json={"name": name}, headers=V)
    assert r.status_code == 200, r.text
    rp = r.json()["uuid"]
    gen = api.put(f"/placement/resource_providers/{rp}/inventories", headers=V, json={
        "resource_provider_generation": 0, "inventories": inventories}).json()[
        "resource_provider_generation"]
    if traits:
        gen = api.put(f"/placement/resource_providers/{rp}/traits", headers=V, json={
            "traits": list(traits), "resource_provider_generation": gen}).json()[
            "resource_provider_generation"]
    if aggregates:
        api.put(f"/placement/resource_providers/{rp}/aggregates", headers=V, json={
            "aggregates": list(aggregates), "resource_provider_generation": gen})
    return rp


QUERIES = [
    "resources=CUSTOM_FLAT:1,VCPU:2,MEMORY_MB:1024",
    "resources=CUSTOM_FLAT:1,VCPU:2&required=HW_CPU_X86_AVX2",
    "resources=CUSTOM_FLAT:1&required=!HW_CPU_X86_AVX2&limit=2",
    "resources=CUSTOM_FLAT:1&member_of=in:{agg},{other}",
    "resources=CUSTOM_FLAT:1&member_of=!{agg}",
    "resources=CUSTOM_FLAT:1,VCPU:7",
    "resources1=CUSTOM_FLAT:1,VCPU:1&required1=in:HW_CPU_X86_AVX2,HW_CPU_X86_SSE",
    "resources=CUSTOM_FLAT:1&root_required=HW_CPU_X86_AVX2",
]


@pytest.mark.parametrize("version", ["1.10", "1.17", "1.27", "1.39"])
def test_flat_path_matches_general_search(api, version):
    agg, other = str(uuid.uuid4()), str(uuid.uuid4())
    tag = uuid.uuid4().hex[:6]
    api.put("/placement/resource_classes/CUSTOM_FLAT", headers=V)
    hosts = [make_host(api, f"flat-{tag}-{i}", {
        "CUSTOM_FLAT": {"total": 5}, "VCPU": {"total": 4 + 2 * i},
        "MEMORY_MB": {"total": 2048}, "DISK_GB": {"total": 10}},
        traits=["HW_CPU_X86_AVX2"] if i % 2 else [], aggregates=[agg] if i < 2 else [])
        for i in range(4)]
    consumer = str(uuid.uuid4())
    assert api.put(f"/placement/allocations/{consumer}", headers=V, json={
        "allocations": {hosts[3]: {"resources": {"VCPU": 8}}}, "project_id": "p",
        "user_id": "u", "consumer_generation": None, "consumer_type": "INSTANCE"}
    ).status_code == 204
    headers = {"OpenStack-API-Version": f"placement {version}"}

    def ask(q):
        q = q.format(agg=agg, other=other)
        r = api.get(f"/placement/allocation_candidates?{q}", headers=headers)
        return r.status_code, r.json()

    usable = [q for q in QUERIES if version >= "1.3" or "&" not in q]
    flat = {q: ask(q) for q in usable}
    # A sharing provider anywhere switches every search to the general path.
    sharing = make_host(api, f"flat-share-{tag}", {"IPV4_ADDRESS": {"total": 10}},
                        traits=["MISC_SHARES_VIA_AGGREGATE"])
    try:
        for q in usable:
            assert ask(q) == flat[q], q
    finally:
        api.delete(f"/placement/resource_providers/{sharing}", headers=V)
        api.delete(f"/placement/allocations/{consumer}", headers=V)
    if version == "1.39":
        status, body = flat[QUERIES[0]]
        assert status == 200
        # most free first (mean free fraction after the claim): host 3 holds 8 of 10 VCPU
        order = [list(c["allocations"])[0] for c in body["allocation_requests"]]
        assert [h for h in order if h in hosts] == [hosts[2], hosts[1], hosts[0], hosts[3]]
        assert body["provider_summaries"][hosts[3]]["resources"]["VCPU"] == {
            "capacity": 10, "used": 8}


BAD = [
    ("POST", "/placement/resource_providers", {"name": "x" * 201}, None),
    ("POST", "/placement/resource_providers", {"name": "ok", "uuid": "1234"}, None),
    ("POST", "/placement/resource_providers", [], None),
    ("POST", "/placement/resource_classes", {"name": "CUSTOM_lower"}, None),
    ("PUT", "/placement/traits/NOT_CUSTOM", None, None),
    ("GET", "/placement/resource_providers?resources=VCPU:x", None, None),
    ("GET", "/placement/resource_providers?resources=VCPU", None, None),
    ("GET", "/placement/resource_providers?uuid=nope", None, None),
    ("GET", "/placement/allocation_candidates?resources=VCPU:1&limit=x", None, None),
    ("GET", "/placement/allocation_candidates?resources=VCPU:1&group_policy=maybe", None, None),
    ("GET", "/placement/allocation_candidates?resources=VCPU:1&member_of=in:", None, None),
    ("GET", "/placement/allocation_candidates?resources=VCPU:1&required=", None, None),
    ("GET", "/placement/allocation_candidates?resources=VCPU:1&in_tree=xyz", None, None),
    ("GET", "/placement/usages?project_id=", None, None),
]


@pytest.mark.parametrize("method,url,body,_", BAD, ids=[f"{m} {u}" for m, u, _b, _x in BAD])
def test_bad_input_is_400(api, method, url, body, _):
    before = api.get("/placement/resource_providers", headers=V).json()
    r = api.request(method, url, json=body, headers=V) if body is not None else \
        api.request(method, url, headers=V)
    assert r.status_code == 400, r.text
    err = r.json()["errors"][0]
    assert err["status"] == 400 and err["code"] == "placement.undefined_code"
    assert err["detail"].startswith("The server could not comply")
    assert api.get("/placement/resource_providers", headers=V).json() == before


def test_bad_inventory_and_allocation_bodies_write_nothing(api):
    rp = make_host(api, f"bad-{uuid.uuid4().hex[:6]}", {"VCPU": {"total": 4}})
    url = f"/placement/resource_providers/{rp}/inventories"
    for inventories in ({"VCPU": {"total": -1}}, {"VCPU": {"total": 4, "reserved": 5}},
                        {"VCPU": {"total": 4, "min_unit": 0}}, {"VCPU": {"totl": 4}},
                        {"VCPU": {"total": 2 ** 31}}, {"VCPU": {"total": 4.5}},
                        {"VCPU": {"total": True}}, {"NOT_A_CLASS": {"total": 1}}):
        r = api.put(url, headers=V, json={"resource_provider_generation": 1,
                                          "inventories": inventories})
        assert r.status_code == 400, (inventories, r.text)
    r = api.put(url, headers={**V, "content-type": "application/json"}, content=b"{")
    assert r.status_code == 400 and "Malformed JSON" in r.text
    assert api.get(url, headers=V).json() == {
        "inventories": {"VCPU": {"total": 4, "reserved": 0, "min_unit": 1,
                                 "max_unit": 2147483647, "step_size": 1,
                                 "allocation_ratio": 1.0}},
        "resource_provider_generation": 1}
    consumer = str(uuid.uuid4())
    for body in ({"allocations": {rp: {"resources": {"VCPU": -1}}}},
                 {"allocations": {"nope": {"resources": {"VCPU": 1}}}},
                 {"allocations": {rp: {"resources": {}}}},
                 {"allocations": {rp: {"resources": {"VCPU": 1}}}, "consumer_generation": None},
                 {"allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": "",
                  "user_id": "u", "consumer_generation": None, "consumer_type": "INSTANCE"},
                 {"allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": "p",
                  "user_id": "u", "consumer_generation": "0", "consumer_type": "INSTANCE"},
                 {"allocations": {rp: {"resources": {"VCPU": 1}}}, "project_id": "p",
                  "user_id": "u", "consumer_generation": None, "consumer_type": "lower"}):
        r = api.put(f"/placement/allocations/{consumer}", headers=V, json=body)
        assert r.status_code == 400, (body, r.text)
    assert api.get(f"/placement/allocations/{consumer}", headers=V).json() == {"allocations": {}}
    assert api.get(f"/placement/resource_providers/{rp}/usages", headers=V).json()[
        "usages"] == {"VCPU": 0}


def test_a_project_reader_sees_its_own_usages_only(api):
    token = api.token("demo")
    r = api.get("/identity/v3/auth/tokens", headers={"X-Subject-Token": token})
    project = r.json()["token"]["project"]["id"]
    rp = make_host(api, f"usage-{uuid.uuid4().hex[:6]}", {"VCPU": {"total": 4}})
    consumer = str(uuid.uuid4())
    assert api.put(f"/placement/allocations/{consumer}", headers=V, json={
        "allocations": {rp: {"resources": {"VCPU": 3}}}, "project_id": project,
        "user_id": "u", "consumer_generation": None, "consumer_type": "INSTANCE"}
    ).status_code == 204
    mine = api.get(f"/placement/usages?project_id={project}", headers=V, user="demo")
    assert mine.status_code == 200
    assert mine.json() == {"usages": {"INSTANCE": {"VCPU": 3, "consumer_count": 1}}}
    everyone = api.get(f"/placement/usages?project_id={project}&consumer_type=all",
                       headers=V).json()
    assert everyone == {"usages": {"all": {"VCPU": 3, "consumer_count": 1}}}
    assert api.get("/placement/usages?project_id=other", headers=V,
                   user="demo").status_code == 403
    assert api.get(f"/placement/resource_providers/{rp}/usages", headers=V,
                   user="demo").status_code == 403


@pytest.mark.parametrize("query", [
    "resources=VCPU:99999999999999999999999",
    "resources=VCPU:1&limit=99999999999999999999999",
])
def test_huge_numbers_are_not_a_500(api, query):
    r = api.get(f"/placement/allocation_candidates?{query}", headers=V)
    assert r.status_code == 200, r.text
    r = api.get(f"/placement/resource_providers?{query.split('&')[0]}", headers=V)
    assert r.status_code == 200, r.text
