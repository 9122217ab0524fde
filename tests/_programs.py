"""Programs more than one test file runs in the sandbox."""

from __future__ import annotations

#: Forks children that sleep until the run's process limit refuses one, then prints its uid
#: and how many it forked (the children die with the run's process group).
FLAT_FORK_BOMB = """
import os, time
forks = 0
for _ in range(2000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    forks += 1
print(os.getuid(), forks)
"""
