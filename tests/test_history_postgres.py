"""The history store in a real PostgreSQL server the tests start (Debian's ``postgresql``: initdb,
pg_ctl; a server of its own in a temporary folder, on a Unix socket): many writers at once, each run
stored once, and the same dashboard as from the SQLite store. Skipped, saying why, where PostgreSQL
or psycopg is not installed (CI installs Debian's where it can)."""

from __future__ import annotations

import copy
import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "verdicts"
WRITERS = 8

pytestmark = pytest.mark.slow  # each module starts a PostgreSQL server of its own


def _server_binary(name: str) -> str | None:
    found = shutil.which(name) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None
    )
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Path, int]]:
    """A PostgreSQL server of the tests' own: its socket folder and port (in a folder of /tmp, which
    the server's user can reach, unlike pytest's folders under root's)."""
    pytest.importorskip("psycopg", reason="psycopg is not installed (the opperf[postgres] extra)")
    initdb, pg_ctl = _server_binary("initdb"), _server_binary("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed here (Debian's postgresql package)")
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: the server runs as Debian's postgres user
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root without a postgres user for the server")
        run_as = ["runuser", "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix="opperf-postgres-"))
    if run_as:
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    data, port = folder / "data", _free_port()
    subprocess.run(
        [*run_as, initdb, "-D", str(data), "-A", "trust", "-U", "opperf"], check=True, capture_output=True
    )
    options = f"-k {folder} -p {port} -c listen_addresses=''"
    subprocess.run(
        [*run_as, pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield folder, port
    finally:
        subprocess.run(
            [*run_as, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True, check=False
        )


def _database(server: tuple[Path, int], name: str) -> str:
    """A new, empty database on the server; its URL."""
    import psycopg

    folder, port = server
    with psycopg.connect(
        f"postgresql://opperf@/postgres?host={folder}&port={port}", autocommit=True
    ) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql://opperf@/{name}?host={folder}&port={port}"


def _opperf(*arguments: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(ROOT / "opperf.py"), *arguments],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _runs(folder: Path, count: int) -> list[Path]:
    """``count`` distinct results files (each run started at another time) made from a real one."""
    base = json.loads((DATA / "mxnet_run1.json").read_text())
    paths = []
    for index in range(count):
        document = copy.deepcopy(base)
        document["environment"]["started"] = f"2026-11-{index + 1:02d}T00:00:00+00:00"
        paths.append(folder / f"run{index}.json")
        paths[-1].write_text(json.dumps(document))
    return paths


def test_writers_adding_at_once_store_every_run_once(server, tmp_path):
    """Eight processes add into an empty database at once, two for each of four files: the tables
    are made once, every run is stored once, and each file's second adder says it is there already."""
    url = _database(server, "writers")
    files = _runs(tmp_path, WRITERS // 2)
    writers = [
        _opperf("history", "add", "--db", url, str(files[i % len(files)]), cwd=tmp_path)
        for i in range(WRITERS)
    ]
    outputs = [writer.communicate(timeout=120) for writer in writers]
    assert all(writer.returncode == 0 for writer in writers), [err for _, err in outputs]
    said = "".join(err for _, err in outputs)
    assert said.count("rows added") == len(files) and said.count("already in the store") == len(files)
    assert said.count("created the history database") == 1
    listed = subprocess.run(
        [sys.executable, str(ROOT / "opperf.py"), "history", "runs", "--db", url],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert sorted(line.split()[-1] for line in listed.stdout.splitlines()[2:]) == sorted(map(str, files))


def test_a_dashboard_from_postgresql_is_the_one_from_sqlite(server, tmp_path):
    url = _database(server, "dashboard")
    files = [str(DATA / "mxnet_run1.json"), str(DATA / "mxnet_run2.json")]
    for db in (url, str(tmp_path / "history.sqlite")):
        assert _opperf("history", "add", "--db", db, *files, cwd=tmp_path).wait(timeout=120) == 0
    for db, site in ((url, "site-postgres"), (str(tmp_path / "history.sqlite"), "site-sqlite")):
        assert _opperf("publish", "--db", db, "--output-file", site, cwd=tmp_path).wait(timeout=120) == 0
    pages = {
        path.relative_to(tmp_path / "site-sqlite")
        for path in (tmp_path / "site-sqlite").rglob("*")
        if path.is_file()
    }
    assert pages and all(
        (tmp_path / "site-postgres" / page).read_bytes() == (tmp_path / "site-sqlite" / page).read_bytes()
        for page in pages
    )


def test_a_database_without_a_store_or_a_server_is_one_line_and_exit_2(server, tmp_path):
    url = _database(server, "empty")
    shown = _opperf("history", "detect", "--db", url, cwd=tmp_path)
    _, err = shown.communicate(timeout=60)
    assert shown.returncode == 2 and err.startswith("error: ") and "no opperf history in this database" in err
    folder, _ = server
    absent = _opperf(
        "history", "runs", "--db", f"postgresql://opperf:secret@/x?host={folder}&port=1", cwd=tmp_path
    )
    _, err = absent.communicate(timeout=60)
    assert absent.returncode == 2 and "cannot connect" in err and "secret" not in err and err.count("\n") == 1


def test_a_sweep_adds_itself_to_a_postgresql_store(server, tmp_path):
    """``sweep --history URL`` writes to the shared store (its URL is no file to check)."""
    url = _database(server, "sweep")
    argv = ["--ops", "exp", "--runs", "2", "--warmup", "0", "--quiet", "--history", url]
    sweep = _opperf(*argv, "--output-file", str(tmp_path / "a.json"), cwd=tmp_path)
    _, err = sweep.communicate(timeout=300)
    assert sweep.returncode == 0, err
    listed = subprocess.run(
        [sys.executable, str(ROOT / "opperf.py"), "history", "runs", "--db", url],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert str(tmp_path / "a.json") in listed.stdout
