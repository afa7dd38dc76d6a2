"""`ufsbench datasets fetch` and the download code under it, against a loopback HTTP server.

The server serves fixtures made here: a small .mat known only by its git blob SHA-1 (like lung),
and an ARFF file with an OpenML-style JSON description (like the K-means UFS sets). A route can
close the connection mid-body once, or stall mid-body, to stand for a broken transfer.
"""

import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
import scipy.io

from ufsbench.cli import main
from ufsbench.datasets import load_dataset, registry_entries
from ufsbench.datasets.fetch import download, fetch_dataset
from ufsbench.datasets.registry import git_blob_sha1
from ufsbench.errors import DataError
from ufsbench.testing import interrupt, reaped

# -- the loopback server ---------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        route = self.server.routes.get(self.path)
        self.server.requests.append((self.path, dict(self.headers)))
        if route is None:
            self.send_error(404)
            return
        body = route["body"]
        if route.get("gzip") and "gzip" in self.headers.get("Accept-Encoding", ""):
            body = gzip.compress(body, mtime=0)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        if body is not route["body"]:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        if route.get("cut", 0) > 0:  # the connection drops halfway, this time only
            route["cut"] -= 1
            self.wfile.write(body[:len(body) // 2])
            return
        if route.get("stall"):  # half the body, then nothing until the test lets go
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            route["stalled"].set()
            route["stall"].wait(20)
            return
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    httpd.routes, httpd.requests = {}, []
    httpd.base = f"http://127.0.0.1:{httpd.server_port}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield httpd
    for route in httpd.routes.values():
        if route.get("stall"):
            route["stall"].set()
    httpd.shutdown()
    httpd.server_close()


# -- fixtures: a lung-like .mat and an OpenML-like ARFF -------------------------------------

X_LUNG = np.arange(24.0).reshape(6, 4)
Y_LUNG = np.array([[1], [2], [1], [2], [1], [2]])

# Classes in file order b b b a c a c a c; declared order {b, a, c} gives labels b=1, a=2, c=3.
# The first two of each class are rows 0, 1 (b), 3, 5 (a), 4, 6 (c): rows 0, 1, 3, 4, 5, 6.
ARFF = textwrap.dedent("""\
    % an OpenML-style ARFF file
    @RELATION toy
    @ATTRIBUTE 'f 1' NUMERIC
    @ATTRIBUTE f2 REAL
    @ATTRIBUTE subject INTEGER
    @ATTRIBUTE f3 numeric
    @ATTRIBUTE class {b,a,c}

    @DATA
    % rows
    0.5,9,1,10,b
    1.5,9,1,11,'b'
    2.5,9,2,12,b
    3.5,9,2,13,a
    4.5,9,3,14,c
    5.5,9,3,15,a
    6.5,9,4,16,c
    7.5,9,4,17,a
    8.5,9,5,18,c
    """).encode()
KEPT = [0, 1, 3, 4, 5, 6]
X_ML = np.column_stack([np.arange(9) + 0.5, np.arange(10.0, 19.0)])[KEPT]
Y_ML = np.array([1, 1, 2, 3, 2, 3])


def _mat_bytes(X, Y) -> bytes:
    buffer = io.BytesIO()
    scipy.io.savemat(buffer, {"X": X, "Y": Y})
    return buffer.getvalue()


def _blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@pytest.fixture
def registry(tmp_path, monkeypatch, server):
    """A user registry with toylung (URL + git blob) and toyml (OpenML 42 version 2), pointed at
    the server; returns (server, data directory, the lung file's bytes)."""
    lung = _mat_bytes(X_LUNG, Y_LUNG)
    server.routes["/files/toylung.mat"] = {"body": lung}
    description = {"data_set_description": {
        "id": "42", "name": "toy-ml", "version": "2", "format": "ARFF", "file_id": "4242",
        "md5_checksum": hashlib.md5(ARFF).hexdigest(), "default_target_attribute": "class",
        "ignore_attribute": ["f2"], "url": f"{server.base}/data/v1/download/4242/toy.arff"}}
    server.routes["/api/v1/json/data/42"] = {"body": json.dumps(description).encode()}
    server.routes["/data/v1/download/4242/toy.arff"] = {"body": ARFF, "gzip": True}
    server.routes["/data/v1/download/4242"] = server.routes["/data/v1/download/4242/toy.arff"]
    _write_registry(tmp_path / "registry", server.base, _blob(lung))
    monkeypatch.setenv("UFSBENCH_CONFIG_DIR", str(tmp_path / "registry"))
    monkeypatch.setenv("UFSBENCH_OPENML_URL", server.base)
    monkeypatch.setenv("UFSBENCH_OFFLINE", "0")
    return server, tmp_path / "data", lung


def _write_registry(directory, base, blob):
    (directory / "dataset").mkdir(parents=True)
    (directory / "dataset" / "toylung.yaml").write_text(textwrap.dedent(f"""\
        name: toylung
        kind: mat
        file: toylung.mat
        sha256: null
        n_samples: 6
        n_features: 4
        n_classes: 2
        source: {{url: '{base}/files/toylung.mat', git_blob_sha1: {blob}}}
        """))
    (directory / "dataset" / "toyml.yaml").write_text(textwrap.dedent("""\
        name: toyml
        kind: mat
        file: toyml.mat
        sha256: null
        n_samples: 6
        n_features: 2
        n_classes: 3
        subset: {first_per_class: 2}
        source:
          openml: {data_id: 42, version: 2, name: toy-ml, drop: [subject]}
        """))


def _leftovers(directory):
    """Files and folders a download may leave behind: temporary ones and the data files."""
    return sorted(p.name for p in directory.rglob("*") if p.is_file()) if directory.exists() \
        else []


# -- URL downloads ---------------------------------------------------------------------------

def test_url_download_verifies_git_blob_and_records_sha256(registry):
    server, data, lung = registry
    fetched = fetch_dataset(registry_entries()["toylung"], data)
    assert fetched.path == data / "toylung.mat" and fetched.path.read_bytes() == lung
    assert git_blob_sha1(fetched.path) == _blob(lung)
    sha = hashlib.sha256(lung).hexdigest()
    assert fetched.sha256 == sha and "git blob SHA-1" in fetched.verified
    assert (data / "toylung.mat.sha256").read_text() == f"{sha}  toylung.mat\n"
    assert _leftovers(data) == ["toylung.mat", "toylung.mat.sha256"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert fetched.path.stat().st_mode & 0o777 == 0o666 & ~umask  # as any file the user makes
    d = load_dataset("toylung", data_dir=data, download=False)
    np.testing.assert_array_equal(d.X, X_LUNG)
    assert d.checksum == f"sha256:{sha}"


def test_recorded_sha256_is_checked_on_later_loads(registry):
    _, data, _ = registry
    fetch_dataset(registry_entries()["toylung"], data)
    (data / "toylung.mat.sha256").write_text(f"{'0' * 64}  toylung.mat\n")
    with pytest.raises(DataError, match=r"sha256 at download was 0{64} \(recorded in "
                                        r"toylung.mat.sha256\)") as err:
        load_dataset("toylung", data_dir=data, download=False)
    assert "ufsbench datasets fetch toylung" in str(err.value)


def test_records_of_a_refetched_file_are_stale(registry, monkeypatch):
    # the checksum records are compared with is the one recorded at download
    from ufsbench.datasets.registry import current_checksum

    _, data, lung = registry
    monkeypatch.setenv("UFSBENCH_DATA", str(data))
    assert current_checksum("toylung") is None                  # not downloaded: unknown
    fetch_dataset(registry_entries()["toylung"], data)
    assert current_checksum("toylung") == f"sha256:{hashlib.sha256(lung).hexdigest()}"
    (data / "toylung.mat.sha256").write_text(f"{'0' * 64}  toylung.mat\n")
    assert current_checksum("toylung") == f"sha256:{'0' * 64}"


def test_checksum_mismatch_removes_the_file_and_says_so_in_one_line(registry):
    server, data, lung = registry
    entry = registry_entries()["toylung"]
    entry["source"] = dict(entry["source"], git_blob_sha1="f" * 40)
    with pytest.raises(DataError) as err:
        fetch_dataset(entry, data)
    message = str(err.value)
    assert "\n" not in message and message.startswith("download of toylung from ")
    assert f"{server.base}/files/toylung.mat" in message
    assert f"expected git blob SHA-1 {'f' * 40}, got {_blob(lung)}" in message
    assert "the file was removed" in message
    assert _leftovers(data) == []


def test_interrupted_transfer_leaves_nothing_and_a_retry_succeeds(registry):
    server, data, lung = registry
    server.routes["/files/toylung.mat"]["cut"] = 1
    with pytest.raises(DataError, match=r"download of toylung from \S+ failed \(the connection "
                                        r"closed .*nothing was saved") as err:
        fetch_dataset(registry_entries()["toylung"], data)
    assert "\n" not in str(err.value)
    # ... and the way by hand, for a machine without network.
    assert f"or download {server.base}" in str(err.value)
    assert f"save it as {data / 'toylung.mat'}" in str(err.value)
    assert _leftovers(data) == []
    assert fetch_dataset(registry_entries()["toylung"], data).path.read_bytes() == lung


def test_http_error_names_status(registry):
    server, data, _ = registry
    with pytest.raises(DataError, match=r"failed \(HTTP 404 Not Found\); nothing was saved"):
        download(f"{server.base}/nothing-here", data / "x.mat", name="x")
    assert _leftovers(data) == []


def test_progress_bar_goes_to_stderr(registry, capsys):
    server, data, lung = registry
    download(f"{server.base}/files/toylung.mat", data / "bar.mat", name="toylung",
             progress=True)
    err = capsys.readouterr().err
    assert "toylung:" in err and f"/{len(lung)} " in err  # the bar counts bytes
    assert (data / "bar.mat").read_bytes() == lung


def test_run_downloads_missing_sets_through_the_same_code(registry):
    server, data, _ = registry
    d = load_dataset("toylung", data_dir=data)  # download=True, as `ufsbench run` loads
    assert d.X.shape == (6, 4)
    assert (data / "toylung.mat.sha256").is_file()  # written only by the fetch code
    assert [path for path, _ in server.requests] == ["/files/toylung.mat"]


def test_offline_mode_downloads_nothing_and_says_how_to_turn_it_off(registry, monkeypatch):
    server, data, _ = registry
    monkeypatch.setenv("UFSBENCH_OFFLINE", "1")
    for load in (lambda: fetch_dataset(registry_entries()["toylung"], data),
                 lambda: load_dataset("toylung", data_dir=data),
                 lambda: load_dataset("toyml", data_dir=data)):
        with pytest.raises(DataError, match=r"downloads are off \(UFSBENCH_OFFLINE=1\): unset "
                                            r"UFSBENCH_OFFLINE") as err:
            load()
        assert "\n" not in str(err.value) and str(data) in str(err.value)
    assert server.requests == []


# -- OpenML ----------------------------------------------------------------------------------

def test_openml_fetch_applies_the_subset_rule_and_is_reproducible(registry):
    server, data, _ = registry
    fetched = fetch_dataset(registry_entries()["toyml"], data)
    mat = scipy.io.loadmat(fetched.path)
    np.testing.assert_array_equal(mat["X"], X_ML)  # f2 (ignored) and subject (dropped) left out
    np.testing.assert_array_equal(mat["Y"].ravel(), Y_ML)
    assert b"OpenML data set 42 version 2" in mat["__header__"]
    assert (data / "toyml.mat.sha256").read_text().split()[0] == fetched.sha256
    assert fetched.sha256 == hashlib.sha256(fetched.path.read_bytes()).hexdigest()
    assert _leftovers(data) == ["toyml.mat", "toyml.mat.sha256"]
    # The ARFF came gzip-encoded; its md5 is that of the decoded file.
    paths = [path for path, _ in server.requests]
    assert paths == ["/api/v1/json/data/42", "/data/v1/download/4242/toy.arff"]
    # The same data give the same bytes: no time stamp in the file.
    fetched.path.unlink()
    assert fetch_dataset(registry_entries()["toyml"], data).sha256 == fetched.sha256
    d = load_dataset("toyml", data_dir=data, download=False)
    assert d.X.shape == (6, 2) and d.n_classes == 3
    assert d.checksum == f"sha256:{fetched.sha256}|first_per_class=2"


def test_openml_md5_mismatch_saves_nothing(registry):
    server, data, _ = registry
    route = server.routes["/api/v1/json/data/42"]
    description = json.loads(route["body"])
    description["data_set_description"]["md5_checksum"] = "0" * 32
    del description["data_set_description"]["url"]  # then the file is <root>/data/v1/download/<id>
    route["body"] = json.dumps(description).encode()
    with pytest.raises(DataError, match=f"expected md5 {'0' * 32}, got "
                                        f"{hashlib.md5(ARFF).hexdigest()}"):
        fetch_dataset(registry_entries()["toyml"], data)
    assert server.requests[-1][0] == "/data/v1/download/4242"
    assert _leftovers(data) == [] and not any(data.iterdir())


def test_openml_pin_mismatch_is_refused(registry):
    _, data, _ = registry
    entry = registry_entries()["toyml"]
    entry["source"] = {"openml": {"data_id": 42, "version": 1, "name": "toy-ml"}}
    with pytest.raises(DataError, match="OpenML data set 42 is toy-ml version 2, but the registry "
                                        "entry toyml pins toy-ml version 1"):
        fetch_dataset(entry, data)
    entry = dict(registry_entries()["toyml"], n_features=3)
    with pytest.raises(DataError, match=r"gives 6 x 2 with 3 classes .* says toyml is 6 x 3"):
        fetch_dataset(entry, data)
    assert _leftovers(data) == []


# -- the command -----------------------------------------------------------------------------

def test_cli_dry_run_then_fetch_then_nothing_to_do(registry, capsys):
    server, data, lung = registry
    main(["datasets", "fetch", "--dry-run", "toylung", "toyml", "--data-dir", str(data)])
    plan = capsys.readouterr().out
    assert f"source: {server.base}/files/toylung.mat" in plan
    assert f"verify: git blob SHA-1 {_blob(lung)}" in plan
    assert f"OpenML data set 42 version 2 (toy-ml): {server.base}/api/v1/json/data/42" in plan
    assert "size:   unknown" in plan and "toyml.mat.sha256" in plan
    assert server.requests == [] and _leftovers(data) == []

    # The command itself, as a user runs it (the environment points it at the server).
    out = subprocess.run([sys.executable, "-m", "ufsbench.cli", "datasets", "fetch", "toylung",
                          "toyml", "--data-dir", str(data)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    sha = hashlib.sha256(lung).hexdigest()
    assert f"toylung: saved {data / 'toylung.mat'}" in out.stdout
    assert f"sha256 {sha} (recorded in toylung.mat.sha256)" in out.stdout
    assert "toyml: saved" in out.stdout and "Traceback" not in out.stderr
    assert _leftovers(data) == ["toylung.mat", "toylung.mat.sha256", "toyml.mat",
                                "toyml.mat.sha256"]

    main(["datasets", "fetch", "toylung", "toyml", "--data-dir", str(data)])
    assert capsys.readouterr().out.count("present and verified") == 2


def test_cli_bad_input_and_offline_end_with_one_line_and_exit_2(registry, capsys, monkeypatch):
    _, data, _ = registry
    for args, expected in [(["nope"], "unknown data set 'nope'; known data sets: "),
                           ([], "name the data sets to fetch")]:
        with pytest.raises(SystemExit) as code:
            main(["datasets", "fetch", *args, "--data-dir", str(data)])
        err = capsys.readouterr().err
        assert code.value.code == 2 and err.count("\n") == 1 and expected in err
    monkeypatch.setenv("UFSBENCH_OFFLINE", "1")
    with pytest.raises(SystemExit) as code:
        main(["datasets", "fetch", "toylung", "--data-dir", str(data)])
    err = capsys.readouterr().err
    assert code.value.code == 2 and err.count("\n") == 1
    assert "downloads are off (UFSBENCH_OFFLINE=1), so toylung cannot be fetched" in err


def test_cli_failed_download_exits_1_and_keeps_the_others(registry, capsys):
    server, data, _ = registry
    server.routes["/data/v1/download/4242/toy.arff"]["cut"] = 1
    with pytest.raises(SystemExit) as code:
        main(["datasets", "fetch", "toyml", "toylung", "--data-dir", str(data)])
    out, err = capsys.readouterr()
    assert code.value.code == 1 and "toylung: saved" in out
    errors = [line for line in err.splitlines() if line.startswith("ufsbench: error:")]
    assert len(errors) == 1 and "download of toyml from " in errors[0]
    assert err.splitlines()[-1] == "ufsbench: 1 of 2 data set(s) not fetched: toyml"
    assert _leftovers(data) == ["toylung.mat", "toylung.mat.sha256"]


CTRL_C_CHILD = textwrap.dedent("""
    import signal
    import sys

    from ufsbench.cli import main

    # A shell that starts the tests in the background (cmd &) passes SIGINT on ignored, and
    # Python then raises no KeyboardInterrupt: give the child the handler a terminal gives.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main(sys.argv[1:])
""")


def test_ctrl_c_mid_transfer_leaves_no_partial_file(registry, tmp_path):
    server, data, _ = registry
    route = server.routes["/files/toylung.mat"]
    route.update(stall=threading.Event(), stalled=threading.Event())
    script = tmp_path / "child.py"
    script.write_text(CTRL_C_CHILD)
    proc = subprocess.Popen([sys.executable, str(script), "datasets", "fetch", "toylung",
                             "--data-dir", str(data)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    with reaped(proc):
        assert route["stalled"].wait(30), "the child never reached the download"
        deadline = time.monotonic() + 10
        while not list(data.glob(".toylung.mat.*.part")) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert list(data.glob(".toylung.mat.*.part")), "no partial file to clean up"
        _, stderr = interrupt(proc)
    assert proc.returncode == 130, stderr
    assert "interrupted while fetching toylung; its partial download was removed" in stderr
    assert _leftovers(data) == []
