"""Starts real settingsd daemons for the tests, each on its own database and socket."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
from typing import Iterator, List, Optional

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "clients" / "python"))


def settingsd_binary() -> str:
    """`$SETTINGSD_BINARY`, else the package's debug build (built first if missing)."""
    explicit = os.environ.get("SETTINGSD_BINARY")
    if explicit:
        return explicit
    built = ROOT / ".build" / "debug" / "settingsd"
    if not built.exists():
        subprocess.run(["swift", "build", "--product", "settingsd"], cwd=ROOT, check=True)
    return str(built)


class Daemon:
    """A `settingsd run` process; `stop()` and `start()` keep its database and socket."""

    def __init__(self, folder: pathlib.Path, extra: Optional[List[str]] = None) -> None:
        self.folder = folder
        self.database = str(folder / "settings.sqlite")
        self.socket = str(folder / "settingsd.sock")
        self.extra = extra or []
        self.process: Optional[subprocess.Popen] = None
        self.start()

    def start(self) -> None:
        arguments = [
            settingsd_binary(), "run", "--db", self.database, "--socket", self.socket,
            "--log-level", "warning", "--schemas", str(self.folder / "no-schemas"),
            "--system-dir", str(self.folder / "no-system"),
        ] + self.extra
        self.process = subprocess.Popen(
            arguments, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if "listening on" not in line:
            self.process.wait(10)
            raise RuntimeError(f"settingsd did not start (status {self.process.returncode})")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(10)

    def cli(self, *arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [settingsd_binary(), *arguments, "--socket", self.socket],
            capture_output=True, text=True, timeout=30,
        )


@pytest.fixture
def folder() -> Iterator[pathlib.Path]:
    # Short paths: a Unix socket's path holds at most 107 bytes.
    path = pathlib.Path(tempfile.mkdtemp(prefix="sdpy-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def daemon(folder: pathlib.Path) -> Iterator[Daemon]:
    running = Daemon(folder)
    yield running
    running.stop()
