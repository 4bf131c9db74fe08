"""The replica digest of docs/SYNC.md ("The digest, exactly"), so a peer or a tool can compute
a store's digest and bucket sums itself and compare them with `status`."""

from __future__ import annotations

import struct
import unicodedata
import uuid
from typing import Iterable, Optional, Tuple

from .values import Value, encode_value_seconds

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
BUCKET_COUNT = 4096


class _State:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = _GOLDEN

    def mix(self, word: int) -> None:
        z = ((self.value ^ (word & _MASK)) + _GOLDEN) & _MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        self.value = z ^ (z >> 31)

    def mix_bytes(self, data: bytes) -> None:
        self.mix(len(data))
        whole = len(data) - len(data) % 8
        for (word,) in struct.iter_unpack("<Q", data[:whole]):
            self.mix(word)
        self.mix(int.from_bytes(data[whole:], "little"))

    def mix_text(self, text: str) -> None:
        self.mix_bytes(text.encode("utf-8"))

    def mix_value(self, value: Value) -> None:
        if isinstance(value, bool):
            self.mix(2 if value else 1)
        elif isinstance(value, int):
            self.mix(3)
            self.mix(value & _MASK)
        elif isinstance(value, float):
            self.mix(4)
            self.mix(struct.unpack("<Q", struct.pack("<d", value))[0])
        elif isinstance(value, str):
            self.mix(5)
            self.mix_text(value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            self.mix(6)
            self.mix_bytes(bytes(value))
        elif isinstance(value, (list, tuple)):
            self.mix(8)
            self.mix(len(value))
            for element in value:
                self.mix_value(element)
        elif isinstance(value, dict):
            self.mix(9)
            self.mix(len(value))
            for name in sorted(value, key=lambda name: unicodedata.normalize("NFC", name)):
                self.mix_text(name)
                self.mix_value(value[name])
        else:
            seconds = encode_value_seconds(value)
            self.mix(7)
            self.mix(struct.unpack("<Q", struct.pack("<d", seconds))[0])


def parse_version(version: str) -> Tuple[int, uuid.UUID]:
    """The 64-bit stamp and the replica of a version written `milliseconds.counter@uuid`."""
    stamp, _, replica = version.partition("@")
    milliseconds, _, counter = stamp.partition(".")
    return (int(milliseconds) << 16) | int(counter), uuid.UUID(replica)


def fingerprint(key: str, version: str, value: Optional[Value], deleted: bool = False) -> int:
    """One entry's fingerprint; `deleted` (or a value of None) for a tombstone."""
    stamp, replica = parse_version(version)
    state = _State()
    state.mix_text(key)
    state.mix(stamp)
    state.mix_bytes(replica.bytes)
    if deleted or value is None:
        state.mix(0)
    else:
        state.mix_value(value)
    return state.value


def bucket(key: str) -> int:
    """The bucket (0 to 4095) a key's entry is summed in."""
    state = _State()
    state.mix_text(key)
    return state.value >> 52


def digest(entries: Iterable[Tuple[str, str, Optional[Value]]]) -> str:
    """The digest of (key, version, value or None) entries, as `status` writes it."""
    total = 0
    for key, version, value in entries:
        total = (total + fingerprint(key, version, value)) & _MASK
    return format(total, "016x")


__all__ = ["BUCKET_COUNT", "bucket", "digest", "fingerprint", "parse_version"]
