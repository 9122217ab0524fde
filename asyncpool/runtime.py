"""Connect to, or start, the Ray cluster asyncpool runs on; run coroutines on uvloop.

Resolution order of :func:`init` (first that applies wins):

1. the explicit ``address`` argument (``"host:port"``, ``"ray://host:port"``, ``"auto"``,
   or ``"local"`` to force a new embedded cluster);
2. the ``ASYNCPOOL_ADDRESS`` environment variable;
3. the ``RAY_ADDRESS`` environment variable;
4. a cluster already running on this machine whose resources carry this runtime's tag
   (a custom resource ``asyncpool_tag_<tag>``) or the Slurm-managed tag;
5. otherwise a new embedded local cluster that carries the tag, so that the next process
   with the same tag reuses it and a process with another tag (say, another set of
   ``CUDA_VISIBLE_DEVICES``) never does.

A local cluster that carries neither tag is never joined implicitly: it belongs to someone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import re
import signal
import socket
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
import ray

__all__ = ["Runtime", "attach", "connect", "current", "init", "run"]

log = logging.getLogger(__name__)

T = TypeVar("T")

TAG_RESOURCE_PREFIX = "asyncpool_tag_"
#: The resource a Slurm-launched cluster carries; any asyncpool runtime may join it.
SLURM_TAG = "slurm_managed"

_lock = threading.Lock()
_runtime: Runtime | None = None


class _RoutineNotices(logging.Filter):
    """Drops Ray's notices that every asyncpool start would print and nobody acts on.

    ``connect`` starts Ray off the event loop's thread, so Ray says it set no SIGTERM handler
    there (asyncpool restores the process's own handlers instead, see
    :func:`_restore_signal_handlers`); joining a local cluster with its token is routine.
    """

    ROUTINE = (
        "SIGTERM handler is not set because current thread is not the main thread",
        "Token authentication is enabled for this Ray cluster",
    )

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(message.startswith(text) for text in self.ROUTINE)


for _name in ("ray._private.worker", "ray._private.authentication.authentication_token_setup"):
    logging.getLogger(_name).addFilter(_RoutineNotices())


def _restore_signal_handlers() -> None:
    """Give SIGTERM and SIGINT back to this process's Python handlers after Ray's start.

    Ray's core worker installs a C++ failure-signal handler for SIGTERM that prints a stack
    dump ("SIGTERM received ...") before anything else runs: a server (uvicorn) shutting down
    normally would print it on every stop. Where Python has a handler of its own for a signal
    (uvicorn's graceful exit, asyncio's), it is installed again; default dispositions are left
    to Ray. Only the main thread may set handlers: elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        handler = signal.getsignal(sig)
        if callable(handler) and handler is not signal.default_int_handler:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, handler)


def default_tag() -> str:
    """The tag of this process: derived from its sorted ``CUDA_VISIBLE_DEVICES``.

    Two processes that see the same GPUs share a local cluster; processes pinned to
    different GPUs never do.
    """
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is None or not cvd.strip():
        return "cvd_all" if cvd is None else "cvd_none"
    devices = sorted(d.strip() for d in cvd.split(",") if d.strip())
    return "cvd_" + "_".join(devices)


def tag_resource(tag: str) -> str:
    """The custom resource name that marks a cluster as carrying ``tag``."""
    return TAG_RESOURCE_PREFIX + re.sub(r"[^A-Za-z0-9_.-]", "_", tag)


@dataclass
class Runtime:
    """The Ray connection of this process.

    ``started`` is true when this process started the cluster (an embedded local one);
    :meth:`shutdown` then stops it, and otherwise only disconnects.
    """

    address: str
    started: bool
    tag: str
    namespace: str | None
    source: str
    _closed: bool = field(default=False, repr=False)
    #: How many ``connect`` blocks are inside this runtime now, and whether one of them made it.
    _connect_blocks: int = field(default=0, repr=False)
    _owned_by_connect: bool = field(default=False, repr=False)

    @property
    def connected(self) -> bool:
        return not self._closed and ray.is_initialized()

    def shutdown(self) -> None:
        """Disconnect; stop the cluster only when this process started it. Idempotent."""
        global _runtime
        with _lock:
            if self._closed:
                return
            self._closed = True
            if _runtime is self:
                _runtime = None
        # ray.shutdown() stops the embedded cluster when this driver started it and only
        # disconnects otherwise, which is exactly the contract.
        ray.shutdown()


def current() -> Runtime | None:
    """The runtime of this process, or ``None`` before :func:`init`."""
    return _runtime


def _validate(
    address: str | None, num_cpus: int | None, num_gpus: int | None, tag: str | None
) -> None:
    if address is not None and not isinstance(address, str):
        raise TypeError(f"address must be a str or None, not {type(address).__name__}")
    if isinstance(address, str) and not address.strip():
        raise ValueError("address must not be empty")
    for name, value in (("num_cpus", num_cpus), ("num_gpus", num_gpus)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{name} must be a number or None, not {type(value).__name__}")
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if tag is not None and (not isinstance(tag, str) or not tag):
        raise ValueError("tag must be a non-empty str or None")


def _raylet_command_lines() -> Iterator[list[str]]:
    """Command lines of the raylets running on this machine (Linux ``/proc``; else psutil)."""
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if args and args[0].endswith(b"/raylet"):
                yield [a.decode(errors="replace") for a in args if a]
        return
    try:  # pragma: no cover - non-Linux
        import psutil  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover
        return
    for p in psutil.process_iter(["cmdline"]):  # pragma: no cover
        cmd = p.info.get("cmdline") or []
        if cmd and cmd[0].endswith("raylet"):
            yield list(cmd)


def _local_clusters_with(wanted: set[str]) -> list[str]:
    """GCS addresses of local clusters one of whose raylets carries a ``wanted`` resource.

    Read from the raylets' own command lines, so no connection is made to a cluster that is
    not ours (joining a foreign cluster just to look at it can hang on its authentication).
    """
    found: list[str] = []
    for args in _raylet_command_lines():
        opts = dict(a[2:].split("=", 1) for a in args[1:] if a.startswith("--") and "=" in a)
        address = opts.get("gcs-address") or opts.get("gcs_address")
        names = set((opts.get("static_resource_list") or "").split(",")[::2])
        if address and names & wanted and address not in found:
            found.append(address)
    return sorted(found)


@contextmanager
def _without_ray_address() -> Iterator[None]:
    """Hide ``RAY_ADDRESS`` from ``ray.init``, which would let it override our choice."""
    saved = os.environ.pop("RAY_ADDRESS", None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ["RAY_ADDRESS"] = saved


def _local_auth() -> None:
    """Use the local auth token, as Ray does for a local cluster it finds by itself.

    ``ray.init(address=...)`` only enables token authentication for ``"auto"``; a local
    cluster we found by its tag is the same case.
    """
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # pragma: no cover - Ray without token authentication
        return
    # Its "token authentication is enabled" notice is routine for a local cluster: not logged.
    auth_log = logging.getLogger(maybe_enable_token_auth_if_token_available.__module__)
    level = auth_log.level
    auth_log.setLevel(logging.ERROR)
    try:
        maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    finally:
        auth_log.setLevel(level)


def _try_join_tagged(addresses: list[str], wanted: set[str], init_kwargs: dict[str, Any]) -> str:
    """Connect to the first local cluster carrying one of ``wanted``; '' when none does."""
    if not addresses:
        return ""
    _local_auth()
    for address in addresses:
        try:
            with _without_ray_address():
                ray.init(address=address, **init_kwargs)
        except Exception:
            log.debug("cannot connect to local cluster %s", address, exc_info=True)
            continue
        if wanted & set(ray.cluster_resources()):
            return address
        ray.shutdown()
    return ""


def init(
    address: str | None = None,
    *,
    num_cpus: int | None = None,
    num_gpus: int | None = None,
    namespace: str | None = None,
    tag: str | None = None,
    **ray_init_kwargs: Any,
) -> Runtime:
    """Connect to (or start) the cluster, following the module's resolution order.

    Idempotent: a second call in the same process returns the same :class:`Runtime`
    (its arguments are then ignored, with a debug log). When Ray was already initialised by
    the caller, that connection is adopted (``started=False``).

    A new local cluster starts with Ray's dashboard when Ray's dashboard packages are
    installed (``ray[default]``), on a free port, so that ``ray list tasks --address ...`` and
    ``ray.util.state`` work on it; pass ``include_dashboard=False`` to save its start-up.

    Blocks for the few seconds a cluster start takes; from async code use :func:`connect`.
    """
    _validate(address, num_cpus, num_gpus, tag)
    with _lock:
        rt = _init_locked(address, num_cpus, num_gpus, namespace, tag, ray_init_kwargs)[0]
    _restore_signal_handlers()
    return rt


def attach(
    address: str | None = None,
    *,
    namespace: str | None = None,
    tag: str | None = None,
    **ray_init_kwargs: Any,
) -> Runtime:
    """Connect to an existing cluster, by :func:`init`'s resolution order, never starting one.

    For tools that report on or clean up a cluster (``asyncpool status``, ``asyncpool reap``):
    a cluster they started would be empty and gone when they return. Raises
    ``ConnectionError`` naming what was looked at when no address is given (argument,
    ``ASYNCPOOL_ADDRESS``, ``RAY_ADDRESS``) and no local cluster carries this runtime's tag.
    """
    _validate(address, None, None, tag)
    if address == "local":
        raise ValueError('attach never starts a cluster: address="local" is for init')
    with _lock:
        rt, _ = _init_locked(address, None, None, namespace, tag, ray_init_kwargs, start=False)
        return rt


def _init_locked(
    address: str | None,
    num_cpus: int | None,
    num_gpus: int | None,
    namespace: str | None,
    tag: str | None,
    ray_init_kwargs: dict[str, Any],
    *,
    start: bool = True,
) -> tuple[Runtime, bool]:
    """:func:`init` under ``_lock``; also says whether this call made the runtime."""
    global _runtime
    if _runtime is not None and not _runtime._closed and ray.is_initialized():
        log.debug("asyncpool.init: already connected to %s", _runtime.address)
        return _runtime, False
    the_tag = tag or default_tag()
    kwargs: dict[str, Any] = {"namespace": namespace, **ray_init_kwargs}
    kwargs.setdefault("log_to_driver", True)
    if ray.is_initialized():
        ctx = ray.get_runtime_context()
        _runtime = Runtime(
            address=ray.get_runtime_context().gcs_address,
            started=False,
            tag=the_tag,
            namespace=ctx.namespace,
            source="adopted",
        )
        return _runtime, False  # the caller's own connection: never ours to close

    chosen, source = address, "argument"
    if chosen is None and os.environ.get("ASYNCPOOL_ADDRESS"):
        chosen, source = os.environ["ASYNCPOOL_ADDRESS"], "ASYNCPOOL_ADDRESS"
    if chosen is None and os.environ.get("RAY_ADDRESS"):
        chosen, source = os.environ["RAY_ADDRESS"], "RAY_ADDRESS"

    if chosen is not None and chosen != "local":
        if num_cpus is not None or num_gpus is not None:
            log.warning("num_cpus/num_gpus are ignored when joining an existing cluster")
        with _without_ray_address():
            ctx_info = ray.init(address=chosen, **kwargs)
        _runtime = Runtime(
            address=_address_of(ctx_info, chosen),
            started=False,
            tag=the_tag,
            namespace=namespace,
            source=source,
        )
        return _runtime, True

    if chosen is None:
        wanted = {tag_resource(the_tag), tag_resource(SLURM_TAG)}
        joined = _try_join_tagged(_local_clusters_with(wanted), wanted, kwargs)
        if joined:
            _runtime = Runtime(joined, False, the_tag, namespace, "tagged local cluster")
            return _runtime, True
    if not start:
        raise ConnectionError(
            "no Ray cluster to attach to: no address given, ASYNCPOOL_ADDRESS and RAY_ADDRESS "
            f"are unset, and no local cluster carries the tag {the_tag!r} (pass --address "
            "HOST:PORT, or set ASYNCPOOL_ADDRESS)"
        )

    resources = dict(kwargs.pop("resources", None) or {})
    resources[tag_resource(the_tag)] = 1.0
    # None: Ray starts its dashboard when its packages are installed (ray[default]); it
    # serves the state API (`ray list tasks`, ray.util.state) that users check leaks with.
    kwargs.setdefault("include_dashboard", None)
    if kwargs["include_dashboard"] is not False:
        kwargs.setdefault("dashboard_port", _free_local_port())  # 8265 may be taken
    with _without_ray_address():
        ctx_info = ray.init(
            address="local",
            num_cpus=num_cpus,
            num_gpus=num_gpus,
            resources=resources,
            **kwargs,
        )
    _runtime = Runtime(
        address=_address_of(ctx_info, "local"),
        started=True,
        tag=the_tag,
        namespace=namespace,
        source="new local cluster",
    )
    return _runtime, True


def _free_local_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _address_of(ctx_info: Any, fallback: str) -> str:
    try:
        return str(ctx_info.address_info["gcs_address"])
    except (AttributeError, KeyError, TypeError):
        try:
            return str(ray.get_runtime_context().gcs_address)
        except Exception:
            return fallback


@asynccontextmanager
async def connect(
    address: str | None = None,
    *,
    num_cpus: int | None = None,
    num_gpus: int | None = None,
    namespace: str | None = None,
    tag: str | None = None,
    **ray_init_kwargs: Any,
) -> AsyncIterator[Runtime]:
    """``async with connect(...) as rt``: :func:`init` run off the event loop.

    The runtime is shut down when the last ``connect`` block that shares it exits, and only
    when a ``connect`` block created it: blocks entered concurrently (several tasks, or
    nested) share one runtime, and the first to leave never disconnects the others. A runtime
    made by :func:`init` (or a ``ray.init`` of the caller's) is left connected.

    Cancellation: a cancelled ``connect`` leaves the worker thread to finish connecting (a Ray
    start cannot be interrupted halfway) and the connection stays usable by a later ``init``.
    """
    _validate(address, num_cpus, num_gpus, tag)
    kwargs = dict(ray_init_kwargs)

    def _enter() -> Runtime:
        # Made and counted under one lock hold: whether this block owns the runtime is decided
        # with the runtime itself, never from a look taken before another block's init.
        with _lock:
            rt, made = _init_locked(address, num_cpus, num_gpus, namespace, tag, kwargs)
            if made:
                rt._owned_by_connect = True
            rt._connect_blocks += 1
            return rt

    rt = await anyio.to_thread.run_sync(_enter)
    _restore_signal_handlers()
    try:
        yield rt
    finally:
        with _lock:
            rt._connect_blocks -= 1
            last = rt._connect_blocks == 0 and rt._owned_by_connect
        if last:
            await anyio.to_thread.run_sync(rt.shutdown)


def run(main: Callable[..., Coroutine[Any, Any, T]], *args: Any, uvloop: bool = True) -> T:
    """Run ``main(*args)`` to completion on a new event loop, on uvloop when installed.

    ``uvloop=False`` (or uvloop missing) uses the standard asyncio loop.
    """
    if not callable(main):
        raise TypeError(f"main must be a coroutine function, not {type(main).__name__}")
    if uvloop and importlib.util.find_spec("uvloop") is not None:
        import uvloop as _uvloop

        return _uvloop.run(main(*args))
    return asyncio.run(main(*args))
