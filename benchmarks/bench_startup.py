"""Start-up time: ``sparsenet --help`` and ``import sparsenet`` against ``import torch``.

    python benchmarks/bench_startup.py [--runs 5]

Each case runs ``--runs`` times, every time in a fresh interpreter (the same Python as
this script), and its median wall time is reported with its difference to
``import torch``. Targets: ``sparsenet --help`` <= 0.5 s, ``import sparsenet``
<= ``import torch`` + 0.25 s, and the first ``mx.nd.array`` (which loads the ``nd``
namespace and torch) is shown for scale. The cases alternate run by run, so a machine
busy with other work slows them alike.
"""
import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "import torch": [sys.executable, "-c", "import torch"],
    "import sparsenet": [sys.executable, "-c", "import sparsenet"],
    "sparsenet --help": [sys.executable, "-m", "sparsenet", "--help"],
    "sparsenet train (usage error)": [sys.executable, "-m", "sparsenet", "train"],
    "import sparsenet; mx.nd.array": [sys.executable, "-c",
                                      "import sparsenet as mx; mx.nd.array([1.0])"],
}


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per case")
    args = parser.parse_args(argv)
    times = {name: [] for name in CASES}
    for name, cmd in CASES.items():  # warm the file cache once, untimed
        wall(cmd)
    for _ in range(args.runs):
        for name, cmd in CASES.items():
            times[name].append(wall(cmd))
    torch_s = statistics.median(times["import torch"])
    print(f"{'case':<34}{'median s':>10}{'vs import torch':>18}   runs")
    for name, runs in times.items():
        med = statistics.median(runs)
        print(f"{name:<34}{med:>10.3f}{med - torch_s:>+17.3f}s   "
              + " ".join(f"{t:.2f}" for t in runs))
    help_s = statistics.median(times["sparsenet --help"])
    import_s = statistics.median(times["import sparsenet"])
    print(f"\nsparsenet --help <= 0.5 s: {'yes' if help_s <= 0.5 else 'NO'} ({help_s:.3f} s); "
          f"import sparsenet <= import torch + 0.25 s: "
          f"{'yes' if import_s <= torch_s + 0.25 else 'NO'} ({import_s - torch_s:+.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
