"""`dataclean-env-datasets`: the literature's dirty/clean tables, fetched on demand.

dataclean-env-datasets list                     # the tables, their pinned commits, fetched or not
dataclean-env-datasets fetch NAME [NAME ...]    # download (or `all`), verify, write
dataclean-env-datasets verify [NAME ...]        # check the files on disk against the lock

Each table is downloaded from its public repository at the commit its manifest entry pins
(`literature_tables.json` beside this module, or --manifest): an immutable address. The
sha256 of every file is recorded in `datasets.lock.json` in the destination the first time
it is fetched (trust on first use) and compared on every later fetch: a file whose digest
changed is refused and nothing is written. The pair lands in DEST/NAME/ (dirty.csv,
clean.csv and a task.json), which is what EXTRA_DATASETS reads (tasks/custom.py). DEST is
--to, else the first folder of EXTRA_DATASETS, else a per-user data folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dataclean_env.settings import get_settings
from dataclean_env.tasks.custom import NotATask, TaskFile, load_custom_task

MANIFEST = Path(__file__).with_name("literature_tables.json")
LOCK_FILE = "datasets.lock.json"
FILES = ("dirty.csv", "clean.csv")
MAX_FILE_BYTES = 256 * 1024 * 1024  # the largest literature table (tax) is far below
TIMEOUT_SECONDS = 30.0
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # a task id (tasks/custom.py)


class FetchError(Exception):
    """Why a fetch or a check failed: printed as one line, never as a traceback."""


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repository: str
    commit: str
    url: str  # one file's address, with {commit} and {file} to fill in
    pinned: str  # how the commit was chosen and what of it was verified
    task: TaskFile = Field(default_factory=TaskFile)

    def address(self, file: str) -> str:
        return self.url.format(commit=self.commit, file=file)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str = ""
    tables: dict[str, Entry]


def read_manifest(path: Path) -> Manifest:
    try:
        manifest = Manifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise FetchError(f"cannot read the manifest {path}: {exc}") from None
    bad = sorted(name for name in manifest.tables if not _NAME.match(name))
    if bad:
        raise FetchError(f"{path}: table names must be task ids (letters, digits, . _ -): {bad}")
    return manifest


def pinned(name: str, entry: Entry, manifest: Path) -> Entry:
    """The entry, if its commit is a full commit hash: anything else is no immutable address."""
    if not _COMMIT.match(entry.commit):
        raise FetchError(
            f"{name}: the manifest pins no commit ({entry.commit!r} is not 40 hexadecimal "
            f"digits). Pin a commit of {entry.repository} in {manifest}: {entry.pinned}"
        )
    return entry


def download(url: str) -> bytes:
    """The file at `url` (https or file), at most MAX_FILE_BYTES."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            body: bytes = response.read(MAX_FILE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(
            f"cannot download {url}: {reason}. Are you offline? Nothing was written."
        ) from None
    if len(body) > MAX_FILE_BYTES:
        raise FetchError(f"{url} is larger than {MAX_FILE_BYTES} bytes; refused")
    return body


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Lock:
    """The digests recorded in DEST/datasets.lock.json: table -> file -> {url, sha256}."""

    path: Path
    tables: dict[str, dict[str, dict[str, str]]]

    @classmethod
    def read(cls, dest: Path) -> Lock:
        path = dest / LOCK_FILE
        if not path.exists():
            return cls(path, {})
        try:
            tables = json.loads(path.read_text(encoding="utf-8"))["tables"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise FetchError(f"cannot read {path}: {exc}") from None
        return cls(path, tables)

    def check(self, name: str, file: str, url: str, digest: str) -> bool:
        """True if this address was recorded before (and the digest matches); False if it
        is new. A digest that differs from the recorded one is refused."""
        known = self.tables.get(name, {}).get(file)
        if known is None or known["url"] != url:
            return False
        if known["sha256"] != digest:
            raise FetchError(
                f"{name}/{file}: the sha256 of {url} is {digest}, but {self.path} recorded "
                f"{known['sha256']} for it. The file changed at an address that should never "
                f"change: refused, nothing was written."
            )
        return True

    def record(self, name: str, files: dict[str, dict[str, str]]) -> None:
        self.tables[name] = files
        _write_atomically(self.path, json.dumps({"tables": self.tables}, indent=2) + "\n")


def _write_atomically(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fetch(name: str, entry: Entry, dest: Path) -> list[str]:
    """Download the table's files, verify or record their digests, write the folder.
    Returns what happened, one line per file."""
    lock = Lock.read(dest)
    bodies: dict[str, bytes] = {}
    recorded: dict[str, dict[str, str]] = {}
    lines = []
    for file in FILES:
        url = entry.address(file)
        body = download(url)
        digest = sha256(body)
        known = lock.check(name, file, url, digest)
        lines.append(f"{name}/{file}: sha256 {digest} ({'verified' if known else 'recorded'})")
        bodies[file] = body
        recorded[file] = {"url": url, "sha256": digest}
    folder = dest / name
    for file, body in bodies.items():
        _write_atomically(folder / file, body)
    task = entry.task.model_dump(exclude_defaults=True)
    task.setdefault(
        "description",
        f"{name}, a table of the error-repair literature, from {entry.repository} at commit "
        f"{entry.commit}. Repair the cells that differ from its clean version; cells are "
        f"compared as text and the score is the net repair.",
    )
    _write_atomically(folder / "task.json", json.dumps(task, indent=2) + "\n")
    lock.record(name, recorded)
    return lines


def verify(name: str, dest: Path) -> str:
    """The files on disk against the lock (no network)."""
    lock = Lock.read(dest)
    files = lock.tables.get(name)
    if not files:
        raise FetchError(f"{name}: not fetched into {dest} (no entry in {lock.path})")
    for file, known in files.items():
        path = dest / name / file
        try:
            digest = sha256(path.read_bytes())
        except OSError as exc:
            raise FetchError(f"{name}/{file}: {exc}") from None
        if digest != known["sha256"]:
            raise FetchError(
                f"{path}: sha256 {digest}, but {known['sha256']} was fetched: the file was "
                f"changed on disk; fetch it again"
            )
    return f"{name}: {', '.join(files)} match {lock.path}"


def served_as(folder: Path) -> str:
    """How the server will see the folder: a task, or why it is skipped."""
    try:
        spec, dirty, _, plan = load_custom_task(folder)
    except NotATask as exc:
        return f"{folder.name}: the server will skip this folder: {exc}"
    return (
        f"{folder.name}: served as task {spec.task_id!r} ({len(dirty)} rows; its reference "
        f"repair takes {len(plan)} of its {spec.max_steps} steps)"
    )


def default_dest() -> Path:
    extra = [p for p in get_settings().extra_datasets.split(os.pathsep) if p.strip()]
    if extra:
        return Path(extra[0])
    return Path.home() / ".local" / "share" / "data-cleaning-openenv" / "datasets"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="dataclean-env-datasets",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help="the tables' sources")
    parser.add_argument("--to", type=Path, default=None, help="destination folder (DEST)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the tables, their pins, fetched or not")
    fetch_cmd = commands.add_parser("fetch", help="download, verify and write tables")
    fetch_cmd.add_argument("names", nargs="+", metavar="NAME", help="table names, or all")
    verify_cmd = commands.add_parser("verify", help="check fetched files against the lock")
    verify_cmd.add_argument("names", nargs="*", metavar="NAME", help="default: every fetched")
    args = parser.parse_args(argv)
    dest: Path = args.to or default_dest()
    try:
        return _run(args, dest)
    except FetchError as exc:
        print(f"dataclean-env-datasets: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, dest: Path) -> int:
    manifest = read_manifest(args.manifest)
    if args.command == "list":
        fetched = Lock.read(dest).tables
        for name, entry in manifest.tables.items():
            pin = entry.commit if _COMMIT.match(entry.commit) else "not pinned"
            state = "fetched" if name in fetched else "not fetched"
            print(f"{name}\t{entry.repository}@{pin}\t{state}")
        return 0
    if args.command == "verify":
        for name in args.names or list(Lock.read(dest).tables):
            print(verify(name, dest))
        return 0
    names = list(manifest.tables) if args.names == ["all"] else args.names
    unknown = [n for n in names if n not in manifest.tables]
    if unknown:
        raise FetchError(f"unknown tables {unknown}; known: {', '.join(manifest.tables)} or all")
    entries = {n: pinned(n, manifest.tables[n], args.manifest) for n in names}
    for name, entry in entries.items():
        for line in fetch(name, entry, dest):
            print(line)
        print(served_as(dest / name))
    print(f"serve them with EXTRA_DATASETS={dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
