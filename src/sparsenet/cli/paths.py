"""The one "file not found" of the ``sparsenet`` commands.

Every command checks the paths it was given before it reads them, and a missing one
is reported the same way, ``sparsenet: error: <path>: no such file or directory``
(``FileNotFoundError`` worded by :func:`sparsenet.cli.main.one_line`).

>>> require_paths(__file__, None)
>>> require_paths("no/such.svm")
Traceback (most recent call last):
...
FileNotFoundError: [Errno 2] no such file or directory: 'no/such.svm'
"""
import os

__all__ = ["require_paths", "NOT_FOUND"]

#: The wording of a missing path, after the path.
NOT_FOUND = "no such file or directory"


def require_paths(*paths):
    """Raise ``FileNotFoundError`` for the first of ``paths`` (None skipped) that does not
    exist."""
    for path in paths:
        if path is not None and not os.path.exists(path):
            raise FileNotFoundError(2, NOT_FOUND, os.fspath(path))
