import hashlib
import shutil
import threading
from functools import partial
from http.server import HTTPServer, SimpleHTTPRequestHandler

import numpy as np
import pytest
import scipy.io

from ufsbench.datasets import dataset_names, dataset_status, load_dataset, make_synthetic, registry_entries
from ufsbench.errors import DataError
from ufsbench.testing import data_dir, requires_data


def test_registry_knows_every_manifest_dataset_and_the_missing_ones():
    names = set(dataset_names())
    for name in ["coil20", "isolet", "orl", "allaml", "prostate_ge", "pix10p", "pie10p",
                 "lymphoma", "basehock", "usps", "att", "umist", "jaffe", "binalpha", "srbct",
                 "lung", "micromass", "hars", "fashion", "gina", "fabert", "dilbert",
                 "usps_sogfs", "digits", "synthetic"]:
        assert name in names


def test_embedded_defaults_need_no_data_dir(tmp_path):
    digits = load_dataset("digits", data_dir=tmp_path)
    assert digits.X.shape == (1797, 64) and digits.n_classes == 10
    synth = load_dataset("synthetic", data_dir=tmp_path)
    assert synth.X.shape == (300, 100) and synth.informative is not None


def test_synthetic_is_seeded_and_plants_informative_features():
    a, b = make_synthetic(random_state=4), make_synthetic(random_state=4)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.checksum == b.checksum != make_synthetic(random_state=5).checksum
    # Informative columns separate the clusters; noise columns do not.
    between = lambda j: np.var([a.X[a.y == c, j].mean() for c in range(3)])  # noqa: E731
    noise = np.setdiff1d(np.arange(100), a.informative)
    assert min(between(j) for j in a.informative) > 10 * max(between(j) for j in noise)


@requires_data("coil20", "usps")
def test_load_real_dataset_verified():
    d = load_dataset("coil20", data_dir=data_dir())
    assert d.X.shape == (1440, 1024) and d.X.dtype == np.float64
    assert d.n_classes == 20 and d.y.min() == 0
    assert d.checksum.startswith("sha256:4595ebdd")
    sub = load_dataset("usps_sogfs", data_dir=data_dir())
    assert sub.X.shape == (1000, 256) and np.all(np.bincount(sub.y) == 100)


def _entry(tmp_path, **overrides):
    entries = registry_entries()
    entry = dict(entries["jaffe"], **overrides)
    entries["jaffe"] = entry
    return entries


@requires_data("jaffe")
def test_checksum_mismatch_names_file_expected_and_fix(tmp_path):
    bad = tmp_path / "jaffe.mat"
    data = bytearray((data_dir() / "jaffe.mat").read_bytes())
    data[-10] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(DataError) as err:
        load_dataset("jaffe", data_dir=tmp_path, download=False)
    message = str(err.value)
    assert str(bad) in message and registry_entries()["jaffe"]["sha256"] in message
    assert "delete it" in message
    assert not dataset_status("jaffe", tmp_path)["verified"]


def test_missing_file_says_where_it_looked_and_how_to_get_it(tmp_path):
    with pytest.raises(DataError) as err:
        load_dataset("lung", data_dir=tmp_path, download=False)
    message = str(err.value)
    assert str(tmp_path / "lung.mat") in message and "scikit-feature" in message
    assert "UFSBENCH_DATA" in message


def test_unknown_dataset_lists_known_ones():
    with pytest.raises(DataError, match="unknown data set 'nope'.*coil20"):
        load_dataset("nope")


def test_file_without_x_y_is_refused(tmp_path):
    scipy.io.savemat(tmp_path / "jaffe.mat", {"A": np.zeros((3, 3))})
    entries = _entry(tmp_path, sha256=None)
    with pytest.raises(DataError, match=r"holds variables \['A'\].*X \(n x d\) and Y"):
        load_dataset("jaffe", data_dir=tmp_path, entries=entries, download=False)


def test_fea_gnd_layout_and_label_encoding(tmp_path):
    X = np.arange(12.0).reshape(4, 3)
    scipy.io.savemat(tmp_path / "jaffe.mat", {"fea": X, "gnd": np.array([[3], [3], [7], [9]])})
    entries = _entry(tmp_path, sha256=None, n_samples=4, n_features=3)
    d = load_dataset("jaffe", data_dir=tmp_path, entries=entries, download=False)
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, [0, 0, 1, 2])


def test_nan_in_file_is_refused(tmp_path):
    X = np.ones((4, 3))
    X[1, 1] = np.nan
    scipy.io.savemat(tmp_path / "jaffe.mat", {"X": X, "Y": np.arange(4)[:, None]})
    entries = _entry(tmp_path, sha256=None, n_samples=4, n_features=3)
    with pytest.raises(DataError, match="NaN"):
        load_dataset("jaffe", data_dir=tmp_path, entries=entries, download=False)


@pytest.fixture
def loopback_server(tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    handler = partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def _serve_file(served, name, X, Y):
    path = served / name
    scipy.io.savemat(path, {"X": X, "Y": Y})
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_download_through_loopback_server_with_checksum(loopback_server, tmp_path, monkeypatch):
    monkeypatch.setenv("UFSBENCH_OFFLINE", "0")
    served, base = loopback_server
    X, Y = np.random.default_rng(0).random((6, 4)), np.array([[1], [2], [1], [2], [1], [2]])
    sha = _serve_file(served, "toy.mat", X, Y)
    source = {"url": f"{base}/toy.mat", "sha256": sha}
    entries = _entry(tmp_path, file="toy.mat", sha256=sha, n_samples=6, n_features=4,
                     source=source)
    target = tmp_path / "data"
    d = load_dataset("jaffe", data_dir=target, entries=entries)
    np.testing.assert_allclose(d.X, X)
    assert (target / "toy.mat").is_file() and d.checksum == f"sha256:{sha}"
    # A second load reads the verified local copy (the server may be gone).
    shutil.rmtree(served)
    assert load_dataset("jaffe", data_dir=target, entries=entries).X.shape == (6, 4)


def test_download_with_wrong_checksum_is_refused(loopback_server, tmp_path, monkeypatch):
    monkeypatch.setenv("UFSBENCH_OFFLINE", "0")
    served, base = loopback_server
    _serve_file(served, "toy.mat", np.ones((2, 2)), np.array([[1], [2]]))
    entries = _entry(tmp_path, file="toy.mat", sha256="0" * 64,
                     source={"url": f"{base}/toy.mat", "sha256": "0" * 64})
    with pytest.raises(DataError, match="checksum"):
        load_dataset("jaffe", data_dir=tmp_path / "data", entries=entries)
    assert not (tmp_path / "data" / "toy.mat").exists()


def test_converted_source_downloaded_and_read_with_layout(loopback_server, tmp_path, monkeypatch):
    """A converted data set (here like umist: X stored d x n, one-hot labels) is read from its
    original after download; the record checksum is the registry's converted-file checksum."""
    monkeypatch.setenv("UFSBENCH_OFFLINE", "0")
    served, base = loopback_server
    X = np.arange(15.0).reshape(5, 3)
    onehot = np.eye(2)[[0, 1, 0, 1, 1]]
    path = served / "orig.mat"
    scipy.io.savemat(path, {"X": X.T, "Y": onehot})
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    source = {"url": f"{base}/orig.mat", "path": "data/orig.mat", "sha256": sha,
              "layout": {"x": "X", "y": "Y", "transpose_x": True, "y_onehot": True}}
    entries = _entry(tmp_path, file="conv.mat", sha256="f" * 64, n_samples=5, n_features=3,
                     source=source)
    # Offline, the way by hand names where the original goes (sources/), where it is read.
    monkeypatch.setenv("UFSBENCH_OFFLINE", "1")
    with pytest.raises(DataError) as err:
        load_dataset("jaffe", data_dir=tmp_path / "data", entries=entries)
    assert f"save it as {tmp_path / 'data' / 'sources' / 'orig.mat'}" in str(err.value)
    monkeypatch.setenv("UFSBENCH_OFFLINE", "0")
    d = load_dataset("jaffe", data_dir=tmp_path / "data", entries=entries)
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, [0, 1, 0, 1, 1])
    assert d.checksum == "sha256:" + "f" * 64
    assert (tmp_path / "data" / "sources" / "orig.mat").is_file()   # where it was fetched to
