"""Where agentenv keeps what it builds: corpora caches and indexes.

Everything built at run time lives under one directory so that a user can
inspect it, share it between workers, or delete it to force a rebuild.

Every cache writer in the package goes through the helpers here:

* :func:`make_temp_dir` / :func:`make_temp_file` create the private temporary
  sibling a writer fills before renaming it into place. Their names carry the
  owner (a host tag and the pid), so that a later build can tell an orphan of
  a killed build from the work of a live concurrent one; each call first
  sweeps the orphans of its folder (:func:`sweep_leftovers`).
* :func:`atomic_write_bytes` / :func:`atomic_write_text` write one file
  through such a temporary and a rename, with the permissions a plain
  ``open()`` would give (``0o666`` less the umask, not ``mkstemp``'s ``0o600``),
  since the caches are shared by every worker of the user.
* :func:`discard` removes an old entry by renaming it first, so a reader never
  sees it half deleted and a kill mid-way leaves an orphan that is swept later.
* A cache location that cannot be written (read-only, not a directory)
  raises :class:`CacheNotWritableError`, whose message names
  ``AGENTENV_HOME`` and the fix, instead of a bare ``OSError``.

Example:
    >>> with home_at("/tmp/agentenv-doc"):
    ...     str(agentenv_home())
    '/tmp/agentenv-doc'
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = [
    "STALE_AFTER_S",
    "TEMP_PREFIX",
    "CacheNotWritableError",
    "agentenv_home",
    "atomic_write_bytes",
    "atomic_write_text",
    "cache_dir",
    "discard",
    "ensure_dir",
    "home_at",
    "make_temp_dir",
    "make_temp_file",
    "normal_mode",
    "not_writable",
    "sweep_leftovers",
]

DEFAULT_HOME = "~/.cache/agentenv"

TEMP_PREFIX = ".agentenv-tmp-"
"""Start of every temporary name a cache writer makes: ``.agentenv-tmp-<host>-<pid>-<label>-<random>``."""

STALE_AFTER_S = 6 * 3600
"""A temporary entry older than this is an orphan even if its pid looks alive.

Why: a pid is reused after a reboot or a wrap-around, and the owner of a
temporary made on another host (a shared network home) cannot be checked.
Writers build in memory first and only then fill the temporary, so a live
one keeps it for seconds, never hours.
"""

_OWNED = re.compile(re.escape(TEMP_PREFIX) + r"(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-")

_NOT_WRITABLE = frozenset(
    {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EEXIST, errno.ENOSPC}
    | ({errno.EDQUOT} if hasattr(errno, "EDQUOT") else set())
)
"""errnos that mean "this location cannot hold the cache" rather than a bug."""


class CacheNotWritableError(OSError):
    """The cache location cannot be written; the message says which variable to change.

    An ``OSError`` so that callers that already treat I/O failures alike keep
    doing so; the CLI prints it without a traceback.
    """


def agentenv_home() -> Path:
    """Return ``$AGENTENV_HOME`` (default ``~/.cache/agentenv``), without creating it."""
    root = os.environ.get("AGENTENV_HOME")
    if root:
        return Path(root).expanduser()
    return Path(DEFAULT_HOME).expanduser()


@contextlib.contextmanager
def home_at(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Point ``$AGENTENV_HOME`` at ``path`` inside the block, then restore what it was (or unset it).

    Why: examples and scripts that want a scratch cache must not leave the
    variable changed for whatever runs next in the same process (a doctest
    run shares one process with every other module's examples).
    """
    previous = os.environ.get("AGENTENV_HOME")
    os.environ["AGENTENV_HOME"] = os.fspath(path)
    try:
        yield agentenv_home()
    finally:
        if previous is None:
            os.environ.pop("AGENTENV_HOME", None)
        else:
            os.environ["AGENTENV_HOME"] = previous


def not_writable(path: Path, err: OSError) -> CacheNotWritableError:
    """Turn the ``OSError`` of writing ``path`` into an error that tells the user the fix.

    A path under the agentenv home names ``AGENTENV_HOME`` (set or default);
    any other path (a directory a caller passed explicitly) is named as is.
    """
    reason = err.strerror or str(err)
    if err.errno == errno.EEXIST:
        reason = "a file is in the way of a directory"
    home = agentenv_home()
    root = os.environ.get("AGENTENV_HOME")
    detail = reason if path == home else f"cannot write {path}: {reason}"
    default = Path(DEFAULT_HOME).expanduser()
    elsewhere = DEFAULT_HOME if home != default else Path(tempfile.gettempdir()) / "agentenv"
    if not _is_under(path, home):
        return CacheNotWritableError(
            f"cache directory {path} is not writable ({reason}): pass a writable directory"
        )
    if root:
        return CacheNotWritableError(
            f"AGENTENV_HOME={root} is not writable ({detail}): point AGENTENV_HOME "
            f"at a writable directory, e.g. export AGENTENV_HOME={elsewhere}"
        )
    return CacheNotWritableError(
        f"the agentenv cache {home} (the default: AGENTENV_HOME is not set) is not "
        f"writable ({detail}): point AGENTENV_HOME at a writable directory, "
        f"e.g. export AGENTENV_HOME={elsewhere}"
    )


def _is_under(path: Path, root: Path) -> bool:
    try:
        return path.absolute().is_relative_to(root.absolute())
    except (OSError, ValueError):
        return False


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and its parents) if missing; an unwritable location raises a clear error.

    An existing directory is returned as is, even on a read-only file system:
    a prebuilt, read-only cache can still be read.
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        if err.errno in _NOT_WRITABLE:
            raise not_writable(path, err) from err
        raise
    return path


def cache_dir(*parts: str) -> Path:
    """Return (and create) a sub-directory of the agentenv home."""
    return ensure_dir(agentenv_home().joinpath(*parts))


@functools.lru_cache(maxsize=1)
def _host_tag() -> str:
    """Eight hex digits naming where a pid means something: host, boot and pid namespace.

    Why: a shared home may be written from other hosts or containers, and
    pids restart after a reboot; a pid is only checked against the process
    table when the temporary was made under the same tag.
    """
    parts = [socket.gethostname()]
    try:
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
        parts.append(os.readlink("/proc/self/ns/pid"))
    except OSError:
        pass  # not Linux, or /proc hidden: the host name alone, and age, must do
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8]


def _temp_prefix(label: str) -> str:
    return f"{TEMP_PREFIX}{_host_tag()}-{os.getpid()}-{label}-"


def _pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists here (one of another user counts as alive)."""
    if pid == os.getpid():
        return True
    if os.name == "nt":  # os.kill(pid, 0) would send CTRL_C_EVENT there; rely on age
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _is_orphan(entry: Path, now: float) -> bool:
    """An owned temporary whose owner died on this host, or any temporary older than STALE_AFTER_S."""
    try:
        age = now - entry.lstat().st_mtime
    except OSError:
        return False  # already gone
    if age > STALE_AFTER_S:
        return True
    owner = _OWNED.match(entry.name)
    if owner is None or owner["host"] != _host_tag():
        return False
    return not _pid_alive(int(owner["pid"]))


def _remove(entry: Path) -> None:
    try:
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
    except OSError:
        pass  # another sweeper got there first, or it is not ours to delete


def sweep_leftovers(parent: Path, legacy: Iterable[str] = ()) -> list[Path]:
    """Remove the orphaned temporaries of killed builds in ``parent``; return what was removed.

    Owned temporaries (:data:`TEMP_PREFIX`) go when their pid is dead on this
    host; a live builder's is kept. ``legacy`` globs name temporaries of
    older versions, which carry no owner and so go only once stale.
    """
    now = time.time()
    try:
        candidates = set(parent.glob(f"{TEMP_PREFIX}*"))
        for pattern in legacy:
            candidates.update(parent.glob(pattern))
    except OSError:
        return []
    removed = []
    for entry in sorted(candidates):
        owned = entry.name.startswith(TEMP_PREFIX)
        if _is_orphan(entry, now) if owned else _is_stale(entry, now):
            _remove(entry)
            removed.append(entry)
    return removed


def _is_stale(entry: Path, now: float) -> bool:
    try:
        return now - entry.lstat().st_mtime > STALE_AFTER_S
    except OSError:
        return False


def make_temp_dir(parent: Path, label: str, legacy: Iterable[str] = ()) -> Path:
    """Sweep ``parent``'s orphans, then create a private temporary directory there, owned by this pid.

    Why here: every build passes through this call, so the leftovers of a
    killed build are cleaned by the next one, with no separate command.
    """
    ensure_dir(parent)
    sweep_leftovers(parent, legacy)
    try:
        return Path(tempfile.mkdtemp(prefix=_temp_prefix(label), dir=parent))
    except OSError as err:
        if err.errno in _NOT_WRITABLE:
            raise not_writable(parent, err) from err
        raise


def make_temp_file(parent: Path, label: str, legacy: Iterable[str] = ()) -> tuple[int, Path]:
    """Like :func:`make_temp_dir`, for one file: return its open descriptor and path."""
    ensure_dir(parent)
    sweep_leftovers(parent, legacy)
    try:
        fd, name = tempfile.mkstemp(prefix=_temp_prefix(label), suffix=".tmp", dir=parent)
    except OSError as err:
        if err.errno in _NOT_WRITABLE:
            raise not_writable(parent, err) from err
        raise
    return fd, Path(name)


def _umask() -> int:
    """The process umask, read without changing it where the OS allows.

    Why not ``os.umask(0)`` and back: for that instant every file another
    thread creates would be world-writable. Linux shows the umask in
    ``/proc/self/status``; elsewhere the set-and-restore is the only way.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def normal_mode(*, directory: bool = False) -> int:
    """The mode a plain ``open()`` (``0o666``) or ``mkdir()`` (``0o777``) would give, under the umask.

    ``mkstemp``/``mkdtemp`` make their temporaries private (``0o600``/``0o700``);
    a cache entry renamed from one must get this mode instead, so that the
    other workers and tools of the user can read it as they read any file.

    Example:
        >>> normal_mode() == 0o666 & ~_umask() and normal_mode(directory=True) == 0o777 & ~_umask()
        True
    """
    return (0o777 if directory else 0o666) & ~_umask()


def atomic_write_bytes(path: Path, data: bytes, *, legacy: Iterable[str] = ()) -> None:
    """Write ``data`` to ``path`` through an owned temporary and a rename; mode as :func:`normal_mode`.

    Concurrent workers may write the same cache file: a rename is atomic, so
    a reader sees the old complete file or the new complete one, never half
    of either. A failed write removes its temporary; one of a killed process
    is swept by the next write to the folder (``legacy`` as in
    :func:`sweep_leftovers`).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "x.bin"
        >>> atomic_write_bytes(path, b"abc")
        >>> path.read_bytes(), oct(path.stat().st_mode & 0o777) == oct(normal_mode())
        (b'abc', True)
    """
    fd, tmp = make_temp_file(path.parent, path.name, legacy)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, normal_mode())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(
    path: Path, text: str, *, encoding: str = "utf-8", legacy: Iterable[str] = ()
) -> None:
    """:func:`atomic_write_bytes` for text."""
    atomic_write_bytes(path, text.encode(encoding), legacy=legacy)


def discard(path: Path) -> None:
    """Delete a cache entry: rename it to an owned temporary first (atomic), then remove it.

    Why: a reader never sees a half-deleted entry under the final name, and a
    kill during the removal leaves an orphan the next build sweeps.
    """
    if not path.exists() and not path.is_symlink():
        return
    trash = make_temp_dir(path.parent, "trash")
    try:
        os.replace(path, trash / "x")
    except FileNotFoundError:
        pass  # a concurrent writer discarded it first
    finally:
        shutil.rmtree(trash, ignore_errors=True)
