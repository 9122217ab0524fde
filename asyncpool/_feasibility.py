"""The placement feasibility solver: could any layout of these nodes ever hold this request?

Owns the pure check behind :func:`asyncpool.placement.allocate`'s fail-fast promise and
:class:`asyncpool.cluster.VirtualCluster`'s whole-cluster check: given the *total* resources and
labels of the alive nodes, :func:`check_feasible` raises
:class:`~asyncpool.errors.ResourceInsufficientError` (naming requested and available figures)
when no assignment of the bundles to nodes exists, for every strategy and label selector Ray
knows. The exact packing search is bounded by a step budget; an undecided search counts as
feasible (Ray then simply waits).

Must not: call Ray, read the node table (``_gcs`` does), sleep, or hold state: it is pure and
deterministic, so that it can be tested on made-up node shapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from .errors import ResourceInsufficientError

__all__ = [
    "Node",
    "Request",
    "check_feasible",
    "fmt",
    "fmt_amount",
    "fmt_nodes",
    "sort_keys",
    "total",
]

#: Ray accounts resources in units of 1/10000; we compare in the same integer units.
_UNIT: Final = 10_000

#: Step budget of the exact packing search; beyond it the request is assumed feasible.
_SEARCH_BUDGET: Final = 20_000
_SEARCH_MAX_BUNDLES: Final = 256


@dataclass(frozen=True)
class Node:
    """A node as the feasibility check sees it: all of its total resources and its labels."""

    node_id: str
    ip: str
    resources: Mapping[str, float]
    labels: Mapping[str, str]
    is_head: bool


@dataclass(frozen=True)
class Request:
    """Validated bundles, a strategy, and one label selector per bundle (or ``None``)."""

    bundles: list[dict[str, float]]
    strategy: str
    selectors: list[dict[str, str]] | None


def _label_matches(labels: Mapping[str, str], key: str, expr: str) -> bool:
    """Ray's label selector semantics: ``v``, ``!v``, ``in(a,b)``, ``!in(a,b)``."""
    negate = expr.startswith("!")
    body = expr[1:] if negate else expr
    if body.startswith("in(") and body.endswith(")"):
        values = {v.strip() for v in body[3:-1].split(",")}
    elif body.startswith("(") and body.endswith(")"):
        values = {v.strip() for v in body[1:-1].split(",")}
    else:
        values = {body}
    present = key in labels and labels[key] in values
    return not present if negate else present


def _eligible(node: Node, selector: Mapping[str, str] | None) -> bool:
    return not selector or all(_label_matches(node.labels, k, v) for k, v in selector.items())


def _units(x: float) -> int:
    return round(x * _UNIT)


def fmt_amount(x: float) -> str:
    if abs(x) >= 1e6:
        return f"{x:.4g}"
    return f"{x:g}" if x != int(x) else str(int(x))


def sort_keys(keys: set[str]) -> list[str]:
    first = [k for k in ("GPU", "CPU") if k in keys]
    return first + sorted(keys - set(first))


def fmt(resources: Mapping[str, float], keys: Sequence[str] | None = None) -> str:
    keys = list(keys) if keys is not None else sort_keys(set(resources))
    return ", ".join(f"{k}={fmt_amount(resources.get(k, 0.0))}" for k in keys) or "nothing"


def fmt_nodes(nodes: Sequence[Node], keys: Sequence[str]) -> str:
    """Node shapes, identical shapes grouped: ``2 x {GPU=4, CPU=2}, 1 x {GPU=0, CPU=2}``."""
    if not nodes:
        return "no alive nodes"
    counts: dict[str, int] = {}
    for n in nodes:
        shape = "{" + fmt(n.resources, keys) + "}"
        counts[shape] = counts.get(shape, 0) + 1
    return ", ".join(f"{c} x {s}" for s, c in counts.items())


def total(bundles: Sequence[Mapping[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for b in bundles:
        for k, v in b.items():
            if v:
                out[k] = out.get(k, 0.0) + v
    return out


def _fits(need: Mapping[str, float], have: Mapping[str, float]) -> bool:
    return all(_units(v) <= _units(have.get(k, 0.0)) for k, v in need.items() if v)


def check_feasible(
    req: Request, nodes: Sequence[Node], what: str = "request", intro: str = ""
) -> None:
    """Raise ResourceInsufficientError when no layout of ``nodes`` could ever hold ``req``.

    ``intro`` replaces the description of the request at the start of the message. The
    message is built only on failure: the feasible path is the hot one.
    """
    selectors: list[dict[str, str] | None] = (
        list(req.selectors) if req.selectors else [None] * len(req.bundles)
    )
    eligible = [[j for j, n in enumerate(nodes) if _eligible(n, s)] for s in selectors]
    detail = _bundle_problem(req, nodes, eligible, selectors) or _set_problem(
        req, nodes, eligible
    )
    if detail is None:
        return
    need = total(req.bundles)
    head = intro or f"{what} of {len(req.bundles)} bundle(s), {req.strategy}, {fmt(need)} in all"
    nodes_text = fmt_nodes(nodes, sort_keys(set(need)))
    raise ResourceInsufficientError(f"{head}: {detail} (alive nodes: {nodes_text})")


def _bundle_problem(
    req: Request,
    nodes: Sequence[Node],
    eligible: list[list[int]],
    selectors: list[dict[str, str] | None],
) -> str | None:
    """Why the bundles could not be held whatever the strategy: no eligible node, more of a
    resource than the eligible nodes have in all, or one bundle bigger than every node."""
    for i, nodes_i in enumerate(eligible):
        if not nodes_i:
            return f"no alive node matches the label selector {selectors[i]} of bundle {i}"
    need = total(req.bundles)
    pool = sorted({j for nodes_i in eligible for j in nodes_i})
    have = total([nodes[j].resources for j in pool])
    for k in sort_keys(set(need)):
        if _units(need[k]) > _units(have.get(k, 0.0)):
            return (
                f"requested {k}={fmt_amount(need[k])} in all, but the cluster has "
                f"{k}={fmt_amount(have.get(k, 0.0))} in all"
            )
    for i, b in enumerate(req.bundles):
        if not any(_fits(b, nodes[j].resources) for j in eligible[i]):
            largest = {
                k: max((nodes[j].resources.get(k, 0.0) for j in eligible[i]), default=0.0)
                for k in b
            }
            return (
                f"bundle {i} requests {fmt(b)}, more than any node has (largest per "
                f"resource: {fmt(largest)})"
            )
    return None


def _set_problem(req: Request, nodes: Sequence[Node], eligible: list[list[int]]) -> str | None:
    """Why the bundles could not be held *together* under the request's strategy."""
    bundles = req.bundles
    if req.strategy == "STRICT_PACK":  # all bundles on one node
        need = total(bundles)
        keys = sort_keys(set(need))
        common = set(range(len(nodes)))
        for nodes_i in eligible:
            common &= set(nodes_i)
        if any(_fits(need, nodes[j].resources) for j in common):
            return None
        largest = {
            k: max((nodes[j].resources.get(k, 0.0) for j in common), default=0.0) for k in keys
        }
        return (
            f"STRICT_PACK needs {fmt(need)} on one node, but the largest node "
            f"has {fmt(largest, keys)}"
        )
    pool = {j for nodes_i in eligible for j in nodes_i}
    distinct = req.strategy == "STRICT_SPREAD"
    if distinct and len(bundles) > len(pool):
        return (
            f"STRICT_SPREAD needs {len(bundles)} distinct nodes, but only "
            f"{len(pool)} alive node(s) can take its bundles"
        )
    fit_on = [
        [j for j in eligible[i] if _fits(b, nodes[j].resources)] for i, b in enumerate(bundles)
    ]
    if distinct:
        matched = _max_matching(fit_on, len(nodes))
        if matched < len(bundles):
            return (
                f"STRICT_SPREAD needs {len(bundles)} distinct nodes that each hold "
                f"one bundle, but at most {matched} such nodes exist"
            )
        return None
    # PACK / SPREAD: an exact (budgeted) search for an assignment of bundles to nodes.
    if _placeable(bundles, fit_on, nodes, distinct=False) is False:
        return "the bundles cannot be packed onto the nodes' total resources in any way"
    return None


def _max_matching(fit_on: Sequence[Sequence[int]], n_nodes: int) -> int:
    """Size of a maximum matching of bundles to distinct nodes (Kuhn's algorithm)."""
    owner = [-1] * n_nodes

    def augment(b: int, seen: list[bool]) -> bool:
        for j in fit_on[b]:
            if seen[j]:
                continue
            seen[j] = True
            if owner[j] < 0 or augment(owner[j], seen):
                owner[j] = b
                return True
        return False

    return sum(1 for b in range(len(fit_on)) if augment(b, [False] * n_nodes))


def _placeable(
    bundles: Sequence[Mapping[str, float]],
    fit_on: Sequence[Sequence[int]],
    nodes: Sequence[Node],
    *,
    distinct: bool,
) -> bool | None:
    """Whether the bundles can be assigned to nodes within their totals; ``None``: undecided.

    Depth-first search over bundles (most constrained and largest first), skipping nodes that
    are interchangeable at this point (same remaining capacity, same eligibility). Bounded by a
    step budget: an undecided search counts as feasible, Ray will then simply wait.
    """
    if len(bundles) > _SEARCH_MAX_BUNDLES:
        return None
    keys = sorted(total(bundles))
    need = [tuple(_units(b.get(k, 0.0)) for k in keys) for b in bundles]
    remaining = [[_units(n.resources.get(k, 0.0)) for k in keys] for n in nodes]
    peak = [max((r[i] for r in remaining), default=1) or 1 for i in range(len(keys))]
    order = sorted(
        range(len(bundles)),
        key=lambda b: (len(fit_on[b]), -sum(x / p for x, p in zip(need[b], peak, strict=True))),
    )
    signature = [
        frozenset(b for b in range(len(bundles)) if j in fit_on[b]) for j in range(len(nodes))
    ]
    used = [False] * len(nodes)
    steps = 0

    def search(pos: int) -> bool | None:
        nonlocal steps
        if pos == len(order):
            return True
        b = order[pos]
        tried: set[tuple[Any, ...]] = set()
        for j in fit_on[b]:
            if distinct and used[j]:
                continue
            rem = remaining[j]
            if any(x > r for x, r in zip(need[b], rem, strict=True)):
                continue
            key = (signature[j], tuple(rem))
            if key in tried:
                continue
            tried.add(key)
            steps += 1
            if steps > _SEARCH_BUDGET:
                return None
            for i, x in enumerate(need[b]):
                rem[i] -= x
            used[j] = True
            result = search(pos + 1)
            used[j] = False
            for i, x in enumerate(need[b]):
                rem[i] += x
            if result is not False:
                return result
        return False

    return search(0)
