"""The bench's report: ratios, the table (with the load average and what load hurts in its
footer), the JSON document and the PNG. Every figure is a ratio of rows of the same run.

Rows are medians of their rounds (:mod:`asyncpool._bench.core`), so every ratio here is of
medians; beside it stands the same ratio's lowest and highest within one round (round ``r``
of one method over round ``r`` of the other), which says whether it held in every round."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import ray

from .core import ALTERNATIVES, Row, Workload, limit_cores, round_ratios
from .quiet import Settled
from .scale import METHODS as SCALE_METHODS
from .scale import ScaleRow, best_peer, cpu_growth
from .workloads import WORKLOADS


@dataclass(frozen=True)
class Machine:
    """How busy this machine was: the 1-minute load average at the start and the end of the
    run, its cores, and the busy processes the bench itself added (``--load``)."""

    load_start: float
    load_end: float
    cores: int
    background: int = 0
    #: What ran beside the driver before each workload, and how long the bench waited for
    #: the cluster to be quiet (:func:`asyncpool._bench.quiet.settle`).
    settled: tuple[Settled, ...] = ()

    def line(self) -> str:
        extra = f"; {self.background} busy processes added by --load" if self.background else ""
        lines = [f"load average (1 min) of this machine ({self.cores} cores): "
                 f"{self.load_start:.2f} at the start, {self.load_end:.2f} at the end{extra}"]
        lines += [s.line() for s in self.settled]
        return "\n".join(lines)


def _cluster_cpus() -> int:
    """The cluster's CPUs (0 when this process is not connected: a report drawn offline)."""
    return int(ray.cluster_resources().get("CPU", 0)) if ray.is_initialized() else 0


def _references(rows: Sequence[Row], pick: Callable[[Workload], str | None]) -> dict[str, Row]:
    out: dict[str, Row] = {}
    for r in rows:
        w = WORKLOADS.get(r.workload)
        if w is not None and r.method == pick(w):
            out[r.workload] = r
    return out


def _ratios_to(
    rows: Sequence[Row], pick: Callable[[Workload], str | None]
) -> dict[tuple[str, str], float]:
    """Each row's median rate over the median rate of its workload's ``pick`` method
    (workloads that have one)."""
    reference = _references(rows, pick)
    return {
        (r.workload, r.method): round(r.per_minute / reference[r.workload].per_minute, 3)
        for r in rows
        if r.workload in reference and reference[r.workload].per_minute
    }


def _round_ratios_to(
    rows: Sequence[Row], pick: Callable[[Workload], str | None]
) -> dict[tuple[str, str], tuple[float, ...]]:
    """The same ratios round by round (:func:`~asyncpool._bench.core.round_ratios`)."""
    reference = _references(rows, pick)
    return {
        (r.workload, r.method): round_ratios(r, reference[r.workload])
        for r in rows
        if r.workload in reference and reference[r.workload].per_minute
    }


def ratios(rows: Sequence[Row]) -> dict[tuple[str, str], float]:
    """Each row's median rate over its workload's baseline median rate, from the same run."""
    return _ratios_to(rows, lambda w: w.baseline)


def ceiling_ratios(rows: Sequence[Row]) -> dict[tuple[str, str], float]:
    """Each row's median rate over its workload's ceiling median rate (workloads that have
    one)."""
    return _ratios_to(rows, lambda w: w.ceiling)


def ratio_rounds(rows: Sequence[Row]) -> dict[tuple[str, str], tuple[float, ...]]:
    """Each row's rate over its workload's baseline rate, round by round."""
    return _round_ratios_to(rows, lambda w: w.baseline)


def ceiling_ratio_rounds(rows: Sequence[Row]) -> dict[tuple[str, str], tuple[float, ...]]:
    """Each row's rate over its workload's ceiling rate, round by round."""
    return _round_ratios_to(rows, lambda w: w.ceiling)


def spread_text(median: float, per_round: Sequence[float], digits: int = 2) -> str:
    """``median [lowest-highest]`` (the bracket only when the rounds differ)."""
    text = f"{median:,.{digits}f}"
    if per_round and min(per_round) != max(per_round):
        text += f" [{min(per_round):,.{digits}f}-{max(per_round):,.{digits}f}]"
    return text


@dataclass(frozen=True)
class Versus:
    """asyncpool's best row of a workload against the best row a user would pick instead.

    Both are chosen by their median rate and ``ratio`` is of the medians; ``rounds`` is the
    same pair's ratio round by round, ``low``/``high`` its extremes (equal to ``ratio`` for
    rows of one round)."""

    workload: str
    asyncpool: str
    peer: str
    ratio: float
    low: float
    high: float
    rounds: tuple[float, ...]


def versus_best_peer(rows: Sequence[Row]) -> list[Versus]:
    out = []
    for name in dict.fromkeys(r.workload for r in rows):
        kinds = {m.name: m.kind for m in WORKLOADS[name].methods}
        sub = [r for r in rows if r.workload == name]
        mine = [r for r in sub if kinds.get(r.method) == "asyncpool"]
        peers = [r for r in sub if kinds.get(r.method) in ALTERNATIVES]
        if mine and peers:
            a = max(mine, key=lambda r: r.per_minute)
            p = max(peers, key=lambda r: r.per_minute)
            if p.per_minute > 0:
                ratio = round(a.per_minute / p.per_minute, 3)
                each = round_ratios(a, p) or (ratio,)
                out.append(Versus(name, a.method, p.method, ratio, min(each), max(each), each))
    return out


def _load_notes(rows: Sequence[Row]) -> list[str]:
    by_note: dict[str, list[str]] = {}
    for name in dict.fromkeys(r.workload for r in rows):
        for m in WORKLOADS[name].methods:
            if m.load_note:
                by_note.setdefault(m.load_note, []).append(f"{name}/{m.name}")
    return [f"  {', '.join(names)}: {note}" for note, names in by_note.items()]


def print_table(
    rows: Sequence[Row], machine: Machine | None = None, scale: Sequence[ScaleRow] = ()
) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    # Wide enough for a rate's and two ratios' [lowest-highest] without truncation.
    console.width = max(console.width, 160)
    if rows:
        rel, top = ratios(rows), ceiling_ratios(rows)
        rel_rounds, top_rounds = ratio_rounds(rows), ceiling_ratio_rounds(rows)
        counts = sorted({r.rounds for r in rows})
        shown = " or ".join(str(c) for c in counts)
        table = Table(title=escape(f"asyncpool bench: verifications per minute, median of "
                                   f"{shown} round(s) [lowest-highest round]"))
        for col in ("workload", "method", "kind", "items", "seconds", "per minute",
                    "× baseline", "× ceiling", "correct", "errors"):
            left = col in ("workload", "method", "kind")
            table.add_column(col, justify="left" if left else "right", no_wrap=True)
        for r in rows:
            key = (r.workload, r.method)
            ceiling = top.get(key)
            kind = WORKLOADS[r.workload].method(r.method).kind
            table.add_row(r.workload, r.method, kind, str(r.items), f"{r.seconds:.2f}",
                          escape(spread_text(r.per_minute, r.per_minute_rounds, 0)),
                          escape(spread_text(rel.get(key, 0), rel_rounds.get(key, ()))),
                          "-" if ceiling is None
                          else escape(spread_text(ceiling, top_rounds[key])),
                          str(r.correct), str(r.errors))
        notes = []
        for name in dict.fromkeys(r.workload for r in rows):
            w = WORKLOADS[name]
            ceiling_note = f", ceiling {w.ceiling}" if w.ceiling else ""
            notes.append(f"{name}: baseline {w.baseline}{ceiling_note}. {w.describe}.")
            notes += [f"  {m.name}: {m.describe}" for m in w.methods if m.describe]
        notes.append("items: per round; seconds and rates: medians of the rounds; ratios: of "
                     "the medians, [lowest-highest] of the same ratio within one round; "
                     "correct/errors: all rounds.")
        notes.append("asyncpool against the best alternative a user would pick (hand-written, "
                     "today's pattern, or what Ray ships), same run, medians [per round]:")
        notes += [f"  {v.workload}: {v.asyncpool} = {v.ratio:.2f}x {v.peer} "
                  f"[{v.low:.2f}-{v.high:.2f}]"
                  for v in versus_best_peer(rows)]
        notes.append("Rows a loaded machine hurts most (other processes wanting the cores):")
        notes += _load_notes(rows)
        if machine is not None:
            notes.append(machine.line())
        table.caption = escape("\n".join(notes))
        table.caption_justify = "left"
        console.print(table)
    if scale:
        print_scale_table(scale, machine, console)


def print_scale_table(rows: Sequence[ScaleRow], machine: Machine | None, console: Any) -> None:
    from rich.table import Table

    table = Table(title="asyncpool bench --scale: per-item cost as the work grows (no-op items)")
    for col in ("method", "kind", "items", "seconds", "wall µs/item", "driver CPU µs/item",
                "correct", "errors"):
        left = col in ("method", "kind")
        table.add_column(col, justify="left" if left else "right", no_wrap=left)
    kinds = {m.name: m.kind for m in SCALE_METHODS}
    for r in rows:
        table.add_row(r.method, kinds[r.method], str(r.items), f"{r.seconds:.2f}",
                      f"{r.wall_us_per_item:,.1f}", f"{r.cpu_us_per_item:,.1f}",
                      str(r.correct), str(r.errors))
    notes = [f"  {m.name}: {m.describe}" for m in SCALE_METHODS]
    notes.append("driver CPU = time.process_time() of the driver (all its threads, Ray's "
                 "included) over the method's run; per-item CPU growth, largest / smallest "
                 "size (1.0 = flat):")
    notes += [f"  {m.name}: {cpu_growth(rows, m.name)}" for m in SCALE_METHODS]
    for n in sorted({r.items for r in rows}):
        peer = best_peer(rows, n)
        notes.append(f"  best alternative by wall time at {n:,} items: {peer}")
    if machine is not None:
        notes.append(machine.line())
    table.caption = "\n".join(notes)
    table.caption_justify = "left"
    console.print(table)


def json_document(
    rows: Sequence[Row], machine: Machine | None = None, scale: Sequence[ScaleRow] = ()
) -> dict[str, Any]:
    """The rows as the contract's JSON (``ray_version``, ``cpus``, ``rows``), plus
    ``limit_cores``, ``load_average``, ``ratios``, ``methods`` (each workload's baseline,
    ceiling and the description of every method), ``kinds`` and ``peers`` (each alternative's
    description), ``versus_best_peer`` and, from ``--scale``, ``scale``.

    A row carries its medians (``seconds``, ``per_minute``), ``rounds``, ``per_minute_min``,
    ``per_minute_max`` and every round's ``per_minute_rounds`` and ``seconds_rounds``; a
    ratio, its median ratio and the per-round ratios with their ``_min``/``_max``."""
    rel, top = ratios(rows), ceiling_ratios(rows)
    rel_rounds, top_rounds = ratio_rounds(rows), ceiling_ratio_rounds(rows)
    names = list(dict.fromkeys(r.workload for r in rows))
    load: dict[str, float] = {}
    if machine is not None:
        load = {"start": machine.load_start, "end": machine.load_end,
                "cpu_count": float(machine.cores), "background": float(machine.background)}
    settled = [asdict(x) for x in machine.settled] if machine is not None else []
    doc: dict[str, Any] = {
        "ray_version": ray.__version__,
        "cpus": _cluster_cpus(),
        "rows": [_row_json(r) for r in rows],
        "limit_cores": limit_cores() if ray.is_initialized() else 0,  # 0: drawn offline
        "load_average": load,
        "settled": settled,
        "ratios": [
            {"workload": r.workload, "method": r.method,
             "vs_baseline": rel.get((r.workload, r.method)),
             "vs_ceiling": top.get((r.workload, r.method)),
             **_spread_json("vs_baseline", rel_rounds.get((r.workload, r.method))),
             **_spread_json("vs_ceiling", top_rounds.get((r.workload, r.method)))}
            for r in rows
        ],
        "methods": {
            name: {
                "baseline": WORKLOADS[name].baseline,
                "ceiling": WORKLOADS[name].ceiling,
                **{m.name: m.describe for m in WORKLOADS[name].methods},
            }
            for name in names
        },
        "kinds": {name: {m.name: m.kind for m in WORKLOADS[name].methods} for name in names},
        "peers": {
            name: {m.name: m.describe for m in WORKLOADS[name].methods
                   if m.kind in ALTERNATIVES}
            for name in names
        },
        "versus_best_peer": [
            {**asdict(v), "rounds": list(v.rounds)} for v in versus_best_peer(rows)
        ],
    }
    if scale:
        doc["scale"] = {
            "workload": "noop",
            "rows": [asdict(r) for r in scale],
            "methods": {m.name: {"describe": m.describe, "kind": m.kind} for m in SCALE_METHODS},
            "cpu_growth": {m.name: cpu_growth(scale, m.name) for m in SCALE_METHODS},
            "best_peer": {str(n): best_peer(scale, n) for n in sorted({r.items for r in scale})},
        }
    return doc


def _row_json(r: Row) -> dict[str, Any]:
    doc = asdict(r)
    doc["per_minute_rounds"] = list(r.per_minute_rounds)
    doc["seconds_rounds"] = list(r.seconds_rounds)
    doc.update(rounds=r.rounds, per_minute_min=r.per_minute_min, per_minute_max=r.per_minute_max)
    return doc


def _spread_json(name: str, per_round: Sequence[float] | None) -> dict[str, Any]:
    if not per_round:
        return {f"{name}_rounds": None, f"{name}_min": None, f"{name}_max": None}
    return {f"{name}_rounds": list(per_round), f"{name}_min": min(per_round),
            f"{name}_max": max(per_round)}


def write_json(
    path: str, rows: Sequence[Row], machine: Machine | None = None,
    scale: Sequence[ScaleRow] = (),
) -> None:
    with open(path, "w") as fh:
        json.dump(json_document(rows, machine, scale), fh, indent=2)


_COLORS = {
    "baseline": "#8C8C8C", "ceiling": "#DD8452", "asyncpool": "#4C72B0", "peer": "#55A868",
    "today": "#C44E52", "reference": "#CCB974", "handwritten": "#8C8C8C",
}


def write_plot(
    path: str, rows: Sequence[Row], machine: Machine | None = None,
    scale: Sequence[ScaleRow] = (),
) -> None:
    """One panel per workload (bars: every row's median rate, whiskers its lowest and highest
    round; dashed lines: the baseline's and the ceiling's medians; labels: the ratio to the
    baseline), and a log-log panel of per-item wall time and driver CPU from ``--scale``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rel = ratios(rows)
    names = list(dict.fromkeys(r.workload for r in rows))
    panels = len(names) + (1 if scale else 0)
    cols = min(panels, 3) or 1
    lines = -(-panels // cols) or 1
    fig, axes = plt.subplots(
        lines, cols, figsize=(max(6.2 * cols, 10.0), 5.0 * lines), squeeze=False
    )
    flat = list(axes.flat)
    for ax, workload in zip(flat, names, strict=False):
        w = WORKLOADS[workload]
        sub = [r for r in rows if r.workload == workload]
        colors = [_COLORS[w.method(r.method).kind] for r in sub]
        x = range(len(sub))
        # Bars at the medians; whiskers from the lowest to the highest round.
        bars = ax.bar(
            x, [r.per_minute for r in sub], color=colors, ecolor="#333333", capsize=2,
            yerr=[[r.per_minute - r.per_minute_min for r in sub],
                  [r.per_minute_max - r.per_minute for r in sub]],
        )
        for name, style in ((w.baseline, "--"), (w.ceiling, ":")):
            row = next((r for r in sub if r.method == name), None)
            if row is not None:
                ax.axhline(row.per_minute, color="#555555", linestyle=style, linewidth=1)
        rates = [r.per_minute for r in sub if r.per_minute > 0]
        if rates and max(rates) / min(rates) > 30:
            ax.set_yscale("log")
        for bar, r in zip(bars, sub, strict=True):
            ax.annotate(f"{rel.get((workload, r.method), 0):.2f}×",
                        (bar.get_x() + bar.get_width() / 2, r.per_minute_max),
                        ha="center", va="bottom", fontsize=8)
        ax.margins(y=0.15)
        ax.set_xticks(list(x), [r.method for r in sub], rotation=35, ha="right", fontsize=8)
        ceiling = f", ceiling {w.ceiling} (dotted)" if w.ceiling else ""
        ax.set_title(f"{workload}: × {w.baseline} (dashed){ceiling}", fontsize=9)
        ax.set_ylabel("verifications per minute", fontsize=8)
    if scale:
        ax = flat[len(names)]
        for i, m in enumerate(SCALE_METHODS):
            mine = sorted((r for r in scale if r.method == m.name), key=lambda r: r.items)
            color = f"C{i}"
            ax.plot([r.items for r in mine], [r.cpu_us_per_item for r in mine], "-o",
                    color=color, label=f"{m.name} CPU", markersize=4)
            ax.plot([r.items for r in mine], [r.wall_us_per_item for r in mine], "--s",
                    color=color, label=f"{m.name} wall", markersize=3, alpha=0.7)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("items", fontsize=8)
        ax.set_ylabel("µs per item (driver CPU solid, wall dashed)", fontsize=8)
        ax.set_title("--scale: per-item cost vs items (no-op), log-log", fontsize=9)
        ax.legend(fontsize=6, ncol=2)
    for ax in flat[panels:]:
        ax.set_visible(False)
    title = (f"asyncpool bench ({_cluster_cpus()} CPUs, "
             f"Ray {ray.__version__}")
    if machine is not None:
        title += (f", load average {machine.load_start:.1f} → {machine.load_end:.1f} "
                  f"on {machine.cores} cores")
        if machine.background:
            title += f", +{machine.background} busy processes"
    fig.suptitle(title + ")", fontsize=11)
    if rows:
        fig.legend(
            handles=[Patch(color=_COLORS[k], label=label) for k, label in (
                ("handwritten", "baseline: hand-written asyncio"), ("asyncpool", "asyncpool"),
                ("peer", "Ray's own"), ("today", "executor (today)"),
                ("reference", "in-process"), ("ceiling", "ceiling"))],
            loc="upper center", bbox_to_anchor=(0.5, 0.955), fontsize=8, ncol=6, frameon=False,
        )
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def machine_now(
    start: float, background: int = 0, settled: Sequence[Settled] = ()
) -> Machine:
    return Machine(start, os.getloadavg()[0], os.cpu_count() or 1, background, tuple(settled))
