"""The asyncio client: the same operations as `Client`, as coroutines, over one connection that
pipelines every concurrent request; watches on connections of their own."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from .client import _NotSent
from .errors import ConnectionLost, DaemonNotRunning, SettingsdError
from .paths import socket_path as default_socket_path
from .protocol import (
    MAX_FRAME_BYTES, RESYNC, Call, Change, ChangeSet, HistoryRecord, Operations, Resumption, decode_frame,
    parse_change, raise_for,
)
from .trust import check_daemon
from .values import Value


class _AsyncConnection:
    """A Unix socket whose reader task routes answers to their requests and events to a queue."""

    def __init__(self, path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.path = path
        self.reader = reader
        self.writer = writer
        self.next_id = 1
        self.pending: Dict[int, "asyncio.Future[Dict[str, Any]]"] = {}
        self.events: "asyncio.Queue[Optional[Dict[str, Any]]]" = asyncio.Queue()
        self.failure: Optional[SettingsdError] = None
        self.task = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, path: str, trusted: Optional[Iterable[int]] = None) -> "_AsyncConnection":
        """Connects, and checks that a trusted user's process listens, before sending a byte."""
        try:
            reader, writer = await asyncio.open_unix_connection(path, limit=MAX_FRAME_BYTES)
        except OSError as error:
            raise DaemonNotRunning(path, error.strerror or str(error)) from None
        try:
            check_daemon(writer.get_extra_info("socket"), path, trusted)
        except BaseException:
            writer.close()
            raise
        return cls(path, reader, writer)

    async def _read(self) -> None:
        try:
            while True:
                try:
                    line = await self.reader.readuntil(b"\n")
                except asyncio.IncompleteReadError:
                    raise ConnectionLost(f"settingsd at {self.path} closed the connection") from None
                except asyncio.LimitOverrunError:
                    raise SettingsdError(
                        "protocolError", f"settingsd at {self.path} sent a frame over {MAX_FRAME_BYTES} bytes"
                    ) from None
                if not line.strip():
                    continue
                frame = decode_frame(line)
                if "event" in frame:
                    self.events.put_nowait(frame)
                    continue
                future = self.pending.pop(frame.get("id"), None) if frame.get("id") is not None else None
                if future is not None:
                    if not future.done():
                        future.set_result(frame)
                elif frame.get("ok") is False:
                    # An unsolicited error (overloaded, timeout): the daemon closes next.
                    error = frame.get("error") or {}
                    raise SettingsdError(str(error.get("code")), str(error.get("message")))
        except asyncio.CancelledError:
            self._fail(ConnectionLost("the connection was closed"))
            raise
        except SettingsdError as error:
            self._fail(error)
        except Exception as error:
            # Whatever ends the reader fails every caller waiting on it: none waits for ever.
            self._fail(ConnectionLost(f"reading from {self.path}: {error!r}"))

    def _fail(self, error: SettingsdError) -> None:
        self.failure = error
        for future in self.pending.values():
            if not future.done():
                future.set_exception(error)
        self.pending.clear()
        self.events.put_nowait(None)

    async def call(self, call: Call) -> Any:
        if self.failure is not None:
            raise self.failure
        request_id = self.next_id
        self.next_id += 1
        future: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        try:
            try:
                self.writer.write(call.frame(request_id))
                await self.writer.drain()
            except OSError as error:
                raise _NotSent(f"sending to {self.path}: {error}") from None
            answer = await future
        finally:
            # Answers route by id: one that comes after its caller gave up is dropped.
            self.pending.pop(request_id, None)
        return call.result(raise_for(answer))

    async def close(self) -> None:
        self.task.cancel()
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass
        try:
            await self.task
        except asyncio.CancelledError:
            pass


class AsyncClient:
    """The asyncio twin of `Client`: `async with AsyncClient() as settings: await settings.get(k)`.
    Concurrent calls share the connection, pipelined."""

    def __init__(
        self, socket_path: Optional[str] = None, *, name: Optional[str] = None,
        timeout: Optional[float] = 30.0, trusted_uids: Optional[Iterable[int]] = None,
    ) -> None:
        """`timeout` bounds each call as a whole, in seconds (None: wait for ever); the daemon
        must run as this user, root, or a uid in `trusted_uids` or `$SETTINGSD_TRUSTED_UIDS`."""
        self.socket_path = socket_path or default_socket_path()
        self.name = name
        self.timeout = timeout
        self.trusted_uids = list(trusted_uids or ())
        self.server: Dict[str, Any] = {}
        self._connection: Optional[_AsyncConnection] = None
        self._connecting: Optional[asyncio.Lock] = None

    async def connect(self) -> "AsyncClient":
        """Connects and says hello (done by `async with` and by the first call)."""
        await self._open()
        return self

    async def _open(self) -> _AsyncConnection:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._connection is not None and self._connection.failure is None:
                return self._connection
            if self._connection is not None:
                await self._connection.close()
                self._connection = None
            connection = await _AsyncConnection.open(self.socket_path, self.trusted_uids)
            try:
                self.server = await self._bounded(connection.call(Operations.hello(self.name)))
            except BaseException:
                await connection.close()
                raise
            self._connection = connection
            return connection

    async def _bounded(self, waiting: Any) -> Any:
        if self.timeout is None:
            return await waiting
        try:
            return await asyncio.wait_for(waiting, self.timeout)
        except asyncio.TimeoutError:
            raise SettingsdError(
                "timeout",
                f"settingsd at {self.socket_path} did not answer in {self.timeout} s; the request may or may not have been applied",
            ) from None

    async def _call(self, call: Call) -> Any:
        connection = await self._open()
        try:
            return await self._bounded(connection.call(call))
        except _NotSent:
            # The daemon went away before this request left: it never ran; send it again.
            connection.failure = connection.failure or ConnectionLost()
            return await self._bounded((await self._open()).call(call))

    @property
    def replica(self) -> Optional[str]:
        """The daemon's replica id, from its hello."""
        return self.server.get("replica")

    async def get(self, key: str, default: Any = None) -> Any:
        """The key's effective value, else `default`."""
        return await self._call(Operations.get(key, default))

    async def get_many(self, keys: Iterable[str]) -> Dict[str, Value]:
        """The values of those of `keys` that have one."""
        return await self._call(Operations.get_many(keys))

    async def get_versioned(self, key: str) -> Tuple[Optional[Value], Optional[str]]:
        """The stored value and its version (see `Client.get_versioned`)."""
        return await self._call(Operations.get_versioned(key))

    async def set(self, key: str, value: Any, *, if_version: Optional[str] = None, if_absent: bool = False) -> int:
        """Stores `value` durably; returns the daemon's sequence number after the write. With
        `if_version` or `if_absent`, only if the key holds that (see `Client.set`)."""
        return await self._call(Operations.set(key, value, if_version, if_absent))

    async def update(
        self, key: str, change: Callable[[Any], Any], default: Any = None, *, attempts: int = 1000
    ) -> Any:
        """Writes `change(value)` back by compare-and-set, retrying (see `Client.update`)."""
        for attempt in range(1, attempts + 1):
            value, version = await self.get_versioned(key)
            if version is None:
                value = await self.get(key, default)
            new = change(value)
            try:
                await self.set(key, new, if_version=version, if_absent=version is None)
                return new
            except SettingsdError as error:
                if error.code != "versionMismatch" or attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    async def set_many(self, values: Mapping[str, Any], delete: Iterable[str] = ()) -> int:
        """Stores `values` and deletes the keys in `delete`, all in one transaction."""
        return await self._call(Operations.set_many(values, delete))

    async def delete(self, key: str, *, if_version: Optional[str] = None, if_absent: bool = False) -> bool:
        """Deletes the key; whether it held a value (with a precondition, see `Client.set`)."""
        return await self._call(Operations.delete(key, if_version, if_absent))

    async def list(self, prefix: str = "", values: bool = False) -> Any:
        """The keys under `prefix` (a list, sorted); with `values=True`, a dict of each key to its
        value instead (what `settingsd list PREFIX` prints)."""
        return await self._call(Operations.list(prefix, values))

    async def status(self) -> Dict[str, Any]:
        """The daemon's status."""
        return await self._call(Operations.status())

    async def export(self, at: Any = None) -> Dict[str, Value]:
        """Every value; with `at`, as they were then."""
        return await self._call(Operations.export(at))

    async def import_(self, values: Mapping[str, Any], replace: bool = False) -> int:
        """Writes `values` in one transaction, sent in parts; how many were imported."""
        connection = await self._open()
        result = 0
        try:
            for call in Operations.import_parts(values, replace):
                result = await self._bounded(connection.call(call))
        except BaseException:
            # The daemon drops the parts it staged when the connection closes.
            connection.failure = connection.failure or ConnectionLost("an import was interrupted")
            raise
        return result

    async def describe(self, key: str) -> Dict[str, Any]:
        """Where the key's value comes from, its rule, lock and system default."""
        return await self._call(Operations.describe(key))

    async def reset(self, key_or_prefix: str) -> int:
        """Deletes the key, or every key under a prefix ending in `.`."""
        return await self._call(Operations.reset(key_or_prefix))

    async def reset_all(self) -> int:
        """Deletes every key but the locked ones; how many held a value."""
        return await self._call(Operations.reset_all())

    async def history(
        self, key: Optional[str] = None, *, since: Any = None, until: Any = None, limit: int = 100
    ) -> List[HistoryRecord]:
        """Recorded changes, newest first."""
        return await self._call(Operations.history(key, since, until, limit))

    async def revert(
        self, key: str, *, to: Optional[str] = None, before: Any = None, version: Optional[str] = None
    ) -> int:
        """Writes back the key's value of version `to` (as `settingsd revert KEY --to V`; `version`
        is the same), or the values under `key` (a key, or a prefix ending in `.`) as they were
        `before` a time (a datetime or ms since 1970). Returns how many keys changed."""
        if to is not None and version is not None and to != version:
            raise ValueError("revert takes one version: `to` (or its older name `version`)")
        return await self._call(Operations.revert(key, to if to is not None else version, before))

    def transaction(self) -> "AsyncTransaction":
        """`async with settings.transaction() as t: t["a"] = 1`: one `setMany` at the end."""
        return AsyncTransaction(self)

    def watch(
        self, keys: Optional[Iterable[str]] = None, prefixes: Optional[Iterable[str]] = None, *,
        since: Optional[int] = None, reconnect: bool = True,
    ) -> "AsyncWatch":
        """`async with settings.watch(prefixes=["ui."]) as changes: async for change in changes`;
        with `since`, the changes after it first, and a reconnection resumes (see `Client.watch`)."""
        return AsyncWatch(
            self.socket_path, keys, prefixes, since=since, reconnect=reconnect, name=self.name,
            trusted_uids=self.trusted_uids)

    async def close(self) -> None:
        """Closes the connection."""
        if self._connection is not None:
            await self._connection.close()
            self._connection = None

    async def __aenter__(self) -> "AsyncClient":
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class AsyncTransaction(ChangeSet):
    """Sets and deletes committed together when the `async with` block ends without error."""

    def __init__(self, client: AsyncClient) -> None:
        super().__init__()
        self._client = client

    async def __aenter__(self) -> "AsyncTransaction":
        return self

    async def __aexit__(self, kind: object, *exc: object) -> None:
        call = self._commit_call()
        if kind is None and call is not None:
            self.sequence = await self._client._call(call)


class AsyncWatch:
    """An async iterator of `Change`s on a connection of its own (see `AsyncClient.watch`)."""

    def __init__(
        self, path: str, keys: Optional[Iterable[str]], prefixes: Optional[Iterable[str]], *,
        since: Optional[int], reconnect: bool, name: Optional[str], trusted_uids: Optional[Iterable[int]] = None,
    ) -> None:
        self.path = path
        self._resume = Resumption(keys, prefixes, since)
        self._reconnect = reconnect
        self._name = name
        self._trusted = list(trusted_uids or ())
        self._connection: Optional[_AsyncConnection] = None
        self._closed = False

    @property
    def sequence(self) -> Optional[int]:
        """Every change through this sequence number was given: where to resume from."""
        return self._resume.delivered

    async def _subscribe(self, first: bool = False) -> _AsyncConnection:
        connection = await _AsyncConnection.open(self.path, self._trusted)
        try:
            replica = (await connection.call(Operations.hello(self._name))).get("replica")
            call = self._resume.call(replica)
            try:
                self._resume.registered(call, await connection.call(call), replica)
            except SettingsdError as error:
                if first or not self._resume.restarts_after(error):
                    raise
                fresh = self._resume.call(None)
                self._resume.registered(fresh, await connection.call(fresh), replica)
        except BaseException:
            await connection.close()
            raise
        return connection

    async def __aenter__(self) -> "AsyncWatch":
        self._connection = await self._subscribe(first=True)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __aiter__(self) -> "AsyncWatch":
        return self

    async def __anext__(self) -> Change:
        while not self._closed:
            if self._connection is None:
                self._connection = await self._wait_for_daemon()
                if not self._resume.resumed:
                    return RESYNC
                continue
            frame = await self._connection.events.get()
            if frame is not None:
                return self._resume.delivering(parse_change(frame))
            failure = self._connection.failure
            await self._connection.close()
            self._connection = None
            if not self._reconnect:
                raise failure or ConnectionLost()
        raise StopAsyncIteration

    async def _wait_for_daemon(self) -> _AsyncConnection:
        delay = 0.1
        while True:
            try:
                return await self._subscribe()
            except (DaemonNotRunning, ConnectionLost):
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def close(self) -> None:
        """Stops watching."""
        self._closed = True
        if self._connection is not None:
            await self._connection.close()
            self._connection = None


__all__ = ["AsyncClient", "AsyncTransaction", "AsyncWatch"]
