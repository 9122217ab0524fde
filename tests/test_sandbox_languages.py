"""Languages beyond Python (:mod:`asyncpool.sandbox._languages`): C++, Java, Go, Rust and Node
programs compiled in the jail, cached, and run in the jail through ``run_program(language=...)``.

For each language whose toolchain this machine has: a+b on stdin, a compile error reported as a
compile error (nothing run), a runtime error, a wrong answer, a time limit, and the compile cache
(a second run of the same source compiles nothing). Then a small hostile set per compiled
language: a fork bomb, writes outside the run's directory, reading ``/etc/shadow`` and an
expected output left on the caller's disk, compile-time bombs (``#include "/dev/random"``,
``include_bytes!("/dev/random")``): none passes, each ends within a bounded time. A language
whose toolchain is absent is skipped with the package to install.
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from asyncpool.errors import SandboxError
from asyncpool.sandbox import _compile_cache, _languages, run_program, run_stdio
from asyncpool.sandbox._languages import (
    CompileResult,
    LanguageProgramResult,
    LanguageStdioResult,
    java_main_class,
)

ROOT = os.geteuid() == 0
AVAILABLE = _languages.available()


def needs(language: str) -> pytest.MarkDecorator:
    spec = _languages.check_language(language)
    return pytest.mark.skipif(
        language not in AVAILABLE,
        reason=f"no {spec.tool} here: apt-get install {spec.package}",
    )


def unique(source: str, language: str) -> str:
    """The source with a unique comment, so the compile cache of earlier tests cannot serve it."""
    mark = "#" if language == "python" else "//"
    return f"{source}\n{mark} {uuid.uuid4().hex}\n"


# a+b, then the same program with a wrong answer, a runtime error and an endless loop
AB = {
    "cpp": '#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}',
    "java": (
        "import java.util.*;\npublic class Main { public static void main(String[] x) {"
        " Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }"
    ),
    "go": (
        'package main\nimport "fmt"\n'
        "func main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(a + b) }"
    ),
    "rust": (
        "use std::io::Read;\nfn main() { let mut s = String::new();"
        " std::io::stdin().read_to_string(&mut s).unwrap();"
        " let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();"
        ' println!("{}", v[0] + v[1]); }'
    ),
    "nodejs": (
        'const v = require("fs").readFileSync(0, "utf8").trim().split(/\\s+/).map(Number);'
        " console.log(v[0] + v[1]);"
    ),
}
WRONG = {
    "cpp": '#include <iostream>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a-b<<"\\n";}',
    "java": AB["java"].replace("s.nextLong() + s.nextLong()", "s.nextLong() - s.nextLong()"),
    "go": AB["go"].replace("a + b", "a - b"),
    "rust": AB["rust"].replace("v[0] + v[1]", "v[0] - v[1]"),
    "nodejs": AB["nodejs"].replace("v[0] + v[1]", "v[0] - v[1]"),
}
RUNTIME_ERROR = {
    "cpp": "#include <vector>\n#include <cstdio>\nint main(){std::vector<int> v;"
    ' printf("%d\\n", v.at(5)); }',
    "java": "public class Main { public static void main(String[] x) {"
    " int[] a = new int[1]; System.out.println(a[5]); } }",
    "go": 'package main\nimport "fmt"\nfunc main() { var a []int; i := 5; fmt.Println(a[i]) }',
    "rust": "fn main() { let v: Vec<i32> = Vec::new(); let i = std::env::args().count() + 4;"
    ' println!("{}", v[i]); }',
    "nodejs": "null.x;",
}
LOOP = {
    "cpp": "int main(){ volatile unsigned long i = 0; while (true) i++; }",
    "java": "public class Main { public static void main(String[] x) {"
    " long i = 0; while (true) { i++; if (i == -1) break; } } }",
    "go": "package main\nfunc main() { i := 0; for { i++ } }",
    "rust": "fn main() { let mut i: u64 = 0;"
    " loop { i = std::hint::black_box(i.wrapping_add(1)); } }",
    "nodejs": "let i = 0; while (true) { i++; }",
}
COMPILE_ERROR = {
    "cpp": "int main() { return undefined_name; }",
    "java": "public class Main { public static void main(String[] x) { int y = ; } }",
    "go": "package main\nfunc main() { undefinedName() }",
    "rust": 'fn main() { let x: u32 = "no"; }',
}
# what each compiler says about its COMPILE_ERROR
COMPILER_SAYS = {
    "cpp": "undefined_name",
    "java": "illegal start of expression",
    "go": "undefined: undefinedName",
    "rust": "mismatched types",
}
ALL = sorted(AB)
COMPILED = sorted(COMPILE_ERROR)


def run(language: str, source: str, **kw: object) -> LanguageProgramResult:
    result = run_program(source, language=language, **kw)  # type: ignore[arg-type]
    assert isinstance(result, LanguageProgramResult)
    return result


# -- arguments and toolchains ---------------------------------------------------------------------


def test_an_unknown_language_is_a_value_error_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="unknown language 'cobol'"):
        run_program("x", language="cobol")
    with pytest.raises(TypeError, match="language must be a str"):
        run_program("x", language=3)  # type: ignore[arg-type]


def test_a_bad_compile_timeout_is_rejected_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="compile limits"):
        run_program(AB["cpp"], language="cpp", compile_timeout=-1)


def test_the_artefact_name_cannot_be_taken_by_the_callers_files() -> None:
    with pytest.raises(ValueError, match="where the cpp program itself is put"):
        run_program(AB["cpp"], language="cpp", files={"main": b"x"})


def test_a_missing_toolchain_names_the_package_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # The lookup as this machine would do it if g++ were not on PATH.
    monkeypatch.setitem(_languages._found, "cpp", None)
    with pytest.raises(SandboxError, match="apt-get install g\\+\\+"):
        run_program(AB["cpp"], language="cpp")


def test_python_runs_on_the_sandboxs_own_path() -> None:
    result = run_program("print(input())", language="python", stdin="hi\n")
    assert result.status == "passed"
    assert result.stdout == "hi\n"
    assert not isinstance(result, LanguageProgramResult)


def test_the_cache_key_covers_language_version_command_and_source() -> None:
    base = _languages.cache_key("cpp", "g++ 12", ["g++", "-O2"], b"int main(){}")
    assert base != _languages.cache_key("rust", "g++ 12", ["g++", "-O2"], b"int main(){}")
    assert base != _languages.cache_key("cpp", "g++ 13", ["g++", "-O2"], b"int main(){}")
    assert base != _languages.cache_key("cpp", "g++ 12", ["g++", "-O0"], b"int main(){}")
    assert base != _languages.cache_key("cpp", "g++ 12", ["g++", "-O2"], b"int main(){ }")
    # length-prefixed: moving bytes between parts changes the key
    assert _languages.cache_key("a", "bc", [], b"") != _languages.cache_key("ab", "c", [], b"")


def test_the_cache_is_private_bounded_and_drops_a_changed_artefact(tmp_path: Path) -> None:
    result = CompileResult("passed", 0, "", "", 0.1)
    cache = _languages.CompileCache(max_bytes=100, parent=str(tmp_path))
    cache.put("a", b"x" * 60, result)
    cache.put("b", b"y" * 30, result)
    assert os.stat(cache.directory).st_mode & 0o777 == 0o700
    assert cache.get("a") is not None  # a is now the most recently used
    cache.put("c", b"z" * 30, result)  # 120 > 100: b, the least recently used, goes
    assert cache.get("b") is None
    assert cache.get("c") is not None
    assert cache.size == 90
    cache.put("big", b"w" * 101, result)  # larger than the whole cache: not kept
    assert cache.get("big") is None
    Path(cache.directory, "a").write_bytes(b"X" * 60)  # changed under the cache: never served
    assert cache.get("a") is None
    assert cache.size == 30


_CACHE_OWNER = """
import sys
from asyncpool.sandbox._compile_cache import CompileCache
from asyncpool.sandbox._languages import CompileResult
cache = CompileCache(parent=sys.argv[1])
cache.put("k", b"artefact", CompileResult("passed", 0, "", "", 0.1))
print(cache.directory, flush=True)
sys.stdin.read()  # lives until its stdin closes, then exits normally (atexit runs)
"""


def test_a_killed_process_s_cache_directory_is_removed_and_a_live_one_s_is_kept(
    tmp_path: Path,
) -> None:
    def owner() -> tuple[subprocess.Popen[str], str]:
        process = subprocess.Popen(
            [sys.executable, "-c", _CACHE_OWNER, str(tmp_path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert process.stdout is not None
        return process, process.stdout.readline().strip()

    killed, killed_dir = owner()
    live, live_dir = owner()
    legacy = tmp_path / "asyncpool-compile-legacy"  # no .owner: made by an older release
    legacy.mkdir()
    elsewhere = tmp_path / "elsewhere"  # a link named like a cache is never followed
    elsewhere.mkdir()
    (elsewhere / ".owner").write_bytes(b"")
    (tmp_path / "asyncpool-compile-link").symlink_to(elsewhere)
    killed.kill()
    killed.communicate(timeout=30)  # reaps it and closes its pipes
    assert Path(killed_dir, "k").exists()  # SIGKILL: no atexit ran

    cache = _languages.CompileCache(parent=str(tmp_path))
    cache.put("mine", b"x", CompileResult("passed", 0, "", "", 0.1))

    assert not Path(killed_dir).exists()
    assert Path(live_dir, "k").read_bytes() == b"artefact"
    assert legacy.is_dir()
    assert (elsewhere / ".owner").exists()
    assert Path(cache.directory, "mine").exists()
    assert _compile_cache.remove_abandoned(str(tmp_path)) == []  # every owner here lives
    assert live.communicate(input="", timeout=30)[0] == ""
    assert live.returncode == 0
    assert not Path(live_dir).exists()  # a normal exit removes its own directory


# -- every language -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("language", ALL)
def test_a_plus_b_runs_and_the_second_run_compiles_nothing(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    source = unique(AB[language], language)
    cache = _languages.compile_cache()
    before = cache.compilations
    first = run(language, source, stdin="2 3\n", timeout=10, memory_mb=256)
    assert (first.status, first.stdout.strip()) == ("passed", "5"), first
    second = run(language, source, stdin="40 2\n", timeout=10, memory_mb=256)
    assert (second.status, second.stdout.strip()) == ("passed", "42"), second
    if language in COMPILE_ERROR:
        assert cache.compilations == before + 1
        assert first.compile_result is not None
        assert first.compile_result.passed
        assert not first.compile_result.cached
        assert second.compile_result is not None
        assert second.compile_result.cached
    else:
        assert first.compile_result is None
        assert cache.compilations == before


@pytest.mark.slow
@pytest.mark.parametrize("language", COMPILED)
def test_a_compile_error_is_reported_as_one_and_nothing_runs(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    result = run(language, unique(COMPILE_ERROR[language], language), timeout=5)
    compiled = result.compile_result
    assert compiled is not None
    assert compiled.status == "failed"
    assert compiled.returncode != 0
    assert COMPILER_SAYS[language] in compiled.stdout + compiled.stderr, compiled
    assert result.status == "failed"
    assert result.returncode is None
    assert result.stdout == ""


@pytest.mark.slow
@pytest.mark.parametrize("language", ALL)
def test_a_runtime_error_fails_with_its_exit(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    result = run(language, unique(RUNTIME_ERROR[language], language), timeout=10, memory_mb=256)
    assert result.status in ("failed", "crashed"), result
    assert result.returncode not in (0, None)
    assert result.compile_result is None or result.compile_result.passed


#: A depth-first search over a path of n nodes (n on stdin), as competitive programming writes
#: it: recursion n deep, which Linux's default 8 MiB stack did not hold (see
#: ``_zygote_wire.STACK_LIMIT``).
DEEP_DFS = {
    "cpp": (
        "#include <bits/stdc++.h>\nusing namespace std; vector<vector<int>> g; vector<int> sz;\n"
        "void dfs(int u, int p) { sz[u] = 1; for (int v : g[u]) if (v != p) { dfs(v, u);"
        " sz[u] += sz[v]; } }\nint main() { int n; cin >> n; g.resize(n); sz.resize(n);"
        " for (int i = 1; i < n; i++) { g[i - 1].push_back(i); g[i].push_back(i - 1); }"
        " dfs(0, -1); cout << sz[0] << endl; }"
    ),
    "rust": (
        "use std::io::*;\nfn dfs(g: &Vec<Vec<usize>>, u: usize, p: usize, sz: &mut Vec<i64>) {"
        " sz[u] = 1; for &v in &g[u] { if v != p { dfs(g, v, u, sz); sz[u] += sz[v]; } } }\n"
        "fn main() { let mut s = String::new(); stdin().read_to_string(&mut s).unwrap();"
        " let n: usize = s.trim().parse().unwrap(); let mut g = vec![Vec::new(); n];"
        " for i in 1..n { g[i - 1].push(i); g[i].push(i - 1); } let mut sz = vec![0i64; n];"
        " dfs(&g, 0, usize::MAX, &mut sz); println!(\"{}\", sz[0]); }"
    ),
    "nodejs": (
        "const n = parseInt(require('fs').readFileSync(0, 'utf8'));\n"
        "function f(u) { return u < 0 ? 0 : 1 + f(u - 1); }\nconsole.log(f(n - 1));"
    ),
    "python": (
        "import sys\nfrom functools import lru_cache\nsys.setrecursionlimit(10**6)\n"
        "@lru_cache(None)\ndef f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
        "n = int(input())\nprint(f(n - 1) + 1)"
    ),
}
DEPTH = {"cpp": 1_000_000, "rust": 1_000_000, "nodejs": 200_000, "python": 100_000}


@pytest.mark.slow
@pytest.mark.parametrize("language", sorted(DEEP_DFS))
def test_a_deep_recursion_has_the_stack_a_judge_gives(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    n = DEPTH[language]
    result = run_stdio(
        unique(DEEP_DFS[language], language), [(f"{n}\n", f"{n}\n")], language=language,
        timeout=20, memory_mb=256,
    )  # fmt: skip
    assert result.verdict == "accepted", result


#: The competitive programmer's Python preamble: no stack limit, then a deep recursion.
UNLIMITED_STACK = """
import resource, sys
resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
sys.setrecursionlimit(10 ** 6)
def f(n):
    return 0 if n == 0 else 1 + f(n - 1)
print(f(int(input())), resource.getrlimit(resource.RLIMIT_STACK)[0] == resource.RLIM_INFINITY)
"""


@pytest.mark.parametrize("limit", ["(resource.RLIM_INFINITY, resource.RLIM_INFINITY)",
                                   "(1 << 29, 1 << 29)"])  # fmt: skip
def test_a_program_may_raise_its_stack_limit_as_under_python_prog_py(limit: str) -> None:
    """The hard stack limit is the server's (a shell's: unlimited), not the run's soft one:
    raising the soft limit before a deep recursion was a ValueError ("not allowed to raise
    maximum limit"), a runtime error of an honest program."""
    source = UNLIMITED_STACK.replace("(resource.RLIM_INFINITY, resource.RLIM_INFINITY)", limit)
    if resource.getrlimit(resource.RLIMIT_STACK)[1] != resource.RLIM_INFINITY:
        pytest.skip("this process's hard stack limit is not unlimited")
    expected = "50000 True\n" if "INFINITY" in limit else "50000 False\n"
    result = run_stdio(source, [("50000\n", expected)], timeout=20)
    assert result.verdict == "accepted", result


@pytest.mark.slow
@pytest.mark.skipif("cpp" not in AVAILABLE, reason="no g++ here: apt-get install g++")
def test_a_program_of_eight_threads_still_starts_them_all_under_the_larger_stack() -> None:
    """glibc gives an executed program's threads the stack limit as their default stack size:
    eight of them still fit the run's address space."""
    source = (
        "#include <bits/stdc++.h>\nusing namespace std;\nint main() { int n; cin >> n;"
        " vector<thread> ts; atomic<long long> s{0}; for (int t = 0; t < 8; t++)"
        " ts.emplace_back([&, t] { for (int i = t; i < n; i += 8) s += i; });"
        " for (auto& th : ts) th.join(); cout << s << endl; }"
    )
    result = run_stdio(unique(source, "cpp"), [("1000\n", "499500\n")], language="cpp")
    assert result.verdict == "accepted", result


@pytest.mark.slow
@pytest.mark.parametrize("language", ALL)
def test_a_wrong_answer_prints_something_else(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    result = run(language, unique(WRONG[language], language), stdin="2 3\n", memory_mb=256)
    assert (result.status, result.stdout.strip()) == ("passed", "-1"), result


@pytest.mark.slow
@pytest.mark.parametrize("language", ALL)
def test_an_endless_loop_is_a_timeout_at_its_time_limit(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    result = run(language, unique(LOOP[language], language), timeout=1.0, memory_mb=256)
    assert result.status == "timeout", result
    assert 1.0 <= result.duration < 3.0


# -- run_stdio: compile once, judge every case --------------------------------------------------

CASES = [(f"{i} {2 * i}\n", f"{3 * i}\n") for i in range(1, 6)]


@pytest.mark.slow
@pytest.mark.parametrize("language", ALL)
def test_run_stdio_compiles_once_for_all_cases_and_accepts(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    source = unique(AB[language], language)
    cache = _languages.compile_cache()
    before = cache.compilations
    result = run_stdio(source, CASES, language=language, memory_mb=256)
    assert isinstance(result, LanguageStdioResult)
    assert (result.status, result.verdict) == ("passed", "accepted"), result
    assert [c.verdict for c in result.cases] == ["accepted"] * len(CASES)
    again = run_stdio(source, CASES, language=language, memory_mb=256)
    assert again.status == "passed"
    compiled = language in COMPILE_ERROR
    assert cache.compilations == before + (1 if compiled else 0)  # 10 cases, <= 1 compile
    if compiled:
        assert isinstance(again, LanguageStdioResult)
        assert again.compile_result is not None
        assert again.compile_result.cached


@pytest.mark.slow
@pytest.mark.parametrize("language", ALL)
def test_run_stdio_gives_the_judges_verdicts(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    wrong = run_stdio(unique(WRONG[language], language), CASES, language=language)
    assert (wrong.status, wrong.verdict) == ("failed", "wrong_answer"), wrong
    slow = run_stdio(unique(LOOP[language], language), CASES, language=language, timeout=1.0)
    assert slow.verdict == "time_limit", slow
    crash = run_stdio(unique(RUNTIME_ERROR[language], language), CASES, language=language)
    assert crash.verdict == "runtime_error", crash


@pytest.mark.slow
@pytest.mark.parametrize("language", COMPILED)
def test_run_stdio_reports_a_compile_error_and_runs_no_case(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    result = run_stdio(unique(COMPILE_ERROR[language], language), CASES, language=language)
    assert isinstance(result, LanguageStdioResult)
    assert (result.status, result.verdict, result.cases) == ("failed", "compile_error", [])
    assert result.compile_result is not None
    assert COMPILER_SAYS[language] in result.compile_result.stderr + result.compile_result.stdout


@pytest.mark.slow
@pytest.mark.skipif("cpp" not in AVAILABLE, reason="no g++ here: apt-get install g++")
def test_a_cpp_memory_bomb_is_a_memory_limit() -> None:
    bomb = (
        "#include <vector>\nint main(){ std::vector<char> v;"
        " while (true) v.resize(v.size() * 2 + 1); }"
    )
    result = run_stdio(unique(bomb, "cpp"), [("", "")], language="cpp", memory_mb=128)
    assert (result.status, result.verdict) == ("memory", "memory_limit"), result


@needs("java")
def test_a_java_array_of_most_of_the_heap_is_not_a_memory_limit() -> None:
    # 200 MB in one array at memory_mb=256 (-Xmx256m): the serial collector's old generation,
    # where such an array goes, was two thirds of the heap (an OutOfMemoryError, "memory").
    source = (
        "public class Main { public static void main(String[] a) {"
        " int[] v = new int[50_000_000]; for (int i = 0; i < v.length; i += 1024) v[i] = 1;"
        " long s = 0; for (int i = 0; i < v.length; i += 1024) s += v[i];"
        " System.out.println(s); } }"
    )
    result = run_stdio(unique(source, "java"), [("", "48829\n")], language="java", memory_mb=256)
    assert (result.status, result.verdict) == ("passed", "accepted"), result
    # A heap still holds no more than memory_mb.
    over = source.replace("50_000_000", "70_000_000")
    result = run_stdio(unique(over, "java"), [("", "68360\n")], language="java", memory_mb=256)
    assert (result.status, result.verdict) == ("memory", "memory_limit"), result


def _memory_cgroup() -> bool:
    """Whether the fork server can give runs a memory cgroup here (as root: a v1 ``memory``
    hierarchy, or the v2 ``memory`` controller), as ``_cgroup.open_cgroups`` looks for one."""
    if not ROOT:
        return False
    if os.path.isdir("/sys/fs/cgroup/memory"):
        return True
    try:
        return "memory" in Path("/sys/fs/cgroup/cgroup.controllers").read_text().split()
    except OSError:
        return False


@pytest.mark.skipif("cpp" not in AVAILABLE, reason="no g++ here: apt-get install g++")
@pytest.mark.skipif(not _memory_cgroup(), reason="peak memory is ru_maxrss without a cgroup")
def test_a_compiled_programs_peak_memory_is_its_own_not_the_interpreter_that_started_it() -> None:
    mib = 1 << 20
    hello = '#include <cstdio>\nint main(){ puts("hi"); }'
    big = (
        "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n"
        "int main(){ char *p = (char *)malloc(64 << 20); memset(p, 1, 64 << 20);"
        ' puts("hi"); return p[7] - 1; }'
    )
    light = run_stdio(unique(hello, "cpp"), [("", "hi\n")], language="cpp").cases[0]
    heavy = run_stdio(unique(big, "cpp"), [("", "hi\n")], language="cpp", memory_mb=256).cases[0]
    assert (light.verdict, heavy.verdict) == ("accepted", "accepted")
    assert light.peak_memory is not None
    assert heavy.peak_memory is not None
    # ru_maxrss said ~20 MiB for both: the forked interpreter's pages before the exec.
    assert light.peak_memory < 8 * mib
    assert 64 * mib <= heavy.peak_memory < 96 * mib
    assert heavy.peak_memory - light.peak_memory >= 60 * mib


# -- hostile programs -----------------------------------------------------------------------------

FORK_BOMB = {
    "cpp": "#include <unistd.h>\nint main(){ while (true) fork(); }",
    "rust": (
        'fn main() { loop { let _ = std::process::Command::new("/proc/self/exe").spawn(); } }'
    ),
    "go": (
        'package main\nimport ("os"; "os/exec")\n'
        "func main() { for { c := exec.Command(os.Args[0]); _ = c.Start() } }"
    ),
    "java": (
        "public class Main { public static void main(String[] x) throws Exception {"
        ' while (true) { new ProcessBuilder("/bin/sh", "-c", "sleep 100").start(); } } }'
    ),
}
# Prints "WROTE <path>" for every path outside its directory it managed to create.
ESCAPE_WRITE = {
    "cpp": (
        "#include <cstdio>\nint main(){ const char* p[] = {"
        '"/usr/asyncpool-x", "/etc/asyncpool-x",'
        ' "/root/asyncpool-x", "/asyncpool-x", "/dev/shm/../asyncpool-x"};'
        ' for (auto s : p) { FILE* f = fopen(s, "w");'
        ' if (f) { printf("WROTE %s\\n", s); fclose(f); } } }'
    ),
    "rust": (
        'fn main() { for p in ["/usr/asyncpool-x", "/etc/asyncpool-x", "/root/asyncpool-x",'
        ' "/asyncpool-x"] { if std::fs::write(p, b"x").is_ok() { println!("WROTE {}", p); } } }'
    ),
    "go": (
        'package main\nimport ("fmt"; "os")\nfunc main() { for _, p := range []string{'
        '"/usr/asyncpool-x", "/etc/asyncpool-x", "/root/asyncpool-x", "/asyncpool-x"} {'
        ' if os.WriteFile(p, []byte("x"), 0644) == nil { fmt.Println("WROTE " + p) } } }'
    ),
    "java": (
        "public class Main { public static void main(String[] x) { for (String p : new String[]"
        '{"/usr/asyncpool-x", "/etc/asyncpool-x", "/root/asyncpool-x", "/asyncpool-x"}) {'
        " try { java.nio.file.Files.write(java.nio.file.Paths.get(p), new byte[]{1});"
        ' System.out.println("WROTE " + p); } catch (Exception e) {} } } }'
    ),
}
# Prints what it could read of each path named on stdin.
READ_FILES = {
    "cpp": (
        "#include <fstream>\n#include <iostream>\n#include <string>\nint main(){ std::string p;"
        " while (std::cin >> p) { std::ifstream f(p); std::string s; while (std::getline(f, s))"
        ' std::cout << "READ " << s << "\\n"; } }'
    ),
    "rust": (
        "use std::io::Read;\nfn main() { let mut s = String::new();"
        " std::io::stdin().read_to_string(&mut s).unwrap(); for p in s.split_whitespace() {"
        " if let Ok(t) = std::fs::read_to_string(p) { for l in t.lines() {"
        ' println!("READ {}", l); } } } }'
    ),
    "go": (
        'package main\nimport ("fmt"; "os"; "strings")\nfunc main() { var p string; for {'
        " if _, err := fmt.Scan(&p); err != nil { return }; b, err := os.ReadFile(p);"
        ' if err == nil { for _, l := range strings.Split(string(b), "\\n") {'
        ' fmt.Println("READ " + l) } } } }'
    ),
    "java": (
        "public class Main { public static void main(String[] x) { java.util.Scanner s ="
        " new java.util.Scanner(System.in); while (s.hasNext()) { try { for (String l :"
        " java.nio.file.Files.readAllLines(java.nio.file.Paths.get(s.next())))"
        ' System.out.println("READ " + l); } catch (Exception e) {} } } }'
    ),
}
COMPILE_BOMB = {
    "cpp": '#include "/dev/random"\nint main(){}',
    "rust": (
        'static B: &[u8] = include_bytes!("/dev/random");\nfn main() { println!("{}", B.len()); }'
    ),
    "java": (  # javac's parser recursing 50,000 deep
        "public class Main { static int x = " + "(" * 50000 + "1" + ")" * 50000 + ";"
        " public static void main(String[] a) {} }"
    ),
    "go": "package main\nconst c = 1 << 100000000\nfunc main() { println(c > 0) }",
}
HOSTILE_COMPILED = sorted(FORK_BOMB)


@pytest.mark.slow
@pytest.mark.parametrize("language", HOSTILE_COMPILED)
def test_a_fork_bomb_ends_within_its_time_limit_without_passing(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    started = time.monotonic()
    outcome: str
    try:
        outcome = run(language, unique(FORK_BOMB[language], language), timeout=2.0).status
    except SandboxError as exc:
        # Its own spinning processes starve its first one past the starvation cap (a loaded
        # machine makes that likelier): no verdict, which is never a pass.
        outcome = str(exc)
    assert outcome in ("failed", "timeout", "memory", "crashed") or "starved" in outcome
    # the compile, then at most two attempts up to the starvation cap (16 * 2 + 10 s) each
    assert time.monotonic() - started < 2 * 42 + 60


@pytest.mark.slow
@pytest.mark.skipif(not ROOT, reason="the jail's read-only root needs root (namespaces)")
@pytest.mark.parametrize("language", HOSTILE_COMPILED)
def test_nothing_is_written_outside_the_runs_directory(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    result = run(language, unique(ESCAPE_WRITE[language], language), timeout=10, memory_mb=256)
    assert result.status == "passed", result  # it ran to its end...
    assert "WROTE" not in result.stdout, result.stdout  # ...and wrote nowhere
    for path in ("/usr/asyncpool-x", "/etc/asyncpool-x", "/root/asyncpool-x", "/asyncpool-x"):
        assert not os.path.exists(path)


@pytest.mark.slow
@pytest.mark.skipif(not ROOT, reason="hiding the caller's files needs root (namespaces, uids)")
@pytest.mark.parametrize("language", HOSTILE_COMPILED)
def test_neither_etc_shadow_nor_an_expected_output_on_disk_can_be_read(
    language: str, tmp_path: Path
) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    secret = tmp_path / "expected_output.txt"
    secret.write_text("the-expected-answer-42\n")
    os.chmod(tmp_path, 0o755)
    os.chmod(secret, 0o644)  # world-readable: only the jail keeps it out of reach
    paths = f"/etc/shadow {secret} /proc/1/environ\n"
    result = run(language, unique(READ_FILES[language], language), stdin=paths, memory_mb=256)
    assert "the-expected-answer-42" not in result.stdout
    assert "root:" not in result.stdout
    assert "READ " not in result.stdout, result.stdout
    # the same program reads its own directory's files, so the failures above are the jail's
    own = run(
        language, unique(READ_FILES[language], language), stdin="mine.txt\n",
        files={"mine.txt": b"visible\n"}, memory_mb=256,
    )  # fmt: skip
    assert "READ visible" in own.stdout, own


@pytest.mark.slow
@pytest.mark.parametrize("language", HOSTILE_COMPILED)
def test_a_compile_time_bomb_is_stopped_and_never_runs(language: str) -> None:
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    started = time.monotonic()
    result = run(language, unique(COMPILE_BOMB[language], language), compile_timeout=3.0)
    compiled = result.compile_result
    assert compiled is not None
    assert compiled.status != "passed", compiled
    assert result.status == "failed"
    assert result.stdout == ""
    assert time.monotonic() - started < 120


@contextlib.contextmanager
def _busy_caller() -> Iterator[None]:
    """This process holding the GIL in 50 ms slices (three spinning threads) in the block: a
    caller slow to read what its runs write."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            pass

    spinners = [threading.Thread(target=spin, daemon=True) for _ in range(3)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.05)
    try:
        for t in spinners:
            t.start()
        yield
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        for t in spinners:
            t.join()


@pytest.mark.slow
@needs("cpp")
def test_a_slow_reader_does_not_turn_a_correct_answer_into_a_time_limit() -> None:
    """3.4 MB of correct output while this process holds the GIL in 50 ms slices (three
    spinning threads). Through the 64 KiB stdout pipe of before, the program waited for this
    process to read on every full pipe, and that wait counted as its own time: 0.008 s of CPU
    became 1.0 s, ``time_limit`` (2 runs of 2 at efae409). The verdict may not depend on how
    fast the caller reads; stdout is now a memory file."""
    n = 500_000
    loop = f"for (int i = 0; i < {n}; i++) printf(\"%d\\n\", i);"
    source = unique(f"#include <cstdio>\nint main() {{ {loop} }}\n", "cpp")
    expected = "".join(f"{i}\n" for i in range(n))
    assert run_stdio(source, [("", expected)], language="cpp").verdict == "accepted"  # compiled
    with _busy_caller():
        results = [run_stdio(source, [("", expected)], language="cpp", timeout=1.0)
                   for _ in range(2)]  # fmt: skip
    assert [(r.verdict, r.cases[0].reason) for r in results] == [("accepted", "")] * 2


@pytest.mark.slow
@pytest.mark.parametrize("language", ["python", "cpp"])
def test_a_slow_reader_does_not_turn_debug_lines_on_stderr_into_a_time_limit(
    language: str,
) -> None:
    """3.2 MB of debug lines on stderr, then the answer, while this process holds the GIL in
    50 ms slices (three spinning threads). Through the stderr pipe of before the program
    waited for this process to read on every full pipe, and the wait counted as its own time:
    0.04-0.07 s of CPU became ``time_limit`` at 1 s (C++, 2 runs of 2, helper 41's probe).
    stderr is a memory file too now; its last bytes are kept."""
    if language not in AVAILABLE:
        pytest.skip(f"no toolchain for {language}")
    if language == "cpp":
        source = unique(
            "#include <cstdio>\nint main() { for (int i = 0; i < 200000; i++)"
            " fprintf(stderr, \"debug line %d\\n\", i); puts(\"42\"); }\n",
            "cpp",
        )
    else:
        source = (
            "import sys\nw = sys.stderr.write\nfor i in range(200000):\n"
            "    w(f'debug line {i}\\n')\nprint(42)\n"
        )
    first = run_stdio(source, [("", "42\n")], language=language, timeout=10)
    assert first.verdict == "accepted", first  # (compiled, and the answer is right)
    assert first.cases[0].stderr.endswith("debug line 199999\n"), first
    with _busy_caller():
        results = [run_stdio(source, [("", "42\n")], language=language, timeout=1.0)
                   for _ in range(2)]  # fmt: skip
    assert [(r.verdict, r.cases[0].reason) for r in results] == [("accepted", "")] * 2


@pytest.mark.slow
def test_stderr_past_the_file_size_limit_says_so_and_a_compilers_warnings_do_not_count() -> None:
    """stderr is a memory file bounded by ``RLIMIT_FSIZE`` (16 MiB): past it the program's
    writes fail, and its stderr begins with why. A compiler's stderr is still a pipe: 10 MB of
    warnings do not end a compile (helper 42's probes)."""
    flood = "import sys\nw = sys.stderr.write\nfor i in range(1_200_000):\n"
    flood += "    w('x' * 14 + '\\n')\n"
    result = run_stdio(flood + "print(42)\n", [("", "42\n")], timeout=20)
    case = result.cases[0]
    assert case.verdict == "runtime_error", result
    assert case.stderr.startswith("[sandbox: stderr reached the 16 MiB file size limit]"), case
    if "cpp" in AVAILABLE:
        warnings = "".join(f"#warning {'w' * 1000}\n" for _ in range(10_000))
        source = unique(warnings + "#include <cstdio>\nint main() { puts(\"42\"); }\n", "cpp")
        compiled = run_stdio(source, [("", "42\n")], language="cpp", compile_timeout=60)
        assert compiled.verdict == "accepted", compiled


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("public class Main { public static void main(String[] a) {} }", ("Main", "Main")),
        ("import java.util.*;\npublic final class Solution { static void main(String[] a) {} }",
         ("Solution", "Solution")),
        ("class Helper { }\nclass Codechef { public static void main (String[] a) {} }",
         ("Codechef", None)),
        ("class Main { public class Inner { } public static void main(String[] a) {} }",
         ("Main", None)),
        ("// public class Fake\n/* public class Nope */\nclass X { static void main(String[] a)"
         " { String s = \"public class Str {\"; char c = '{'; } }", ("X", None)),
        ("class Node { Node next; }\npublic class P2 { public static void main(String[] a) {} }",
         ("P2", "P2")),
        ("class A { }", ("Main", None)),
        ("public enum E { A }\nclass Main { public static void main(String[] a) {} }",
         ("Main", "E")),
        ("public record P(int x) { }\nclass Run { public static void main(String[] a) {} }",
         ("Run", "P")),
        ("public class Lib { }", ("Lib", "Lib")),
        ("class A { }\nclass Sol { static public void main(String[] a) {} }", ("Sol", None)),
        ("class A { }\nclass Run { public static synchronized void main(String[] a) {} }",
         ("Run", None)),
        ("class A { }\nclass Run { static public final void main(String[] a) {} }",
         ("Run", None)),
        ("class Util { static private void main(int[] a) {} }\n"
         "class Solution { public static void main(String... args) {} }", ("Solution", None)),
        ("class Util { protected static void main(String[] a) {} void main() {} }\n"
         "class Run { final static public void main(String args[]) {} }", ("Run", None)),
    ],
    ids=["public Main", "public other name", "no public class", "inner public class",
         "comments and literals", "a class before the public one", "no main at all",
         "a public enum before Main", "a public record before the class with main",
         "a public class without main", "static public main", "static synchronized main",
         "static public final main", "a private main of another signature first",
         "a protected main first, then String args[]"],
)
def test_the_java_class_run_is_the_public_one_or_the_one_with_main(
    source: str, expected: tuple[str, str | None]
) -> None:
    assert java_main_class(source) == expected


@needs("java")
def test_a_java_solution_whose_class_is_not_main_is_judged_like_any_other() -> None:
    # Codeforces and CodeChef take any class name; javac needs a public class's file named
    # after it, and the JVM must be told which class to run.
    public = (
        "import java.util.*;\npublic class Solution { public static void main(String[] x) {"
        " Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + 1); } }\n"
    )
    codechef = (
        "import java.util.*;\nclass Helper { static long twice(long v) { return 2 * v; } }\n"
        "class Codechef { public static void main(String[] x) {"
        " System.out.println(Helper.twice(new Scanner(System.in).nextLong())); } }\n"
    )
    # A public enum first (the file's name) and the class with main after it: Main runs.
    enum = (
        "import java.util.*;\npublic enum Op { ADD }\n"
        "class Main { public static void main(String[] x) {"
        " System.out.println(Op.ADD + \" \" + new Scanner(System.in).nextLong()); } }\n"
    )
    assert run_stdio(public, [("4\n", "5\n")], language="java").status == "passed"
    assert run_stdio(codechef, [("4\n", "8\n")], language="java").status == "passed"
    assert run_stdio(enum, [("4\n", "ADD 4\n")], language="java").status == "passed"
    wrong = run_stdio(codechef, [("4\n", "9\n")], language="java")
    assert [c.verdict for c in wrong.cases] == ["wrong_answer"]


BIG_OUTPUT = r"""
#include <cstdio>
#include <cstring>
static char block[1 << 20];
int main() {
    for (int i = 0; i < (1 << 20); i += 64) { memset(block + i, 'a', 63); block[i + 63] = '\n'; }
    for (int k = 0; k < 17; k++) fwrite(block, 1, 1 << 20, stdout);
    return 0;
}
"""


@needs("cpp")
def test_a_native_answer_of_17_mib_is_accepted_and_output_past_the_limit_is_wrong() -> None:
    """The output limit of run_stdio (twice the expected output and 1 MiB) is the one an
    answer meets, not the sandbox's 16 MiB file-size limit, which had cut this answer short
    silently (SIGXFSZ was ignored in the exec'd program: its writes failed, it exited 0).
    Output past the limit is a wrong answer, however the program ended (here SIGXFSZ)."""
    expected = ("a" * 63 + "\n") * (17 << 14)
    result = run_stdio(BIG_OUTPUT, [("", expected)], language="cpp", timeout=20)
    assert (result.verdict, len(result.cases[0].stdout)) == ("accepted", 17 << 20), result.verdict
    result = run_stdio(BIG_OUTPUT, [("", "a\n")], language="cpp", timeout=20)
    case = result.cases[0]
    assert (case.verdict, case.status) == ("wrong_answer", "failed")
    assert case.reason.startswith("the output is longer than")


@needs("cpp")
def test_a_native_program_writing_to_a_closed_pipe_dies_of_sigpipe_as_in_a_shell() -> None:
    source = r"""
        #include <cstdio>
        #include <unistd.h>
        int main() {
            int fds[2];
            if (pipe(fds) != 0) return 2;
            close(fds[0]);
            ssize_t n = write(fds[1], "x", 1);
            printf("%zd\n", n);
            return 0;
        }
    """
    case = run_stdio(source, [("", "")], language="cpp").cases[0]
    assert (case.verdict, case.returncode) == ("runtime_error", -13), case
