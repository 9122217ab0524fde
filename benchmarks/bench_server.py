"""Load test of ``asyncpool serve``: HumanEval-size ``/run_code`` requests over loopback.

    python -m benchmarks.bench_server [--requests 2000] [--concurrency 256] [--address ADDR]
                                      [--url http://127.0.0.1:8000] [--json PATH]
                                      [--compare-bench] [--batch-size N|auto]

Starts its own ``asyncpool serve`` on a free 127.0.0.1 port (on ``--address``, or the server's
own embedded cluster), unless ``--url`` names a running one. Sends ``--requests`` programs (the
HumanEval canonical solutions and broken variants, half expected to pass), ``--concurrency``
at a time, while a separate process polls ``/health`` every 50 ms. Reports requests/min, client
latency p50/p99, ``/health`` p50/p99/max under load, non-200 answers and wrong verdicts. Bounded:
it gives up after ``--deadline`` seconds, and stops the server it started by its pid.

``--compare-bench`` then runs ``asyncpool bench --workload humaneval --quick`` on the same
cluster (``--address``, else its own embedded one) and reports the server's requests/min as a
ratio of the bench's ``asyncpool`` row: what HTTP, JSON and admission cost end to end.

The load generator is aiohttp, not httpx: on this 2-core machine ``httpx.AsyncClient`` with 256
connections spent about 17 ms of CPU per request (26 s of CPU for 1,500 requests, a whole core),
so the figure was the client's speed, not the server's; aiohttp sent the same requests with
0.5 s of CPU in all.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import httpx

#: Polls /health from its own interpreter (so the load generator's busy loop does not delay
#: the samples); prints the latencies as JSON when its stdin closes.
HEALTH_SAMPLER = """
import json, sys, threading, time
import httpx
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
lat, fails = [], 0
with httpx.Client(base_url=sys.argv[1], timeout=10.0) as c:
    c.get("/health")
    print("ready", flush=True)
    while not stop.is_set():
        t0 = time.perf_counter()
        try:
            fails += c.get("/health").status_code != 200
        except httpx.HTTPError:
            fails += 1
        lat.append(time.perf_counter() - t0)
        stop.wait(0.05)
print(json.dumps({"latencies": lat, "failures": fails}), flush=True)
"""


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_server(address: str | None, log: Path, batch_size: str | None = None
                  ) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    cmd = [sys.executable, "-m", "asyncpool", "serve", "--port", str(port)]
    if address:
        cmd += ["--address", address]
    if batch_size:
        cmd += ["--batch-size", batch_size]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url + "/health", timeout=2).json().get("status") == "ok":
                return proc, url
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise SystemExit("the server did not become healthy within 180 s")
        time.sleep(0.2)


def _start_sampler(url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HEALTH_SAMPLER, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


async def _load(url: str, n: int, concurrency: int, deadline: float) -> dict[str, Any]:
    from asyncpool._bench.humaneval import items

    work = items(n, seed=11)
    sampler = _start_sampler(url)
    try:
        assert sampler.stdout is not None
        ready = await asyncio.wait_for(asyncio.to_thread(sampler.stdout.readline), 60)
        assert ready.strip() == "ready", ready
        latencies: list[float] = []
        statuses: dict[int, int] = {}
        wrong = 0
        gate = asyncio.Semaphore(concurrency)
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(
            url, connector=connector, timeout=aiohttp.ClientTimeout(total=deadline)
        ) as client:

            async def one(program: str, expected: bool) -> None:
                nonlocal wrong
                async with gate:
                    t0 = time.perf_counter()
                    async with client.post(
                        "/run_code", json={"code": program, "language": "python"}
                    ) as r:
                        body = await r.json() if r.status == 200 else None
                    latencies.append(time.perf_counter() - t0)
                statuses[r.status] = statuses.get(r.status, 0) + 1
                if body is not None and (body["status"] == "Success") != expected:
                    wrong += 1

            t0 = time.perf_counter()
            await asyncio.wait_for(
                asyncio.gather(*(one(i.program, i.expected) for i in work)), deadline
            )
            wall = time.perf_counter() - t0
        out, _ = await asyncio.to_thread(sampler.communicate, "", 60)
        health = json.loads(out.strip().splitlines()[-1])
    finally:
        if sampler.poll() is None:
            sampler.kill()
            sampler.wait(10)
    return {
        "requests": n,
        "concurrency": concurrency,
        "seconds": round(wall, 3),
        "requests_per_minute": round(n / wall * 60, 1),
        "latency_p50_ms": round(_quantile(latencies, 0.5) * 1e3, 1),
        "latency_p99_ms": round(_quantile(latencies, 0.99) * 1e3, 1),
        "health_samples": len(health["latencies"]),
        "health_failures": health["failures"],
        "health_p50_ms": round(_quantile(health["latencies"], 0.5) * 1e3, 1),
        "health_p99_ms": round(_quantile(health["latencies"], 0.99) * 1e3, 1),
        "health_max_ms": round(max(health["latencies"], default=float("nan")) * 1e3, 1),
        "status_codes": statuses,
        "server_errors_5xx": sum(v for k, v in statuses.items() if k >= 500),
        "wrong_verdicts": wrong,
        "load_average": os.getloadavg(),
    }


def _bench_humaneval_rate(address: str | None) -> float:
    """``asyncpool bench --workload humaneval --quick``'s ``asyncpool`` rate, per minute."""
    with tempfile.TemporaryDirectory(prefix="bench-humaneval-") as tmp:
        out = Path(tmp) / "bench.json"
        cmd = [sys.executable, "-m", "asyncpool", "bench", "--workload", "humaneval", "--quick",
               "--no-progress", "--json", str(out)]  # fmt: skip
        if address:
            cmd += ["--address", address]
        subprocess.run(cmd, check=True, timeout=1800)
        rows = json.loads(out.read_text())["rows"]
    return float(next(r["per_minute"] for r in rows if r["method"] == "asyncpool"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=256)
    p.add_argument("--address", default=None, help="Ray cluster for the server it starts")
    p.add_argument("--url", default=None, help="a running server instead of starting one")
    p.add_argument("--deadline", type=float, default=900.0, help="give up after this many s")
    p.add_argument("--json", default=None, metavar="PATH")
    p.add_argument("--batch-size", default=None, metavar="N|auto",
                   help="the server's --batch-size (default: the server's own)")  # fmt: skip
    p.add_argument("--compare-bench", action="store_true",
                   help="also run asyncpool bench humaneval and report the ratio")  # fmt: skip
    args = p.parse_args(argv)
    if args.requests < 1 or args.concurrency < 1:
        p.error("--requests and --concurrency must be >= 1")
    proc = None
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        try:
            if args.url:
                url = args.url.rstrip("/")
            else:
                proc, url = _start_server(args.address, Path(tmp) / "serve.log",
                                          args.batch_size)  # fmt: skip
            # Warm-up: Ray workers and their sandbox fork servers started.
            asyncio.run(_load(url, min(64, args.requests), min(64, args.concurrency),
                              args.deadline))  # fmt: skip
            report = asyncio.run(_load(url, args.requests, args.concurrency, args.deadline))
        finally:
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
    print(
        f"asyncpool serve /run_code: {report['requests']} requests at {report['concurrency']} "
        f"concurrent in {report['seconds']} s = {report['requests_per_minute']:.0f} requests/min; "
        f"latency p50 {report['latency_p50_ms']} ms, p99 {report['latency_p99_ms']} ms; "
        f"/health under load p50 {report['health_p50_ms']} ms, p99 {report['health_p99_ms']} ms, "
        f"max {report['health_max_ms']} ms ({report['health_samples']} samples); "
        f"5xx {report['server_errors_5xx']}, wrong verdicts {report['wrong_verdicts']}; "
        f"load average {report['load_average'][0]:.1f}"
    )
    if args.compare_bench:
        bench = _bench_humaneval_rate(args.address)
        report["bench_asyncpool_per_minute"] = bench
        report["ratio_to_bench"] = round(report["requests_per_minute"] / bench, 3)
        print(f"asyncpool bench humaneval (asyncpool row): {bench:.0f}/min; the server reaches "
              f"{report['ratio_to_bench']:.2f}x of it")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0 if report["server_errors_5xx"] == 0 and report["wrong_verdicts"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
