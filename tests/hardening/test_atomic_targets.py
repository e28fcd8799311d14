"""Issue 32, items 6 and 12 (atomic writers): a destination that is not a regular file is never
replaced by one. A FIFO and a device node are written directly (``--out /dev/null`` as root
used to replace the system's node with a file); a symbolic link is written through, its target
replaced atomically in its own folder and the link kept; every error names the destination the
caller gave, never the temporary file.

No test here can harm the machine's ``/dev/null``: device nodes are made with ``os.mknod`` in
a temporary folder (skipped where that is not permitted), and the ``/dev/null`` tests replace
``tempfile.mkstemp`` and ``os.replace`` with guards that refuse to touch ``/dev``.
"""
import errno
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading

import numpy as np
import pytest

import sparsenet as mx
from sparsenet import atomic
from sparsenet.atomic import atomic_write
from sparsenet.cli.main import main
from tests.cli.libsvm_data import FEATURES, make_task


def _read_fifo_in_thread(path):
    got = []
    t = threading.Thread(target=lambda: got.append(open(path, "rb").read()), daemon=True)
    t.start()
    return t, got


def test_a_fifo_is_written_directly(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    t, got = _read_fifo_in_thread(fifo)
    atomic_write(fifo, lambda f: f.write(b"through the pipe"))
    t.join(30)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["pipe"]  # no temporary file


def test_nd_save_and_convert_to_a_fifo(tmp_path):
    fifo = tmp_path / "p.params"
    os.mkfifo(fifo)
    t, got = _read_fifo_in_thread(fifo)
    mx.nd.save(str(fifo), {"w": mx.nd.array([1.0, 2.0])})
    t.join(30)
    (tmp_path / "copy.params").write_bytes(got[0])
    np.testing.assert_array_equal(mx.nd.load(str(tmp_path / "copy.params"))["w"].asnumpy(),
                                  np.array([1.0, 2.0], np.float32))
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    src = tmp_path / "a.svm"
    src.write_text("1 0:2.5\n")
    out = tmp_path / "o.csv"
    os.mkfifo(out)
    t, got = _read_fifo_in_thread(out)
    assert main(["convert", str(src), str(out)]) == 0
    t.join(30)
    assert got == [b"1,2.5\n"] and stat.S_ISFIFO(os.stat(out).st_mode)


def _char_device(folder):
    """A character device equal to /dev/null (1, 3), made in ``folder``; skip if refused."""
    path = os.path.join(folder, "null")
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as e:
        pytest.skip(f"os.mknod of a character device is not permitted here: {e}")
    return path


def test_a_device_node_stays_a_device(tmp_path):
    dev = _char_device(str(tmp_path))
    before = os.stat(dev)
    atomic_write(dev, lambda f: f.write(b"discarded"))
    mx.nd.save(dev, [mx.nd.ones((3,))])
    after = os.stat(dev)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino
    assert os.listdir(tmp_path) == ["null"]


@pytest.fixture
def guarded_dev(monkeypatch):
    """Make the atomic writer's temporary-file path refuse to touch /dev: on code that would
    replace /dev/null, the test fails here instead of breaking the machine."""
    real_mkstemp, real_replace = tempfile.mkstemp, os.replace

    def mkstemp(*args, **kwargs):
        folder = kwargs.get("dir") or (args[2] if len(args) > 2 else None)
        if folder is not None and os.path.realpath(folder).startswith("/dev"):
            raise AssertionError(f"a temporary file would be made in {folder}")
        return real_mkstemp(*args, **kwargs)

    def replace(src, dst, *args, **kwargs):
        if os.path.realpath(os.fspath(dst)).startswith("/dev"):
            raise AssertionError(f"{dst} would be replaced by a regular file")
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(atomic.os, "replace", replace)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A small trained regression model and a data file for ``predict``."""
    folder = tmp_path_factory.mktemp("model")
    train, val, _ = make_task(folder, "regression", rows=200, seed=3)
    assert main(["train", train, "--features", str(FEATURES), "--out", str(folder / "m"),
                 "--model", "linear", "--epochs", "1", "--quiet"]) == 0
    return str(folder / "m"), val


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_dev_null_is_written_not_replaced(guarded_dev, model, capsys):
    before = os.stat("/dev/null")
    atomic_write("/dev/null", lambda f: f.write(b"x" * 1000))
    mx.nd.save("/dev/null", {"w": mx.nd.ones((2,))})
    assert main(["predict", *model, "--out", "/dev/null"]) == 0, capsys.readouterr().err
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino


def test_predict_out_to_a_fifo_a_device_and_a_symlink(model, tmp_path, capsys):
    model_dir, data = model
    assert main(["predict", model_dir, data, "--out", str(tmp_path / "ref.txt")]) == 0
    want = (tmp_path / "ref.txt").read_bytes()
    assert want.count(b"\n") == len(open(data).read().splitlines()) > 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    t, got = _read_fifo_in_thread(fifo)
    assert main(["predict", model_dir, data, "--out", str(fifo)]) == 0
    t.join(60)
    assert got == [want] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    os.symlink("ref.txt", tmp_path / "link.txt")
    (tmp_path / "ref.txt").write_bytes(b"stale")
    assert main(["predict", model_dir, data, "--out", str(tmp_path / "link.txt")]) == 0
    assert os.path.islink(tmp_path / "link.txt")
    assert (tmp_path / "ref.txt").read_bytes() == want
    dev = _char_device(str(tmp_path))
    assert main(["predict", model_dir, data, "--out", dev]) == 0
    assert stat.S_ISCHR(os.stat(dev).st_mode)
    capsys.readouterr()


def test_a_symlink_is_written_through(tmp_path):
    real_dir = tmp_path / "real"
    link_dir = tmp_path / "links"
    real_dir.mkdir()
    link_dir.mkdir()
    target = real_dir / "data.params"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    link = link_dir / "data.params"
    os.symlink(os.path.relpath(target, link_dir), link)
    mx.nd.save(str(link), {"w": mx.nd.array([3.0])})
    assert os.path.islink(link)
    assert os.readlink(link) == os.path.relpath(target, link_dir)
    assert mx.nd.load(str(target))["w"].asnumpy().tolist() == [3.0]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640  # the target's mode kept
    assert sorted(os.listdir(real_dir)) == ["data.params"]
    assert sorted(os.listdir(link_dir)) == ["data.params"]
    # a chain of links, and a link to a file not there yet
    os.symlink("data.params", link_dir / "chain")
    atomic_write(link_dir / "chain", lambda f: f.write(b"via chain"))
    assert target.read_bytes() == b"via chain" and os.path.islink(link_dir / "chain")
    os.symlink("../real/new.txt", link_dir / "dangling")
    atomic_write(link_dir / "dangling", lambda f: f.write(b"created"))
    assert (real_dir / "new.txt").read_bytes() == b"created"
    assert os.path.islink(link_dir / "dangling")


def test_errors_name_the_destination_not_the_temporary_file(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "x.params"
    with pytest.raises(FileNotFoundError) as e:
        mx.nd.save(str(missing), [mx.nd.ones((1,))])
    assert e.value.filename == str(missing) and ".tmp" not in str(e.value)
    assert e.value.errno == errno.ENOENT
    src = tmp_path / "a.svm"
    src.write_text("1 0:2.5\n")
    assert main(["convert", str(src), str(tmp_path / "no" / "o.npz")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"sparsenet: error: {tmp_path / 'no' / 'o.npz'}: No such file or "
                          "directory") and ".tmp" not in err, err
    with pytest.raises(IsADirectoryError) as e:
        atomic_write(tmp_path, lambda f: f.write(b"x"))
    assert e.value.filename == str(tmp_path)
    afile = tmp_path / "plain"
    afile.write_bytes(b"")
    with pytest.raises(NotADirectoryError) as e:
        atomic_write(afile / "x", lambda f: f.write(b"x"))
    assert e.value.filename == str(afile / "x")
    os.symlink("loop", tmp_path / "loop")
    with pytest.raises(OSError) as e:
        atomic_write(tmp_path / "loop", lambda f: f.write(b"x"))
    assert e.value.errno == errno.ELOOP and e.value.filename == str(tmp_path / "loop")


def test_a_failure_inside_the_temporary_file_names_the_destination(tmp_path, monkeypatch):
    """An error the OS reports against the temporary file (here: the rename refused) is
    re-raised with the same errno, naming the destination."""
    def refuse(src, dst):
        raise PermissionError(errno.EACCES, "Permission denied", src, dst)
    monkeypatch.setattr(atomic.os, "replace", refuse)
    path = tmp_path / "x.bin"
    with pytest.raises(PermissionError) as e:
        atomic_write(path, lambda f: f.write(b"x"))
    assert e.value.filename == str(path) and e.value.filename2 is None
    assert ".tmp" not in str(e.value)
    assert os.listdir(tmp_path) == []


_READ_ONLY = textwrap.dedent("""
    import os, sys
    from sparsenet.atomic import atomic_write  # before dropping privileges: the install
    os.setgid(65534)                            # may be unreadable to nobody
    os.setuid(65534)  # nobody: the folder's permissions now apply
    try:
        atomic_write(sys.argv[1], lambda f: f.write(b"x"))
    except PermissionError as e:
        print(e.filename)
        print(e)
""")


@pytest.mark.skipif(not hasattr(os, "setuid"), reason="POSIX only")
def test_a_read_only_folder_names_the_destination(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(folder, 0o555)
    path = str(folder / "out.txt")
    if os.getuid() == 0:  # root ignores the mode: drop to nobody in a child
        r = subprocess.run([sys.executable, "-c", _READ_ONLY, path], capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0 and "Operation not permitted" in r.stderr:
            pytest.skip("cannot drop privileges here")
        assert r.returncode == 0, r.stderr
        name, message = r.stdout.splitlines()
    else:
        with pytest.raises(PermissionError) as e:
            atomic_write(path, lambda f: f.write(b"x"))
        name, message = e.value.filename, str(e.value)
    assert name == path and ".tmp" not in message, message
    assert os.listdir(folder) == []
