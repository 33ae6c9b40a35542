"""The process that runs one submission for one exercise: the calling side of the checker protocol.

The grader (:mod:`dpcp_tutorial.course.grading`) stages this file as ``_dpcp_runner.py`` next to a copy of
:mod:`dpcp_tutorial.course.exercises._runtime` (``_dpcp_calls.py``) and an allowlist of helpers (:mod:`._stage`),
and starts it under ``bwrap`` (:mod:`._isolation`) as ``python -I -S -c BOOTSTRAP REPLY_FD CONFIG``, with
the grader's requests on standard input and the replies on the file descriptor ``REPLY_FD``; what the
submission prints goes to standard output and standard error, which the grader drains in bounded chunks.

Before any code of the submission runs it sets its limits (CPU seconds per process, address space, open
files, file size, no core dumps, number of processes), switches to its own unprivileged uid when it was
started as root, and copies the submission into its working directory (the sandbox's only writable place).
It holds no case, no expected value and no verdict, and nothing it reports decides a grade on its own:
every output comes back as plain data, which the grader re-validates and judges in its own process.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import json
import os
import shutil
import struct
import sys
import traceback

SUBMISSION_PREFIX = "<submission "
HEADER = struct.Struct(">Q")
"""The length prefix of every message between the grader and the sandbox (8 bytes, big-endian)."""
_MAX_REQUEST = 512 * 2**20


def read_message(fd: int, limit: int = _MAX_REQUEST) -> bytes | None:
    """One length-prefixed message from ``fd`` (``None`` at end of file)."""
    head = _read_exact(fd, HEADER.size)
    if head is None:
        return None
    (size,) = HEADER.unpack(head)
    if size > limit:
        raise ValueError("message too large")
    body = _read_exact(fd, size)
    if body is None:
        raise ValueError("truncated message")
    return body


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def write_message(fd: int, payload: bytes) -> None:
    data = HEADER.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


# ------------------------------------------------------------------------------------------- limits

def _limit_resources(config: dict) -> None:
    import resource

    megabyte = 2**20
    limits = [("RLIMIT_AS", int(config["memory_mb"]) * megabyte), ("RLIMIT_CORE", 0),
              ("RLIMIT_FSIZE", int(config["fsize_mb"]) * megabyte), ("RLIMIT_NOFILE", 256),
              ("RLIMIT_NPROC", int(config["nproc"]))]
    cpu = int(config["cpu_s"])
    for name, soft, hard in [(n, v, v) for n, v in limits] + [("RLIMIT_CPU", cpu, cpu + 5)]:
        if soft < 0:          # no limit asked for
            continue
        kind = getattr(resource, name)
        current = resource.getrlimit(kind)[1]
        if current != resource.RLIM_INFINITY:   # only ever lower a limit
            soft, hard = min(soft, current), min(hard, current)
        resource.setrlimit(kind, (soft, hard))


def _switch_user(uid: int | None) -> None:
    """As root (with only CAP_SETUID and CAP_SETGID, see ._isolation): become ``uid``, losing every
    capability, so that the process limit applies and nothing of root's remains."""
    if uid is None or os.geteuid() != 0:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.geteuid() == 0 or os.getuid() == 0:
        raise SystemExit("could not leave root")


def _copy_submission(source: str) -> None:
    if not os.path.isdir(source):
        return
    for name in os.listdir(source):
        path = os.path.join(source, name)
        if os.path.isdir(path):
            shutil.copytree(path, name, symlinks=False, dirs_exist_ok=True)
        else:
            shutil.copyfile(path, name)


# ------------------------------------------------------------------------------------------- the loop

def _origin(value) -> dict:
    """Where a name of the namespace comes from (plain data; a courtesy message, never a verdict)."""
    if value is None:
        return {"defined": False}
    target = getattr(value, "func", value) if isinstance(value, functools.partial) else value
    module = getattr(target, "__module__", None)
    if isinstance(module, str) and (module == "dpcp_tutorial" or module.startswith("dpcp_tutorial.")):
        return {"defined": True, "origin": "package", "name": f"{module}.{getattr(target, '__qualname__', '?')}"}
    code = getattr(target, "__code__", None)
    if inspect.isfunction(target) and code is not None and code.co_filename.startswith(SUBMISSION_PREFIX):
        return {"defined": True, "origin": "submission"}
    if not callable(value):
        return {"defined": True, "origin": "not callable", "name": type(value).__name__}
    return {"defined": True, "origin": "elsewhere", "name": f"{module or '?'}.{getattr(target, '__qualname__', '?')}"}


def _load(namespace: dict, units: list, reply_fd: int, encode) -> list[str]:
    import ast

    problems = []
    for unit in units:
        index, filename, lineno, source, where = unit
        write_message(reply_fd, encode({"event": "executing", "unit": index}).encode())
        try:
            tree = ast.parse(source)
            ast.increment_lineno(tree, lineno - 1)
            code = compile(tree, filename, "exec")
        except SyntaxError as exc:
            problems.append(f"{where}: syntax error: {exc.msg}")
            continue
        try:
            exec(code, namespace)  # noqa: S102 - running the submission's code is the point of this process
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too
            text = f"{type(exc).__name__}: {str(exc)[:200]}"
            problems.append(f"{where}: {text}")
            traceback.print_exception(type(exc), exc, exc.__traceback__, limit=3)
    return problems


def main() -> None:
    reply_fd, config = int(sys.argv[1]), json.loads(sys.argv[2])
    request_fd = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.set_inheritable(reply_fd, False)
    os.set_inheritable(request_fd, False)
    _limit_resources(config)
    _switch_user(config.get("uid"))
    if config.get("copy_from"):
        _copy_submission(config["copy_from"])
    import numpy  # noqa: F401 - almost every answer needs it; import it before the submission's code

    import importlib

    runtime = importlib.import_module("_dpcp_calls")     # staged next to this file (see ._stage)

    namespace: dict = {"__name__": "submission", "__builtins__": builtins}
    write_message(reply_fd, runtime.encode({"event": "ready"}).encode())
    while True:
        raw = read_message(request_fd)
        if raw is None:
            break
        request = runtime.decode(raw)
        op = request.get("op")
        if op == "load":
            reply = {"problems": _load(namespace, request["units"], reply_fd, runtime.encode)}
        elif op == "functions":
            reply = {"functions": {name: _origin(namespace.get(name)) for name in request["names"]}}
        elif op == "call":
            call = runtime.Call.from_plain(request["call"])
            functions = {call.function: namespace.get(call.function)}
            reply = runtime.execute(functions, call, float(request["time_limit"]),
                                    wall_limit=float(request["wall_limit"])).to_plain()
            sys.stdout.flush()
        elif op == "exit":
            break
        else:
            reply = {"error": f"unknown request {op!r}"}
        write_message(reply_fd, runtime.encode({"event": "reply", "nonce": request.get("nonce"),
                                                "body": reply}).encode())
    sys.stdout.flush()
    os._exit(0)   # abandoned threads of hanging calls must not keep the process alive
