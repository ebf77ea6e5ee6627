"""Placement's query-string mini-languages: resources, required traits, member_of, in_tree."""

from __future__ import annotations

from stackling.common.microversion import Version
from stackling.placement import errors
from stackling.placement.providers import normalize_uuid

MAX_AMOUNT = 2147483647 + 1  # above any inventory's max_unit


def parse_resources(value: str) -> dict[str, int]:
    """'VCPU:2,MEMORY_MB:1024' -> {"VCPU": 2, "MEMORY_MB": 1024}."""
    form = ("Badly formed resources parameter. Expected resources query string parameter "
            "in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: ")
    if not value.strip():
        raise errors.BadRequest(form + "empty string.")
    result: dict[str, int] = {}
    for item in value.split(","):
        try:
            name, amount_text = item.split(":")
        except ValueError:
            raise errors.BadRequest(form + f"{item}.") from None
        try:
            amount = int(amount_text)
        except ValueError:
            raise errors.BadRequest(f"Requested resource {name} expected positive integer "
                                    f"amount. Got: {amount_text}.") from None
        if amount < 1:
            raise errors.BadRequest(f"Requested resource {name} requires amount >= 1. "
                                    f"Got: {amount}.")
        # Nothing can serve more than max_unit's ceiling; keep the value a 64-bit integer.
        result[name] = min(amount, MAX_AMOUNT)
    return result


def parse_required(values: list[str], version: Version, key: str = "required"
                   ) -> tuple[list[set[str]], set[str]]:
    """Values of `required` (repeatable with `in:` any-of lists from 1.39; `!T` forbidden
    from 1.22) -> (AND of any-of sets, forbidden set)."""
    allow_forbidden = version.matches("1.22")
    any_traits = version.matches("1.39")
    if len(values) > 1 and not any_traits:
        values = values[-1:]  # before 1.39 the last one wins, as webob's dict view
    required: list[set[str]] = []
    forbidden: set[str] = set()
    form = "HW_CPU_X86_VMX,!CUSTOM_MAGIC" if allow_forbidden else "HW_CPU_X86_VMX,CUSTOM_MAGIC"
    if any_traits:
        form = "HW_CPU_X86_VMX,!CUSTOM_MAGIC or in:HW_CPU_X86_VMX,HW_CPU_X86_SVM"
    for value in values:
        bad = errors.BadRequest(
            f"Invalid query string parameters: Expected '{key}' parameter value of the form: "
            f"{form}. Got: {value}")
        if any_traits and value.startswith("in:"):
            names = {n.strip() for n in value[3:].split(",")}
            if not all(names) or any(n.startswith("!") for n in names):
                raise bad
            required.append(names)
            continue
        names = {n.strip() for n in value.split(",")}
        if not all(names) or (not allow_forbidden and any(n.startswith("!") for n in names)):
            raise bad
        for name in names:
            if name.startswith("!"):
                if not name[1:]:
                    raise bad
                forbidden.add(name[1:])
            else:
                required.append({name})
    return required, forbidden


def conflicting_traits(required: list[set[str]], forbidden: set[str]) -> set[str]:
    return {name for any_of in required if len(any_of) == 1 for name in any_of} & forbidden


def parse_member_of(values: list[str], version: Version, suffix: str = ""
                    ) -> tuple[list[set[str]], set[str]]:
    """Values of `member_of` -> (AND of any-of aggregate sets, forbidden aggregates)."""
    if len(values) > 1 and not version.matches("1.24"):
        raise errors.BadRequest(f"Multiple member_of{suffix} parameters are not supported")
    allow_forbidden = version.matches("1.32")
    member_of: list[set[str]] = []
    forbidden: set[str] = set()
    for value in values:
        negative = allow_forbidden and value.startswith("!")
        text = value[1:] if negative else value
        if "," in text and not text.startswith("in:"):
            raise errors.BadRequest("Multiple values for 'member_of' must be prefixed with the "
                                    f"'in:' keyword. Got: {text}")
        aggs = set(text[3:].split(",")) if text.startswith("in:") else {text}
        for agg in aggs:
            if normalize_uuid(agg) is None:
                raise errors.BadRequest("Invalid query string parameters: Expected 'member_of' "
                                        f"parameter to contain valid UUID(s). Got: {agg}")
        if negative:
            forbidden |= aggs
        else:
            member_of.append(aggs)
    return member_of, forbidden


def parse_in_tree(value: str) -> str:
    normalized = normalize_uuid(value)
    if normalized is None:
        raise errors.BadRequest("Invalid query string parameters: Expected 'in_tree' parameter "
                                f"to be a format of uuid. Got: {value}")
    return normalized
