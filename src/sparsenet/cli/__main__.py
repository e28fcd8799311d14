"""``python -m sparsenet.cli``: the ``sparsenet`` command without the console script."""
import sys

from .main import program

if __name__ == "__main__":
    sys.exit(program())
