"""The release artefacts: `uv build` makes the sdist and the wheel, `twine check --strict`
accepts both (what the package index checks on upload), and their metadata carries the
version, licence and the README as the long description."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from dataclean_env import __version__

ROOT = Path(__file__).resolve().parents[2]
UV = shutil.which("uv")
TWINE = Path(sys.executable).parent / "twine"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if UV is None:
        pytest.skip("uv is not on PATH")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([UV, "build", "--out-dir", str(out)], cwd=ROOT, check=True, capture_output=True)
    return out


def test_twine_accepts_the_sdist_and_the_wheel(dist: Path) -> None:
    built = sorted(p.name for p in dist.iterdir() if p.suffix in {".whl", ".gz"})
    assert built == [
        f"data_cleaning_openenv-{__version__}-py3-none-any.whl",
        f"data_cleaning_openenv-{__version__}.tar.gz",
    ]
    result = subprocess.run(
        [str(TWINE), "check", "--strict", *(str(dist / name) for name in built)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASSED") == 2


def test_the_wheel_metadata_describes_the_package(dist: Path) -> None:
    wheel = next(dist.glob("*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(f"data_cleaning_openenv-{__version__}.dist-info/METADATA").decode()
    metadata = Parser().parsestr(text)
    assert metadata["Name"] == "data-cleaning-openenv"
    assert metadata["Version"] == __version__
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Requires-Python"] == "<3.14,>=3.11"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "Programming Language :: Python :: 3.11" in metadata.get_all("Classifier")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert metadata.get_payload().strip() == readme.strip()


def test_the_sdist_holds_the_source_and_the_changelog(dist: Path) -> None:
    with tarfile.open(next(dist.glob("*.tar.gz"))) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "uv.lock", "README.md", "CHANGELOG.md", "LICENSE"} <= names
    assert "dataclean_env/__init__.py" in names
    assert not any(n.startswith(("var/", "dist/", ".venv/")) for n in names)
