"""One actor of an :class:`~asyncpool.actors.ActorPool`, and what Ray says about its life.

Owns: :class:`Member` (an actor's handle, its load, whether it is alive and ready, since when
it is idle) and the small questions a pool asks Ray about an actor: the Python class behind an
actor class, whether a call's ref says the actor died, the node a dead actor ran on, and
killing it for good.

Must not: choose, start, replace or count actors (that is the pool's, in
:mod:`asyncpool.actors`), nor block: :func:`died` asks Ray with a zero timeout.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import ray
from ray.actor import ActorHandle
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

if TYPE_CHECKING:
    from ._least_loaded import LeastLoaded

#: The errors that mean the actor itself is gone (not that the call failed).
ACTOR_DEATH = (ActorDiedError, ActorUnavailableError, RayActorError)


@dataclass(eq=False)
class Member:
    handle: ActorHandle[Any]
    index: int
    load: int = 0
    alive: bool = True
    ready: bool = False
    idle_since: float = field(default_factory=time.monotonic)
    #: The routing it takes calls from (:mod:`asyncpool._least_loaded`), while live and ready.
    router: LeastLoaded | None = None


def python_class(actor_cls: Any) -> type[Any] | None:
    meta = getattr(actor_cls, "__ray_metadata__", None)
    cls = getattr(meta, "modified_class", None) or getattr(meta, "actor_class", None)
    return cls if isinstance(cls, type) else None


def kill(handle: ActorHandle[Any]) -> None:
    with contextlib.suppress(Exception):  # already dead or never created
        ray.kill(handle, no_restart=True)


def died(ref: Any) -> bool:
    try:
        ray.get(ref, timeout=0)
    except ACTOR_DEATH:
        return True
    except Exception:
        return False
    return False


def node_of(error: BaseException) -> str | None:
    """The node the dead actor ran on, when Ray's error says."""
    for attr in ("node_id", "_node_id", "node_ip_address", "_node_ip_address"):
        value = getattr(error, attr, None)
        if value:
            return str(value)
    return None
