"""Where the daemon listens, found exactly as the `settingsd` CLI finds it."""

from __future__ import annotations

import os
import stat
from typing import Optional, Tuple


def squatted_shared_folder(uid: Optional[int] = None) -> Optional[Tuple[str, int]]:
    """`/tmp/settingsd-<uid>` and its owner when another user made it (or others may write it):
    someone may be posing as settingsd there. None when it is absent or safe."""
    uid = os.getuid() if uid is None else uid
    folder = f"/tmp/settingsd-{uid}"
    try:
        info = os.lstat(folder)
    except OSError:
        return None
    safe = stat.S_ISDIR(info.st_mode) and info.st_uid in (uid, 0) and info.st_mode & 0o022 == 0
    return None if safe else (folder, info.st_uid)


def socket_path() -> str:
    """`$SETTINGSD_SOCKET`, else `$XDG_RUNTIME_DIR/settingsd/settingsd.sock`, else
    `/tmp/settingsd-<uid>/settingsd.sock` unless another user made that folder first (then
    `$XDG_STATE_HOME/settingsd/settingsd.sock`, else `~/.local/state/...`, where the daemon
    listens instead)."""
    explicit = os.environ.get("SETTINGSD_SOCKET")
    if explicit:
        return explicit
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "settingsd", "settingsd.sock")
    if squatted_shared_folder() is None:
        return f"/tmp/settingsd-{os.getuid()}/settingsd.sock"
    state = os.environ.get("XDG_STATE_HOME")
    if state:
        return os.path.join(state, "settingsd", "settingsd.sock")
    home = os.environ.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".local", "state", "settingsd", "settingsd.sock")


__all__ = ["socket_path", "squatted_shared_folder"]
