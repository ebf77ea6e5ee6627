"""Placement microversions, as data: one row per version, the last row is the maximum.

Gating reads this table (`api.util.handler(since=..., until=...)`) and finer
differences are `rq.version.matches("1.15")` checks next to the behaviour.
"""

from __future__ import annotations

from stackling.common.microversion import Version, VersionSpec

VERSIONS: tuple[tuple[str, str], ...] = (
    ("1.0", "base API: providers, inventories, usages, allocations"),
    ("1.1", "provider aggregates: GET/PUT /resource_providers/{uuid}/aggregates"),
    ("1.2", "/resource_classes: custom resource classes"),
    ("1.3", "member_of filter on GET /resource_providers"),
    ("1.4", "resources filter on GET /resource_providers"),
    ("1.5", "DELETE /resource_providers/{uuid}/inventories"),
    ("1.6", "/traits and /resource_providers/{uuid}/traits"),
    ("1.7", "PUT /resource_classes/{name} is a body-less create-or-confirm"),
    ("1.8", "project_id and user_id required in PUT /allocations"),
    ("1.9", "GET /usages?project_id=[&user_id=]"),
    ("1.10", "GET /allocation_candidates"),
    ("1.11", "'allocations' link on providers; GET /resource_providers/{uuid}/allocations"),
    ("1.12", "PUT /allocations and candidates' allocation_requests use the dict form"),
    ("1.13", "POST /allocations: several consumers at once"),
    ("1.14", "nested providers: parent/root uuids, in_tree filter"),
    ("1.15", "Last-Modified and Cache-Control headers"),
    ("1.16", "limit on GET /allocation_candidates"),
    ("1.17", "required traits on GET /allocation_candidates; traits in provider_summaries"),
    ("1.18", "required traits on GET /resource_providers"),
    ("1.19", "provider generation in the aggregates API"),
    ("1.20", "POST /resource_providers answers 200 with the provider"),
    ("1.21", "member_of on GET /allocation_candidates"),
    ("1.22", "forbidden traits (!TRAIT)"),
    ("1.23", "error codes in error bodies"),
    ("1.24", "repeated member_of (AND)"),
    ("1.25", "granular request groups (resourcesN, requiredN, member_ofN, group_policy)"),
    ("1.26", "inventory reserved may equal total"),
    ("1.27", "provider_summaries list every inventoried class"),
    ("1.28", "consumer generations"),
    ("1.29", "nested providers in GET /allocation_candidates"),
    ("1.30", "POST /reshaper"),
    ("1.31", "in_tree on GET /allocation_candidates"),
    ("1.32", "forbidden aggregates (!member_of)"),
    ("1.33", "request group suffixes may be strings"),
    ("1.34", "mappings in allocation requests and allocations"),
    ("1.35", "root_required on GET /allocation_candidates"),
    ("1.36", "same_subtree and resourceless request groups"),
    ("1.37", "re-parenting and un-parenting providers"),
    ("1.38", "consumer types"),
    ("1.39", "any-of traits: required=in:T1,T2 and repeated required"),
)

MIN_VERSION = Version.parse(VERSIONS[0][0])
MAX_VERSION = Version.parse(VERSIONS[-1][0])
SPEC = VersionSpec("placement", MIN_VERSION, MAX_VERSION)
