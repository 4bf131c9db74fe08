"""Watches that resume from a sequence, and compare-and-set writes that never lose an update."""

from __future__ import annotations

import asyncio
import multiprocessing
import subprocess

import pytest

from settingsd_client import Client, SettingsdError
from settingsd_client.aio import AsyncClient

from conftest import Daemon, settingsd_binary


def test_a_watch_since_a_sequence_replays_what_came_after_in_order_then_goes_live(daemon):
    with Client(daemon.socket) as settings:
        settings.set("s.before", 0)
        start = settings.set("s.mark", 1)
        for index in range(50):
            settings.set(f"s.k{index % 5}", index)
        with settings.watch(prefixes=["s."], since=start) as changes:
            heard = []
            while len(heard) < 50:
                change = changes.next(timeout=5)
                heard += [(c.key, c.value) for c in change.changes]
            assert heard == [(f"s.k{index % 5}", index) for index in range(50)]
            settings.set("s.live", True)
            live = changes.next(timeout=5)
            assert (live.reason, live.values) == ("local", {"s.live": True})
            assert live.sequence == changes.sequence == start + 51


def test_a_watch_since_a_point_the_history_lost_is_refused_naming_the_oldest(folder):
    running = Daemon(folder, ["--history-keep", "0"])
    try:
        with Client(running.socket) as settings:
            settings.set("k", 1)
            with pytest.raises(SettingsdError) as refused:
                settings.watch(since=0)
            assert refused.value.code == "historyCompacted"
            assert refused.value.oldest == 1
    finally:
        running.stop()


def test_after_the_daemon_restarts_a_watch_hears_what_changed_while_it_was_down(daemon):
    with Client(daemon.socket) as settings, settings.watch(prefixes=["r."]) as changes:
        settings.set("r.before", 1)
        assert changes.next(timeout=5).keys == ["r.before"]
        daemon.stop()
        # Written into the database while no daemon runs.
        subprocess.run([settingsd_binary(), "set", "r.down", "7", "--type", "int", "--db", daemon.database], check=True)
        daemon.start()
        missed = changes.next(timeout=15)
        assert (missed.reason, missed.values) == ("local", {"r.down": 7}), "replayed, no resync"
        settings.set("r.after", 2)
        after = changes.next(timeout=5)
        assert (after.reason, after.values) == ("local", {"r.after": 2})


def test_an_async_watch_since_a_sequence_replays_then_goes_live(daemon):
    async def run() -> None:
        async with AsyncClient(daemon.socket) as settings:
            start = await settings.set("a.k", 0)
            await settings.set("a.k", 1)
            async with settings.watch(prefixes=["a."], since=start) as changes:
                first = await changes.__anext__()
                assert first.values == {"a.k": 1}
                await settings.set("a.k", 2)
                second = await changes.__anext__()
                assert second.values == {"a.k": 2} and changes.sequence == second.sequence

    asyncio.run(run())


def _increment(socket: str, times: int) -> None:
    with Client(socket) as settings:
        for _ in range(times):
            settings.update("jobs.count", lambda count: count + 1, default=0)


def test_two_processes_updating_one_counter_never_lose_an_increment(daemon):
    workers = [multiprocessing.Process(target=_increment, args=(daemon.socket, 1000)) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    with Client(daemon.socket) as settings:
        assert settings.get("jobs.count") == 2000


def test_a_stale_version_writes_nothing_and_names_what_the_key_holds(daemon):
    with Client(daemon.socket) as settings:
        settings.set("c.a", 1)
        value, version = settings.get_versioned("c.a")
        assert value == 1 and "@" in version
        assert settings.get_versioned("c.none") == (None, None)
        settings.set("c.a", 2)
        with pytest.raises(SettingsdError) as stale:
            settings.set("c.a", 3, if_version=version)
        assert stale.value.code == "versionMismatch"
        assert stale.value.versions == {"c.a": settings.get_versioned("c.a")[1]}
        with pytest.raises(SettingsdError) as present:
            settings.delete("c.a", if_absent=True)
        assert present.value.code == "versionMismatch"
        with pytest.raises(SettingsdError):
            with settings.transaction() as transaction:
                transaction.set("c.b", 1, if_absent=True)
                transaction.set("c.a", 9, if_version=version)
        assert settings.get("c.a") == 2 and settings.get("c.b") is None
        assert settings.set("c.b", 1, if_absent=True) > 0
        with pytest.raises(ValueError):
            settings.set("c.b", 1, if_absent=True, if_version=version)


def test_revert_takes_to_as_the_cli_does_and_a_missing_daemon_says_how_to_start_one(daemon, folder):
    from settingsd_client import DaemonNotRunning

    with Client(daemon.socket) as settings:
        settings.set("r.k", 1)
        _, first = settings.get_versioned("r.k")
        settings.set("r.k", 2)
        settings.revert("r.k", to=first)
        assert settings.get("r.k") == 1
        assert settings.list("r.", values=True) == {"r.k": 1}
    with pytest.raises(DaemonNotRunning) as missing:
        Client(str(folder / "nothing.sock"))
    assert "settingsd run" in missing.value.message
