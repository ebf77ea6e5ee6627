"""Orchestration template introspection and checking as upstream shapes them: template
versions and their functions (`with_condition_func`), `validate` (parameters, groups,
environment, `show_nested`, `ignore_errors`), stack preview of nested stacks, nested output
errors and resources adopted by `external_id`."""

from __future__ import annotations

import pytest

from tests.api.test_orchestration import Heat, heat_error


@pytest.fixture
def heat(api):
    return Heat(api)


def test_template_functions_and_condition_functions(heat):
    base = "/template_versions/heat_template_version.2016-10-14/functions"
    fns = heat.req("GET", base).json()["template_functions"]
    names = {f["functions"] for f in fns}
    assert {"get_param", "if", "map_replace", "equals"} <= names and "filter" not in names
    assert all(f["description"] for f in fns)
    cond = heat.req("GET", base + "?with_condition_func=true").json()["template_functions"]
    assert {f["functions"] for f in cond} == {"get_param", "equals", "not", "and", "or"}
    pike = heat.req("GET", "/template_versions/heat_template_version.2017-09-01/functions",
                    params={"with_condition_func": "True"}).json()["template_functions"]
    assert {"contains", "yaql"} <= {f["functions"] for f in pike}
    old = heat.req("GET", "/template_versions/heat_template_version.2015-04-30/functions",
                   params={"with_condition_func": "1"}).json()["template_functions"]
    assert old == []
    heat_error(heat.req("GET", base + "?with_condition_func=maybe"), 400)
    heat_error(heat.req("GET", "/template_versions/heat_template_version.1999-01-01/functions"),
               404)
    versions = heat.req("GET", "/template_versions").json()["template_versions"]
    assert {"version": "heat_template_version.2016-10-14", "type": "hot",
            "aliases": ["heat_template_version.newton"]} in versions
