"""The public package is thin, complete and sorted."""

from __future__ import annotations

import importlib
import importlib.resources

import asyncpool

CONTRACT_MODULES = [
    "actors",
    "cluster",
    "errors",
    "placement",
    "refs",
    "runtime",
    "sandbox",
    "sharding",
    "stats",
    "tasks",
    "workers",
]


def test_all_is_sorted_and_unique() -> None:
    assert list(asyncpool.__all__) == sorted(set(asyncpool.__all__))


def test_every_public_name_of_the_modules_is_re_exported() -> None:
    exported = set(asyncpool.__all__)
    for name in CONTRACT_MODULES:
        module = importlib.import_module(f"asyncpool.{name}")
        missing = set(getattr(module, "__all__", [])) - exported
        # Runtime.current and the like are reached through their module on purpose.
        missing -= {"current"}
        assert not missing, f"asyncpool.{name} exports {missing} that asyncpool does not"


def test_every_name_in_all_resolves() -> None:
    for name in asyncpool.__all__:
        assert getattr(asyncpool, name) is not None


def test_the_package_ships_py_typed() -> None:
    files = importlib.resources.files("asyncpool")
    assert files.joinpath("py.typed").is_file()
