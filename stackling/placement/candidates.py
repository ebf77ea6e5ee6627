"""Allocation candidates: which providers could satisfy a request, right now.

The search is done in SQL: one query per request group finds every (provider, class)
that can take the requested amount (usage summed per provider in a grouped subquery,
capacity, min/max unit and step size checked in the WHERE clause), with the group's
trait, aggregate and tree filters applied there too. Python then only assembles
providers of the same tree (and sharing providers linked by aggregate) into
candidates, merges request groups, applies group_policy / same_subtree, orders and
limits. Provider summaries are read for the kept candidates' trees only.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    BigInteger,
    Integer,
    String,
    and_,
    bindparam,
    case,
    cast,
    exists,
    func,
    literal,
    literal_column,
    or_,
    select,
    text,
    union_all,
)
from sqlalchemy.orm import Session, aliased

from stackling.placement import providers, resource_classes, traits
from stackling.placement.models import (
    Inventory,
    ProviderAggregate,
    ProviderTrait,
    ResourceProvider,
)

RP = ResourceProvider
# Core columns for the hot queries: building them is several times cheaper than with
# ORM-annotated attributes, and the SQL is the same.
_INV = Inventory.__table__
_RP = ResourceProvider.__table__
_PT = ProviderTrait.__table__.c
_PA = ProviderAggregate.__table__.c


_TREES_AND_SHARING = union_all(
    select(literal_column("-1")).where(exists().where(_RP.c.parent_provider_id.is_not(None))),
    select(_PT.resource_provider_id).where(_PT.trait == traits.SHARES_VIA_AGGREGATE))


@dataclass
class RequestGroup:
    suffix: str = ""  # "" is the unsuffixed group (may span a tree + sharing providers)
    resources: dict[str, int] = field(default_factory=dict)
    required: list[set[str]] = field(default_factory=list)  # AND of any-of sets
    forbidden: set[str] = field(default_factory=set)
    member_of: list[set[str]] = field(default_factory=list)  # AND of any-of sets
    forbidden_aggs: set[str] = field(default_factory=set)
    in_tree: str | None = None

    @property
    def same_provider(self) -> bool:
        return self.suffix != ""


@dataclass
class CandidateRequest:
    groups: dict[str, RequestGroup]
    group_policy: str | None = None
    limit: int | None = None
    root_required: set[str] = field(default_factory=set)
    root_forbidden: set[str] = field(default_factory=set)
    same_subtrees: list[list[str]] = field(default_factory=list)
    nested_aware: bool = True  # microversion >= 1.29


@dataclass
class Candidate:
    allocations: dict[str, dict[str, int]]  # rp_uuid -> {rc: amount}
    mappings: dict[str, list[str]]  # suffix -> [rp_uuid]


class ProviderSummary:
    """A provider in the answer: {rc: {"capacity", "used"}} and its traits.

    The one-query path hands over the resources already aggregated as JSON text by the
    database and parses them only when asked (`resources`), so a 10,000-provider answer
    is rendered without building 40,000 small dicts first (`resources_json`)."""

    __slots__ = ("uuid", "parent_provider_uuid", "root_provider_uuid", "_resources", "_raw",
                 "traits")

    def __init__(self, uuid: str, parent_provider_uuid: str | None, root_provider_uuid: str,
                 resources: dict[str, dict[str, int]] | None = None,
                 traits: list[str] | None = None, raw: str | None = None) -> None:
        self.uuid = uuid
        self.parent_provider_uuid = parent_provider_uuid
        self.root_provider_uuid = root_provider_uuid
        self._resources = resources
        self._raw = raw
        self.traits = traits if traits is not None else []

    def resources_json(self) -> str:
        """The resources as JSON object members (no braces)."""
        if self._raw is not None:
            return self._raw
        return ",".join(f'"{rc}":{{"capacity":{v["capacity"]},"used":{v["used"]}}}'
                        for rc, v in (self._resources or {}).items())

    @property
    def resources(self) -> dict[str, dict[str, int]]:
        if self._resources is None:
            self._resources = json.loads("{" + (self._raw or "") + "}")
        return self._resources


@dataclass
class Result:
    candidates: list[Candidate]
    summaries: dict[str, ProviderSummary]


# A piece is what one request group contributes inside one tree:
# (anchor root id, ((rp_id, rc, amount), ...), frozenset(provider ids)).
Piece = tuple[int, tuple[tuple[int, str, int], ...], frozenset[int]]


def validate(db: Session, req: CandidateRequest) -> None:
    """Unknown resource classes and traits are the caller's 400."""
    resource_classes.check_known(db, {rc for g in req.groups.values() for rc in g.resources})
    names: set[str] = set(req.root_required) | set(req.root_forbidden)
    for g in req.groups.values():
        names |= g.forbidden
        for any_of in g.required:
            names |= any_of
    traits.check_known(db, names)


def find(db: Session, req: CandidateRequest, *, with_summaries: bool = True,
         want_all_resources: bool = True) -> Result:
    """The candidates for `req`, most free capacity first, and their provider summaries."""
    search = _Search(db, req)
    return search.run(with_summaries=with_summaries, want_all_resources=want_all_resources)


class _Search:
    def __init__(self, db: Session, req: CandidateRequest) -> None:
        self.db = db
        self.req = req
        # whether any provider has a parent (-1) and the sharing providers, one query
        found = set(db.scalars(_TREES_AND_SHARING))
        self.has_trees = -1 in found
        self.sharing = found - {-1}
        # (rp_id, rc) -> (capacity, used, max_unit), from the fit queries
        self.fit: dict[tuple[int, str], tuple[float, int, int]] = {}
        self.uuid: dict[int, str] = {}
        self.root: dict[int, int] = {}
        self._traits: dict[int, set[str]] = {}

    # ---------------------------------------------------------------- driver
    def run(self, *, with_summaries: bool, want_all_resources: bool) -> Result:
        empty = Result([], {})
        if self._flat_single_group():
            return self._flat(with_summaries, want_all_resources)
        tree_roots: dict[str, int | None] = {}
        for suffix, g in self.req.groups.items():
            tree_roots[suffix] = None
            if g.in_tree is not None:
                tree = providers.find(self.db, g.in_tree)
                if tree is None:
                    return empty
                tree_roots[suffix] = tree.root_provider_id
        anchors_allowed = self._roots_with_traits()
        if anchors_allowed is not None and not anchors_allowed:
            return empty
        pieces: dict[str, dict[int, list[Piece]]] = {}
        for suffix in sorted(self.req.groups):
            group = self.req.groups[suffix]
            by_anchor = self._group_pieces(group, tree_roots[suffix])
            if anchors_allowed is not None:
                by_anchor = {a: p for a, p in by_anchor.items() if a in anchors_allowed}
            if not by_anchor:
                return empty
            pieces[suffix] = by_anchor
        merged = self._merge(pieces)
        if not merged:
            return empty
        merged.sort(key=self._order)
        if self.req.limit is not None:
            merged = merged[:self.req.limit]
        self._load_uuids({rp for cand, _ in merged for (rp, _rc) in cand})
        candidates = [
            Candidate(
                allocations=_by_provider({(self.uuid[rp], rc): amt for (rp, rc), amt in cand.items()}),
                mappings={s: sorted(self.uuid[rp] for rp in rps) for s, rps in mappings.items()})
            for cand, mappings in merged]
        summaries: dict[str, ProviderSummary] = {}
        if with_summaries:
            used_rps = {rp for cand, mappings in merged for rps in mappings.values() for rp in rps}
            used_rps |= {rp for cand, _ in merged for (rp, _rc) in cand}
            summaries = self._summaries(used_rps, want_all_resources)
        return Result(candidates, summaries)

    # ---------------------------------------------------------------- the common case
    def _flat_single_group(self) -> bool:
        """One request group and no trees or sharing providers: each candidate is one
        provider, so the whole search (fit, order, limit, summaries) is one SQL query."""
        req = self.req
        if len(req.groups) != 1 or req.same_subtrees or self.has_trees or self.sharing:
            return False
        return bool(next(iter(req.groups.values())).resources)

    def _flat(self, with_summaries: bool, want_all_resources: bool) -> Result:
        g = next(iter(self.req.groups.values()))
        tree_root = None
        if g.in_tree is not None:
            tree = providers.find(self.db, g.in_tree)
            if tree is None:
                return Result([], {})
            tree_root = tree.root_provider_id
        amounts = dict(sorted(g.resources.items()))
        req = self.req
        # The statement depends only on the request's shape; values are bound at execution.
        shape = (tuple(amounts), tuple(len(s) > 0 for s in g.member_of), bool(g.forbidden_aggs),
                 len(g.required), bool(g.forbidden), tree_root is not None,
                 len(req.root_required), bool(req.root_forbidden), want_all_resources,
                 with_summaries, req.limit is not None)
        params: dict[str, Any] = {f"amt{i}": a for i, a in enumerate(amounts.values())}
        for i, any_of in enumerate(g.member_of):
            params[f"mo{i}"] = sorted(any_of)
        params.update(fa=sorted(g.forbidden_aggs), ft=sorted(g.forbidden), tree=tree_root,
                      rf=sorted(req.root_forbidden), lim=req.limit)
        for i, any_of in enumerate(g.required):
            params[f"rq{i}"] = sorted(any_of)
        for i, name in enumerate(sorted(req.root_required)):
            params[f"rr{i}"] = name
        query = _FLAT_STATEMENTS.get(shape)
        if query is None:
            if len(_FLAT_STATEMENTS) > 512:
                _FLAT_STATEMENTS.clear()
            query = _FLAT_STATEMENTS[shape] = _flat_statement(shape)
        if with_summaries and self.db.get_bind().dialect.name in ("mysql", "mariadb"):
            # GROUP_CONCAT stops at 1024 bytes by default: room for any provider's classes.
            self.db.execute(text("SET SESSION group_concat_max_len = 1048576"))
        found: list[Candidate] = []
        summaries: dict[str, ProviderSummary] = {}
        suffix = g.suffix
        for row in self.db.execute(query, {k: v for k, v in params.items() if v is not None}):
            rp_uuid = row[1]
            # `amounts` is shared by every candidate: it is read-only data.
            found.append(Candidate({rp_uuid: amounts}, {suffix: [rp_uuid]}))
            if with_summaries:
                summaries[rp_uuid] = ProviderSummary(
                    rp_uuid, None, rp_uuid, raw=row[2],
                    traits=sorted(row[3].split(",")) if row[3] else [])
        return Result(found, summaries)

    # ---------------------------------------------------------------- filters
    def _roots_with_traits(self) -> set[int] | None:
        """Root providers satisfying root_required (1.35); None when not asked."""
        req, forb = self.req.root_required, self.req.root_forbidden
        if not req and not forb:
            return None
        query = select(RP.id).where(RP.id == RP.root_provider_id)
        for name in sorted(req):
            query = query.where(RP.id.in_(select(ProviderTrait.resource_provider_id)
                                          .where(ProviderTrait.trait == name)))
        if forb:
            query = query.where(RP.id.not_in(select(ProviderTrait.resource_provider_id)
                                             .where(ProviderTrait.trait.in_(sorted(forb)))))
        return set(self.db.scalars(query))

    def _provider_conditions(self, rp: Any, g: RequestGroup, *, exact_traits: bool,
                             with_aggregates: bool = True) -> list[Any]:
        conds: list[Any] = []
        if g.forbidden:
            conds.append(rp.id.not_in(select(_PT.resource_provider_id)
                                      .where(_PT.trait.in_(sorted(g.forbidden)))))
        if exact_traits:
            for any_of in g.required:
                conds.append(rp.id.in_(select(_PT.resource_provider_id)
                                       .where(_PT.trait.in_(sorted(any_of)))))
        if with_aggregates:
            # An aggregate on the root spans the whole tree: the provider *or its root*.
            for any_of in g.member_of:
                members = (select(_PA.resource_provider_id)
                           .where(_PA.aggregate_uuid.in_(sorted(any_of))))
                conds.append(or_(rp.id.in_(members), rp.root_provider_id.in_(members)))
            if g.forbidden_aggs:
                members = (select(_PA.resource_provider_id)
                           .where(_PA.aggregate_uuid.in_(sorted(g.forbidden_aggs))))
                conds.append(and_(rp.id.not_in(members), rp.root_provider_id.not_in(members)))
        return conds

    def _fitting_rows(self, g: RequestGroup, tree_root: int | None, *, exact_traits: bool,
                      only: set[int] | None = None,
                      with_aggregates: bool = True) -> list[tuple[int, int, str]]:
        """(rp_id, root_id, rc) for every provider that can take the group's amount of rc."""
        inv = aliased(Inventory, name="inv")
        rp = aliased(RP, name="rp")
        usage = providers.usage_subquery(sorted(g.resources))
        used = func.coalesce(usage.c.used, 0)
        query = (select(inv.resource_provider_id, rp.root_provider_id, inv.resource_class,
                        (inv.total - inv.reserved) * inv.allocation_ratio, used, inv.max_unit)
                 .join(rp, rp.id == inv.resource_provider_id)
                 .outerjoin(usage, and_(usage.c.rp_id == inv.resource_provider_id,
                                        usage.c.rc == inv.resource_class))
                 .where(or_(*[and_(inv.resource_class == rc,
                                   providers.fits_clause(inv, usage.c.used, amount))
                              for rc, amount in sorted(g.resources.items())])))
        conds = self._provider_conditions(rp, g, exact_traits=exact_traits,
                                          with_aggregates=with_aggregates)
        if tree_root is not None:
            conds.append(rp.root_provider_id == tree_root)
        if only is not None:
            conds.append(rp.id.in_(sorted(only)))
        if conds:
            query = query.where(*conds)
        out = []
        fit, root = self.fit, self.root
        for rp_id, root_id, rc, cap, used_now, max_unit in self.db.execute(query):
            fit[(rp_id, rc)] = (cap, int(used_now), max_unit)
            root[rp_id] = root_id
            out.append((rp_id, root_id, rc))
        return out

    # ---------------------------------------------------------------- per group
    def _group_pieces(self, g: RequestGroup, tree_root: int | None) -> dict[int, list[Piece]]:
        if not g.resources:
            return self._resourceless_pieces(g, tree_root)
        simple = not (self.has_trees or self.sharing)
        exact = g.same_provider or simple
        rows = self._fitting_rows(g, tree_root, exact_traits=exact)
        n_classes = len(g.resources)
        amounts = g.resources
        by_anchor: dict[int, list[Piece]] = defaultdict(list)
        if exact:
            # One provider serves the whole group.
            classes_of: dict[int, int] = defaultdict(int)
            for rp_id, _root, _rc in rows:
                classes_of[rp_id] += 1
            ordered = sorted(amounts.items())
            for rp_id, count in classes_of.items():
                if count != n_classes:
                    continue
                piece = (self.root[rp_id], tuple((rp_id, rc, a) for rc, a in ordered),
                         frozenset((rp_id,)))
                by_anchor[piece[0]].append(piece)
            if g.same_provider and self.sharing and tree_root is None:
                for rp_id in [r for r, c in classes_of.items() if c == n_classes and r in self.sharing]:
                    for anchor in self._anchors_of(rp_id, g):
                        if anchor != self.root[rp_id]:
                            res = tuple((rp_id, rc, a) for rc, a in ordered)
                            by_anchor[anchor].append((anchor, res, frozenset((rp_id,))))
            return by_anchor
        # Spread over one tree plus sharing providers anchored to it.
        per_tree: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for rp_id, root_id, rc in rows:
            per_tree[root_id][rc].append(rp_id)
        if self.sharing and tree_root is None:
            shared_rows = self._fitting_rows(g, None, exact_traits=False, only=self.sharing,
                                             with_aggregates=False)
            for rp_id, _root, rc in shared_rows:
                for anchor in self._anchors_of(rp_id, g):
                    if rp_id not in per_tree[anchor][rc]:
                        per_tree[anchor][rc].append(rp_id)
        needs_traits = bool(g.required)
        if needs_traits:
            self._load_traits({rp for tree in per_tree.values() for rps in tree.values()
                               for rp in rps})
        ordered_rcs = sorted(amounts)
        for anchor, by_rc in per_tree.items():
            if len(by_rc) != n_classes:
                continue
            for combo in itertools.product(*(by_rc[rc] for rc in ordered_rcs)):
                used_rps = frozenset(combo)
                if needs_traits and not self._traits_satisfied(used_rps, g.required):
                    continue
                res = tuple((rp_id, rc, amounts[rc]) for rp_id, rc in zip(combo, ordered_rcs,
                                                                           strict=True))
                by_anchor[anchor].append((anchor, res, used_rps))
        return by_anchor

    def _resourceless_pieces(self, g: RequestGroup, tree_root: int | None) -> dict[int, list[Piece]]:
        """A granular group with no resources (1.36): any provider matching its filters."""
        rp = aliased(RP, name="rp")
        query = select(rp.id, rp.root_provider_id).where(
            *self._provider_conditions(rp, g, exact_traits=True))
        if tree_root is not None:
            query = query.where(rp.root_provider_id == tree_root)
        by_anchor: dict[int, list[Piece]] = defaultdict(list)
        for rp_id, root_id in self.db.execute(query):
            self.root[rp_id] = root_id
            by_anchor[root_id].append((root_id, (), frozenset((rp_id,))))
        return by_anchor

    def _anchors_of(self, sharing_rp: int, g: RequestGroup) -> set[int]:
        """Roots of trees that share an aggregate with a sharing provider (and its own),
        kept when the provider or the anchor satisfies the group's member_of."""
        pa, pa2 = aliased(ProviderAggregate), aliased(ProviderAggregate)
        rp = aliased(RP)
        anchors = set(self.db.scalars(
            select(rp.root_provider_id).distinct()
            .join(pa2, pa2.resource_provider_id == rp.id)
            .join(pa, pa.aggregate_uuid == pa2.aggregate_uuid)
            .where(pa.resource_provider_id == sharing_rp)))
        anchors.add(self.root[sharing_rp])
        if not g.member_of and not g.forbidden_aggs:
            return anchors
        aggs = self._aggregates_of(anchors | {sharing_rp})
        kept = set()
        for anchor in anchors:
            held = aggs.get(sharing_rp, set()) | aggs.get(anchor, set())
            if all(held & any_of for any_of in g.member_of) and not (
                    aggs.get(sharing_rp, set()) & g.forbidden_aggs
                    or aggs.get(anchor, set()) & g.forbidden_aggs):
                kept.add(anchor)
        return kept

    def _aggregates_of(self, rp_ids: Iterable[int]) -> dict[int, set[str]]:
        out: dict[int, set[str]] = defaultdict(set)
        for rp_id, agg in self.db.execute(
                select(ProviderAggregate.resource_provider_id, ProviderAggregate.aggregate_uuid)
                .where(ProviderAggregate.resource_provider_id.in_(sorted(set(rp_ids))))):
            out[rp_id].add(agg)
        return out

    def _load_traits(self, rp_ids: Iterable[int]) -> None:
        missing = sorted(set(rp_ids) - set(self._traits))
        for rp_id in missing:
            self._traits[rp_id] = set()
        for chunk in _chunks(missing):
            for rp_id, name in self.db.execute(
                    select(ProviderTrait.resource_provider_id, ProviderTrait.trait)
                    .where(ProviderTrait.resource_provider_id.in_(chunk))):
                self._traits[rp_id].add(name)

    def _traits_satisfied(self, rp_ids: frozenset[int], required: list[set[str]]) -> bool:
        held: set[str] = set()
        for rp_id in rp_ids:
            held |= self._traits[rp_id]
        return all(held & any_of for any_of in required)

    # ---------------------------------------------------------------- merging
    def _merge(self, pieces: dict[str, dict[int, list[Piece]]]
               ) -> list[tuple[dict[tuple[int, str], int], dict[str, set[int]]]]:
        suffixes = sorted(pieces)
        anchors = set.intersection(*(set(p) for p in pieces.values()))
        granular = [s for s in suffixes if s]
        isolate = self.req.group_policy == "isolate"
        parents = self._parents() if self.req.same_subtrees else {}
        single = len(suffixes) == 1
        seen: set[Any] = set()
        out = []
        for anchor in sorted(anchors):
            for combo in itertools.product(*(pieces[s][anchor] for s in suffixes)):
                if isolate and len(granular) > 1:
                    providers_used = [next(iter(combo[suffixes.index(s)][2])) for s in granular]
                    if len(set(providers_used)) != len(providers_used):
                        continue
                mappings = {s: set(p[2]) for s, p in zip(suffixes, combo, strict=True)}
                if parents and not all(_same_subtree(set().union(
                        *(mappings[s] for s in subtree if s in mappings)), parents)
                        for subtree in self.req.same_subtrees):
                    continue
                amounts: dict[tuple[int, str], int] = {}
                for piece in combo:
                    for rp_id, rc, amount in piece[1]:
                        amounts[(rp_id, rc)] = amounts.get((rp_id, rc), 0) + amount
                if not single and self._exceeds(amounts):
                    continue
                if not self.req.nested_aware and self.has_trees and not self._one_per_tree(amounts):
                    continue
                key = (frozenset(amounts.items()),
                       frozenset((s, frozenset(v)) for s, v in mappings.items()))
                if key in seen:
                    continue
                seen.add(key)
                out.append((amounts, mappings))
        return out

    def _exceeds(self, amounts: dict[tuple[int, str], int]) -> bool:
        for key, amount in amounts.items():
            cap, used, max_unit = self.fit[key]
            if used + amount > cap or amount > max_unit:
                return True
        return False

    def _one_per_tree(self, amounts: dict[tuple[int, str], int]) -> bool:
        rps = {rp for rp, _rc in amounts}
        return len({self.root[rp] for rp in rps}) == len(rps)

    def _order(self, item: tuple[dict[tuple[int, str], int], dict[str, set[int]]]) -> Any:
        """Most free capacity (as a fraction, after this allocation) first."""
        amounts = item[0]
        free = 0.0
        for key, amount in amounts.items():
            cap, used, _max = self.fit[key]
            free += (cap - used - amount) / cap if cap else 0.0
        return (-free / max(len(amounts), 1), min((rp for rp, _rc in amounts), default=0))

    def _parents(self) -> dict[int, int | None]:
        rows = self.db.execute(select(RP.id, RP.parent_provider_id, RP.root_provider_id)
                               .where(RP.parent_provider_id.is_not(None)
                                      | RP.id.in_(select(RP.root_provider_id).where(
                                          RP.parent_provider_id.is_not(None)))))
        return {rp_id: parent for rp_id, parent, _root in rows}

    # ---------------------------------------------------------------- output
    def _load_uuids(self, rp_ids: set[int]) -> None:
        missing = sorted(rp_ids - set(self.uuid))
        for chunk in _chunks(missing):
            for rp_id, rp_uuid in self.db.execute(select(RP.id, RP.uuid).where(RP.id.in_(chunk))):
                self.uuid[rp_id] = rp_uuid

    def _summaries(self, used_rps: set[int], want_all_resources: bool) -> dict[str, ProviderSummary]:
        requested = {rc for g in self.req.groups.values() for rc in g.resources}
        if self.req.nested_aware:
            roots = sorted({self.root[rp] for rp in used_rps})
            cond_col, keys = RP.root_provider_id, roots
        else:
            cond_col, keys = RP.id, sorted(used_rps)
        parent = aliased(RP, name="parent")
        root = aliased(RP, name="root")
        inv = aliased(Inventory, name="inv")
        summaries: dict[int, ProviderSummary] = {}
        for chunk in _chunks(keys):
            rows = self.db.execute(
                select(RP.id, RP.uuid, parent.uuid, root.uuid)
                .join(root, root.id == RP.root_provider_id)
                .outerjoin(parent, parent.id == RP.parent_provider_id)
                .where(cond_col.in_(chunk)))
            for rp_id, rp_uuid, parent_uuid, root_uuid in rows:
                summaries[rp_id] = ProviderSummary(rp_uuid, parent_uuid, root_uuid, {}, [])
        ids = sorted(summaries)
        usage_sub = providers.usage_subquery(None if want_all_resources else sorted(requested))
        for chunk in _chunks(ids):
            query = (select(inv.resource_provider_id, inv.resource_class, inv.total, inv.reserved,
                            inv.allocation_ratio, func.coalesce(usage_sub.c.used, 0))
                     .outerjoin(usage_sub, and_(usage_sub.c.rp_id == inv.resource_provider_id,
                                                usage_sub.c.rc == inv.resource_class))
                     .where(inv.resource_provider_id.in_(chunk)))
            if not want_all_resources:
                query = query.where(inv.resource_class.in_(sorted(requested)))
            for rp_id, rc, total, reserved, ratio, used in self.db.execute(query):
                summaries[rp_id].resources[rc] = {"capacity": int((total - reserved) * ratio),
                                                  "used": int(used)}
        self._load_traits(ids)
        for rp_id, summary in summaries.items():
            summary.traits = sorted(self._traits.get(rp_id, ()))
        return {s.uuid: s for s in summaries.values()}


_FLAT_STATEMENTS: dict[tuple[Any, ...], Any] = {}


def _flat_statement(shape: tuple[Any, ...]) -> Any:
    """The one-query search for a request of this shape (see _Search._flat): providers that
    fit every requested class, most free first, with their summaries aggregated."""
    (classes, member_of, forbidden_aggs, n_required, forbidden, in_tree, n_root_required,
     root_forbidden, want_all_resources, with_summaries, limited) = shape
    inv_t, rp_t = _INV.alias("inv"), _RP.alias("rp")
    inv, rp = inv_t.c, rp_t.c
    amounts = {rc: bindparam(f"amt{i}", type_=Integer) for i, rc in enumerate(classes)}
    usage = providers.usage_subquery(None if want_all_resources else list(classes))
    used = func.coalesce(usage.c.used, 0)
    cap = (inv.total - inv.reserved) * inv.allocation_ratio
    fits = func.sum(case((or_(*[and_(inv.resource_class == rc,
                                     providers.fits_clause(inv, usage.c.used, amount))
                                for rc, amount in amounts.items()]), 1), else_=0))
    # Most free capacity first: the sum over requested classes of the free fraction left
    # after this allocation.
    score = func.sum(case(*[(and_(inv.resource_class == rc, cap > 0),
                             (cap - used - amount) / cap) for rc, amount in amounts.items()],
                          else_=0.0))
    cols: list[Any] = [inv.resource_provider_id, rp.uuid]
    if with_summaries:
        # The summary's resources, already as JSON members: "VCPU":{"capacity":N,"used":M}
        # (capacity is truncated like Python's int(), on every backend).
        capacity = cast(func.floor(cap), BigInteger)
        cols.append(func.aggregate_strings(
            literal('"') + inv.resource_class + literal('":{"capacity":')
            + cast(capacity, String) + literal(',"used":') + cast(used, String)
            + literal("}"), ","))
        cols.append(select(func.aggregate_strings(_PT.trait, ","))
                    .where(_PT.resource_provider_id == inv.resource_provider_id)
                    .scalar_subquery())
    conds: list[Any] = []

    def having_trait(name: str) -> Any:
        return select(_PT.resource_provider_id).where(
            _PT.trait.in_(bindparam(name, expanding=True)))

    def in_aggregates(name: str) -> Any:
        return select(_PA.resource_provider_id).where(
            _PA.aggregate_uuid.in_(bindparam(name, expanding=True)))

    if forbidden:
        conds.append(rp.id.not_in(having_trait("ft")))
    for i in range(n_required):
        conds.append(rp.id.in_(having_trait(f"rq{i}")))
    for i, _ in enumerate(member_of):
        conds.append(rp.id.in_(in_aggregates(f"mo{i}")))
    if forbidden_aggs:
        conds.append(rp.id.not_in(in_aggregates("fa")))
    if in_tree:
        conds.append(rp.root_provider_id == bindparam("tree"))
    # Without trees every provider is its own root: root_required applies to it.
    for i in range(n_root_required):
        conds.append(rp.id.in_(select(_PT.resource_provider_id)
                               .where(_PT.trait == bindparam(f"rr{i}"))))
    if root_forbidden:
        conds.append(rp.id.not_in(having_trait("rf")))
    if not want_all_resources:
        conds.append(inv.resource_class.in_(list(classes)))
    query = (select(*cols)
             .select_from(inv_t.join(rp_t, rp.id == inv.resource_provider_id)
                          .outerjoin(usage, and_(usage.c.rp_id == inv.resource_provider_id,
                                                 usage.c.rc == inv.resource_class)))
             .where(*conds)
             .group_by(inv.resource_provider_id, rp.uuid)
             .having(fits == len(classes))
             .order_by(score.desc(), inv.resource_provider_id))
    if limited:
        query = query.limit(bindparam("lim", type_=Integer))
    return query


def _by_provider(flat: dict[tuple[str, str], int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (rp_uuid, rc), amount in flat.items():
        out.setdefault(rp_uuid, {})[rc] = amount
    return out


def _same_subtree(rp_ids: set[int], parents: dict[int, int | None]) -> bool:
    """True when one of the providers is an ancestor (or self) of all the others."""
    if len(rp_ids) <= 1:
        return True

    def ancestors(rp_id: int) -> set[int]:
        found = {rp_id}
        while parents.get(rp_id) is not None:
            rp_id = parents[rp_id]  # type: ignore[assignment]
            found.add(rp_id)
        return found

    common = set.intersection(*(ancestors(rp) for rp in rp_ids))
    return bool(common & rp_ids)


def _chunks(items: list[Any], size: int = 5000) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]
