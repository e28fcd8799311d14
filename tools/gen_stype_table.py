"""Write docs/stype_table.md from the operator registry (CI checks that it is current).

Usage: python tools/gen_stype_table.py [--check]
"""
import argparse
import pathlib
import sys

import sparsenet  # noqa: F401 - registers every operator
from sparsenet.ops.registry import stype_table

TARGET = pathlib.Path(__file__).resolve().parents[1] / "docs" / "stype_table.md"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the file differs from the registry instead of writing it")
    args = parser.parse_args(argv)
    text = stype_table()
    if args.check:
        current = TARGET.read_text() if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is stale: run python tools/gen_stype_table.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
