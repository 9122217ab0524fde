"""The ``stdio`` workload's problem set: competitive-programming problems written for the bench.

Each :class:`Problem` has deterministic inputs (seeded generators), expected outputs computed
by a *reference* implementation in Python (a function of the generated data, written apart
from the solutions: never the text of a solution), a comparison mode (``"tokens"``, or
``"float"`` with run_stdio's default tolerance of 1e-6), and six solutions: a correct, a wrong
and a too-slow one in C++ and in Python.

* **correct**: right on every case, well within :data:`TIME_LIMIT` (the largest case is sized
  for the Python one to take tens of milliseconds).
* **wrong**: a plausible bug (off by one, 32-bit arithmetic, a greedy that is not optimal...)
  that gives a wrong answer on at least one case, and never crashes.
* **slow**: a right but naive algorithm (quadratic, exponential, unary) that the last case,
  the largest, makes hopeless: 1e9 or more dependent steps even in C++ ``-O2``, so it ends at
  the time limit whatever the machine. Where ``-O2`` would fold a naive loop into a formula
  (``a + b`` by counting), the C++ one counts through a ``volatile``.

Cases are ordered smallest first, so a wrong or slow solution judged with ``stop_on_failure``
fails on the first case that shows it. Expected outputs are computed once per process on the
first call of :func:`problems` (not at import: the CLI imports the workloads for ``--help``).
"""

from __future__ import annotations

import functools
import math
import random
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

#: Each case's time limit (the sandbox's own CPU time; the bare ``limit`` runs: wall time).
TIME_LIMIT = 1.0

Kind = Literal["correct", "wrong", "slow"]
KINDS: tuple[Kind, ...] = ("correct", "wrong", "slow")
LANGUAGES = ("cpp", "python")
#: The verdict each kind of solution must get.
EXPECTED_VERDICT: dict[str, str] = {
    "correct": "accepted", "wrong": "wrong_answer", "slow": "time_limit",
}  # fmt: skip

MOD = 1_000_000_007


@dataclass(frozen=True)
class Problem:
    """One problem: its cases (stdin, expected stdout), its checker and its six solutions."""

    name: str
    checker: Literal["tokens", "float"]
    cases: tuple[tuple[str, str], ...]
    #: ``(language, kind) -> source``.
    solutions: dict[tuple[str, str], str]

    def solution(self, language: str, kind: str) -> str:
        return self.solutions[(language, kind)]


@dataclass(frozen=True)
class _Spec:
    name: str
    checker: Literal["tokens", "float"]
    #: ``make(rng) -> [data, ...]``: the cases' data, smallest first.
    make: Callable[[random.Random], list[Any]]
    fmt: Callable[[Any], str]  # data -> stdin
    ref: Callable[[Any], str]  # data -> expected stdout
    sources: dict[tuple[str, str], str]


_SPECS: list[_Spec] = []


def _problem(
    name: str, checker: Literal["tokens", "float"], make: Callable[[random.Random], list[Any]],
    fmt: Callable[[Any], str], ref: Callable[[Any], str], *, cpp: tuple[str, str, str],
    py: tuple[str, str, str],
) -> None:  # fmt: skip
    sources: dict[tuple[str, str], str] = {
        ("cpp", k): s for k, s in zip(KINDS, cpp, strict=True)
    }
    sources |= {("python", k): s for k, s in zip(KINDS, py, strict=True)}
    _SPECS.append(_Spec(name, checker, make, fmt, ref, sources))


def _lines(*rows: Any) -> str:
    return "".join((" ".join(map(str, r)) if isinstance(r, (list, tuple)) else str(r)) + "\n"
                   for r in rows)  # fmt: skip


def _f(x: float) -> str:
    return f"{x:.9f}"


_HEAD = "#include <cstdio>\n#include <vector>\n#include <algorithm>\n#include <string>\n" \
        "#include <cstring>\n#include <cmath>\nusing namespace std;\ntypedef long long ll;\n"
_PYHEAD = "import sys\n"


def _c(body: str) -> str:
    return _HEAD + body


def _p(body: str) -> str:
    return _PYHEAD + body


# -- 1. a + b -------------------------------------------------------------------------------------


def _aplusb_make(rng: random.Random) -> list[Any]:
    return [
        [(3, 4), (0, 0), (10, 90)],
        [(rng.randint(-50, 50), rng.randint(-50, 50)) for _ in range(20)],
        [(rng.randint(-10**18, 10**18), rng.randint(-10**18, 10**18)) for _ in range(200)],
    ]


_problem(
    "aplusb", "tokens", _aplusb_make, lambda d: _lines(len(d), *d),
    lambda d: _lines(*[a + b for a, b in d]),
    cpp=(
        _c('int main(){int t;scanf("%d",&t);while(t--){ll a,b;scanf("%lld %lld",&a,&b);'
           'printf("%lld\\n",a+b);}}'),
        _c('int main(){int t;scanf("%d",&t);while(t--){double a,b;scanf("%lf %lf",&a,&b);'
           'printf("%.0f\\n",a+b);}}'),
        _c('int main(){int t;scanf("%d",&t);while(t--){ll a,b;scanf("%lld %lld",&a,&b);'
           'volatile ll s=a;while(b>0){s=s+1;b--;}while(b<0){s=s-1;b++;}'
           'printf("%lld\\n",(ll)s);}}'),
    ),
    py=(
        _p("d=sys.stdin.read().split()\nt=int(d[0])\n"
           "print('\\n'.join(str(int(d[1+2*i])+int(d[2+2*i])) for i in range(t)))\n"),
        _p("d=sys.stdin.read().split()\nt=int(d[0])\n"
           "print('\\n'.join('%.0f'%(float(d[1+2*i])+float(d[2+2*i])) for i in range(t)))\n"),
        _p("d=sys.stdin.read().split()\nt=int(d[0])\nout=[]\nfor i in range(t):\n"
           "    s=int(d[1+2*i]);b=int(d[2+2*i])\n    while b>0:\n        s+=1;b-=1\n"
           "    while b<0:\n        s-=1;b+=1\n    out.append(s)\n"
           "print('\\n'.join(map(str,out)))\n"),
    ),
)

# -- 2. prefix sums over range queries ------------------------------------------------------------


def _array_and_ranges(
    rng: random.Random, n: int, q: int, wide: bool, bound: int
) -> tuple[list[int], list[tuple[int, int]]]:
    """``n`` integers in ``[-bound, bound]`` and ``q`` 1-based inclusive ranges over them
    (``wide``: each covering nearly the whole array, the worst case for a per-query loop)."""
    a = [rng.randint(-bound, bound) for _ in range(n)]
    qs = []
    for _ in range(q):
        lo = rng.randint(1, 10) if wide else rng.randint(1, n)
        qs.append((lo, rng.randint(n - 10, n) if wide else rng.randint(lo, n)))
    return a, qs


def _prefix_sums(a: list[int]) -> list[int]:
    pre = [0]
    for x in a:
        pre.append(pre[-1] + x)
    return pre


def _prefix_make(rng: random.Random) -> list[Any]:
    return [_array_and_ranges(rng, n, n, wide, 10**9)
            for n, wide in ((5, False), (100, False), (100_000, True))]


def _prefix_ref(d: Any) -> str:
    a, qs = d
    pre = _prefix_sums(a)
    return _lines(*[pre[r] - pre[l_ - 1] for l_, r in qs])


_problem(
    "prefix_queries", "tokens", _prefix_make,
    lambda d: _lines((len(d[0]), len(d[1])), d[0], *d[1]), _prefix_ref,
    cpp=(
        _c('int main(){int n,q;scanf("%d %d",&n,&q);vector<ll>p(n+1,0);for(int i=1;i<=n;i++)'
           '{ll x;scanf("%lld",&x);p[i]=p[i-1]+x;}while(q--){int l,r;scanf("%d %d",&l,&r);'
           'printf("%lld\\n",p[r]-p[l-1]);}}'),
        _c('int main(){int n,q;scanf("%d %d",&n,&q);vector<ll>p(n+1,0);for(int i=1;i<=n;i++)'
           '{ll x;scanf("%lld",&x);p[i]=p[i-1]+x;}while(q--){int l,r;scanf("%d %d",&l,&r);'
           'printf("%lld\\n",p[r-1]-p[l-1]);}}'),
        _c('int main(){int n,q;scanf("%d %d",&n,&q);vector<ll>a(n+1);for(int i=1;i<=n;i++)'
           'scanf("%lld",&a[i]);while(q--){int l,r;scanf("%d %d",&l,&r);ll s=0;'
           'for(int i=l;i<=r;i++)s+=a[i];printf("%lld\\n",s);}}'),
    ),
    py=(
        _p("d=sys.stdin.buffer.read().split()\nn,q=int(d[0]),int(d[1])\np=[0]\n"
           "for x in d[2:2+n]:\n    p.append(p[-1]+int(x))\nout=[]\nk=2+n\nfor i in range(q):\n"
           "    l,r=int(d[k+2*i]),int(d[k+2*i+1])\n    out.append(p[r]-p[l-1])\n"
           "print('\\n'.join(map(str,out)))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn,q=int(d[0]),int(d[1])\np=[0]\n"
           "for x in d[2:2+n]:\n    p.append(p[-1]+int(x))\nout=[]\nk=2+n\nfor i in range(q):\n"
           "    l,r=int(d[k+2*i]),int(d[k+2*i+1])\n    out.append(p[r-1]-p[l-1])\n"
           "print('\\n'.join(map(str,out)))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn,q=int(d[0]),int(d[1])\n"
           "a=[0]+[int(x) for x in d[2:2+n]]\nout=[]\nk=2+n\nfor i in range(q):\n"
           "    l,r=int(d[k+2*i]),int(d[k+2*i+1])\n    s=0\n    for j in range(l,r+1):\n"
           "        s+=a[j]\n    out.append(s)\nprint('\\n'.join(map(str,out)))\n"),
    ),
)

# -- 3. maximum subarray sum ----------------------------------------------------------------------


def _maxsub_make(rng: random.Random) -> list[Any]:
    return [
        [1, -2, 3, 4, -1],
        [rng.randint(-100, -1) for _ in range(30)],
        [rng.randint(-10**4, 10**4) for _ in range(100_000)],
    ]


def _maxsub_ref(a: list[int]) -> str:
    best = max(a)
    for i in range(len(a)):  # the reference is quadratic only where the data is small
        if len(a) > 1000:
            break
        s = 0
        for j in range(i, len(a)):
            s += a[j]
            best = max(best, s)
    if len(a) > 1000:
        cur, best = 0, a[0]
        for x in a:
            cur = max(x, cur + x)
            best = max(best, cur)
    return _lines(best)


_problem(
    "max_subarray", "tokens", _maxsub_make, lambda a: _lines(len(a), a), _maxsub_ref,
    cpp=(
        _c('int main(){int n;scanf("%d",&n);ll cur=0,best=-(1LL<<62);for(int i=0;i<n;i++){ll x;'
           'scanf("%lld",&x);cur=max(x,cur+x);best=max(best,cur);}printf("%lld\\n",best);}'),
        _c('int main(){int n;scanf("%d",&n);ll cur=0,best=0;for(int i=0;i<n;i++){ll x;'
           'scanf("%lld",&x);cur=max(0LL,cur+x);best=max(best,cur);}printf("%lld\\n",best);}'),
        _c('int main(){int n;scanf("%d",&n);vector<ll>a(n);for(auto&x:a)scanf("%lld",&x);'
           'll best=-(1LL<<62);for(int i=0;i<n;i++){ll s=0;for(int j=i;j<n;j++){s+=a[j];'
           'if(s>best)best=s;}}printf("%lld\\n",best);}'),
    ),
    py=(
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\ncur=0\nbest=None\n"
           "for x in map(int,d[1:1+n]):\n    cur=x if cur<0 else cur+x\n"
           "    if best is None or cur>best:\n        best=cur\nprint(best)\n"),
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\ncur=best=0\n"
           "for x in map(int,d[1:1+n]):\n    cur=max(0,cur+x)\n    best=max(best,cur)\n"
           "print(best)\n"),
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\na=list(map(int,d[1:1+n]))\n"
           "best=a[0]\nfor i in range(n):\n    s=0\n    for j in range(i,n):\n        s+=a[j]\n"
           "        if s>best:\n            best=s\nprint(best)\n"),
    ),
)

# -- 4. gcd and lcm -------------------------------------------------------------------------------


def _gcd_make(rng: random.Random) -> list[Any]:
    return [
        [(12, 18), (7, 5), (100, 10)],
        [(rng.randint(1, 200) * 6, rng.randint(1, 200) * 4) for _ in range(20)],
        [(10**9 - rng.randint(0, 100), rng.randint(1, 3)) for _ in range(50)],
    ]


_problem(
    "gcd_lcm", "tokens", _gcd_make, lambda d: _lines(len(d), *d),
    lambda d: _lines(*[(math.gcd(a, b), a * b // math.gcd(a, b)) for a, b in d]),
    cpp=(
        _c('ll g(ll a,ll b){return b?g(b,a%b):a;}int main(){int t;scanf("%d",&t);while(t--)'
           '{ll a,b;scanf("%lld %lld",&a,&b);ll x=g(a,b);printf("%lld %lld\\n",x,a/x*b);}}'),
        _c('ll g(ll a,ll b){return b?g(b,a%b):a;}int main(){int t;scanf("%d",&t);while(t--)'
           '{ll a,b;scanf("%lld %lld",&a,&b);printf("%lld %lld\\n",g(a,b),a*b);}}'),
        _c('int main(){int t;scanf("%d",&t);while(t--){ll a,b;scanf("%lld %lld",&a,&b);'
           'll x=a,y=b;while(x!=y){if(x>y)x-=y;else y-=x;}printf("%lld %lld\\n",x,a/x*b);}}'),
    ),
    py=(
        _p("import math\nd=sys.stdin.read().split()\nt=int(d[0])\nout=[]\nfor i in range(t):\n"
           "    a,b=int(d[1+2*i]),int(d[2+2*i])\n    g=math.gcd(a,b)\n"
           "    out.append('%d %d'%(g,a//g*b))\nprint('\\n'.join(out))\n"),
        _p("import math\nd=sys.stdin.read().split()\nt=int(d[0])\nout=[]\nfor i in range(t):\n"
           "    a,b=int(d[1+2*i]),int(d[2+2*i])\n    out.append('%d %d'%(math.gcd(a,b),a*b))\n"
           "print('\\n'.join(out))\n"),
        _p("d=sys.stdin.read().split()\nt=int(d[0])\nout=[]\nfor i in range(t):\n"
           "    a,b=int(d[1+2*i]),int(d[2+2*i])\n    x,y=a,b\n    while x!=y:\n"
           "        if x>y:\n            x-=y\n        else:\n            y-=x\n"
           "    out.append('%d %d'%(x,a//x*b))\nprint('\\n'.join(out))\n"),
    ),
)

# -- 5. count the primes up to N ------------------------------------------------------------------


def _primes_ref(n: int) -> str:
    if n < 2:
        return _lines(0)
    sieve = [True] * (n + 1)
    sieve[0] = sieve[1] = False
    for i in range(2, math.isqrt(n) + 1):
        if sieve[i]:
            for j in range(i * i, n + 1, i):
                sieve[j] = False
    return _lines(sum(sieve))


_problem(
    "count_primes", "tokens", lambda rng: [1, 10, 97, rng.randint(500, 1000), 2_000_000],
    lambda n: _lines(n), _primes_ref,
    cpp=(
        _c('int main(){int n;scanf("%d",&n);if(n<2){puts("0");return 0;}vector<char>s(n+1,1);'
           's[0]=s[1]=0;for(ll i=2;i*i<=n;i++)if(s[i])for(ll j=i*i;j<=n;j+=i)s[j]=0;int c=0;'
           'for(int i=0;i<=n;i++)c+=s[i];printf("%d\\n",c);}'),
        _c('int main(){int n;scanf("%d",&n);vector<char>s(n+2,1);'
           'for(ll i=2;i*i<=n;i++)if(s[i])for(ll j=i*i;j<=n;j+=i)s[j]=0;int c=0;'
           'for(int i=1;i<=n;i++)c+=s[i];printf("%d\\n",c);}'),
        _c('int main(){int n;scanf("%d",&n);int c=0;for(int i=2;i<=n;i++){bool p=true;'
           'for(int d=2;d<i;d++)if(i%d==0){p=false;break;}c+=p;}printf("%d\\n",c);}'),
    ),
    py=(
        _p("n=int(sys.stdin.read())\nif n<2:\n    print(0)\nelse:\n"
           "    s=bytearray([1])*(n+1)\n    s[0]=s[1]=0\n    i=2\n    while i*i<=n:\n"
           "        if s[i]:\n            s[i*i::i]=bytearray(len(range(i*i,n+1,i)))\n"
           "        i+=1\n    print(sum(s))\n"),
        _p("n=int(sys.stdin.read())\ns=bytearray([1])*(n+2)\ni=2\nwhile i*i<=n:\n"
           "    if s[i]:\n        s[i*i:n+1:i]=bytearray(len(range(i*i,n+1,i)))\n    i+=1\n"
           "print(sum(s[1:n+1]))\n"),
        _p("n=int(sys.stdin.read())\nc=0\nfor i in range(2,n+1):\n    p=True\n"
           "    for d in range(2,i):\n        if i%d==0:\n            p=False\n            break\n"
           "    c+=p\nprint(c)\n"),
    ),
)

# -- 6. sorting -----------------------------------------------------------------------------------


def _sort_make(rng: random.Random) -> list[Any]:
    return [
        [3, 1, 2],
        [rng.randint(-1000, 1000) for _ in range(50)],
        [rng.randint(-10**9, 10**9) for _ in range(100_000)],
    ]


_problem(
    "sort_numbers", "tokens", _sort_make, lambda a: _lines(len(a), a),
    lambda a: _lines(sorted(a)),
    cpp=(
        _c('int main(){int n;scanf("%d",&n);vector<ll>a(n);for(auto&x:a)scanf("%lld",&x);'
           'sort(a.begin(),a.end());for(int i=0;i<n;i++)printf("%lld ",a[i]);puts("");}'),
        _c('static char b[32];int main(){int n;scanf("%d",&n);vector<string>a(n);'
           'for(auto&x:a){scanf("%31s",b);x=b;}sort(a.begin(),a.end());'
           'for(auto&x:a)printf("%s ",x.c_str());puts("");}'),
        _c('int main(){int n;scanf("%d",&n);vector<ll>a(n);for(auto&x:a)scanf("%lld",&x);'
           'for(int i=0;i<n;i++)for(int j=0;j+1<n-i;j++)if(a[j]>a[j+1])swap(a[j],a[j+1]);'
           'for(int i=0;i<n;i++)printf("%lld ",a[i]);puts("");}'),
    ),
    py=(
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\n"
           "print(' '.join(map(str,sorted(map(int,d[1:1+n])))))\n"),
        _p("d=sys.stdin.read().split()\nn=int(d[0])\nprint(' '.join(sorted(d[1:1+n])))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\na=list(map(int,d[1:1+n]))\n"
           "for i in range(n):\n    for j in range(n-1-i):\n        if a[j]>a[j+1]:\n"
           "            a[j],a[j+1]=a[j+1],a[j]\nprint(' '.join(map(str,a)))\n"),
    ),
)

# -- 7. binary search: how many elements are <= x -------------------------------------------------


def _bs_make(rng: random.Random) -> list[Any]:
    def case(n: int, q: int, hi: int, big: bool) -> Any:
        a = sorted(rng.randint(0, hi) for _ in range(n))
        xs = [rng.randint(hi - hi // 50, hi) if big else rng.randint(-1, hi + 1) for _ in range(q)]
        return a, xs

    return [([1, 2, 2, 3], [2, 0, 3]), case(50, 50, 20, False), case(100_000, 100_000, 10**9, True)]


_problem(
    "bsearch_queries", "tokens", _bs_make,
    lambda d: _lines((len(d[0]), len(d[1])), d[0], d[1]),
    lambda d: _lines(*[bisect_right(d[0], x) for x in d[1]]),
    cpp=(
        _c('int main(){int n,q;scanf("%d %d",&n,&q);vector<ll>a(n);for(auto&x:a)'
           'scanf("%lld",&x);while(q--){ll x;scanf("%lld",&x);'
           'printf("%d\\n",(int)(upper_bound(a.begin(),a.end(),x)-a.begin()));}}'),
        _c('int main(){int n,q;scanf("%d %d",&n,&q);vector<ll>a(n);for(auto&x:a)'
           'scanf("%lld",&x);while(q--){ll x;scanf("%lld",&x);'
           'printf("%d\\n",(int)(lower_bound(a.begin(),a.end(),x)-a.begin()));}}'),
        _c('int main(){int n,q;scanf("%d %d",&n,&q);vector<ll>a(n);for(auto&x:a)'
           'scanf("%lld",&x);while(q--){ll x;scanf("%lld",&x);int i=0;while(i<n&&a[i]<=x)i++;'
           'printf("%d\\n",i);}}'),
    ),
    py=(
        _p("from bisect import bisect_right\nd=sys.stdin.buffer.read().split()\n"
           "n,q=int(d[0]),int(d[1])\na=list(map(int,d[2:2+n]))\n"
           "print('\\n'.join(str(bisect_right(a,int(x))) for x in d[2+n:2+n+q]))\n"),
        _p("from bisect import bisect_left\nd=sys.stdin.buffer.read().split()\n"
           "n,q=int(d[0]),int(d[1])\na=list(map(int,d[2:2+n]))\n"
           "print('\\n'.join(str(bisect_left(a,int(x))) for x in d[2+n:2+n+q]))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn,q=int(d[0]),int(d[1])\n"
           "a=list(map(int,d[2:2+n]))\nout=[]\nfor x in d[2+n:2+n+q]:\n    x=int(x)\n    i=0\n"
           "    while i<n and a[i]<=x:\n        i+=1\n    out.append(i)\n"
           "print('\\n'.join(map(str,out)))\n"),
    ),
)

# -- 8. shortest path on a grid (BFS) -------------------------------------------------------------


def _serpentine(rows: int, cols: int) -> list[str]:
    """Odd columns are walls with one gap, alternately at the bottom and the top: the only
    path runs down, across, up, across... (a row-major relaxation needs a sweep per cell of
    every upward column)."""
    grid = [["."] * cols for _ in range(rows)]
    for c in range(1, cols, 2):
        gap = rows - 1 if c % 4 == 1 else 0
        for r in range(rows):
            if r != gap:
                grid[r][c] = "#"
    return ["".join(row) for row in grid]


def _grid_make(rng: random.Random) -> list[Any]:
    small = [
        "".join("#" if rng.random() < 0.25 else "." for _ in range(12)) for _ in range(10)
    ]
    small[0] = "." + small[0][1:]
    small[-1] = small[-1][:-1] + "."
    return [
        ["...", ".#.", "..."],
        ["..#", "##.", "..."],  # unreachable
        small,
        _serpentine(200, 201),
    ]


def _grid_ref(g: list[str]) -> str:
    rows, cols = len(g), len(g[0])
    dist = {(0, 0): 0}
    frontier = [(0, 0)]
    while frontier:
        nxt = []
        for r, c in frontier:
            for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                p = (r + dr, c + dc)
                if 0 <= p[0] < rows and 0 <= p[1] < cols and g[p[0]][p[1]] == "." and p not in dist:
                    dist[p] = dist[(r, c)] + 1
                    nxt.append(p)
        frontier = nxt
    return _lines(dist.get((rows - 1, cols - 1), -1))


_BFS_CPP = (
    'static char b[1024];int main(){int R,C;scanf("%d %d",&R,&C);vector<string>g(R);'
    'for(auto&s:g){scanf("%1023s",b);s=b;}vector<int>d(R*C,-1);vector<int>q;q.push_back(0);'
    'd[0]=0;for(size_t h=0;h<q.size();h++){int r=q[h]/C,c=q[h]%C;int dr[4]={1,-1,0,0},'
    'dc[4]={0,0,1,-1};for(int k=0;k<4;k++){int y=r+dr[k],x=c+dc[k];if(y<0||y>=R||x<0||x>=C'
    '||g[y][x]!=\'.\'||d[y*C+x]>=0)continue;d[y*C+x]=d[q[h]]+1;q.push_back(y*C+x);}}'
)
_problem(
    "grid_bfs", "tokens", _grid_make, lambda g: _lines((len(g), len(g[0])), *g), _grid_ref,
    cpp=(
        _c(_BFS_CPP + 'printf("%d\\n",d[R*C-1]);}'),
        _c(_BFS_CPP + 'printf("%d\\n",max(0,d[R*C-1]));}'),
        _c('static char b[1024];int main(){int R,C;scanf("%d %d",&R,&C);vector<string>g(R);'
           'for(auto&s:g){scanf("%1023s",b);s=b;}const int INF=1<<29;vector<int>d(R*C,INF);'
           'd[0]=0;bool ch=true;while(ch){ch=false;for(int r=0;r<R;r++)for(int c=0;c<C;c++){'
           'if(g[r][c]!=\'.\')continue;int dr[4]={1,-1,0,0},dc[4]={0,0,1,-1};'
           'for(int k=0;k<4;k++){int y=r+dr[k],x=c+dc[k];if(y<0||y>=R||x<0||x>=C||'
           'g[y][x]!=\'.\')continue;if(d[y*C+x]+1<d[r*C+c]){d[r*C+c]=d[y*C+x]+1;ch=true;}}}}'
           'printf("%d\\n",d[R*C-1]>=INF?-1:d[R*C-1]);}'),
    ),
    py=(
        _p("from collections import deque\nd=sys.stdin.read().split()\nR,C=int(d[0]),int(d[1])\n"
           "g=''.join(d[2:2+R])\ndist=[-1]*(R*C)\ndist[0]=0\nq=deque([0])\nwhile q:\n"
           "    v=q.popleft()\n    r,c=divmod(v,C)\n"
           "    for y,x in ((r+1,c),(r-1,c),(r,c+1),(r,c-1)):\n"
           "        if 0<=y<R and 0<=x<C:\n            w=y*C+x\n"
           "            if g[w]=='.' and dist[w]<0:\n                dist[w]=dist[v]+1\n"
           "                q.append(w)\nprint(dist[R*C-1])\n"),
        _p("from collections import deque\nd=sys.stdin.read().split()\nR,C=int(d[0]),int(d[1])\n"
           "g=''.join(d[2:2+R])\ndist=[-1]*(R*C)\ndist[0]=0\nq=deque([0])\nwhile q:\n"
           "    v=q.popleft()\n    r,c=divmod(v,C)\n"
           "    for y,x in ((r+1,c),(r-1,c),(r,c+1),(r,c-1)):\n"
           "        if 0<=y<R and 0<=x<C:\n            w=y*C+x\n"
           "            if g[w]=='.' and dist[w]<0:\n                dist[w]=dist[v]+1\n"
           "                q.append(w)\nprint(max(0,dist[R*C-1]))\n"),
        _p("d=sys.stdin.read().split()\nR,C=int(d[0]),int(d[1])\ng=d[2:2+R]\nINF=1<<29\n"
           "dist=[[INF]*C for _ in range(R)]\ndist[0][0]=0\nch=True\nwhile ch:\n    ch=False\n"
           "    for r in range(R):\n        for c in range(C):\n            if g[r][c]!='.':\n"
           "                continue\n"
           "            for y,x in ((r+1,c),(r-1,c),(r,c+1),(r,c-1)):\n"
           "                if 0<=y<R and 0<=x<C and g[y][x]=='.' and dist[y][x]+1<dist[r][c]:\n"
           "                    dist[r][c]=dist[y][x]+1\n                    ch=True\n"
           "print(-1 if dist[R-1][C-1]>=INF else dist[R-1][C-1])\n"),
    ),
)

# -- 9. reverse a line ----------------------------------------------------------------------------


def _words(rng: random.Random, n: int) -> str:
    return " ".join(
        "".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 8))) for _ in range(n)
    )


_problem(
    "reverse_line", "tokens",
    lambda rng: ["ab cd", _words(rng, 20), _words(rng, 60_000)],
    lambda s: _lines(s), lambda s: _lines(s[::-1]),
    cpp=(
        _c('static char b[1<<21];int main(){if(!fgets(b,sizeof b,stdin))return 0;int n=strlen(b);'
           'while(n&&(b[n-1]==\'\\n\'||b[n-1]==\'\\r\'))n--;reverse(b,b+n);b[n]=0;puts(b);}'),
        _c('static char b[1<<21];int main(){vector<string>w;while(scanf("%s",b)==1)w.push_back(b);'
           'reverse(w.begin(),w.end());for(auto&x:w)printf("%s ",x.c_str());puts("");}'),
        _c('static char b[1<<21];int main(){if(!fgets(b,sizeof b,stdin))return 0;int n=strlen(b);'
           'while(n&&(b[n-1]==\'\\n\'||b[n-1]==\'\\r\'))n--;string r;'
           'for(int i=0;i<n;i++)r=string(1,b[i])+r;puts(r.c_str());}'),
    ),
    py=(
        _p("s=sys.stdin.readline().rstrip('\\r\\n')\nprint(s[::-1])\n"),
        _p("print(' '.join(sys.stdin.read().split()[::-1]))\n"),
        _p("s=sys.stdin.readline().rstrip('\\r\\n')\nr=''\nfor ch in s:\n    r=ch+r\n"
           "print(r)\n"),
    ),
)

# -- 10. palindromes ------------------------------------------------------------------------------


def _pal_make(rng: random.Random) -> list[Any]:
    def pal(n: int) -> str:
        half = "".join(rng.choice("ab") for _ in range(n // 2))
        return half + ("c" if n % 2 else "") + half[::-1]

    return [
        ["aba", "ab", "a", "abba"],
        [pal(rng.randint(1, 30)) if rng.random() < 0.5 else _words(rng, 1) for _ in range(20)],
        [pal(200_001)],
    ]


_problem(
    "palindrome", "tokens", _pal_make, lambda d: _lines(len(d), *d),
    lambda d: _lines(*["YES" if s == s[::-1] else "NO" for s in d]),
    cpp=(
        _c('static char b[1<<21];int main(){int t;scanf("%d",&t);while(t--){scanf("%s",b);'
           'int n=strlen(b);bool ok=true;for(int i=0;i<n/2;i++)if(b[i]!=b[n-1-i])ok=false;'
           'puts(ok?"YES":"NO");}}'),
        _c('static char b[1<<21];int main(){int t;scanf("%d",&t);while(t--){scanf("%s",b);'
           'int n=strlen(b)-1;bool ok=true;for(int i=0;i<n/2;i++)if(b[i]!=b[n-1-i])ok=false;'
           'puts(ok?"YES":"NO");}}'),
        _c('static char b[1<<21];int main(){int t;scanf("%d",&t);while(t--){scanf("%s",b);'
           'string s=b;bool ok=true;for(size_t i=0;i<s.size();i++){string r(s.rbegin(),s.rend());'
           'if(s[i]!=r[i])ok=false;}puts(ok?"YES":"NO");}}'),
    ),
    py=(
        _p("d=sys.stdin.read().split()\nt=int(d[0])\n"
           "print('\\n'.join('YES' if s==s[::-1] else 'NO' for s in d[1:1+t]))\n"),
        _p("d=sys.stdin.read().split()\nt=int(d[0])\n"
           "print('\\n'.join('YES' if s[:-1]==s[:-1][::-1] else 'NO' for s in d[1:1+t]))\n"),
        _p("d=sys.stdin.read().split()\nt=int(d[0])\nout=[]\nfor s in d[1:1+t]:\n"
           "    ok=True\n    for i in range(len(s)):\n        if s[i]!=''.join(reversed(s))[i]:\n"
           "            ok=False\n    out.append('YES' if ok else 'NO')\nprint('\\n'.join(out))\n"),
    ),
)

# -- 11. count the letters ------------------------------------------------------------------------


def _count_ref(s: str) -> str:
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    return _lines(*[(ch, counts[ch]) for ch in sorted(counts)])


_problem(
    "char_count", "tokens",
    lambda rng: ["hello", "".join(rng.choice("xyz") for _ in range(40)),
                 "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(500_000))],
    lambda s: _lines(s), _count_ref,
    cpp=(
        _c('static char b[1<<21];int main(){scanf("%s",b);ll c[26]={0};for(char*p=b;*p;p++)'
           'c[*p-\'a\']++;for(int i=0;i<26;i++)if(c[i])printf("%c %lld\\n",\'a\'+i,c[i]);}'),
        _c('static char b[1<<21];int main(){scanf("%s",b);int n=strlen(b);ll c[26]={0};'
           'for(int i=0;i+1<n;i++)c[b[i]-\'a\']++;'
           'for(int i=0;i<26;i++)if(c[i])printf("%c %lld\\n",\'a\'+i,c[i]);}'),
        _c('static char b[1<<21];int main(){scanf("%s",b);int n=strlen(b);ll c[26]={0};'
           'for(int i=0;i<n;i++){ll k=0;for(int j=0;j<n;j++)k+=(b[j]==b[i]);c[b[i]-\'a\']=k;}'
           'for(int i=0;i<26;i++)if(c[i])printf("%c %lld\\n",\'a\'+i,c[i]);}'),
    ),
    py=(
        _p("from collections import Counter\nc=Counter(sys.stdin.read().strip())\n"
           "print('\\n'.join('%s %d'%(k,c[k]) for k in sorted(c)))\n"),
        _p("from collections import Counter\nc=Counter(sys.stdin.read().strip()[:-1])\n"
           "print('\\n'.join('%s %d'%(k,c[k]) for k in sorted(c)))\n"),
        _p("s=sys.stdin.read().strip()\nc={}\nfor ch in s:\n    k=0\n    for o in s:\n"
           "        if o==ch:\n            k+=1\n    c[ch]=k\n"
           "print('\\n'.join('%s %d'%(k,c[k]) for k in sorted(c)))\n"),
    ),
)

# -- 12. matrix power modulo 1e9+7 ----------------------------------------------------------------


def _matmul(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
    n = len(a)
    return [[sum(a[i][k] * b[k][j] for k in range(n)) % MOD for j in range(n)] for i in range(n)]


def _matpow_ref(d: Any) -> str:
    m, k = d
    n = len(m)
    result = [[int(i == j) for j in range(n)] for i in range(n)]
    base = m
    while k:
        if k & 1:
            result = _matmul(result, base)
        base = _matmul(base, base)
        k >>= 1
    return _lines(*result)


def _matpow_make(rng: random.Random) -> list[Any]:
    def mat(n: int, hi: int) -> list[list[int]]:
        return [[rng.randint(0, hi) for _ in range(n)] for _ in range(n)]

    return [([[1, 1], [1, 0]], 0), ([[1, 1], [1, 0]], 10), (mat(3, 9), 7),
            (mat(5, MOD - 1), 10**18 - rng.randint(0, 10**6))]


_MAT_CPP = (
    'const ll M=1000000007;int n;typedef vector<vector<ll>> Mt;Mt mul(const Mt&a,const Mt&b){'
    'Mt c(n,vector<ll>(n,0));for(int i=0;i<n;i++)for(int k=0;k<n;k++)for(int j=0;j<n;j++)'
    'c[i][j]=(c[i][j]+a[i][k]*b[k][j])%M;return c;}int main(){ll k;scanf("%d %lld",&n,&k);'
    'Mt a(n,vector<ll>(n));for(auto&r:a)for(auto&x:r)scanf("%lld",&x);Mt r(n,vector<ll>(n,0));'
    'for(int i=0;i<n;i++)r[i][i]=1;'
)
_MAT_OUT = 'for(auto&row:r){for(ll x:row)printf("%lld ",x);puts("");}}'
_MAT_PY = (
    "M=10**9+7\nd=sys.stdin.read().split()\nn,k=int(d[0]),int(d[1])\n"
    "a=[[int(d[2+i*n+j]) for j in range(n)] for i in range(n)]\n"
    "def mul(x,y):\n    return [[sum(x[i][t]*y[t][j] for t in range(n))%M for j in range(n)]"
    " for i in range(n)]\nr=[[int(i==j) for j in range(n)] for i in range(n)]\n"
)
_MAT_PY_OUT = "print('\\n'.join(' '.join(map(str,row)) for row in r))\n"
_problem(
    "matrix_power", "tokens", _matpow_make,
    lambda d: _lines((len(d[0]), d[1]), *d[0]), _matpow_ref,
    cpp=(
        _c(_MAT_CPP + 'while(k){if(k&1)r=mul(r,a);a=mul(a,a);k>>=1;}' + _MAT_OUT),
        _c(_MAT_CPP + 'r=a;while(k>1){if(k&1)r=mul(r,a);a=mul(a,a);k>>=1;}' + _MAT_OUT),
        _c(_MAT_CPP + 'for(ll i=0;i<k;i++)r=mul(r,a);' + _MAT_OUT),
    ),
    py=(
        _p(_MAT_PY + "while k:\n    if k&1:\n        r=mul(r,a)\n    a=mul(a,a)\n    k>>=1\n"
           + _MAT_PY_OUT),
        _p(_MAT_PY + "r=a\nwhile k>1:\n    if k&1:\n        r=mul(r,a)\n    a=mul(a,a)\n"
           "    k>>=1\n" + _MAT_PY_OUT),
        _p(_MAT_PY + "for _ in range(k):\n    r=mul(r,a)\n" + _MAT_PY_OUT),
    ),
)

# -- 13. Fibonacci modulo 1e9+7 -------------------------------------------------------------------


def _fib_ref(ns: list[int]) -> str:
    out = []
    for n in ns:
        m = _matpow_ref(([[1, 1], [1, 0]], n)).split()
        out.append(int(m[1]))
    return _lines(*out)


_problem(
    "fib_mod", "tokens",
    lambda rng: [[0, 1, 2, 10], [rng.randint(0, 90) for _ in range(20)],
                 [10**18 - rng.randint(0, 10**9) for _ in range(20)]],
    lambda ns: _lines(len(ns), *ns), _fib_ref,
    cpp=(
        _c('const ll M=1000000007;pair<ll,ll> f(ll n){if(!n)return {0,1};auto p=f(n>>1);'
           'll a=p.first,b=p.second;ll c=a*((2*b-a+M)%M)%M,d=(a*a+b*b)%M;'
           'return n&1?make_pair(d,(c+d)%M):make_pair(c,d);}int main(){int t;scanf("%d",&t);'
           'while(t--){ll n;scanf("%lld",&n);printf("%lld\\n",f(n).first);}}'),
        _c('const ll M=1000000007;pair<ll,ll> f(ll n){if(!n)return {0,1};auto p=f(n>>1);'
           'll a=p.first,b=p.second;ll c=a*((2*b-a+M)%M)%M,d=(a*a+b*b)%M;'
           'return n&1?make_pair(d,(c+d)%M):make_pair(c,d);}int main(){int t;scanf("%d",&t);'
           'while(t--){ll n;scanf("%lld",&n);printf("%lld\\n",f(n).second);}}'),
        _c('const ll M=1000000007;int main(){int t;scanf("%d",&t);while(t--){ll n;'
           'scanf("%lld",&n);ll a=0,b=1;for(ll i=0;i<n;i++){ll c=(a+b)%M;a=b;b=c;}'
           'printf("%lld\\n",a);}}'),
    ),
    py=(
        _p("M=10**9+7\ndef f(n):\n    if n==0:\n        return 0,1\n    a,b=f(n>>1)\n"
           "    c=a*(2*b-a)%M\n    d=(a*a+b*b)%M\n    return (d,(c+d)%M) if n&1 else (c,d)\n"
           "d=sys.stdin.read().split()\nprint('\\n'.join(str(f(int(x))[0]) for x in d[1:]))\n"),
        _p("M=10**9+7\ndef f(n):\n    if n==0:\n        return 0,1\n    a,b=f(n>>1)\n"
           "    c=a*(2*b-a)%M\n    d=(a*a+b*b)%M\n    return (d,(c+d)%M) if n&1 else (c,d)\n"
           "d=sys.stdin.read().split()\nprint('\\n'.join(str(f(int(x))[1]) for x in d[1:]))\n"),
        _p("M=10**9+7\nd=sys.stdin.read().split()\nout=[]\nfor x in d[1:]:\n    a,b=0,1\n"
           "    for _ in range(int(x)):\n        a,b=b,(a+b)%M\n    out.append(a)\n"
           "print('\\n'.join(map(str,out)))\n"),
    ),
)

# -- 14. two sum: is there a pair i < j with a_i + a_j = target? ----------------------------------


def _twosum_ref(d: Any) -> str:
    target, a = d
    seen: set[int] = set()
    for x in a:
        if target - x in seen:
            return _lines("YES")
        seen.add(x)
    return _lines("NO")


_problem(
    "two_sum", "tokens",
    lambda rng: [(10, [5, 1, 2]), (10, [5, 5, 1]), (7, [rng.randint(0, 3) for _ in range(10)]),
                 (1, [2 * rng.randint(-10**8, 10**8) + 1 for _ in range(100_000)])],
    lambda d: _lines((len(d[1]), d[0]), d[1]), _twosum_ref,
    cpp=(
        _c('int main(){int n;ll t;scanf("%d %lld",&n,&t);vector<ll>a(n);for(auto&x:a)'
           'scanf("%lld",&x);sort(a.begin(),a.end());int i=0,j=n-1;bool ok=false;'
           'while(i<j){ll s=a[i]+a[j];if(s==t){ok=true;break;}if(s<t)i++;else j--;}'
           'puts(ok?"YES":"NO");}'),
        _c('int main(){int n;ll t;scanf("%d %lld",&n,&t);vector<ll>a(n);for(auto&x:a)'
           'scanf("%lld",&x);sort(a.begin(),a.end());bool ok=false;for(ll x:a)'
           'if(binary_search(a.begin(),a.end(),t-x))ok=true;puts(ok?"YES":"NO");}'),
        _c('int main(){int n;ll t;scanf("%d %lld",&n,&t);vector<ll>a(n);for(auto&x:a)'
           'scanf("%lld",&x);bool ok=false;for(int i=0;i<n&&!ok;i++)for(int j=i+1;j<n;j++)'
           'if(a[i]+a[j]==t){ok=true;break;}puts(ok?"YES":"NO");}'),
    ),
    py=(
        _p("d=sys.stdin.buffer.read().split()\nn,t=int(d[0]),int(d[1])\nseen=set()\nok=False\n"
           "for x in map(int,d[2:2+n]):\n    if t-x in seen:\n        ok=True\n        break\n"
           "    seen.add(x)\nprint('YES' if ok else 'NO')\n"),
        _p("d=sys.stdin.buffer.read().split()\nn,t=int(d[0]),int(d[1])\n"
           "a=set(map(int,d[2:2+n]))\nprint('YES' if any(t-x in a for x in a) else 'NO')\n"),
        _p("d=sys.stdin.buffer.read().split()\nn,t=int(d[0]),int(d[1])\n"
           "a=list(map(int,d[2:2+n]))\nok=False\nfor i in range(n):\n    for j in range(i+1,n):\n"
           "        if a[i]+a[j]==t:\n            ok=True\n            break\n    if ok:\n"
           "        break\nprint('YES' if ok else 'NO')\n"),
    ),
)

# -- 15. merge closed intervals (touching ones merge) ---------------------------------------------


def _intervals_ref(iv: list[tuple[int, int]]) -> str:
    merged: list[list[int]] = []
    for lo, hi in sorted(iv):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return _lines((len(merged), sum(h - lo for lo, h in merged)))


def _intervals_make(rng: random.Random) -> list[Any]:
    def iv(n: int, hi: int, width: int) -> list[tuple[int, int]]:
        out = []
        for _ in range(n):
            lo = rng.randint(0, hi)
            out.append((lo, lo + rng.randint(0, width)))
        return out

    return [[(1, 2), (2, 3), (5, 6)], iv(20, 100, 5), [(2 * i, 2 * i + 1) for i in range(20)]
            + [(2 * i + 1, 2 * i + 2) for i in range(20)], iv(30_000, 10**9, 10**4)]


_problem(
    "interval_merge", "tokens", _intervals_make, lambda iv: _lines(len(iv), *iv), _intervals_ref,
    cpp=(
        _c('int main(){int n;scanf("%d",&n);vector<pair<ll,ll>>v(n);for(auto&p:v)'
           'scanf("%lld %lld",&p.first,&p.second);sort(v.begin(),v.end());ll c=0,tot=0,lo=0,hi=-1;'
           'for(auto&p:v){if(c&&p.first<=hi)hi=max(hi,p.second);else{if(c)tot+=hi-lo;c++;'
           'lo=p.first;hi=p.second;}}tot+=hi-lo;printf("%lld %lld\\n",c,tot);}'),
        _c('int main(){int n;scanf("%d",&n);vector<pair<ll,ll>>v(n);for(auto&p:v)'
           'scanf("%lld %lld",&p.first,&p.second);sort(v.begin(),v.end());ll c=0,tot=0,lo=0,hi=-1;'
           'for(auto&p:v){if(c&&p.first<hi)hi=max(hi,p.second);else{if(c)tot+=hi-lo;c++;'
           'lo=p.first;hi=p.second;}}tot+=hi-lo;printf("%lld %lld\\n",c,tot);}'),
        _c('int main(){int n;scanf("%d",&n);vector<pair<ll,ll>>v(n);for(auto&p:v)'
           'scanf("%lld %lld",&p.first,&p.second);bool ch=true;while(ch){ch=false;'
           'for(size_t i=0;i<v.size()&&!ch;i++)for(size_t j=i+1;j<v.size();j++){'
           'if(v[i].first<=v[j].second&&v[j].first<=v[i].second){v[i].first=min(v[i].first,'
           'v[j].first);v[i].second=max(v[i].second,v[j].second);v.erase(v.begin()+j);ch=true;'
           'break;}}}ll tot=0;for(auto&p:v)tot+=p.second-p.first;'
           'printf("%lld %lld\\n",(ll)v.size(),tot);}'),
    ),
    py=(
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\n"
           "v=sorted((int(d[1+2*i]),int(d[2+2*i])) for i in range(n))\nm=[]\nfor lo,hi in v:\n"
           "    if m and lo<=m[-1][1]:\n        m[-1][1]=max(m[-1][1],hi)\n    else:\n"
           "        m.append([lo,hi])\nprint(len(m),sum(h-l for l,h in m))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\n"
           "v=sorted((int(d[1+2*i]),int(d[2+2*i])) for i in range(n))\nm=[]\nfor lo,hi in v:\n"
           "    if m and lo<m[-1][1]:\n        m[-1][1]=max(m[-1][1],hi)\n    else:\n"
           "        m.append([lo,hi])\nprint(len(m),sum(h-l for l,h in m))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\n"
           "v=[[int(d[1+2*i]),int(d[2+2*i])] for i in range(n)]\nch=True\nwhile ch:\n"
           "    ch=False\n    for i in range(len(v)):\n        for j in range(i+1,len(v)):\n"
           "            if v[i][0]<=v[j][1] and v[j][0]<=v[i][1]:\n"
           "                v[i]=[min(v[i][0],v[j][0]),max(v[i][1],v[j][1])]\n"
           "                del v[j]\n                ch=True\n                break\n"
           "        if ch:\n            break\nprint(len(v),sum(h-l for l,h in v))\n"),
    ),
)

# -- 16. longest strictly increasing subsequence --------------------------------------------------


def _lis_ref(a: list[int]) -> str:
    tails: list[int] = []
    for x in a:
        lo, hi = 0, len(tails)
        while lo < hi:
            mid = (lo + hi) // 2
            if tails[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        tails[lo:lo + 1] = [x]
    return _lines(len(tails))


_problem(
    "lis", "tokens",
    lambda rng: [[1, 2, 2, 3], [rng.randint(0, 5) for _ in range(30)],
                 [rng.randint(0, 10**9) for _ in range(100_000)]],
    lambda a: _lines(len(a), a), _lis_ref,
    cpp=(
        _c('int main(){int n;scanf("%d",&n);vector<ll>t;for(int i=0;i<n;i++){ll x;'
           'scanf("%lld",&x);auto it=lower_bound(t.begin(),t.end(),x);if(it==t.end())'
           't.push_back(x);else *it=x;}printf("%d\\n",(int)t.size());}'),
        _c('int main(){int n;scanf("%d",&n);vector<ll>t;for(int i=0;i<n;i++){ll x;'
           'scanf("%lld",&x);auto it=upper_bound(t.begin(),t.end(),x);if(it==t.end())'
           't.push_back(x);else *it=x;}printf("%d\\n",(int)t.size());}'),
        _c('int main(){int n;scanf("%d",&n);vector<ll>a(n);for(auto&x:a)scanf("%lld",&x);'
           'vector<int>d(n,1);int best=0;for(int i=0;i<n;i++){for(int j=0;j<i;j++)'
           'if(a[j]<a[i]&&d[j]+1>d[i])d[i]=d[j]+1;best=max(best,d[i]);}printf("%d\\n",best);}'),
    ),
    py=(
        _p("from bisect import bisect_left\nd=sys.stdin.buffer.read().split()\nn=int(d[0])\n"
           "t=[]\nfor x in map(int,d[1:1+n]):\n    i=bisect_left(t,x)\n    if i==len(t):\n"
           "        t.append(x)\n    else:\n        t[i]=x\nprint(len(t))\n"),
        _p("from bisect import bisect_right\nd=sys.stdin.buffer.read().split()\nn=int(d[0])\n"
           "t=[]\nfor x in map(int,d[1:1+n]):\n    i=bisect_right(t,x)\n    if i==len(t):\n"
           "        t.append(x)\n    else:\n        t[i]=x\nprint(len(t))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\na=list(map(int,d[1:1+n]))\n"
           "best=[1]*n\nfor i in range(n):\n    for j in range(i):\n"
           "        if a[j]<a[i] and best[j]+1>best[i]:\n            best[i]=best[j]+1\n"
           "print(max(best))\n"),
    ),
)

# -- 17. 0/1 knapsack -----------------------------------------------------------------------------


def _knap_ref(d: Any) -> str:
    cap, items = d
    best = [0] * (cap + 1)
    for w, v in items:
        for c in range(cap, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return _lines(best[cap])


def _knap_make(rng: random.Random) -> list[Any]:
    def case(n: int, cap: int, heaviest: int) -> Any:
        return cap, [(rng.randint(1, heaviest), rng.randint(1, 1000)) for _ in range(n)]

    # The last: about 2^40 subsets fit, so the brute force has no pruning to speak of.
    return [(10, [(6, 30), (5, 20), (5, 20)]), case(8, 50, 25), case(12, 100, 50),
            case(40, 1000, 60)]


_problem(
    "knapsack", "tokens", _knap_make,
    lambda d: _lines((len(d[1]), d[0]), *d[1]), _knap_ref,
    cpp=(
        _c('int main(){int n,W;scanf("%d %d",&n,&W);vector<ll>b(W+1,0);for(int i=0;i<n;i++){'
           'int w;ll v;scanf("%d %lld",&w,&v);for(int c=W;c>=w;c--)b[c]=max(b[c],b[c-w]+v);}'
           'printf("%lld\\n",b[W]);}'),
        _c('int main(){int n,W;scanf("%d %d",&n,&W);vector<pair<int,ll>>it(n);for(auto&p:it)'
           'scanf("%d %lld",&p.first,&p.second);sort(it.begin(),it.end(),[](auto&x,auto&y){'
           'return x.second*y.first>y.second*x.first;});ll v=0;int c=W;for(auto&p:it)'
           'if(p.first<=c){c-=p.first;v+=p.second;}printf("%lld\\n",v);}'),
        _c('int n,W;vector<int>w;vector<ll>v;ll go(int i,int c){if(i==n)return 0;ll b=go(i+1,c);'
           'if(w[i]<=c)b=max(b,v[i]+go(i+1,c-w[i]));return b;}int main(){scanf("%d %d",&n,&W);'
           'w.resize(n);v.resize(n);for(int i=0;i<n;i++)scanf("%d %lld",&w[i],&v[i]);'
           'printf("%lld\\n",go(0,W));}'),
    ),
    py=(
        _p("d=sys.stdin.read().split()\nn,W=int(d[0]),int(d[1])\nb=[0]*(W+1)\n"
           "for i in range(n):\n    w,v=int(d[2+2*i]),int(d[3+2*i])\n"
           "    for c in range(W,w-1,-1):\n        if b[c-w]+v>b[c]:\n            b[c]=b[c-w]+v\n"
           "print(b[W])\n"),
        _p("d=sys.stdin.read().split()\nn,W=int(d[0]),int(d[1])\n"
           "it=[(int(d[2+2*i]),int(d[3+2*i])) for i in range(n)]\n"
           "it.sort(key=lambda p:-p[1]/p[0])\nc=W\nv=0\nfor w,x in it:\n    if w<=c:\n"
           "        c-=w\n        v+=x\nprint(v)\n"),
        _p("d=sys.stdin.read().split()\nn,W=int(d[0]),int(d[1])\n"
           "it=[(int(d[2+2*i]),int(d[3+2*i])) for i in range(n)]\ndef go(i,c):\n"
           "    if i==n:\n        return 0\n    b=go(i+1,c)\n    if it[i][0]<=c:\n"
           "        b=max(b,it[i][1]+go(i+1,c-it[i][0]))\n    return b\nprint(go(0,W))\n"),
    ),
)

# -- 18. distinct values --------------------------------------------------------------------------


_problem(
    "distinct_count", "tokens",
    lambda rng: [[1, 2, 1], [rng.randint(0, 9) for _ in range(40)],
                 rng.sample(range(10**9), 100_000)],
    lambda a: _lines(len(a), a), lambda a: _lines(len(set(a))),
    cpp=(
        _c('int main(){int n;scanf("%d",&n);vector<ll>a(n);for(auto&x:a)scanf("%lld",&x);'
           'sort(a.begin(),a.end());printf("%d\\n",(int)(unique(a.begin(),a.end())-a.begin()));}'),
        _c('int main(){int n;scanf("%d",&n);vector<ll>a(n);for(auto&x:a)scanf("%lld",&x);'
           'int c=n>0;for(int i=1;i<n;i++)c+=a[i]!=a[i-1];printf("%d\\n",c);}'),
        _c('int main(){int n;scanf("%d",&n);vector<ll>a(n);for(auto&x:a)scanf("%lld",&x);'
           'int c=0;for(int i=0;i<n;i++){bool seen=false;for(int j=0;j<i;j++)if(a[j]==a[i])'
           '{seen=true;break;}c+=!seen;}printf("%d\\n",c);}'),
    ),
    py=(
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\nprint(len(set(map(int,d[1:1+n]))))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\na=list(map(int,d[1:1+n]))\n"
           "print(sum(1 for i in range(n) if i==0 or a[i]!=a[i-1]))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn=int(d[0])\na=list(map(int,d[1:1+n]))\nc=0\n"
           "for i in range(n):\n    seen=False\n    for j in range(i):\n        if a[j]==a[i]:\n"
           "            seen=True\n            break\n    if not seen:\n        c+=1\nprint(c)\n"),
    ),
)

# -- 19. balanced brackets ------------------------------------------------------------------------


def _brackets_ref(ss: list[str]) -> str:
    pairs = {")": "(", "]": "[", "}": "{"}
    out = []
    for s in ss:
        stack: list[str] = []
        ok = True
        for ch in s:
            if ch in pairs:
                if not stack or stack.pop() != pairs[ch]:
                    ok = False
                    break
            else:
                stack.append(ch)
        out.append("YES" if ok and not stack else "NO")
    return _lines(*out)


def _brackets_make(rng: random.Random) -> list[Any]:
    def balanced(n: int) -> str:
        if n == 0:
            return ""
        o, c = rng.choice([("(", ")"), ("[", "]"), ("{", "}")])
        k = rng.randint(0, n - 1)
        return o + balanced(k) + c + balanced(n - 1 - k)

    return [
        ["()", "([)]", "{[]}", "(("],
        [balanced(rng.randint(1, 10)) if rng.random() < 0.5
         else "".join(rng.choice("()[]{}") for _ in range(8)) for _ in range(20)],
        ["(" * 100_000 + ")" * 100_000],
    ]


_problem(
    "balanced_brackets", "tokens", _brackets_make, lambda ss: _lines(len(ss), *ss),
    _brackets_ref,
    cpp=(
        _c('static char b[1<<21];int main(){int t;scanf("%d",&t);while(t--){scanf("%s",b);'
           'string st;bool ok=true;for(char*p=b;*p&&ok;p++){char c=*p;if(c==\'(\'||c==\'[\'||'
           'c==\'{\')st.push_back(c);else{char o=c==\')\'?\'(\':c==\']\'?\'[\':\'{\';'
           'if(st.empty()||st.back()!=o)ok=false;else st.pop_back();}}'
           'puts(ok&&st.empty()?"YES":"NO");}}'),
        _c('static char b[1<<21];int main(){int t;scanf("%d",&t);while(t--){scanf("%s",b);'
           'int x=0,y=0,z=0;bool ok=true;for(char*p=b;*p;p++){char c=*p;x+=(c==\'(\')-(c==\')\');'
           'y+=(c==\'[\')-(c==\']\');z+=(c==\'{\')-(c==\'}\');if(x<0||y<0||z<0)ok=false;}'
           'puts(ok&&!x&&!y&&!z?"YES":"NO");}}'),
        _c('static char b[1<<21];int main(){int t;scanf("%d",&t);while(t--){scanf("%s",b);'
           'string s=b;bool ch=true;while(ch){ch=false;const char*ps[3]={"()","[]","{}"};'
           'for(auto q:ps){size_t i=s.find(q);if(i!=string::npos){s.erase(i,2);ch=true;}}}'
           'puts(s.empty()?"YES":"NO");}}'),
    ),
    py=(
        _p("d=sys.stdin.read().split()\nt=int(d[0])\nm={')':'(',']':'[','}':'{'}\nout=[]\n"
           "for s in d[1:1+t]:\n    st=[]\n    ok=True\n    for c in s:\n        if c in m:\n"
           "            if not st or st.pop()!=m[c]:\n                ok=False\n"
           "                break\n        else:\n            st.append(c)\n"
           "    out.append('YES' if ok and not st else 'NO')\nprint('\\n'.join(out))\n"),
        _p("d=sys.stdin.read().split()\nt=int(d[0])\nout=[]\nfor s in d[1:1+t]:\n    ok=True\n"
           "    for o,c in ('()','[]','{}'):\n        k=0\n        for ch in s:\n"
           "            k+=(ch==o)-(ch==c)\n            if k<0:\n                ok=False\n"
           "        if k:\n            ok=False\n    out.append('YES' if ok else 'NO')\n"
           "print('\\n'.join(out))\n"),
        _p("d=sys.stdin.read().split()\nt=int(d[0])\nout=[]\nfor s in d[1:1+t]:\n    ch=True\n"
           "    while ch:\n        ch=False\n        for q in ('()','[]','{}'):\n"
           "            i=s.find(q)\n            if i>=0:\n                s=s[:i]+s[i+2:]\n"
           "                ch=True\n    out.append('YES' if not s else 'NO')\n"
           "print('\\n'.join(out))\n"),
    ),
)

# -- 20. square roots (float checker) -------------------------------------------------------------


_problem(
    "sqrt", "float",
    lambda rng: [[0, 1, 2, 10], [rng.randint(0, 10_000) for _ in range(20)],
                 [rng.randint(10**17, 10**18) for _ in range(20)]],
    lambda xs: _lines(len(xs), *xs), lambda xs: _lines(*[_f(math.sqrt(x)) for x in xs]),
    cpp=(
        _c('int main(){int t;scanf("%d",&t);while(t--){ll x;scanf("%lld",&x);'
           'printf("%.9f\\n",sqrt((double)x));}}'),
        _c('int main(){int t;scanf("%d",&t);while(t--){ll x;scanf("%lld",&x);'
           'printf("%lld\\n",(ll)sqrt((double)x));}}'),
        _c('int main(){int t;scanf("%d",&t);while(t--){ll x;scanf("%lld",&x);ll y=0;'
           'while((y+1)*(y+1)<=x)y++;double lo=y,hi=y+1;for(int i=0;i<100;i++){'
           'double m=(lo+hi)/2;if(m*m<=x)lo=m;else hi=m;}printf("%.9f\\n",lo);}}'),
    ),
    py=(
        _p("import math\nd=sys.stdin.read().split()\n"
           "print('\\n'.join('%.9f'%math.sqrt(int(x)) for x in d[1:]))\n"),
        _p("import math\nd=sys.stdin.read().split()\n"
           "print('\\n'.join(str(math.isqrt(int(x))) for x in d[1:]))\n"),
        _p("d=sys.stdin.read().split()\nout=[]\nfor x in d[1:]:\n    x=int(x)\n    y=0\n"
           "    while (y+1)*(y+1)<=x:\n        y+=1\n    lo,hi=float(y),float(y+1)\n"
           "    for _ in range(100):\n        m=(lo+hi)/2\n        if m*m<=x:\n            lo=m\n"
           "        else:\n            hi=m\n    out.append('%.9f'%lo)\nprint('\\n'.join(out))\n"),
    ),
)

# -- 21. circle areas (float checker) -------------------------------------------------------------


_problem(
    "circle_area", "float",
    lambda rng: [["1.000", "0.500"], [f"{rng.uniform(0.001, 10):.3f}" for _ in range(10)],
                 [f"{rng.uniform(100, 1000):.3f}" for _ in range(200)]],
    lambda rs: _lines(len(rs), *rs), lambda rs: _lines(*[_f(math.pi * float(r) ** 2) for r in rs]),
    cpp=(
        _c('int main(){int t;scanf("%d",&t);while(t--){double r;scanf("%lf",&r);'
           'printf("%.9f\\n",M_PI*r*r);}}'),
        _c('int main(){int t;scanf("%d",&t);while(t--){double r;scanf("%lf",&r);'
           'printf("%.9f\\n",3.14*r*r);}}'),
        # the area as 4 x the quarter disc, a midpoint sum whose steps grow with r
        _c('int main(){int t;scanf("%d",&t);while(t--){double r;scanf("%lf",&r);'
           'll n=(ll)(r*20000)+1;double h=r/n,s=0;for(ll i=0;i<n;i++){double x=(i+0.5)*h;'
           's+=sqrt(r*r-x*x);}double a=4*s*h;printf("%.9f\\n",a);}}'),
    ),
    py=(
        _p("import math\nd=sys.stdin.read().split()\n"
           "print('\\n'.join('%.9f'%(math.pi*float(r)**2) for r in d[1:]))\n"),
        _p("d=sys.stdin.read().split()\n"
           "print('\\n'.join('%.9f'%(3.14*float(r)**2) for r in d[1:]))\n"),
        _p("import math\nd=sys.stdin.read().split()\nout=[]\nfor r in d[1:]:\n    r=float(r)\n"
           "    n=int(r*20000)+1\n    h=r/n\n    s=0.0\n    for i in range(n):\n"
           "        x=(i+0.5)*h\n        s+=math.sqrt(r*r-x*x)\n    out.append('%.9f'%(4*s*h))\n"
           "print('\\n'.join(out))\n"),
    ),
)

# -- 22. range means (float checker) --------------------------------------------------------------


def _mean_make(rng: random.Random) -> list[Any]:
    return [([1, 2, 4], [(1, 2), (1, 3), (3, 3)]),
            _array_and_ranges(rng, 50, 50, False, 10**6),
            _array_and_ranges(rng, 100_000, 100_000, True, 10**6)]


def _mean_ref(d: Any) -> str:
    a, qs = d
    pre = _prefix_sums(a)
    return _lines(*[_f((pre[r] - pre[lo - 1]) / (r - lo + 1)) for lo, r in qs])


_problem(
    "range_mean", "float", _mean_make, lambda d: _lines((len(d[0]), len(d[1])), d[0], *d[1]),
    _mean_ref,
    cpp=(
        _c('int main(){int n,q;scanf("%d %d",&n,&q);vector<ll>p(n+1,0);for(int i=1;i<=n;i++)'
           '{ll x;scanf("%lld",&x);p[i]=p[i-1]+x;}while(q--){int l,r;scanf("%d %d",&l,&r);'
           'printf("%.9f\\n",(double)(p[r]-p[l-1])/(r-l+1));}}'),
        _c('int main(){int n,q;scanf("%d %d",&n,&q);vector<ll>p(n+1,0);for(int i=1;i<=n;i++)'
           '{ll x;scanf("%lld",&x);p[i]=p[i-1]+x;}while(q--){int l,r;scanf("%d %d",&l,&r);'
           'printf("%lld\\n",(p[r]-p[l-1])/(r-l+1));}}'),
        _c('int main(){int n,q;scanf("%d %d",&n,&q);vector<ll>a(n+1);for(int i=1;i<=n;i++)'
           'scanf("%lld",&a[i]);while(q--){int l,r;scanf("%d %d",&l,&r);double s=0;'
           'for(int i=l;i<=r;i++)s+=a[i];printf("%.9f\\n",s/(r-l+1));}}'),
    ),
    py=(
        _p("d=sys.stdin.buffer.read().split()\nn,q=int(d[0]),int(d[1])\np=[0]\n"
           "for x in d[2:2+n]:\n    p.append(p[-1]+int(x))\nout=[]\nk=2+n\nfor i in range(q):\n"
           "    l,r=int(d[k+2*i]),int(d[k+2*i+1])\n    out.append('%.9f'%((p[r]-p[l-1])/(r-l+1)))\n"
           "print('\\n'.join(out))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn,q=int(d[0]),int(d[1])\np=[0]\n"
           "for x in d[2:2+n]:\n    p.append(p[-1]+int(x))\nout=[]\nk=2+n\nfor i in range(q):\n"
           "    l,r=int(d[k+2*i]),int(d[k+2*i+1])\n    out.append(str((p[r]-p[l-1])//(r-l+1)))\n"
           "print('\\n'.join(out))\n"),
        _p("d=sys.stdin.buffer.read().split()\nn,q=int(d[0]),int(d[1])\n"
           "a=[0]+[int(x) for x in d[2:2+n]]\nout=[]\nk=2+n\nfor i in range(q):\n"
           "    l,r=int(d[k+2*i]),int(d[k+2*i+1])\n    s=0.0\n    for j in range(l,r+1):\n"
           "        s+=a[j]\n    out.append('%.9f'%(s/(r-l+1)))\nprint('\\n'.join(out))\n"),
    ),
)


#: How many problems there are (without building them).
PROBLEM_COUNT = len(_SPECS)


# -- the set --------------------------------------------------------------------------------------


@functools.cache
def problems() -> tuple[Problem, ...]:
    """Every problem, its cases generated and its expected outputs computed (once per process)."""
    out = []
    for i, spec in enumerate(_SPECS):
        rng = random.Random(f"asyncpool-stdio-{i}-{spec.name}")
        data = spec.make(rng)
        cases = tuple((spec.fmt(d), spec.ref(d)) for d in data)
        out.append(Problem(spec.name, spec.checker, cases, dict(spec.sources)))
    return tuple(out)
