"""The argparse types the subcommands share: a number, checked, or argparse's usage error.

>>> positive_int("3")
3
>>> positive_int("0")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: expected a positive integer, got '0'
"""
import argparse
import math

__all__ = ["number", "positive_int", "int_in", "non_negative_float", "positive_seconds",
           "port", "density"]


def number(convert, accept, expected, show_value=False):
    """An argparse type: ``convert(text)`` (``int`` or ``float``), refused with ``expected
    <what>, got '<text>'`` when it does not convert or ``accept(value)`` is false (with
    ``show_value``, a converted value is shown as the number: ``got -2``).

    >>> even = number(int, lambda v: v % 2 == 0, "an even integer")
    >>> even("4"), even.__doc__
    (4, 'expected an even integer')
    """
    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not accept(value):
            shown = value if show_value else repr(text)
            raise argparse.ArgumentTypeError(f"expected {expected}, got {shown}")
        return value
    parse.__doc__ = f"expected {expected}"
    parse.__name__ = expected.replace(" ", "_")  # argparse names the type in some errors
    return parse


positive_int = number(int, lambda v: v >= 1, "a positive integer")


def int_in(lo, hi):
    """An argparse type: an integer in ``[lo, hi]``.

    >>> int_in(1, 10)("11")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected an integer in [1, 10], got '11'
    """
    return number(int, lambda v: lo <= v <= hi, f"an integer in [{lo}, {hi}]")


non_negative_float = number(float, lambda v: 0 <= v < math.inf, "a non-negative number")
positive_seconds = number(float, lambda v: 0 < v < math.inf,
                          "a positive, finite number of seconds")
port = number(int, lambda v: 1 <= v <= 65535, "a TCP port in [1, 65535]")
density = number(float, lambda v: 0 < v <= 1, "a density in (0, 1]")
