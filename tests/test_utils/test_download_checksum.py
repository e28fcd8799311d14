"""mx.test_utils.download with sha1_hash, offline failures naming the URL, get_zip_data."""
import hashlib
import os
import zipfile

import pytest

from sparsenet import test_utils as tu
from sparsenet.test_utils.datasets import ChecksumError, check_sha1


def _url(path):
    return "file://" + os.path.abspath(path)


def _sha1(data):
    return hashlib.sha1(data).hexdigest()


def test_check_sha1(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"abc")
    assert check_sha1(str(p), "a9993e364706816aba3e25717850c26c9cd0d89d")  # FIPS 180 vector
    assert check_sha1(str(p), "A9993E364706816ABA3E25717850C26C9CD0D89D")
    assert not check_sha1(str(p), _sha1(b"abd"))


def test_download_with_matching_hash_and_stale_file(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"payload")
    out = tmp_path / "out"
    dest = tu.download(_url(src), dirname=str(out), sha1_hash=_sha1(b"payload"))
    assert open(dest, "rb").read() == b"payload"
    # an existing file with the right hash is kept; with another hash it is fetched again
    src.write_bytes(b"changed")
    assert open(tu.download(_url(src), dirname=str(out), sha1_hash=_sha1(b"payload")),
                "rb").read() == b"payload"
    (out / "src.bin").write_bytes(b"stale")
    tu.download(_url(src), dirname=str(out), sha1_hash=_sha1(b"changed"))
    assert open(dest, "rb").read() == b"changed"


def test_download_hash_mismatch_fails_and_leaves_no_file(tmp_path, capsys):
    src = tmp_path / "src.bin"
    src.write_bytes(b"payload")
    out = tmp_path / "out"
    with pytest.raises(tu.DataFileError, match=r"download of file://.*src\.bin to .* failed "
                                               r"after 2 attempt\(s\): the downloaded content "
                                               r"has SHA-1 [0-9a-f]{40}, expected 0+") as info:
        tu.download(_url(src), dirname=str(out), retries=2, sha1_hash="0" * 40)
    assert isinstance(info.value.__cause__, ChecksumError)
    assert "1 attempt left" in capsys.readouterr().out
    assert os.listdir(out) == []  # neither the file nor a temporary one


def test_unreachable_url_names_the_url(tmp_path):
    url = "http://127.0.0.1:9/x.zip"  # the discard port: connection refused, no network needed
    with pytest.raises(tu.DataFileError, match=r"download of http://127\.0\.0\.1:9/x\.zip to "
                                               r".*x\.zip failed after 1 attempt\(s\).*put the "
                                               r"file at") as info:
        tu.download(url, dirname=str(tmp_path), retries=1)
    assert isinstance(info.value, OSError) and os.listdir(tmp_path) == []
    with pytest.raises(tu.DataFileError, match=r"http://127\.0\.0\.1:9/x\.zip"):
        tu.get_zip_data(str(tmp_path / "data"), url, "x.zip")
    # offline, an archive already in place is used as is (MXNet's check on data_origin_name)
    (tmp_path / "data" / "x.zip").write_bytes(b"anything")
    tu.get_zip_data(str(tmp_path / "data"), url, "x.zip")


def test_get_zip_data_rejects_a_non_zip_and_removes_it(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(tu.DataFileError, match=r"bad\.zip .* is not a valid zip archive"):
        tu.get_zip_data(str(tmp_path / "d"), _url(bad), "ml.zip")
    assert not (tmp_path / "d" / "ml.zip").exists()
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("ml-10M100K/ratings.dat", "1::2::5::0\n")
    tu.get_zip_data(str(tmp_path / "d"), _url(bad), "ml.zip")
    assert (tmp_path / "d" / "ml-10M100K" / "ratings.dat").read_text() == "1::2::5::0\n"
