"""The main job (`make demo`): seed 000's "Sparse NDArrays with Gluon" walkthrough on sparsenet.

The walkthrough is ``sparsenet demo`` (:mod:`sparsenet.cli.demo`); this script runs it,
passing its arguments on (``python examples/demo.py --help``).
"""
import sys

from sparsenet.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["demo"] + sys.argv[1:]))
