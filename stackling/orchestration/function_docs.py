"""What `GET /template_versions/{v}/functions` lists: each function a HOT version knows with
a one-line description, or (`with_condition_func`) the functions its `conditions` section
accepts, as upstream's template classes declare them per version."""

from __future__ import annotations

from typing import Any

from stackling.orchestration.errors import BadRequest, NotFound
from stackling.orchestration.template import FUNCTIONS, Template

DESCRIPTIONS = {
    "get_param": "Resolves a reference to a template parameter.",
    "get_resource": "Resolves a reference to a resource in the template.",
    "get_attr": "Resolves an attribute of a resource.",
    "get_file": "Includes the content of a file passed with the template.",
    "str_replace": "Substitutes placeholders in a string template.",
    "list_join": "Joins lists of strings with a delimiter.",
    "resource_facade": "Resolves the facade (metadata, deletion or update policy) of a "
                       "template resource's owner.",
    "Fn::Select": "Selects an item from a list or a map by index or key.",
    "Fn::Join": "Joins a list of strings with a delimiter (CloudFormation form).",
    "Fn::Split": "Splits a string into a list by a delimiter (CloudFormation form).",
    "Fn::Replace": "Substitutes keys in a string (CloudFormation form).",
    "Fn::Base64": "Returns its argument unchanged (CloudFormation form).",
    "Fn::MemberListToMap": "Converts a member list into a map (CloudFormation form).",
    "digest": "Computes a hash of a value with a named algorithm.",
    "repeat": "Repeats a template snippet for each value of a list.",
    "str_split": "Splits a string into a list by a delimiter, optionally picking an item.",
    "map_merge": "Merges maps; later keys win.",
    "map_replace": "Renames the keys or values of a map.",
    "if": "Chooses one of two values by a condition.",
    "yaql": "Evaluates a YAQL expression.",
    "equals": "Is true when its two values are equal.",
    "not": "Negates a condition.",
    "and": "Is true when every condition is true.",
    "or": "Is true when any condition is true.",
    "filter": "Removes values from a list.",
    "str_replace_strict": "Substitutes placeholders, each of which must occur.",
    "make_url": "Builds a URL from its parts.",
    "list_concat": "Concatenates lists.",
    "str_replace_vstrict": "Substitutes placeholders, each of which must occur and be "
                           "non-empty.",
    "contains": "Is true when a sequence holds a value.",
    "list_concat_unique": "Concatenates lists, dropping repeated items.",
}

# The `conditions` functions by the first version that takes them (upstream: none before
# newton; yaql and contains from pike).
CONDITION_FUNCTIONS: dict[str, str] = {
    "get_param": "2016-10-14", "equals": "2016-10-14", "not": "2016-10-14",
    "and": "2016-10-14", "or": "2016-10-14", "yaql": "2017-09-01", "contains": "2017-09-01",
}
_TRUE = {"1", "t", "true", "on", "y", "yes"}
_FALSE = {"0", "f", "false", "off", "n", "no"}


def query_bool(name: str, value: str | None) -> bool:
    """A boolean query parameter, a 400 for anything else (upstream's extract_bool)."""
    if value is None:
        return False
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise BadRequest(message=f'Unrecognized value "{value}" for "{name}", acceptable values '
                             f"are: true, false.")


def template_functions(version: str, with_condition: bool) -> list[dict[str, Any]]:
    missing = NotFound(message=f"Template with version {version} not found")
    if not version.startswith("heat_template_version."):
        raise missing
    try:
        tmpl = Template({"heat_template_version": version.split(".", 1)[1]})
    except Exception:  # noqa: BLE001 - an unknown version is a 404 here
        raise missing from None
    if with_condition:
        names = sorted(f for f, first in CONDITION_FUNCTIONS.items() if first <= tmpl.version)
    else:
        names = [f for f in tmpl.functions() if f in FUNCTIONS]
    return [{"functions": f, "description": DESCRIPTIONS.get(f, "")} for f in names]
