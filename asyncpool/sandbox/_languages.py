"""Languages beyond Python: compile in the jail, cache the binary, run it in the jail many times.

:func:`asyncpool.sandbox.run_program` and :func:`asyncpool.sandbox.run_stdio` take
``language=`` (``"cpp"``, ``"java"``, ``"go"``, ``"nodejs"``, ``"rust"``; ``"python"`` is their
own path) and hand those runs to this module. The commands are SandboxFusion's:

=========  ==============================================  ===================================
language   compile (in the jail)                           run (in the jail)
=========  ==============================================  ===================================
cpp        ``g++ -std=c++17 -O2 -o main main.cpp``        ``./main``
java       ``javac Main.java`` (``X.java`` for a public    ``java -ea -cp classes.zip Main``
           type X, :func:`java_main_class`; ``-cp``        (X when it has ``main``, else the
           with :data:`LIBRARIES` when present)            top-level class with ``main``; the
                                                           libraries after the zip)
go         ``go build -o main main.go``                    ``./main``
rust       ``rustc -O -o main main.rs``                    ``./main``
nodejs     (none)                                          ``node main.js``
=========  ==============================================  ===================================

What is guaranteed:

* **Compiling is running untrusted code** (``#include "/dev/random"``, template or const-eval
  bombs): the compiler runs in the same jail as every program (namespaces, a sandbox uid,
  seccomp, limits, own-time deadline, per-run cleanup), with its own ``compile_timeout`` and
  ``compile_memory_mb``; what it printed and how it ended is the run's ``compile_result``,
  reported apart from the program's result. A compile that does not succeed makes the run
  "failed" and nothing is run.
* **Compile once, run many**: the artefact (the binary; Java's classes, zipped in the jail) is
  fetched back (``fetch_files``, at most ``FETCH_FILE_LIMIT`` = 64 MiB, ``RLIMIT_FSIZE`` = 16 MiB
  in the jail) into a :class:`CompileCache` (:mod:`asyncpool.sandbox._compile_cache`) keyed
  by sha256 of (language, toolchain version, compile command, source): a directory this
  process creates 0700 (``tempfile.mkdtemp``), bounded in bytes (least recently used out),
  removed at exit, never shown to a run. Its index
  (name, sha256, size) lives in this process's memory; an artefact whose bytes no longer match
  its sha256 is dropped and compiled again. A run gets its own *copy* (``files=``) and a tiny
  trusted Python prologue, already jailed, that ``chmod``\\ s it and ``execve``\\ s it (or the
  language's runtime on it) with a small fixed environment: every case of ``run_stdio`` forks
  the prepared interpreter and execs the cached binary, it never compiles again. The trusted
  side never parses an artefact (Java's zip is read by the jailed JVM only).
* **Toolchains are found, not assumed**: :func:`toolchain` finds each one (``shutil.which``,
  its version string) once per process; a missing one raises
  :class:`~asyncpool.errors.SandboxError` naming the Debian package to install. Toolchains
  installed outside the jail's system directories (rustup's, under a 0700 home) are bound
  read-only into the jail by the fork server (:func:`jail_dirs`).

Limits, and why they differ by runtime (documented, not hidden):

* ``memory_mb`` is ``RLIMIT_AS`` for native programs (C++, Rust), as for Python, where the host
  has no memory controller (with one, the run's cgroup holds its resident memory and
  ``RLIMIT_AS`` is only a backstop 4 GiB above, see :mod:`asyncpool.sandbox._cgroup`). The
  JVM, V8 and the Go runtime reserve far more address space than they use (the JVM 1 GiB of
  compressed class space alone, V8 its code range, Go its page summaries: each fails to
  *start* under a 512 MiB ``RLIMIT_AS``). For them ``memory_mb`` bounds the heap through the
  runtime's own flag (``-Xmx``, ``--max-old-space-size``, ``GOMEMLIMIT``, the last a soft
  limit) and ``RLIMIT_AS`` is ``memory_mb`` plus :attr:`Language.extra_address_mb` (and the
  backstop). Their resident memory, all the run's
  processes together, is held to ``memory_mb`` by the run's memory cgroup
  (:mod:`asyncpool.sandbox._cgroup`; ``Spec.resident_mb``), as every run's is, where the host has
  a memory controller; without one, by the heap flag plus the runtime's own overhead only.
* ``RLIMIT_NPROC`` (threads count) is the sandbox's :data:`~asyncpool.sandbox.MAX_PROCESSES`
  for native programs; the JVM, Node and Go start a dozen threads of their own, so their runs
  get :attr:`Language.run_nproc`, and compilers (``rustc``'s and ``go build``'s workers,
  ``javac``'s JVM) get :data:`COMPILE_NPROC`. A fork bomb still stops at that number.
* A status the sandbox calls "failed" or "crashed" becomes "memory" when the runtime said it ran
  out of memory on stderr (``std::bad_alloc``, ``java.lang.OutOfMemoryError``, V8's "heap out
  of memory", Go's "out of memory", Rust's "memory allocation of"): a program can print that
  itself, which only turns its own failure into another failure, never into a pass.
* ``duration`` is own time as for Python programs. A compile's counts its passes' waits for a
  CPU out too (``g++`` waits for ``cc1plus``, ``as`` and ``ld`` in turn; the server reads
  their waits while they run, ``_zygote_job.Job.refresh_others``): 1.4 s of ``g++`` beside 8
  busy processes on 2 cores took 8-12 s of wall-clock time and was 8-9 s of own time, now
  2.2-2.9 s (its CPU time there, 1.9-2.3 s, is own time's floor), so a compile that fits
  ``compile_timeout`` on an idle machine is no "compile_error" on a busy one.
* Go: the Debian ``golang`` (1.19) ships a compiled standard library, so ``go build`` in a
  fresh jail takes a fraction of a second. A Go from 1.20 on does not, and would rebuild the
  standard library in every compile's (per-run, empty) ``GOCACHE``.
* Without namespaces (the caller not root) the run's directory lives under the machine's
  ``/tmp``: a host that mounts it ``noexec`` cannot run compiled programs (the prologue says
  so on stderr).

The server's ``/run_code`` runs these languages through :func:`run_program`
(:mod:`asyncpool.server.sandboxfusion`), and ``/verify`` its stdin tests through
:func:`run_stdio`; ``asyncpool bench --workload stdio`` measures C++ and Python stdio judging
(:mod:`asyncpool._bench.workloads.stdio`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from asyncpool.errors import SandboxError
from asyncpool.sandbox._arguments import _validate
from asyncpool.sandbox._compile_cache import CompileCache, cache_key, compile_cache
from asyncpool.sandbox._results import OUTPUT_LIMIT_BYTES, ProgramResult, StdioResult, _decode
from asyncpool.sandbox._run import MAX_PROCESSES, SandboxStatus, Spec, run

#: ``RLIMIT_NPROC`` of a compile (rustc's codegen threads, go build's workers, javac's JVM).
COMPILE_NPROC = 64
#: Default limits of a compile (SandboxFusion's default compile timeout is 10 s too).
COMPILE_TIMEOUT = 10.0
COMPILE_MEMORY_MB = 2048

#: The languages ``language=`` accepts (``"python"`` is the sandbox's own path).
LANGUAGES = ("python", "cpp", "java", "go", "nodejs", "rust")

# The jail's system directories (asyncpool.sandbox._ns.VISIBLE): a toolchain below one of them is
# visible to programs without a bind of its own.
_VISIBLE = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr", "/etc")
_BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
_TAIL = 4096  # bytes of a compile's output kept with its cache entry

#: The libraries SandboxFusion's runtime images ship and its runner tests (and the datasets
#: written against it) use: ``javatuples`` on Java's class path (``-cp``, compile and run) and
#: ``lodash`` among Node's modules. Here they are Debian packages (``libjavatuples-java``,
#: ``node-lodash``: the README's table), used when installed; Debian's ``node-*`` packages all
#: install into ``/usr/share/nodejs``, which Node does not search by itself. Read-only system
#: files the jail already shows: a program gains nothing it could not already read.
LIBRARIES: dict[str, tuple[str, ...]] = {
    "java": ("/usr/share/java/javatuples.jar",),
    "nodejs": ("/usr/share/nodejs",),
}


@dataclass(frozen=True, slots=True)
class Language:
    """How one language is compiled and run (the commands in the module docstring)."""

    name: str
    tool: str  # the executable whose presence means the language is available
    package: str  # the Debian package that provides it
    source: str  # the file name the source is written to
    artefact: str  # what the run gets: the compiled file (or the source itself)
    compiled: bool
    extra_address_mb: int = 0  # RLIMIT_AS beyond memory_mb (runtimes that reserve much)
    run_nproc: int = MAX_PROCESSES
    memory_markers: tuple[str, ...] = ()  # stderr of a run out of memory
    main_class: str = "Main"  # Java: the class the JVM runs (see java_main_class)


_SPECS: dict[str, Language] = {
    "python": Language("python", "python3", "python3", "main.py", "main.py", compiled=False),
    "cpp": Language("cpp", "g++", "g++", "main.cpp", "main", compiled=True,
                    memory_markers=("std::bad_alloc",)),
    "java": Language("java", "javac", "default-jdk-headless", "Main.java", "classes.zip",
                  compiled=True, extra_address_mb=1536, run_nproc=48,
                  memory_markers=("java.lang.OutOfMemoryError",)),
    "go": Language("go", "go", "golang", "main.go", "main", compiled=True, extra_address_mb=1024,
                run_nproc=48, memory_markers=("out of memory",)),
    "nodejs": Language("nodejs", "node", "nodejs", "main.js", "main.js", compiled=False,
                    extra_address_mb=2048, run_nproc=48, memory_markers=("heap out of memory",)),
    "rust": Language("rust", "rustc", "rustc", "main.rs", "main", compiled=True,
                  memory_markers=("memory allocation of",)),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Toolchain:
    """A language's toolchain as found on this machine."""

    language: str
    version: str  # the first line of its version output: part of the cache key
    executables: Mapping[str, str]  # role ("compiler", "runtime") -> absolute path
    dirs: tuple[str, ...] = ()  # directories the jail must show (outside its system dirs)
    #: Libraries programs may use (:data:`LIBRARIES`): Java's jars on the class path, Node's
    #: module directories on ``NODE_PATH``. Only the ones present, all under the jail's ``/usr``.
    libraries: tuple[str, ...] = ()


def check_language(language: object) -> Language:
    """The spec of ``language``; ``TypeError``/``ValueError`` for anything else."""
    if not isinstance(language, str):
        raise TypeError(f"language must be a str, not {type(language).__name__}")
    spec = _SPECS.get(language)
    if spec is None:
        raise ValueError(f"unknown language {language!r}; known: {', '.join(LANGUAGES)}")
    return spec


def _visible(path: str) -> bool:
    return any(path == d or path.startswith(d + "/") for d in _VISIBLE)


def _output(argv: list[str]) -> str:
    """What a trusted toolchain command prints (stdout, else stderr), stripped; '' on failure."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    text = (done.stdout or done.stderr).decode("utf-8", "replace").strip()
    return text if done.returncode == 0 else ""


@functools.cache
def _rust_sysroot() -> str | None:
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    # rustup's rustc is a proxy that needs the caller's home; the real compiler is in the
    # toolchain's sysroot, which the jail is shown.
    sysroot = _output([rustc, "--print", "sysroot"])
    return os.path.realpath(sysroot) if sysroot and os.path.isdir(sysroot) else None


@functools.cache
def _go_root() -> str | None:
    go = shutil.which("go")
    if go is None:
        return None
    root = _output([go, "env", "GOROOT"])
    return os.path.realpath(root) if root and os.path.isdir(root) else None


def _home_of(executable: str) -> str:
    """The installation directory of an executable (``.../bin/x`` -> ``...``), real path."""
    return os.path.dirname(os.path.dirname(os.path.realpath(executable)))


@functools.cache
def jail_dirs() -> list[str]:
    """Directories the fork server binds read-only into the jail besides its system ones: the
    installation of each toolchain that lives elsewhere (rustup's sysroot under a home, a
    JDK or Node under ``/opt``). Cheap when every toolchain is a system package (no
    subprocess then, except ``rustc --print sysroot`` when ``rustc`` is found at all)."""
    dirs: list[str] = []
    sysroot = _rust_sysroot()
    if sysroot and not _visible(sysroot):
        dirs.append(sysroot)
    for tool in ("g++", "javac", "java", "node"):
        path = shutil.which(tool)
        if path and not _visible(os.path.realpath(path)):
            dirs.append(_home_of(path))
    go = shutil.which("go")
    if go and not _visible(os.path.realpath(go)):
        root = _go_root()
        if root:
            dirs.append(root)
    return sorted({d for d in dirs if d and d != "/" and not d.startswith("/tmp")})


_tool_lock = threading.Lock()
_found: dict[str, Toolchain | None] = {}


def _libraries(language: str) -> tuple[str, ...]:
    """The :data:`LIBRARIES` of ``language`` present here (and visible in the jail)."""
    return tuple(
        path for path in LIBRARIES.get(language, ())
        if _visible(os.path.realpath(path)) and os.path.exists(path)
    )  # fmt: skip


def _discover(spec: Language) -> Toolchain | None:
    name = spec.name
    if name == "python":
        import sys

        return Toolchain(name, f"Python {sys.version.split()[0]}", {"runtime": sys.executable})
    if name == "rust":
        sysroot = _rust_sysroot()
        rustc = os.path.join(sysroot, "bin", "rustc") if sysroot else ""
        if not (rustc and os.access(rustc, os.X_OK)):
            return None
        version = _output([rustc, "--version"])
        return (
            Toolchain(name, version, {"compiler": rustc}, tuple(jail_dirs())) if version else None
        )
    if name == "go":
        go = shutil.which("go")
        root = _go_root()
        if go is None or root is None:
            return None
        version = _output([go, "version"])
        compiler = os.path.join(root, "bin", "go")
        if not version:
            return None
        return Toolchain(name, version, {"compiler": compiler}, tuple(jail_dirs()))
    if name == "java":
        javac, java = shutil.which("javac"), shutil.which("java")
        if javac is None or java is None:
            return None
        version = _output([javac, "-version"])
        runtime = _output([java, "-version"]).splitlines()
        if not (version and runtime):
            return None
        # Both halves of the JDK: a class file of one javac may not run on another java.
        exes = {"compiler": os.path.realpath(javac), "runtime": os.path.realpath(java)}
        return Toolchain(
            name, f"{version}; {runtime[0]}", exes, tuple(jail_dirs()), _libraries(name)
        )
    path = shutil.which(spec.tool)
    if path is None:
        return None
    lines = _output([path, "--version"]).splitlines()
    if not lines:
        return None
    role = "compiler" if spec.compiled else "runtime"
    return Toolchain(
        name, lines[0], {role: os.path.realpath(path)}, tuple(jail_dirs()), _libraries(name)
    )


def toolchain(language: str) -> Toolchain:
    """The toolchain of ``language`` (found once per process), or
    :class:`~asyncpool.errors.SandboxError` naming the package to install."""
    spec = check_language(language)
    with _tool_lock:
        if language not in _found:
            _found[language] = _discover(spec)
        found = _found[language]
    if found is None:
        raise SandboxError(
            f"no {spec.tool} on this machine: {language} needs the Debian package "
            f"{spec.package!r} (apt-get install {spec.package})"
        )
    return found


def available() -> dict[str, str]:
    """``{language: toolchain version}`` of every language this machine can run."""
    out: dict[str, str] = {}
    for name in LANGUAGES:
        with contextlib.suppress(SandboxError):
            out[name] = toolchain(name).version
    return out


# -- the commands ---------------------------------------------------------------------------------


def _compile_argv(spec: Language, tools: Toolchain) -> list[str]:
    compiler = tools.executables.get("compiler", "")
    if spec.name == "cpp":
        return [compiler, "-std=c++17", "-O2", "-o", spec.artefact, spec.source]
    if spec.name == "rust":
        return [compiler, "-O", "-o", spec.artefact, spec.source]
    if spec.name == "go":
        return [compiler, "build", "-o", spec.artefact, spec.source]
    if spec.name == "java":
        jvm = ["-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1", "-J-Xss16m", "-J-XX:-UsePerfData"]
        classpath = ["-cp", ":".join(tools.libraries)] if tools.libraries else []
        return [compiler, *jvm, "-encoding", "UTF-8", *classpath, "-d", "classes", spec.source]
    raise AssertionError(spec.name)


def _compile_env(spec: Language) -> dict[str, str]:
    env = dict(_BASE_ENV)
    if spec.name == "go":
        # No module, no network, no cgo (its #cgo directives would run gcc with the source's
        # flags); the build cache is the run's own directory, removed with it.
        env.update(
            GOCACHE="/tmp/.gocache", GOPATH="/tmp/.gopath", GO111MODULE="off", CGO_ENABLED="0",
            GOTOOLCHAIN="local", HOME="/tmp",
        )  # fmt: skip
    if spec.name == "java":
        env["MALLOC_ARENA_MAX"] = "2"
    return env


def _run_argv(spec: Language, tools: Toolchain, memory_mb: int) -> tuple[list[str], dict[str, str]]:
    env = dict(_BASE_ENV)
    if spec.name == "java":
        java = tools.executables["runtime"]
        env["MALLOC_ARENA_MAX"] = "2"
        # One large array must fit in the serial collector's old generation, NewRatio/(NewRatio
        # +1) of the heap: at the default ratio (2) an int[50_000_000] (200 MB) was an
        # OutOfMemoryError, "memory", at memory_mb=256 (at most 169 MiB fitted), where the
        # JVM's default collector (SandboxFusion's plain ``java``) holds 242 MiB. At 5 an array
        # may take 5/6 of the heap (212 MiB of 256), about what the run's memory cgroup leaves
        # beside the JVM itself.
        argv = [
            java, f"-Xmx{memory_mb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:NewRatio=5",
            "-XX:-UsePerfData", "-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=64m",
            "-XX:CompressedClassSpaceSize=128m", "-ea",
            "-cp", ":".join((spec.artefact, *tools.libraries)), spec.main_class,
        ]  # fmt: skip
        return argv, env
    if spec.name == "nodejs":
        env["UV_THREADPOOL_SIZE"] = "2"
        if tools.libraries:
            env["NODE_PATH"] = ":".join(tools.libraries)
        node = tools.executables["runtime"]
        return [node, f"--max-old-space-size={memory_mb}", "--stack-size=65500", spec.artefact], env
    if spec.name == "go":
        env["GOMEMLIMIT"] = f"{memory_mb}MiB"
    return ["./" + spec.artefact], env


# The prologues: trusted code, but it already runs jailed (uid, seccomp, limits) like any
# program. Values are inserted with repr(), never by formatting untrusted text. Before execve
# the signals CPython ignores go back to their defaults, as subprocess's restore_signals does
# and a shell gives: with SIGXFSZ ignored a C++ program writing past RLIMIT_FSIZE lost the rest
# of its output silently and exited 0 (a truncated answer), and with SIGPIPE ignored one
# writing to a closed pipe went on.
_EXEC_PROLOGUE = """\
import os, signal, sys
os.chmod({artefact!r}, 0o700) if {chmod!r} else None
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
try:
    os.execve({argv[0]!r}, {argv!r}, {env!r})
except OSError as exc:
    sys.stderr.write(f"asyncpool: cannot execute the program: {{exc}}\\n")
    sys.exit(126)
"""

# javac writes one class file per class: zip them (stored, in the jail) into the one artefact the
# caller fetches; the JVM runs it as its class path. The zip is never opened on the trusted side.
_JAVA_COMPILE = """\
import os, signal, subprocess, sys, zipfile
done = subprocess.run({argv!r}, env={env!r})
if done.returncode < 0:
    os.kill(os.getpid(), -done.returncode)
if done.returncode:
    sys.exit(done.returncode)
with zipfile.ZipFile({artefact!r}, "w", zipfile.ZIP_STORED) as zf:
    for root, _, names in os.walk("classes"):
        for name in sorted(names):
            path = os.path.join(root, name)
            zf.write(path, os.path.relpath(path, "classes"))
"""


# -- results -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompileResult:
    """How the compile of a solution went (SandboxFusion's ``compile_result``).

    ``status`` is "passed" when the compiler succeeded, "failed" when it reported errors,
    "timeout"/"memory"/"crashed" when the jail stopped it. ``cached``: the artefact came from
    the compile cache (``stdout``/``stderr`` are then the original compile's, ``duration`` 0).
    """

    status: SandboxStatus
    returncode: int | None
    stdout: str
    stderr: str
    duration: float
    cached: bool = False

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True, slots=True)
class LanguageProgramResult(ProgramResult):
    """``run_program``'s result for a language other than Python: the program's result
    (``status`` "failed" and nothing run when the compile did not succeed) plus how the
    compile went (``None`` for languages that are not compiled)."""

    compile_result: CompileResult | None = None


@dataclass(frozen=True, slots=True)
class LanguageStdioResult(StdioResult):
    """``run_stdio``'s verdict for a language other than Python, plus the compile's result
    (``status`` "failed", ``verdict`` "compile_error" and no cases when the compile did not
    succeed)."""

    compile_result: CompileResult | None = None


# -- compile, then run ----------------------------------------------------------------------------


def _with_marker(spec: Language, status: SandboxStatus, stderr: bytes) -> SandboxStatus:
    if status in ("failed", "crashed") and any(m.encode() in stderr for m in spec.memory_markers):
        return "memory"
    return status


@dataclass(frozen=True, slots=True)
class Prepared:
    """A solution ready to run: its artefact and the command that runs it."""

    spec: Language
    tools: Toolchain
    artefact: bytes
    compile_result: CompileResult | None

    def case_spec(
        self, stdin: bytes, timeout: float, memory_mb: int, *, stdout_head: int,
        files: Mapping[str, bytes] | None = None, fetch: Sequence[str] = (),
        output_reserve: int = 0,
    ) -> Spec:  # fmt: skip
        """The sandbox run of one case: the prologue that execs the artefact's copy."""
        argv, env = _run_argv(self.spec, self.tools, memory_mb)
        prologue = _EXEC_PROLOGUE.format(
            artefact=self.spec.artefact, chmod=self.spec.compiled and self.spec.name != "java",
            argv=argv, env=env,
        )  # fmt: skip
        all_files = {**(files or {}), self.spec.artefact: self.artefact}
        return Spec(
            prologue.encode(), timeout, memory_mb + self.spec.extra_address_mb,
            merged_output=False, stdout_head=stdout_head, stdin=stdin, files=all_files,
            fetch=fetch, nproc=self.spec.run_nproc, resident_mb=memory_mb,
            output_reserve=output_reserve,
        )  # fmt: skip

    def status(self, status: SandboxStatus, stderr: bytes) -> SandboxStatus:
        return _with_marker(self.spec, status, stderr)


def _compile(
    spec: Language, tools: Toolchain, source: bytes, timeout: float, memory_mb: int
) -> tuple[bytes | None, CompileResult]:
    argv = _compile_argv(spec, tools)
    env = _compile_env(spec)
    if spec.name == "java":
        program = _JAVA_COMPILE.format(argv=argv, env=env, artefact=spec.artefact)
    else:
        program = _EXEC_PROLOGUE.format(artefact="", chmod=False, argv=argv, env=env)
    raw = run(
        Spec(
            program.encode(), timeout, memory_mb + spec.extra_address_mb, merged_output=False,
            stdout_head=OUTPUT_LIMIT_BYTES, stdin=b"", files={spec.source: source},
            fetch=[spec.artefact], nproc=COMPILE_NPROC, resident_mb=memory_mb, toolchain=True,
        )
    )  # fmt: skip
    status = raw.status
    artefact = raw.files.get(spec.artefact)
    if status == "passed" and not artefact:
        status = "failed"  # exit 0 without the artefact: nothing to run
    result = CompileResult(
        status, raw.returncode, _decode(raw.stdout), _decode(raw.stderr), raw.duration
    )
    return (artefact if status == "passed" else None), result


# Java: which class to run. Codeforces and most judges take any public class name (javac needs
# the file named after it); SandboxFusion asks for ``Main``. Found on the trusted side in the
# source's text, comments and literals blanked first, at brace depth 0 only (an inner
# ``public class Node`` is not it); a name that is not a plain ASCII identifier is never used.
_JAVA_NOISE = re.compile(
    r'//[^\n]*|/\*.*?\*/|"""[\s\S]*?"""|"(?:\\.|[^"\\\n])*"|' r"'(?:\\.|[^'\\\n])*'", re.S
)
_JAVA_SCAN = re.compile(
    r"[{}]|(?P<public>\bpublic\s+)?(?:(?:final|abstract|strictfp|sealed|non-sealed|static)\s+)*"
    r"\b(?:class|interface|enum|record)\s+(?P<name>[A-Za-z_$][A-Za-z0-9_$]{0,199})(?![A-Za-z0-9_$])"
)
# A method ``main`` of a ``String`` array (``String[] a``, ``String... a``, ``String a[]``)
# whose modifiers, in any order, include ``static`` and neither ``private`` nor ``protected``:
# ``public static void``, ``static public void``, ``public static final void``, ``static
# synchronized void`` all declare the JVM's entry point; ``static private void main(int[] a)``
# of a helper class does not (helper 42's probe: it was taken for the class to run).
_JAVA_MAIN = re.compile(
    r"(?<![\w$])((?:(?:public|protected|private|static|final|synchronized|strictfp)\s+)+)"
    r"void\s+main\s*\(\s*(?:final\s+)?String\s*(?:\[\s*\]|\.\.\.|\s\w+\s*\[\s*\])"
)


def _declares_java_main(body: str) -> bool:
    """Whether a type's ``body`` declares the JVM's entry point (see :data:`_JAVA_MAIN`)."""
    for m in _JAVA_MAIN.finditer(body):
        modifiers = m.group(1).split()
        if "static" in modifiers and not {"private", "protected"} & set(modifiers):
            return True
    return False


def java_main_class(source: str) -> tuple[str, str | None]:
    """The class a Java solution is run as, and its public top-level type if it has one (javac
    needs that one in ``<name>.java``). The class run: the public type when its body declares
    ``static void main(``; else ``Main`` when it has a top-level type of that name; else the
    first top-level type whose body declares ``main``; else the public type, or ``Main`` (javac
    or the JVM then says what is wrong). A public ``enum`` or ``record`` beside ``class Main``
    (legal Java, judged "runtime_error" when the enum was run) is only the file's name."""
    text = _JAVA_NOISE.sub(" ", source)
    depth = 0
    opened: str | None = None  # the top-level type whose body is open
    pending: str | None = None
    public: str | None = None
    start = 0
    bodies: list[tuple[str, str]] = []
    for m in _JAVA_SCAN.finditer(text):
        token = m.group(0)
        if token == "{":
            if depth == 0 and pending is not None:
                opened, start, pending = pending, m.end(), None
            depth += 1
        elif token == "}":
            depth = max(0, depth - 1)
            if depth == 0 and opened is not None:
                bodies.append((opened, text[start : m.start()]))
                opened = None
        elif depth == 0:
            pending = m.group("name")
            if m.group("public") and public is None:
                public = pending
    mains = [name for name, body in bodies if _declares_java_main(body)]
    if public is not None and public in mains:
        return public, public
    if any(name == "Main" for name, _ in bodies):
        return "Main", public
    if mains:
        return mains[0], public
    return public or "Main", public


def prepare(
    language: str, source: str, *, compile_timeout: float = COMPILE_TIMEOUT,
    compile_memory_mb: int = COMPILE_MEMORY_MB, cache: CompileCache | None = None,
) -> Prepared | CompileResult:  # fmt: skip
    """Compile ``source`` in the jail (or take it from the cache); the :class:`Prepared`
    solution, or the :class:`CompileResult` of a compile that did not succeed."""
    spec = check_language(language)
    if language == "python":
        raise ValueError("python runs on the sandbox's own path, not through prepare()")
    tools = toolchain(language)
    code = source.encode("utf-8", "surrogatepass")
    if language == "java":
        main, public = java_main_class(source)
        file = f"{public}.java" if public is not None else spec.source
        spec = dataclasses.replace(spec, main_class=main, source=file)
    if not spec.compiled:
        return Prepared(spec, tools, code, None)
    cache = compile_cache() if cache is None else cache
    key = cache_key(language, tools.version, _compile_argv(spec, tools), code)
    with cache.key_lock(key):
        hit = cache.get(key)
        if hit is not None:
            data, first = hit
            result = CompileResult(
                "passed", first.returncode, first.stdout, first.stderr, 0.0, True
            )
            return Prepared(spec, tools, data, result)
        with cache._lock:
            cache.compilations += 1
        artefact, result = _compile(spec, tools, code, compile_timeout, compile_memory_mb)
        if artefact is None:
            return result
        kept = CompileResult(result.status, result.returncode, result.stdout[-_TAIL:],
                             result.stderr[-_TAIL:], result.duration)  # fmt: skip
        cache.put(key, artefact, kept)
    return Prepared(spec, tools, artefact, result)


def prepare_stdio(
    language: str, solution: str, compile_timeout: float
) -> Prepared | LanguageStdioResult:
    """``run_stdio``'s compile step: the :class:`Prepared` solution its cases run, or, when the
    compile did not succeed, the whole verdict ("failed", verdict "compile_error", no case run)."""
    check_language(language)
    _check_compile_limits(compile_timeout, COMPILE_MEMORY_MB)
    prepared = prepare(language, solution, compile_timeout=compile_timeout)
    if isinstance(prepared, CompileResult):
        return LanguageStdioResult("failed", [], 0.0, "compile_error", compile_result=prepared)
    return prepared


def with_compile(result: StdioResult, prepared: Prepared | None) -> StdioResult:
    """``result`` carrying the compile's result (unchanged for Python, ``prepared`` None)."""
    if prepared is None:
        return result
    return LanguageStdioResult(
        result.status, result.cases, result.duration, result.verdict,
        compile_result=prepared.compile_result,
    )  # fmt: skip


def _check_compile_limits(compile_timeout: object, compile_memory_mb: object) -> None:
    try:
        _validate("", compile_timeout, compile_memory_mb, name="compile")
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"compile limits: {exc}") from None


def run_program(
    code: str, *, language: str, stdin: bytes, files: Mapping[str, bytes],
    fetch: Sequence[str], timeout: float, memory_mb: int,
    compile_timeout: float = COMPILE_TIMEOUT, compile_memory_mb: int = COMPILE_MEMORY_MB,
) -> LanguageProgramResult:  # fmt: skip
    """:func:`asyncpool.sandbox.run_program` for a compiled or non-Python language (arguments
    already checked there)."""
    spec = check_language(language)
    _check_compile_limits(compile_timeout, compile_memory_mb)
    for name in (*files, *fetch):
        if name == spec.artefact or name.startswith(spec.artefact + "/"):
            raise ValueError(f"{name!r} is where the {language} program itself is put")
    prepared = prepare(language, code, compile_timeout=compile_timeout,
                       compile_memory_mb=compile_memory_mb)  # fmt: skip
    if isinstance(prepared, CompileResult):
        return LanguageProgramResult("failed", None, "", "", 0.0, {}, prepared)
    raw = run(prepared.case_spec(stdin, timeout, memory_mb, stdout_head=OUTPUT_LIMIT_BYTES,
                                 files=files, fetch=fetch))  # fmt: skip
    return LanguageProgramResult(
        prepared.status(raw.status, raw.stderr), raw.returncode, _decode(raw.stdout),
        _decode(raw.stderr), raw.duration,
        {name: raw.files[name] for name in fetch if name in raw.files}, prepared.compile_result,
    )  # fmt: skip


__all__ = [
    "LANGUAGES",
    "CompileCache",
    "CompileResult",
    "Language",
    "LanguageProgramResult",
    "LanguageStdioResult",
    "Prepared",
    "run_program",
    "Toolchain",
    "available",
    "cache_key",
    "check_language",
    "compile_cache",
    "jail_dirs",
    "prepare",
    "toolchain",
    "with_compile",
]
