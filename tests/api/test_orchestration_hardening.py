"""Orchestration hardening (issue 19 items 4, 11, 12, 13): template members of the wrong
type are Heat's 400 on every route that reads a template, the template size limit holds
for templates sent as JSON objects, a stack without `timeout_mins` times out after the
default, and a step that raises fails its action once instead of being retried for ever
(SQLite, PostgreSQL and MariaDB)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stackling.orchestration import limits
from stackling.orchestration.resources import misc
from tests.api.test_orchestration import Heat, heat_error, tmpl, unique
from tests.conftest import BACKENDS, create_database, drop_database, make_api


@pytest.fixture(scope="module")
def heat(api):
    return Heat(api)


def none(**fields: Any) -> dict[str, Any]:
    return tmpl({"r": {"type": "OS::Heat::None", **fields}})


# ------------------------------------------------------------------ item 4: member types
WRONG = [
    (tmpl({"r": {"type": ["OS::Heat::None"]}}), "Resource r type type must be string"),
    (tmpl({"r": {"type": {"a": 1}}}), "Resource r type type must be string"),
    (tmpl({"r": {"type": 5}}), "Resource r type type must be string"),
    (tmpl({"r": {"type": None}}), "Resource r type type must be string"),
    (none(properties=[1]), "Resource r properties type must be object"),
    (none(metadata="x"), "Resource r metadata type must be object"),
    (none(depends_on=5), "Resource r depends_on type must be list or string"),
    (none(depends_on=[["r"]]), "Resource r depends_on must be a list of strings"),
    (none(update_policy=[1]), "Resource r update_policy type must be object"),
    (none(deletion_policy=[1]), "Resource r deletion_policy type must be string"),
    (none(description=[1]), "Resource r description type must be string"),
    (none(external_id=[1]), "Resource r external_id type must be string"),
    (none(condition=[1]), "Resource r condition type must be string_or_boolean"),
    ({"heat_template_version": "2018-08-31", "resources": {"r": None}},
     "Each resource must contain a type key."),
    ({"heat_template_version": "2018-08-31", "resources": {"r": "x"}},
     '"resources" must contain a map of resource maps'),
    (tmpl(parameters=[1]), '"parameters" must be a map'),
    (tmpl(outputs={"o": "x"}), "Output definitions must be a map. Found a str instead"),
    (tmpl(outputs={"o": {"value": 1, "description": [1]}}),
     "Output o description must be a string"),
    (tmpl(parameter_groups=[{"parameters": [[1]]}]),
     "The grouped parameter [1] does not reference a valid parameter."),
]


@pytest.mark.parametrize("template,message", WRONG)
def test_members_of_the_wrong_type_are_400_everywhere(heat, template, message):
    for r in (heat.create(unique(), template),
              heat.req("POST", "/stacks/preview", json={"stack_name": unique(),
                                                         "template": template}),
              heat.req("POST", "/validate", json={"template": template})):
        assert message in heat_error(r, 400, "StackValidationFailed")
    name = unique()
    heat.make(name, none())
    url = heat.url(name)
    for method in ("PUT", "PATCH"):
        assert message in heat_error(heat.req(method, url, json={"template": template}), 400,
                                     "StackValidationFailed")
        assert message in heat_error(heat.req(method, url + "/preview",
                                              json={"template": template}), 400,
                                     "StackValidationFailed")
    assert heat.wait(name)["stack_status"] == "CREATE_COMPLETE"


@pytest.mark.parametrize("extra", [
    {"environment": {"resource_registry": {"resources": [1]}}},
    {"environment": {"resource_registry": {"resources": {"r": "x"}}}},
    {"environment_files": [["env.yaml"]], "files": {"env.yaml": "{}"}},
])
def test_environment_members_of_the_wrong_type_are_400(heat, extra):
    for r in (heat.create(unique(), none(), **extra),
              heat.req("POST", "/validate", json={"template": none(), **extra})):
        heat_error(r, 400)


# ------------------------------------------------------------------ item 11: template size
def test_template_size_holds_for_json_objects(heat):
    big = tmpl(description="x" * (limits.MAX_TEMPLATE_SIZE + 10))
    name = unique()
    for r in (heat.create(name, big),
              heat.req("POST", "/validate", json={"template": big})):
        message = heat_error(r, 400, "RequestLimitExceeded")
        assert message.startswith("Request limit exceeded: Template size (")
        assert message.endswith(f"exceeds maximum allowed size ({limits.MAX_TEMPLATE_SIZE} "
                                f"bytes).")
    assert heat.req("GET", f"/stacks/{name}").status_code == 404
    # just under the limit as an object (and as text) is accepted
    fits = tmpl(description="x" * (limits.MAX_TEMPLATE_SIZE - 200))
    assert heat.create(unique(), fits).status_code == 201


# ------------------------------------------------------------------ item 12: default timeout
def test_a_stack_without_timeout_mins_times_out_after_the_default(heat, monkeypatch):
    monkeypatch.setattr(limits, "STACK_ACTION_TIMEOUT", 1)
    name = unique()
    stack = heat.make(name, tmpl({"r": {"type": "OS::Heat::TestResource",
                                        "properties": {"wait_secs": -1}}}))
    assert stack["stack_status"] == "CREATE_FAILED"
    assert stack["stack_status_reason"] == "Timed out"
    assert stack["timeout_mins"] is None
    r = heat.resources(name)["r"]  # not left waiting for ever
    assert (r["resource_status"], r["resource_status_reason"]) == (
        "CREATE_FAILED", "CREATE aborted (Timed out)")


def test_the_default_timeout_is_upstreams_hour(api):
    assert api.runtime.settings.orchestration.stack_action_timeout == 3600
    assert limits.STACK_ACTION_TIMEOUT == 3600


# ------------------------------------------------------------------ item 13: a raising step
@pytest.fixture(scope="module", params=BACKENDS)
def bheat(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Heat]:
    base: Path = tmp_path_factory.mktemp(f"heat-{request.param}")
    url = create_database(request.param, base / "db")
    try:
        for api in make_api(base / "data", **({} if request.param == "sqlite"
                                              else {"database_url": url})):
            yield Heat(api)
    finally:
        drop_database(url)


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise KeyError("boom")


def _failed_once(heat: Heat, name: str, action: str) -> dict[str, Any]:
    stack = heat.wait(name)
    assert stack["stack_status"] == f"{action}_FAILED", stack
    failed = [e for e in heat.events(name) if e["resource_name"] == "r"
              and e["resource_status"].endswith("_FAILED")]
    assert len(failed) == 1, failed  # once: the step was not run again
    return stack


def test_a_handler_that_raises_fails_the_create_in_the_request(bheat, monkeypatch):
    monkeypatch.setattr(misc.TestResource, "handle_create", _boom)
    name = unique()
    r = bheat.create(name, tmpl({"r": {"type": "OS::Heat::TestResource"}}))
    assert r.status_code == 201, r.text
    stack = _failed_once(bheat, name, "CREATE")
    assert stack["stack_status_reason"] == "Resource CREATE failed: KeyError: resources.r: " \
                                           "'boom'"


def test_a_poll_that_raises_fails_the_create_in_a_worker(bheat, monkeypatch):
    monkeypatch.setattr(misc.TestResource, "check_create_complete", _boom)
    name = unique()
    bheat.create(name, tmpl({"r": {"type": "OS::Heat::TestResource",
                                   "properties": {"wait_secs": -1}}}))
    stack = _failed_once(bheat, name, "CREATE")
    assert "KeyError: resources.r: 'boom'" in stack["stack_status_reason"]


def test_a_step_that_raises_outside_handlers_fails_the_update_once(bheat, monkeypatch):
    from stackling.orchestration import engine

    name = unique()
    assert bheat.make(name, none())["stack_status"] == "CREATE_COMPLETE"
    monkeypatch.setattr(engine, "_cleanup", _boom)
    r = bheat.req("PATCH", bheat.url(name), json={"template": tmpl(
        {"r": {"type": "OS::Heat::None"}, "v": {"type": "OS::Heat::Value",
                                                 "properties": {"value": 1}}})})
    assert r.status_code == 202, r.text
    stack = bheat.wait(name)
    assert stack["stack_status"] == "UPDATE_FAILED"
    assert stack["stack_status_reason"] == "KeyError: 'boom'"
    monkeypatch.undo()  # the stack is usable again: a next update works
    r = bheat.req("PATCH", bheat.url(name), json={"template": none()})
    assert r.status_code == 202, r.text
    assert bheat.wait(name)["stack_status"] == "UPDATE_COMPLETE"
