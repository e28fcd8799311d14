"""``sparsenet bench``: run the benchmark scripts of a source checkout and print their tables.

The benchmarks are scripts in the repository's ``benchmarks/`` folder (``bench_*.py``),
not part of the installed package. The folder is ``--dir``, else ``./benchmarks``, else
the ``benchmarks/`` next to the package's source tree (an editable install); an installed
wheel has none, and the command says so in one line.

Each script runs in its own interpreter (``python bench_X.py``, with the arguments of
:data:`QUICK_ARGS` under ``--quick``), its output streamed as it comes; at the end
the command prints, per script, the comparison table(s) it printed (its Markdown
lines, those starting with ``|``) and its wall time. The exit status is 0 when every
script succeeded, else 1 (``sparsenet: error:`` names the failed ones).

>>> sorted(QUICK_ARGS)[:3]
['bench_dot', 'bench_examples', 'bench_libsvm']
"""
import argparse
import os
import subprocess
import sys
import time

from ..base import InvalidArgumentError, SparsenetError

__all__ = ["add_parser", "run", "find_benchmarks", "scripts", "tables", "QUICK_ARGS",
           "BenchmarkFailedError"]

#: Arguments that make a script short (seconds to a minute here) under ``--quick``.
QUICK_ARGS = {
    "bench_dot": ["--repeat", "3"],
    "bench_examples": ["--repeats", "1"],
    "bench_libsvm": ["--rows", "20000", "--repeat", "1"],
    "bench_module": ["--epochs", "1"],
    "bench_optimizers": ["--repeat", "3", "--rows", "1000", "--no-dense"],
    "bench_seed000": ["--epochs", "1"],
}

_DESCRIPTION = """\
Run the benchmark scripts (benchmarks/bench_*.py of a sparsenet source checkout), each
in its own interpreter, and print the comparison tables they print. NAMES select
scripts (bench_dot or dot); none runs them all. --quick passes each script small sizes."""


class BenchmarkFailedError(SparsenetError, RuntimeError):
    """One or more benchmark scripts exited with a non-zero status."""


def _source_tree_benchmarks():
    here = os.path.dirname(os.path.abspath(__file__))  # src/sparsenet/cli
    return os.path.normpath(os.path.join(here, os.pardir, os.pardir, os.pardir, "benchmarks"))


def find_benchmarks(folder=None):
    """The benchmarks folder: ``folder``, ``./benchmarks`` or the source tree's.

    >>> find_benchmarks("/nonexistent/benchmarks")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentError: --dir /nonexistent/benchmarks: not a folder holding ...
    """
    if folder is not None:
        if not scripts(folder):
            raise InvalidArgumentError(
                f"--dir {folder}: not a folder holding bench_*.py scripts")
        return folder
    candidates = [os.path.join(os.getcwd(), "benchmarks"), _source_tree_benchmarks()]
    for candidate in candidates:
        if scripts(candidate):
            return candidate
    raise InvalidArgumentError(
        "no benchmarks/ folder with bench_*.py scripts found (looked in "
        f"{' and '.join(candidates)}); the benchmarks ship with the source checkout, not "
        "the installed package: run from a checkout or pass --dir")


def scripts(folder):
    """``{name: path}`` of the ``bench_*.py`` scripts of ``folder`` (empty if none)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    return {n[:-3]: os.path.join(folder, n) for n in names
            if n.startswith("bench_") and n.endswith(".py")}


def _select(available, names):
    if not names:
        return list(available)
    chosen = []
    for name in names:
        key = name[:-3] if name.endswith(".py") else name
        key = key if key.startswith("bench_") else f"bench_{key}"
        if key not in available:
            raise InvalidArgumentError(
                f"unknown benchmark {name!r}: expected one of "
                f"{', '.join(k[len('bench_'):] for k in available)}")
        chosen.append(key)
    return chosen


def tables(output):
    """The Markdown table lines (starting with ``|``) of a script's output.

    >>> tables("timing...\\n| a | b |\\n|---|---|\\n| 1 | 2 |\\ndone\\n")
    ['| a | b |', '|---|---|', '| 1 | 2 |']
    """
    return [line.rstrip() for line in output.splitlines() if line.lstrip().startswith("|")]


def _run_one(path, args):
    """Run a script, streaming its output; return (exit status, stdout text, seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, path, *args], stdout=subprocess.PIPE,
                            text=True, cwd=os.path.dirname(os.path.dirname(path)) or ".")
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    proc.wait()
    return proc.returncode, "".join(lines), time.perf_counter() - start


def add_parser(subparsers):
    """Add the ``bench`` subparser to ``subparsers`` and return it.

    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> args = add_parser(sub).parse_args(["--quick", "dot", "libsvm"])
    >>> args.quick, args.names
    (True, ['dot', 'libsvm'])
    """
    parser = subparsers.add_parser(
        "bench", help="run the benchmark scripts of a source checkout, print their tables",
        description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", metavar="NAMES",
                        help="scripts to run, e.g. dot libsvm (default: all)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: seconds to a minute per script")
    parser.add_argument("--dir", default=None, metavar="DIR",
                        help="the benchmarks folder (default: ./benchmarks, else the source "
                             "tree's)")
    parser.add_argument("--list", action="store_true", help="list the scripts and exit")
    return parser


def run(args):
    """Run the chosen scripts; print the summary; 0 when all succeeded."""
    available = scripts(find_benchmarks(args.dir))
    chosen = _select(available, args.names)
    if args.list:
        print("\n".join(k[len("bench_"):] for k in chosen))
        return 0
    results = []
    for key in chosen:
        extra = QUICK_ARGS.get(key, []) if args.quick else []
        print(f"== {key} {' '.join(extra)}".rstrip(), flush=True)
        results.append((key,) + _run_one(available[key], extra))
    print("\n== Summary")
    failed = []
    for key, code, output, seconds in results:
        status = "ok" if code == 0 else f"FAILED (exit {code})"
        print(f"\n-- {key}: {status}, {seconds:.1f} s")
        found = tables(output)
        print("\n".join(found) if found else "(no table printed)")
        if code != 0:
            failed.append(f"{key} (exit {code})")
    sys.stdout.flush()
    if failed:
        raise BenchmarkFailedError(f"{len(failed)} of {len(results)} benchmarks failed: "
                                   f"{', '.join(failed)}")
    return 0
