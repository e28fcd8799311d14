"""``python -m sparsenet``: the ``sparsenet`` command without the console script."""
import sys

from .cli.main import program

if __name__ == "__main__":
    sys.exit(program())
