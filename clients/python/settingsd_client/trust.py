"""Who a client may take for its daemon: checked on the connected socket, before anything is
sent, as the Swift clients do."""

from __future__ import annotations

import os
import socket
import struct
from typing import Iterable, Optional, Set

from .errors import SettingsdError

_CREDENTIALS = struct.Struct("3i")


def trusted_uids(extra: Optional[Iterable[int]] = None) -> Set[int]:
    """This user, root, the uids in `$SETTINGSD_TRUSTED_UIDS` (comma-separated) and `extra`."""
    uids = {os.getuid(), 0}
    for part in os.environ.get("SETTINGSD_TRUSTED_UIDS", "").split(","):
        if part.strip().isdigit():
            uids.add(int(part.strip()))
    uids.update(extra or ())
    return uids


def check_daemon(sock: socket.socket, path: str, extra: Optional[Iterable[int]] = None) -> None:
    """Raises `accessDenied` unless the process listening on `sock` runs as a trusted user
    (anyone may make `/tmp/settingsd-<uid>` first and listen there)."""
    try:
        _, uid, _ = _CREDENTIALS.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDENTIALS.size))
    except OSError as error:
        raise SettingsdError("accessDenied", f"cannot tell who listens on {path}: {error}") from None
    if uid not in trusted_uids(extra):
        raise SettingsdError(
            "accessDenied",
            f"the process listening on {path} runs as uid {uid}, not as you (uid {os.getuid()}) or "
            f"root: not trusting it with your settings (if it is a daemon that user shares with you, "
            f"add {uid} to SETTINGSD_TRUSTED_UIDS)")


__all__ = ["check_daemon", "trusted_uids"]
