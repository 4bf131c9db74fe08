"""The client against daemons that misbehave, and against processes posing as one: every call
ends within its time-out with a `SettingsdError`, memory stays bounded, and nothing is sent to
a process of another user."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import signal
import socket
import threading
import time
from typing import Callable, Iterator, List

import pytest

from settingsd_client import AsyncClient, Client, SettingsdError
from settingsd_client.protocol import MAX_FRAME_BYTES

HELLO = {"ok": True, "version": 2, "replica": "00000000-0000-0000-0000-000000000001", "server": "fake"}


class FakeDaemon:
    """A listener that answers the hello like settingsd, then runs `behave(connection)` for
    each later request. Records every byte it received."""

    def __init__(self, path: str, behave: Callable[[socket.socket, int], None]) -> None:
        self.path = path
        self.received = bytearray()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        self.behave = behave
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._talk, args=(connection,), daemon=True).start()

    def _talk(self, connection: socket.socket) -> None:
        buffer = b""
        try:
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                self.received += chunk
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    request = json.loads(line)
                    if request.get("op") == "hello":
                        connection.sendall(json.dumps({"id": request["id"], **HELLO}).encode() + b"\n")
                    else:
                        self.behave(connection, request["id"])
        except OSError:
            return

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def fake(folder: pathlib.Path):
    made: List[FakeDaemon] = []

    def make(behave: Callable[[socket.socket, int], None]) -> FakeDaemon:
        daemon = FakeDaemon(str(folder / "fake.sock"), behave)
        made.append(daemon)
        return daemon

    yield make
    for daemon in made:
        daemon.close()


def endless_line(connection: socket.socket, request_id: int) -> None:
    block = b"x" * (1 << 20)
    end = time.monotonic() + 10
    while time.monotonic() < end:
        connection.sendall(block)


def trickle(connection: socket.socket, request_id: int) -> None:
    frame = json.dumps({"id": request_id, "ok": True, "value": 1}).encode() + b"\n"
    for byte in frame:
        connection.sendall(bytes([byte]))
        time.sleep(0.2)


def deep(connection: socket.socket, request_id: int) -> None:
    depth = 100_000
    connection.sendall(b'{"id": %d, "ok": true, "value": ' % request_id + b"[" * depth + b"]" * depth + b"}\n")


def test_a_line_without_end_is_refused_at_the_frame_cap(fake) -> None:
    daemon = fake(endless_line)
    client = Client(daemon.path, timeout=30)
    started = time.monotonic()
    with pytest.raises(SettingsdError) as raised:
        client.get("k")
    assert raised.value.code == "protocolError"
    assert str(MAX_FRAME_BYTES) in raised.value.message
    assert time.monotonic() - started < 10


def test_a_trickling_daemon_cannot_stretch_the_time_out(fake) -> None:
    daemon = fake(trickle)
    client = Client(daemon.path, timeout=1)
    started = time.monotonic()
    with pytest.raises(SettingsdError) as raised:
        client.get("k")
    assert raised.value.code == "timeout"
    assert "may or may not have been applied" in raised.value.message
    assert time.monotonic() - started < 2.5


def test_a_frame_nested_too_deep_is_a_protocol_error(fake) -> None:
    daemon = fake(deep)
    with pytest.raises(SettingsdError) as raised:
        Client(daemon.path, timeout=5).get("k")
    assert raised.value.code == "protocolError"

    async def asynchronously() -> None:
        async with AsyncClient(daemon.path, timeout=5) as client:
            await client.get("k")

    started = time.monotonic()
    with pytest.raises(SettingsdError):
        asyncio.run(asynchronously())
    assert time.monotonic() - started < 5


def test_the_async_client_refuses_an_endless_line(fake) -> None:
    daemon = fake(endless_line)

    async def asynchronously() -> None:
        async with AsyncClient(daemon.path, timeout=20) as client:
            await client.get("k")

    with pytest.raises(SettingsdError) as raised:
        asyncio.run(asynchronously())
    assert raised.value.code in ("protocolError", "connectionLost")


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to listen as another user")
def test_a_process_of_another_user_is_never_sent_anything(folder: pathlib.Path) -> None:
    path = str(folder / "impostor.sock")
    os.chmod(folder, 0o777)
    ready = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.setgid(65534)
            os.setuid(65534)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(path)
            os.chmod(path, 0o666)
            listener.listen(4)
            os.write(ready[1], b"1")
            connection, _ = listener.accept()
            connection.settimeout(3)
            received = connection.recv(65536)
            os._exit(3 if received else 0)
        except BaseException:
            os._exit(2)
    assert os.read(ready[0], 1) == b"1"
    with pytest.raises(SettingsdError) as raised:
        Client(path, timeout=5)
    assert raised.value.code == "accessDenied"
    assert "uid 65534" in raised.value.message
    _, status = os.waitpid(child, 0)
    assert os.WEXITSTATUS(status) == 0, "the impostor received bytes"


def test_a_timed_out_pipeline_leaves_no_stale_answers(daemon) -> None:
    client = Client(daemon.socket, timeout=0.5)
    client.set("x", 0)
    os.kill(daemon.process.pid, signal.SIGSTOP)
    try:
        with pytest.raises(SettingsdError) as raised:
            client.pipeline().set("a", 1).set("b", 2).set("c", 3).execute()
        assert raised.value.code == "timeout"
    finally:
        os.kill(daemon.process.pid, signal.SIGCONT)
    assert client.set("y", 2) > 0
    assert client.get("y") == 2
    assert client.get("x") == 0
    fresh = Client(daemon.socket)
    assert fresh.get("y") == 2


@contextlib.contextmanager
def _interrupted_while_stopped(daemon) -> Iterator[None]:
    """The daemon stopped (SIGSTOP) and Ctrl-C 0.3 s into the block, which must raise
    `KeyboardInterrupt`; the daemon runs again afterwards."""
    os.kill(daemon.process.pid, signal.SIGSTOP)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            yield
    finally:
        timer.cancel()
        os.kill(daemon.process.pid, signal.SIGCONT)


def test_an_interrupt_mid_call_drops_the_connection(daemon) -> None:
    client = Client(daemon.socket, timeout=5)
    client.set("before", 1)
    with _interrupted_while_stopped(daemon):
        client.set("during", 1)
    # The interrupted call's answer arrives on the dropped connection, never on the next one.
    assert client.get("before") == 1
    assert client.set("after", 2) > 0
    assert client.get("after") == 2


def test_an_interrupt_mid_pipeline_drops_the_connection_and_no_answer_strays(daemon) -> None:
    client = Client(daemon.socket, timeout=5)
    client.set("before", 1)
    with _interrupted_while_stopped(daemon):
        client.pipeline().set("p.a", 1).set("p.b", 2).get("before").execute()
    assert client.get("before") == 1
    assert client.set("after", 2) > 0
    assert client.get("after") == 2
