"""Where the daemon listens, found exactly as the `settingsd` CLI finds it."""

from __future__ import annotations

import os


def socket_path() -> str:
    """`$SETTINGSD_SOCKET`, else `$XDG_RUNTIME_DIR/settingsd/settingsd.sock`, else
    `/tmp/settingsd-<uid>/settingsd.sock`."""
    explicit = os.environ.get("SETTINGSD_SOCKET")
    if explicit:
        return explicit
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "settingsd", "settingsd.sock")
    return f"/tmp/settingsd-{os.getuid()}/settingsd.sock"


__all__ = ["socket_path"]
