"""Where a submission's code runs: a bubblewrap sandbox per exercise, built from an explicit list of binds.

Each graded exercise runs in a fresh process under ``bwrap`` (Debian package ``bubblewrap``):

* fresh PID, mount, network, IPC and UTS namespaces (``--unshare-all`` when the grader is an ordinary user,
  which adds a user namespace; as root the same list without the user namespace, because a user namespace
  created by root maps only root, and the sandbox must run under an unprivileged uid, see below),
  ``--die-with-parent``, ``--new-session`` (no terminal to inject input into), ``--clearenv`` (then a
  fixed list of variables: no secret, no path of the grader's);
* its own ``/proc`` and ``/dev``; read-only binds of exactly the operating system's ``/usr`` (and the
  ``/lib``, ``/bin`` links), the Python runtime (its site-packages masked), each allowed third-party
  package (numpy, scipy, scikit-learn, pandas and their helpers; :data:`ALLOWED_PACKAGES`), the staged
  runner and helpers (:mod:`._stage`), and a staged copy of this submission; nothing else: no home
  directory, no checkout of the course, no other submission, no output folder, no secret file;
* one writable place, ``/work``: a tmpfs of ``tmpfs_mb`` megabytes into which the runner copies the
  submission, which is also the working directory, ``HOME`` and ``TMPDIR``;
* limits set by the runner before any code of the submission runs (:mod:`._sandbox`): CPU time per
  process, address space, open files, file size, no core dumps and a number of processes. Linux counts
  processes per user (and, since 5.14, per user namespace) and never limits root's, so as root the runner
  switches to a uid of its own (random among 2**24 above 10**9, one per sandbox) before it loads the
  submission; as an ordinary user the count is per user namespace, that is per sandbox.

When a sandbox ends (or the grader kills it) the kernel ends every process of its PID namespace.

``--unsafe-no-sandbox`` (practice only) runs the same runner without ``bwrap``: in its own session, with a
subreaper that ends orphaned descendants (:func:`become_subreaper`, :func:`reap_orphans`), but with the
grader's files in reach; every row of the grades CSV records which isolation was used.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36

BWRAP = "bubblewrap"
UNSAFE = "none (--unsafe-no-sandbox, practice only)"

ALLOWED_PACKAGES = ("numpy", "scipy", "sklearn", "joblib", "threadpoolctl", "narwhals", "pandas", "dateutil",
                    "pytz", "tzdata", "six")
"""Third-party packages a submission may import in the sandbox (with their bundled ``*.libs`` folders)."""

INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install "
                "bubblewrap`); to grade for practice without any sandbox, pass --unsafe-no-sandbox")

SITE = "/sandbox/site"
RUNTIME = "/sandbox/runtime"
SUBMISSION = "/sandbox/submission"
WORK = "/work"

ENVIRONMENT = {"HOME": WORK, "TMPDIR": WORK, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1",
               "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg",
               "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}


class SandboxUnavailable(RuntimeError):
    """``bwrap`` is missing or cannot start a sandbox on this machine."""


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def interpreter() -> str:
    """The real Python executable (a virtual environment's ``python`` is a link to it)."""
    return os.path.realpath(sys.executable)


def _runtime_dirs() -> list[str]:
    """Folders the interpreter needs: its prefix (standard library, ``libpython``)."""
    out = []
    for path in {os.path.realpath(sys.base_prefix), os.path.realpath(sys.base_exec_prefix)}:
        if path not in ("/", "/usr") and os.path.isdir(path):
            out.append(path)
    return sorted(out)


def _masked_dirs(bound: list[str]) -> list[str]:
    """Site-packages folders inside the bound folders: covered by an empty tmpfs, so that nothing installed
    there (the course package among it) can be imported from the sandbox."""
    candidates = set()
    for scheme_key in ("purelib", "platlib"):
        for base in (sys.base_prefix, sys.prefix):
            try:
                candidates.add(os.path.realpath(sysconfig.get_path(scheme_key, vars={"base": base,
                                                                                        "platbase": base})))
            except (KeyError, ValueError):
                pass
    for root in ("/usr/lib", "/usr/local/lib"):
        for version in (f"python{sys.version_info[0]}", f"python{sys.version_info[0]}.{sys.version_info[1]}"):
            for name in ("dist-packages", "site-packages"):
                candidates.add(os.path.join(root, version, name))
    out = []
    for path in sorted(candidates):
        if os.path.isdir(path) and any(path == b or path.startswith(b.rstrip("/") + "/") for b in bound):
            out.append(path)
    return out


@functools.lru_cache(maxsize=1)
def package_binds() -> tuple[tuple[str, str], ...]:
    """``(host path, sandbox path)`` of every allowed third-party package found here."""
    out = []
    for name in ALLOWED_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        if spec.submodule_search_locations:
            path = Path(list(spec.submodule_search_locations)[0])
        elif spec.origin:
            path = Path(spec.origin)
        else:
            continue
        out.append((str(path.resolve()), f"{SITE}/{path.name}"))
        parent = path.parent
        for libs in parent.glob("*.libs"):
            stem = libs.name[:-5].replace("-", "_").lower()
            if stem in (name, {"sklearn": "scikit_learn"}.get(name, name)):
                out.append((str(libs.resolve()), f"{SITE}/{libs.name}"))
    return tuple(out)


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    return args


def bwrap_command(runtime: Path, submission: Path, tmpfs_mb: int) -> list[str]:
    """The ``bwrap`` command line (up to the ``--``) for one sandbox."""
    bwrap = bwrap_path()
    if bwrap is None:
        raise SandboxUnavailable(f"bwrap was not found; {INSTALL_HINT}")
    args = [bwrap]
    if os.geteuid() == 0:
        # as root: every namespace but the user namespace (see the module docstring); no capability but
        # the two the runner needs to switch to its own unprivileged uid
        args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                 "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-all"]
    args += ["--die-with-parent", "--new-session", "--clearenv", "--hostname", "sandbox"]
    for key, value in ENVIRONMENT.items():
        args += ["--setenv", key, value]
    args += _system_binds()
    bound = ["/usr"]
    made: set[str] = set()
    for path in _runtime_dirs():
        for parent in reversed(Path(path).parents):   # parents the sandbox's own uid may pass through
            if str(parent) != "/" and str(parent) not in made and not str(parent).startswith("/usr"):
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        args += ["--ro-bind", path, path]
        bound.append(path)
    for path in _masked_dirs(bound):
        args += ["--tmpfs", path, "--remount-ro", path]
    args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", "--tmpfs", "/sandbox"]
    args += ["--dir", SITE]
    for host, inside in package_binds():
        args += ["--ro-bind", host, inside]
    args += ["--ro-bind", str(runtime), RUNTIME, "--ro-bind", str(submission), SUBMISSION]
    args += ["--perms", "0777", "--size", str(int(tmpfs_mb) * 2**20), "--tmpfs", WORK, "--chdir", WORK]
    args += ["--remount-ro", "/sandbox", "--remount-ro", "/", "--"]
    return args


def sys_path_inside(sandboxed: bool, runtime: Path) -> list[str]:
    """The runner's ``sys.path`` entries before the standard library's."""
    if sandboxed:
        return [RUNTIME, SITE]
    roots = sorted({str(Path(h).parent) for h, _ in package_binds()})
    return [str(runtime)] + roots


@functools.lru_cache(maxsize=1)
def probe() -> str | None:
    """``None`` when a sandbox starts here, else why not (cached)."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap sandboxes need Linux; {INSTALL_HINT}"
    if bwrap_path() is None:
        return f"bwrap was not found; {INSTALL_HINT}"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dpcp-probe-") as tmp:
        os.chmod(tmp, 0o755)
        runtime, submission = Path(tmp) / "runtime", Path(tmp) / "submission"
        runtime.mkdir()
        submission.mkdir()
        command = bwrap_command(runtime, submission, 1) + [interpreter(), "-I", "-S", "-c",
                                                            "import os; print(os.getpid())"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"bwrap could not start a sandbox ({type(exc).__name__}: {exc}); {INSTALL_HINT}"
    if done.returncode != 0:
        reason = " ".join(done.stderr.split())[:300]
        return f"bwrap could not start a sandbox here ({reason}); {INSTALL_HINT}"
    return None


def describe(sandboxed: bool = True) -> str:
    """One line for ``--list`` and the grading page: which isolation a graded call gets on this machine."""
    if not sandboxed:
        return UNSAFE
    reason = probe()
    if reason is not None:
        return f"no sandbox available: {reason}"
    who = "root: unshared PID/mount/network/IPC/UTS namespaces, an unprivileged uid per sandbox" if \
        os.geteuid() == 0 else "an ordinary user: --unshare-all (user namespace included)"
    return f"{BWRAP} ({who})"


def label(sandboxed: bool) -> str:
    """What the ``isolation`` column of the grades CSV says."""
    if not sandboxed:
        return "none (unsafe, practice only)"
    return f"bwrap {'as root, own uid' if os.geteuid() == 0 else 'user namespace'}"


# ------------------------------------------------------------------------------ without a sandbox (practice)

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


def children(pid: int) -> list[int]:
    """The PIDs of the processes whose parent is ``pid`` (read from ``/proc``)."""
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
        victims = [p for p in children(os.getpid()) if p not in keep]
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
