"""``asyncpool bench | status | reap``: the command line.

``bench`` is the project's main job: it measures verifications per minute, side by side in
one run, on an embedded local Ray cluster (or ``--address``). Its harness lives in
``asyncpool._bench``; this module only parses arguments and hands over.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="asyncpool", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    bench = sub.add_parser("bench", help="measure verifications per minute, side by side")
    bench.add_argument("--address", default=None, help="an existing Ray cluster (default: local)")
    bench.add_argument("--workload", default="all", help="which workload(s) to run")
    bench.add_argument("--items", type=_positive_int, default=None, help="items per method")
    bench.add_argument("--quick", action="store_true", help="a short run (under two minutes)")
    bench.add_argument(
        "--rounds", type=_positive_int, default=3, help="interleaved rounds per method"
    )
    bench.add_argument("--json", default=None, metavar="PATH", help="write the rows as JSON")
    bench.add_argument("--plot", default=None, metavar="PATH", help="write a PNG bar chart")
    bench.add_argument("--no-progress", action="store_true", help="no live progress bar")

    status = sub.add_parser("status", help="show the cluster asyncpool would use")
    status.add_argument("--address", default=None)

    reap = sub.add_parser("reap", help="remove placement groups whose name starts with PREFIX")
    reap.add_argument("prefix")
    reap.add_argument("--address", default=None)
    return parser


def _status(address: str | None) -> int:
    import ray

    from .runtime import init

    rt = init(address, log_to_driver=False)
    try:
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        print(
            json.dumps(
                {
                    "address": rt.address,
                    "source": rt.source,
                    "started_here": rt.started,
                    "ray_version": ray.__version__,
                    "resources": ray.cluster_resources(),
                    "nodes": [
                        {"node_id": n["NodeID"], "ip": n["NodeManagerAddress"],
                         "resources": n["Resources"]}
                        for n in nodes
                    ],
                },
                indent=2,
                default=str,
            )
        )
    finally:
        rt.shutdown()
    return 0


def _reap(prefix: str, address: str | None) -> int:
    from . import placement
    from .runtime import init, run

    rt = init(address, log_to_driver=False)
    try:
        removed = run(placement.reap, prefix)
    finally:
        rt.shutdown()
    print(f"removed {removed} placement group(s) starting with {prefix!r}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "bench":
        try:
            from ._bench.harness import main as bench_main
        except ImportError as exc:  # pragma: no cover - installed without the [bench] extra
            print(f"asyncpool bench needs the [bench] extra: pip install 'asyncpool[bench]' "
                  f"({exc})", file=sys.stderr)
            return 2
        return bench_main(args)
    if args.command == "status":
        return _status(args.address)
    if args.command == "reap":
        return _reap(args.prefix, args.address)
    raise AssertionError(args.command)  # pragma: no cover - argparse enforces the choices
