"""The one "file not found" of the ``sparsenet`` commands.

Every command checks the paths it was given before it reads them, and before it imports
torch (a subcommand module's ``check_inputs(args)``, called by
:func:`sparsenet.cli.main.main`), and a missing one is reported the same way,
``sparsenet: error: <path>: no such file or directory``, or for a model directory
``sparsenet: error: <path>: no such model directory`` (``FileNotFoundError`` worded by
:func:`sparsenet.cli.main.one_line`). This module imports no torch, NumPy or SciPy.

>>> require_paths(__file__, None)
>>> require_paths("no/such.svm")
Traceback (most recent call last):
...
FileNotFoundError: [Errno 2] no such file or directory: 'no/such.svm'
>>> require_model_dir("no/such/model")
Traceback (most recent call last):
...
FileNotFoundError: [Errno 2] no such model directory: 'no/such/model'
"""
import os

__all__ = ["require_paths", "require_model_dir", "require_model_and_data", "NOT_FOUND",
           "NO_MODEL_DIR"]

#: The wording of a missing path, after the path.
NOT_FOUND = "no such file or directory"

#: The wording of a model directory to read (MODEL_DIR, ``train --resume``'s ``--out``) that
#: is not a directory.
NO_MODEL_DIR = "no such model directory"


def require_paths(*paths):
    """Raise ``FileNotFoundError`` for the first of ``paths`` (None skipped) that does not
    exist."""
    for path in paths:
        if path is not None and not os.path.exists(path):
            raise FileNotFoundError(2, NOT_FOUND, os.fspath(path))


def require_model_dir(path):
    """Raise ``FileNotFoundError`` unless ``path`` is a directory (a model directory to
    read: ``eval``'s and ``predict``'s MODEL_DIR, ``train --resume``'s ``--out``)."""
    if not os.path.isdir(path):
        raise FileNotFoundError(2, NO_MODEL_DIR, os.fspath(path))


def require_model_and_data(args):
    """The ``check_inputs(args)`` of the commands that read a model directory and a data
    file (``eval``, ``predict``): a missing MODEL_DIR, then a missing DATA, raises
    ``FileNotFoundError``."""
    require_model_dir(args.model_dir)
    require_paths(args.data)
