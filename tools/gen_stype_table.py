"""Write docs/stype_table.md from the operator registry (CI checks that it is current).

Usage: python tools/gen_stype_table.py [--check]
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # run as a script or not
import generated  # noqa: E402
import sparsenet  # noqa: F401 - registers every operator
from sparsenet.ops.registry import stype_table

TARGET = pathlib.Path(__file__).resolve().parents[1] / "docs" / "stype_table.md"


def main(argv=None):
    return generated.main(__doc__.splitlines()[0], TARGET, stype_table,
                          "python tools/gen_stype_table.py", argv=argv)


if __name__ == "__main__":
    sys.exit(main())
