"""An actor pool's routing (:mod:`asyncpool._least_loaded`): the least-loaded live actor, ties
in turn, whatever the order of adds, removes and load changes. Pure logic: no Ray."""

from __future__ import annotations

import random

import pytest

from asyncpool._actor_member import Member
from asyncpool._least_loaded import LeastLoaded, shift


def members(n: int) -> list[Member]:
    return [Member(handle=None, index=i, ready=True) for i in range(n)]  # type: ignore[arg-type]


def test_an_empty_routing_picks_nothing() -> None:
    router = LeastLoaded()
    assert router.pick() is None
    assert len(router) == 0


def test_actors_of_equal_load_take_calls_in_turn() -> None:
    router = LeastLoaded()
    a, b, c = members(3)
    for m in (a, b, c):
        router.add(m)
    picked = []
    for _ in range(6):
        best = router.pick()
        assert best is not None
        picked.append(best.index)
        shift(best, 1)
    assert picked == [0, 1, 2, 0, 1, 2]
    assert (a.load, b.load, c.load) == (2, 2, 2)


def test_the_least_loaded_actor_is_picked_after_its_calls_end() -> None:
    router = LeastLoaded()
    a, b, c = members(3)
    for m in (a, b, c):
        router.add(m)
        shift(m, 1)
    shift(b, -1)
    assert router.pick() is b
    shift(b, 1)
    shift(c, 1)
    assert router.pick() is a  # a: 1, b: 1 (since after a), c: 2
    shift(a, -1)
    shift(c, -1)
    shift(c, -1)
    assert router.pick() is a  # a and c at 0: a got there first


def test_a_removed_actor_takes_no_calls_and_its_calls_still_count_down() -> None:
    router = LeastLoaded()
    a, b = members(2)
    router.add(a)
    router.add(b)
    shift(b, 1)
    router.remove(a)
    router.remove(a)  # idempotent
    assert a.router is None
    assert router.pick() is b  # the only one, though busier
    shift(a, 1)  # a call that was running on it: its load, not the routing's
    shift(a, -1)
    assert a.load == 0
    assert router.pick() is b
    router.remove(b)
    assert router.pick() is None
    assert len(router) == 0
    router.add(a)
    with pytest.raises(ValueError, match="routed already"):
        router.add(a)


def test_removing_the_last_actor_of_the_lowest_load_finds_the_next() -> None:
    router = LeastLoaded()
    a, b, c = members(3)
    for m, load in ((a, 0), (b, 3), (c, 5)):
        for _ in range(load):
            shift(m, 1)
        router.add(m)
    assert router.pick() is a
    router.remove(a)
    assert router.pick() is b
    router.remove(b)
    assert router.pick() is c


def test_routing_agrees_with_a_scan_of_every_actor_over_random_operations() -> None:
    # The reference: the live actors' least load, ties by the order they reached that load.
    rng = random.Random(7)
    router = LeastLoaded()
    pool = members(12)
    live: list[Member] = []
    since: dict[int, int] = {}
    clock = 0
    for _ in range(20_000):
        op = rng.random()
        if op < 0.05 and len(live) < len(pool):
            m = rng.choice([m for m in pool if m not in live])
            router.add(m)
            live.append(m)
            clock += 1
            since[m.index] = clock
        elif op < 0.08 and live:
            m = rng.choice(live)
            router.remove(m)
            live.remove(m)
        elif op < 0.55:
            picked = router.pick()
            if not live:
                assert picked is None
                continue
            low = min(m.load for m in live)
            expected = min((m for m in live if m.load == low), key=lambda m: since[m.index])
            assert picked is expected
            shift(picked, 1)
            clock += 1
            since[picked.index] = clock
        else:
            busy = [m for m in pool if m.load > 0]
            if busy:
                m = rng.choice(busy)
                shift(m, -1)
                if m in live:
                    clock += 1
                    since[m.index] = clock
    assert len(router) == len(live)
