"""Make the shared helpers of the optimizer tests importable (``import optim_helpers``)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
