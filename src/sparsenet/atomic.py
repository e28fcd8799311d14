"""Atomic file writes: a crash never leaves a truncated file in place of the old one.

The data goes to a temporary file in the destination's folder, is flushed and
fsync'd, then ``os.replace`` swaps it in and the folder is fsync'd. The new file
keeps the mode of the file it replaces (or the umask default).

What the destination already is decides where the bytes go:

======================================  ==================================================
destination                             written
======================================  ==================================================
missing, or a regular file              atomically, through a temporary file
a symbolic link (to a file, or to a     through to the link's final target, replaced
missing one)                            atomically in the target's own folder; the link
                                        stays a link
a device node, a FIFO (named pipe)      directly (opened for writing, as ``>`` in a shell
                                        does): such a node cannot be replaced by a file
                                        without breaking what reads it (``/dev/null``)
a directory, a socket                   refused: ``IsADirectoryError`` / ``OSError``
======================================  ==================================================

Every ``OSError`` names the destination the caller gave, never the temporary file.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, 'x.bin')
>>> atomic_write(p, lambda f: f.write(b'hello'))
>>> open(p, 'rb').read()
b'hello'
>>> atomic_write(os.devnull, lambda f: f.write(b'gone'))   # /dev/null stays a device
>>> import stat; stat.S_ISCHR(os.stat(os.devnull).st_mode)
True
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


def _renamed(error, path, tmp, doing):
    """``error`` (an ``OSError`` about the temporary file ``tmp``, or about no file) as an
    ``OSError`` of the same errno (so the same subclass) naming ``path``; None when
    ``error`` is something else or already names another file."""
    if not isinstance(error, OSError) or error.errno is None:
        return None
    if error.filename not in (None, tmp, path) or error.filename2 not in (None, tmp, path):
        return None
    reason = error.strerror or os.strerror(error.errno)
    return OSError(error.errno, f"{reason} ({doing})", path)


def _reraise_named(error, shown, folder, written, doing):
    """Raise ``error`` (an ``OSError`` of writing ``written``) as the error naming ``shown``,
    the caller's path: a lack of room as :func:`_write_failure` words it, any other error
    with its errno kept (:func:`_renamed`), else as it is."""
    failed = _write_failure(error, shown, folder)
    if failed is not None:
        raise failed from error
    renamed = _renamed(error, shown, written, doing)
    if renamed is not None:
        raise renamed from error
    raise error


def _target(path):
    """The file ``path`` stands for: itself, or a symbolic link's final target."""
    if os.path.islink(path):
        return os.path.realpath(path)
    return path


def _write_directly(path, shown, write, mode_bits):
    """Write into an existing device node or FIFO ``path`` (no temporary file, no rename)."""
    if stat.S_ISSOCK(mode_bits):
        raise OSError(errno.ENXIO, "a socket, not a file: cannot write to it", shown)
    try:
        with open(path, "wb") as f:
            write(f)
            f.flush()
    except OSError as e:
        _reraise_named(e, shown, os.path.dirname(os.path.abspath(path)), path,
                       "writing to the device or pipe")


def atomic_write(path, write):
    """Write a file atomically: ``write(fileobj)`` fills it; ``path`` appears only when complete.

    A symbolic link is written through (its target is replaced, the link kept); a device
    node or a FIFO is written directly, as it cannot be swapped for a file (see the module's
    table). A write that fails for lack of room (a full disk, a quota, a file-size limit)
    raises ``OSError`` with that errno, naming ``path``; the old file is kept. Every other
    ``OSError`` of the write (a missing or read-only folder, a directory in the way) names
    ``path`` too.

    Parameters
    ----------
    path : str or os.PathLike
    write : callable
        Receives a binary file object.
    """
    shown = os.fspath(path)
    try:
        info = os.stat(shown)  # follows symbolic links (``/dev/stdout`` included)
    except FileNotFoundError:
        info = None
    except OSError as e:  # a symlink loop, a file where a folder should be, no permission
        raise OSError(e.errno, f"{e.strerror or os.strerror(e.errno)} (looking up the file)",
                      shown) from None
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a directory, not a file: cannot replace it",
                                shown)
    if info is not None and not stat.S_ISREG(info.st_mode):
        _write_directly(shown, shown, write, info.st_mode)
        return
    path = _target(shown)
    mode = stat.S_IMODE(info.st_mode) if info is not None else _default_mode()
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".",
                                   suffix=".tmp")
    except OSError as e:
        raise OSError(e.errno, f"{e.strerror or os.strerror(e.errno)} (creating a file in "
                               f"the folder {folder})", shown) from None
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
        _reraise_named(e, shown, folder, tmp, "writing the file")
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
