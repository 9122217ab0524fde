"""Placement groups that never hang forever, never leak, and say why they could not be had.

Owns the public placement API (:class:`Backoff`, :func:`allocate`, :func:`topology`,
:func:`plan_replica`, :func:`reap`, :func:`bundle_node_ip`, :func:`free_port`). The feasibility
solver lives in ``_feasibility`` and every blocking GCS call in ``_gcs``; this module must not
block the event loop itself, nor keep a placement group it did not hand to its caller.

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

Worker-node label: see :func:`plan_replica` (``ignore_head=True`` and :data:`WORKER_LABEL`).

Every blocking Ray call (``ray.nodes()``, placement-group creation, removal and table reads,
``ray.available_resources()``) runs in a worker thread (``anyio.to_thread.run_sync``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import anyio
import anyio.to_thread
import ray
from ray.util.placement_group import (
    PlacementGroup,
    get_placement_group,
    placement_group_table,
    remove_placement_group,
)

from . import _cancel, _gcs, _validate
from ._feasibility import Request, check_feasible, fmt, fmt_amount, fmt_nodes, sort_keys, total
from ._replicas import WORKER_LABEL, NodeInfo, ReplicaSpec, plan_replica, topology
from .errors import PlacementTimeoutError, ResourceInsufficientError

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

#: Without a recent node snapshot, how long the first attempt may be pending before it is checked.
_COLD_CHECK_GRACE: Final = 0.05


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
        initial = _validate.positive_number(self.initial, "Backoff.initial")
        if _validate.positive_number(self.factor, "Backoff.factor") < 1:
            raise ValueError(f"Backoff.factor must be a finite number >= 1, got {self.factor!r}")
        if _validate.positive_number(self.maximum, "Backoff.maximum") < initial:
            raise ValueError(
                f"Backoff.maximum must be a finite number >= Backoff.initial ({initial}), "
                f"got {self.maximum!r}"
            )
        if _validate.non_negative_number(self.jitter, "Backoff.jitter") >= 1:
            raise ValueError(f"Backoff.jitter must be a number in [0, 1), got {self.jitter!r}")
        _validate.positive_int(self.attempts, "Backoff.attempts")

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
# allocate
# --------------------------------------------------------------------------------------------


async def _fresh_check(req: Request, what: str, *, abandon_on_cancel: bool = False) -> None:
    """Check ``req`` against the nodes alive now (one GCS read in a worker thread)."""
    check_feasible(req, await _gcs.alive_nodes_async(abandon_on_cancel=abandon_on_cancel), what)


async def _first_check(req: Request, what: str) -> bool:
    """The check before the first submission of :func:`allocate`.

    ``True``: done, the request is feasible. ``False``: there is no recent node snapshot; the
    caller checks against fresh nodes while its first attempt is pending
    (:func:`_await_ready_checking`), so that a cold check costs no latency.

    A snapshot younger than ``_gcs.NODES_TTL`` seconds may show the request feasible without a GCS
    round trip (a stale "feasible" only costs a wait: every retry re-checks against fresh
    nodes). An "impossible" verdict is always confirmed against fresh nodes before it is
    raised -- and before anything is submitted -- so a node that just joined is never missed.
    """
    nodes = _gcs.recent_nodes()
    if nodes is None:
        return False
    try:
        check_feasible(req, nodes, what)
    except ResourceInsufficientError:
        await _fresh_check(req, what)
    return True


async def _await_ready_checking(pg: PlacementGroup, check: Request | None, what: str) -> None:
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


def _validate_bundles(bundles: object) -> list[dict[str, float]]:
    if isinstance(bundles, str | bytes | Mapping) or not isinstance(bundles, Sequence):
        raise TypeError(
            "bundles must be a list of resource dicts (for example [{'GPU': 1, 'CPU': 1}]), "
            f"got {type(bundles).__name__}"
        )
    if not bundles:
        raise ValueError("bundles must be a non-empty list of resource dicts, got []")
    out: list[dict[str, float]] = []
    for i, b in enumerate(bundles):
        if not isinstance(b, Mapping):
            raise TypeError(f"bundles[{i}] must be a dict of resource amounts, got {b!r}")
        clean: dict[str, float] = {}
        for k, v in b.items():
            if not isinstance(k, str) or not k:
                raise TypeError(f"bundles[{i}] keys must be non-empty resource names, got {k!r}")
            clean[k] = _validate.non_negative_number(v, f"bundles[{i}][{k!r}]")
        if not any(clean.values()):
            raise ValueError(f"bundles[{i}] must ask for some resource, got {dict(b)!r}")
        out.append(clean)
    return out


def _validate_selectors(label_selector: object, n: int) -> list[dict[str, str]] | None:
    if label_selector is None:
        return None
    if isinstance(label_selector, Mapping):
        one = _validate.str_mapping(label_selector, "label_selector")
        selectors = [dict(one) for _ in range(n)]
    elif isinstance(label_selector, Sequence) and not isinstance(label_selector, str | bytes):
        selectors = [
            _validate.str_mapping(s, f"label_selector[{i}]") for i, s in enumerate(label_selector)
        ]
        if len(selectors) != n:
            raise ValueError(
                f"label_selector must be one mapping, or a list of one per bundle ({n}), "
                f"got {len(selectors)} entries"
            )
    else:
        raise TypeError(
            "label_selector must be a mapping (for every bundle) or a list of mappings "
            f"(one per bundle), got {type(label_selector).__name__}"
        )
    return selectors if any(selectors) else None


def _validate_request(
    bundles: object, strategy: object, lifetime: object, label_selector: object
) -> Request:
    clean = _validate_bundles(bundles)
    _validate.one_of(strategy, "strategy", STRATEGIES)
    _validate.one_of(lifetime, "lifetime", (None, "detached"))
    return Request(clean, str(strategy), _validate_selectors(label_selector, len(clean)))


# --------------------------------------------------------------------------------------------
# allocate
# --------------------------------------------------------------------------------------------


async def allocate(
    bundles: Sequence[Mapping[str, float]],
    *,
    strategy: str = "PACK",
    name: str = "",
    lifetime: Literal["detached"] | None = None,
    timeout: float | None = 180.0,
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
    windows, ``timeout`` the overall deadline in seconds, ``None`` for none) and raises
    :class:`~asyncpool.errors.PlacementTimeoutError` when the deadline passes, or
    ``ResourceInsufficientError`` when, at a retry, nodes have gone and the request has become
    impossible.

    ``precheck=False`` skips the feasibility checks -- for an autoscaling cluster whose nodes
    are not up yet, where only the timeout should end the wait.

    Cancellation: safe at any point. The pending group is removed before the cancellation
    propagates, so ``anyio.fail_after`` / ``move_on_after`` around ``allocate`` behaves like its
    ``timeout``. Only a returned group exists afterwards; its caller owns it.
    """
    req = _validate_request(bundles, strategy, lifetime, label_selector)
    seconds = _validate.timeout(timeout)
    _validate.instance(name, "name", str)
    _validate.instance(backoff, "backoff", Backoff)
    _validate.boolean(precheck, "precheck")
    _gcs.require_ray()
    label = f"placement group {name!r}" if name else "placement group"
    what = f"{label} request"
    started = anyio.current_time()
    deadline = started + (seconds if seconds is not None else float("inf"))

    # Checked now (recent node snapshot), or during the first attempt (no snapshot).
    check_during_first = precheck and not await _first_check(req, what)

    attempt = 0
    for window in backoff.delays():
        remaining = deadline - anyio.current_time()
        if remaining <= 0:
            break
        attempt += 1
        check = req if check_during_first else None
        pg = await _attempt(req, name, lifetime, min(window, remaining), check, what)
        check_during_first = False
        elapsed = anyio.current_time() - started
        if pg is not None:
            if attempt > 1:
                log.info("%s ready after %.1fs (%d attempts)", label, elapsed, attempt)
            return pg
        log.info(
            "%s (%s, %s) not ready after %.1fs, attempt %d; retrying",
            label,
            req.strategy,
            fmt(total(req.bundles)),
            elapsed,
            attempt,
        )
        if precheck:
            await _fresh_check(req, what)
    raise await _timeout_error(label, req, float(timeout or 0), attempt)


async def _attempt(
    req: Request,
    name: str,
    lifetime: str | None,
    seconds: float,
    check: Request | None,
    what: str,
) -> PlacementGroup | None:
    """One submission: the group when it is ready within ``seconds``, else ``None``.

    Cancellation: the group is removed (shielded) before anything leaves, as on a timeout.
    """
    pg = await _gcs.create_group(req, name, lifetime)
    ready = False
    try:
        with anyio.move_on_after(seconds):
            await _await_ready_checking(pg, check, what)
            ready = True
    finally:
        if not ready:
            await _gcs.remove_groups([pg])
    return pg if ready else None


async def _timeout_error(
    label: str, req: Request, timeout: float, attempts: int
) -> PlacementTimeoutError:
    """The error of a request still busy at its deadline, with the figures (read off-loop)."""
    nodes = await _gcs.alive_nodes_async()
    need = total(req.bundles)
    keys = sort_keys(set(need))
    available = await _gcs.available_resources()
    cluster = total([n.resources for n in nodes])
    return PlacementTimeoutError(
        f"{label} of {len(req.bundles)} bundle(s), {req.strategy}, was not placed within "
        f"{fmt_amount(timeout)}s ({attempts} attempt(s)): requested {fmt(need)}; "
        f"available now {fmt(available, keys)} of {fmt(cluster, keys)} in all "
        f"(alive nodes: {fmt_nodes(nodes, keys)}). The cluster is busy: free resources or "
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
        raise TypeError(f"prefix must be a non-empty str, got {prefix!r} ({type(prefix).__name__})")
    if not prefix:
        raise ValueError("prefix must be a non-empty str, got ''")
    _gcs.require_ray()
    return await anyio.to_thread.run_sync(_reap, prefix)


def _check_bundle_index(pg: object, index: object) -> PlacementGroup:
    if not isinstance(pg, PlacementGroup):
        raise TypeError(f"pg must be a PlacementGroup, got {type(pg).__name__}")
    _validate.non_negative_int(index, "bundle index")
    return pg


async def bundle_node_ip(pg: PlacementGroup, i: int) -> str:
    """The IP address of the node that holds bundle ``i`` of ``pg``.

    Waits until ``pg`` is ready first (natively awaited; a pending group is waited for
    without limit -- wrap the call in ``anyio.fail_after`` to bound it). ``ValueError`` when
    ``i`` is out of range or the group was removed.

    Cancellation: safe; nothing is created.
    """
    _check_bundle_index(pg, i)
    _gcs.require_ray()
    await _await_ready(pg)
    return await anyio.to_thread.run_sync(_gcs.bundle_ip, pg, i)


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
    _gcs.require_ray()
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
        _cancel.request([ref], force=False)
        raise
