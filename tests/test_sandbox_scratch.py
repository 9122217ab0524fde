"""A run's directory after the run: removed by the fork server itself when the run left at
most a few files at its top, else left for the forked helper that kills the run's uid's
processes and removes the tree (``_zygote_job.remove_scratch``).

Every unjudged Python run writes its program as ``main.py`` (``__file__``) and every compiled
program's run is given its binary; before the server removed such files itself, every one of
those runs paid for a forked helper (~4-5 ms of CPU: a fork of the server and the helper's
exit), a third of a HumanEval check. Pure filesystem work on a temporary directory: no fork
server, no root.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from asyncpool.sandbox._zygote_job import SCRATCH_ENTRIES, remove_scratch
from asyncpool.sandbox._zygote_wire import (
    FLAG_JUDGE,
    FLAG_LIMITS,
    FLAG_SHARED_FS,
    Request,
    shared_dirs,
)

PYTHON_RUN = FLAG_LIMITS
JUDGED_RUN = FLAG_LIMITS | FLAG_JUDGE
SHARED_RUN = FLAG_LIMITS | FLAG_JUDGE | FLAG_SHARED_FS


def _request(flags: int) -> Request:
    return Request(
        timeout=1.0, memory=1 << 28, fsize=1 << 24, nproc=16, flags=flags, wall_cap=10.0,
        resident=1 << 28,
    )  # fmt: skip


def _scratch(base: Path) -> Path:
    """A run's directory as the server makes it: ``tmp`` and ``shm`` below it."""
    scratch = base / "7"
    scratch.mkdir(0o711, parents=True)
    for sub in ("tmp", "shm"):
        (scratch / sub).mkdir(0o700)
    return scratch


@pytest.mark.parametrize("name", ["main.py", "__program__.py", "main"])
def test_a_runs_program_file_or_binary_is_removed_with_its_directory(
    tmp_path: Path, name: str
) -> None:
    scratch = _scratch(tmp_path)
    (scratch / "tmp" / name).write_text("print(1)\n")
    assert remove_scratch(str(scratch), _request(PYTHON_RUN), isolated=True) is True
    assert not scratch.exists()


def test_a_directory_with_no_file_is_removed_for_every_kind_of_run(tmp_path: Path) -> None:
    for k, flags in enumerate((PYTHON_RUN, JUDGED_RUN, 0)):
        scratch = _scratch(tmp_path / str(k))
        assert remove_scratch(str(scratch), _request(flags), isolated=True) is True
        assert not scratch.exists()


def test_up_to_the_bound_of_files_in_tmp_and_shm_together_are_removed(tmp_path: Path) -> None:
    scratch = _scratch(tmp_path)
    for i in range(SCRATCH_ENTRIES - 1):
        (scratch / "tmp" / f"out{i}.txt").write_text("mine\n")
    (scratch / "shm" / "segment").write_bytes(b"\0" * 16)
    assert remove_scratch(str(scratch), _request(JUDGED_RUN), isolated=True) is True
    assert not scratch.exists()


def test_more_files_than_the_bound_are_left_to_the_helper(tmp_path: Path) -> None:
    scratch = _scratch(tmp_path)
    for i in range(SCRATCH_ENTRIES):
        (scratch / "tmp" / f"out{i}.txt").write_text("mine\n")
    (scratch / "shm" / "segment").write_bytes(b"\0" * 16)
    assert remove_scratch(str(scratch), _request(PYTHON_RUN), isolated=True) is False
    assert (scratch / "shm" / "segment").exists()


def test_a_directory_the_program_made_leaves_the_tree_to_the_helper(tmp_path: Path) -> None:
    scratch = _scratch(tmp_path)
    (scratch / "tmp" / "main.py").mkdir()
    (scratch / "tmp" / "main.py" / "inner").write_text("x\n")
    assert remove_scratch(str(scratch), _request(PYTHON_RUN), isolated=True) is False
    assert (scratch / "tmp" / "main.py" / "inner").read_text() == "x\n"


def test_a_symlink_the_program_left_is_removed_never_what_it_names(tmp_path: Path) -> None:
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep").write_text("keep\n")
    scratch = _scratch(tmp_path)
    os.symlink(outside / "keep", scratch / "tmp" / "main.py")
    os.symlink(outside, scratch / "tmp" / "dir")
    os.symlink(outside, scratch / "shm" / "dir")
    assert remove_scratch(str(scratch), _request(PYTHON_RUN), isolated=True) is True
    assert not scratch.exists()
    assert (outside / "keep").read_text() == "keep\n"


def test_tmp_replaced_by_a_symlink_is_never_followed(tmp_path: Path) -> None:
    # The run cannot do this (scratch is root's, 0711); the server still does not follow it.
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep").write_text("keep\n")
    scratch = _scratch(tmp_path)
    (scratch / "tmp").rmdir()
    os.symlink(outside, scratch / "tmp")
    assert remove_scratch(str(scratch), _request(PYTHON_RUN), isolated=True) is False
    assert (outside / "keep").read_text() == "keep\n"


def _shared_scratch(base: Path) -> tuple[Path, list[str]]:
    """A shared run's directory: its own path to its ``tmp`` made inside that ``tmp``."""
    scratch = _scratch(base)
    subs = shared_dirs(f"{scratch}/tmp")
    assert len(subs) >= 3
    for sub in reversed(subs):
        (scratch / "tmp" / sub).mkdir()
    return scratch, subs


def test_a_shared_runs_own_path_directories_are_removed_when_empty() -> None:
    # The server's scratch directories live below /tmp, where shared_dirs has work to do.
    with tempfile.TemporaryDirectory(dir="/tmp") as base:
        scratch, _ = _shared_scratch(Path(base))
        shared = _request(SHARED_RUN)
        assert shared.shared
        (scratch / "tmp" / "main.py").write_text("a file beside them\n")
        assert remove_scratch(str(scratch), shared, isolated=True) is True
        assert not scratch.exists()


def test_a_file_in_a_shared_runs_working_directory_leaves_the_tree_to_the_helper() -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as base:
        scratch, subs = _shared_scratch(Path(base))
        (scratch / "tmp" / subs[0] / "data.csv").write_text("a,b\n")
        assert remove_scratch(str(scratch), _request(SHARED_RUN), isolated=True) is False
        assert (scratch / "tmp" / subs[0] / "data.csv").read_text() == "a,b\n"
