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
import errno
import os
import stat
import tempfile

__all__ = ["atomic_write"]

_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _default_mode():
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _disk_full(folder):
    try:
        return os.statvfs(folder).f_bavail == 0
    except (OSError, AttributeError):
        return False


def _write_failure(error, path, folder):
    """An ``OSError`` naming ``path`` for a write that failed for lack of room (a full disk,
    a quota, a file-size limit), whether the OS said so or a writer library (torch's
    archive writer says ``unexpected pos``); None for other failures."""
    code = None
    if isinstance(error, OSError) and error.errno in _NO_ROOM:
        code = error.errno
    elif isinstance(error, RuntimeError):
        full = _disk_full(folder)
        if full or "unexpected pos" in str(error):
            code = errno.ENOSPC if full else errno.EIO
    if code is None:
        return None
    return OSError(code, f"{os.strerror(code)} while writing the file; the previous file, if "
                         f"any, is kept unchanged", path)


def atomic_write(path, write):
    """Write a file atomically: ``write(fileobj)`` fills it; ``path`` appears only when complete.

    A write that fails for lack of room (a full disk, a quota, a file-size limit) raises
    ``OSError`` with that errno, naming ``path``; the old file is kept.

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
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        failed = _write_failure(e, path, folder)
        if failed is not None:
            raise failed from e
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
