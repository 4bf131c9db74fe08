"""The asyncio twin: the same operations, pipelined concurrency, async watches that resume."""

from __future__ import annotations

import asyncio
import math
import subprocess

import pytest

from settingsd_client import AsyncClient, SettingsdError

from conftest import settingsd_binary


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


def test_async_reads_writes_and_errors(daemon):
    async def scenario():
        async with AsyncClient(daemon.socket) as settings:
            await settings.set("a.x", -0.0)
            value = await settings.get("a.x")
            assert value == 0.0 and math.copysign(1, value) == -1
            assert await settings.get("missing", "fallback") == "fallback"
            await asyncio.gather(*(settings.set(f"many.{i}", i) for i in range(500)))
            values = await asyncio.gather(*(settings.get(f"many.{i}") for i in range(500)))
            assert values == list(range(500))
            async with settings.transaction() as t:
                t["t.a"] = 1
                t.delete("a.x")
            assert await settings.list("t.") == ["t.a"] and await settings.get("a.x") is None
            with pytest.raises(SettingsdError) as error:
                await settings.set("", 1)
            assert error.value.code == "invalidKey"
            assert (await settings.status())["replica"] == settings.replica
            assert await settings.import_({"i.a": 1, "i.b": [1, 2]}) == 2
            assert (await settings.export())["i.b"] == [1, 2]

    run(scenario())


def test_async_watch_filters_and_resumes_after_a_restart(daemon):
    async def scenario():
        async with AsyncClient(daemon.socket) as settings:
            async with settings.watch(prefixes=["w."]) as changes:
                await settings.set("other", 1)
                await settings.set("w.a", "one")
                change = await changes.__anext__()
                assert (change.reason, change.values) == ("local", {"w.a": "one"})
                daemon.stop()
                # Written while no daemon runs: the resumed watch hears it first, no resync.
                subprocess.run(
                    [settingsd_binary(), "set", "w.down", "x", "--db", daemon.database], check=True)
                await asyncio.get_running_loop().run_in_executor(None, daemon.start)
                missed = await changes.__anext__()
                assert (missed.reason, missed.values) == ("local", {"w.down": "x"})
                await settings.set("w.b", 2)
                async for change in changes:
                    assert change.values == {"w.b": 2}
                    break

    run(scenario())
