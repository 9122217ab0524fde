"""The package re-exports exactly the contract's names, and every import path it names works.

The contract is DESIGN.md (the project's shared design file; it is not shipped in this
repository, so its names are held here, section by section, as a literal list). A name added
to the package but not to the contract, or a name of the contract the package lost, fails the
first test; a module's own ``__all__`` may be larger (helpers reached through the module).
"""

from __future__ import annotations

import importlib
import importlib.resources
import importlib.util

import pytest

import asyncpool

#: DESIGN.md, section by section: the module it names, and the names it lists for it.
CONTRACT: dict[str, tuple[str, ...]] = {
    # Runtime -- asyncpool.runtime
    "runtime": ("Runtime", "connect", "init", "run"),
    # Refs -- asyncpool.refs
    "refs": ("as_completed", "cancel", "gather", "resolve", "wait"),
    # Pools -- asyncpool.tasks, asyncpool.actors; PoolStats from asyncpool.stats
    "tasks": ("TaskPool",),
    "actors": ("ActorPool",),
    "stats": ("PoolStats",),
    # Placement -- asyncpool.placement, asyncpool.cluster
    "placement": (
        "Backoff",
        "NodeInfo",
        "ReplicaSpec",
        "allocate",
        "bundle_node_ip",
        "free_port",
        "plan_replica",
        "reap",
        "topology",
    ),
    "cluster": ("VirtualCluster",),
    # Worker groups -- asyncpool.workers, asyncpool.sharding
    "workers": ("Dispatch", "WorkerGroup"),
    "sharding": ("shard", "unshard"),
    # Errors -- asyncpool.errors
    "errors": (
        "AsyncPoolError",
        "ClusterStateError",
        "PlacementTimeoutError",
        "PoolClosedError",
        "ResourceInsufficientError",
        "ResourceStateError",
        "SandboxError",
        "TaskTimeoutError",
        "WorkerFailedError",
        "WorkerGroupStateError",
    ),
    # Sandbox and the benchmark -- asyncpool.sandbox
    "sandbox": ("SandboxResult", "StdioResult", "run_python", "run_stdio", "run_tests"),
}

CONTRACT_NAMES = sorted(name for names in CONTRACT.values() for name in names)

#: What the package must not offer any more (issue 14): a benchmark baseline and two
#: Protocols that only typed one argument.
REMOVED = ("LayoutGroup", "LayoutWorker", "run_python_bare")


def test_the_contract_list_names_each_name_once() -> None:
    assert len(CONTRACT_NAMES) == len(set(CONTRACT_NAMES))


def test_the_package_exports_exactly_the_contracts_names_sorted_and_once() -> None:
    exported = list(asyncpool.__all__)
    assert exported == sorted(set(exported)), "__all__ must be sorted, each name once"
    extra = sorted(set(exported) - set(CONTRACT_NAMES))
    missing = sorted(set(CONTRACT_NAMES) - set(exported))
    assert (extra, missing) == ([], []), "(names not in the contract, contract names missing)"


def test_each_exported_name_is_the_object_of_its_contract_module() -> None:
    for module_name, names in CONTRACT.items():
        module = importlib.import_module(f"asyncpool.{module_name}")
        for name in names:
            if name in asyncpool.__all__:
                assert getattr(asyncpool, name) is getattr(module, name), name


@pytest.mark.parametrize("module_name", sorted(CONTRACT))
def test_every_import_path_of_the_contract_works(module_name: str) -> None:
    module = importlib.import_module(f"asyncpool.{module_name}")
    missing = [name for name in CONTRACT[module_name] if not hasattr(module, name)]
    assert not missing, f"asyncpool.{module_name} lacks {missing}"


def test_the_contracts_module_layout_imports() -> None:
    # DESIGN.md's layout: the public modules, the CLI, and the shared engine it names.
    for module_name in ("cli", "_dispatch", *CONTRACT):
        importlib.import_module(f"asyncpool.{module_name}")
    # ``python -m asyncpool`` runs the CLI on import: only check that it is there.
    assert importlib.util.find_spec("asyncpool.__main__") is not None


def test_removed_names_are_gone_from_the_package_but_run_python_bare_stays_in_sandbox() -> None:
    for name in REMOVED:
        assert name not in asyncpool.__all__
        assert not hasattr(asyncpool, name), name
    from asyncpool.sandbox import run_python_bare

    assert callable(run_python_bare)


def test_the_package_ships_py_typed() -> None:
    files = importlib.resources.files("asyncpool")
    assert files.joinpath("py.typed").is_file()
