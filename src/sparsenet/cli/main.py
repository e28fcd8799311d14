"""Entry point of the ``sparsenet`` console script: one argparse parser, one subparser
per subcommand module.

A subcommand is a module of :mod:`sparsenet.cli` with two functions,
``add_parser(subparsers)`` (adds and returns its subparser) and ``run(args)``
(does the work, returns the exit status); adding one is adding its module to
:data:`SUBCOMMANDS`.

>>> [module.__name__ for module in SUBCOMMANDS]
['sparsenet.cli.launch']
"""
import argparse
import sys

from . import launch

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

#: The subcommand modules, in the order ``sparsenet --help`` lists them.
SUBCOMMANDS = (launch,)


def build_parser():
    """The ``sparsenet`` argument parser with every subcommand of :data:`SUBCOMMANDS`.

    >>> args = build_parser().parse_args(["launch", "-n", "3", __file__, "--lr", "0.1"])
    >>> args.nproc, args.script_args
    (3, ['--lr', '0.1'])
    """
    parser = argparse.ArgumentParser(
        prog="sparsenet", description="sparsenet: MXNet's sparse NDArray system on PyTorch.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        sub = module.add_parser(subparsers)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv=None):
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the subcommand, return its exit status.

    Usage errors exit with status 2 through argparse, as every argparse program does.

    >>> try:
    ...     main(["launch", "-n", "0", "train.py"])   # argparse prints the error on stderr
    ... except SystemExit as exc:
    ...     print(exc.code)
    2
    """
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return args._run(args)


if __name__ == "__main__":
    sys.exit(main())
