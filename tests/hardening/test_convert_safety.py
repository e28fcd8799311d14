"""Issue 32, item 1: ``sparsenet convert`` checks every array it reads from a file or a foreign
object (SciPy ``.npz``, ``.pt``, ``.params``) before any SciPy, NumPy or torch routine touches
it, and writes only what the reader of the target format accepts.

A crafted ``.npz`` used to make SciPy's ``toarray`` write outside its heap buffer (a wrong
CSV, a glibc abort or a segfault): every conversion of a crafted file runs in a child
process, so a crash fails the test instead of killing the run. Expected values come from
NumPy (``np.add.at`` over the entries), scikit-learn's LibSVM reader, ``numpy.loadtxt`` and
``torch.load``, never from convert's own reader.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse
import torch
from sklearn.datasets import load_svmlight_file

import sparsenet as mx
from sparsenet.cli.main import main

OUTPUTS = ("out.csv", "out.svm", "out.npz")


_RUNNER = textwrap.dedent("""
    import contextlib, io, json, sys, traceback
    from sparsenet.cli.main import main
    for argv in json.loads(sys.argv[1]):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(argv)
            except BaseException:  # an escape is a finding: report it as a traceback
                traceback.print_exc()
                code = "escaped"
        print(json.dumps([argv, code, err.getvalue()]), flush=True)
""")


def _children(runs, cwd, timeout=600):
    """Run ``sparsenet`` once per argv in ``runs``, all in ONE child process (a crash fails
    the calling test, never pytest): ``{tuple(argv): (returncode, stderr)}``; an argv whose
    run killed the child gets the child's (negative) status."""
    r = subprocess.run([sys.executable, "-c", _RUNNER, json.dumps(runs)], cwd=cwd,
                       capture_output=True, text=True, timeout=timeout)
    out = {}
    for line in r.stdout.splitlines():
        argv, code, err = json.loads(line)
        out[tuple(argv)] = (code, err)
    for argv in runs:
        out.setdefault(tuple(argv), (r.returncode, r.stderr[-2000:]))
    return out


def _refused(code, err, path, fragment):
    assert code == 1, f"status {code} (negative: killed by a signal), stderr:\n{err}"
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith(f"sparsenet: error: {path}"), err
    assert fragment in err, err


def _csr_npz(path, indices, indptr, shape, data=None, label=None, **extra):
    n = len(indices)
    arrays = dict(data=np.arange(1, n + 1, dtype=np.float32) if data is None else data,
                  indices=np.asarray(indices, np.int32), indptr=np.asarray(indptr, np.int32),
                  shape=np.asarray(shape, np.int64), format=b"csr")
    if label is not None:
        arrays["label"] = label
    arrays.update(extra)
    np.savez(path, **arrays)


# name -> (arrays for _csr_npz, a fragment of the error)
CRAFTED_CSR = {
    "column past shape": (dict(indices=[0, 1000000], indptr=[0, 1, 2], shape=[2, 3]),
                          "'indices': column index 1000000 at position 1 is out of range [0, 3)"),
    "column just past": (dict(indices=[0, 3], indptr=[0, 1, 2], shape=[2, 3]),
                         "column index 3 at position 1 is out of range [0, 3)"),
    "negative column": (dict(indices=[-7, 1], indptr=[0, 1, 2], shape=[2, 3]),
                        "column index -7 at position 0 is out of range"),
    "indptr backwards": (dict(indices=[0, 1], indptr=[0, 2, 1], shape=[2, 3]),
                         "'indptr': must never decrease"),
    "indptr not from 0": (dict(indices=[0, 1], indptr=[1, 1, 2], shape=[2, 3]),
                          "'indptr': must start at 0, got 1"),
    "indptr past data": (dict(indices=[0, 1], indptr=[0, 1, 9], shape=[2, 3]),
                         "'indptr': ends at 9, past the 2 stored indices"),
    "indptr too short": (dict(indices=[0, 1], indptr=[0, 2], shape=[2, 3]),
                         "'indptr': has 2 entries; the shape needs 3"),
    "data too short": (dict(indices=[0, 1], indptr=[0, 1, 2], shape=[2, 3],
                            data=np.ones(1, np.float32)), "'data': has shape (1,)"),
    "negative shape": (dict(indices=[], indptr=[0], shape=[0, -4]),
                       "'shape': expected two non-negative integers, got (0, -4)"),
    "3-d shape": (dict(indices=[], indptr=[0], shape=[0, 1, 2]), "'shape': expected two "),
    "float indices": (dict(indices=[0], indptr=[0, 1], shape=[1, 3],
                           ), "'indices': expected a 1-D array of integers"),
    "complex data": (dict(indices=[0], indptr=[0, 1], shape=[1, 3],
                          data=np.array([1 + 2j], np.complex64)),
                     "'data': expected real numbers (float, integer or bool), got dtype complex64"),
    "text data": (dict(indices=[0], indptr=[0, 1], shape=[1, 3], data=np.array(["a"])),
                  "'data': expected real numbers"),
    "huge float64": (dict(indices=[0], indptr=[0, 1], shape=[1, 3], data=np.array([1e300])),
                     "'data': the value 1e+300 at position 0 is too large for float32"),
    "complex label": (dict(indices=[0], indptr=[0, 1], shape=[1, 3],
                           label=np.array([1j], np.complex128)), "'label': expected real"),
    "label per row missing": (dict(indices=[0], indptr=[0, 1], shape=[1, 3],
                                   label=np.zeros(3, np.float32)),
                              "'label': has shape (3,), expected (1,)"),
    "format dia": (dict(indices=[0], indptr=[0, 1], shape=[1, 3], format=b"dia"),
                   "'format': the sparse format 'dia' is not one of csr, csc, coo"),
}


CRAFTED_OTHER = {
    "coo row past shape": ("coo", dict(row=np.array([0, 5]), col=np.array([0, 1])),
                           "'row': row index 5 at position 1 is out of range [0, 2)"),
    "coo column past shape": ("coo", dict(row=np.array([0, 1]), col=np.array([0, 3000000])),
                              "'col': column index 3000000 at position 1 is out of range [0, 3)"),
    "coo coords past shape": ("coo", dict(coords=np.array([[0, 1], [0, 99]])),
                              "'coords': column index 99 at position 1 is out of range [0, 3)"),
    "csc row past shape": ("csc", dict(indices=np.array([0, 40000]),
                                       indptr=np.array([0, 1, 2, 2])),
                           "'indices': row index 40000 at position 1 is out of range [0, 2)"),
}

NOT_NPZ = {
    "not a zip": "not a scipy.sparse .npz file",
    "a broken zip": "not a scipy.sparse .npz file",
    "a single .npy array": "a single NumPy array",
    "pickled objects": "not a scipy.sparse .npz file",
}


def _write_not_npz(path, case):
    if case == "not a zip":
        path.write_bytes(b"not a zip at all")
    elif case == "a broken zip":
        path.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    elif case == "a single .npy array":
        with open(path, "wb") as f:
            np.save(f, np.arange(3))
    else:
        np.savez(path, data=np.array([object()], dtype=object), indices=np.array([0]),
                 indptr=np.array([0, 1]), shape=np.array([1, 1]), format=b"csr")


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    """Every crafted .npz and .pt converted to every output, in one child process:
    ``(folder, {(kind, case): (input name, {output: (status, stderr)})})``."""
    folder = tmp_path_factory.mktemp("crafted")
    inputs = {}
    for i, (case, (arrays, _)) in enumerate(sorted(CRAFTED_CSR.items())):
        path = folder / f"csr{i}.npz"
        if case == "float indices":  # _csr_npz casts indices: written by hand
            np.savez(path, data=np.ones(1, np.float32), indices=np.array([0.5]),
                     indptr=np.array([0, 1]), shape=np.array([1, 3]), format=b"csr")
        else:
            _csr_npz(path, **arrays)
        inputs["npz", case] = (path.name, OUTPUTS)
    for i, (case, (fmt, arrays, _)) in enumerate(sorted(CRAFTED_OTHER.items())):
        path = folder / f"other{i}.npz"
        np.savez(path, data=np.ones(2, np.float32), shape=np.array([2, 3]),
                 format=fmt.encode(), **arrays)
        inputs["npz", case] = (path.name, OUTPUTS)
    for i, case in enumerate(sorted(NOT_NPZ)):
        path = folder / f"not{i}.npz"
        _write_not_npz(path, case)
        inputs["npz", case] = (path.name, OUTPUTS)
    for i, (case, (tensor, _)) in enumerate(sorted(_bad_tensors().items())):
        path = folder / f"in{i}.pt"
        torch.save({"w": tensor}, path)
        inputs["pt", case] = (path.name, (f"o{i}.params", f"o{i}.pt"))
    runs = [["convert", src, f"{src}.{out}"] for src, outs in inputs.values() for out in outs]
    results = _children(runs, folder)
    return folder, {case: (src, {f"{src}.{out}": results[("convert", src, f"{src}.{out}")]
                                 for out in outs})
                    for case, (src, outs) in inputs.items()}


def _check_refused(crafted, case, fragment, kind="npz"):
    folder, results = crafted
    src, outputs = results[kind, case]
    for out, (code, err) in outputs.items():
        _refused(code, err, src, fragment)
        assert not (folder / out).exists(), (case, out)
    assert not any(n.endswith(".tmp") for n in os.listdir(folder))  # nothing left behind


@pytest.mark.parametrize("case", sorted(CRAFTED_CSR))
def test_a_crafted_csr_npz_is_refused(crafted, case):
    _check_refused(crafted, case, CRAFTED_CSR[case][1])


@pytest.mark.parametrize("case", sorted(CRAFTED_OTHER))
def test_a_crafted_coo_or_csc_npz_is_refused(crafted, case):
    _check_refused(crafted, case, CRAFTED_OTHER[case][2])


@pytest.mark.parametrize("case", sorted(NOT_NPZ))
def test_a_file_that_is_not_an_npz_is_refused(crafted, case):
    _check_refused(crafted, case, NOT_NPZ[case])


def _dense_of(data, rows, cols, shape):
    """The dense float32 table of COO entries (duplicates summed), by NumPy alone."""
    out = np.zeros(shape, np.float32)
    np.add.at(out, (np.asarray(rows), np.asarray(cols)), np.asarray(data).astype(np.float32))
    return out


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bool", "int8", "uint8",
                                   "int32", "int64", "uint64"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64", "uint16"])
def test_unusual_npz_dtypes_convert_exactly(tmp_path, capsys, dtype, index_dtype):
    # unsorted columns and a repeated entry in row 0: SciPy's meaning is their sum
    rows, cols = [0, 0, 0, 2], [2, 0, 2, 1]
    data = np.array([1, 3, 1, 1], dtype=dtype)
    np.savez(tmp_path / "x.npz", data=data, indices=np.array(cols, index_dtype),
             indptr=np.array([0, 3, 3, 4], index_dtype), shape=np.array([3, 4]),
             format=b"csr", label=np.array([1, 0, 2], dtype))
    want = _dense_of(data, rows, cols, (3, 4))
    want_label = np.array([1, 0, 2], dtype).astype(np.float32)
    for out in OUTPUTS:
        assert main(["convert", str(tmp_path / "x.npz"), str(tmp_path / out)]) == 0, \
            capsys.readouterr().err
    x, y = load_svmlight_file(str(tmp_path / "out.svm"), n_features=4, zero_based=True)
    np.testing.assert_array_equal(x.toarray(), want)
    np.testing.assert_array_equal(y, want_label)
    table = np.loadtxt(tmp_path / "out.csv", delimiter=",", ndmin=2)
    np.testing.assert_array_equal(table[:, 1:], want)
    np.testing.assert_array_equal(table[:, 0], want_label)
    np.testing.assert_array_equal(scipy.sparse.load_npz(tmp_path / "out.npz").toarray(), want)


def test_write_checks_a_foreign_matrix_in_a_child(tmp_path):
    """``convert.write`` of a SciPy matrix whose parts were broken after construction (SciPy's
    constructor checks no index range) raises SparseFormatError and writes nothing."""
    script = textwrap.dedent("""
        import sys, numpy as np, scipy.sparse, sparsenet as mx
        from sparsenet.cli import convert
        from sparsenet.cli.main import main
        m = scipy.sparse.csr_matrix((np.ones(2, np.float32), np.array([0, 2]),
                                     np.array([0, 1, 2])), shape=(2, 3))
        m.indices[1] = 500000
        c = scipy.sparse.coo_matrix(np.eye(2, dtype=np.float32))
        c.row[0] = 70000
        for matrix in (m, c):
            for out in ("o.csv", "o.svm", "o.npz"):
                try:
                    convert.write(out, matrix, np.zeros(matrix.shape[0]))
                except mx.base.SparseFormatError as e:
                    print(type(e).__name__, e)
                else:
                    print("WROTE", out)
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == ["SparseFormatError csr: 'indices': column index 500000 at position 1 "
                     "is out of range [0, 3)"] * 3 + \
        ["SparseFormatError csr: 'row': row index 70000 at position 0 is out of range "
         "[0, 2)"] * 3
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- model files (.pt/.params)

def _bad_tensors():
    unsafe = dict(check_invariants=False)
    return {
        "complex dense": (torch.ones(2, 2, dtype=torch.complex64), "dtype complex64 is not one"),
        "complex row_sparse": (torch.ones(3, 2, dtype=torch.complex128).to_sparse(1),
                               "dtype complex128"),
        "complex csr": (torch.ones(2, 2, dtype=torch.complex64).to_sparse_csr(),
                        "dtype complex64"),
        "uint16": (torch.ones(3, dtype=torch.uint16), "dtype uint16"),
        "float8": (torch.ones(3).to(torch.float8_e4m3fn), "dtype float8_e4m3fn"),
        "coo row past shape": (torch.sparse_coo_tensor(torch.tensor([[5]]), torch.ones(1, 2),
                                                       (3, 2), **unsafe),
                               "COO index 5 (dimension 0, entry 0) is out of range [0, 3)"),
        "coo negative row": (torch.sparse_coo_tensor(torch.tensor([[-1]]), torch.ones(1, 2),
                                                     (3, 2), **unsafe), "COO index -1"),
        "coo marked coalesced, unsorted": (
            torch.sparse_coo_tensor(torch.tensor([[2, 0]]), torch.ones(2, 2), (3, 2),
                                    is_coalesced=True, **unsafe), "unsorted row index 0"),
        "2-d coo column past shape": (
            torch.sparse_coo_tensor(torch.tensor([[0], [7]]), torch.ones(1), (3, 2), **unsafe),
            "COO index 7 (dimension 1, entry 0) is out of range [0, 2)"),
        "3-d coo": (torch.ones(2, 2, 2).to_sparse(2), "sparse_dim=2; expected sparse_dim 1"),
        "csr column past shape": (
            torch.sparse_csr_tensor(torch.tensor([0, 1, 1, 2]), torch.tensor([1, 9]),
                                    torch.ones(2), (3, 2), **unsafe),
            "column index 9 at position 1 (row 2) is out of range [0, 2)"),
        "csc layout": (torch.ones(2, 2).to_sparse_csc(), "layout torch.sparse_csc"),
    }


@pytest.mark.parametrize("case", sorted(_bad_tensors()))
def test_a_crafted_pt_file_is_refused(crafted, case):
    """To .params and to .pt: status 1, one line naming the file and the tensor, nothing
    written (the old code wrote a .params that nd.load refused, with status 0, or escaped as
    ``KeyError: torch.complex64``)."""
    _check_refused(crafted, case, _bad_tensors()[case][1], "pt")
    src, outputs = crafted[1]["pt", case]
    for _, err in outputs.values():
        assert err.startswith(f"sparsenet: error: {src}: tensor 'w': "), err


_GOOD = {
    "float16 dense": torch.arange(6, dtype=torch.float16).reshape(2, 3),
    "bfloat16 dense": torch.arange(6, dtype=torch.bfloat16).reshape(2, 3),
    "bool dense": torch.tensor([True, False, True]),
    "int8 dense": torch.tensor([-3, 0, 7], dtype=torch.int8),
    "int64 0-d": torch.tensor(-5, dtype=torch.int64),
    "float64 transposed": torch.arange(6, dtype=torch.float64).reshape(2, 3).t(),
    "int32 row_sparse": torch.tensor([[0, 0], [1, 2], [0, 0]], dtype=torch.int32).to_sparse(1),
    "bool row_sparse": torch.tensor([[0, 0], [1, 0]], dtype=torch.bool).to_sparse(1),
    "float16 row_sparse 3-d": torch.ones(3, 2, 2, dtype=torch.float16).to_sparse(1),
    "uncoalesced row_sparse": torch.sparse_coo_tensor(torch.tensor([[2, 0, 2]]),
                                                      torch.ones(3, 2), (4, 2)),
    "empty row_sparse": torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.long),
                                                torch.zeros(0, 2), (3, 2)),
    "int64 2-d coo": torch.tensor([[0, 4], [5, 0]], dtype=torch.int64).to_sparse(),
    "float16 csr": torch.tensor([[0, 1.5], [2, 0]], dtype=torch.float16).to_sparse_csr(),
    "int32-indexed csr": torch.sparse_csr_tensor(torch.tensor([0, 1, 1, 2], dtype=torch.int32),
                                                 torch.tensor([1, 0], dtype=torch.int32),
                                                 torch.tensor([4.0, 5.0]), (3, 2)),
}


def test_unusual_pt_dtypes_round_trip(tmp_path, capsys):
    """Every tensor of a dtype and layout an MXNet file holds goes .pt -> .params -> .pt with
    its values, dtype and storage kind (each read back by nd.load and torch.load)."""
    torch.save(_GOOD, tmp_path / "in.pt")
    assert main(["convert", str(tmp_path / "in.pt"), str(tmp_path / "m.params")]) == 0, \
        capsys.readouterr().err
    assert main(["convert", str(tmp_path / "m.params"), str(tmp_path / "back.pt")]) == 0, \
        capsys.readouterr().err
    loaded = mx.nd.load(str(tmp_path / "m.params"))
    back = torch.load(tmp_path / "back.pt", weights_only=True)
    assert sorted(loaded) == sorted(back) == sorted(_GOOD)
    for name, t in _GOOD.items():
        want = t.to_dense() if t.layout != torch.strided else t
        got = back[name]
        assert got.dtype == t.dtype, name
        assert (got.layout == torch.strided) == (t.layout == torch.strided), name
        assert torch.equal(got.to_dense() if got.layout != torch.strided else got, want), name
        stype = {torch.strided: "default", torch.sparse_csr: "csr"}.get(
            t.layout, "row_sparse" if t.layout == torch.sparse_coo and t.sparse_dim() == 1
            else "csr")
        assert loaded[name].stype == stype, name


def test_convert_output_always_loads_in_a_child(tmp_path):
    """The round trip property over many mutated inputs, in a child process (a crash fails
    the test): whatever convert writes, the reader of the target format loads with the
    values NumPy computes from the input; otherwise convert refuses with status 1."""
    r = subprocess.run([sys.executable, "-c", _PROPERTY, str(tmp_path)], capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, (r.returncode, r.stdout[-3000:], r.stderr[-3000:])
    assert "examples ok" in r.stdout, r.stdout


_PROPERTY = textwrap.dedent('''
    import contextlib, io, os, sys
    import numpy as np, scipy.sparse
    from hypothesis import given, settings, strategies as st, HealthCheck
    from sklearn.datasets import load_svmlight_file
    from sparsenet.cli.main import main

    folder = sys.argv[1]
    MUTATIONS = ["none", "none", "col_past", "col_negative", "indptr_backwards",
                 "indptr_short", "data_short", "complex", "label_long", "shape_3d"]
    count = [0]

    def run(*argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["convert", *argv])
        return code, err.getvalue()

    @settings(max_examples=120, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 5), st.integers(1, 6), st.data(), st.sampled_from(MUTATIONS),
           st.sampled_from(["float32", "float64", "float16", "int16", "bool", "uint8"]))
    def check(rows, cols, draw, mutation, dtype):
        nnz_per_row = [draw.draw(st.integers(0, 4)) for _ in range(rows)]
        indptr = np.concatenate([[0], np.cumsum(nnz_per_row)]).astype(np.int64)
        nnz = int(indptr[-1])
        indices = np.array([draw.draw(st.integers(0, cols - 1)) for _ in range(nnz)], np.int64)
        data = np.array([draw.draw(st.integers(0, 3)) for _ in range(nnz)]).astype(dtype)
        label = np.arange(rows, dtype=np.float32)
        shape = np.array([rows, cols])
        row_of = np.repeat(np.arange(rows), nnz_per_row)
        valid = True
        if mutation == "col_past" and nnz:
            indices[draw.draw(st.integers(0, nnz - 1))] = cols + draw.draw(
                st.sampled_from([0, 1, 10**6, 2**31 - 1 - cols]))
            valid = False
        elif mutation == "col_negative" and nnz:
            indices[draw.draw(st.integers(0, nnz - 1))] = -draw.draw(st.integers(1, 10**6))
            valid = False
        elif mutation == "indptr_backwards" and rows >= 2 and nnz:
            r = draw.draw(st.integers(1, rows - 1))
            indptr[r] = indptr[r + 1] + 1
            valid = False
        elif mutation == "indptr_short":
            indptr = indptr[:-1]
            valid = False
        elif mutation == "data_short" and nnz:
            data = data[:-1]
            valid = False
        elif mutation == "complex":
            data = data.astype(np.complex64)
            valid = False
        elif mutation == "label_long":
            label = np.zeros(rows + 1, np.float32)
            valid = False
        elif mutation == "shape_3d":
            shape = np.array([rows, cols, 1])
            valid = False
        src = os.path.join(folder, "in.npz")
        np.savez(src, data=data, indices=indices, indptr=indptr, shape=shape,
                 format=b"csr", label=label)
        want = np.zeros((rows, cols), np.float32)
        if valid:
            np.add.at(want, (row_of, indices), data.astype(np.float32))
        for suffix in ("csv", "svm", "npz"):
            out = os.path.join(folder, "out." + suffix)
            if os.path.exists(out):
                os.unlink(out)
            code, err = run(src, out)
            if not valid:
                assert code == 1 and err.startswith("sparsenet: error: "), (mutation, err)
                assert not os.path.exists(out), mutation
                continue
            assert code == 0, err
            if suffix == "csv":
                table = np.loadtxt(out, delimiter=",", ndmin=2).reshape(rows, cols + 1)
                got, got_label = table[:, 1:], table[:, 0]
            elif suffix == "svm":
                x, got_label = load_svmlight_file(out, n_features=cols, zero_based=True)
                got = x.toarray()
            else:
                got = scipy.sparse.load_npz(out).toarray()
                got_label = np.load(out)["label"]
            assert np.array_equal(got, want), (suffix, got, want)
            assert np.array_equal(got_label, label), suffix
        count[0] += 1

    check()
    print(count[0], "examples ok")
''')


def test_write_leaves_the_callers_matrix_alone(tmp_path):
    """``convert.write`` sums repeated entries in its own copy, not in the caller's arrays."""
    from sparsenet.cli import convert
    data = np.array([1.0, 2.0, 5.0], np.float32)
    indices = np.array([2, 0, 2], np.int64)
    indptr = np.array([0, 3], np.int64)
    m = scipy.sparse.csr_matrix((data, indices, indptr), shape=(1, 3))
    convert.write(str(tmp_path / "o.npz"), m, [1.0])
    assert m.indices.tolist() == [2, 0, 2] and m.data.tolist() == [1.0, 2.0, 5.0]
    assert scipy.sparse.load_npz(tmp_path / "o.npz").toarray().tolist() == [[2.0, 0.0, 6.0]]


def test_params_archives_and_saves_refuse_complex_values(tmp_path):
    """A sparsenet archive whose record holds complex values is refused on load (it used to
    load, then fail converting to .params with ``KeyError: torch.complex64``), and saving a
    complex array in MXNet's format is an InvalidArgumentTypeError that writes nothing."""
    record = {"stype": "default", "shape": [2], "dtype": "float32",
              "parts": [torch.ones(2, dtype=torch.complex64)]}
    torch.save({"format": "sparsenet.ndarray", "version": 1, "kind": "dict", "keys": ["w"],
                "arrays": [record]}, tmp_path / "c.nd")
    with pytest.raises(mx.base.FileFormatError, match=r"c\.nd: key 'w': the values' dtype "
                                                      r"torch\.complex64 is not one"):
        mx.nd.load(str(tmp_path / "c.nd"))
    array = mx.nd.from_torch(torch.ones(2, dtype=torch.complex64))
    with pytest.raises(mx.base.InvalidArgumentTypeError,
                       match="a complex64 array has no MXNet type flag"):
        mx.nd.save(str(tmp_path / "c.params"), [array])
    assert sorted(os.listdir(tmp_path)) == ["c.nd"]
