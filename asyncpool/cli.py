"""The ``asyncpool`` command line: bench, serve, status, reap.

``bench`` is the project's main job: it measures verifications per minute, side by side in
one run, on an embedded local Ray cluster (or ``--address``). Its harness lives in
``asyncpool._bench``; this module only parses arguments and hands over. ``serve`` runs the
verification server (:mod:`asyncpool.server`). ``status`` and ``reap`` only attach to a cluster
that exists: with none to attach to they say so and exit with status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .runtime import Runtime

__all__ = ["main"]

_DESCRIPTION = """\
Async-first actor pools, verification pools and worker groups on Ray.

commands:
  bench    measure verifications per minute, side by side (embedded local cluster by default)
  serve    a verification server speaking SandboxFusion's /run_code and NeMo-Gym's /verify
  status   show the Ray cluster asyncpool would attach to (never starts one)
  reap     remove placement groups whose name starts with PREFIX (never starts a cluster)

Ray is found in this order: --address, ASYNCPOOL_ADDRESS, RAY_ADDRESS, a local cluster
started by asyncpool with this machine's tag; bench and serve otherwise start their own.
Run "asyncpool COMMAND --help" for a command's options.
"""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("asyncpool")
    except PackageNotFoundError:  # pragma: no cover - a bare source tree
        return "unknown"


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def _batch_size(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return _positive_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an int >= 1 or 'auto', got {text}") from None


def _languages(text: str) -> tuple[str, ...]:
    """``--languages``: comma-separated SandboxFusion names, each one serve can run."""
    from .sandbox._languages import LANGUAGES

    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in LANGUAGES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"{', '.join(map(repr, unknown)) or 'no language'}: name languages among "
            f"{','.join(LANGUAGES)} (SandboxFusion's names), comma-separated"
        )
    return names


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number 0..65535, got {value}")
    return value


def _workloads_epilog() -> str | None:
    """The bench workloads, listed from the harness (none when [bench] is not installed)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from ._bench.harness import WORKLOADS
    except Exception:  # pragma: no cover - installed without the [bench] extra
        return "workloads: install the [bench] extra to list them"
    lines = ["bench workloads (asyncpool bench --workload NAME, default all):"]
    lines += [f"  {name:<10} {w.describe}" for name, w in WORKLOADS.items()]
    return "\n".join(lines)


def build_parser(*, list_workloads: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asyncpool",
        description=_DESCRIPTION,
        epilog=_workloads_epilog() if list_workloads else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"asyncpool {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    bench = sub.add_parser(
        "bench",
        help="measure verifications per minute, side by side",
        description="Measure verifications per minute, side by side, in one run.",
        epilog=_workloads_epilog() if list_workloads else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bench.add_argument("--address", default=None, help="an existing Ray cluster (default: local)")
    bench.add_argument(
        "--workload", default="all",
        help="comma-separated workload names (listed below), or all (the default)",
    )
    bench.add_argument("--items", type=_positive_int, default=None, help="items per method")
    bench.add_argument("--quick", action="store_true", help="a short run (a few minutes)")
    bench.add_argument(
        "--rounds", type=_positive_int, default=None, metavar="N",
        help="interleaved rounds per method; each row is their median with the lowest and "
        "highest round (default: 3 with --quick, 5 otherwise)",
    )
    bench.add_argument("--json", default=None, metavar="PATH", help="write the rows as JSON")
    bench.add_argument("--plot", default=None, metavar="PATH", help="write a PNG bar chart")
    bench.add_argument("--no-progress", action="store_true", help="no live progress bar")
    bench.add_argument(
        "--scale", action="store_true",
        help="instead: per-item driver CPU and wall time at 1k, 10k, 100k items (--quick: "
        "1k, 10k; --items N: N, 10N)",
    )
    bench.add_argument(
        "--load", type=_non_negative_int, default=0, metavar="N",
        help="run N busy processes alongside (the loaded-machine variant)",
    )

    serve = sub.add_parser(
        "serve",
        help="verification server: SandboxFusion /run_code, NeMo-Gym /verify",
        description=(
            "Serve SandboxFusion's POST /run_code (python, cpp, java, go, nodejs, rust) and "
            "NeMo-Gym's resource-server POST /verify (code) on a TaskPool over the Ray "
            "cluster, plus GET /health, GET /metrics (Prometheus) and GET /languages. Needs "
            "the [server] extra. Binds 127.0.0.1 unless told otherwise: it runs untrusted "
            "code for whoever can reach it."
        ),
    )
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8000, help="port (8000)")
    serve.add_argument(
        "--address", default=None, help="a Ray cluster to join (default: an embedded one)"
    )
    serve.add_argument(
        "--max-in-flight",
        type=_positive_int,
        default=None,
        help="verifications running at once (default: twice the cluster's CPUs)",
    )
    serve.add_argument(
        "--batch-size",
        type=_batch_size,
        default=None,
        metavar="N|auto",
        help="verifications per Ray task when requests arrive together; a lone request is "
        "sent alone (16: the bench's batch; 'auto' sizes from measured run time)",
    )
    serve.add_argument(
        "--max-pending",
        type=_positive_int,
        default=1024,
        help="verifications admitted at once; beyond, 503 with Retry-After (1024)",
    )
    serve.add_argument(
        "--max-body-bytes", type=_positive_int, default=32 << 20, help="request size cap (32 MiB)"
    )
    serve.add_argument(
        "--max-run-timeout",
        type=_positive_float,
        default=60.0,
        help="largest run_timeout a /run_code request may ask (60 s)",
    )
    serve.add_argument(
        "--memory-mb",
        type=_positive_int,
        default=1024,
        help="memory limit of a program when the request gives none (1024)",
    )
    serve.add_argument(
        "--verify-timeout",
        type=_positive_float,
        default=10.0,
        help="time limit of each /verify test case, seconds (10, as NeMo-Gym's code_gen)",
    )
    serve.add_argument(
        "--languages",
        type=_languages,
        default=None,
        metavar="L1,L2",
        help="what /run_code and /verify's stdin tests serve, e.g. cpp,python (default: every "
        "language whose toolchain is found at start: python,cpp,java,go,nodejs,rust); others get "
        "SandboxError (/verify: a 503; its Python is always served). A named language without "
        "its toolchain stops the server at start. GET /languages lists them",
    )
    serve.add_argument("--log-level", default="info", help="log level (info)")

    status = sub.add_parser(
        "status",
        help="show the cluster asyncpool would attach to",
        description="Show the Ray cluster asyncpool would attach to; exit 1 if there is none.",
    )
    status.add_argument("--address", default=None)

    reap = sub.add_parser(
        "reap",
        help="remove placement groups whose name starts with PREFIX",
        description="Remove placement groups whose name starts with PREFIX (orphans of an "
        "earlier driver) on an existing cluster; exit 1 if there is none.",
    )
    reap.add_argument("prefix")
    reap.add_argument("--address", default=None)
    return parser


def _quiet_ray() -> None:
    """Keep routine starts to the lines an operator needs (where Ray lets us)."""
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    warnings.filterwarnings("ignore", message=".*RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO.*")
    warnings.filterwarnings("ignore", category=DeprecationWarning, module="ray")


def _attach(address: str | None) -> Runtime:
    import logging

    from .runtime import attach

    return attach(address, log_to_driver=False, logging_level=logging.WARNING)


@contextlib.contextmanager
def _attached(command: str, address: str | None) -> Iterator[Runtime | None]:
    """The attach-only commands' connection: ``None`` (said on stderr) when there is no
    cluster to attach to, and the connection closed on the way out."""
    try:
        rt = _attach(address)
    except ConnectionError as exc:
        print(f"asyncpool {command}: {exc}", file=sys.stderr)
        yield None
        return
    try:
        yield rt
    finally:
        rt.shutdown()


def _status(address: str | None) -> int:
    import ray

    with _attached("status", address) as rt:
        if rt is None:
            return 1
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        print(
            json.dumps(
                {
                    "address": rt.address,
                    "source": rt.source,
                    "ray_version": ray.__version__,
                    "resources": ray.cluster_resources(),
                    "nodes": [
                        {
                            "node_id": n["NodeID"],
                            "ip": n["NodeManagerAddress"],
                            "resources": n["Resources"],
                        }
                        for n in nodes
                    ],
                },
                indent=2,
                default=str,
            )
        )
    return 0


def _reap(prefix: str, address: str | None) -> int:
    from . import placement
    from .runtime import run

    with _attached("reap", address) as rt:
        if rt is None:
            return 1
        removed = run(placement.reap, prefix)
    print(f"removed {removed} placement group(s) starting with {prefix!r}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import logging

    try:
        from .server import Settings, serve
        from .server.sandboxfusion import Limits, discover
    except ImportError as exc:
        print(
            f"asyncpool serve needs the [server] extra: pip install 'asyncpool[server]' ({exc})",
            file=sys.stderr,
        )
        return 2
    logging.basicConfig(
        level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s"
    )
    if args.languages is not None:
        # Named languages must be runnable here: said now, before Ray starts (found once per
        # process, so the server's own discovery at start reuses this).
        missing = discover(args.languages).missing
        if missing:
            for message in missing.values():
                print(f"asyncpool serve --languages: {message}", file=sys.stderr)
            return 2
    settings = Settings(
        address=args.address,
        max_in_flight=args.max_in_flight,
        max_pending=args.max_pending,
        max_body_bytes=args.max_body_bytes,
        run_code=Limits(max_run_timeout=args.max_run_timeout, default_memory_mb=args.memory_mb),
        verify_timeout=args.verify_timeout,
        verify_memory_mb=args.memory_mb,
        **({"batch_size": args.batch_size} if args.batch_size is not None else {}),
        languages=args.languages,
    )
    serve(settings, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Listing the workloads imports the harness: only for a help request.
    wants_help = any(a in ("-h", "--help") for a in argv)
    args = build_parser(list_workloads=wants_help).parse_args(argv)
    _quiet_ray()
    if args.command == "bench":
        try:
            from ._bench.harness import main as bench_main
        except ImportError as exc:  # pragma: no cover - installed without the [bench] extra
            print(f"asyncpool bench needs the [bench] extra: pip install 'asyncpool[bench]' "
                  f"({exc})", file=sys.stderr)
            return 2
        return bench_main(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "status":
        return _status(args.address)
    if args.command == "reap":
        return _reap(args.prefix, args.address)
    raise AssertionError(args.command)  # pragma: no cover - argparse enforces the choices
