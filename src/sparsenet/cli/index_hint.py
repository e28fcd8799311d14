"""``sparsenet train``'s hint for a feature index out of range: the data's index base.

A 1-based LibSVM file (the format's own convention) read 0-based has an index equal to
the number of features; the reader's error then says only that the index is out of
range. :func:`index_hint` catches that error, scans the file the error names
(:func:`sparsenet.cli.data_scan.scan_data`) and adds what the data shows: the base it
looks to have and the option that reads it (``--index-base 1``), or the ``--features``
that covers its largest index.
"""
import contextlib

from ..io.libsvm.errors import LibSVMFormatError

__all__ = ["index_hint", "hint_for"]


def _index_of(token):
    head = (token or "").split(":", 1)[0]
    return int(head) if head.isdigit() else None


def hint_for(path, features, index_base, index):
    """The hint for feature ``index`` (as written) out of range in ``path``, or None."""
    from .data_scan import scan_data  # on first use (start-up)

    try:
        summary = scan_data(path, 0)  # read as written: no limit, index 0 allowed
    except (LibSVMFormatError, OSError):
        return None
    if summary.max_index is None:
        return None
    smallest, largest = summary.min_index, summary.max_index
    if index_base == 0 and smallest >= 1 and largest <= features:
        return (f"{path} looks 1-based (LibSVM's own convention): no index 0 in it, indices "
                f"{smallest}..{largest} (detected, as 'sparsenet inspect' reports); pass "
                f"--index-base 1 to read it so")
    wanted = largest + 1 - index_base
    return (f"the largest index in {path} is {largest} ({index_base}-based), so it needs "
            f"--features {wanted} or more (leave --features out to infer it)")


@contextlib.contextmanager
def index_hint(args, config):
    """Re-raise an out-of-range :class:`~sparsenet.io.LibSVMFormatError` of training with
    :func:`hint_for`'s hint appended (the same class, path, line, column and token)."""
    try:
        yield
    except LibSVMFormatError as exc:
        index = _index_of(exc.token)
        in_range = index is not None and index < config["features"] + config["index_base"]
        if exc.path is None or index is None or in_range:
            raise
        hint = hint_for(exc.path, config["features"], config["index_base"], index)
        if hint is None:
            raise
        raise LibSVMFormatError(f"{exc}; {hint}", path=exc.path, line=exc.line,
                                column=exc.column, token=exc.token) from None
