"""What the sync and asyncio clients share: frames, the operations as requests with the shape
of their results, and change events. Neither client does more than send these and wait."""

from __future__ import annotations

import datetime as _dt
import functools
import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import SettingsdError
from .values import Value, from_json, to_json

#: The wire protocol version this client speaks.
PROTOCOL_VERSION = 2
#: Export documents are sent in parts of about this many bytes, as `settingsd import` does.
IMPORT_PART_BYTES = 512 << 10
#: The largest frame a client accepts from the daemon, as the Swift clients (64 MiB): a daemon
#: that sends more without a newline is broken, or not settingsd.
MAX_FRAME_BYTES = 64 << 20

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode
_loads = json.loads


_scan = json.JSONDecoder().scan_once


def parse_frames(text: str) -> List[Dict[str, Any]]:
    """The frames of `text`, whole lines of JSON objects. JSON never holds a raw newline, so
    the lines are read as one JSON array: one parser call for a whole read of answers.

    Raises `SettingsdError` (`protocolError`) for anything but JSON objects, nesting too deep
    for the parser included."""
    try:
        try:
            frames, end = _scan("[" + text.replace("\n", ",") + "]", 0)
        except (ValueError, StopIteration):
            # Empty lines or a stray byte: frame by frame, so the error names the frame.
            frames = [_scan(line, 0)[0] for line in text.split("\n") if line.strip()]
    except (ValueError, StopIteration, RecursionError) as error:
        raise SettingsdError("protocolError", f"the daemon sent a malformed frame: {_reason(error)}") from None
    if not all(isinstance(frame, dict) for frame in frames):
        raise SettingsdError("protocolError", "the daemon sent a frame that is not a JSON object")
    return frames


def decode_frame(line: bytes) -> Dict[str, Any]:
    """A frame from the daemon (an answer or an event); `SettingsdError` (`protocolError`)
    for anything else."""
    try:
        frame = _loads(line)
    except (ValueError, RecursionError) as error:
        raise SettingsdError("protocolError", f"the daemon sent a malformed frame: {_reason(error)}") from None
    if not isinstance(frame, dict):
        raise SettingsdError("protocolError", "the daemon sent a frame that is not a JSON object")
    return frame


def _reason(error: BaseException) -> str:
    if isinstance(error, RecursionError):
        return "nested too deep"
    if isinstance(error, StopIteration):
        return "not JSON"
    return str(error)


def raise_for(answer: Dict[str, Any]) -> Dict[str, Any]:
    """The answer's fields, or its error raised."""
    if answer.get("ok") is True:
        return answer
    error = answer.get("error") or {}
    raise SettingsdError(
        str(error.get("code", "protocolError")), str(error.get("message", "no message")), error)


class Call:
    """One request and what to make of its answer. `body` is the request's JSON after its id
    (`"op":...}` and the newline), built once however the request is sent."""

    __slots__ = ("op", "fields", "result", "body")

    def __init__(
        self, op: str, fields: Dict[str, Any],
        result: Callable[[Dict[str, Any]], Any] = lambda answer: None, body: Optional[str] = None,
    ) -> None:
        self.op = op
        self.fields = fields
        self.result = result
        if body is None:
            members = {"op": op}
            members.update(fields)
            body = _dumps(members)[1:] + "\n"
        self.body = body

    def frame(self, request_id: int) -> bytes:
        """The request's frame under `request_id`."""
        return ('{"id":%d,%s' % (request_id, self.body)).encode("utf-8")


@dataclass(frozen=True)
class KeyChange:
    """One key in a change: its new `value` (None when `deleted`), and its `version`. For a
    refusal (`refused` set: reasons `quotaViolation`, `schemaViolation`) the state it kept."""

    key: str
    value: Optional[Value]
    version: Optional[str]
    deleted: bool = False
    refused: Optional[str] = None


@dataclass(frozen=True)
class Change:
    """A change event: the keys of one commit a watch selects, and why they changed.

    `sequence` is the daemon's number for the change: start a watch `since` it to hear what
    came after. `reason` is one of docs/PROTOCOL.md's reasons, or `resync`: the watch reconnected
    after losing its daemon and could not replay what it missed (the history no longer reaches
    back so far, or another store answers), and `keys` is empty (re-read what you show).
    """

    reason: str
    origin: Optional[str]
    changes: Tuple[KeyChange, ...] = ()
    sequence: Optional[int] = None

    @property
    def keys(self) -> List[str]:
        """The changed keys, in the order they were written."""
        return [change.key for change in self.changes]

    @property
    def values(self) -> Dict[str, Value]:
        """The new values of the keys that hold one (deleted and refused keys are absent)."""
        return {c.key: c.value for c in self.changes if c.value is not None and c.refused is None}

    @property
    def deleted(self) -> List[str]:
        """The keys deleted by this change."""
        return [change.key for change in self.changes if change.deleted]


def parse_change(event: Dict[str, Any]) -> Change:
    """The `Change` of an event frame."""
    changes = []
    for member in event.get("changes", ()):
        value = member.get("value")
        changes.append(
            KeyChange(
                key=member["key"],
                value=None if value is None else from_json(value),
                version=member.get("version"),
                deleted=member.get("deleted") is True,
                refused=member.get("refused"),
            )
        )
    return Change(
        reason=event["reason"], origin=event.get("origin"), changes=tuple(changes), sequence=event.get("sequence"))


RESYNC = Change(reason="resync", origin=None)


@dataclass(frozen=True)
class HistoryRecord:
    """One recorded change of a key (docs/PROTOCOL.md, `history`)."""

    key: str
    value: Optional[Value]
    previous: Optional[Value]
    deleted: bool
    version: str
    sequence: int
    reason: str
    replica: str
    time: _dt.datetime
    uid: Optional[int] = None
    pid: Optional[int] = None
    exe: Optional[str] = None
    redacted: bool = False


def _record(member: Dict[str, Any]) -> HistoryRecord:
    def value(name: str) -> Optional[Value]:
        return None if member.get(name) is None else from_json(member[name])

    return HistoryRecord(
        key=member["key"], value=value("value"), previous=value("previous"),
        deleted=member.get("deleted") is True, version=member["version"], sequence=member["sequence"],
        reason=member["reason"], replica=member["replica"],
        time=_dt.datetime.fromtimestamp(member["timeMs"] / 1000, _dt.timezone.utc),
        uid=member.get("uid"), pid=member.get("pid"), exe=member.get("exe"),
        redacted=member.get("redacted") is True,
    )


def _milliseconds(moment: Union[None, int, float, _dt.datetime]) -> Optional[int]:
    if moment is None:
        return None
    if isinstance(moment, _dt.datetime):
        aware = moment if moment.tzinfo is not None else moment.astimezone()
        return int(aware.timestamp() * 1000)
    return int(moment)


def _values(answer: Dict[str, Any], name: str = "values") -> Dict[str, Value]:
    return {key: from_json(json_value) for key, json_value in answer.get(name, {}).items()}


def _precondition(fields: Dict[str, Any], if_version: Optional[str], if_absent: bool) -> Dict[str, Any]:
    """`fields` with the precondition a write carries: a version, or no value at all."""
    if if_version is not None and if_absent:
        raise ValueError("a write takes if_version or if_absent, not both")
    if if_version is not None:
        fields["ifVersion"] = if_version
    if if_absent:
        fields["ifAbsent"] = True
    return fields


class Resumption:
    """Where a watch stands: its filter, the last sequence number it gave and in which
    daemon's numbering, so a reconnection resumes from there (both clients' watches)."""

    def __init__(self, keys: Optional[Iterable[str]], prefixes: Optional[Iterable[str]], since: Optional[int]) -> None:
        self.keys = None if keys is None else list(keys)
        self.prefixes = None if prefixes is None else list(prefixes)
        #: Every change through this number was given (None: none known yet).
        self.delivered: Optional[int] = since
        #: The daemon whose numbers `delivered` counts (None: the first one met).
        self.replica: Optional[str] = None
        #: Whether the last registration resumed from `delivered`.
        self.resumed = since is not None

    def call(self, replica: Optional[str]) -> Call:
        """The `watch` to send to the daemon `replica`: from `delivered` when it numbers them."""
        since = self.delivered if self.replica is None or self.replica == replica else None
        return Operations.watch(self.keys, self.prefixes, since)

    def registered(self, call: Call, answer: Any, replica: Optional[str]) -> None:
        """Notes the daemon's answer to `call`: a fresh watch starts at the daemon's number."""
        _, sequence = answer
        self.resumed = "since" in call.fields
        if not self.resumed:
            self.delivered = sequence
        self.replica = replica

    def restarts_after(self, error: "SettingsdError") -> bool:
        """Whether a resumption refused with `error` starts afresh (with a `resync`)."""
        if error.code not in ("historyCompacted", "invalidValue"):
            return False
        self.delivered = None
        return True

    def delivering(self, change: Change) -> Change:
        """Notes `change` as given, and returns it."""
        if change.sequence is not None:
            self.delivered = max(self.delivered or 0, change.sequence)
        return change


class ChangeSet:
    """Sets and deletes collected in order, committed together as one `setMany` (the base of
    both clients' transactions: `t["k"] = v`, `t.set(k, v)`, `del t["k"]`, `t.delete(k)`)."""

    def __init__(self) -> None:
        self._changes: List[Tuple[str, Any, bool, Dict[str, Any]]] = []
        #: The daemon's sequence number after the commit (None until committed, or if empty).
        self.sequence: Optional[int] = None

    def set(self, key: str, value: Any, *, if_version: Optional[str] = None, if_absent: bool = False) -> None:
        """Sets `key` when the transaction commits; with `if_version` or `if_absent`, the whole
        transaction commits only if the key holds that (`versionMismatch` otherwise)."""
        self._changes.append((key, value, False, _precondition({}, if_version, if_absent)))

    def delete(self, key: str, *, if_version: Optional[str] = None, if_absent: bool = False) -> None:
        """Deletes `key` when the transaction commits (with a precondition, see `set`)."""
        self._changes.append((key, None, True, _precondition({}, if_version, if_absent)))

    def __setitem__(self, key: str, value: Any) -> None:
        self.set(key, value)

    def __delitem__(self, key: str) -> None:
        self.delete(key)

    def _commit_call(self) -> Optional[Call]:
        """The `setMany` to send, or None when nothing was changed."""
        return Operations.changes(self._changes) if self._changes else None


@functools.lru_cache(maxsize=4096)
def _get_body(key: str) -> str:
    return '"op":"get","key":' + _dumps(key) + "}\n"


class Operations:
    """The daemon's operations as `Call`s (docs/PROTOCOL.md, "Operations")."""

    @staticmethod
    def hello(name: Optional[str]) -> Call:
        fields: Dict[str, Any] = {"version": PROTOCOL_VERSION, "role": "client"}
        if name:
            fields["name"] = name
        return Call("hello", fields, lambda answer: answer)

    @staticmethod
    def get(key: str, default: Any = None) -> Call:
        return Call(
            "get", {"key": key}, lambda a: from_json(a["value"]) if a.get("found") else default,
            body=_get_body(key),
        )

    @staticmethod
    def get_many(keys: Iterable[str]) -> Call:
        return Call("getMany", {"keys": list(keys)}, _values)

    @staticmethod
    def get_versioned(key: str) -> Call:
        """The stored value and its version, without defaults or locks: (None, None) when none."""
        return Call(
            "get", {"key": key, "stored": True},
            lambda a: (from_json(a["value"]), a["version"]) if a.get("found") else (None, None))

    @staticmethod
    def set(key: str, value: Any, if_version: Optional[str] = None, if_absent: bool = False) -> Call:
        return Call(
            "set", _precondition({"key": key, "value": to_json(value)}, if_version, if_absent),
            lambda a: a.get("sequence"))

    @staticmethod
    def set_many(values: Mapping[str, Any], delete: Iterable[str] = ()) -> Call:
        changes: List[Dict[str, Any]] = [
            {"key": key, "value": to_json(value)} for key, value in values.items()
        ]
        changes += [{"key": key, "delete": True} for key in delete]
        return Call("setMany", {"changes": changes}, lambda a: a.get("sequence"))

    @staticmethod
    def changes(changes: Sequence[Tuple[str, Any, bool, Dict[str, Any]]]) -> Call:
        """A `setMany` of (key, value, is_delete, precondition) in order: a key named twice ends
        with its last."""
        body = [
            {"key": key, "delete": True, **condition} if is_delete
            else {"key": key, "value": to_json(value), **condition}
            for key, value, is_delete, condition in changes
        ]
        return Call("setMany", {"changes": body}, lambda a: a.get("sequence"))

    @staticmethod
    def delete(key: str, if_version: Optional[str] = None, if_absent: bool = False) -> Call:
        return Call(
            "delete", _precondition({"key": key}, if_version, if_absent), lambda a: a.get("existed") is True)

    @staticmethod
    def list(prefix: str = "", values: bool = False) -> Call:
        if values:
            return Call("list", {"prefix": prefix, "values": True}, _values)
        return Call("list", {"prefix": prefix}, lambda a: list(a.get("keys", ())))

    @staticmethod
    def watch(
        keys: Optional[Iterable[str]], prefixes: Optional[Iterable[str]], since: Optional[int] = None
    ) -> Call:
        fields: Dict[str, Any] = {}
        if since is not None:
            fields["since"] = since
        if keys is not None:
            fields["keys"] = list(keys)
        if prefixes is not None:
            fields["prefixes"] = list(prefixes)
        return Call("watch", fields, lambda a: (a["watch"], a.get("sequence")))

    @staticmethod
    def status() -> Call:
        return Call("status", {}, lambda a: {k: v for k, v in a.items() if k not in ("id", "ok")})

    @staticmethod
    def export(at: Union[None, int, float, _dt.datetime] = None) -> Call:
        fields = {} if at is None else {"at": _milliseconds(at)}
        return Call("export", fields, lambda a: _values(a["document"]))

    @staticmethod
    def import_parts(values: Mapping[str, Any], replace: bool) -> List[Call]:
        """`importPart`s of about `IMPORT_PART_BYTES` each, then the `import` that commits them."""
        parts: List[Dict[str, Any]] = []
        current: Dict[str, Any] = {}
        size = 0
        for key in sorted(values):
            encoded = to_json(values[key])
            cost = len(key) * 6 + len(_dumps(encoded)) + 8
            if current and size + cost > IMPORT_PART_BYTES:
                parts.append(current)
                current, size = {}, 0
            current[key] = encoded
            size += cost
        parts.append(current)
        calls = [
            Call("importPart", {"document": {"format": "settingsd-export", "version": 2, "values": part}})
            for part in parts[:-1]
        ]
        last = {"format": "settingsd-export", "version": 2, "values": parts[-1]}
        calls.append(
            Call("import", {"document": last, "replace": replace}, lambda a: len(values))
        )
        return calls

    @staticmethod
    def describe(key: str) -> Call:
        def shape(answer: Dict[str, Any]) -> Dict[str, Any]:
            described = {k: v for k, v in answer.items() if k not in ("id", "ok")}
            for name in ("value", "systemDefault"):
                if name in described:
                    described[name] = from_json(described[name])
            return described

        return Call("describe", {"key": key}, shape)

    @staticmethod
    def reset(key_or_prefix: str) -> Call:
        return Call("reset", {"key": key_or_prefix}, lambda a: a.get("removed", 0))

    @staticmethod
    def reset_all() -> Call:
        return Call("reset", {"all": True}, lambda a: a.get("removed", 0))

    @staticmethod
    def history(
        key: Optional[str], since: Any, until: Any, limit: int
    ) -> Call:
        fields: Dict[str, Any] = {"limit": limit}
        if key is not None:
            fields["key"] = key
        if since is not None:
            fields["since"] = _milliseconds(since)
        if until is not None:
            fields["until"] = _milliseconds(until)
        return Call("history", fields, lambda a: [_record(r) for r in a.get("records", ())])

    @staticmethod
    def revert(key: str, version: Optional[str], before: Any) -> Call:
        if (version is None) == (before is None):
            raise ValueError("revert needs exactly one of version and before")
        fields: Dict[str, Any] = {"key": key}
        if version is not None:
            fields["version"] = version
        else:
            fields["before"] = _milliseconds(before)
        return Call("revert", fields, lambda a: a.get("reverted", 1))


__all__ = [
    "Call", "Change", "ChangeSet", "HistoryRecord", "KeyChange", "Operations", "PROTOCOL_VERSION", "RESYNC",
    "Resumption",
    "decode_frame", "parse_change", "parse_frames", "raise_for",
]
