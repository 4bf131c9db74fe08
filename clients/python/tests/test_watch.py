"""Watches: filtering, reasons, refusals of nothing, and the resync when a restart cannot be replayed."""

from __future__ import annotations

import subprocess

import pytest

from settingsd_client import Client, ConnectionLost, SettingsdError
from settingsd_client.digest import digest

from conftest import Daemon, settingsd_binary


def test_a_watch_hears_only_its_keys_with_reasons_and_values(daemon):
    with Client(daemon.socket) as settings:
        with settings.watch(keys=["audio.volume"], prefixes=["ui."]) as changes:
            settings.set("ignored", 1)
            settings.set("ui.theme", "dark")
            settings.set_many({"ui.font": "Cantarell", "ignored.too": 2, "audio.volume": 0.5})
            settings.delete("ui.theme")
            settings.reset("ui.")
            first = changes.next(timeout=5)
            assert (first.reason, first.keys, first.values) == ("local", ["ui.theme"], {"ui.theme": "dark"})
            second = changes.next(timeout=5)
            assert sorted(second.keys) == ["audio.volume", "ui.font"]
            assert second.values == {"audio.volume": 0.5, "ui.font": "Cantarell"}
            third = changes.next(timeout=5)
            assert (third.reason, third.deleted) == ("local", ["ui.theme"])
            fourth = changes.next(timeout=5)
            assert (fourth.reason, fourth.deleted) == ("reset", ["ui.font"])
            assert all(change.version and "@" in change.version for change in first.changes)
            assert first.origin == settings.replica
            with pytest.raises(TimeoutError):
                changes.next(timeout=0.2)


def test_a_watch_of_nothing_is_refused(daemon):
    with Client(daemon.socket) as settings:
        with pytest.raises(SettingsdError) as refused:
            settings.watch(keys=[])
        assert refused.value.code == "protocolError"


def test_a_watch_says_resync_when_the_daemon_cannot_replay_what_it_missed(folder):
    running = Daemon(folder, ["--history-keep", "0"])
    try:
        with Client(running.socket) as settings, settings.watch(prefixes=["r."]) as changes:
            settings.set("r.before", 1)
            assert changes.next(timeout=5).keys == ["r.before"]
            running.stop()
            # Missed, and not in a history that is off: the watch can only say so.
            subprocess.run(
                [settingsd_binary(), "set", "r.down", "1", "--db", running.database], check=True)
            running.start()
            resync = changes.next(timeout=15)
            assert resync.reason == "resync" and resync.keys == []
            assert settings.get("r.down") == "1"  # the request connection reconnects too
            settings.set("r.after", 2)
            after = changes.next(timeout=5)
            assert (after.reason, after.values) == ("local", {"r.after": 2})
    finally:
        running.stop()


def test_without_reconnect_a_lost_daemon_ends_the_watch(daemon):
    with Client(daemon.socket) as settings:
        changes = settings.watch(reconnect=False)
        daemon.stop()
        with pytest.raises(ConnectionLost):
            changes.next(timeout=5)
        changes.close()


def test_the_digest_computed_from_docs_matches_the_daemons(daemon):
    """docs/SYNC.md defines the fingerprint: computed here from what a watch reports (versions
    included), it must equal the digest the daemon reports in status."""
    entries = {}
    with Client(daemon.socket) as settings, settings.watch() as changes:
        writes = [
            ("a", 1), ("b", -0.0), ("c", "café"), ("d", b"\x00\xff"), ("e", [1, {"x": True}]),
            ("f", {"$weird": 1.5, "z": [], "caf\u00e9": None}), ("b", 2.5),
        ]
        for key, value in writes:
            if value is None:
                continue
            if isinstance(value, dict):
                value = {k: v for k, v in value.items() if v is not None}
            settings.set(key, value)
        settings.delete("a")
        expected_events = len(writes) + 1
        for _ in range(expected_events):
            for change in changes.next(timeout=5).changes:
                entries[change.key] = (change.key, change.version, None if change.deleted else change.value)
        assert digest(entries.values()) == settings.status()["digest"]
