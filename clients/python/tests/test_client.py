"""The blocking client against a real daemon."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import random
import struct

import pytest

from settingsd_client import (
    Client, ConnectionLost, DaemonNotRunning, FarDate, SettingsDate, SettingsdError, socket_path,
)
from settingsd_client.values import from_json, to_json

SEED = int(os.environ.get("SETTINGSD_SEED", random.randrange(1 << 63)))


def identical(a, b) -> bool:
    """Equal to the bit: -0.0 is not 0.0, NaN is NaN, 1 is not 1.0 or True."""
    if type(a) is not type(b) and not (isinstance(a, dt.datetime) and isinstance(b, dt.datetime)):
        if not (isinstance(a, (bytes, bytearray)) and isinstance(b, (bytes, bytearray))):
            return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, SettingsDate) and isinstance(b, SettingsDate):
        return struct.pack("<d", a.seconds) == struct.pack("<d", b.seconds)
    if isinstance(a, list):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(identical(a[k], b[k]) for k in a)
    return a == b


def random_dates(count: int, seed: int):
    generator = random.Random(seed)
    dates = []
    while len(dates) < count:
        seconds = struct.unpack("<d", generator.getrandbits(64).to_bytes(8, "little"))[0]
        if math.isfinite(seconds):
            dates.append(FarDate(seconds))
    return dates


VALUES = [
    True, False, 0, -1, (1 << 63) - 1, -(1 << 63), 0.1, -0.0, 0.0, math.nan, math.inf, -math.inf,
    5e-324, 1.7976931348623157e308, 1.0, 1e16, "", "café", "cafe\u0301", "line\nbreak\t\"q\"\\",
    "\x00\x01\x1f\x7f", "\U0001F600", b"", bytes(range(256)), [], {}, {"$data": "not data"},
    {"$dict": {}}, {"w": 800, "h": 600.5, "nested": [1, 2.5, "three", [True]]},
    "x" * ((1 << 20) - 8),
]


def test_every_value_type_comes_back_bit_for_bit(daemon):
    with Client(daemon.socket) as settings:
        for index, value in enumerate(VALUES):
            settings.set(f"v.{index}", value)
            assert identical(settings.get(f"v.{index}"), value), (index, value)


def test_random_dates_come_back_bit_for_bit_and_agree_with_the_cli(daemon):
    print(f"SETTINGSD_SEED={SEED}")
    dates = random_dates(40, SEED) + [FarDate(-0.0), FarDate(5e-324)]
    with Client(daemon.socket) as settings:
        for index, date in enumerate(dates):
            settings.set(f"d.{index}", date)
        read = settings.list("d.", values=True)
    cli = json.loads(daemon.cli("list", "d.", "--json").stdout)
    for index, date in enumerate(dates):
        got = read[f"d.{index}"]
        seconds = got.seconds
        assert struct.pack("<d", seconds) == struct.pack("<d", date.seconds), (index, date, got)
        assert struct.pack("<d", cli[f"d.{index}"]["$date"]) == struct.pack("<d", date.seconds)


def test_a_date_read_is_a_utc_datetime_and_written_back_unchanged(daemon):
    moment = dt.datetime(2026, 12, 1, 9, 30, 0, 123456, tzinfo=dt.timezone.utc)
    with Client(daemon.socket) as settings:
        settings.set("when", moment)
        read = settings.get("when")
        assert isinstance(read, dt.datetime) and read == moment and read.tzinfo is not None
        settings.set("copy", read)
        assert settings.get("copy").seconds == read.seconds
    assert daemon.cli("get", "when").stdout.strip() == "2026-12-01T09:30:00.123456Z"


def test_values_set_by_the_cli_read_the_same_in_python(daemon):
    for key, arguments, expected in [
        ("c.int", ["42", "--type", "int"], 42), ("c.double", ["0.5", "--type", "double"], 0.5),
        ("c.text", ["hello", "--type", "string"], "hello"), ("c.bool", ["true", "--type", "bool"], True),
        ("c.data", ["AAEC", "--type", "data"], b"\x00\x01\x02"),
        ("c.json", ['{"a": [1, {"$date": 0}]}', "--type", "json"], {"a": [1, FarDate(0.0)]}),
    ]:
        assert daemon.cli("set", key, *arguments).returncode == 0
        with Client(daemon.socket) as settings:
            value = settings.get(key)
            if key == "c.json":
                assert value["a"][0] == 1 and value["a"][1].seconds == 0.0
            else:
                assert identical(value, expected), (key, value)


def test_out_of_range_integers_and_non_values_are_refused_before_sending(daemon):
    with Client(daemon.socket) as settings:
        with pytest.raises(ValueError):
            settings.set("big", 1 << 63)
        with pytest.raises(TypeError):
            settings.set("none", None)
        with pytest.raises(TypeError):
            settings.set("set", {1, 2})
        assert settings.get("big") is None and settings.list() == []


def test_errors_carry_the_wire_code_and_message(daemon):
    with Client(daemon.socket) as settings:
        with pytest.raises(SettingsdError) as invalid:
            settings.set("bad\x01key", 1)
        assert invalid.value.code == "invalidKey" and "control character" in invalid.value.message
        with pytest.raises(SettingsdError) as long:
            settings.set("k" * 257, 1)
        assert long.value.code == "limitExceeded"
        with pytest.raises(SettingsdError) as big:
            settings.set("huge", "x" * (1 << 20))
        assert big.value.code == "limitExceeded"
        assert settings.get("still", "default") == "default"


def test_get_default_delete_and_list(daemon):
    with Client(daemon.socket) as settings:
        assert settings.get("missing") is None and settings.get("missing", 7) == 7
        settings.set("ui.theme", "dark")
        settings.set("ui.font", "Cantarell")
        settings.set("audio.volume", 0.5)
        assert settings.list() == ["audio.volume", "ui.font", "ui.theme"]
        assert settings.list("ui.", values=True) == {"ui.font": "Cantarell", "ui.theme": "dark"}
        assert settings.get_many(["ui.theme", "nope"]) == {"ui.theme": "dark"}
        assert settings.delete("ui.theme") is True and settings.delete("ui.theme") is False
        assert settings.get("ui.theme") is None


def test_a_transaction_is_atomic_and_its_last_change_of_a_key_wins(daemon):
    with Client(daemon.socket) as settings:
        with settings.transaction() as t:
            t["a"] = 1
            t["a"] = 2
            t.set("b", "x")
            t.delete("b")
        assert settings.get("a") == 2 and settings.get("b") is None
        with pytest.raises(SettingsdError):
            with settings.transaction() as t:
                t["c"] = 3
                t["bad\x01"] = 4
        assert settings.get("c") is None
        with pytest.raises(RuntimeError):
            with settings.transaction() as t:
                t["d"] = 5
                raise RuntimeError("nothing is written")
        assert settings.get("d") is None
        settings.set_many({"e": 1, "f": 2}, delete=["a"])
        assert settings.list() == ["e", "f"]


def test_import_of_any_size_and_export_round_trip(daemon):
    values = {f"bulk.{index:05}": "v" * 1000 + str(index) for index in range(2000)}
    values["when"] = FarDate(-0.0)
    with Client(daemon.socket) as settings:
        settings.set("old", 1)
        assert settings.import_(values, replace=True) == len(values)
        exported = settings.export()
        assert exported.keys() == values.keys()
        assert all(identical(exported[k], values[k]) for k in values if k != "when")
        assert struct.pack("<d", exported["when"].seconds) == struct.pack("<d", -0.0)


def test_status_history_describe_reset_and_revert(daemon):
    with Client(daemon.socket, name="pytest") as settings:
        settings.set("h.theme", "light")
        settings.set("h.theme", "dark")
        status = settings.status()
        assert status["replica"] == settings.replica and status["keys"] == 1
        records = settings.history("h.theme")
        assert [r.value for r in records] == ["dark", "light"] and records[0].previous == "light"
        assert records[0].reason == "local" and records[0].pid is not None
        settings.revert("h.theme", version=records[1].version)
        assert settings.get("h.theme") == "light"
        assert settings.history("h.theme", limit=1)[0].reason == "revert"
        assert settings.describe("h.theme")["value"] == "light"
        assert settings.reset("h.") == 1 and settings.get("h.theme") is None
        settings.set("h.again", 1)
        assert settings.reset_all() >= 1 and settings.list() == []


def test_pipeline_answers_in_order_with_errors_in_place(daemon):
    with Client(daemon.socket) as settings:
        pipeline = settings.pipeline()
        for index in range(5000):
            pipeline.set(f"p.{index}", index)
        pipeline.set("bad\x01", 1)
        results = pipeline.execute()
        assert isinstance(results[-1], SettingsdError) and results[-1].code == "invalidKey"
        gets = settings.pipeline()
        for index in range(5000):
            gets.get(f"p.{index}")
        assert gets.execute() == list(range(5000))


def test_a_missing_daemon_is_named(folder):
    with pytest.raises(DaemonNotRunning) as missing:
        Client(str(folder / "none.sock"))
    assert missing.value.code == "daemonNotRunning" and "none.sock" in str(missing.value)


def test_the_socket_is_found_as_the_cli_finds_it(monkeypatch):
    monkeypatch.setenv("SETTINGSD_SOCKET", "/run/x.sock")
    assert socket_path() == "/run/x.sock"
    monkeypatch.setenv("SETTINGSD_SOCKET", "")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    assert socket_path() == "/run/user/1000/settingsd/settingsd.sock"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert socket_path() == f"/tmp/settingsd-{os.getuid()}/settingsd.sock"


def test_the_json_form_matches_the_protocol_tables():
    assert to_json(-0.0) == -0.0 and json.dumps(to_json(-0.0)) == "-0.0"
    assert to_json(math.nan) == {"$double": "nan"} and to_json(-math.inf) == {"$double": "-inf"}
    assert to_json(b"\x00\x01\x02") == {"$data": "AAEC"}
    assert to_json({"$t": 1}) == {"$dict": {"$t": 1}}
    assert from_json({"$dict": {"$t": 1}}) == {"$t": 1}
    assert to_json(dt.datetime(2001, 1, 1, 0, 0, 1, 500000, tzinfo=dt.timezone.utc)) == {"$date": 1.5}
    with pytest.raises(ValueError):
        from_json({"$nope": 1})
    with pytest.raises(ValueError):
        deep = 1
        for _ in range(25):
            deep = [deep]
        to_json(deep)
