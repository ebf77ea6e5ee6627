"""Orchestration limits: upstream's (resources per stack tree, nested depth, template size,
stacks per project) as Heat's RequestLimitExceeded 400s, and the bounds on what a template
can make the engine do (function results, YAML aliases, deep nesting, huge numbers), each
refused with nothing created and without exhausting memory or time."""

from __future__ import annotations

import json

import pytest

from stackling.orchestration import limits
from tests.api.test_orchestration import Heat, heat_error, tmpl, unique

V = "2018-08-31"


@pytest.fixture(scope="module")
def heat(api):
    return Heat(api)


def _stacks(heat):
    return {s["stack_name"] for s in heat.req("GET", "/stacks").json()["stacks"]}


def group(count, member="OS::Heat::None", **props):
    return {"type": "OS::Heat::ResourceGroup",
            "properties": {"count": count, "resource_def": {"type": member, **props}}}


@pytest.mark.parametrize("template,files", [
    (tmpl({f"r{i}": {"type": "OS::Heat::None"} for i in range(1001)}), {}),
    (tmpl({"g": group(10**9)}), {}),  # refused before anything is built
    (tmpl({"g": group(20, "inner.yaml")}),  # 20 x (1 + 100): the tree counts
     {"inner.yaml": json.dumps(tmpl({"g": group(100)}))}),
])
def test_too_many_resources_is_400(heat, template, files):
    name = unique()
    message = heat_error(heat.create(name, template, files=files), 400,
                         "RequestLimitExceeded")
    assert message == "Request limit exceeded: Maximum resources per stack exceeded."
    assert name not in _stacks(heat)


def test_the_limit_itself_is_allowed(heat):
    stack = heat.make(unique(), tmpl({"g": group(limits.MAX_RESOURCES_PER_STACK - 1)}))
    assert stack["stack_status"] == "CREATE_COMPLETE"


def test_recursion_depth(heat):
    selfish = json.dumps(tmpl({"r": {"type": "self.yaml"}}))
    message = heat_error(heat.create(unique(), tmpl({"r": {"type": "self.yaml"}}),
                                     files={"self.yaml": selfish}), 400,
                         "RequestLimitExceeded")
    assert message == "Request limit exceeded: Recursion depth exceeds 5."
    # five nested levels are allowed
    files = {f"l{i}.yaml": json.dumps(tmpl({"r": {"type": f"l{i + 1}.yaml"}}))
             for i in range(1, 5)}
    files["l5.yaml"] = json.dumps(tmpl({"v": {"type": "OS::Heat::Value",
                                              "properties": {"value": 1}}}))
    stack = heat.make(unique(), tmpl({"r": {"type": "l1.yaml"}}), files=files)
    assert stack["stack_status"] == "CREATE_COMPLETE"


def test_counts_known_only_at_run_time_fail_the_resource(heat):
    name = unique()
    stack = heat.make(name, tmpl({
        "v": {"type": "OS::Heat::Value", "properties": {"value": 5000}},
        "g": group({"get_attr": ["v", "value"]})}), disable_rollback=False)
    assert stack["stack_status"] == "ROLLBACK_COMPLETE"
    failed = [e for e in heat.events(name) if e["resource_status"] == "CREATE_FAILED"]
    assert "Maximum resources per stack exceeded" in failed[0]["resource_status_reason"]
    assert heat.resources(name) == {}


def test_template_size(heat):
    text = f"heat_template_version: {V}\nresources: {{}}\ndescription: {'x' * 524300}\n"
    message = heat_error(heat.create(unique(), text), 400, "RequestLimitExceeded")
    assert message.startswith("Request limit exceeded: Template size (")
    assert message.endswith("exceeds maximum allowed size (524288 bytes).")


def test_yaml_aliases_cannot_multiply_work(heat):
    lines = [f"heat_template_version: {V}", "resources: {}", "parameters:", "  p:",
             "    type: json", "    default:", "      a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"      a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]"
              for i in range(1, 9)]  # 10^9 values when walked
    message = heat_error(heat.create(unique(), "\n".join(lines) + "\n"), 400,
                         "RequestLimitExceeded")
    assert "has more than 1000000 values" in message


def test_deep_nesting_is_400(heat):
    text = f"heat_template_version: {V}\nresources: {{}}\noutputs:\n  o:\n    value: " \
           + "[" * 5000 + "]" * 5000 + "\n"
    assert "nests too deeply" in heat_error(heat.create(unique(), text), 400)
    t = tmpl(parameters={"p": {"type": "json"}})
    message = heat_error(heat.create(unique(), t, parameters={"p": "[" * 3000 + "]" * 3000}),
                         400, "StackValidationFailed")
    assert "nests too deeply" in message


@pytest.mark.parametrize("value,fn", [
    ({"repeat": {"template": "<a><b><c>", "for_each": {
        "<a>": list(range(300)), "<b>": list(range(300)), "<c>": list(range(300))}}},
     "repeat"),
    ({"str_replace": {"template": "x" * 100000, "params": {"x": {"get_param": "big"}}}},
     "str_replace"),
    ({"repeat": {"template": "<x>" * 1000, "for_each": {"<x>": [{"get_param": "big"}]}}},
     "repeat"),
    ({"list_join": ["", {"repeat": {"template": {"get_param": "big"},
                                    "for_each": {"<i>": list(range(10))}}}]}, "list_join"),
])
def test_function_results_are_bounded(heat, value, fn):
    t = tmpl(parameters={"big": {"type": "string", "default": "y" * 400000}},
             outputs={"o": {"value": value}})
    message = heat_error(heat.create(unique(), t), 400, "StackValidationFailed")
    assert f'The result of "{fn}" would have' in message


def test_list_concat_unique_and_filter_stay_correct(heat):
    stack = heat.make(unique(), tmpl(outputs={
        "u": {"value": {"list_concat_unique": [[1, "a", {"k": 1}], ["a", {"k": 1}, 2]]}},
        "f": {"value": {"filter": [["a"], ["a", "b", "a", "c"]]}}}))
    assert heat.outputs(stack) == {"u": [1, "a", {"k": 1}, 2], "f": ["b", "c"]}


@pytest.mark.parametrize("value", [10**30, -1, "soon"])
def test_bad_timeouts(heat, value):
    message = heat_error(heat.create(unique(), tmpl(), timeout_mins=value), 400)
    assert message == f"Invalid timeout value {value}"


def test_stacks_per_project(api, heat, monkeypatch):
    member = Heat(api, token=api.token("admin"))  # another project: its own count
    monkeypatch.setattr(limits, "MAX_STACKS_PER_TENANT", len(_stacks(heat)) + 1)
    heat.make(unique(), tmpl())
    message = heat_error(heat.create(unique(), tmpl()), 400, "RequestLimitExceeded")
    assert message == ("Request limit exceeded: You have reached the maximum stacks per "
                       f"tenant, {limits.MAX_STACKS_PER_TENANT}. Please delete some stacks.")
    assert member.create(unique(), tmpl()).status_code == 201


def test_allowed_pattern_is_matched_within_a_time_budget(heat):
    t = tmpl(parameters={"p": {"type": "string", "constraints": [
        {"allowed_pattern": "(a|aa)+c"}]}})
    message = heat_error(heat.create(unique(), t, parameters={"p": "a" * 100}), 400,
                         "StackValidationFailed")
    assert "takes too long to match" in message
    password = tmpl(parameters={"p": {"type": "string", "constraints": [
        {"allowed_pattern": "(?=.*[A-Z])(?=.*[0-9]).{8,}"}]}})  # lookaheads keep working
    assert heat.make(unique(), password, parameters={"p": "Secret123"})[
        "stack_status"] == "CREATE_COMPLETE"
    message = heat_error(heat.create(unique(), password, parameters={"p": "secret"}), 400)
    assert 'does not match pattern' in message
    r = heat.req("GET", "/resource_types", params={"name": "^OS::Heat::(Value|None)$"})
    assert r.json()["resource_types"] == ["OS::Heat::None", "OS::Heat::Value"]
    r = heat.req("GET", "/resource_types", params={"name": "((a{1000}){1000}){1000}"})
    heat_error(r, 400)


def test_a_stack_keeps_its_newest_events(heat, monkeypatch):
    monkeypatch.setattr(limits, "MAX_EVENTS_PER_STACK", 10)
    name = unique()
    heat.make(name, tmpl({f"r{i}": {"type": "OS::Heat::None"} for i in range(8)}))
    events = heat.events(name)  # 18 written; as upstream, "a bit higher" than the limit:
    assert len(events) == 11  # the final stack event comes after the step's purge
    assert (name, "CREATE_IN_PROGRESS") not in {  # the oldest went: the stack's first
        (e["resource_name"], e["resource_status"]) for e in events}
    # the newest are kept: the stack's own CREATE_COMPLETE is last
    assert events[-1]["resource_name"] == name
    assert events[-1]["resource_status"] == "CREATE_COMPLETE"
