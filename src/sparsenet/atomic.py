"""Atomic file writes: a crash never leaves a truncated file in place of the old one.

The data goes to a temporary file in the destination's folder, is flushed and
fsync'd, then ``os.replace`` swaps it in and the folder is fsync'd. The new file
keeps the mode of the file it replaces (or the umask default).

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, 'x.bin')
>>> atomic_write(p, lambda f: f.write(b'hello'))
>>> open(p, 'rb').read()
b'hello'
"""
import os
import stat
import tempfile

__all__ = ["atomic_write"]


def _default_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path, write):
    """Write a file atomically: ``write(fileobj)`` fills it; ``path`` appears only when complete.

    Parameters
    ----------
    path : str or os.PathLike
    write : callable
        Receives a binary file object.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = _default_mode()
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
