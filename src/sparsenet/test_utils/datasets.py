"""Download test data (``http(s)://`` or ``file://``) and unpack it.

A file that already exists is not fetched again, so every function works
offline once its files are in place; a failed fetch raises
:class:`DataFileError` naming the URL, the destination and the reason, and
leaves no partial file behind.

>>> import os, tempfile, zipfile
>>> d = tempfile.mkdtemp()
>>> with zipfile.ZipFile(os.path.join(d, 'src.zip'), 'w') as z:
...     z.writestr('hello.txt', 'hi')
>>> get_zip_data(os.path.join(d, 'out'), 'file://' + os.path.join(d, 'src.zip'), 'src.zip')
>>> open(os.path.join(d, 'out', 'hello.txt')).read()
'hi'
"""
import bz2
import gzip
import hashlib
import logging
import os
import shutil
import struct
import tempfile
import urllib.error
import urllib.request
import zipfile

import numpy as np

from ..base import SparsenetError
from ..io.ndarray_iter import NDArrayIter

__all__ = ["DataFileError", "ChecksumError", "check_sha1", "download", "download_model",
           "get_mnist", "get_mnist_pkl", "get_mnist_ubyte", "get_cifar10", "get_mnist_iterator",
           "get_zip_data", "get_bz2_data", "get_im2rec_path"]

_MNIST_URL = "http://data.mxnet.io/data/mnist/"
_MODEL_URL = "http://data.mxnet.io/models/"


class DataFileError(SparsenetError, OSError):
    """A data file could not be downloaded, or a tool file was not found."""


class ChecksumError(DataFileError, ValueError):
    """A downloaded file's SHA-1 differs from the one given (``sha1_hash``)."""


def check_sha1(filename, sha1_hash):
    """Whether the SHA-1 of the file ``filename`` is ``sha1_hash`` (hex, any case).

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), 'f')
    >>> with open(p, 'wb') as f:
    ...     _ = f.write(b'abc')
    >>> check_sha1(p, 'a9993e364706816aba3e25717850c26c9cd0d89d')
    True
    """
    return _sha1_of(filename) == str(sha1_hash).lower()


def _sha1_of(filename):
    digest = hashlib.sha1()
    with open(filename, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fetch(url, fname, sha1_hash=None):
    """Copy ``url`` to ``fname`` through a temporary file in the same directory, checked
    against ``sha1_hash`` (when given) before it takes the final name."""
    folder = os.path.dirname(os.path.abspath(fname))
    fd, tmp = tempfile.mkstemp(prefix=".download-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as src:
            status = getattr(src, "status", None)
            if status not in (None, 200):
                raise urllib.error.HTTPError(url, status, "unexpected status", None, None)
            shutil.copyfileobj(src, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        if sha1_hash is not None:
            got = _sha1_of(tmp)
            if got != str(sha1_hash).lower():
                raise ChecksumError(f"the downloaded content has SHA-1 {got}, expected "
                                    f"{sha1_hash} (an outdated URL or an incomplete download)")
        os.chmod(tmp, 0o644)
        os.replace(tmp, fname)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def download(url, fname=None, dirname=None, overwrite=False, retries=5, *, sha1_hash=None):
    """Download ``url`` to a file and return its path (an existing file is kept).

    Parameters
    ----------
    url : str
        ``http://``, ``https://`` or ``file://`` URL.
    fname : str, optional
        File name (the last part of the URL by default).
    dirname : str, optional
        Directory to put ``fname`` in (created if missing); by default the
        directory part of ``fname``.
    overwrite : bool
        Download even if the file exists.
    retries : int
        Attempts before giving up (at least one attempt is made).
    sha1_hash : str, optional
        Expected SHA-1 (hex) of the content (keyword only; MXNet's
        ``gluon.utils.download`` has it). An existing file with another hash
        is downloaded again; a download with another hash counts as a failed
        attempt and never takes the final name.

    Returns
    -------
    str
        The path of the file.

    Raises
    ------
    DataFileError
        When every attempt failed (no network, missing file, HTTP error,
        checksum mismatch): the message names the URL, the destination and the
        last reason. The file is written to a temporary name, synced and
        renamed, so a failed or interrupted download leaves no partial file.

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> src = os.path.join(d, 'src.txt')
    >>> with open(src, 'w') as f:
    ...     _ = f.write('abc')
    >>> path = download('file://' + src, dirname=os.path.join(d, 'out'),
    ...                 sha1_hash='a9993e364706816aba3e25717850c26c9cd0d89d')
    >>> open(path).read()
    'abc'
    """
    if retries < 0:
        raise DataFileError(f"download: retries must be >= 0, got {retries}")
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname:
        os.makedirs(dirname, exist_ok=True)
    if not overwrite and os.path.exists(fname) and (sha1_hash is None
                                                    or check_sha1(fname, sha1_hash)):
        logging.info("%s exists, skipping download", fname)
        return fname
    attempts = max(retries, 1)
    for attempt in range(attempts):
        try:
            _fetch(url, fname, sha1_hash)
            break
        except (OSError, ValueError) as e:
            left = attempts - attempt - 1
            if left == 0:
                raise DataFileError(
                    f"download of {url} to {fname} failed after {attempts} attempt(s): {e}; "
                    f"if this machine is offline, put the file at {fname} and an existing file "
                    f"is used without downloading") from e
            print(f"download failed, retrying, {left} attempt{'s' if left > 1 else ''} left")
    logging.info("downloaded %s into %s successfully", url, fname)
    return fname


def _model_table():
    """MXNet's model zoo: name -> {'symbol': url, 'params': url}."""
    def entry(folder, stem, epoch="0000"):
        base = f"{_MODEL_URL}{folder}/{stem}"
        return {"symbol": f"{base}-symbol.json", "params": f"{base}-{epoch}.params"}
    table = {"imagenet1k-inception-bn": entry("imagenet/inception-bn", "Inception-BN", "0126")}
    for depth in (18, 34, 50, 101, 152):
        table[f"imagenet1k-resnet-{depth}"] = entry(f"imagenet/resnet/{depth}-layers",
                                                    f"resnet-{depth}")
    for depth in (50, 101):
        table[f"imagenet1k-resnext-{depth}"] = entry(f"imagenet/resnext/{depth}-layers",
                                                     f"resnext-{depth}")
    table["imagenet1k-resnext-101-64x4d"] = entry("imagenet/resnext/101-layers",
                                                  "resnext-101-64x4d")
    table["imagenet11k-resnet-152"] = entry("imagenet-11k/resnet-152", "resnet-152")
    for depth in (152, 50):
        table[f"imagenet11k-place365ch-resnet-{depth}"] = entry("imagenet-11k-place365-ch",
                                                                f"resnet-{depth}")
    return table


def download_model(model_name, dst_dir="./", meta_info=None):
    """Download a model's ``-symbol.json`` and ``-0000.params`` files into ``dst_dir``.

    Parameters
    ----------
    model_name : str
    dst_dir : str
    meta_info : dict, optional
        ``{model_name: {'symbol': url, 'params': url}}``; MXNet's model zoo
        (ImageNet Inception-BN, ResNet, ResNeXt) by default.

    Returns
    -------
    (str, int)
        The path prefix of the files and the epoch 0 (``(None, 0)`` for an
        unknown model), as ``mx.model.load_checkpoint`` takes them.
    """
    meta_info = dict(_model_table() if meta_info is None else meta_info)
    if model_name not in meta_info:
        return None, 0
    os.makedirs(dst_dir, exist_ok=True)
    meta = dict(meta_info[model_name])
    missing = [k for k in ("symbol", "params") if k not in meta]
    if missing:
        raise DataFileError(f"download_model: meta_info[{model_name!r}] has no {missing} URL")
    prefix = os.path.join(dst_dir, model_name)
    download(meta["symbol"], prefix + "-symbol.json")
    download(meta["params"], prefix + "-0000.params")
    return prefix, 0


def _read_idx(path, magic_size):
    """An IDX file (MNIST's format, gzip-compressed or not) as a uint8/int8 array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        header = struct.unpack(">" + "I" * magic_size, f.read(4 * magic_size))
        data = np.frombuffer(f.read(), dtype=np.uint8)
    return header, data


def get_mnist():
    """MNIST as NumPy arrays, downloaded into the current directory if missing.

    Returns
    -------
    dict
        ``train_data`` / ``test_data``: float32 images in [0, 1] of shape
        ``(n, 1, 28, 28)``; ``train_label`` / ``test_label``: int8 labels.
    """
    def read(label_url, image_url):
        _, labels = _read_idx(download(label_url), 2)
        (_, _, rows, cols), pixels = _read_idx(download(image_url), 4)
        labels = labels.view(np.int8)
        images = pixels.reshape(len(labels), 1, rows, cols).astype(np.float32) / 255
        return labels, images
    train_lbl, train_img = read(_MNIST_URL + "train-labels-idx1-ubyte.gz",
                                _MNIST_URL + "train-images-idx3-ubyte.gz")
    test_lbl, test_img = read(_MNIST_URL + "t10k-labels-idx1-ubyte.gz",
                              _MNIST_URL + "t10k-images-idx3-ubyte.gz")
    return {"train_data": train_img, "train_label": train_lbl,
            "test_data": test_img, "test_label": test_lbl}


def get_mnist_pkl():
    """Download ``data/mnist.pkl.gz`` (into ``./data``) if it is missing."""
    os.makedirs("data", exist_ok=True)
    if not os.path.exists("data/mnist.pkl.gz"):
        download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def _get_zip_into_data(url, wanted):
    os.makedirs("data", exist_ok=True)
    if not all(os.path.exists(os.path.join("data", w)) for w in wanted):
        path = download(url, dirname="data")
        with zipfile.ZipFile(path) as zf:
            zf.extractall("data")


def get_mnist_ubyte():
    """Download and unpack MNIST's four ``*-ubyte`` files into ``./data`` if any is missing."""
    _get_zip_into_data("http://data.mxnet.io/mxnet/data/mnist.zip",
                       ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"])


def get_cifar10():
    """Download and unpack CIFAR-10's RecordIO files into ``./data/cifar`` if any is missing."""
    _get_zip_into_data("http://data.mxnet.io/mxnet/data/cifar10.zip",
                       ["cifar/train.rec", "cifar/test.rec", "cifar/train.lst",
                        "cifar/test.lst"])


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """Training and validation iterators over MNIST (``./data``, downloaded if missing).

    Images are float32 in [0, 1], shaped ``(batch,) + input_shape`` for a
    3-D ``input_shape`` and flat ``(batch, 784)`` otherwise; labels are
    float32. The data is split into ``num_parts`` contiguous parts and part
    ``part_index`` is served; the training iterator shuffles.

    Returns
    -------
    (NDArrayIter, NDArrayIter)
    """
    if not 0 <= part_index < num_parts:
        raise DataFileError(f"part_index must be in [0, {num_parts}), got {part_index}")
    get_mnist_ubyte()
    flat = len(input_shape) != 3

    def make(images, labels, shuffle):
        _, lbl = _read_idx(os.path.join("data", labels), 2)
        (_, n, rows, cols), px = _read_idx(os.path.join("data", images), 4)
        img = px.reshape(n, rows * cols) if flat else px.reshape((n,) + tuple(input_shape))
        lo, hi = n * part_index // num_parts, n * (part_index + 1) // num_parts
        return NDArrayIter(img[lo:hi].astype(np.float32) / 255, lbl[lo:hi].astype(np.float32),
                           batch_size=batch_size, shuffle=shuffle)
    return (make("train-images-idx3-ubyte", "train-labels-idx1-ubyte", True),
            make("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", False))


def get_zip_data(data_dir, url, data_origin_name):
    """Download ``url`` as ``data_dir/data_origin_name`` and unpack the zip into ``data_dir``.

    Nothing happens when ``data_dir/data_origin_name`` already exists (so it
    works offline once the archive is in place). MXNet saves the archive under
    the URL's last part and then opens ``data_origin_name``; here it is saved
    as ``data_origin_name``, so the two names need not agree.

    Raises
    ------
    DataFileError
        The download failed (the message names the URL), or the file is not a
        zip archive (it is removed, so a later call downloads it again).
    """
    path = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(path):
        download(url, fname=data_origin_name, dirname=data_dir)
        try:
            with zipfile.ZipFile(path) as zf:
                zf.extractall(path=data_dir)
        except zipfile.BadZipFile as e:
            os.remove(path)  # so that the next call downloads it again
            raise DataFileError(f"get_zip_data: {url} (saved as {path}) is not a valid zip "
                                f"archive ({e}); the file was removed") from e


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Download ``url`` (a .bz2 file) and decompress it to ``data_dir/data_name``.

    The compressed file ``data_dir/data_origin_name`` is removed afterwards;
    nothing happens when ``data_dir/data_name`` already exists.
    """
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    origin = download(url, fname=data_origin_name, dirname=data_dir)
    fd, tmp = tempfile.mkstemp(prefix=".bz2-", dir=data_dir)
    try:
        with bz2.BZ2File(origin, "rb") as src, os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    os.remove(origin)


def get_im2rec_path(home_env="MXNET_HOME"):
    """Path of MXNet's ``tools/im2rec.py`` under ``$MXNET_HOME`` (sparsenet ships no im2rec).

    Raises
    ------
    DataFileError
        When the tool is not found.
    """
    root = os.environ.get(home_env, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    candidates = [os.path.join(root, "tools", "im2rec.py"),
                  os.path.join(root, "..", "..", "tools", "im2rec.py")]
    for path in candidates:
        if os.path.isfile(path):
            return path
    raise DataFileError(f"Could not find path to tools/im2rec.py (looked at {candidates}); "
                        f"set {home_env} to an MXNet source tree that has it")
