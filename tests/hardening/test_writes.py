"""Issue 19, items 8 and 12: a write that runs out of room reports OSError naming the file and
keeps the old one; a checkpoint whose parameters are bad writes nothing."""
import os
import subprocess
import sys
import textwrap

import pytest

import sparsenet as mx

_FILL = textwrap.dedent("""
    import resource, signal, sys, sparsenet as mx
    path, fmt = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)      # writes past the limit fail (EFBIG)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100000, 100000))
    try:
        mx.nd.save(path, {'a': mx.nd.ones((100000,))}, format=fmt)
    except OSError as e:
        print(e.errno, e.filename, e.strerror)
""")


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE / SIGXFSZ are Linux's")
@pytest.mark.parametrize("fmt", ["mxnet", "sparsenet"])
def test_a_write_without_room_names_the_file_and_keeps_the_old_one(tmp_path, fmt):
    path = str(tmp_path / "x.params")
    mx.nd.save(path, {'a': mx.nd.ones((10,))}, format=fmt)
    out = subprocess.run([sys.executable, "-c", _FILL, path, fmt], capture_output=True,
                         text=True, timeout=120)
    code, name, message = out.stdout.strip().split(" ", 2)
    # the OS says EFBIG for our writer; torch's archive writer only says "unexpected pos"
    assert int(code) in (27, 5) and name == path and "previous file" in message, out.stderr
    assert mx.nd.load(path)['a'].shape == (10,)
    assert os.listdir(tmp_path) == ["x.params"]  # no temporary file left behind


def test_checkpoint_with_bad_params_writes_nothing(tmp_path):
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 1, mx.sym.var('w') * 2, {'w': mx.nd.ones((1,))}, {})
    before = open(prefix + "-symbol.json").read()
    with pytest.raises(mx.MXNetError, match="expected NDArray values, got str for 'arg:w'"):
        mx.model.save_checkpoint(prefix, 2, mx.sym.var('w') * 3, {'w': 'oops'}, {})
    assert open(prefix + "-symbol.json").read() == before
    assert sorted(os.listdir(tmp_path)) == ["net-0001.params", "net-symbol.json"]
