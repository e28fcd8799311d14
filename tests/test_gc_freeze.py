"""Once ``mx.nd`` (or any namespace) has loaded torch, the objects alive then are out of
the collector's view (a full collection no longer walks torch's module objects); objects
made later are collected as usual; ``SPARSENET_GC_FREEZE=0`` leaves the collector alone.
Each case runs in a fresh interpreter (the freeze is process-wide)."""
import os
import subprocess
import sys

CODE = r"""
import gc, weakref
import sparsenet as mx
before = gc.get_freeze_count()
mx.nd.ones((2,))
frozen = gc.get_freeze_count()

class Node:
    pass

a, b = Node(), Node()
a.other, b.other = b, a  # a cycle made after the freeze
ref = weakref.ref(a)
del a, b
gc.collect()
print(before, frozen, ref() is None)
"""


def _run(env_value):
    env = dict(os.environ)
    env.pop("SPARSENET_GC_FREEZE", None)
    if env_value is not None:
        env["SPARSENET_GC_FREEZE"] = env_value
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    before, frozen, collected = out.stdout.split()
    return int(before), int(frozen), collected == "True"


def test_loading_torch_freezes_what_is_alive_and_later_cycles_are_collected():
    before, frozen, collected = _run(None)
    assert before == 0
    assert frozen > 50_000  # torch's module objects (about 170,000 with torch 2.13)
    assert collected


def test_switch_off():
    before, frozen, collected = _run("0")
    assert (before, frozen, collected) == (0, 0, True)
