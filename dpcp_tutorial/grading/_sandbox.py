"""The process that runs one submission: the calling side of the checker protocol, nothing else.

Started by the grader (:mod:`dpcp_tutorial.grading`) as
``python -I -c "from dpcp_tutorial.grading._sandbox import main; main()" REPLY_FD MEMORY_MB [HIDE ...]``,
with the grader's requests on its standard input and its replies on the file descriptor ``REPLY_FD``; the
submission's own output (``print``, warnings, tracebacks) goes to standard output and standard error, which
the grader reads separately. It holds no case, no expected value and no verdict (it imports only
:mod:`dpcp_tutorial.exercises._runtime`, which has none): it loads the statements the grader sends, calls
the submission's functions on the plain-data arguments of each request and answers with plain data.

Before any code of the submission runs it

* hides the paths given as ``HIDE`` (the folder of all submissions, the grader's scratch space, the output
  files, the secret file) under empty mounts when it runs in its own mount namespace (``unshare``, see
  :mod:`._isolation`), then drops every capability, so the mounts cannot be undone;
* limits its address space to ``MEMORY_MB`` megabytes, the size of files it may write, and core dumps;
* replaces chosen package functions by *tripwires* that record a call from the submission's code (the
  grader asks which fired, and an answer built on the package's own implementation is not graded).
"""

from __future__ import annotations

import builtins
import ctypes
import ctypes.util
import functools
import importlib
import inspect
import os
import struct
import sys
import traceback

SUBMISSION_PREFIX = "<submission "
_HEADER = struct.Struct(">Q")
_MAX_REQUEST = 512 * 2**20


def read_message(fd: int, limit: int = _MAX_REQUEST) -> bytes | None:
    """One length-prefixed message from ``fd`` (``None`` at end of file)."""
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
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
    data = _HEADER.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


# ------------------------------------------------------------------------------------------- isolation

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC = 1, 2, 4, 8, 4096, 16384
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP, _PR_SET_DUMPABLE = 38, 24, 4


def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _hide(paths: list[str]) -> list[str]:
    """Cover each path with an empty mount (a tmpfs for a folder, /dev/null for a file)."""
    libc = _libc()
    failed = []
    for path in paths:
        if os.path.isdir(path):
            result = libc.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY,
                                b"size=4k,mode=000")
        elif os.path.exists(path):
            result = libc.mount(b"/dev/null", path.encode(), None, _MS_BIND, None)
        else:
            continue
        if result != 0:
            failed.append(path)
    return failed


def _drop_capabilities() -> None:
    """Empty the bounding, effective, permitted and inheritable capability sets; no new privileges."""
    libc = _libc()
    for cap in range(64):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header = Header(0x20080522, 0)
    data = (Data * 2)()
    libc.capset(ctypes.byref(header), data)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _limit_resources(memory_mb: int) -> None:
    import resource

    limit = int(memory_mb) * 2**20
    for name, value in (("RLIMIT_AS", limit), ("RLIMIT_CORE", 0), ("RLIMIT_FSIZE", 256 * 2**20)):
        kind = getattr(resource, name, None)
        if kind is not None:
            try:
                resource.setrlimit(kind, (value, value))
            except (ValueError, OSError):
                pass


# ------------------------------------------------------------------------------------------- tripwires

_PACKAGE_DIR = None
_FIRED: list[str] = []


def _from_package(filename: str) -> bool:
    return bool(_PACKAGE_DIR) and filename.startswith(_PACKAGE_DIR)


def _record(name: str) -> None:
    caller = sys._getframe(2).f_code.co_filename
    if not _from_package(caller) and name not in _FIRED:
        _FIRED.append(name)


def _wrap(dotted: str, module) -> bool:
    """Replace ``module.attribute`` (and every package module's reference to it) by a recording wrapper."""
    attr = dotted.rpartition(".")[2]
    original = getattr(module, attr, None)
    if original is None or getattr(original, "__dpcp_tripwire__", False):
        return False
    if isinstance(original, type):
        init = original.__init__

        @functools.wraps(init)
        def wrapped_init(self, *args, __init=init, __name=dotted, **kwargs):
            _record(__name)
            return __init(self, *args, **kwargs)

        wrapped_init.__signature__ = inspect.signature(init)
        wrapped_init.__dpcp_tripwire__ = True
        original.__init__ = wrapped_init
        original.__dpcp_tripwire__ = True
        return True
    if not callable(original):
        return False

    @functools.wraps(original)
    def wrapper(*args, __original=original, __name=dotted, **kwargs):
        _record(__name)
        return __original(*args, **kwargs)

    if _has_signature(original):
        wrapper.__signature__ = inspect.signature(original)
    wrapper.__dpcp_tripwire__ = True
    for name, loaded in list(sys.modules.items()):
        if loaded is None or not (name == "dpcp_tutorial" or name.startswith("dpcp_tutorial.")):
            continue
        for key, value in list(vars(loaded).items()):
            if value is original:
                setattr(loaded, key, wrapper)
    return True


_PENDING: dict[str, list[str]] = {}


class _TripwireFinder:
    """A meta-path finder that wraps the chosen functions of a module right after the module is executed,
    so that a tripwire costs nothing for the modules a submission never imports."""

    def find_spec(self, name, path=None, target=None):
        if name not in _PENDING:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                loader = spec.loader
                original = loader.exec_module

                def exec_module(module, __original=original, __name=name):
                    __original(module)
                    for dotted in _PENDING.pop(__name, []):
                        _wrap(dotted, module)

                loader.exec_module = exec_module
                return spec
        return None


def _install_tripwires(names: list[str]) -> list[str]:
    """Wrap each ``module.attribute``: now if the module is loaded, else when it is first imported."""
    for dotted in names:
        module_name = dotted.rpartition(".")[0]
        module = sys.modules.get(module_name)
        if module is not None:
            _wrap(dotted, module)
        else:
            _PENDING.setdefault(module_name, []).append(dotted)
    if _PENDING and not any(isinstance(f, _TripwireFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TripwireFinder())
    return list(names)


def _has_signature(obj) -> bool:
    try:
        inspect.signature(obj)
        return True
    except (TypeError, ValueError):
        return False


# ------------------------------------------------------------------------------------------- the loop

def _origin(value) -> dict:
    """Where a name of the namespace comes from (plain data)."""
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
        print(f"[grader] loading {where}", flush=True)
        try:
            exec(code, namespace)  # noqa: S102 - running the submission's code is the point of this process
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too
            text = f"{type(exc).__name__}: {str(exc)[:200]}"
            problems.append(f"{where}: {text}")
            traceback.print_exception(type(exc), exc, exc.__traceback__, limit=3)
    return problems


def main() -> None:
    global _PACKAGE_DIR
    reply_fd, memory_mb, hide = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    request_fd = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.set_inheritable(reply_fd, False)
    os.set_inheritable(request_fd, False)
    failed = []
    if os.environ.get("DPCP_SANDBOX_NAMESPACE") == "1":
        failed = _hide(hide)
        _drop_capabilities()
    _limit_resources(memory_mb)
    import numpy  # noqa: F401 - almost every answer needs it; import it before the submission's code

    import dpcp_tutorial
    from dpcp_tutorial.exercises import _runtime

    _PACKAGE_DIR = os.path.dirname(os.path.abspath(dpcp_tutorial.__file__)) + os.sep
    namespace: dict = {"__name__": "submission", "__builtins__": builtins}
    write_message(reply_fd, _runtime.encode({"event": "ready", "hidden_failed": failed}).encode())
    while True:
        raw = read_message(request_fd)
        if raw is None:
            break
        request = _runtime.decode(raw)
        op = request.get("op")
        if op == "load":
            reply = {"problems": _load(namespace, request["units"], reply_fd, _runtime.encode)}
        elif op == "functions":
            reply = {"functions": {name: _origin(namespace.get(name)) for name in request["names"]}}
        elif op == "tripwires":
            reply = {"installed": _install_tripwires(list(request["names"]))}
        elif op == "prepare":     # import the package modules an exercise may use, before its timed calls
            ready = []
            for name in request.get("modules", []):
                try:
                    importlib.import_module(str(name))
                    ready.append(name)
                except Exception:  # noqa: BLE001 - an optional dependency the machine lacks
                    pass
            reply = {"imported": ready}
        elif op == "fired":
            reply = {"fired": list(_FIRED)}
            _FIRED.clear()
        elif op == "mark":
            print(f"[grader] {str(request.get('text', ''))[:200]}", flush=True)
            reply = {}
        elif op == "call":
            call = _runtime.Call.from_plain(request["call"])
            functions = {call.function: namespace.get(call.function)}
            reply = _runtime.execute(functions, call, float(request["time_limit"])).to_plain()
            sys.stdout.flush()
        elif op == "exit":
            break
        else:
            reply = {"error": f"unknown request {op!r}"}
        write_message(reply_fd, _runtime.encode({"event": "reply", "nonce": request.get("nonce"),
                                                 "body": reply}).encode())
    sys.stdout.flush()
    os._exit(0)   # abandoned threads of hanging calls must not keep the process alive
