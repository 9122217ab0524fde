"""The fork server's cgroup per run (:mod:`asyncpool.sandbox._cgroup`), mechanism by mechanism.

Every mechanism this host offers is tried directly, not only the one the fork server picks: a
double-forked ``setsid`` daemon left in a run's cgroup is dead once the cgroup is removed (a
v1 run's child joins through ``tasks``: what it forks afterwards is born in the cgroup too).
The server picks ``cgroup.kill`` wherever the kernel has it and the v2 hierarchy gives the
memory controller (the server's base, not its root cgroup, is where ``cgroup.kill`` is looked
for), the v1 freezer on a hybrid host, and the v1 freezer path freezes only a cgroup that
still has a process (each freeze flips a kernel static key: code patched on every CPU).

The scenarios fork, so each runs in a fresh interpreter of its own (the test process may have
Ray's threads).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from asyncpool.sandbox import _cgroup


def _mechanisms() -> dict[str, str]:
    """kind -> this process's cgroup directory, for each mechanism this host mounts."""
    try:
        own, mounts = _cgroup._own_cgroups(), _cgroup._mounts()
    except OSError:
        return {}
    out: dict[str, str] = {}
    v2 = own.get("")
    for root, mountpoint, fstype, _ in mounts:
        if fstype == "cgroup2" and v2 is not None:
            where = _cgroup._dir_of(root, mountpoint, v2)
            if where is not None and os.access(where, os.W_OK):
                out[_cgroup._V2] = where
                break
    freezer = _cgroup._v1_dir(own, mounts, "freezer")
    if freezer is not None and os.access(freezer, os.W_OK):
        out[_cgroup._V1_FREEZER] = freezer
    return out


MECHANISMS = _mechanisms()

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not MECHANISMS, reason="needs root and a writable cgroup hierarchy"
)


def _run(code: str) -> Any:
    """Run ``code`` in a fresh interpreter; it prints one JSON value as its last line."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


_DAEMON_SCENARIO = """
    import json, os, time
    from asyncpool.sandbox import _cgroup

    written = []
    real_write = _cgroup._write
    def recording_write(fd, name, data):
        written.append(name)
        real_write(fd, name, data)
    _cgroup._write = recording_write

    cgroups = _cgroup.Cgroups({kind!r}, {where!r})
    try:
        run = cgroups.new_run()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the run's child: joins, then leaves a daemon behind
            try:
                _cgroup.join(run.joins[:1])
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        os.write(w, str(os.getpid()).encode())
                        while True:
                            time.sleep(60)
                    os._exit(0)
                os._exit(0)
            except BaseException:
                os._exit(1)
        os.close(w)
        _, status = os.waitpid(pid, 0)
        daemon = int(os.read(r, 32))
        alive_before = os.path.exists(f"/proc/{{daemon}}")
        deadline = time.monotonic() + 60
        removed = cgroups.remove(run)
        while not removed and time.monotonic() < deadline:
            time.sleep(0.01)
            removed = cgroups.remove(run)
        state = None
        try:
            with open(f"/proc/{{daemon}}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            pass  # reaped: gone
        # An empty cgroup next: removed at once, never frozen.
        written.clear()
        empty = cgroups.new_run()
        empty_removed = cgroups.remove(empty)
        print(json.dumps({{
            "status": status, "alive_before": alive_before, "removed": removed,
            "state": state, "empty_removed": empty_removed, "empty_writes": written,
        }}))
    finally:
        cgroups.close()
"""


@pytest.mark.parametrize("kind", sorted(MECHANISMS))
def test_removing_a_runs_cgroup_kills_the_daemon_it_left_and_an_empty_one_is_not_frozen(
    kind: str,
) -> None:
    got = _run(_DAEMON_SCENARIO.format(kind=kind, where=MECHANISMS[kind]))
    assert got["status"] == 0
    assert got["alive_before"]
    assert got["removed"]
    assert got["state"] in (None, "Z")  # dead: reaped, or a zombie its new parent has yet to reap
    assert got["empty_removed"]
    assert "freezer.state" not in got["empty_writes"]


def _v2_gives_memory() -> bool:
    try:
        with open(os.path.join(MECHANISMS[_cgroup._V2], "cgroup.controllers")) as fh:
            return "memory" in fh.read().split()
    except OSError:
        return False


@pytest.mark.skipif(_cgroup._V2 not in MECHANISMS, reason="no writable cgroup v2 hierarchy")
def test_the_fork_server_takes_cgroup_kill_where_v2_has_memory_else_the_v1_freezer() -> None:
    """``cgroup.kill`` is seen in a fresh child cgroup, not in this process's own (a root has
    no such file). A v2 hierarchy without the memory controller (a hybrid host's unified one)
    gives way to the v1 freezer and cpuacct where they are mounted: the same guarantees, and
    every join through ``tasks``."""
    probe = os.path.join(MECHANISMS[_cgroup._V2], f"asyncpool-probe-{os.getpid()}")
    os.mkdir(probe)
    try:
        has_kill = os.path.exists(os.path.join(probe, "cgroup.kill"))
    finally:
        os.rmdir(probe)
    if not has_kill:
        pytest.skip("this kernel has no cgroup.kill (before Linux 5.14)")
    got = _run("""
        import json
        from asyncpool.sandbox import _cgroup
        cgroups = _cgroup.open_cgroups()
        out = None
        if cgroups is not None:
            run = cgroups.new_run()
            out = [cgroups.kind, sorted(cgroups.v1), [name for _, name in run.joins]]
            cgroups.remove(run)
            cgroups.close()
        print(json.dumps(out))
    """)
    assert got is not None
    kind, v1, joins = got
    hybrid = _cgroup._V1_FREEZER in MECHANISMS and not _v2_gives_memory()
    try:
        own, mounts = _cgroup._own_cgroups(), _cgroup._mounts()
        hybrid = hybrid and _cgroup._v1_dir(own, mounts, "cpuacct") is not None
    except OSError:
        hybrid = False
    if hybrid:
        assert kind == _cgroup._V1_FREEZER
        assert "cpuacct" in v1
        assert set(joins) == {"tasks"}  # no join takes the kernel's global rw-semaphore
    else:
        assert kind == _cgroup._V2
        assert joins[0] == "cgroup.procs"
        assert set(joins[1:]) <= {"tasks"}
