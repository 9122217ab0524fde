"""What a sandboxed program can see and reach (the fork server's namespaces; needs root, as in
production: without it the sandbox documents what does not hold)."""

from __future__ import annotations

import ast
import errno
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest

from asyncpool.sandbox import _run as _sandbox_run
from asyncpool.sandbox import run_program, run_python, run_tests
from tests.conftest import make_venv, wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="namespaces need the caller to be root")


def _run(program: str, **kwargs: float) -> str:
    result = run_python(textwrap.dedent(program), **kwargs)  # type: ignore[arg-type]
    assert result.status == "passed", result
    return result.stdout_tail


@pytest.fixture(autouse=True)
def _isolated() -> None:
    run_python("pass")
    assert _sandbox_run.isolated() is True


def test_no_network_not_even_a_listener_of_the_caller_on_loopback() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        out = _run(f"""
            import socket
            print(sorted(name for _, name in socket.if_nameindex()))
            for host in ("127.0.0.1", "10.0.0.1", "8.8.8.8"):
                try:
                    socket.create_connection((host, {port}), timeout=2)
                    print("connected", host)
                except OSError as exc:
                    print(type(exc).__name__)
        """)
    lines = out.splitlines()
    assert lines[0] == "['lo']"
    assert len(lines) == 4
    assert "connected" not in out


def _environment_tops() -> set[str]:
    """The top-level directories of this interpreter's prefixes (a venv's included)."""
    prefixes = (sys.prefix, sys.base_prefix, os.path.dirname(os.path.abspath(sys.executable)))
    return {Path(os.path.realpath(p)).parts[1] for p in prefixes}


def test_filesystem_shows_only_system_dirs_read_only() -> None:
    checkout = str(Path(__file__).resolve().parents[1])
    out = _run(f"""
        import os
        print(sorted(os.listdir("/")))
        for path in ("/tmp/ray", {os.path.abspath(__file__)!r}, {checkout!r}, "/home",
                     "/root/.bashrc"):
            print(path, os.path.exists(path))
        for path in ("/etc/x", "/usr/x", "/x", "/root/x"):
            try:
                open(path, "w")
                print("wrote", path)
            except OSError as exc:
                print(exc.errno)
    """)
    lines = out.splitlines()
    visible = set(ast.literal_eval(lines[0]))
    system = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "sys", "dev",
              "proc", "tmp", "root", "opt", "home"}  # fmt: skip
    assert visible <= system | _environment_tops()
    assert all(line.endswith(" False") for line in lines[1:6]), lines
    assert "wrote" not in out


def test_tmp_and_dev_shm_are_private_to_each_run_and_vanish_with_it() -> None:
    writer = """
        import os, time
        open("/tmp/secret", "w").write("x")
        open("/dev/shm/secret", "w").write("x")
        print(sorted(os.listdir("/tmp")), sorted(os.listdir("/dev/shm")), flush=True)
        time.sleep({sleep})
    """
    seen: list[str] = []
    first = threading.Thread(target=lambda: seen.append(_run(writer.format(sleep=1.5))))
    first.start()
    # Meanwhile, and after it, other runs see an empty /tmp and /dev/shm (but for their own
    # program, main.py: see _zygote_child._main_file).
    during = _run("import os\nprint(os.listdir('/tmp'), os.listdir('/dev/shm'))")
    first.join()
    after = _run("import os\nprint(os.listdir('/tmp'), os.listdir('/dev/shm'))")
    assert seen == ["['main.py', 'secret'] ['secret']\n"]
    assert during == after == "['main.py'] []\n"
    assert not os.path.exists("/tmp/secret")
    # The run's directories are gone from the server's own /tmp too.
    zpid = _sandbox_run.zygote_pid()
    base = f"/proc/{zpid}/root/tmp"
    wait_for(
        lambda: all(not os.listdir(f"{base}/{d}") for d in os.listdir(base)),
        5,
    )


def test_system_v_ipc_cannot_be_created() -> None:
    out = _run("""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        IPC_PRIVATE, IPC_CREAT = 0, 0o1000
        flags = IPC_CREAT | 0o600
        print(libc.shmget(IPC_PRIVATE, 4096, flags), libc.msgget(IPC_PRIVATE, flags))
    """)
    assert out == "-1 -1\n"


def test_proc_shows_only_the_programs_own_processes() -> None:
    out = _run("""
        import os
        print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()), os.getpid())
    """)
    pids, own = out.rsplit(" ", 1)
    assert ast.literal_eval(pids) == [int(own)]


def test_fetched_files_never_follow_symlinks_out_of_the_run() -> None:
    code = """
        import os
        os.symlink("/etc/hostname", "host")
        os.mkdir("d")
        os.symlink("/etc", "d/up")
        open("real", "w").write("ok")
    """
    result = run_program(textwrap.dedent(code), fetch_files=["host", "d/up/hostname", "real"])
    assert result.files == {"real": b"ok"}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the seccomp filter is x86-64 only")
def test_seccomp_denies_ptrace_namespaces_io_uring_but_not_threads_fork_or_subprocess() -> None:
    out = _run(
        """
        import ctypes, os, subprocess, sys, threading
        libc = ctypes.CDLL(None, use_errno=True)
        calls = {
            "ptrace": lambda: libc.ptrace(0, 0, 0, 0),  # PTRACE_TRACEME
            "unshare": lambda: libc.unshare(0x10000000),  # CLONE_NEWUSER
            "io_uring_setup": lambda: libc.syscall(425, 8, 0),
            "bpf": lambda: libc.syscall(321, 0, 0, 0),
        }
        for name, call in calls.items():
            print(name, call(), ctypes.get_errno())
        done = []
        thread = threading.Thread(target=done.append, args=(1,))
        thread.start()
        thread.join()
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        child = subprocess.run([sys.executable, "-c", "print(5)"], capture_output=True)
        print(done, os.waitpid(pid, 0)[1] >> 8, child.stdout)
    """,
        timeout=20,
    )
    lines = out.splitlines()
    assert lines[:4] == [f"{name} -1 1" for name in ("ptrace", "unshare", "io_uring_setup", "bpf")]
    assert lines[4] == "[1] 7 b'5\\n'"


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the seccomp filter is x86-64 only")
def test_programs_their_children_and_the_judge_can_never_gain_privileges() -> None:
    """``no_new_privs`` (set once in the server, inherited by every fork) holds in the program,
    in a process it forks, and in the judge running the tests; the seccomp filter is on in the
    program (mode 2) and off in the judge, which must be able to do what the tests do."""
    program = """
        import os
        def flags():
            rows = dict(line.split(":", 1) for line in open("/proc/self/status"))
            return rows["NoNewPrivs"].strip(), rows["Seccomp"].strip()
        print(*flags())
        pid = os.fork()
        if pid == 0:
            os.write(1, " ".join(flags()).encode() + b"\\n")
            os._exit(0)
        os.waitpid(pid, 0)
    """
    assert _run(program).splitlines() == ["1 2", "1 2"]
    tests = (
        "assert f() == 1\n"
        "rows = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
        "assert (rows['NoNewPrivs'].strip(), rows['Seccomp'].strip()) == ('1', '0'), rows\n"
    )
    result = run_tests("def f():\n    return 1\n", tests, timeout=20)
    assert result.status == "passed", result


def _run_bpf(filter_code: bytes, nr: int, arch: int, arg0: int) -> int:
    """Classic BPF, the instructions the seccomp filter uses, run over one ``seccomp_data``
    (call number, ABI, first argument's low 32 bits); every jump must stay in the program and
    every path end in a return."""
    from asyncpool.sandbox import _seccomp as sc

    insns: list[tuple[int, int, int, int]] = [
        struct.unpack_from("=HBBI", filter_code, i) for i in range(0, len(filter_code), 8)
    ]
    data = {0: nr, 4: arch, 16: arg0}
    acc, pc = 0, 0
    while True:
        assert 0 <= pc < len(insns), f"jump out of the program at {pc}"
        code, jt, jf, k = insns[pc]
        if code == sc._RET_K:
            return k
        if code == sc._LD_W_ABS:
            acc = data[k]
            pc += 1
            continue
        tests = {sc._JEQ_K: acc == k, sc._JGE_K: acc >= k, sc._JSET_K: bool(acc & k)}
        assert code in tests, f"unexpected opcode {code:#x}"
        pc += 1 + (jt if tests[code] else jf)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the seccomp filter is x86-64 only")
def test_the_seccomp_filter_decides_every_call_number_as_its_policy_says() -> None:
    from asyncpool.sandbox import _seccomp as sc

    eperm = sc._RET_ERRNO | errno.EPERM
    denied = set(sc.DENIED.values())
    flags = [0, 0x11, 0x3D0F00, *(1 << bit for bit in range(32))]  # SIGCHLD, fork's, threads'
    numbers = [*range(1024), 0x3FFFFFFF, sc.X32_SYSCALL_BIT, sc.X32_SYSCALL_BIT + 1, 0xFFFFFFFF]
    code, checked = sc.program(), 0
    for nr in numbers:
        for arg0 in flags if nr == sc._CLONE else [0, 0xFFFFFFFF]:
            if nr >= sc.X32_SYSCALL_BIT or nr in denied:
                want = eperm
            elif nr == sc._CLONE3:
                want = sc._RET_ERRNO | errno.ENOSYS
            elif nr == sc._CLONE and arg0 & sc.CLONE_NAMESPACES:
                want = eperm
            else:
                want = sc._RET_ALLOW
            assert _run_bpf(code, nr, sc.AUDIT_ARCH_X86_64, arg0) == want, (nr, arg0)
            assert _run_bpf(code, nr, 0x40000003, arg0) == eperm  # i386: nothing
            checked += 1
    assert checked == 2 * (len(numbers) - 1) + len(flags)
    assert code == sc._FILTER  # what install() loads


def test_without_namespaces_the_judge_uids_and_limits_still_hold() -> None:
    # ASYNCPOOL_SANDBOX_NAMESPACES=0 takes the path of a host that refuses namespaces: a
    # separate caller process, so that this one's fork server is not the one tested.
    script = textwrap.dedent("""
        import os, sys
        os.environ["ASYNCPOOL_SANDBOX_NAMESPACES"] = "0"
        sys.path.insert(0, sys.argv[1])
        from asyncpool import sandbox
        from asyncpool.sandbox import _run as _sandbox_run
        print(sandbox.run_tests("def f(x):\\n    return x + 1\\n", "assert f(1) == 2\\n").status)
        print(sandbox.run_tests("import os\\nos._exit(0)\\n", "assert f(1) == 2\\n").status)
        print(sandbox.run_stdio("print(int(input()) * 2)", [("21", "42")]).status)
        code = "import os\\nopen('o', 'w').write(str(os.getuid() != 0))\\nimport numpy\\n"
        result = sandbox.run_program(code, fetch_files=["o"])
        print(result.status, result.files, _sandbox_run.isolated())
    """)
    root = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, "-c", script, root], capture_output=True, text=True, timeout=120
    )
    assert out.stdout.splitlines() == [
        "passed",
        "failed",
        "passed",
        "passed {'o': b'True'} False",
    ], out.stderr


def test_a_venv_under_a_0700_directory_runs_its_interpreter_and_its_packages_in_the_jail(
    tmp_path: Path,
) -> None:
    """A user's virtualenv inside a directory the sandbox uid cannot traverse (a 0700 home, as
    pyenv or conda live under): a sandboxed program runs ``sys.executable`` (the venv's
    ``bin/python``, a symlink to the base interpreter) which imports the venv's own packages;
    nothing else of that directory is shown. The caller is a process started from the venv."""
    private = Path(tempfile.mkdtemp(prefix="asyncpool-test-", dir=Path.home()))
    try:
        private.chmod(0o700)
        (private / "secret.txt").write_text("not for programs")
        py = make_venv(private / "venv")
        purelib = subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        Path(purelib, "asyncpool_venv_probe.py").write_text("VALUE = 42\n")
        secret = str(private / "secret.txt")
        (tmp_path / "program.py").write_text(textwrap.dedent(f"""
            import os, subprocess, sys
            probe = "import sys, asyncpool_venv_probe as p; print(sys.prefix, p.VALUE)"
            child = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
            print(sys.executable, child.returncode, child.stdout.strip(), child.stderr[-300:])
            print(os.path.exists({secret!r}))
        """))
        script = textwrap.dedent("""
            import pathlib, sys
            sys.path.insert(0, sys.argv[1])
            from asyncpool.sandbox import run_python
            result = run_python(pathlib.Path("program.py").read_text(), timeout=30)
            print(result.status)
            print(result.stdout_tail, end="")
        """)
        out = subprocess.run(
            [str(py), "-c", script, str(Path(__file__).resolve().parents[1])],
            capture_output=True, text=True, cwd=tmp_path, check=False,
        )  # fmt: skip
        lines = out.stdout.splitlines()
        assert lines[:1] == ["passed"], (out.stdout, out.stderr[-2000:])
        venv = str(private / "venv")
        assert lines[1] == f"{venv}/bin/python 0 {venv} 42 ", lines
        assert lines[2] == "False", lines
    finally:
        shutil.rmtree(private, ignore_errors=True)
