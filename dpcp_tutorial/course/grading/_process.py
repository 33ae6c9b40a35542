"""The sandbox process seen from the grader: starting it, the message protocol, and ending what it left.

:class:`Sandbox` starts the runner (:mod:`._sandbox`) in a bubblewrap sandbox (:mod:`._isolation`), or
without one for practice, and exchanges length-prefixed JSON messages with it; :class:`RemoteExecutor`
sends a checker's calls through it and validates the replies. Every failure of the process (an overrun,
a death, a reply that breaks the protocol) is an :class:`Abort`, which ends the exercise. The processes
started here are registered, so that :func:`reap` ends whatever a practice run leaves behind and nothing
else.
"""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import threading
import time
from pathlib import Path

from . import _isolation
from ._sandbox import HEADER, write_message

_STARTUP = 120.0          # seconds a sandbox may take to start (Python, numpy), not counted against the student
_MAX_REPLY = 64 * 2**20   # bytes of one reply of the sandbox
_FILE_MB = 64             # largest file a submission may write (RLIMIT_FSIZE)
_PROCESSES = 32           # processes and threads of one sandbox (RLIMIT_NPROC, counted per sandbox)
_UNLIMITED = -1
_UID_BASE = 10**9         # as root, each sandbox runs under a uid of its own above this

_KEEP: set[int] = set()          # children of the grader's process that are not the submissions' (practice mode)
_LIVE: set[int] = set()          # sandbox processes running now (several with --jobs)
_LIVE_LOCK = threading.Lock()


def reap() -> None:
    """End every child of the grader that is neither a running sandbox nor older than the grading (practice)."""
    with _LIVE_LOCK:
        keep = _KEEP | _LIVE
    _isolation.reap_orphans(keep)


def prepare_isolation(sandboxed: bool) -> None:
    """Without a sandbox, make the grader the reaper of what submissions leave, sparing its own children."""
    if not sandboxed and _isolation.become_subreaper():
        _KEEP.update(_isolation.children(os.getpid()))   # children that existed before: not ours to end


class Abort(BaseException):
    """The sandbox overran the exercise's time, died or broke the protocol (ends the exercise)."""

    def __init__(self, kind: str, detail: str = ""):
        super().__init__(kind)
        self.kind, self.detail = kind, detail


class Sandbox:
    """One bwrap sandbox (or, for practice, an unsandboxed process) for one exercise of one submission."""

    def __init__(self, stage: Path, copy: Path, ctx: "Context", stdout: list[str], keep_output: bool):
        from ..exercises import _runtime

        self._runtime = _runtime
        read_fd, write_fd = os.pipe()
        sandboxed = ctx.sandboxed
        paths = _isolation.sys_path_inside(sandboxed, stage)
        code = f"import sys; sys.path[:0] = {paths!r}; import _dpcp_runner; _dpcp_runner.main()"
        config = {"memory_mb": int(ctx.memory_mb), "fsize_mb": _FILE_MB, "cpu_s": int(ctx.exercise_timeout) + 10,
                  "nproc": _PROCESSES if sandboxed else _UNLIMITED,
                  "uid": (_UID_BASE + random.SystemRandom().randrange(2**24)) if sandboxed and os.geteuid() == 0
                  else None,
                  "copy_from": _isolation.SUBMISSION if sandboxed else None}
        prefix = _isolation.bwrap_command(stage, copy, ctx.tmpfs_mb) if sandboxed else []
        command = prefix + [_isolation.interpreter(), "-I", "-S", "-c", code, str(write_fd), json.dumps(config)]
        env = dict(_isolation.ENVIRONMENT)
        if not sandboxed:
            env.update(HOME=str(copy), TMPDIR=str(copy))
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, pass_fds=(write_fd,),
                                        cwd=str(copy) if not sandboxed else "/", env=env, start_new_session=True)
        with _LIVE_LOCK:
            _LIVE.add(self.process.pid)
        os.close(write_fd)
        self._fd = read_fd
        self._buffer = bytearray()
        self._nonce = 0
        self.executing: int | None = None
        self._stdout, self._limit, self._keep = stdout, int(ctx.stdout_lines), keep_output
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        try:
            ready = self._next(time.monotonic() + _STARTUP)
            if ready.get("event") != "ready":
                raise Abort("protocol", "the sandbox did not start")
        except BaseException:
            self.close()
            raise

    def _drain(self) -> None:
        """Read the submission's output in bounded chunks; keep at most the line limit, 500 characters each,
        and only when ``keep_output`` (never while graded cases run)."""
        fd = self.process.stdout.fileno()
        line = bytearray()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            if not self._keep or len(self._stdout) >= self._limit:
                continue
            for piece in chunk.split(b"\n")[:-1] if b"\n" in chunk else []:
                line += piece[:max(0, 500 - len(line))]
                if len(self._stdout) < self._limit:
                    self._stdout.append(line.decode("utf-8", "replace"))
                line = bytearray()
            tail = chunk.rsplit(b"\n", 1)[-1] if b"\n" in chunk else chunk
            line += tail[:max(0, 500 - len(line))]
        if line and self._keep and len(self._stdout) < self._limit:
            self._stdout.append(line.decode("utf-8", "replace"))
        self.process.stdout.close()

    def _read_exact(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Abort("timeout")
            ready, _, _ = select.select([self._fd], [], [], min(left, 1.0))
            if not ready:
                if self.process.poll() is not None and not select.select([self._fd], [], [], 0)[0]:
                    raise Abort("died")
                continue
            chunk = os.read(self._fd, min(1 << 20, size - len(self._buffer)))
            if not chunk:
                raise Abort("died")
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _next(self, deadline: float) -> dict:
        (size,) = HEADER.unpack(self._read_exact(HEADER.size, deadline))
        if size > _MAX_REPLY:
            raise Abort("protocol", f"a reply larger than {_MAX_REPLY // 2**20} MB")
        try:
            message = self._runtime.decode(self._read_exact(size, deadline))
        except ValueError as exc:
            raise Abort("protocol", str(exc)) from None
        if not isinstance(message, dict):
            raise Abort("protocol", "a reply that is not a dict")
        return message

    def request(self, body: dict, deadline: float) -> dict:
        """Send one request and return the sandbox's reply to it (its ``executing`` notes are recorded in
        :attr:`executing` on the way); an overrun of ``deadline``, a death or a stray message is an :class:`Abort`."""
        self._nonce += 1
        body = dict(body, nonce=self._nonce)
        try:
            write_message(self.process.stdin.fileno(), self._runtime.encode(body).encode())
        except (BrokenPipeError, OSError):
            raise Abort("died") from None
        while True:
            message = self._next(deadline)
            if message.get("event") == "executing":
                self.executing = message.get("unit")
                continue
            if message.get("event") != "reply" or message.get("nonce") != self._nonce:
                raise Abort("protocol", "an unexpected message")
            self.executing = None
            reply = message.get("body")
            if not isinstance(reply, dict):
                raise Abort("protocol", "a reply that is not a dict")
            return reply

    def close(self) -> None:
        """End the sandbox's process group, wait for it, end what it left (practice mode) and free its pipes."""
        try:
            os.killpg(self.process.pid, 9)
        except OSError:
            pass
        try:
            self.process.kill()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        with _LIVE_LOCK:
            _LIVE.discard(self.process.pid)
        reap()            # (without a sandbox) a daemon it left, which may also hold its output open
        try:
            self.process.stdin.close()
        except OSError:
            pass
        self._reader.join(timeout=5)
        for handle in (self.process.stdin, self.process.stdout):
            try:
                handle.close()
            except OSError:
                pass
        try:
            os.close(self._fd)
        except OSError:
            pass


class RemoteExecutor:
    """Sends a checker's calls to the sandbox and validates the replies (the grader side of the protocol).

    It trusts nothing the sandbox reports about a call: the checks of inputs modified in place and of
    numpy's global random state are made from a recheck (see :class:`dpcp_tutorial.course.exercises._runtime.Reply`),
    and the sandbox's own reports become feedback without points."""

    trusts_reports = False
    recheck = True

    def __init__(self, sandbox: Sandbox, time_limit: float, deadline: float):
        self.sandbox, self.time_limit, self.deadline = sandbox, float(time_limit), deadline

    def run(self, call):
        """One call of the student's function in the sandbox, as a validated :class:`Reply`."""
        from ..exercises._runtime import Reply

        body = self.sandbox.request({"op": "call", "call": call.to_plain(), "time_limit": self.time_limit,
                                     "wall_limit": wall_limit(self.time_limit)}, self.deadline)
        try:
            reply = Reply.from_plain(body, call.returns)
        except ValueError as exc:
            raise Abort("protocol", str(exc)) from None
        if reply.status == "ok" and (len(reply.values) != call.count or len(reply.recheck) != int(call.recheck)):
            raise Abort("protocol", "a reply with the wrong number of outputs")
        return reply


def wall_limit(time_limit: float) -> float:
    """Wall-clock seconds (less the time spent waiting for a CPU) a call may take when ``time_limit`` bounds
    its own CPU time: other submissions' load must not decide a grade, while a call that only waits
    (``sleep``, a blocked read) still ends."""
    return max(3.0 * float(time_limit), float(time_limit) + 5.0)
