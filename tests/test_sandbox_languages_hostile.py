"""Issue 23's hostile corpus: attacks in every compiled language (and Node where they apply),
judged through ``run_stdio(language=...)``/``run_program(language=...)``, then over HTTP.

:mod:`tests.test_sandbox_languages` has a first hostile set (a fork bomb, writes to ``/usr``,
``/etc``, ``/root`` and ``/``, reading ``/etc/shadow`` and a file on the caller's disk, a
``/dev/random`` include and a few other compile bombs) that checks only that none passes. This
corpus extends it in attacks and in what is checked after each one:

* **no pass**: the program prints the case's expected output only if the attack reached its goal
  (found the hidden answer, wrote outside, attached, ...), so "accepted" would mean the attack
  worked; where a verdict is not the point (a daemon, ptrace, writes) the program says what it
  managed and the test checks that on the machine itself (``/proc``, the files, the cache);
* **no process left**: every program reports its uid and pid (and a daemon's pid) on stderr;
  right after the call returns no process of that uid exists on the machine, none of the
  reported pids is alive under a sandbox uid, and no process of a sandbox uid descends from this
  test process (its fork server is a child subreaper: what a run leaves is reparented to it);
* **the next run works**: a correct a+b in the same language is accepted right after.

Each cell of the attack x language table is computed once per session (a test asks for it, the
table test asks for the ones no earlier test asked for) and printed by
:func:`test_the_hostile_corpus_table` (``-s``). A defect found here is a failing cell: its test
is marked ``xfail(strict=True)`` naming the defect (none at the time of writing).

Everything here needs root (namespaces, sandbox uids): without it the sandbox documents that a
program can read the caller's files and outlive its run, so the corpus is skipped.
"""

# The programs below are other languages' source, kept on their own long lines.
# ruff: noqa: E501
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from asyncpool.errors import SandboxError
from asyncpool.sandbox import StdioResult, _languages, run_program, run_stdio
from asyncpool.sandbox._zygote_wire import UID_BASE, UID_COUNT
from tests.conftest import SessionCluster
from tests.test_sandbox_languages import AB, COMPILE_BOMB, FORK_BOMB, unique
from tests.test_server import ServeProcess, run_code, serving

ROOT = os.geteuid() == 0
AVAILABLE = _languages.available()
LANGS = ["cpp", "rust", "go", "java", "nodejs"]
COMPILED = ["cpp", "rust", "go", "java"]
SANDBOX_UIDS = range(UID_BASE, UID_BASE + UID_COUNT + 1)  # the judge's uid included
PROGRAM_UIDS = range(UID_BASE, UID_BASE + UID_COUNT)

pytestmark = [
    pytest.mark.skipif(not ROOT, reason="the jail (namespaces, sandbox uids) needs root"),
    pytest.mark.timeout(600),
]


def needs(language: str) -> None:
    if language not in AVAILABLE:
        spec = _languages.check_language(language)
        pytest.skip(f"no {spec.tool} here: apt-get install {spec.package}")


# -- what every program reports: "ID <uid> <pid>" on stderr, first ------------------------------

ID_INCLUDES = {
    "cpp": "#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n",
    "rust": "",
    "go": "",
    "java": "",
    "nodejs": "",
}
ID = {
    "cpp": 'fprintf(stderr, "ID %d %d\\n", (int)getuid(), (int)getpid());',
    "rust": 'eprintln!("ID {} {}", unsafe { getuid() }, std::process::id());',
    "go": 'fmt.Fprintf(os.Stderr, "ID %d %d\\n", os.Getuid(), os.Getpid());',
    "java": "for (String l : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("
    '"/proc/self/status"))) if (l.startsWith("Uid:")) System.err.println("ID " +'
    ' l.split("\\\\s+")[1] + " " + ProcessHandle.current().pid());',
    "nodejs": "process.stderr.write(`ID ${process.getuid()} ${process.pid}\\n`);",
}
RUST_FFI = (
    'extern "C" { fn getuid() -> u32; fn fork() -> i32; fn setsid() -> i32; fn getppid() -> i32;'
    " fn waitpid(p: i32, s: *mut i32, o: i32) -> i32; fn close(fd: i32) -> i32;"
    " fn sleep(s: u32) -> u32; fn _exit(c: i32) -> !; fn ptrace(r: i64, ...) -> i64;"
    " fn signal(s: i32, h: usize) -> usize; }\n"
)
JAVA_HEAD = (
    "import java.io.*;\nimport java.nio.file.*;\nimport java.util.*;\n"
    "public class Main { public static void main(String[] args) throws Exception { "
)


# -- the attacks, as source per language ---------------------------------------------------------

# 1. Exit 0 before the output is written (the answer sits in a buffer that is never flushed).
EXIT_EARLY = {
    "cpp": 'int main(){ ID_ printf("5\\n"); _exit(0); }',
    "rust": (
        "use std::io::Write;\nfn main() { ID_ let mut o = std::io::BufWriter::new(std::io::stdout());"
        ' write!(o, "5\\n").unwrap(); std::process::exit(0); }'
    ),
    "go": (
        'package main\nimport ("bufio"; "fmt"; "os")\nfunc main() { ID_'
        " w := bufio.NewWriter(os.Stdout); fmt.Fprintln(w, 5); os.Exit(0) }"
    ),
    "java": JAVA_HEAD + "ID_ PrintWriter w = new PrintWriter(new BufferedWriter("
    'new OutputStreamWriter(System.out))); w.println("5"); System.exit(0); } }',
    "nodejs": "ID_ process.exit(0); console.log(5);",
}

# 2. Look for the expected output everywhere: the paths on stdin (walked, 6 deep), every
# /proc/N/{environ,cmdline} it can see, its own environment. Prints the token if found.
MARK = "EXPECTED-"
FIND = {
    "cpp": r"""#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
namespace fs = std::filesystem;
static std::string mark;
static void look(const std::string& data) {
  auto i = data.find(mark);
  if (i != std::string::npos && data.size() >= i + 41) { std::cout << data.substr(i, 41) << "\n"; std::exit(0); }
}
static void file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary); if (!f) return;
  std::string s(1 << 22, '\0'); f.read(&s[0], s.size()); s.resize(f.gcount()); look(s);
}
static void walk(const fs::path& p, int depth) {
  std::error_code ec;
  auto st = fs::symlink_status(p, ec); if (ec) return;
  if (fs::is_regular_file(st)) { file(p); return; }
  if (!fs::is_directory(st) || depth > 6) return;
  for (auto it = fs::directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) walk(it->path(), depth + 1);
}
int main() { ID_
  std::cin >> mark; std::string p; while (std::cin >> p) walk(p, 0);
  std::error_code ec;
  for (auto it = fs::directory_iterator("/proc", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    file(it->path() / "environ"); file(it->path() / "cmdline"); }
  for (char** e = environ; *e; ++e) look(*e);
  std::cout << "NOT FOUND\n"; }
""",
    "rust": r"""use std::io::Read;
static mut MARK: String = String::new();
fn look(d: &[u8]) { let s = String::from_utf8_lossy(d); if let Some(i) = s.find(unsafe { MARK.as_str() }) {
  if s.len() >= i + 41 { println!("{}", &s[i..i + 41]); std::process::exit(0); } } }
fn file(p: &std::path::Path) { if let Ok(mut f) = std::fs::File::open(p) { let mut b = Vec::new();
  let _ = f.by_ref().take(1 << 22).read_to_end(&mut b); look(&b); } }
fn walk(p: &std::path::Path, depth: u32) { let Ok(m) = std::fs::symlink_metadata(p) else { return };
  if m.is_file() { file(p); return; } if !m.is_dir() || depth > 6 { return; }
  if let Ok(rd) = std::fs::read_dir(p) { for e in rd.flatten() { walk(&e.path(), depth + 1); } } }
fn main() { ID_
  let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap();
  let mut words = s.split_whitespace(); unsafe { MARK = words.next().unwrap().to_string(); }
  for p in words { walk(std::path::Path::new(p), 0); }
  if let Ok(rd) = std::fs::read_dir("/proc") { for e in rd.flatten() {
    file(&e.path().join("environ")); file(&e.path().join("cmdline")); } }
  for (k, v) in std::env::vars_os() { look(k.to_string_lossy().as_bytes()); look(v.to_string_lossy().as_bytes()); }
  println!("NOT FOUND"); }
""",
    "go": r"""package main
import ("bufio"; "fmt"; "io"; "os"; "path/filepath"; "strings")
var mark string
func look(d string) { if i := strings.Index(d, mark); i >= 0 && len(d) >= i+41 { fmt.Println(d[i : i+41]); os.Exit(0) } }
func file(p string) { f, err := os.Open(p); if err != nil { return }; defer f.Close()
  b, _ := io.ReadAll(io.LimitReader(f, 1<<22)); look(string(b)) }
func walk(p string, depth int) { m, err := os.Lstat(p); if err != nil { return }
  if m.Mode().IsRegular() { file(p); return }; if !m.IsDir() || depth > 6 { return }
  es, _ := os.ReadDir(p); for _, e := range es { walk(filepath.Join(p, e.Name()), depth+1) } }
func main() { ID_
  sc := bufio.NewScanner(os.Stdin); sc.Split(bufio.ScanWords); sc.Scan(); mark = sc.Text(); for sc.Scan() { walk(sc.Text(), 0) }
  es, _ := os.ReadDir("/proc"); for _, e := range es { file("/proc/" + e.Name() + "/environ"); file("/proc/" + e.Name() + "/cmdline") }
  for _, e := range os.Environ() { look(e) }
  fmt.Println("NOT FOUND") }
""",
    "java": JAVA_HEAD
    + r"""ID_
  Scanner sc = new Scanner(System.in); mark = sc.next(); while (sc.hasNext()) walk(Paths.get(sc.next()), 0);
  File[] ps = new File("/proc").listFiles(); if (ps != null) for (File p : ps) {
    file(p.toPath().resolve("environ")); file(p.toPath().resolve("cmdline")); }
  for (Map.Entry<String, String> e : System.getenv().entrySet()) look(e.getKey() + "=" + e.getValue());
  System.out.println("NOT FOUND"); }
 static String mark;
 static void look(String s) { int i = s.indexOf(mark);
  if (i >= 0 && s.length() >= i + 41) { System.out.println(s.substring(i, i + 41)); System.exit(0); } }
 static void file(Path p) { try (InputStream in = Files.newInputStream(p)) {
  look(new String(in.readNBytes(1 << 22), "ISO-8859-1")); } catch (Exception e) {} }
 static void walk(Path p, int depth) { try {
  if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) { file(p); return; }
  if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) || depth > 6) return;
  try (DirectoryStream<Path> ds = Files.newDirectoryStream(p)) { for (Path q : ds) walk(q, depth + 1); }
  } catch (Exception e) {} } }
""",
    "nodejs": r"""const fs = require("fs"), path = require("path");
let mark;
function look(s) { const i = s.indexOf(mark); if (i >= 0 && s.length >= i + 41) { console.log(s.slice(i, i + 41)); process.exit(0); } }
function file(p) { try { const fd = fs.openSync(p, "r"); const b = Buffer.alloc(1 << 22);
  const n = fs.readSync(fd, b, 0, b.length, null); fs.closeSync(fd); look(b.subarray(0, n).toString("latin1")); } catch (e) {} }
function walk(p, depth) { let m; try { m = fs.lstatSync(p); } catch (e) { return; }
  if (m.isFile()) { file(p); return; } if (!m.isDirectory() || depth > 6) return;
  let es = []; try { es = fs.readdirSync(p); } catch (e) {} for (const e of es) walk(path.join(p, e), depth + 1); }
ID_
const words = fs.readFileSync(0, "utf8").split(/\s+/).filter(Boolean); mark = words.shift();
for (const p of words) walk(p, 0);
let ps = []; try { ps = fs.readdirSync("/proc"); } catch (e) {}
for (const p of ps) { file("/proc/" + p + "/environ"); file("/proc/" + p + "/cmdline"); }
for (const [k, v] of Object.entries(process.env)) look(k + "=" + v);
console.log("NOT FOUND");
""",
}

# 3. A daemon: double fork + setsid that keeps stdout and writes the answer a second after the
# program exited 0 without it; the middle process prints "PID <daemon's pid>" on stderr.
DAEMON_SH = (
    "setsid sh -c 'sleep 1; echo 5; exec sleep 1000' </dev/null 2>/dev/null & echo PID $! >&2"
)
DAEMON = {
    "cpp": "#include <sys/wait.h>\nint main(){ ID_ pid_t mid = fork();"
    " if (mid == 0) { setsid(); pid_t d = fork(); if (d == 0) { close(0); close(2); sleep(1);"
    ' printf("5\\n"); fflush(stdout); for (;;) sleep(1000); }'
    ' fprintf(stderr, "PID %d\\n", (int)d); _exit(0); } waitpid(mid, nullptr, 0); }',
    "rust": RUST_FFI + "fn main() { ID_ unsafe { let mid = fork(); if mid == 0 { setsid();"
    ' let d = fork(); if d == 0 { close(0); close(2); sleep(1); println!("5"); loop { sleep(1000); } }'
    ' eprintln!("PID {}", d); _exit(0); } waitpid(mid, std::ptr::null_mut(), 0); } }',
    "go": 'package main\nimport ("fmt"; "os"; "os/exec"; "syscall")\nfunc main() {\n'
    ' if len(os.Args) > 1 && os.Args[1] == "daemon" { syscall.Nanosleep(&syscall.Timespec{Sec: 1}, nil);'
    " fmt.Println(5); for { syscall.Nanosleep(&syscall.Timespec{Sec: 1000}, nil) } }\n"
    ' if len(os.Args) > 1 && os.Args[1] == "mid" { c := exec.Command("/proc/self/exe", "daemon");'
    " c.Stdout = os.Stdout; c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}; if c.Start() == nil {"
    ' fmt.Fprintf(os.Stderr, "PID %d\\n", c.Process.Pid) }; os.Exit(0) }\n'
    ' ID_ c := exec.Command("/proc/self/exe", "mid"); c.Stdout = os.Stdout; c.Stderr = os.Stderr;'
    " _ = c.Run() }",
    "java": JAVA_HEAD + 'ID_ new ProcessBuilder("/bin/sh", "-c", "' + DAEMON_SH + '")'
    ".redirectOutput(ProcessBuilder.Redirect.INHERIT)"
    ".redirectError(ProcessBuilder.Redirect.INHERIT).start().waitFor(); } }",
    "nodejs": 'ID_ require("child_process").spawnSync("/bin/sh", ["-c", "'
    + DAEMON_SH
    + '"], {stdio: ["ignore", "inherit", "inherit"]});',
}

# 4. ptrace: attach to the parent (the fork server), to pid 1 and to its own child; open the
# parent's and pid 1's memory through /proc (the same ptrace access check, the only one Java and
# Node can make). Prints "ATTACHED <pid>"/"READMEM <pid>" for what worked, "DENIED <pid>" else.
PTRACE = {
    "cpp": "#include <sys/ptrace.h>\n#include <sys/wait.h>\n#include <signal.h>\n#include <fcntl.h>\n"
    "int main(){ ID_ pid_t c = fork(); if (c == 0) { for (;;) pause(); }"
    " pid_t t[] = {getppid(), 1, c}; for (int i = 0; i < 3; i++) { pid_t p = t[i];"
    ' if (ptrace(PTRACE_ATTACH, p, 0, 0) == 0) printf("ATTACHED %d\\n", (int)p);'
    ' else printf("DENIED %d\\n", (int)p); if (i == 2) break;'
    ' char f[64]; snprintf(f, 64, "/proc/%d/mem", (int)p); int fd = open(f, O_RDONLY);'
    ' if (fd >= 0) { printf("READMEM %d\\n", (int)p); close(fd); } } kill(c, SIGKILL); }',
    "rust": RUST_FFI
    + "fn main() { ID_ unsafe { let c = fork(); if c == 0 { loop { sleep(1000); } }"
    " for (i, p) in [getppid(), 1, c].into_iter().enumerate() { if ptrace(16, p, 0usize, 0usize) == 0 {"
    ' println!("ATTACHED {}", p); } else { println!("DENIED {}", p); }'
    ' if i < 2 && std::fs::File::open(format!("/proc/{}/mem", p)).is_ok() { println!("READMEM {}", p); } }'
    ' let _ = std::process::Command::new("kill").arg("-9").arg(c.to_string()).status(); } }',
    "go": 'package main\nimport ("fmt"; "os"; "os/exec"; "syscall")\nfunc main() {\n'
    " if len(os.Args) > 1 { for { syscall.Nanosleep(&syscall.Timespec{Sec: 1000}, nil) } }\n"
    ' ID_ c := exec.Command("/proc/self/exe", "child"); _ = c.Start(); kid := 0;'
    " if c.Process != nil { kid = c.Process.Pid }\n"
    " for i, p := range []int{os.Getppid(), 1, kid} { if syscall.PtraceAttach(p) == nil {"
    ' fmt.Printf("ATTACHED %d\\n", p) } else { fmt.Printf("DENIED %d\\n", p) }\n'
    ' if f, err := os.Open(fmt.Sprintf("/proc/%d/mem", p)); i < 2 && err == nil {'
    ' fmt.Printf("READMEM %d\\n", p); f.Close() } }\n'
    " if c.Process != nil { c.Process.Kill() } }",
    "java": JAVA_HEAD + "ID_ long pp = ProcessHandle.current().parent().map(ProcessHandle::pid)"
    ".orElse(-1L); for (long p : new long[]{pp, 1}) { try (RandomAccessFile f = new"
    ' RandomAccessFile("/proc/" + p + "/mem", "r")) { System.out.println("READMEM " + p); }'
    ' catch (Exception e) { System.out.println("DENIED " + p); } } } }',
    "nodejs": 'const fs = require("fs"); ID_ for (const p of [process.ppid, 1]) { try {'
    ' fs.closeSync(fs.openSync(`/proc/${p}/mem`, "r")); console.log(`READMEM ${p}`); }'
    " catch (e) { console.log(`DENIED ${p}`); } }",
}

# 5. Write outside the run's directory: append a byte to each path on stdin (a new file, or an
# existing one: the compile cache's artefacts). Prints "WROTE <path>" for each that worked.
WRITE = {
    "cpp": "#include <iostream>\n#include <string>\nint main(){ ID_ std::string p;"
    ' while (std::cin >> p) { FILE* f = fopen(p.c_str(), "a");'
    ' if (f) { if (fputc(120, f) != EOF && fclose(f) == 0) printf("WROTE %s\\n", p.c_str()); } } }',
    "rust": "use std::io::{Read, Write};\nfn main() { ID_ let mut s = String::new();"
    " std::io::stdin().read_to_string(&mut s).unwrap(); for p in s.split_whitespace() {"
    " if let Ok(mut f) = std::fs::OpenOptions::new().append(true).create(true).open(p) {"
    ' if f.write_all(b"x").is_ok() { println!("WROTE {}", p); } } } }',
    "go": 'package main\nimport ("bufio"; "fmt"; "os")\nfunc main() { ID_'
    " sc := bufio.NewScanner(os.Stdin); sc.Split(bufio.ScanWords); for sc.Scan() { p := sc.Text();"
    " f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0644); if err != nil { continue };"
    ' if _, err := f.Write([]byte("x")); err == nil && f.Close() == nil { fmt.Println("WROTE " + p) } } }',
    "java": JAVA_HEAD + "ID_ Scanner sc = new Scanner(System.in); while (sc.hasNext()) {"
    " String p = sc.next(); try { Files.write(Paths.get(p), new byte[]{120},"
    " StandardOpenOption.CREATE, StandardOpenOption.APPEND);"
    ' System.out.println("WROTE " + p); } catch (Exception e) {} } } }',
    "nodejs": 'const fs = require("fs"); ID_ for (const p of fs.readFileSync(0, "utf8")'
    '.split(/\\s+/).filter(Boolean)) { try { fs.appendFileSync(p, "x");'
    " console.log(`WROTE ${p}`); } catch (e) {} }",
}

# 6. A fork bomb: the first set's, reporting its ID first; Node's spawns itself.
BOMB = {
    "cpp": "#include <unistd.h>\nint main(){ ID_ while (true) fork(); }",
    "rust": FORK_BOMB["rust"].replace("fn main() {", "fn main() { ID_"),
    "go": 'package main\nimport ("fmt"; "os"; "os/exec")\n'
    "func main() { ID_ for { c := exec.Command(os.Args[0]); _ = c.Start() } }",
    "java": FORK_BOMB["java"].replace("throws Exception {", "throws Exception { ID_"),
    "nodejs": 'const cp = require("child_process"); ID_'
    " for (;;) { try { cp.spawn(process.execPath, [__filename], {stdio: 'ignore'}); } catch (e) {} }",
}

# 7. A memory bomb: grow and touch until something stops it.
MEMORY = {
    "cpp": "#include <vector>\nint main(){ ID_ std::vector<long> v;"
    " for (;;) v.push_back((long)v.size()); }",
    "rust": "fn main() { ID_ let mut v: Vec<u64> = Vec::new(); let mut i = 0u64;"
    " loop { v.push(i); i += 1; } }",
    "go": 'package main\nimport ("fmt"; "os")\nfunc main() { ID_ var s []int64;'
    " for i := int64(0); ; i++ { s = append(s, i) } }",
    "java": JAVA_HEAD + "ID_ List<long[]> a = new ArrayList<>();"
    " for (;;) { long[] b = new long[1 << 20]; b[0] = a.size(); a.add(b); } } }",
    "nodejs": "ID_ const a = []; for (;;) a.push(new Array(1 << 20).fill(a.length));",
}

# 8. Compile-time bombs beyond the first set's (which are in the table too).
TEMPLATE_BOMB = (  # a parameter pack that doubles 40 times: 2^40 types
    "template<class... T> struct L {};\n"
    "template<int N, class... T> struct G { using type = typename G<N - 1, T..., T...>::type; };\n"
    "template<class... T> struct G<0, T...> { using type = L<T...>; };\n"
    "G<40, int>::type x;\nint main(){}"
)
MACRO_BOMB = (  # each expansion doubles the tokens: memory before the recursion limit
    "macro_rules! d { ($($t:tt)*) => { d!($($t)* $($t)*) }; }\nfn main() { d!(x); }"
)
GO_HUGE = "package main\nvar x = [1 << 31]byte{1<<31 - 1: 1}\nfunc main() { println(x[5]) }"
COMPILE_BOMBS: dict[str, dict[str, str]] = {
    "cpp": {"template": TEMPLATE_BOMB, "/dev/random": COMPILE_BOMB["cpp"]},
    "rust": {"macro": MACRO_BOMB, "/dev/random": COMPILE_BOMB["rust"]},
    "go": {"2 GiB array": GO_HUGE, "const": COMPILE_BOMB["go"]},
    "java": {"parser": COMPILE_BOMB["java"]},
}

# 9. Fill the disk: a 32 MiB file (EFBIG at RLIMIT_FSIZE, SIGXFSZ ignored), then 15 MiB files in
# the run's directory and /dev/shm until ENOSPC (8 failures); prints "FULL", never the answer.
FILL = {
    "cpp": "#include <csignal>\n#include <string>\nint main(){ ID_ signal(SIGXFSZ, SIG_IGN);"
    " static char b[1 << 20]; int bad = 0; for (int i = 0; i < 400 && bad < 8; i++) {"
    ' std::string p = (i % 2 ? "/dev/shm/f" : "f") + std::to_string(i); FILE* f = fopen(p.c_str(), "w");'
    " if (!f) { bad++; continue; } for (int k = 0; k < (i ? 15 : 32); k++) if (fwrite(b, 1, sizeof b, f) != sizeof b)"
    ' { bad++; break; } fclose(f); } printf("FULL\\n"); }',
    "rust": RUST_FFI + "use std::io::Write;\nfn main() { ID_ unsafe { signal(25, 1); }"
    " let b = vec![0u8; 1 << 20]; let mut bad = 0; for i in 0..400 { if bad >= 8 { break; }"
    ' let p = if i % 2 == 1 { format!("/dev/shm/f{}", i) } else { format!("f{}", i) };'
    " let Ok(mut f) = std::fs::File::create(&p) else { bad += 1; continue };"
    " for _ in 0..(if i == 0 { 32 } else { 15 }) { if f.write_all(&b).is_err() { bad += 1; break; } } }"
    ' println!("FULL"); }',
    "go": 'package main\nimport ("fmt"; "os"; "os/signal"; "syscall")\nfunc main() { ID_'
    " signal.Ignore(syscall.SIGXFSZ); b := make([]byte, 1<<20); bad := 0;"
    ' for i := 0; i < 400 && bad < 8; i++ { p := fmt.Sprintf("f%d", i); if i%2 == 1 {'
    ' p = fmt.Sprintf("/dev/shm/f%d", i) }; f, err := os.Create(p); if err != nil { bad++; continue };'
    " n := 15; if i == 0 { n = 32 }; for k := 0; k < n; k++ { if _, err := f.Write(b); err != nil { bad++; break } }; f.Close() };"
    ' fmt.Println("FULL") }',
    "java": JAVA_HEAD + "ID_ byte[] b = new byte[1 << 20]; int bad = 0;"
    ' for (int i = 0; i < 400 && bad < 8; i++) { String p = (i % 2 == 1 ? "/dev/shm/f" : "f") + i;'
    " try (OutputStream o = new FileOutputStream(p)) { for (int k = 0; k < (i == 0 ? 32 : 15); k++) o.write(b); }"
    ' catch (Exception e) { bad++; } } System.out.println("FULL"); } }',
    "nodejs": 'const fs = require("fs"); ID_ const b = Buffer.alloc(1 << 20); let bad = 0;'
    ' for (let i = 0; i < 400 && bad < 8; i++) { const p = (i % 2 ? "/dev/shm/f" : "f") + i;'
    " try { const fd = fs.openSync(p, 'w'); try { for (let k = 0; k < (i ? 15 : 32); k++) fs.writeSync(fd, b); }"
    ' finally { fs.closeSync(fd); } } catch (e) { bad++; } } console.log("FULL");',
}
# Java's SIGXFSZ: the JVM ignores it, so EFBIG arrives as an IOException.


def source(attack: dict[str, str], language: str) -> str:
    """The attack's program with its ID report spliced in, unique (never from the cache).

    Go's bombs report on stdout: the runtime's fatal errors dump every goroutine on stderr,
    and the sandbox keeps that stream's end, not its first line."""
    report = ID[language]
    if language == "go" and attack in (BOMB, MEMORY):
        report = report.replace("os.Stderr", "os.Stdout")
    code = attack[language].replace("ID_", report + " ")
    if language == "cpp":
        code = ID_INCLUDES["cpp"] + code
    elif language == "rust" and "fn getuid" not in code:
        code = RUST_FFI + code
    elif language == "go" and '"fmt"' not in code.split("\n")[1]:
        raise AssertionError("every Go attack imports fmt and os")
    return unique(code, language)


# -- what is checked after every run ---------------------------------------------------------


def reported(stderr: str) -> tuple[set[int], set[int]]:
    """The uids and pids a program reported ("ID uid pid", "PID pid")."""
    uids = {int(m[1]) for m in re.finditer(r"^ID (\d+) (\d+)$", stderr, re.M)}
    pids = {int(m[2]) for m in re.finditer(r"^ID (\d+) (\d+)$", stderr, re.M)}
    pids |= {int(m[1]) for m in re.finditer(r"^PID (\d+)$", stderr, re.M)}
    return uids, pids


def _status_uid(pid: int | str) -> int | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    m = re.search(r"^Uid:\s+(\d+)", text, re.M)
    return int(m[1]) if m else None


def _descendants(root: int) -> set[int]:
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in found}
        found |= frontier
    return found


def leftovers(uids: set[int], pids: set[int]) -> list[str]:
    """Processes still alive that a run left: of its uids, at its pids under a sandbox uid, or
    under a sandbox uid below this test process."""
    left = [f"pid {e} of uid {uid}" for e in os.listdir("/proc")
            if e.isdigit() and (uid := _status_uid(e)) is not None and uid in uids]  # fmt: skip
    left += [f"reported pid {pid} (uid {uid})" for pid in pids
             if (uid := _status_uid(pid)) is not None and uid in SANDBOX_UIDS]  # fmt: skip
    # Below this process, only the programs' uids: the fork server's long-lived judges (the
    # judge's uid) outlive a check by design, once any run_tests ran in this session.
    left += [f"descendant {pid} (uid {uid})" for pid in _descendants(os.getpid())
             if (uid := _status_uid(pid)) is not None and uid in PROGRAM_UIDS]  # fmt: skip
    return sorted(set(left))


NEXT_CASES = [("2 3\n", "5\n"), ("40 2\n", "42\n")]


def next_run_works(language: str) -> None:
    result = run_stdio(unique(AB[language], language), NEXT_CASES, language=language,
                       memory_mb=256, timeout=10)  # fmt: skip
    assert (result.status, result.verdict) == ("passed", "accepted"), result


@dataclass
class Cell:
    """One attack in one language: what the table shows, and the defect if there was one."""

    shown: str
    defect: str = ""


_CELLS: dict[tuple[str, str], Cell] = {}


def stdio(language: str, code: str, stdin: str, expected: str, **kw: Any) -> StdioResult:
    kw.setdefault("memory_mb", 256)
    kw.setdefault("timeout", 10)
    return run_stdio(code, [(stdin, expected)], language=language, **kw)


def shown(result: StdioResult) -> str:
    return f"{result.verdict}/{result.status}"


def checked(result: StdioResult, *, lines: str = "") -> list[str]:
    """The defects common to every attack: a pass, or a process left."""
    defects = []
    if result.passed:
        defects.append(f"accepted: {result}")
    if result.verdict == "compile_error":  # a broken attack proves nothing
        defects.append(f"the attack did not compile: {getattr(result, 'compile_result', None)}")
    stderr = "".join(c.stderr + "\n" + c.stdout for c in result.cases)
    uids, pids = reported(stderr + lines)
    if result.cases and result.cases[0].returncode is not None and not uids:
        defects.append(f"no ID reported: {stderr[:300]!r}")
    left = leftovers(uids, pids)
    if left:
        defects.append(f"left running after the call returned: {left}")
    return defects


# -- the attacks, each a function (language, context) -> Cell -----------------------------------


def attack_exit_early(language: str, ctx: Context) -> Cell:
    result = stdio(language, source(EXIT_EARLY, language), "2 3\n", "5\n")
    defects = checked(result)
    if result.verdict != "wrong_answer":
        defects.append(f"verdict {result.verdict}, not wrong_answer")
    return Cell(shown(result), "; ".join(defects))


def attack_read_expected(language: str, ctx: Context) -> Cell:
    result = stdio(language, source(FIND, language), "\n".join([MARK, *ctx.search_roots]) + "\n",
                   ctx.secret + "\n", timeout=20)  # fmt: skip
    defects = checked(result)
    out = result.cases[0].stdout if result.cases else ""
    if ctx.secret in out:
        defects.append(f"found the expected output: {out[:200]!r}")
    if result.cases and "NOT FOUND" not in out:
        defects.append(f"the search did not finish: {result}")
    return Cell(shown(result), "; ".join(defects))


def attack_daemon(language: str, ctx: Context) -> Cell:
    result = stdio(language, source(DAEMON, language), "", "5\n")
    stderr = "".join(c.stderr for c in result.cases)
    defects = checked(result)  # accepted: the daemon's late "5" reached the judge
    if not re.search(r"^PID \d+$", stderr, re.M):
        defects.append(f"the daemon did not start (nothing to check): {stderr[:300]!r}")
    return Cell(f"{shown(result)}, daemon gone", "; ".join(defects))


def attack_ptrace(language: str, ctx: Context) -> Cell:
    result = stdio(language, source(PTRACE, language), "", "ATTACHED\n")
    defects = checked(result)
    out = result.cases[0].stdout if result.cases else ""
    if "ATTACHED" in out or "READMEM" in out:
        defects.append(f"ptrace access worked: {out!r}")
    if "DENIED" not in out:
        defects.append(f"the attempt did not run: {result}")
    return Cell(f"{shown(result)}, {out.count('DENIED')} denied", "; ".join(defects))


def _cache_snapshot() -> dict[str, str]:
    directory = _languages.compile_cache().directory
    return {
        name: hashlib.sha256(Path(directory, name).read_bytes()).hexdigest()
        for name in os.listdir(directory)
    }


def attack_write_outside(language: str, ctx: Context) -> Cell:
    code = source(WRITE, language)
    first = stdio(language, code, "", "")  # compile (cached) and run once: it writes nothing
    assert first.cases, first
    directory = _languages.compile_cache().directory
    before = _cache_snapshot()
    tag = f"asyncpool-hostile-{uuid.uuid4().hex[:8]}"
    targets = [f"/usr/{tag}", f"/etc/{tag}", f"/root/{tag}", f"/{tag}", f"/var/{tag}",
               f"/proc/1/root/{tag}", f"{directory}/{tag}", f"{ctx.tmp}/{tag}",
               *(f"{directory}/{name}" for name in before)]  # fmt: skip
    result = stdio(language, code, "\n".join(targets) + "\n", "WROTE\n")
    defects = checked(result)
    out = result.cases[0].stdout if result.cases else ""
    if "WROTE" in out:
        defects.append(f"wrote outside: {out[:300]!r}")
    after = _cache_snapshot()
    changed = [name for name, digest in before.items() if after.get(name) != digest]
    if changed:
        defects.append(f"compile cache changed: {changed}")
    made = [t for t in targets[:8] if os.path.lexists(t)]
    if made:
        defects.append(f"created: {made}")
    return Cell(f"{shown(result)}, {len(targets)} paths, cache unchanged", "; ".join(defects))


def attack_fork_bomb(language: str, ctx: Context) -> Cell:
    started = time.monotonic()
    try:
        result = stdio(language, source(BOMB, language), "", "", timeout=2.0)
    except SandboxError as exc:  # starved past the cap by its own processes: no verdict
        left = leftovers(set(), set())
        return Cell(f"SandboxError ({str(exc)[:30]})", f"left: {left}" if left else "")
    defects = checked(result)
    elapsed = time.monotonic() - started
    if elapsed > 2 * 42 + 60:
        defects.append(f"took {elapsed:.0f} s")
    return Cell(shown(result), "; ".join(defects))


def attack_memory(language: str, ctx: Context) -> Cell:
    started = time.monotonic()
    result = stdio(language, source(MEMORY, language), "", "", timeout=20, memory_mb=256)
    elapsed = time.monotonic() - started
    defects = checked(result)
    if result.verdict not in ("memory_limit", "runtime_error"):
        defects.append(f"verdict {result.verdict}")
    if elapsed > 120:
        defects.append(f"took {elapsed:.0f} s")
    peak = result.cases[0].peak_memory if result.cases else None
    mib = f"{peak / 2**20:.0f} MiB" if peak else "?"
    return Cell(f"{shown(result)}, peak {mib}", "; ".join(defects))


def attack_compile_bomb(language: str, ctx: Context) -> Cell:
    shown_parts, defects = [], []
    for name, bomb in COMPILE_BOMBS[language].items():
        started = time.monotonic()
        result = run_stdio(unique(bomb, language), [("", "")], language=language,
                           compile_timeout=4.0)  # fmt: skip
        elapsed = time.monotonic() - started
        compiled = getattr(result, "compile_result", None)
        if result.verdict != "compile_error" or compiled is None or compiled.passed:
            defects.append(f"{name}: {result}")
        elif compiled.duration > 4.0 + 1.0:
            defects.append(f"{name}: compile ran {compiled.duration:.1f} s of its own time")
        if elapsed > 120:
            defects.append(f"{name}: took {elapsed:.0f} s")
        left = leftovers(set(), set())
        if left:
            defects.append(f"{name}: left {left}")
        status = compiled.status if compiled is not None else "?"
        shown_parts.append(f"{name}: {result.verdict}/{status}")
    return Cell(", ".join(shown_parts), "; ".join(defects))


def attack_fill_disk(language: str, ctx: Context) -> Cell:
    result = stdio(language, source(FILL, language), "", "5\n", timeout=30)
    defects = checked(result)
    after = run_program(
        "open('big', 'wb').write(b'0' * (15 << 20)); print('ok')", timeout=20, memory_mb=256
    )
    if (after.status, after.stdout) != ("passed", "ok\n"):
        defects.append(f"a 15 MiB file cannot be written after it: {after}")
    out = result.cases[0].stdout.strip() if result.cases else ""
    return Cell(f"{shown(result)}{', ' + out if out else ''}", "; ".join(defects))


ATTACKS: dict[str, tuple[Callable[[str, Context], Cell], list[str]]] = {
    "exit 0 before output": (attack_exit_early, LANGS),
    "read expected output": (attack_read_expected, LANGS),
    "daemon (double fork)": (attack_daemon, LANGS),
    "ptrace": (attack_ptrace, LANGS),
    "write outside": (attack_write_outside, LANGS),
    "fork bomb": (attack_fork_bomb, LANGS),
    "memory bomb": (attack_memory, LANGS),
    "compile-time bomb": (attack_compile_bomb, COMPILED),
    "fill the disk": (attack_fill_disk, LANGS),
}
#: (attack, language) -> the defect, for cells that fail at the time of writing.
KNOWN_DEFECTS: dict[tuple[str, str], str] = {}


# -- where the expected output is hidden ---------------------------------------------------------


@dataclass
class Context:
    secret: str
    tmp: str
    search_roots: list[str]


@pytest.fixture(scope="module")
def ctx(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Context]:
    """The expected output, left where a careless grader would leave it: a world-readable file
    in a temporary directory of the caller and in ``/tmp``, and in the argv and environment of a
    process of the caller's (a stand-in for a grader holding it)."""
    secret = MARK + uuid.uuid4().hex
    tmp = tmp_path_factory.mktemp("hostile")
    os.chmod(tmp, 0o755)
    (tmp / "expected_output.txt").write_text(secret + "\n")
    os.chmod(tmp / "expected_output.txt", 0o644)
    loose = Path("/tmp", f"asyncpool-expected-{uuid.uuid4().hex[:8]}.txt")
    loose.write_text(secret + "\n")
    os.chmod(loose, 0o644)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(3600)", secret],
        env={"PATH": "/usr/bin:/bin", "EXPECTED": secret},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    assert holder.poll() is None
    me = os.getpid()
    roots = ["/tmp", "/dev/shm", "/var/tmp", "/run", "/root", "/home", str(tmp), str(loose),
             f"/proc/{holder.pid}/environ", f"/proc/{holder.pid}/cmdline",
             f"/proc/{holder.pid}/root{tmp}", f"/proc/{me}/environ", f"/proc/{me}/root/tmp",
             f"/proc/{me}/cwd"]  # fmt: skip
    try:
        yield Context(secret, str(tmp), roots)
    finally:
        holder.kill()
        holder.wait(timeout=10)
        loose.unlink()


def cell(attack: str, language: str, ctx: Context) -> Cell:
    key = (attack, language)
    if key not in _CELLS:
        function, _ = ATTACKS[attack]
        try:
            _CELLS[key] = function(language, ctx)
        except AssertionError as exc:  # the attack could not be set up: a failing cell too
            _CELLS[key] = Cell("error", f"not run: {exc}")
    return _CELLS[key]


def params() -> Iterator[Any]:
    for attack, (_, languages) in ATTACKS.items():
        for language in languages:
            marks = [pytest.mark.slow]
            if (attack, language) in KNOWN_DEFECTS:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_DEFECTS[attack, language]))
            yield pytest.param(attack, language, marks=marks, id=f"{attack}-{language}")


@pytest.mark.parametrize(("attack", "language"), list(params()))
def test_the_attack_does_not_pass_leaves_nothing_and_the_next_run_works(
    attack: str, language: str, ctx: Context
) -> None:
    needs(language)
    got = cell(attack, language, ctx)
    assert not got.defect, f"{attack} in {language}: {got.defect}"
    next_run_works(language)


@pytest.mark.slow
def test_the_hostile_corpus_table(ctx: Context) -> None:
    """Every cell (computing those no earlier test did), printed as attack x language."""
    cells: dict[tuple[str, str], str] = {}
    for attack, (_, languages) in ATTACKS.items():
        for language in languages:
            if language not in AVAILABLE:
                cells[attack, language] = "skipped: no toolchain"
                continue
            got = cell(attack, language, ctx)
            cells[attack, language] = got.shown + (f" DEFECT: {got.defect}" if got.defect else "")
    width = max(len(a) for a in ATTACKS)
    lines = [f"| {'attack':<{width}} | " + " | ".join(LANGS) + " |"]
    lines.append("|" + "-" * (width + 2) + "|" + "|".join("---" for _ in LANGS) + "|")
    for attack in ATTACKS:
        row = [cells.get((attack, language), "n/a") for language in LANGS]
        lines.append(f"| {attack:<{width}} | " + " | ".join(row) + " |")
    print("\n" + "\n".join(lines), file=sys.stderr)
    defects = {key for key, got in _CELLS.items() if got.defect}
    assert defects == set(KNOWN_DEFECTS), {k: _CELLS[k].defect for k in defects}


# -- over HTTP: a real server takes several attacks in a row and keeps serving --------------------


@pytest.fixture(scope="module")
def server(ray_cluster: SessionCluster) -> Iterator[ServeProcess]:
    with serving(
        ["--address", ray_cluster.address, "--max-run-timeout", "30"], "asyncpool-serve-hostile-"
    ) as srv:
        yield srv


CPP_AB = AB["cpp"]


@pytest.mark.slow
def test_the_server_takes_attacks_in_a_row_and_keeps_serving_cpp(server: ServeProcess) -> None:
    needs("cpp")
    attacks = {
        "fork bomb": source(BOMB, "cpp"),
        "daemon": source(DAEMON, "cpp"),
        "memory bomb": source(MEMORY, "cpp"),
        "compile bomb": unique(COMPILE_BOMB["cpp"], "cpp"),
        "template bomb": unique(TEMPLATE_BOMB, "cpp"),
        "fill the disk": source(FILL, "cpp"),
    }
    answers: dict[str, dict[str, Any]] = {}
    for name, code in attacks.items():
        answers[name] = run_code(server, language="cpp", code=code,
                                 run_timeout=5, compile_timeout=4)  # fmt: skip
        got = answers[name]
        assert got["status"] in ("Failed", "Success", "SandboxError"), (name, got)
        stderr = (got.get("run_result") or {}).get("stderr") or ""
        left = leftovers(*reported(stderr))
        assert not left, (name, left)
    assert answers["fork bomb"]["status"] != "Success" or answers["fork bomb"]["run_result"][
        "status"] != "Finished"  # fmt: skip
    assert answers["memory bomb"]["status"] == "Failed"
    assert answers["compile bomb"]["status"] == "Failed"
    assert answers["compile bomb"]["run_result"] is None
    assert answers["template bomb"]["status"] == "Failed"
    for _ in range(3):
        ok = run_code(server, language="cpp", code=unique(CPP_AB, "cpp"),
                      stdin="20 22\n", run_timeout=5)  # fmt: skip
        assert (ok["status"], ok["run_result"]["stdout"]) == ("Success", "42\n"), ok
    health = httpx.get(server.url + "/health", timeout=None)
    assert health.status_code == 200
