"""The README's examples run and print what their comments say."""
import contextlib
import io
import pathlib
import re

import sparsenet as mx

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_examples_run_and_print_what_they_say():
    blocks = _blocks()
    assert len(blocks) == 2
    previous = mx.config.get_storage_fallback()
    out = io.StringIO()
    scope = {}
    try:
        with contextlib.redirect_stdout(out):
            for code in blocks:
                exec(compile(code, str(README), "exec"), scope)
    finally:
        mx.config.set_storage_fallback(previous)
    lines = out.getvalue().splitlines()
    assert lines[0] == "row_sparse [0 1 2]"          # dot(csr.T, dense) rows: 0, 1, 2
    assert lines[1] == "row_sparse default"
    assert "exp" in out.getvalue()                    # the fallback error names the operator
    assert lines[-1] == "row_sparse"                  # SparseDense weight gradient
    # the example's numbers, against NumPy on the dense matrix
    x = scope["x"].asnumpy()
    assert (scope["y"].asnumpy() == x @ scope["w"].asnumpy()).all()
    assert (scope["g"].asnumpy() == x.T @ (mx.nd.ones((3, 2)).asnumpy())).all()
