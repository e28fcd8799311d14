"""The ``sparsenet`` command line.

``sparsenet <subcommand> ...`` (or ``python -m sparsenet.cli <subcommand> ...``).
Each subcommand is one module of this package defining ``add_parser(subparsers)``
and ``run(args) -> int``, listed in :data:`sparsenet.cli.main.SUBCOMMANDS`.

>>> from sparsenet.cli.main import build_parser
>>> build_parser().parse_args(["launch", "-n", "2", __file__]).nproc
2
"""
