"""What the ``sparsenet`` commands tell the user besides their output, on stderr.

A note says what a command inferred or chose (``sparsenet: note: ...``); a warning
says that something in the data looks wrong and what to do about it
(``sparsenet: warning: ...``). Both go to stderr, so stdout carries only the
command's own output (epoch lines, metrics, predictions).

>>> import sys
>>> note("--features 31 inferred", file=sys.stdout)
sparsenet: note: --features 31 inferred
"""
import sys

__all__ = ["note", "warn", "one_based_warning", "LARGE_FEATURE_VALUE", "large_values_warning",
           "check_data"]

#: Feature values larger than this in magnitude (and no ``--scale``) get a warning: with
#: the default learning rates a step moves a score by about lr x |value| per feature.
LARGE_FEATURE_VALUE = 100.0


def note(text, file=None):
    """Print ``sparsenet: note: <text>`` on stderr (or ``file``)."""
    print(f"sparsenet: note: {text}", file=file or sys.stderr, flush=True)


def warn(text, file=None):
    """Print ``sparsenet: warning: <text>`` on stderr (or ``file``)."""
    print(f"sparsenet: warning: {text}", file=file or sys.stderr, flush=True)


def one_based_warning(path, smallest):
    """The warning for data read 0-based that has no feature index 0.

    >>> one_based_warning("d.svm", 1)[:60]
    'd.svm has no feature index 0 (its smallest index is 1): it l'
    """
    return (f"{path} has no feature index 0 (its smallest index is {smallest}): it looks "
            f"1-based, LibSVM's own convention, but is read 0-based (--index-base 0, the "
            f"default), so column 0 is never trained; pass --index-base 1 if its indices "
            f"count from 1")


def large_values_warning(path, largest):
    """The warning for unscaled features (largest absolute value ``largest``).

    >>> large_values_warning("d.svm", 4254.0)[:50]
    'd.svm holds feature values up to 4254 in magnitude'
    """
    return (f"{path} holds feature values up to {largest:g} in magnitude; features far "
            f"outside [-1, 1] make the optimizer's steps too large and training oscillate: "
            f"pass --scale (divides each feature by its largest absolute value in the "
            f"training data, saved with the model and applied by eval and predict), or "
            f"scale the features")


def check_data(args, min_index, max_abs):
    """``sparsenet train``'s checks of its data, once per run (``args.data_checked``): warn
    about a file with no index 0 read 0-based (``min_index`` > 0, 0-based) and about
    feature values larger than :data:`LARGE_FEATURE_VALUE` (``max_abs``) without
    ``--scale``."""
    if args.data_checked:
        return
    args.data_checked = True
    if args.index_base == 0 and min_index is not None and min_index > 0:
        warn(one_based_warning(args.data, min_index))
    if max_abs > LARGE_FEATURE_VALUE and not args.scale:
        warn(large_values_warning(args.data, max_abs))
