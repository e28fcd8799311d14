"""Choose the LibSVM parsing kernel: native (C, built by ``pip install -e .``) or reference.

Both kernels take a buffer of complete lines and a :class:`ParseOptions` and
return a :class:`Parsed` (numpy CSR parts) or a :class:`KernelError`. The native
kernel releases the GIL, so threads parse chunks in parallel. Set
``SPARSENET_LIBSVM_KERNEL=python`` to force the reference kernel.

>>> from sparsenet.io.libsvm.options import ParseOptions
>>> parse(b"1 2:0.5\\n", ParseOptions()).indices.tolist()
[2]
>>> BACKEND in ('native', 'python')
True
"""
import os
import warnings

import numpy as np

from ...base import InvalidArgumentError, NativeKernelWarning
from . import reference
from .reference import Parsed
from .errors import KernelError

__all__ = ["parse", "count_rows", "BACKEND", "native_available", "pow5_table", "Parsed"]

try:
    from . import _native
except ImportError:  # not built: the reference kernel serves
    _native = None


def pow5_table():
    """The Eisel-Lemire table: 128-bit truncated 5**q, q in [-342, 308], as (high, low) words.

    Negative powers are the rounded-up reciprocals scaled to 128 significant bits.

    >>> t = np.frombuffer(pow5_table(), dtype=np.uint64)
    >>> hex(int(t[2 * 342]))  # 5**0 = 1 scaled to 2**127
    '0x8000000000000000'
    """
    words = []
    for q in range(-342, 309):
        if q < 0:
            p5 = 5 ** -q
            z = p5.bit_length()
            c = (1 << (z + 127 if q >= -27 else 2 * z + 128)) // p5 + 1
            while c >= 1 << 128:
                c >>= 1
        else:
            c = 5 ** q
            while c < 1 << 127:
                c <<= 1
            while c >= 1 << 128:
                c >>= 1
        words.extend((c >> 64, c & 0xFFFFFFFFFFFFFFFF))
    return np.array(words, dtype=np.uint64).tobytes()


if _native is not None:
    _native.set_pow5_table(pow5_table())


def native_available():
    """True when the compiled kernel is importable."""
    return _native is not None


_forced = os.environ.get("SPARSENET_LIBSVM_KERNEL", "").strip().lower()
if _forced not in ("", "native", "python"):
    raise InvalidArgumentError(
        f"SPARSENET_LIBSVM_KERNEL must be 'native' or 'python', got {_forced!r}")
if _forced == "native" and _native is None:
    raise ImportError("SPARSENET_LIBSVM_KERNEL=native but sparsenet.io.libsvm._native is not "
                      "built; run `pip install -e .` (or `python setup.py build_ext --inplace`)")
BACKEND = "python" if (_forced == "python" or _native is None) else "native"
if _native is None and _forced != "python":  # told once, at import
    warnings.warn("sparsenet's native LibSVM parser (sparsenet.io.libsvm._native) is not "
                  "built: LibSVM files are parsed by the Python reference kernel, with the "
                  "same results and errors but slower. Build it with a C compiler (`pip "
                  "install -e .`); SPARSENET_LIBSVM_KERNEL=python silences this.",
                  NativeKernelWarning, stacklevel=2)

_SLOW_WARN_BYTES = 16 << 20
_warned = False


def _warn_slow(nbytes):
    global _warned
    if not _warned and nbytes >= _SLOW_WARN_BYTES:
        _warned = True
        warnings.warn("sparsenet.io: the compiled LibSVM kernel is not built, so large files are "
                      "parsed by the pure-Python reference kernel (about 100x slower). Build it "
                      "with `pip install -e .` or `python setup.py build_ext --inplace`.",
                      RuntimeWarning, stacklevel=3)


def _as_array(buf, dtype):
    return None if buf is None else np.frombuffer(buf, dtype=dtype)


def parse(buf, opts, backend=None):
    """Parse ``buf`` (bytes-like, complete lines) with ``opts``.

    Returns :class:`Parsed` or, for invalid text, the first :class:`KernelError`.
    ``backend`` forces ``'native'`` or ``'python'`` (default: :data:`BACKEND`).
    """
    backend = backend or BACKEND
    if backend == "python":
        if _native is None:
            _warn_slow(len(buf))
        return reference.parse(buf, opts)
    if _native is None:
        raise ImportError("the native LibSVM kernel is not built")
    out = _native.parse(buf, *opts.native_args())
    if len(out) == 3:
        return KernelError(*out)
    indptr, indices, values, labels, lab_indptr, lab_ids, qids, nrows, mi, ml, nl, wts = out
    vdt = opts.dtype
    return Parsed(_as_array(indptr, np.int64), _as_array(indices, np.int64),
                  _as_array(values, vdt), _as_array(labels, vdt),
                  _as_array(lab_indptr, np.int64), _as_array(lab_ids, np.int64),
                  _as_array(qids, np.int64), nrows, mi, ml, nl, _as_array(wts, vdt))


def count_rows(buf, backend=None):
    """Number of data rows (lines not blank and not only a comment) in ``buf``.

    >>> count_rows(b"1 0:1\\n# c\\n\\n0\\n")
    2
    """
    backend = backend or BACKEND
    if backend == "python":
        return reference.count_rows(buf)
    return _native.count_rows(buf)
