"""GET /allocation_candidates (from 1.10)."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.responses import Response

from stackling.common.http import ApiRequest
from stackling.placement import candidates, errors, schemas
from stackling.placement.api import query
from stackling.placement.api.util import cache_headers, handler, validate_query


def _schema(rq: ApiRequest) -> dict[str, Any]:
    for since, schema in (("1.36", schemas.GET_CANDIDATES_1_36), ("1.35", schemas.GET_CANDIDATES_1_35),
                          ("1.33", schemas.GET_CANDIDATES_1_33), ("1.31", schemas.GET_CANDIDATES_1_31),
                          ("1.25", schemas.GET_CANDIDATES_1_25), ("1.21", schemas.GET_CANDIDATES_1_21),
                          ("1.17", schemas.GET_CANDIDATES_1_17), ("1.16", schemas.GET_CANDIDATES_1_16)):
        if rq.version.matches(since):
            return schema
    return schemas.GET_CANDIDATES_1_10


def parse_groups(rq: ApiRequest) -> dict[str, candidates.RequestGroup]:
    suffix = schemas.GROUP_SUFFIX_1_33 if rq.version.matches("1.33") else schemas.GROUP_SUFFIX
    if not rq.version.matches("1.25"):
        suffix = "(?!)"  # no granular groups before 1.25
    key_re = re.compile(rf"^(resources|required|member_of|in_tree)({suffix})?$")
    groups: dict[str, candidates.RequestGroup] = {}
    for key in dict.fromkeys(k for k, _ in rq.query.multi_items()):
        match = key_re.match(key)
        if not match:
            continue
        prefix, sfx = match.group(1), match.group(2) or ""
        group = groups.setdefault(sfx, candidates.RequestGroup(suffix=sfx))
        values = rq.query.getlist(key)
        if prefix == "resources":
            group.resources = query.parse_resources(values[-1])
        elif prefix == "required":
            group.required, group.forbidden = query.parse_required(values, rq.version, key)
        elif prefix == "member_of":
            group.member_of, group.forbidden_aggs = query.parse_member_of(values, rq.version, sfx)
        else:
            group.in_tree = query.parse_in_tree(values[-1])
    return groups


def _check_groups(rq: ApiRequest, groups: dict[str, candidates.RequestGroup],
                  same_subtrees: list[list[str]]) -> None:
    orphans = [f"required{s}" for s, g in groups.items()
               if (g.required or g.forbidden) and not g.resources]
    resourceless_ok = rq.version.matches("1.36")
    if orphans and not resourceless_ok:
        raise errors.BadRequest("All traits parameters must be associated with resources.  "
                                f"Found the following orphaned traits keys: {', '.join(orphans)}")
    orphans = [f"member_of{s}" for s, g in groups.items()
               if (g.member_of or g.forbidden_aggs) and not g.resources]
    if orphans and not resourceless_ok:
        raise errors.BadRequest("All member_of parameters must be associated with resources. "
                                f"Found the following orphaned member_of keys: "
                                f"{', '.join(orphans)}")
    if not groups or not any(g.resources for g in groups.values()):
        raise errors.BadRequest("At least one request group (`resources` or `resources{$S}`) "
                                "is required.")
    resourceless = sorted(s for s, g in groups.items() if not g.resources)
    if resourceless and not resourceless_ok:
        raise errors.BadRequest("All request groups must specify resources.")
    if "" in resourceless:
        raise errors.BadRequest("All request groups must specify resources.")
    in_subtree = {s for subtree in same_subtrees for s in subtree}
    missing = [s for s in resourceless if s not in in_subtree]
    if missing:
        raise errors.QueryMissingValue(
            "Resourceless suffixed group request should be specified in `same_subtree` query "
            f"param: bad group(s) - {missing}.")
    conflicts = []
    for s, g in groups.items():
        both = query.conflicting_traits(g.required, g.forbidden)
        if both:
            conflicts.append(f"required{s}: ({', '.join(sorted(both))})")
    if conflicts:
        raise errors.BadRequest("Conflicting required and forbidden traits found in the "
                                f"following traits keys: {', '.join(conflicts)}")


def parse_request(rq: ApiRequest) -> candidates.CandidateRequest:
    params = validate_query(rq, _schema(rq))
    groups = parse_groups(rq)
    request = candidates.CandidateRequest(groups=groups,
                                          nested_aware=rq.version.matches("1.29"))
    if "limit" in params:
        request.limit = min(int(params["limit"]), 2 ** 31)
    request.group_policy = params.get("group_policy")
    if "root_required" in params:
        values = rq.query.getlist("root_required")
        if len(values) > 1:
            raise errors.QueryDuplicateKey(
                "Query parameter 'root_required' may be specified only once.")
        required, forbidden = query.parse_required(values, rq.version, "root_required")
        if any(len(any_of) > 1 for any_of in required):
            raise errors.BadRequest("Invalid query string parameters: 'root_required' does not "
                                    "support the 'in:' prefix.")
        request.root_required = {n for any_of in required for n in any_of}
        request.root_forbidden = forbidden
        both = request.root_required & request.root_forbidden
        if both:
            raise errors.BadRequest("Conflicting required and forbidden traits found in "
                                    f"root_required: ({', '.join(sorted(both))})")
    for value in rq.query.getlist("same_subtree") if "same_subtree" in params else ():
        suffixes = [s.strip() for s in value.split(",")]
        for s in suffixes:
            if s not in groups:
                raise errors.QueryBadValue(
                    f"Real suffixes should be specified in same_subtree: {s} not found in "
                    f"{sorted(groups)}.")
        request.same_subtrees.append(suffixes)
    _check_groups(rq, groups, request.same_subtrees)
    if not request.group_policy and len([s for s in groups if s]) > 1:
        raise errors.BadRequest('The "group_policy" parameter is required when specifying '
                                'more than one "resources{N}" parameter.')
    return request


# The answer can hold tens of thousands of candidates: it is written as JSON text piece by
# piece (keys are uuids, class/trait names and suffixes, which need no escaping) rather
# than built as nested dicts and then serialised.
def _allocation_requests(rq: ApiRequest, found: list[candidates.Candidate]) -> str:
    dumps = json.dumps
    if not rq.version.matches("1.12"):
        return ",".join(
            '{"allocations":[' + ",".join(
                '{"resource_provider":{"uuid":"' + rp + '"},"resources":' + dumps(res) + "}"
                for rp, res in c.allocations.items()) + "]}" for c in found)
    with_mappings = rq.version.matches("1.34")
    cache: dict[int, str] = {}  # candidates often share one resources dict
    out = []
    for c in found:
        allocs = []
        for rp, res in c.allocations.items():
            text = cache.get(id(res))
            if text is None:
                text = cache[id(res)] = dumps(res, separators=(",", ":"))
            allocs.append('"' + rp + '":{"resources":' + text + "}")
        item = '{"allocations":{' + ",".join(allocs) + "}"
        if with_mappings:
            item += ',"mappings":{' + ",".join(
                '"' + suffix + '":["' + '","'.join(rps) + '"]'
                for suffix, rps in c.mappings.items()) + "}"
        out.append(item + "}")
    return ",".join(out)


def _summaries(rq: ApiRequest, summaries: dict[str, candidates.ProviderSummary]) -> str:
    with_traits = rq.version.matches("1.17")
    nested = rq.version.matches("1.29")
    out = []
    for rp_uuid, s in summaries.items():
        text = '"' + rp_uuid + '":{"resources":{' + s.resources_json() + "}"
        if with_traits:
            text += ',"traits":[' + ",".join('"' + t + '"' for t in s.traits) + "]"
        if nested:
            parent = s.parent_provider_uuid
            text += (',"parent_provider_uuid":' + ('"' + parent + '"' if parent else "null")
                     + ',"root_provider_uuid":"' + s.root_provider_uuid + '"')
        out.append(text + "}")
    return ",".join(out)


@handler("placement:allocation_candidates:list", since="1.10")
def list_candidates(rq: ApiRequest) -> Any:
    request = parse_request(rq)
    try:
        candidates.validate(rq.db, request)
    except errors.ResourceClassNotFound as exc:
        raise errors.BadRequest(f"Invalid resource class in resources parameter: {exc.text}"
                                ) from None
    except errors.TraitNotFound as exc:
        raise errors.BadRequest(exc.text) from None
    result = candidates.find(rq.db, request, want_all_resources=rq.version.matches("1.27"))
    body = ('{"allocation_requests":[' + _allocation_requests(rq, result.candidates)
            + '],"provider_summaries":{' + _summaries(rq, result.summaries) + "}}")
    return Response(body, media_type="application/json", headers=cache_headers(rq))
