"""What the generators of docs/ share: write the file, or with ``--check`` say whether it is
current (the Makefile's ``test`` target runs every generator with ``--check``)."""
import argparse
import sys


def main(description, target, render, command, argv=None):
    """Parse ``--check``; write ``render()`` to ``target``, or compare them.

    ``command`` is how to regenerate (named when the file is stale). Returns the exit status.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 if {target.name} is not what the generator writes, "
                             "instead of writing it")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = target.read_text() if target.exists() else ""
        if current != text:
            print(f"{target} is stale: run {command}", file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    print(f"wrote {target}")
    return 0
