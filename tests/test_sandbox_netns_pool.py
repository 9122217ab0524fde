"""Reused network namespaces (issue 21 item 3): cheap, and never carrying a run's sockets on.

The fork server hands each run a network namespace from :class:`asyncpool.sandbox._ns.NetnsPool`
and takes it back only when the run's processes are all dead and the namespace holds no socket.
Real namespaces (root): the pool's bookkeeping in a forked child of the test, and real runs.
"""

from __future__ import annotations

import os
import secrets
import socket
import textwrap
import time

import pytest

from asyncpool.sandbox import _ns, run_python

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

NS_OF_RUN = 'import os\nprint(os.readlink("/proc/self/ns/net"))\n'


def _in_child(body: str) -> None:
    """Run ``body`` (code using ``_ns``, ``os``, ``socket``, ``time``) in a forked child, so
    that the namespaces it makes and enters never touch this process; fail with its error."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the forked child
        os.close(read)
        code = 0
        try:
            exec(body, {"_ns": _ns, "os": os, "socket": socket, "time": time})
        except BaseException as exc:
            os.write(write, repr(exc).encode()[:4000])
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        message = fh.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status)
    assert os.WEXITSTATUS(status) == 0, message


def test_no_sockets_sees_each_kind_of_socket_in_a_fresh_namespace() -> None:
    _in_child(
        textwrap.dedent("""
        _ns.unshare(_ns.CLONE_NEWNET)
        assert _ns.no_sockets()
        for family, kind in ((socket.AF_UNIX, socket.SOCK_STREAM),
                             (socket.AF_INET, socket.SOCK_DGRAM),
                             (socket.AF_INET, socket.SOCK_STREAM),
                             (socket.AF_INET6, socket.SOCK_DGRAM),
                             (socket.AF_NETLINK, socket.SOCK_RAW)):
            s = socket.socket(family, kind)
            assert not _ns.no_sockets(), (family, kind)
            s.close()
            # Some families free the socket after an RCU grace period: poll.
            end = time.monotonic() + 10
            while not _ns.no_sockets() and time.monotonic() < end:
                time.sleep(0.005)
            assert _ns.no_sockets(), (family, kind)
        """)
    )


def test_a_namespace_with_a_socket_alive_is_discarded_and_a_clean_one_is_reused() -> None:
    _in_child(
        textwrap.dedent("""
        pool = _ns.NetnsPool(4)
        home = os.stat("/proc/self/ns/net").st_ino
        first = pool.take()
        assert os.fstat(first).st_ino != home
        _ns.setns(first, _ns.CLONE_NEWNET)
        kept = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # alive, as if in flight
        _ns.setns(pool.home, _ns.CLONE_NEWNET)
        assert os.stat("/proc/self/ns/net").st_ino == home
        pool.give_back(first)
        assert (pool.discarded, len(pool.spare)) == (1, 0)
        second = pool.take()
        inode = os.fstat(second).st_ino
        pool.give_back(second)
        assert pool.spare == [second]
        again = pool.take()
        assert os.fstat(again).st_ino == inode
        assert (pool.created, pool.reused) == (2, 1)
        kept.close()
        """)
    )


def test_consecutive_runs_share_a_reused_namespace_but_not_its_host() -> None:
    first = run_python(NS_OF_RUN)
    second = run_python(NS_OF_RUN)
    assert first.passed
    assert second.passed
    assert first.stdout_tail.strip() == second.stdout_tail.strip()
    assert first.stdout_tail.strip() != os.readlink("/proc/self/ns/net")


def test_a_run_never_meets_a_socket_an_earlier_run_left_in_flight() -> None:
    name = "asyncpool-" + secrets.token_hex(8)
    leave = textwrap.dedent(f"""
        import socket
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(b"\\0{name}")
        listener.listen()
        a, b = socket.socketpair()
        # b and the listener in b's own queue: a cycle that outlives the process
        socket.send_fds(a, [b"x"], [b.fileno(), listener.fileno()])
        """)
    probe = textwrap.dedent(f"""
        import socket
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(b"\\0{name}")
            print("reached")
        except OSError as exc:
            print("refused", type(exc).__name__)
        rows = open("/proc/self/net/unix").read().splitlines()[1:]
        print("sockets", len(rows))
        """)
    assert run_python(leave).passed
    seen = run_python(probe)
    assert seen.passed, seen.stdout_tail
    assert "refused" in seen.stdout_tail
    assert "sockets 1" in seen.stdout_tail  # only the probe's own
