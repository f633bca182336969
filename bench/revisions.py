"""A revision of the repository as files, for a benchmark that measures it beside the working tree."""
from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export(rev: str, folder: Path) -> Path:
    """The repository at ``rev``, extracted into ``folder`` (nothing of the worktree is touched)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev],
                             capture_output=True, check=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder
