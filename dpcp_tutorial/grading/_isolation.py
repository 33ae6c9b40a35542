"""How the grader keeps a submission's processes apart and ends every one of them.

Preferred (Linux with ``unshare`` from util-linux and unprivileged user namespaces, or root): each
submission runs under ``unshare --pid --fork --kill-child --mount-proc --mount --net --ipc`` (plus ``--user
--map-root-user`` when the grader is not root). In a fresh PID namespace the submission's first process
has PID 1; when it ends, or when the grader kills ``unshare``, the kernel ends every process in the
namespace, so a double-forked daemon or a ``setsid`` cannot outlive the submission. The mount namespace lets
the sandbox hide the folder of submissions, the grader's scratch space, the output files and the secret
under empty mounts; the network namespace has no connection to anything.

Fallback (no namespaces: macOS, containers that forbid ``unshare``): the submission runs in its own
session; the grader makes itself a *child subreaper* (Linux ``prctl``), so orphaned descendants are
re-parented to it and :func:`reap_orphans` kills them after each submission and before the output is
written. Without ``prctl`` (macOS) a process that leaves its session and its parent can survive: the
grading page documents the limit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import shutil
import signal
import subprocess
import sys
import time

_PR_SET_CHILD_SUBREAPER = 36


@functools.lru_cache(maxsize=1)
def namespace_prefix() -> tuple[str, ...] | None:
    """The ``unshare`` command line that works on this machine, or ``None``."""
    if os.environ.get("DPCP_GRADING_NO_NAMESPACES") == "1" or not sys.platform.startswith("linux"):
        return None
    unshare = shutil.which("unshare")
    if not unshare:
        return None
    base = [unshare, "--pid", "--fork", "--kill-child", "--mount-proc", "--mount", "--net", "--ipc"]
    candidates = [base] if os.geteuid() == 0 else []
    candidates.append([unshare, "--user", "--map-root-user"] + base[1:])
    for prefix in candidates:
        try:
            done = subprocess.run(prefix + ["--", sys.executable, "-c", "import os; print(os.getpid())"],
                                  capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 and done.stdout.strip() == "1":
            return tuple(prefix) + ("--",)
    return None


def describe() -> str:
    prefix = namespace_prefix()
    if prefix is None:
        return "own session and subreaper (no process namespaces available)"
    return "fresh PID, mount, network and IPC namespaces" + (" in a user namespace" if "--user" in prefix else "")


_subreaper_set = False


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); return whether it worked."""
    global _subreaper_set
    if _subreaper_set:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        _subreaper_set = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except OSError:
        _subreaper_set = False
    return _subreaper_set


def _children(pid: int) -> list[int]:
    out = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def reap_orphans(keep: set[int]) -> int:
    """Kill and reap every child of this process whose PID is not in ``keep``; return how many."""
    if not _subreaper_set:
        return 0
    killed = 0
    for _ in range(50):
        victims = [p for p in _children(os.getpid()) if p not in keep]
        if not victims:
            break
        for pid in victims:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
        for pid in victims:
            try:
                os.waitpid(pid, 0)
            except (OSError, ChildProcessError):
                pass
        time.sleep(0.01)
    return killed
