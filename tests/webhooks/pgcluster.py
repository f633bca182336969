"""A PostgreSQL cluster of one test's own, that the test can stop and start again (the database
"going down" for real, not a mock)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile

from ..postgres import _as_postgres, _bindir, _free_port


class StoppableCluster:
    def __init__(self) -> None:
        self.bindir = _bindir()
        self.root = tempfile.mkdtemp(prefix="checkout-pg-down-")
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self.data = os.path.join(self.root, "data")
        self.port = _free_port()
        subprocess.run(_as_postgres([f"{self.bindir}/initdb", "-D", self.data, "-U", "app",
                                     "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8",
                                     "--no-sync"]), check=True, capture_output=True)
        self.url = f"postgresql+psycopg://app@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        subprocess.run(_as_postgres([
            f"{self.bindir}/pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "log"), "-w",
            "-o", f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off",
            "start"]), check=True, capture_output=True)

    def stop(self) -> None:
        subprocess.run(_as_postgres([f"{self.bindir}/pg_ctl", "-D", self.data, "-m", "fast",
                                     "-w", "stop"]), check=True, capture_output=True)

    def remove(self) -> None:
        subprocess.run(_as_postgres([f"{self.bindir}/pg_ctl", "-D", self.data, "-m", "immediate",
                                     "-w", "stop"]), capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)

    def _processes(self) -> list[int]:
        """The postmaster and every process it started."""
        with open(os.path.join(self.data, "postmaster.pid")) as pid_file:
            postmaster = int(pid_file.readline())
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                                  text=True).stdout.split()
        return [postmaster, *map(int, children)]

    def freeze(self) -> None:
        """Every process of the cluster stopped (SIGSTOP): connections are still accepted by the
        kernel, and nothing ever answers. What the checkout's time limits must bound."""
        for pid in self._processes():
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self._processes():
            os.kill(pid, signal.SIGCONT)
