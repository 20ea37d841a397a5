"""Fixtures for the adapter's tests: real servers (mongobench's null test
server, embedded FerretDB through `mongobench serve`) and a harness that
speaks the client protocol with adapter.py as mongobench does.

The mongobench binary is $MONGOBENCH_BIN, or built once per session from
the repository with `go build`. Every process a test starts is bounded
(--for on servers, timeouts on every read) and killed at teardown.
"""

from __future__ import annotations

import json
import os
import pathlib
import queue
import subprocess
import sys
import threading
import time

import pytest
from bson import json_util

HERE = pathlib.Path(__file__).resolve().parent
ADAPTER = HERE.parent / "adapter.py"
REPO = HERE.parent.parent.parent

# Generous bounds: the test machine is shared and noisy. No test asserts on
# a duration; these only keep a broken adapter from hanging the suite.
READ_TIMEOUT_S = 60
SERVER_LIFETIME = "20m"


@pytest.fixture(scope="session")
def mongobench(tmp_path_factory) -> str:
    """Path of a mongobench binary."""
    if os.environ.get("MONGOBENCH_BIN"):
        return os.environ["MONGOBENCH_BIN"]
    out = tmp_path_factory.mktemp("bin") / "mongobench"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/mongobench"], cwd=REPO, check=True, timeout=900)
    return str(out)


class Server:
    """A server process that prints its connection string on stdout's first
    line and runs until terminated or --for elapses."""

    def __init__(self, argv: list[str]):
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        lines: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=lambda: lines.put(self.proc.stdout.readline()), daemon=True).start()
        try:
            self.uri = lines.get(timeout=120).strip()
        except queue.Empty:
            self.stop()
            raise RuntimeError(f"{argv[1]} printed no connection string in 120 s") from None
        if not self.uri.startswith("mongodb://"):
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            self.stop()
            raise RuntimeError(f"{argv[1]} printed {self.uri!r} instead of a URI: {err}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def null_server(mongobench):
    """mongobench's null wire-protocol server on an ephemeral loopback port."""
    s = Server([mongobench, "testserver", "--addr", "127.0.0.1:0", "--find-docs", "3", "--for", SERVER_LIFETIME])
    yield s.uri
    s.stop()


@pytest.fixture(scope="session")
def ferret(mongobench, tmp_path_factory):
    """Embedded FerretDB (a real database) through `mongobench serve`."""
    os.environ.setdefault("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    s = Server([mongobench, "serve", "--for", SERVER_LIFETIME])
    yield s.uri
    s.stop()


class Adapter:
    """One adapter process and the protocol's two directions."""

    def __init__(self, stack: str, extra_env: dict | None = None):
        env = dict(os.environ, **(extra_env or {}))
        self.proc = subprocess.Popen([sys.executable, str(ADAPTER), "--stack", stack],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.lines: queue.SimpleQueue = queue.SimpleQueue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def _read_err(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.decode(errors="replace"))

    def send(self, msg: dict) -> None:
        self.proc.stdin.write((json_util.dumps(msg, json_options=json_util.CANONICAL_JSON_OPTIONS) + "\n").encode())
        self.proc.stdin.flush()

    def recv(self, timeout: float = READ_TIMEOUT_S) -> dict | None:
        """The next message; None at EOF. Fails the test after timeout."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no message from the adapter in {timeout} s; stderr: {''.join(self.stderr)}")

    def expect(self, typ: str) -> dict:
        msg = self.recv()
        assert msg is not None and msg["type"] == typ, f"expected {typ}, got {msg}; stderr: {''.join(self.stderr)}"
        return msg

    def wait(self, timeout: float = READ_TIMEOUT_S) -> int:
        return self.proc.wait(timeout=timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass

    def run_phase(self, workers: int, ops_by_worker: dict[int, list], settle_s: float = 0) -> tuple[list, int, list]:
        """Runs one phase: sends each worker its operations in one batch,
        waits until every operation has a result, then stops. Returns the
        results (with the worker added first), the starved count and every
        message received."""
        self.send({"type": "phase", "phase": "run", "workers": workers})
        for w, ops in ops_by_worker.items():
            self.send({"type": "ops", "worker": w, "ops": ops})
        want = sum(len(o) for o in ops_by_worker.values())
        results, seen = [], []
        while len(results) < want:
            msg = self.recv()
            assert msg is not None, f"adapter ended; stderr: {''.join(self.stderr)}"
            seen.append(msg)
            if msg["type"] == "done":
                results += [[msg["worker"]] + r for r in msg["r"]]
            else:
                assert msg["type"] == "need", msg
        if settle_s:
            time.sleep(settle_s)
        self.send({"type": "stop"})
        while True:
            msg = self.recv()
            assert msg is not None
            seen.append(msg)
            if msg["type"] == "stopped":
                return results, msg["starved"], seen
            if msg["type"] == "done":
                results += [[msg["worker"]] + r for r in msg["r"]]


@pytest.fixture
def adapter_factory():
    started: list[Adapter] = []

    def start(stack: str, **kw) -> Adapter:
        a = Adapter(stack, **kw)
        started.append(a)
        return a

    yield start
    for a in started:
        a.close()


def init_msg(stack: str, uri: str, database: str, collections: list, operations: list, profile=None) -> dict:
    return {"type": "init", "protocol": 1, "stack": stack, "uri": uri, "database": database,
            "timeout_ms": 10000, "profile": profile, "collections": collections, "operations": operations}


STACKS = ["python-pymongo", "python-mongoengine"]
