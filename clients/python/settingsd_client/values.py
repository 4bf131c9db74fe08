"""Settings values in Python, and their JSON form on the wire (docs/PROTOCOL.md, "Values").

bool, int (64-bit), float (NaN, infinities and -0.0 included), str, bytes for data, datetime for
dates, lists and dicts of these. A date read from the daemon is a `SettingsDate`: a UTC
`datetime` that remembers the exact seconds it came from, so writing it back changes no bit.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Dict, List, Union

#: The reference date dates count from (2001-01-01T00:00:00Z), as the store keeps them.
REFERENCE_DATE = _dt.datetime(2001, 1, 1, tzinfo=_dt.timezone.utc)
_MICROSECOND = _dt.timedelta(microseconds=1)
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1
_MAX_DEPTH = 24

Value = Union[bool, int, float, str, bytes, _dt.datetime, "FarDate", List[Any], Dict[str, Any]]


class SettingsDate(_dt.datetime):
    """A date read from settingsd: a timezone-aware UTC `datetime` (to the microsecond) that
    keeps `seconds`, the exact seconds since 2001 it was read from. Written back unchanged, it
    travels as those seconds bit for bit; arithmetic on it gives a plain `datetime`."""

    __slots__ = ("_seconds",)

    @classmethod
    def _from_seconds(cls, seconds: float) -> "SettingsDate":
        moment = REFERENCE_DATE + _dt.timedelta(seconds=seconds)
        date = cls(
            moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second,
            moment.microsecond, tzinfo=_dt.timezone.utc,
        )
        date._seconds = seconds
        return date

    @property
    def seconds(self) -> float:
        """The exact seconds since 2001-01-01T00:00:00Z this date was read as."""
        return self._seconds


class FarDate:
    """A date outside `datetime`'s years 1 to 9999 (the store keeps any finite double of
    seconds since 2001): carried as its `seconds` exactly."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        if not math.isfinite(seconds):
            raise ValueError("a date must be finite")
        self.seconds = float(seconds)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FarDate) and _same_float(self.seconds, other.seconds)

    def __hash__(self) -> int:
        return hash(self.seconds)

    def __repr__(self) -> str:
        return f"FarDate({self.seconds!r})"


def _same_float(a: float, b: float) -> bool:
    return a == b and math.copysign(1, a) == math.copysign(1, b) or (a != a and b != b)


def encode_value_seconds(value: Any) -> float:
    """A date's seconds since 2001: exact for dates read from the daemon, correctly rounded
    from the microseconds of any other `datetime` (naive ones are local time, as in Python)."""
    if isinstance(value, SettingsDate):
        return value.seconds
    if isinstance(value, FarDate):
        return value.seconds
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo is not None else value.astimezone()
        return ((aware - REFERENCE_DATE) // _MICROSECOND) / 1_000_000
    raise TypeError(f"{type(value).__name__} is not a settings value")


def to_json(value: Any, depth: int = 0) -> Any:
    """The JSON form of a value, ready for `json.dumps`."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise ValueError(f"{value} is outside the 64-bit integer range")
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return {"$double": "nan"}
        if math.isinf(value):
            return {"$double": "inf" if value > 0 else "-inf"}
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        import base64

        return {"$data": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (_dt.datetime, FarDate)):
        return {"$date": encode_value_seconds(value)}
    if depth >= _MAX_DEPTH:
        raise ValueError(f"a value nests at most {_MAX_DEPTH} levels deep")
    if isinstance(value, (list, tuple)):
        return [to_json(element, depth + 1) for element in value]
    if isinstance(value, dict):
        members = {}
        for name, member in value.items():
            if not isinstance(name, str):
                raise TypeError(f"dictionary keys must be str, not {type(name).__name__}")
            members[name] = to_json(member, depth + 1)
        if len(members) == 1 and next(iter(members)).startswith("$"):
            return {"$dict": members}
        return members
    if value is None:
        raise TypeError("None is not a value (delete the key instead)")
    raise TypeError(f"{type(value).__name__} is not a settings value")


def from_json(json: Any) -> Value:
    """The value of a JSON form read from the daemon."""
    if isinstance(json, dict):
        if len(json) == 1:
            (tag, payload), = json.items()
            if tag.startswith("$"):
                return _tagged(tag, payload)
        return {name: from_json(member) for name, member in json.items()}
    if isinstance(json, list):
        return [from_json(element) for element in json]
    if json is None:
        raise ValueError("null is not a value")
    return json


def _tagged(tag: str, payload: Any) -> Value:
    if tag == "$data" and isinstance(payload, str):
        import base64

        return base64.b64decode(payload, validate=True)
    if tag == "$date" and isinstance(payload, (int, float)) and not isinstance(payload, bool):
        seconds = float(payload)
        try:
            return SettingsDate._from_seconds(seconds)
        except OverflowError:
            return FarDate(seconds)
    if tag == "$double" and payload in ("nan", "inf", "-inf"):
        return float(payload)
    if tag == "$dict" and isinstance(payload, dict):
        return {name: from_json(member) for name, member in payload.items()}
    raise ValueError(f"malformed tagged value {tag!r}")


__all__ = ["FarDate", "REFERENCE_DATE", "SettingsDate", "Value", "from_json", "to_json"]
