"""``asyncpool serve`` from a regular wheel installed into a fresh venv answers ``/run_code``.

The wheel is the session's ``installed_wheel`` (``pip wheel . --no-deps`` of this checkout,
built once): its only top-level package is ``asyncpool`` (no ``benchmarks`` to shadow other
projects'), and the venv sees the running environment's packages for the dependencies but
gets asyncpool from the wheel.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest

from tests.conftest import InstalledWheel, SessionCluster
from tests.test_server import start_serve, stop

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_serve_from_an_installed_wheel_answers_run_code(
    ray_cluster: SessionCluster, installed_wheel: InstalledWheel, tmp_path: Path
) -> None:
    names, venv, exe = installed_wheel.names, installed_wheel.venv, installed_wheel.exe
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"asyncpool"}, top
    assert "asyncpool/server/app.py" in names
    where = subprocess.run(
        [str(installed_wheel.python), "-c", "import asyncpool.server as s; print(s.__file__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(venv), where

    srv = start_serve(["--address", ray_cluster.address], tmp_path, command=[str(exe)])
    try:
        r = httpx.post(srv.url + "/run_code",
                       json={"code": "print(sum(range(10)))", "language": "python"}, timeout=None)
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "Success"
        assert r.json()["run_result"]["stdout"] == "45\n"
    finally:
        stop(srv.proc)
