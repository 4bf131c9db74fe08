"""Errors: each carries the wire's `code` and `message` (docs/PROTOCOL.md, "Error codes")."""

from __future__ import annotations

from typing import Any, Dict, Optional


class SettingsdError(Exception):
    """An error answered by the daemon, or met while talking to it.

    `code` is the wire's code (`invalidKey`, `limitExceeded`, `locked`, ...) or one of the
    client's own: `daemonNotRunning`, `connectionLost`, `timeout`.
    """

    def __init__(self, code: str, message: str, details: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        details = details or {}
        #: For `versionMismatch`: each key whose precondition failed, with the version it holds
        #: (None: it holds no value).
        self.versions: Dict[str, Optional[str]] = dict(details.get("versions") or {})
        #: For `historyCompacted`: the oldest sequence number a watch can start from.
        self.oldest: Optional[int] = details.get("oldest")


class DaemonNotRunning(SettingsdError):
    """No daemon answers at the socket path."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(
            "daemonNotRunning", f"no settingsd at {path}: {reason}; start one with 'settingsd run'")
        self.path = path


class ConnectionLost(SettingsdError):
    """The connection broke before the answer came; the request may or may not have run."""

    def __init__(self, message: str = "the connection to settingsd was lost") -> None:
        super().__init__("connectionLost", message)


__all__ = ["ConnectionLost", "DaemonNotRunning", "SettingsdError"]
