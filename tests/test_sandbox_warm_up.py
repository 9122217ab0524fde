"""The fork server's warm-up (``_zygote_prepare.warm_up``): one check served through the real wire
before the server's first fork, so that every run's child inherits the solution side's code
already quickened. It must run its tests to "passed" (else it warmed nothing), and leave the
server as it found it whether it passed or not: no peer, no descriptor, no proxy, no child, the
same CPU affinity, streams and ``SIGCHLD`` disposition, the spare peer untouched (also when
the server was started with ``SIGCHLD`` ignored, which the kernel would reap the judge under).

Run in a fresh interpreter: the warm-up forks, and this test process may have threads (Ray's).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

_PROBE = textwrap.dedent(
    """
    import gc, json, os, signal, sys, warnings
    from asyncpool.sandbox import _judge as J, _zygote_child, _zygote_prepare
    from asyncpool.sandbox._judge import _framing, _proxies, _serve

    _zygote_child.JUDGE = J
    J.prepare_server()
    if sys.argv[1] == "failing":
        J.WARM_TESTS = "def check(candidate):\\n    assert candidate(1, 1) == 3\\n"
    if sys.argv[1] == "ignored SIGCHLD":  # inherited across exec from a caller that ignores it
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    spare = _serve._SPARE_PEER
    fds = sorted(os.listdir("/proc/self/fd"))
    state = lambda: [sorted(os.sched_getaffinity(0)), [id(s) for s in (sys.stdout, sys.stderr,
                     sys.stdin)], len(warnings.filters), sys.getrecursionlimit(),
                     len(_framing._buffers), str(signal.getsignal(signal.SIGCHLD))]
    before = state()
    warmed = _zygote_prepare.warm_up()
    gc.collect()
    try:
        os.waitpid(-1, os.WNOHANG)
        children = True
    except ChildProcessError:
        children = False
    print(json.dumps({
        "warmed": warmed,
        "peer": _proxies._PEER is None,
        "spare": _serve._SPARE_PEER is spare,
        "same state": state() == before,
        "same fds": sorted(os.listdir("/proc/self/fd")) == fds,
        "proxies": sum(type(o) in _proxies._PROXY_TYPES for o in gc.get_objects()),
        "children": children,
    }))
    """
)


@pytest.mark.parametrize(
    ("case", "warmed"), [("warm-up", True), ("failing", False), ("ignored SIGCHLD", True)]
)
def test_the_warm_up_passes_its_check_and_leaves_the_server_as_it_found_it(
    case: str, warmed: bool
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, case], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "warmed": warmed,
        "peer": True,
        "spare": True,
        "same state": True,
        "same fds": True,
        "proxies": 0,
        "children": False,
    }
