"""`dataclean-env-datasets` (tasks/fetch.py) against a local file:// source made here: no
literature table is opened or fetched. First fetch records each file's sha256, later ones
verify it, a changed file is refused with nothing overwritten, and no network is a clear
message and a non-zero exit, never a traceback."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dataclean_env.tasks.fetch import MANIFEST, main, read_manifest
from tests.upstream_pair import CLEAN, COMMIT, DIRTY, upstream_manifest


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run(capsys: pytest.CaptureFixture[str], manifest: Path, dest: Path, *args: str):
    code = main(["--manifest", str(manifest), "--to", str(dest), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_first_fetch_records_each_digest_and_writes_a_task_folder(tmp_path, capsys) -> None:
    manifest, dest = upstream_manifest(tmp_path), tmp_path / "dest"
    code, out, err = run(capsys, manifest, dest, "fetch", "cities")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"cities/dirty.csv: sha256 {sha(DIRTY)} (recorded)",
        f"cities/clean.csv: sha256 {sha(CLEAN)} (recorded)",
        "cities: served as task 'cities' (3 rows; its reference repair takes 1 of its 5 steps)",
        f"serve them with EXTRA_DATASETS={dest}",
    ]
    assert (dest / "cities" / "dirty.csv").read_bytes() == DIRTY
    assert (dest / "cities" / "clean.csv").read_bytes() == CLEAN
    upstream = (tmp_path / "upstream").as_uri() + f"/{COMMIT}"
    assert json.loads((dest / "datasets.lock.json").read_text()) == {
        "tables": {
            "cities": {
                "dirty.csv": {"url": f"{upstream}/dirty.csv", "sha256": sha(DIRTY)},
                "clean.csv": {"url": f"{upstream}/clean.csv", "sha256": sha(CLEAN)},
            }
        }
    }
    task = json.loads((dest / "cities" / "task.json").read_text())
    assert (task["key"], task["max_steps"]) == ("id", 5)
    assert task["description"].startswith(f"cities, a table of the error-repair literature, "
                                          f"from example/cities at commit {COMMIT}.")  # fmt: skip


def test_a_later_fetch_verifies_the_recorded_digests(tmp_path, capsys) -> None:
    manifest, dest = upstream_manifest(tmp_path), tmp_path / "dest"
    assert run(capsys, manifest, dest, "fetch", "cities")[0] == 0
    lock = (dest / "datasets.lock.json").read_text()
    code, out, _ = run(capsys, manifest, dest, "fetch", "all")
    assert code == 0
    assert out.splitlines()[:2] == [
        f"cities/dirty.csv: sha256 {sha(DIRTY)} (verified)",
        f"cities/clean.csv: sha256 {sha(CLEAN)} (verified)",
    ]
    assert (dest / "datasets.lock.json").read_text() == lock
    code, out, _ = run(capsys, manifest, dest, "verify")
    assert (code, out) == (0, f"cities: dirty.csv, clean.csv match {dest / 'datasets.lock.json'}\n")
    code, out, _ = run(capsys, manifest, dest, "list")
    assert (code, out) == (0, f"cities\texample/cities@{COMMIT}\tfetched\n")


def test_a_file_changed_upstream_is_refused_and_nothing_is_overwritten(tmp_path, capsys) -> None:
    manifest, dest = upstream_manifest(tmp_path), tmp_path / "dest"
    assert run(capsys, manifest, dest, "fetch", "cities")[0] == 0
    lock = (dest / "datasets.lock.json").read_text()
    tampered = CLEAN.replace(b"Boston", b"Bostn")
    (tmp_path / "upstream" / COMMIT / "clean.csv").write_bytes(tampered)
    code, out, err = run(capsys, manifest, dest, "fetch", "cities")
    assert (code, out) == (1, "")
    assert err == (
        f"dataclean-env-datasets: cities/clean.csv: the sha256 of "
        f"{(tmp_path / 'upstream').as_uri()}/{COMMIT}/clean.csv is {sha(tampered)}, but "
        f"{dest / 'datasets.lock.json'} recorded {sha(CLEAN)} for it. The file changed at an "
        f"address that should never change: refused, nothing was written.\n"
    )
    assert (dest / "cities" / "clean.csv").read_bytes() == CLEAN
    assert (dest / "cities" / "dirty.csv").read_bytes() == DIRTY
    assert (dest / "datasets.lock.json").read_text() == lock


def test_a_file_changed_on_disk_fails_verify(tmp_path, capsys) -> None:
    manifest, dest = upstream_manifest(tmp_path), tmp_path / "dest"
    assert run(capsys, manifest, dest, "fetch", "cities")[0] == 0
    (dest / "cities" / "dirty.csv").write_bytes(DIRTY + b"4,Reno,NV\n")
    code, _, err = run(capsys, manifest, dest, "verify", "cities")
    assert code == 1
    assert "dirty.csv: sha256 " in err and "was changed on disk; fetch it again" in err


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 bound but never listening: connecting is refused, as offline."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_offline_is_a_clear_message_and_a_non_zero_exit(tmp_path, closed_port) -> None:
    url = f"http://127.0.0.1:{closed_port}/{{commit}}/{{file}}"
    manifest, dest = upstream_manifest(tmp_path, url=url), tmp_path / "dest"
    done = subprocess.run(
        [sys.executable, "-m", "dataclean_env.tasks.fetch", "--manifest", str(manifest),
         "--to", str(dest), "fetch", "cities"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(
        f"dataclean-env-datasets: cannot download http://127.0.0.1:{closed_port}/{COMMIT}/"
        f"dirty.csv: "
    )
    assert done.stderr.endswith("Are you offline? Nothing was written.\n")
    assert "Traceback" not in done.stderr
    assert not dest.exists()


def test_a_missing_file_upstream_names_the_http_status(tmp_path, capsys) -> None:
    manifest, dest = upstream_manifest(tmp_path), tmp_path / "dest"
    (tmp_path / "upstream" / COMMIT / "clean.csv").unlink()
    code, _, err = run(capsys, manifest, dest, "fetch", "cities")
    assert code == 1 and err.startswith("dataclean-env-datasets: cannot download file://")
    assert not dest.exists()


@pytest.mark.parametrize("commit", ["TO-BE-PINNED", "main", COMMIT[:12], COMMIT.upper()])
def test_an_entry_without_a_full_commit_hash_is_refused(tmp_path, capsys, commit: str) -> None:
    manifest, dest = upstream_manifest(tmp_path, commit=commit), tmp_path / "dest"
    code, out, err = run(capsys, manifest, dest, "fetch", "cities")
    assert (code, out) == (1, "")
    assert err.startswith(
        f"dataclean-env-datasets: cities: the manifest pins no commit ({commit!r} is not 40 "
        f"hexadecimal digits). Pin a commit of example/cities in {manifest}"
    )
    assert not dest.exists()


def test_an_unknown_table_is_refused_with_the_known_names(tmp_path, capsys) -> None:
    code, _, err = run(capsys, upstream_manifest(tmp_path), tmp_path / "dest", "fetch", "hospital")
    assert (code, err) == (
        1,
        "dataclean-env-datasets: unknown tables ['hospital']; known: cities or all\n",
    )


def test_the_shipped_manifest_pins_full_commits_or_says_it_does_not() -> None:
    tables = read_manifest(MANIFEST).tables
    assert list(tables) == ["hospital", "flights", "beers", "rayyan-raha", "tax", "movies"]
    unpinned = [name for name, entry in tables.items() if len(entry.commit) != 40]
    assert unpinned == ["tax", "movies"]
    for entry in tables.values():
        assert "{commit}" in entry.url and "{file}" in entry.url
        assert entry.url.startswith(f"https://raw.githubusercontent.com/{entry.repository}/")
