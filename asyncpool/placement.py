"""Placement groups that never hang forever, never leak, and say why they could not be had.

What this module guarantees, and why:

* **Fail fast on the impossible.** :func:`allocate` first checks the request against the
  *total* resources and shapes of the alive nodes (not what is free right now). A request that
  no layout of this cluster could ever hold -- more of a resource than the cluster has in all, a
  bundle bigger than every node, a ``STRICT_PACK`` set bigger than the largest node, a
  ``STRICT_SPREAD`` set with more bundles than (eligible) nodes, a label selector no node
  matches, or a set of bundles that cannot be packed onto the nodes at all -- raises
  :class:`~asyncpool.errors.ResourceInsufficientError` at once, naming the requested and the
  available figures. Ray itself would leave such a group pending forever.
  The check costs no latency: it uses the node snapshot of a recent check (younger than
  10 s) when there is one -- a request it finds impossible is then confirmed against fresh
  nodes, and nothing is submitted. Without one (the first allocation of a process), the first
  attempt is submitted at once, and only when it is not ready within 50 ms -- a group on free
  resources is ready in a few milliseconds -- is the node table read, in a worker thread,
  while the attempt stays pending; found impossible, the attempt is removed before the error
  is raised.
* **Wait, retry, give up on time.** A request that fits but is busy is awaited (natively:
  ``await pg.ready()``, never a blocking ``ray.get`` on the event loop) for one window of the
  :class:`Backoff` schedule; when the window passes, the pending group is removed, the
  feasibility check is repeated against the nodes alive *now* (a node that died may make the
  request impossible, which is then reported at once), and the group is submitted again with
  the next, longer window -- until ``timeout``, then
  :class:`~asyncpool.errors.PlacementTimeoutError` (also a ``TimeoutError``) with the figures.
* **No leaks.** Whatever ends :func:`allocate` early -- cancellation (asyncio task cancel, an
  anyio cancel scope, ``anyio.fail_after``), a timeout, an error -- the group it submitted is
  removed before the exception leaves it. Only a group returned to the caller survives, and
  the caller owns it (``ray.util.remove_placement_group``).

Worker-node label. :func:`plan_replica` with ``ignore_head=True`` keeps replicas off the head
node by giving every bundle the label selector :data:`WORKER_LABEL`
(``{"asyncpool-role": "worker"}``). The worker nodes of your cluster must carry that label:
``ray start --address=... --labels="asyncpool-role=worker"`` (or ``labels=`` of
``ray.cluster_utils.Cluster.add_node``); pass ``worker_label=`` to use a label of your own.

Blocking Ray state calls (``ray.nodes()``, ``placement_group_table()``) are run in a worker
thread (``anyio.to_thread.run_sync``) by every coroutine here.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, cast

import anyio
import anyio.to_thread
import ray
from ray.util.placement_group import (
    PlacementGroup,
    get_placement_group,
    placement_group,
    placement_group_table,
    remove_placement_group,
)

from asyncpool.errors import PlacementTimeoutError, ResourceInsufficientError

__all__ = [
    "Backoff",
    "NodeInfo",
    "ReplicaSpec",
    "WORKER_LABEL",
    "allocate",
    "bundle_node_ip",
    "free_port",
    "plan_replica",
    "reap",
    "topology",
]

log = logging.getLogger(__name__)

#: The placement strategies Ray knows.
STRATEGIES: Final = ("PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD")

#: The label worker (non-head) nodes must carry for ``plan_replica(..., ignore_head=True)``.
WORKER_LABEL: Final[Mapping[str, str]] = MappingProxyType({"asyncpool-role": "worker"})

#: The resource Ray gives the head node only.
_HEAD_RESOURCE: Final = "node:__internal_head__"

#: Ray accounts resources in units of 1/10000; we compare in the same integer units.
_UNIT: Final = 10_000

#: Step budget of the exact packing search; beyond it the request is assumed feasible.
_SEARCH_BUDGET: Final = 20_000
_SEARCH_MAX_BUNDLES: Final = 256


# --------------------------------------------------------------------------------------------
# Backoff
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Backoff:
    """The schedule of waiting windows of :func:`allocate`: exponential, capped, jittered.

    Window ``k`` (0-based) is ``initial * factor ** min(k, attempts - 1)``, capped at
    ``maximum``, then multiplied by a uniform factor in ``[1 - jitter, 1 + jitter]`` and capped
    at ``maximum`` again: it never exceeds ``maximum``.

    How ``attempts`` and ``timeout`` interact: ``attempts`` bounds the *growth* of the
    schedule -- after ``attempts`` windows every further window is as long as the last one (the
    retries go on at that pace); the ``timeout`` of :func:`allocate` is the only overall
    deadline. So an allocation never gives up before its timeout because it ran out of
    attempts, and never waits past its timeout either (the last window is cut to the deadline).
    With the defaults the windows are 1, 2, 4, 8, 16, 30, 30, ... seconds (± 10 %).
    """

    initial: float = 1.0
    factor: float = 2.0
    maximum: float = 30.0
    jitter: float = 0.1
    attempts: int = 6

    def __post_init__(self) -> None:
        for name in ("initial", "factor", "maximum", "jitter"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"Backoff.{name} must be a number, not {type(value).__name__}")
            if not math.isfinite(value):
                raise ValueError(f"Backoff.{name} must be finite, got {value}")
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int):
            raise TypeError(f"Backoff.attempts must be an int, not {type(self.attempts).__name__}")
        if self.initial <= 0:
            raise ValueError(f"Backoff.initial must be > 0, got {self.initial}")
        if self.factor < 1:
            raise ValueError(f"Backoff.factor must be >= 1, got {self.factor}")
        if self.maximum < self.initial:
            raise ValueError(
                f"Backoff.maximum ({self.maximum}) must be >= Backoff.initial ({self.initial})"
            )
        if not 0 <= self.jitter < 1:
            raise ValueError(f"Backoff.jitter must be in [0, 1), got {self.jitter}")
        if self.attempts < 1:
            raise ValueError(f"Backoff.attempts must be >= 1, got {self.attempts}")

    def base(self, k: int) -> float:
        """Window ``k`` (0-based) before jitter."""
        if k < 0:
            raise ValueError(f"window index must be >= 0, got {k}")
        exponent = min(k, self.attempts - 1)
        try:
            grown = self.initial * self.factor**exponent
        except OverflowError:
            return self.maximum
        return min(self.maximum, grown)

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        """The endless schedule of windows, in seconds (see the class docstring).

        ``rng`` makes the jitter reproducible; by default the module ``random`` is used.
        """
        uniform = (rng or random).uniform
        k = 0
        while True:
            window = self.base(k)
            if self.jitter:
                window *= uniform(1.0 - self.jitter, 1.0 + self.jitter)
            yield min(window, self.maximum)
            k += 1


# --------------------------------------------------------------------------------------------
# Nodes
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeInfo:
    """One alive node, from its *total* resources (what it has, not what is free now).

    ``labels`` are the node's Ray labels (they do not take part in equality or hashing).
    """

    node_id: str
    ip: str
    num_gpus: float
    num_cpus: float
    is_head: bool
    labels: Mapping[str, str] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, hash=False
    )


@dataclass(frozen=True)
class _Node:
    """A node as the feasibility check sees it: all of its total resources and its labels."""

    node_id: str
    ip: str
    resources: Mapping[str, float]
    labels: Mapping[str, str]
    is_head: bool


def _require_ray() -> None:
    if not ray.is_initialized():
        raise RuntimeError(
            "Ray is not connected: call asyncpool.runtime.init() "
            "(or `async with asyncpool.runtime.connect()`) first"
        )


def _ray_nodes() -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = cast(Any, ray).nodes()
    return nodes


def _alive_nodes() -> list[_Node]:
    """The alive nodes of the cluster (blocking GCS call: run it in a thread from async code)."""
    nodes = []
    for n in _ray_nodes():
        if not n.get("Alive", n.get("alive", False)):
            continue
        resources = {str(k): float(v) for k, v in (n.get("Resources") or {}).items()}
        nodes.append(
            _Node(
                node_id=str(n["NodeID"]),
                ip=str(n.get("NodeManagerAddress", "")),
                resources=resources,
                labels={str(k): str(v) for k, v in (n.get("Labels") or {}).items()},
                is_head=_HEAD_RESOURCE in resources,
            )
        )
    nodes.sort(key=lambda n: (not n.is_head, n.ip, n.node_id))
    return nodes


#: How long a node snapshot may serve the *feasible* fast path of :func:`allocate`.
_NODES_TTL: Final = 10.0
#: Without a recent snapshot, how long the first attempt may be pending before it is checked.
_COLD_CHECK_GRACE: Final = 0.05
_nodes_cache: tuple[str, float, list[_Node]] | None = None


def _cluster_key() -> str:
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # pragma: no cover - not connected / client mode
        return ""


def _alive_nodes_snapshot() -> list[_Node]:
    """:func:`_alive_nodes`, remembered as the latest snapshot (runs in a worker thread)."""
    global _nodes_cache
    nodes = _alive_nodes()
    _nodes_cache = (_cluster_key(), time.monotonic(), nodes)
    return nodes


async def _alive_nodes_async(*, abandon_on_cancel: bool = False) -> list[_Node]:
    return await anyio.to_thread.run_sync(
        _alive_nodes_snapshot, abandon_on_cancel=abandon_on_cancel
    )


def _recent_nodes() -> list[_Node] | None:
    """The latest node snapshot of this cluster if younger than ``_NODES_TTL`` seconds."""
    cached = _nodes_cache
    if (
        cached is not None
        and time.monotonic() - cached[1] < _NODES_TTL
        and cached[0] == _cluster_key()
    ):
        return cached[2]
    return None


async def _fresh_check(req: _Request, what: str, *, abandon_on_cancel: bool = False) -> None:
    """Check ``req`` against the nodes alive now (one GCS read in a worker thread)."""
    _check_feasible(req, await _alive_nodes_async(abandon_on_cancel=abandon_on_cancel), what)


async def _first_check(req: _Request, what: str) -> bool:
    """The check before the first submission of :func:`allocate`.

    ``True``: done, the request is feasible. ``False``: there is no recent node snapshot; the
    caller checks against fresh nodes while its first attempt is pending
    (:func:`_await_ready_checking`), so that a cold check costs no latency.

    A snapshot younger than ``_NODES_TTL`` seconds may show the request feasible without a GCS
    round trip (a stale "feasible" only costs a wait: every retry re-checks against fresh
    nodes). An "impossible" verdict is always confirmed against fresh nodes before it is
    raised -- and before anything is submitted -- so a node that just joined is never missed.
    """
    nodes = _recent_nodes()
    if nodes is None:
        return False
    try:
        _check_feasible(req, nodes, what)
    except ResourceInsufficientError:
        await _fresh_check(req, what)
    return True


async def _await_ready_checking(pg: PlacementGroup, check: _Request | None, what: str) -> None:
    """Await ``pg.ready()``; with ``check``, check it against fresh nodes meanwhile.

    The check starts when the group is not ready after ``_COLD_CHECK_GRACE`` seconds, and its
    ``ResourceInsufficientError`` is raised as soon as it is known (the caller removes ``pg``).
    When the group is ready first, the check is moot and dropped (a check already reading the
    node table is abandoned; its thread still leaves a fresh node snapshot behind).
    """
    if check is None:
        await pg.ready()
        return
    failed: list[Exception] = []
    ready_error: Exception | None = None

    async def run_check(scope: anyio.CancelScope) -> None:
        try:
            # A group on free resources is ready within milliseconds and needs no check; the
            # grace keeps the node-table read from competing with it for the CPU.
            await anyio.sleep(_COLD_CHECK_GRACE)
            await _fresh_check(check, what, abandon_on_cancel=True)
        except Exception as exc:
            failed.append(exc)
            scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_check, tg.cancel_scope)
        try:
            await pg.ready()
        except Exception as exc:
            ready_error = exc
        tg.cancel_scope.cancel()
    if failed:
        raise failed[0]
    if ready_error is not None:
        raise ready_error


def topology(ignore_head: bool = False) -> list[NodeInfo]:
    """The alive nodes of the cluster, from their total resources, head node first.

    ``ignore_head=True`` leaves the head node out (it usually runs the GCS and the driver and
    has no GPUs to spare). This is a quick but blocking GCS call; from async code run it as
    ``await anyio.to_thread.run_sync(topology)``.
    """
    _require_ray()
    return [
        NodeInfo(
            node_id=n.node_id,
            ip=n.ip,
            num_gpus=n.resources.get("GPU", 0.0),
            num_cpus=n.resources.get("CPU", 0.0),
            is_head=n.is_head,
            labels=MappingProxyType(dict(n.labels)),
        )
        for n in _alive_nodes()
        if not (ignore_head and n.is_head)
    ]


# --------------------------------------------------------------------------------------------
# Replica planning
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplicaSpec:
    """How to place one tensor-parallel replica: pass it on to :func:`allocate`.

    * ``strategy == "STRICT_PACK"`` (``nnodes == 1``): one bundle per GPU, all on one node.
    * ``strategy == "STRICT_SPREAD"``: one bundle per node, each holding that node's even share
      of the GPUs (``gpus_per_node``); ``STRICT_SPREAD`` puts every bundle on a distinct node,
      so the share of a node cannot be split into per-GPU bundles. Workers then use
      ``num_gpus=1`` each inside their node's bundle.

    ``label_selector`` (one selector per bundle, or ``None``) keeps the bundles off the head
    node when the plan was made with ``ignore_head=True``.
    ``await allocate(**spec.allocate_kwargs())`` allocates it.
    """

    bundles: list[dict[str, float]]
    strategy: Literal["STRICT_PACK", "STRICT_SPREAD"]
    nnodes: int
    label_selector: list[dict[str, str]] | None = None

    @property
    def gpus_per_node(self) -> float:
        """GPUs the replica uses on each of its nodes."""
        return sum(b.get("GPU", 0.0) for b in self.bundles) / self.nnodes

    def allocate_kwargs(self) -> dict[str, Any]:
        """``bundles``, ``strategy`` and ``label_selector`` as keyword arguments of allocate."""
        return {
            "bundles": [dict(b) for b in self.bundles],
            "strategy": self.strategy,
            "label_selector": None
            if self.label_selector is None
            else [dict(s) for s in self.label_selector],
        }


def plan_replica(
    tp_size: int,
    nodes: Sequence[NodeInfo],
    *,
    ignore_head: bool = False,
    worker_label: Mapping[str, str] = WORKER_LABEL,
    cpus_per_gpu: float = 0.0,
) -> ReplicaSpec:
    """Plan the placement of one replica of ``tp_size`` tied GPUs (pure logic, no Ray calls).

    One node when a node has ``tp_size`` GPUs (``STRICT_PACK``). Otherwise the smallest even
    split: the smallest ``nnodes`` with ``tp_size % nnodes == 0`` and at least ``nnodes`` nodes
    that each have ``tp_size / nnodes`` GPUs (``STRICT_SPREAD``). An uneven split (1 + 3 GPUs
    for ``tp_size=4``) is never planned: tensor-parallel shards must be equal.
    :class:`~asyncpool.errors.ResourceInsufficientError` when no plan exists.

    ``ignore_head=True`` leaves head nodes out of ``nodes`` and gives every bundle the label
    selector ``worker_label`` (see the module docstring for the label your worker nodes must
    carry). ``cpus_per_gpu`` adds that many CPUs per GPU to the bundles.
    """
    if isinstance(tp_size, bool) or not isinstance(tp_size, int):
        raise TypeError(f"tp_size must be an int, not {type(tp_size).__name__}")
    if tp_size < 1:
        raise ValueError(f"tp_size must be >= 1, got {tp_size}")
    if isinstance(nodes, str | bytes) or not isinstance(nodes, Sequence):
        raise TypeError("nodes must be a sequence of NodeInfo")
    for n in nodes:
        if not isinstance(n, NodeInfo):
            raise TypeError(f"nodes must hold NodeInfo, got {type(n).__name__}")
    if isinstance(cpus_per_gpu, bool) or not isinstance(cpus_per_gpu, int | float):
        raise TypeError("cpus_per_gpu must be a number")
    if not (math.isfinite(cpus_per_gpu) and cpus_per_gpu >= 0):
        raise ValueError(f"cpus_per_gpu must be a finite number >= 0, got {cpus_per_gpu}")
    selector = _check_label_mapping(worker_label, "worker_label") if ignore_head else None

    usable = [n for n in nodes if not (ignore_head and n.is_head)]
    gpus = [math.floor(n.num_gpus + 1e-9) for n in usable]

    def bundle(n_gpus: int) -> dict[str, float]:
        b = {"GPU": float(n_gpus)}
        if cpus_per_gpu:
            b["CPU"] = float(cpus_per_gpu * n_gpus)
        return b

    def spec(bundles: list[dict[str, float]], strategy: Any, nnodes: int) -> ReplicaSpec:
        selectors = None if selector is None else [dict(selector) for _ in bundles]
        return ReplicaSpec(bundles, strategy, nnodes, selectors)

    if any(g >= tp_size for g in gpus):
        return spec([bundle(1) for _ in range(tp_size)], "STRICT_PACK", 1)
    for nnodes in range(2, tp_size + 1):
        if tp_size % nnodes:
            continue
        share = tp_size // nnodes
        if sum(1 for g in gpus if g >= share) >= nnodes:
            return spec([bundle(share) for _ in range(nnodes)], "STRICT_SPREAD", nnodes)
    where = "worker nodes" if ignore_head else "nodes"
    raise ResourceInsufficientError(
        f"no even placement of a tensor-parallel replica of GPU={tp_size}: requested GPU={tp_size} "
        f"on one node or split evenly over nodes (tp_size % nnodes == 0); available GPUs per "
        f"{where}: {sorted(gpus, reverse=True) or '[] (no nodes)'} (GPU={sum(gpus)} in all)"
    )


# --------------------------------------------------------------------------------------------
# Request validation and feasibility
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Request:
    bundles: list[dict[str, float]]
    strategy: str
    selectors: list[dict[str, str]] | None


def _check_label_mapping(value: object, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a mapping of str to str, not {type(value).__name__}")
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"{what} must map str to str, got {k!r}: {v!r}")
        out[k] = v
    return out


def _validate_bundles(bundles: object) -> list[dict[str, float]]:
    if isinstance(bundles, str | bytes | Mapping) or not isinstance(bundles, Sequence):
        raise TypeError(
            f"bundles must be a list of resource dicts, not {type(bundles).__name__} "
            '(for example [{"GPU": 1, "CPU": 1}])'
        )
    if not bundles:
        raise ValueError("bundles must not be empty")
    out: list[dict[str, float]] = []
    for i, b in enumerate(bundles):
        if not isinstance(b, Mapping):
            raise TypeError(
                f"bundle {i} must be a dict of resource amounts, not {type(b).__name__}"
            )
        clean: dict[str, float] = {}
        for k, v in b.items():
            if not isinstance(k, str) or not k:
                raise TypeError(f"bundle {i}: resource names must be non-empty str, got {k!r}")
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise TypeError(f"bundle {i}: amount of {k!r} must be a number, got {v!r}")
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"bundle {i}: amount of {k!r} must be finite and >= 0, got {v}")
            clean[k] = float(v)
        if not any(clean.values()):
            raise ValueError(f"bundle {i} asks for no resources: {dict(b)!r}")
        out.append(clean)
    return out


def _validate_request(
    bundles: object,
    strategy: object,
    name: object,
    lifetime: object,
    timeout: object,
    backoff: object,
    label_selector: object,
) -> _Request:
    clean = _validate_bundles(bundles)
    if not isinstance(strategy, str):
        raise TypeError(f"strategy must be a str, not {type(strategy).__name__}")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    if lifetime not in (None, "detached"):
        raise ValueError(f"lifetime must be None or 'detached', got {lifetime!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if math.isnan(timeout) or timeout <= 0:
        raise ValueError(f"timeout must be > 0, got {timeout}")
    if not isinstance(backoff, Backoff):
        raise TypeError(f"backoff must be a Backoff, not {type(backoff).__name__}")
    selectors: list[dict[str, str]] | None = None
    if label_selector is not None:
        if isinstance(label_selector, Mapping):
            one = _check_label_mapping(label_selector, "label_selector")
            selectors = [dict(one) for _ in clean]
        elif isinstance(label_selector, Sequence) and not isinstance(label_selector, str | bytes):
            selectors = [
                _check_label_mapping(s, f"label_selector[{i}]")
                for i, s in enumerate(label_selector)
            ]
            if len(selectors) != len(clean):
                raise ValueError(
                    f"label_selector has {len(selectors)} entries for {len(clean)} bundles; "
                    "give one per bundle, or one mapping for all"
                )
        else:
            raise TypeError(
                "label_selector must be a mapping (for every bundle) or a list of mappings "
                f"(one per bundle), not {type(label_selector).__name__}"
            )
        if not any(selectors):
            selectors = None
    return _Request(clean, strategy, selectors)


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


def _eligible(node: _Node, selector: Mapping[str, str] | None) -> bool:
    return not selector or all(_label_matches(node.labels, k, v) for k, v in selector.items())


def _units(x: float) -> int:
    return round(x * _UNIT)


def _fmt_amount(x: float) -> str:
    if abs(x) >= 1e6:
        return f"{x:.4g}"
    return f"{x:g}" if x != int(x) else str(int(x))


def _sort_keys(keys: set[str]) -> list[str]:
    first = [k for k in ("GPU", "CPU") if k in keys]
    return first + sorted(keys - set(first))


def _fmt(resources: Mapping[str, float], keys: Sequence[str] | None = None) -> str:
    keys = list(keys) if keys is not None else _sort_keys(set(resources))
    return ", ".join(f"{k}={_fmt_amount(resources.get(k, 0.0))}" for k in keys) or "nothing"


def _fmt_nodes(nodes: Sequence[_Node], keys: Sequence[str]) -> str:
    """Node shapes, identical shapes grouped: ``2 x {GPU=4, CPU=2}, 1 x {GPU=0, CPU=2}``."""
    if not nodes:
        return "no alive nodes"
    counts: dict[str, int] = {}
    for n in nodes:
        shape = "{" + _fmt(n.resources, keys) + "}"
        counts[shape] = counts.get(shape, 0) + 1
    return ", ".join(f"{c} x {s}" for s, c in counts.items())


def _total(bundles: Sequence[Mapping[str, float]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for b in bundles:
        for k, v in b.items():
            if v:
                out[k] = out.get(k, 0.0) + v
    return out


def _fits(need: Mapping[str, float], have: Mapping[str, float]) -> bool:
    return all(_units(v) <= _units(have.get(k, 0.0)) for k, v in need.items() if v)


def _check_feasible(
    req: _Request, nodes: Sequence[_Node], what: str = "request", intro: str = ""
) -> None:
    """Raise ResourceInsufficientError when no layout of ``nodes`` could ever hold ``req``.

    ``intro`` replaces the description of the request at the start of the message. The
    message is built only on failure: the feasible path is the hot one.
    """
    bundles = req.bundles
    total = _total(bundles)
    keys = _sort_keys(set(total))
    selectors: list[dict[str, str] | None] = (
        list(req.selectors) if req.selectors else [None] * len(bundles)
    )
    eligible = [[j for j, n in enumerate(nodes) if _eligible(n, s)] for s in selectors]

    def impossible(detail: str) -> ResourceInsufficientError:
        head = intro or (
            f"{what} of {len(bundles)} bundle(s), {req.strategy}, {_fmt(total)} in all"
        )
        return ResourceInsufficientError(
            f"{head}: {detail} (alive nodes: {_fmt_nodes(nodes, keys)})"
        )

    for i, nodes_i in enumerate(eligible):
        if not nodes_i:
            raise impossible(
                f"no alive node matches the label selector {selectors[i]} of bundle {i}"
            )

    # 1. More of a resource than the (eligible part of the) cluster has in all.
    pool = sorted({j for nodes_i in eligible for j in nodes_i})
    have = _total([nodes[j].resources for j in pool])
    for k in keys:
        if _units(total[k]) > _units(have.get(k, 0.0)):
            raise impossible(
                f"requested {k}={_fmt_amount(total[k])} in all, but the cluster has "
                f"{k}={_fmt_amount(have.get(k, 0.0))} in all"
            )

    # 2. A single bundle bigger than every node it may go to.
    for i, b in enumerate(bundles):
        if not any(_fits(b, nodes[j].resources) for j in eligible[i]):
            largest = {
                k: max((nodes[j].resources.get(k, 0.0) for j in eligible[i]), default=0.0)
                for k in b
            }
            raise impossible(
                f"bundle {i} requests {_fmt(b)}, more than any node has (largest per "
                f"resource: {_fmt(largest)})"
            )

    if req.strategy == "STRICT_PACK":
        # 3. All bundles on one node.
        common = set(range(len(nodes)))
        for nodes_i in eligible:
            common &= set(nodes_i)
        if not any(_fits(total, nodes[j].resources) for j in common):
            largest = {
                k: max((nodes[j].resources.get(k, 0.0) for j in common), default=0.0) for k in keys
            }
            raise impossible(
                f"STRICT_PACK needs {_fmt(total)} on one node, but the largest node "
                f"has {_fmt(largest, keys)}"
            )
        return

    distinct = req.strategy == "STRICT_SPREAD"
    if distinct and len(bundles) > len(pool):
        # 4. More bundles than nodes.
        raise impossible(
            f"STRICT_SPREAD needs {len(bundles)} distinct nodes, but only "
            f"{len(pool)} alive node(s) can take its bundles"
        )
    fit_on = [
        [j for j in eligible[i] if _fits(b, nodes[j].resources)] for i, b in enumerate(bundles)
    ]
    if distinct:
        matched = _max_matching(fit_on, len(nodes))
        if matched < len(bundles):
            raise impossible(
                f"STRICT_SPREAD needs {len(bundles)} distinct nodes that each hold "
                f"one bundle, but at most {matched} such nodes exist"
            )
        return
    # 5. PACK / SPREAD: an exact (budgeted) search for an assignment of bundles to nodes.
    if _placeable(bundles, fit_on, nodes, distinct=False) is False:
        raise impossible("the bundles cannot be packed onto the nodes' total resources in any way")


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
    nodes: Sequence[_Node],
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
    keys = sorted(_total(bundles))
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


# --------------------------------------------------------------------------------------------
# allocate
# --------------------------------------------------------------------------------------------


def _remove_quietly(pg: PlacementGroup) -> None:
    """Remove ``pg``; a quick, non-blocking GCS request. Never raises (we are cleaning up)."""
    try:
        remove_placement_group(pg)
    except Exception:  # pragma: no cover - e.g. Ray already shut down
        log.warning("could not remove placement group %s", pg.id.hex(), exc_info=True)


def _submit(req: _Request, name: str, lifetime: str | None) -> PlacementGroup:
    selectors = None if req.selectors is None else [dict(s) for s in req.selectors]
    try:
        pg: PlacementGroup = placement_group(
            [dict(b) for b in req.bundles],
            strategy=req.strategy,
            name=name,
            lifetime=lifetime,
            bundle_label_selector=selectors,
        )
        return pg
    except Exception as exc:
        if name and "already exists" in str(exc):
            raise ValueError(
                f"a placement group named {name!r} already exists in this namespace; "
                "pick another name, or remove that group (asyncpool.placement.reap)"
            ) from exc
        raise


def _available() -> dict[str, float]:
    resources: Mapping[str, float] = cast(Any, ray).available_resources()
    return {str(k): float(v) for k, v in resources.items()}


async def allocate(
    bundles: Sequence[Mapping[str, float]],
    *,
    strategy: str = "PACK",
    name: str = "",
    lifetime: Literal["detached"] | None = None,
    timeout: float = 180.0,
    backoff: Backoff = Backoff(),
    label_selector: Mapping[str, str] | Sequence[Mapping[str, str]] | None = None,
    precheck: bool = True,
) -> PlacementGroup:
    """Create a placement group and wait until it is ready; see the module docstring.

    ``bundles``, ``strategy``, ``name`` and ``lifetime`` (``None`` or ``"detached"``) are passed
    to ``ray.util.placement_group``; ``label_selector`` is its ``bundle_label_selector`` -- one
    mapping for every bundle, or a list with one mapping per bundle.

    Raises, before anything is submitted: ``TypeError``/``ValueError`` for bad arguments (a
    ``name`` already taken in this namespace is a ``ValueError`` too), ``RuntimeError`` when
    Ray is not connected. :class:`~asyncpool.errors.ResourceInsufficientError` at once (within
    a GCS round trip) when no layout of the alive nodes could ever hold the request (see the
    module docstring). Then waits on the :class:`Backoff` schedule (``backoff`` sets the
    windows, ``timeout`` the overall deadline in seconds) and raises
    :class:`~asyncpool.errors.PlacementTimeoutError` when the deadline passes, or
    ``ResourceInsufficientError`` when, at a retry, nodes have gone and the request has become
    impossible.

    ``precheck=False`` skips the feasibility checks -- for an autoscaling cluster whose nodes
    are not up yet, where only the timeout should end the wait.

    Cancellation: safe at any point. The pending group is removed before the cancellation
    propagates, so ``anyio.fail_after`` / ``move_on_after`` around ``allocate`` behaves like its
    ``timeout``. Only a returned group exists afterwards; its caller owns it.
    """
    req = _validate_request(bundles, strategy, name, lifetime, timeout, backoff, label_selector)
    _require_ray()
    label = f"placement group {name!r}" if name else "placement group"
    what = f"{label} request"
    started = anyio.current_time()
    deadline = started + float(timeout)

    # Checked now (recent node snapshot), or during the first attempt (no snapshot).
    check_during_first = precheck and not await _first_check(req, what)

    attempt = 0
    for window in backoff.delays():
        remaining = deadline - anyio.current_time()
        if remaining <= 0:
            break
        attempt += 1
        pg = _submit(req, name, lifetime)
        ready = False
        try:
            with anyio.move_on_after(min(window, remaining)):
                await _await_ready_checking(pg, req if check_during_first else None, what)
                ready = True
            check_during_first = False
        finally:
            if not ready:
                _remove_quietly(pg)
        if ready:
            if attempt > 1:
                log.info(
                    "%s ready after %.1fs (%d attempts)",
                    label,
                    anyio.current_time() - started,
                    attempt,
                )
            return pg
        log.info(
            "%s (%s, %s) not ready after %.1fs, attempt %d; retrying",
            label,
            req.strategy,
            _fmt(_total(req.bundles)),
            anyio.current_time() - started,
            attempt,
        )
        if precheck:
            await _fresh_check(req, what)

    nodes = await _alive_nodes_async()
    total = _total(req.bundles)
    keys = _sort_keys(set(total))
    available = await anyio.to_thread.run_sync(_available)
    cluster = _total([n.resources for n in nodes])
    raise PlacementTimeoutError(
        f"{label} of {len(req.bundles)} bundle(s), {req.strategy}, was not placed within "
        f"{_fmt_amount(float(timeout))}s ({attempt} attempt(s)): requested {_fmt(total)}; "
        f"available now {_fmt(available, keys)} of {_fmt(cluster, keys)} in all "
        f"(alive nodes: {_fmt_nodes(nodes, keys)}). The cluster is busy: free resources or "
        "raise the timeout."
    )


# --------------------------------------------------------------------------------------------
# reap, bundle_node_ip, free_port
# --------------------------------------------------------------------------------------------


def _reap(prefix: str) -> int:
    table = placement_group_table()
    names = sorted(
        {
            str(info.get("name") or "")
            for info in table.values()
            if info.get("state") != "REMOVED" and str(info.get("name") or "").startswith(prefix)
        }
    )
    removed = 0
    for group_name in names:
        # The lookup by name is scoped to this driver's namespace: groups of the same name
        # in other namespaces are not found, and so are left alone.
        try:
            pg = get_placement_group(group_name)
        except ValueError:
            continue
        remove_placement_group(pg)
        removed += 1
    if removed:
        log.info("reaped %d placement group(s) named %r*", removed, prefix)
    return removed


async def reap(prefix: str) -> int:
    """Remove every live placement group of this namespace whose name starts with ``prefix``.

    For orphans of an earlier driver -- detached groups, or groups of a driver that is still
    shutting down. Returns how many groups were removed. Unnamed groups cannot be matched, and
    groups of other namespaces are left alone; a driver that wants to reap the orphans of an
    earlier one must use the same (named) namespace: ``asyncpool.runtime.init(namespace=...)``.
    ``prefix`` must be non-empty, so that a typo cannot remove every named group.

    Cancellation: the lookups and removals run in a worker thread and are quick; a cancelled
    ``reap`` lets them finish, then the cancellation takes effect.
    """
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a str, not {type(prefix).__name__}")
    if not prefix:
        raise ValueError("prefix must not be empty")
    _require_ray()
    return await anyio.to_thread.run_sync(_reap, prefix)


def _check_bundle_index(pg: object, index: object) -> PlacementGroup:
    if not isinstance(pg, PlacementGroup):
        raise TypeError(f"pg must be a PlacementGroup, not {type(pg).__name__}")
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"bundle index must be an int, not {type(index).__name__}")
    if index < 0:
        raise ValueError(f"bundle index must be >= 0, got {index}")
    return pg


def _bundle_ip(pg: PlacementGroup, index: int) -> str:
    info = placement_group_table(pg)
    if not info or info.get("state") == "REMOVED":
        raise ValueError(f"placement group {pg.id.hex()} does not exist or was removed")
    where: Mapping[int, str] = info.get("bundles_to_node_id") or {}
    if index >= len(info.get("bundles") or {}):
        raise ValueError(
            f"bundle index {index} out of range: the group has {len(info['bundles'])} bundles"
        )
    node_id = where.get(index)
    for n in _ray_nodes():
        if n.get("NodeID") == node_id:
            return str(n["NodeManagerAddress"])
    raise ValueError(f"bundle {index} of placement group {pg.id.hex()} is on no alive node")


async def bundle_node_ip(pg: PlacementGroup, i: int) -> str:
    """The IP address of the node that holds bundle ``i`` of ``pg``.

    Waits until ``pg`` is ready first (natively awaited; a pending group is waited for
    without limit -- wrap the call in ``anyio.fail_after`` to bound it). ``ValueError`` when
    ``i`` is out of range or the group was removed.

    Cancellation: safe; nothing is created.
    """
    _check_bundle_index(pg, i)
    _require_ray()
    await _await_ready(pg)
    return await anyio.to_thread.run_sync(_bundle_ip, pg, i)


async def _await_ready(pg: PlacementGroup) -> None:
    """Await ``pg.ready()``; a removed group is a ``ValueError`` (it would never be ready)."""
    from ray.exceptions import TaskPlacementGroupRemoved

    try:
        await pg.ready()
    except TaskPlacementGroupRemoved as exc:
        raise ValueError(f"placement group {pg.id.hex()} was removed") from exc


_port_task: Any = None


def _port_remote() -> Any:
    """The port-finding remote function, made once (lazily: importing needs no Ray)."""
    global _port_task
    if _port_task is None:

        def find_free_port() -> int:
            # Nested, so that it is shipped by value: the node needs no asyncpool installed.
            import socket

            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("", 0))
                return int(s.getsockname()[1])

        _port_task = ray.remote(num_cpus=0, max_retries=3)(find_free_port)
    return _port_task


async def free_port(pg: PlacementGroup, i: int) -> int:
    """A TCP port that is free on the node holding bundle ``i`` of ``pg`` (e.g. MASTER_PORT).

    Found by a tiny zero-CPU task scheduled into that bundle, so it needs no free CPU. Like
    every "find a free port" it is free when found; bind it soon. Each call finds a port anew.

    Cancellation: the task is cancelled with the caller.
    """
    from ray.exceptions import TaskPlacementGroupRemoved
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    _check_bundle_index(pg, i)
    _require_ray()
    count = await anyio.to_thread.run_sync(lambda: pg.bundle_count)
    if i >= count:
        raise ValueError(f"bundle index {i} out of range: the group has {count} bundles")
    ref = (
        _port_remote()
        .options(
            scheduling_strategy=PlacementGroupSchedulingStrategy(
                placement_group=pg, placement_group_bundle_index=i
            )
        )
        .remote()
    )
    try:
        return int(await ref)
    except TaskPlacementGroupRemoved as exc:
        raise ValueError(f"placement group {pg.id.hex()} was removed") from exc
    except BaseException:
        with contextlib.suppress(Exception):
            ray.cancel(ref)
        raise
