"""MXNet 1.9.1's four sparse example programs (``example/sparse/``), as tests.

Each ``*_program.py`` module is our own program making the same ``mx`` calls in
the same order as MXNet's (model, iterators, Module calls, custom operator and
metric, kvstore). Each says ``import sparsenet as mx``; ``run_mxnet.py`` runs the
very same file under MXNet 1.9.1 by making the name ``sparsenet`` resolve to
``mxnet`` in MXNet's interpreter. ``datagen.py`` writes small deterministic
stand-in data files in each program's format.
"""
