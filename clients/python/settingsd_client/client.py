"""The blocking client: one connection for requests, one more per watch."""

from __future__ import annotations

import errno
import select
import socket
import struct
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple

from .errors import ConnectionLost, DaemonNotRunning, SettingsdError
from .paths import socket_path as default_socket_path
from .protocol import (
    MAX_FRAME_BYTES, RESYNC, Call, Change, ChangeSet, HistoryRecord, Operations, Resumption, parse_change,
    parse_frames, raise_for,
)
from .trust import check_daemon
from .values import Value

_READ_BYTES = 256 << 10
#: Requests a pipeline keeps in flight before it reads their answers.
PIPELINE_WINDOW = 1024


class _NotSent(ConnectionLost):
    """The connection was found broken while sending: the request did not reach any daemon."""


class _Connection:
    """A Unix socket speaking newline-framed JSON to a daemon checked to run as a trusted user.
    Frames are parsed a whole read at a time, so a pipeline's answers cost one UTF-8 decode per
    read and one scan per frame. Every wait is bounded by a deadline for the whole answer (a
    daemon that trickles bytes cannot stretch it), and no frame may exceed `MAX_FRAME_BYTES`."""

    def __init__(self, path: str, timeout: Optional[float], trusted: Optional[Iterable[int]] = None) -> None:
        self.path = path
        self.timeout = timeout
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except OSError as error:
            self.sock.close()
            raise DaemonNotRunning(path, error.strerror or str(error)) from None
        try:
            check_daemon(self.sock, path, trusted)
        except BaseException:
            self.sock.close()
            raise
        self.buffer = bytearray()
        self.scanned = 0
        self.frames: Deque[Dict[str, Any]] = deque()
        self.next_id = 1

    def deadline(self) -> Optional[float]:
        """When an answer asked for now must have come, by the monotonic clock (None: never)."""
        return None if self.timeout is None else time.monotonic() + self.timeout

    def _wait(self, deadline: Optional[float]) -> None:
        if deadline is None:
            self.sock.settimeout(None)
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SettingsdError("timeout", f"settingsd at {self.path} did not answer in time")
        self.sock.settimeout(remaining)

    def send(self, data: bytes, deadline: Optional[float]) -> None:
        try:
            self._wait(deadline)
            self.sock.sendall(data)
        except socket.timeout:
            raise SettingsdError("timeout", f"settingsd at {self.path} is not reading") from None
        except OSError as error:
            raise _NotSent(f"sending to {self.path}: {error}") from None

    def frame(self, deadline: Optional[float]) -> Dict[str, Any]:
        """The next frame, waiting until `deadline` (monotonic seconds; None: for ever)."""
        while not self.frames:
            try:
                self._wait(deadline)
                chunk = self.sock.recv(_READ_BYTES)
            except socket.timeout:
                raise SettingsdError("timeout", f"settingsd at {self.path} did not answer in time") from None
            except OSError as error:
                raise ConnectionLost(f"reading from {self.path}: {error}") from None
            if not chunk:
                raise ConnectionLost(f"settingsd at {self.path} closed the connection")
            self._parse(chunk)
        return self.frames.popleft()

    def _parse(self, chunk: bytes) -> None:
        buffer = self.buffer
        buffer += chunk
        last = buffer.rfind(b"\n", self.scanned)
        if last < 0:
            self.scanned = len(buffer)
            if len(buffer) > MAX_FRAME_BYTES:
                raise SettingsdError(
                    "protocolError", f"settingsd at {self.path} sent a frame over {MAX_FRAME_BYTES} bytes")
            return
        complete = bytes(buffer[:last])
        del buffer[:last + 1]
        self.scanned = 0
        try:
            text = complete.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SettingsdError("protocolError", f"settingsd at {self.path} sent invalid UTF-8: {error}") from None
        self.frames.extend(parse_frames(text))

    def answer(self, request_id: int, deadline: Optional[float]) -> Dict[str, Any]:
        """The answer to `request_id`. Events before it belong to no one here and are dropped;
        so are answers to earlier requests, whose callers gave up on them."""
        while True:
            frame = self.frame(deadline)
            frame_id = frame.get("id")
            if frame_id == request_id:
                return frame
            if "event" in frame:
                continue
            if frame_id is None and frame.get("ok") is False:
                raise_for(frame)
            if isinstance(frame_id, int) and not isinstance(frame_id, bool) and 0 < frame_id < request_id:
                continue
            raise SettingsdError("protocolError", f"answer {frame_id} came for request {request_id}")

    def exchange(self, call: Call) -> Dict[str, Any]:
        """Sends `call` and returns its answer frame, an error answer included."""
        request_id = self.next_id
        self.next_id += 1
        deadline = self.deadline()
        self.send(call.frame(request_id), deadline)
        return self.answer(request_id, deadline)

    def call(self, call: Call) -> Any:
        return call.result(raise_for(self.exchange(call)))

    def close(self) -> None:
        self.sock.close()


def _unsure(error: BaseException) -> BaseException:
    """`error` met between a request and its answer, saying that the request may have run."""
    suffix = "; the request may or may not have been applied"
    if isinstance(error, ConnectionLost):
        return ConnectionLost(error.message + suffix)
    if isinstance(error, SettingsdError) and error.code == "timeout":
        return SettingsdError("timeout", error.message + suffix)
    return error


class Client:
    """A connection to settingsd. Methods block until the daemon answered; a write returns once
    it is durable. Use as a context manager, or call `close()`.

    >>> with Client() as settings:
    ...     settings.set("ui.theme", "dark")
    ...     settings.get("ui.theme")
    'dark'
    """

    def __init__(
        self, socket_path: Optional[str] = None, *, timeout: Optional[float] = 30.0,
        name: Optional[str] = None, trusted_uids: Optional[Iterable[int]] = None,
    ) -> None:
        """Connects to `socket_path` (default: as the CLI finds it) and says hello.

        `timeout` bounds each call as a whole, in seconds (None: wait for ever). The daemon
        must run as this user or root, or as a uid in `trusted_uids` or
        `$SETTINGSD_TRUSTED_UIDS`; anything else listening there is refused before a byte is
        sent. Raises `DaemonNotRunning` when nothing answers there.
        """
        self.socket_path = socket_path or default_socket_path()
        self.timeout = timeout
        self.name = name
        self.trusted_uids = list(trusted_uids or ())
        self._connection: Optional[_Connection] = None
        self.server: Dict[str, Any] = {}
        self._connect()

    def _connect(self) -> _Connection:
        connection = _Connection(self.socket_path, self.timeout, self.trusted_uids)
        try:
            self.server = connection.call(Operations.hello(self.name))
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return connection

    def _drop(self, connection: _Connection) -> None:
        connection.close()
        if self._connection is connection:
            self._connection = None

    def _exchange(self, connection: _Connection, call: Call) -> Dict[str, Any]:
        """The answer to `call` on `connection`. Anything that interrupts the exchange (a
        time-out, Ctrl-C, a broken or hostile daemon) drops the connection, so no later call
        can read this one's answer as its own."""
        try:
            return connection.exchange(call)
        except _NotSent:
            self._drop(connection)
            raise
        except BaseException as error:
            self._drop(connection)
            raise _unsure(error) from None

    def _call(self, call: Call) -> Any:
        connection = self._connection or self._connect()
        try:
            answer = self._exchange(connection, call)
        except _NotSent:
            # The daemon went away (a restart) before this request left: it never ran, so it
            # is sent once more on a fresh connection.
            answer = self._exchange(self._connect(), call)
        return call.result(raise_for(answer))

    @property
    def replica(self) -> Optional[str]:
        """The daemon's replica id, from its hello."""
        return self.server.get("replica")

    def get(self, key: str, default: Any = None) -> Any:
        """The key's effective value (stored, else a system or schema default), else `default`."""
        return self._call(Operations.get(key, default))

    def get_many(self, keys: Iterable[str]) -> Dict[str, Value]:
        """The values of those of `keys` that have one."""
        return self._call(Operations.get_many(keys))

    def get_versioned(self, key: str) -> Tuple[Optional[Value], Optional[str]]:
        """The value stored for `key` (no default, no lock) and its version, as `if_version`
        takes it; (None, None) when it holds none."""
        return self._call(Operations.get_versioned(key))

    def set(self, key: str, value: Any, *, if_version: Optional[str] = None, if_absent: bool = False) -> int:
        """Stores `value`; returns the daemon's sequence number after the write.

        With `if_version`, only if the key's stored value still has that version (from
        `get_versioned`); with `if_absent`, only if it holds none. Otherwise nothing is written
        and `SettingsdError` with code `versionMismatch` is raised, its `versions` naming what
        the key holds."""
        return self._call(Operations.set(key, value, if_version, if_absent))

    def update(self, key: str, change: Callable[[Any], Any], default: Any = None, *, attempts: int = 1000) -> Any:
        """Reads `key` (`default` when it holds nothing), writes `change(value)` back only if no
        other write came in between, and retries otherwise: two processes incrementing a
        counter this way never lose an increment. Returns the value written."""
        for attempt in range(1, attempts + 1):
            value, version = self.get_versioned(key)
            if version is None:
                value = self.get(key, default)
            new = change(value)
            try:
                self.set(key, new, if_version=version, if_absent=version is None)
                return new
            except SettingsdError as error:
                if error.code != "versionMismatch" or attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    def set_many(self, values: Mapping[str, Any], delete: Iterable[str] = ()) -> int:
        """Stores `values` and deletes the keys in `delete`, all in one transaction."""
        return self._call(Operations.set_many(values, delete))

    def delete(self, key: str, *, if_version: Optional[str] = None, if_absent: bool = False) -> bool:
        """Deletes the key (reads return its default again); whether it held a value. With
        `if_version` or `if_absent`, only if it holds that (see `set`)."""
        return self._call(Operations.delete(key, if_version, if_absent))

    def list(self, prefix: str = "", values: bool = False) -> Any:
        """The keys under `prefix` (a list, sorted); with `values=True`, a dict of each key to its
        value instead (what `settingsd list PREFIX` prints)."""
        return self._call(Operations.list(prefix, values))

    def status(self) -> Dict[str, Any]:
        """The daemon's status (docs/PROTOCOL.md, `status`)."""
        return self._call(Operations.status())

    def export(self, at: Any = None) -> Dict[str, Value]:
        """Every value; with `at` (a datetime or ms since 1970), as they were then."""
        return self._call(Operations.export(at))

    def import_(self, values: Mapping[str, Any], replace: bool = False) -> int:
        """Writes `values` in one transaction (`replace`: and deletes every other key); any
        size, sent in parts. Returns how many values were imported."""
        connection = self._connection or self._connect()
        result = 0
        for call in Operations.import_parts(values, replace):
            # A broken exchange drops the connection, and with it the daemon's staged parts.
            result = call.result(raise_for(self._exchange(connection, call)))
        return result

    def describe(self, key: str) -> Dict[str, Any]:
        """Where the key's value comes from, its schema rule, lock and system default."""
        return self._call(Operations.describe(key))

    def reset(self, key_or_prefix: str) -> int:
        """Deletes the key, or every key under a prefix ending in `.`; how many held a value."""
        return self._call(Operations.reset(key_or_prefix))

    def reset_all(self) -> int:
        """Deletes every key but the locked ones; how many held a value."""
        return self._call(Operations.reset_all())

    def history(
        self, key: Optional[str] = None, *, since: Any = None, until: Any = None, limit: int = 100
    ) -> List[HistoryRecord]:
        """Recorded changes, newest first, of a key or a prefix ending in `.` (None: all)."""
        return self._call(Operations.history(key, since, until, limit))

    def revert(
        self, key: str, *, to: Optional[str] = None, before: Any = None, version: Optional[str] = None
    ) -> int:
        """Writes back the key's value of version `to` (as `settingsd revert KEY --to V`; `version`
        is the same), or the values under `key` (a key, or a prefix ending in `.`) as they were
        `before` a time (a datetime or ms since 1970). Returns how many keys changed."""
        if to is not None and version is not None and to != version:
            raise ValueError("revert takes one version: `to` (or its older name `version`)")
        return self._call(Operations.revert(key, to if to is not None else version, before))

    def transaction(self) -> "Transaction":
        """Collects sets and deletes, and commits them as one `setMany` when the block ends
        without an exception (nothing is written otherwise)."""
        return Transaction(self)

    def pipeline(self) -> "Pipeline":
        """Queues requests and sends them without waiting for each answer."""
        return Pipeline(self)

    def watch(
        self, keys: Optional[Iterable[str]] = None, prefixes: Optional[Iterable[str]] = None, *,
        since: Optional[int] = None, reconnect: bool = True,
    ) -> "Watch":
        """Changes of `keys` and keys under `prefixes` (neither: every key), on a connection of
        their own; with `since` (a change's `sequence`), first those after it, from the
        daemon's history (`historyCompacted` when it no longer reaches back so far). With
        `reconnect`, a lost daemon is waited for and the watch resumes from the last change it
        gave; a `resync` change says when it could not."""
        return Watch(
            self.socket_path, keys, prefixes, since=since, reconnect=reconnect, name=self.name,
            trusted_uids=self.trusted_uids)

    def close(self) -> None:
        """Closes the connection."""
        if self._connection:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Transaction(ChangeSet):
    """Sets and deletes committed together (see `Client.transaction`)."""

    def __init__(self, client: Client) -> None:
        super().__init__()
        self._client = client

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        call = self._commit_call()
        if kind is None and call is not None:
            self.sequence = self._client._call(call)


class Pipeline:
    """Requests sent back to back; `execute()` returns their results in order. A failed
    request's result is its `SettingsdError` (it does not stop the others)."""

    def __init__(self, client: Client) -> None:
        self._client = client
        self._calls: List[Call] = []

    def get(self, key: str, default: Any = None) -> "Pipeline":
        self._calls.append(Operations.get(key, default))
        return self

    def set(self, key: str, value: Any) -> "Pipeline":
        self._calls.append(Operations.set(key, value))
        return self

    def delete(self, key: str) -> "Pipeline":
        self._calls.append(Operations.delete(key))
        return self

    def execute(self) -> List[Any]:
        """Sends every queued request, at most `PIPELINE_WINDOW` ahead of its answers."""
        client = self._client
        connection = client._connection or client._connect()
        calls, self._calls = self._calls, []
        first = connection.next_id
        connection.next_id += len(calls)
        results: List[Any] = []
        frames = connection.frames
        try:
            sent = 0
            count = len(calls)
            while len(results) < count:
                if sent < count and sent - len(results) < PIPELINE_WINDOW:
                    upto = min(count, sent + PIPELINE_WINDOW)
                    connection.send(
                        b"".join([calls[i].frame(first + i) for i in range(sent, upto)]), connection.deadline())
                    sent = upto
                if not frames:
                    frames.appendleft(connection.frame(connection.deadline()))
                while frames and len(results) < sent:
                    index = len(results)
                    answer = frames.popleft()
                    if answer.get("id") != first + index:
                        frames.appendleft(answer)
                        answer = connection.answer(first + index, connection.deadline())
                    if answer.get("ok") is True:
                        results.append(calls[index].result(answer))
                    else:
                        try:
                            raise_for(answer)
                        except SettingsdError as error:
                            results.append(error)
        except BaseException as error:
            # Interrupted (a time-out, Ctrl-C, a broken daemon): answers still on their way must
            # never be read by a later call, and some of these requests may have run.
            client._drop(connection)
            raise _unsure(error) from None
        return results

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc: object) -> None:
        self._calls = []


class Watch:
    """An iterator of `Change`s; close it (or use `with`) to stop watching."""

    def __init__(
        self, path: str, keys: Optional[Iterable[str]], prefixes: Optional[Iterable[str]], *,
        since: Optional[int], reconnect: bool, name: Optional[str], trusted_uids: Optional[Iterable[int]] = None,
    ) -> None:
        self.path = path
        self._resume = Resumption(keys, prefixes, since)
        self._reconnect = reconnect
        self._name = name
        self._trusted = list(trusted_uids or ())
        self._closed = False
        self._connection: Optional[_Connection] = self._subscribe(first=True)

    @property
    def sequence(self) -> Optional[int]:
        """Every change through this sequence number was given: where to resume from."""
        return self._resume.delivered

    def _subscribe(self, first: bool = False) -> _Connection:
        connection = _Connection(self.path, 30.0, self._trusted)
        try:
            replica = connection.call(Operations.hello(self._name)).get("replica")
            call = self._resume.call(replica)
            try:
                self._resume.registered(call, connection.call(call), replica)
            except SettingsdError as error:
                if first or not self._resume.restarts_after(error):
                    raise
                fresh = self._resume.call(None)
                self._resume.registered(fresh, connection.call(fresh), replica)
        except BaseException:
            connection.close()
            raise
        return connection

    def next(self, timeout: Optional[float] = None) -> Change:
        """The next change; waits at most `timeout` seconds (None: for ever), then raises
        `TimeoutError`. After a reconnect that could not resume, the next change is a `resync`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._closed:
            if self._connection is None:
                self._connection = self._wait_for_daemon(deadline)
                if not self._resume.resumed:
                    return RESYNC
                continue
            try:
                frame = self._connection.frame(deadline)
                if frame.get("ok") is False and "event" not in frame:
                    raise_for(frame)
            except SettingsdError as error:
                if error.code == "timeout" and deadline is not None and time.monotonic() >= deadline:
                    # Nothing was half read: the watch stays as it is.
                    raise TimeoutError(f"no change from {self.path} within {timeout} s") from None
                self._connection.close()
                self._connection = None
                if error.code not in ("connectionLost", "overloaded", "timeout") or not self._reconnect:
                    raise
                continue
            if frame.get("event") == "change":
                return self._resume.delivering(parse_change(frame))
        raise StopIteration

    def _wait_for_daemon(self, deadline: Optional[float]) -> _Connection:
        delay = 0.1
        while True:
            try:
                return self._subscribe()
            except (DaemonNotRunning, ConnectionLost):
                if deadline is not None and time.monotonic() + delay > deadline:
                    raise TimeoutError(f"settingsd at {self.path} did not come back in time") from None
                time.sleep(delay)
                delay = min(delay * 2, 5.0)

    def __iter__(self) -> Iterator[Change]:
        return self

    def __next__(self) -> Change:
        return self.next()

    def close(self) -> None:
        """Stops watching."""
        self._closed = True
        if self._connection:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Client", "Pipeline", "Transaction", "Watch"]
