"""``asyncpool serve`` from a regular wheel installed into a fresh venv answers ``/run_code``.

The wheel is built from this checkout (``pip wheel . --no-deps``), its only top-level package
is ``asyncpool`` (no ``benchmarks`` to shadow other projects'), and the venv sees the machine's
packages (``--system-site-packages``) for the dependencies but gets asyncpool from the wheel.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.conftest import SessionCluster
from tests.test_server import start_serve, stop

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.timeout(600)


def test_serve_from_an_installed_wheel_answers_run_code(
    ray_cluster: SessionCluster, tmp_path: Path
) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w",
         str(tmp_path / "dist")],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("asyncpool-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"asyncpool"}, top
    assert "asyncpool/server/app.py" in names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=120)  # fmt: skip
    py, exe = venv / "bin" / "python", venv / "bin" / "asyncpool"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, timeout=300, capture_output=True)  # fmt: skip
    where = subprocess.run(
        [str(py), "-c", "import asyncpool.server as s; print(s.__file__)"],
        capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path,
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(venv), where

    srv = start_serve(["--address", ray_cluster.address], tmp_path, command=[str(exe)])
    try:
        r = httpx.post(srv.url + "/run_code",
                       json={"code": "print(sum(range(10)))", "language": "python"},
                       timeout=120)  # fmt: skip
        assert r.status_code == 200, r.text
        assert r.json()["status"] == "Success"
        assert r.json()["run_result"]["stdout"] == "45\n"
    finally:
        stop(srv.proc)
