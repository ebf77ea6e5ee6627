"""The common layer: policy language, microversions, list parameters."""

from __future__ import annotations

import pytest
from starlette.datastructures import QueryParams

from stackling.common.errors import BadRequest, NotAcceptable
from stackling.common.listing import parse_list_params, to_bool
from stackling.common.microversion import Version, VersionSpec
from stackling.common.policy import Enforcer, PolicySyntaxError, parse


def creds(**kw):
    return {"roles": [], "project_id": None, **kw}


@pytest.mark.parametrize("rule,target,cred,expected", [
    ("@", {}, creds(), True),
    ("!", {}, creds(), False),
    ("role:admin", {}, creds(roles=["Admin"]), True),
    ("role:admin or project_id:%(project_id)s", {"project_id": "p"}, creds(project_id="p"), True),
    ("role:member and project_id:%(project_id)s", {"project_id": "p"},
     creds(roles=["member"], project_id="q"), False),
    ("not role:reader", {}, creds(roles=["reader"]), False),
    ("(role:a or role:b) and not role:c", {}, creds(roles=["b"]), True),
    ("is_admin:True", {}, creds(is_admin=True), True),
    ("project_id:%(project_id)s", {}, creds(project_id="p"), False),  # missing target attr
])
def test_policy_language(rule, target, cred, expected):
    enforcer = Enforcer({"x": rule})
    assert enforcer.enforce("x", target, cred) is expected


def test_policy_rules_reference_each_other_and_unknown_fails_closed():
    enforcer = Enforcer({"a": "rule:context_is_admin"})
    assert enforcer.enforce("a", {}, creds(roles=["admin"]))
    assert not enforcer.enforce("no-such-rule", {}, creds(roles=["admin"]))


@pytest.mark.parametrize("text", ["role:a and", "(role:a", "role", "role:a role:b"])
def test_policy_syntax_errors(text):
    with pytest.raises(PolicySyntaxError):
        parse(text)


SPEC = VersionSpec("compute", Version(2, 1), Version(2, 37), "x-openstack-nova-api-version")


def test_microversion_negotiation():
    assert SPEC.negotiate({}) == Version(2, 1)
    assert SPEC.negotiate({"openstack-api-version": "compute 2.20"}) == Version(2, 20)
    assert SPEC.negotiate({"x-openstack-nova-api-version": "2.30"}) == Version(2, 30)
    assert SPEC.negotiate({"openstack-api-version": "compute latest"}) == Version(2, 37)
    with pytest.raises(NotAcceptable):
        SPEC.negotiate({"openstack-api-version": "compute 2.38"})
    with pytest.raises(BadRequest):
        SPEC.negotiate({"openstack-api-version": "compute 2.x"})
    headers = SPEC.response_headers(Version(2, 30))
    assert headers["OpenStack-API-Version"] == "compute 2.30"
    assert headers["X-OpenStack-Nova-API-Version"] == "2.30"
    assert "OpenStack-API-Version" in headers["Vary"]


def test_version_matches():
    assert Version(2, 37).matches("2.37")
    assert not Version(2, 36).matches("2.37")
    assert Version(2, 40).matches("2.37", "2.50")
    assert Version(1, 10) > Version(1, 9)


def test_list_params():
    q = QueryParams("name=a&name=b&fields=id&fields=name&sort_key=name&sort_dir=desc&limit=5"
                    "&marker=m&page_reverse=True")
    p = parse_list_params(q, filterable={"name"}, sortable={"name"})
    assert p.filters == {"name": ["a", "b"]}
    assert p.fields == ["id", "name"] and p.sorts == [("name", False)]
    assert (p.limit, p.marker, p.page_reverse) == (5, "m", True)
    for bad in ("bogus=1", "sort_key=nope", "sort_key=name&sort_dir=sideways", "limit=-1",
                "limit=x", "sort_key=name&sort_key=id&sort_dir=asc"):
        with pytest.raises(BadRequest):
            parse_list_params(QueryParams(bad), filterable={"name"}, sortable={"name", "id"})


def test_to_bool():
    assert to_bool("True") and to_bool("1") and not to_bool("false")
    with pytest.raises(ValueError):
        to_bool("maybe")
