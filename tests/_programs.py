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

#: The head of a solution that rewrites its side of the wire (the judge's code is in its
#: process's memory, forked from the fork server's): ``wire`` is its copy of the judge, the
#: modules of the judge's package as one, as the judge was one module: a name is read from a
#: module that holds it, and set in every module that holds it (each module that calls a
#: function of another holds it under its name).
JUDGE_WIRE = """
import sys, types
class _Wire(types.ModuleType):
    def __getattr__(self, name):
        for module in vars(self)["modules"]:
            if name in vars(module):
                return vars(module)[name]
        raise AttributeError(name)
    def __setattr__(self, name, value):
        for module in vars(self)["modules"]:
            if name in vars(module):
                setattr(module, name, value)
wire = _Wire("wire")
vars(wire)["modules"] = [
    module for key, module in list(sys.modules.items())
    if key == "_asyncpool_zygote._judge" or key.startswith("_asyncpool_zygote._judge.")
]
del _Wire
"""
