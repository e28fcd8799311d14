"""Compressed LibSVM rows of ``bench_libsvm.py``: .gz/.zst read and write, sharded folders.

Every row runs in a fresh interpreter with the files in the page cache; rates
are MB of *text* (the uncompressed file) per second, so rows compare directly.
A row times the first load of its process (its first-touch page faults, thread
pools and caches included), except the rows "loads 2-6 in one process" (the
median of five loads after an untimed first).

- read: sparsenet ``load_libsvm`` on plain text, ``.gz`` (ISA-L), ``.gz`` with
  ``isal`` hidden (the standard library's zlib), a ``.gz`` of one member as
  other tools write it (streamed: its members cannot be found without
  decompressing), ``.zst``; scikit-learn's
  ``load_svmlight_file`` on the ``.gz``; and the decompressors alone.
- write: ``save_libsvm`` to plain text, ``.gz`` (default level 2, ISA-L),
  ``.gz`` through the standard library at level 9 (what ``save_libsvm`` did
  before ISA-L: ``gzip.open``'s default), and ``.zst`` (level 1).
- shards: a folder of 8 ``.gz`` files read whole once, and as 4 parts one
  after the other; the parts' total against the whole pass.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

HIDE_ISAL = r"""
class _Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'isal':
            raise ImportError('hidden by the benchmark')
sys.meta_path.insert(0, _Hide())
import warnings
warnings.simplefilter('ignore')
"""

CHILD = r"""
import json, os, sys, time
{hide}
path, src, features = sys.argv[1], sys.argv[2], int(sys.argv[3])
for p in [src] + ([os.path.join(path, n) for n in os.listdir(path)] if os.path.isdir(path)
                  else [path] if os.path.exists(path) else []):
    with open(p, 'rb') as f:           # warm the page cache outside the timing
        while f.read(1 << 20):
            pass
{setup}
t = time.perf_counter()
{body}
print(json.dumps({{"seconds": time.perf_counter() - t, "extra": locals().get("extra")}}))
"""

LOAD = ("import sparsenet as mx",
        "d, _ = mx.io.load_libsvm(path, num_features=features)")
# loads 2-6 in one process (the first untimed): a job that reads several files or epochs
WARM = ("import sparsenet as mx\nd, _ = mx.io.load_libsvm(path, num_features=features)",
        "extra = []\nfor _ in range(5):\n    s = time.perf_counter()\n"
        "    d, _ = mx.io.load_libsvm(path, num_features=features)\n"
        "    extra.append(time.perf_counter() - s)")
READS = {
    "sparsenet load_libsvm, plain text": ("", "", LOAD),
    "sparsenet load_libsvm, .gz (ISA-L)": (".gz", "", LOAD),
    "sparsenet load_libsvm, .gz, standard library only (isal hidden)": (".gz", HIDE_ISAL, LOAD),
    "sparsenet load_libsvm, .gz of one member (as `gzip` writes it; streamed, ISA-L)": (
        ".1.gz", "", LOAD),
    "scikit-learn load_svmlight_file, .gz": (".gz", "", (
        "import numpy as np\nfrom sklearn.datasets import load_svmlight_file",
        "X, y = load_svmlight_file(path, n_features=features, dtype=np.float32, "
        "zero_based=True)")),
    "sparsenet load_libsvm, .zst": (".zst", "", LOAD),
    "sparsenet load_libsvm, plain text, loads 2-6 in one process": ("", "", WARM),
    "sparsenet load_libsvm, .zst, loads 2-6 in one process": (".zst", "", WARM),
    "decompression alone, .gz, ISA-L (`isal.igzip`)": (".gz", "", (
        "from isal import igzip", "f = igzip.open(path, 'rb')\nwhile f.read(1 << 22):\n"
        "    pass")),
    "decompression alone, .gz, standard library `gzip`": (".gz", "", (
        "import gzip", "f = gzip.open(path, 'rb')\nwhile f.read(1 << 22):\n    pass")),
    "decompression alone, .zst, `zstandard`": (".zst", "", (
        "import zstandard", "f = zstandard.ZstdDecompressor().stream_reader(open(path, 'rb'), "
        "read_across_frames=True)\nwhile f.read(1 << 22):\n    pass")),
}
SAVE_SETUP = ("import sparsenet as mx\nX, y = mx.io.load_libsvm(src, num_features=features)\n"
              "kw = {}")
WRITES = {
    "sparsenet save_libsvm, plain text": ("", "", SAVE_SETUP),
    "sparsenet save_libsvm, .gz (level 2, ISA-L)": (".gz", "", SAVE_SETUP),
    "sparsenet save_libsvm, .gz, standard library level 9 (the previous default)": (
        ".gz", HIDE_ISAL, SAVE_SETUP + "\nkw = {'compresslevel': 9}"),
    "sparsenet save_libsvm, .zst (level 1)": (".zst", "", SAVE_SETUP),
}
SAVE_BODY = "mx.io.save_libsvm(path, X, y, **kw)"
PARTS_BODY = """extra = []
for k in range(4):
    s = time.perf_counter()
    mx.io.load_libsvm(path, num_features=features, num_parts=4, part_index=k)
    extra.append(time.perf_counter() - s)"""


def _child(hide, setup, body, path, src, features, env):
    code = CHILD.format(hide=hide, setup=setup, body=body)
    out = subprocess.run([sys.executable, "-c", code, path, src, str(features)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs):
    """Median seconds of one load over the runs (of each run's loads, when it timed several)."""
    return statistics.median(t for r in runs for t in (r["extra"] or [r["seconds"]]))


def prepare(src, workdir, env):
    """Write ``src`` as .gz and .zst (sparsenet's defaults), as a one-member .gz, and as a folder of 8 .gz files,
    afresh at every run: files of an earlier run may come from an older writer."""
    sys.path.insert(0, env["PYTHONPATH"].split(os.pathsep)[0])
    from sparsenet.io.libsvm.compression import open_write
    base = os.path.join(workdir, "cbench.svm")
    for suffix in (".gz", ".zst"):
        with open(src, "rb") as f, open_write(base + suffix, base + suffix + ".tmp") as w:
            shutil.copyfileobj(f, w, 1 << 22)
        os.replace(base + suffix + ".tmp", base + suffix)
    from isal import igzip  # a foreign .gz: one member, ISA-L level 2 as sparsenet's default
    with open(src, "rb") as f, igzip.open(base + ".1.gz.tmp", "wb", compresslevel=2) as w:
        shutil.copyfileobj(f, w, 1 << 22)
    os.replace(base + ".1.gz.tmp", base + ".1.gz")
    folder = os.path.join(workdir, "cbench_8gz")
    shutil.rmtree(folder, ignore_errors=True)
    if not os.path.isdir(folder):
        os.makedirs(folder + ".tmp", exist_ok=True)
        lines = open(src, "rb").read().splitlines(keepends=True)
        step = -(-len(lines) // 8)
        for i in range(8):
            p = os.path.join(folder + ".tmp", f"day_{i}.svm.gz")
            with open_write(p, p + ".tmp") as w:
                w.write(b"".join(lines[i * step:(i + 1) * step]))
            os.replace(p + ".tmp", p)
        os.replace(folder + ".tmp", folder)
    return base, folder


def bench_compressed(src, args, env):
    """The Markdown tables of the compressed rows for the text file ``src``."""
    base, folder = prepare(src, args.dir, env)
    size = os.path.getsize(src)
    out = [f"Text: {size / 1e6:,.0f} MB; .gz {os.path.getsize(base + '.gz') / 1e6:,.0f} MB, "
           f".zst {os.path.getsize(base + '.zst') / 1e6:,.0f} MB (median of {args.repeat}).",
           "", "| read | seconds | MB/s of text | vs stdlib-only .gz |", "|---|---|---|---|"]
    reads = {}
    for name, (suffix, hide, (setup, body)) in READS.items():
        path = (base + suffix) if suffix else src
        reads[name] = _median([_child(hide, setup, body, path, src, args.features, env)
                               for _ in range(args.repeat)])
    ref = reads["sparsenet load_libsvm, .gz, standard library only (isal hidden)"]
    out += [f"| {n} | {s:.3f} | {size / s / 1e6:,.0f} | {ref / s:.2f}x |"
            for n, s in reads.items()]
    out += ["", "| write | seconds | MB/s of text | vs stdlib level 9 |", "|---|---|---|---|"]
    writes = {}
    for name, (suffix, hide, setup) in WRITES.items():
        path = os.path.join(args.dir, "cbench_out.svm" + suffix)
        writes[name] = _median([_child(hide, setup, SAVE_BODY, path, src, args.features, env)
                                for _ in range(args.repeat)])
    ref = writes["sparsenet save_libsvm, .gz, standard library level 9 (the previous default)"]
    out += [f"| {n} | {s:.3f} | {size / s / 1e6:,.0f} | {ref / s:.1f}x |"
            for n, s in writes.items()]
    whole = [_child("", LOAD[0], LOAD[1], folder, src, args.features, env)
             for _ in range(args.repeat)]
    parts = [_child("", LOAD[0], PARTS_BODY, folder, src, args.features, env)
             for _ in range(args.repeat)]
    w = _median(whole)
    p = statistics.median(sum(r["extra"]) for r in parts)
    slowest = statistics.median(max(r["extra"]) for r in parts)
    out += ["", "| folder of 8 .gz files | seconds | vs one whole pass |", "|---|---|---|",
            f"| one whole pass | {w:.3f} | 1.00x |",
            f"| 4 parts, one after the other: total | {p:.3f} | {p / w:.2f}x |",
            f"| the slowest part | {slowest:.3f} | {slowest / w:.2f}x |"]
    return "\n".join(out)
