"""``sparsenet convert``: LibSVM <-> SciPy ``.npz`` <-> dense CSV, and model files: MXNet's
``.params``/``.nd`` <-> PyTorch ``.pt`` (:mod:`sparsenet.cli.convert_arrays`).

Formats come from the file names' suffixes:

==========================================  ===========================================
suffix                                      format
==========================================  ===========================================
``.svm``, ``.libsvm``, ``.txt``             LibSVM text; each may end in ``.gz``,
(each optionally ``.gz/.zst/.xz/.bz2``)     ``.zst``, ``.xz`` or ``.bz2`` (compressed)
``.npz``                                    a SciPy CSR matrix plus its labels (below)
``.csv``                                    dense text: the label, then every feature
==========================================  ===========================================

The ``.npz`` layout is the one :func:`scipy.sparse.save_npz` writes for a CSR
matrix (keys ``data``, ``indices``, ``indptr``, ``shape``, ``format``), plus one
key, ``label``: a float array with one label per row. So
``scipy.sparse.load_npz(path)`` reads the features, and
``numpy.load(path)["label"]`` the labels; both without pickles. An ``.npz``
without ``label`` (any matrix ``save_npz`` wrote, CSR, CSC or COO) converts with
label 0 for every row, and a note on stderr says so. Every array of an ``.npz`` is checked
before SciPy sees it (:mod:`sparsenet.cli.convert_npz`): an index outside the declared
shape, an ``indptr`` that runs backwards, complex values or a label per row missing raise
``FileFormatError`` naming the file and the key, so nothing is written that the reader of
the output would refuse.

The ``.csv`` has no header: one row per line, the label first, then the
``num_features`` values, written with 9 significant digits (enough to read every
float32 back bit for bit). Dense output is refused when ``rows * (features + 1)
* 8`` bytes exceeds ``--max-dense-bytes`` (default 1 GiB), and a dense input
whose file is larger than that is refused too.

Values are float32, as the LibSVM reader gives them. ``--index-base`` is the
index base of the LibSVM side (0, MXNet's default, or 1); ``--features N`` sets
the number of columns (at least the largest index + 1).

>>> import os, tempfile
>>> from sparsenet.cli.main import main
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "a.svm"), "w") as f:
...     _ = f.write("1 0:0.5 2:2\\n0 1:-1\\n")
>>> main(["convert", os.path.join(d, "a.svm"), os.path.join(d, "a.csv")])  # doctest: +ELLIPSIS
/.../a.svm (libsvm) -> /.../a.csv (csv): 2 rows, 3 features, 3 stored values
0
>>> print(open(os.path.join(d, "a.csv")).read(), end="")
1,0.5,0,2
0,0,-1,0
"""
import argparse
import os
import sys

from ..atomic import atomic_write
from ..base import FileFormatError, InvalidArgumentError, SparseFormatError
from ..io.libsvm.compression import SUFFIXES
from .arg_types import positive_int
from .paths import require_paths

# Building the parser imports no NumPy, SciPy or torch (``sparsenet --help`` answers at
# once): the readers and writers are imported inside the functions that use them.

__all__ = ["add_parser", "check_inputs", "run", "format_of", "read", "write",
           "DEFAULT_MAX_DENSE_BYTES"]

#: ``--max-dense-bytes``'s default: 1 GiB.
DEFAULT_MAX_DENSE_BYTES = 1 << 30

_LIBSVM_SUFFIXES = (".svm", ".libsvm", ".txt")

_DESCRIPTION = """\
Convert data between LibSVM text (.svm/.libsvm/.txt, optionally .gz/.zst/.xz/.bz2), SciPy .npz
(scipy.sparse.save_npz's CSR layout plus a 'label' array) and dense .csv (no header; the
label, then every feature). Formats come from the suffixes. Values are float32. Dense
output larger than --max-dense-bytes is refused.

Convert model files between MXNet's NDArray files (.params/.nd: mx.nd.save, save_parameters,
checkpoints, exports; written in MXNet 1.x's format) and PyTorch (.pt/.pth: a dict of named
tensors, CSR as torch.sparse_csr, row_sparse as sparse COO; read with weights_only=True)."""


def format_of(path):
    """``'libsvm'``, ``'npz'`` or ``'csv'`` from ``path``'s suffix.

    >>> format_of("day_0.svm.zst"), format_of("x.NPZ"), format_of("t.csv")
    ('libsvm', 'npz', 'csv')
    >>> format_of("x.parquet")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sparsenet.base.InvalidArgumentError: x.parquet: unknown file format: expected a name ... .csv
    """
    low = os.fspath(path).lower()
    for suffix in SUFFIXES:
        if low.endswith(suffix):
            low = low[:-len(suffix)]
            return "libsvm" if low.endswith(_LIBSVM_SUFFIXES) else _unknown(path)
    if low.endswith(_LIBSVM_SUFFIXES):
        return "libsvm"
    if low.endswith(".npz"):
        return "npz"
    if low.endswith(".csv"):
        return "csv"
    return _unknown(path)


def _unknown(path):
    raise InvalidArgumentError(
        f"{os.fspath(path)}: unknown file format: expected a name ending in .svm, .libsvm, "
        ".txt (optionally + .gz/.zst/.xz/.bz2), .npz or .csv")


def _check_dense(rows, features, limit, path):
    need = rows * (features + 1) * 8
    if need > limit:
        raise InvalidArgumentError(
            f"{os.fspath(path)}: the dense table would take {need:,} bytes ({rows:,} rows x "
            f"{features + 1:,} columns x 8), more than --max-dense-bytes {limit:,}; raise "
            "--max-dense-bytes or convert to .npz or LibSVM instead")


def _width(csr, num_features, path):
    if num_features is None:
        return csr.shape[1]
    if num_features < csr.shape[1]:
        raise InvalidArgumentError(
            f"{os.fspath(path)}: --features {num_features} is smaller than the data's "
            f"{csr.shape[1]} columns")
    return num_features


def read(path, num_features=None, index_base=0, max_dense_bytes=DEFAULT_MAX_DENSE_BYTES):
    """``(scipy.sparse.csr_matrix float32, labels float32)`` from a LibSVM, .npz or .csv file."""
    # on first use: NumPy, SciPy and torch are not imported to build the parser
    import numpy as np

    from ..io.libsvm.load import load_libsvm  # on first use (start-up)
    from .convert_npz import checked_csr, checked_labels, read_npz  # on first use (start-up)

    kind = format_of(path)
    if kind == "libsvm":
        data, label = load_libsvm(path, num_features, zero_based=index_base == 0)
        return data.asscipy(), label.asnumpy()
    if kind == "npz":
        csr, label = read_npz(os.fspath(path), os.fspath(path))
        if label is None:
            print(f"sparsenet: note: {os.fspath(path)} has no 'label' array; every label is 0",
                  file=sys.stderr)
            label = np.zeros(csr.shape[0], np.float32)
        width = _width(csr, num_features, path)
        csr.resize((csr.shape[0], width))
        return csr, label
    size = os.path.getsize(path)
    if size > max_dense_bytes:
        raise InvalidArgumentError(
            f"{os.fspath(path)}: the CSV file holds {size:,} bytes, more than "
            f"--max-dense-bytes {max_dense_bytes:,}; raise --max-dense-bytes to read it")
    try:
        table = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2, comments=None)
    except ValueError as exc:
        raise FileFormatError(f"{os.fspath(path)}: not a numeric CSV table: {exc}") from None
    if table.shape[1] < 1:
        raise FileFormatError(f"{os.fspath(path)}: expected a label column, got no columns")
    csr = checked_csr(table[:, 1:], os.fspath(path), FileFormatError)
    csr.resize((csr.shape[0], _width(csr, num_features, path)))
    return csr, checked_labels(table[:, 0], table.shape[0], os.fspath(path), "label")


def write(path, csr, label, num_features=None, index_base=0,
          max_dense_bytes=DEFAULT_MAX_DENSE_BYTES):
    """Write ``csr`` and ``label`` to ``path`` in the format its suffix names.

    ``csr`` is a SciPy CSR, CSC or COO matrix (or a 2-D NumPy array), ``label`` one real
    number per row; both are checked before any routine reads them (a crafted matrix
    raises :class:`~sparsenet.base.SparseFormatError` naming the broken part).
    """
    # on first use: NumPy, SciPy and torch are not imported to build the parser
    import numpy as np

    from ..io.libsvm.save import save_libsvm  # on first use (start-up)
    from .convert_npz import checked_csr, checked_labels  # on first use (start-up)

    kind = format_of(path)
    csr = checked_csr(csr, "csr", SparseFormatError)
    label = checked_labels(label, csr.shape[0], "write", "label", InvalidArgumentError)
    csr.resize((csr.shape[0], _width(csr, num_features, path)))
    if kind == "libsvm":
        save_libsvm(path, csr, label, zero_based=index_base == 0)
    elif kind == "npz":
        arrays = {"data": csr.data, "indices": csr.indices, "indptr": csr.indptr,
                  "format": b"csr", "shape": np.array(csr.shape), "label": label}
        atomic_write(path, lambda f: np.savez_compressed(f, **arrays))
    else:
        rows, features = csr.shape
        _check_dense(rows, features, max_dense_bytes, path)

        def write_csv(f):
            step = max(1, (64 << 20) // (8 * (features + 1)))
            for r0 in range(0, rows, step):
                block = csr[r0:r0 + step].toarray()
                table = np.concatenate([np.asarray(label[r0:r0 + step], np.float32)[:, None],
                                        block], axis=1)
                np.savetxt(f, table, fmt="%.9g", delimiter=",")
        atomic_write(path, write_csv)


def add_parser(subparsers):
    """Add the ``convert`` subparser to ``subparsers`` and return it.

    >>> sub = argparse.ArgumentParser().add_subparsers()
    >>> add_parser(sub).parse_args(["a.svm", "a.npz", "--features", "10"]).features
    10
    """
    parser = subparsers.add_parser(
        "convert", help="convert data (LibSVM, SciPy .npz, dense .csv) or model files "
                        "(MXNet .params, PyTorch .pt)",
        description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", metavar="IN", help="the file to read (format from its suffix)")
    parser.add_argument("output", metavar="OUT",
                        help="the file to write (format from its suffix; replaced atomically)")
    parser.add_argument("--features", type=positive_int, default=None, metavar="N",
                        help="number of feature columns (default: the largest index + 1, or "
                             "the input's width)")
    parser.add_argument("--index-base", type=int, choices=(0, 1), default=0,
                        help="feature indices of the LibSVM side count from 0 (MXNet's "
                             "default) or 1")
    parser.add_argument("--max-dense-bytes", type=positive_int,
                        default=DEFAULT_MAX_DENSE_BYTES, metavar="B",
                        help="refuse a dense (.csv) table larger than this many bytes "
                             "(rows x (features + 1) x 8; default 1 GiB)")
    return parser


def check_inputs(args):
    """Raise ``FileNotFoundError`` when IN is missing (the wording of every command);
    imports no torch (:func:`sparsenet.cli.main.main` calls it first)."""
    require_paths(args.input)


def run(args):
    """Convert ``args.input`` to ``args.output``; print a one-line summary; return 0."""
    from . import convert_arrays  # on first use: imports torch

    if convert_arrays.is_array_file(args.input):
        print(convert_arrays.convert(args.input, args.output))
        return 0
    if convert_arrays.is_array_file(args.output):
        raise InvalidArgumentError(
            f"{args.output}: a data file ({args.input}) converts to another data file, not to a "
            f"model file")
    out_kind = format_of(args.output)
    in_kind = format_of(args.input)
    csr, label = read(args.input, args.features, args.index_base, args.max_dense_bytes)
    write(args.output, csr, label, args.features, args.index_base, args.max_dense_bytes)
    print(f"{args.input} ({in_kind}) -> {args.output} ({out_kind}): {csr.shape[0]} rows, "
          f"{_width(csr, args.features, args.output)} features, {csr.nnz} stored values")
    return 0
