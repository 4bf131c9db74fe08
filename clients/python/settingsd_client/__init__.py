"""settingsd's official Python client (docs/PROTOCOL.md): typed settings over the daemon's
socket, watches that survive a daemon restart, and an asyncio twin.

    from settingsd_client import Client

    with Client() as settings:
        settings.set("ui.theme", "dark")
        with settings.watch(prefixes=["ui."]) as changes:
            for change in changes:
                print(change.reason, change.values)
"""

from .aio import AsyncClient, AsyncTransaction, AsyncWatch
from .client import Client, Pipeline, Transaction, Watch
from .errors import ConnectionLost, DaemonNotRunning, SettingsdError
from .paths import socket_path
from .protocol import PROTOCOL_VERSION, Change, HistoryRecord, KeyChange
from .values import REFERENCE_DATE, FarDate, SettingsDate

__version__ = "0.1.0"

__all__ = [
    "AsyncClient", "AsyncTransaction", "AsyncWatch", "Change", "Client", "ConnectionLost",
    "DaemonNotRunning", "FarDate", "HistoryRecord", "KeyChange", "PROTOCOL_VERSION", "Pipeline",
    "REFERENCE_DATE", "SettingsDate", "SettingsdError", "Transaction", "Watch", "socket_path",
]
