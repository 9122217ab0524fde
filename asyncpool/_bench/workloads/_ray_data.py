"""Ray Data as the bench runs it: its progress bars and per-execution logs off (the harness
draws its own bar and prints its own table); nothing about how it executes changes."""

from __future__ import annotations

import logging


def quiet_ray_data() -> None:
    """Turn off Ray Data's progress bars and its per-execution log lines in this driver."""
    import ray.data

    # Ray Data logs a warning when its bars are turned off; only errors are news here.
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.enable_operator_progress_bars = False
    ctx.print_on_execution_start = False
