"""Cache entries that prove themselves before they are used: one mechanism for every cache.

Each cache of the package (the film catalog and question packs, the HPO
tables, the retrieval indexes, the Qwen3 tokenizer) follows one pattern:
compute a key (format version, source checksum, parameters), look for an
entry that carries that key and the sha256 of its contents, verify both, and
otherwise build, write atomically and use the result. A damaged or stale
entry is never trusted: it is rebuilt, with a warning that names it and says
what was wrong. The pattern lives here so that the four caches cannot drift
apart in what they verify.

Two shapes, with their on-disk formats fixed (existing caches stay valid):

* a **pack**, one file: a one-line JSON header holding the key and the
  body's sha256 (``body_sha256``), then a JSON body (:func:`pack`,
  :func:`unpack`, :func:`write_pack`); or a body of bytes the caller encodes
  and decodes itself (:func:`pack_bytes`, :func:`unpack_bytes`), for a body
  that should not be decoded whole (JSON lines read one line at a time), with
  the same header and the same check;
* a **directory entry** (:class:`ChecksummedDir`): files plus a JSON manifest
  that holds the key fields and the sha256 of each file. It is filled in a
  private temporary sibling and renamed into place, so a crash or a
  concurrent writer never leaves a half-written entry under the final name
  (:meth:`ChecksummedDir.publish`); or, for a folder a caller owns, written
  file by file, atomically, manifest last (:meth:`ChecksummedDir.write_in_place`).

A file verified once is not hashed again while it is unchanged: the digest is
stamped with the file's identity (:mod:`agentenv.storage.verified_stamps`, which says
which changes that still catches, and which it cannot see).

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> write_pack(root / "x.json", {"format": 1}, [1, 2, 3])
    >>> unpack(root / "x.json", {"format": 1})
    [1, 2, 3]
    >>> unpack(root / "x.json", {"format": 2}) is None  # stale: rebuild
    True
    >>> entry = ChecksummedDir("manifest.json", what="demo cache")
    >>> def save(tmp: Path) -> None:
    ...     _ = (tmp / "a.txt").write_text("abc")
    >>> entry.publish(root / "demo", {"format": 1}, save)
    >>> entry.problem(root / "demo", {"format": 1}) is None
    True
    >>> entry.problem(root / "demo", {"format": 2})
    'stale (format is 1, expected 2)'
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv.storage.checksums import sha256_file
from agentenv.storage.paths import atomic_write_bytes, discard, make_temp_dir, normal_mode
from agentenv.storage.verified_stamps import body_digest, verified_sha256

__all__ = [
    "ChecksummedDir",
    "header_problem",
    "pack",
    "pack_bytes",
    "unpack",
    "unpack_bytes",
    "unpack_lines",
    "write_pack",
]

log = logging.getLogger(__name__)


def header_problem(found: Mapping[str, Any], expected: Mapping[str, Any]) -> str | None:
    """Why a stored key does not match the wanted one (``None`` when it does).

    Example:
        >>> header_problem({"format": 1, "x": 2}, {"format": 1}) is None
        True
        >>> print(header_problem({"format": 1}, {"format": 2, "source": "a"}))
        stale (format is 1, expected 2; source is None, expected 'a')
    """
    stale = [
        f"{k} is {found.get(k)!r}, expected {v!r}" for k, v in expected.items() if found.get(k) != v
    ]
    return f"stale ({'; '.join(stale)})" if stale else None


def _rebuilding(path: Path, reason: str, what: str = "cache file") -> None:
    """Log that ``path`` is unusable and will be rebuilt; return ``None`` (a miss)."""
    log.warning("%s %s is %s; rebuilding it", what, path, reason)
    return None


# --------------------------------------------------------------------------- packs


def pack(header: Mapping[str, Any], body: Any) -> bytes:
    """Serialise ``body`` after a one-line header that carries the key and the body's sha256."""
    return pack_bytes(header, json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


def pack_bytes(header: Mapping[str, Any], blob: bytes, *, digest: str | None = None) -> bytes:
    """A pack whose body is ``blob`` as given (``digest``: its sha256, when the caller has it already)."""
    head = dict(header, body_sha256=digest or hashlib.sha256(blob).hexdigest())
    return json.dumps(head, sort_keys=True).encode() + b"\n" + blob


def write_pack(
    path: Path, header: Mapping[str, Any], body: Any, *, legacy: Iterable[str] = ()
) -> None:
    """Write a :func:`pack` file atomically (``legacy`` as in :func:`agentenv.storage.paths.sweep_leftovers`)."""
    atomic_write_bytes(path, pack(header, body), legacy=legacy)


def _read_pack(path: Path, header: Mapping[str, Any]) -> tuple[dict[str, Any], bytes, int] | None:
    """``(stored header, whole file, offset of the body)`` of an intact pack matching ``header``, else ``None``.

    The body is hashed where it lies in the file's bytes (a 11 MB question pack
    was copied once just to split its header off).
    """
    try:
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            raw = handle.read()
    except FileNotFoundError:
        return None
    except OSError as err:
        return _rebuilding(path, f"unreadable: {err.strerror or err}")
    newline = raw.find(b"\n")
    start = len(raw) if newline < 0 else newline + 1
    try:
        head = json.loads(raw[: start - 1] if newline >= 0 else raw)
    except ValueError:
        return _rebuilding(path, "corrupt: its header is not JSON")
    if not isinstance(head, dict):
        return _rebuilding(path, "corrupt: its header is not an object")
    stale = header_problem(head, header)
    if stale is not None:
        return _rebuilding(path, f"{stale} or corrupt")
    claimed = head.get("body_sha256")
    if not isinstance(claimed, str) or claimed != body_digest(
        path, st, claimed, lambda: hashlib.sha256(memoryview(raw)[start:]).hexdigest()
    ):
        return _rebuilding(path, "corrupt: its body does not match its sha256")
    return head, raw, start


def unpack_bytes(path: Path, header: Mapping[str, Any]) -> tuple[dict[str, Any], bytes] | None:
    """Return ``(stored header, body bytes)`` of a pack whose header matches and whose body is intact.

    ``None`` means "rebuild", as for :func:`unpack`; the body is verified
    against its sha256 but not decoded.
    """
    found = _read_pack(path, header)
    if found is None:
        return None
    head, raw, start = found
    return head, raw[start:]


def unpack_lines(
    path: Path, header: Mapping[str, Any]
) -> tuple[dict[str, Any], list[bytes]] | None:
    """:func:`unpack_bytes` with the body split into its lines (``b"\\n"``), without copying the body first."""
    found = _read_pack(path, header)
    if found is None:
        return None
    head, raw, start = found
    if start == len(raw) and raw[-1:] != b"\n":  # no body line at all: as b"".split(b"\n")
        return head, [b""]
    lines = raw.split(b"\n")
    del lines[0]  # the header's line
    return head, lines


def unpack(path: Path, header: Mapping[str, Any]) -> Any | None:
    """Return the body of a :func:`pack` file whose header matches, else ``None``.

    ``None`` (missing, truncated, corrupt or stale file) means "rebuild"; every
    caller rebuilds then, so a file that exists but is unusable is logged as
    being rebuilt (a missing one is a plain first build, and is not).
    """
    found = unpack_bytes(path, header)
    if found is None:
        return None
    try:
        return json.loads(found[1])
    except ValueError:
        return _rebuilding(path, "corrupt: its body is not JSON")


# --------------------------------------------------------------------------- directory entries


@dataclass(frozen=True)
class ChecksummedDir:
    """The layout of one kind of directory entry: its manifest, which files it vouches for, how it is named.

    A manifest is a JSON object: the key fields (checked on read), any extra
    fields (recorded only), and the sha256 of the files.

    Attributes:
        manifest: the manifest's file name inside the entry.
        files: the files the manifest vouches for; others in the folder are
            ignored. ``None``: every file under the entry, and an unlisted
            file makes the entry corrupt (an index is exactly what it saved).
        digests: where the manifest keeps the hashes: the name of one field
            holding ``{file: sha256}``, or ``{file: field}``, one top-level
            field per file (the tokenizer's older layout).
        legacy: globs of temporaries older versions left in the parent folder,
            swept once stale (see :func:`agentenv.storage.paths.sweep_leftovers`).
        what: how warnings name an entry ("HPO cache", "index cache entry").
    """

    manifest: str
    files: tuple[str, ...] | None = None
    digests: str | Mapping[str, str] = "files"
    legacy: tuple[str, ...] = ()
    what: str = "cache entry"

    def _listed(self, root: Path) -> list[str]:
        if self.files is not None:
            return list(self.files)
        return sorted(
            p.relative_to(root).as_posix()
            for p in root.rglob("*")
            if p.is_file() and p.name != self.manifest
        )

    def _digests_of(self, manifest: Mapping[str, Any]) -> Mapping[str, Any] | None:
        if isinstance(self.digests, str):
            found = manifest.get(self.digests)
            return found if isinstance(found, dict) else None
        return {name: manifest.get(field) for name, field in self.digests.items()}

    def manifest_for(
        self, root: Path, header: Mapping[str, Any], extra: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The manifest of the files now under ``root``: key, extra fields, and their sha256."""
        hashes = {name: sha256_file(root / name) for name in self._listed(root)}
        if isinstance(self.digests, str):
            return {**header, **(extra or {}), self.digests: hashes}
        return {
            **header,
            **(extra or {}),
            **{field: hashes[name] for name, field in self.digests.items()},
        }

    def write_manifest(
        self, root: Path, header: Mapping[str, Any], extra: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """Hash the files under ``root`` into its manifest (written atomically, so last); return it."""
        manifest = self.manifest_for(root, header, extra)
        data = json.dumps(manifest, indent=1, sort_keys=True).encode()
        atomic_write_bytes(root / self.manifest, data, legacy=self.legacy)
        return manifest

    def problem(self, root: Path, header: Mapping[str, Any]) -> str | None:
        """Why ``root`` is not a usable entry for ``header`` (``None`` when it is).

        Why a reason and not a bool: the rebuild warning should say what was wrong.
        """
        try:
            manifest = json.loads((root / self.manifest).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            return f"incomplete or corrupt ({self.manifest} unreadable: {err.__class__.__name__})"
        if not isinstance(manifest, dict):
            return f"corrupt ({self.manifest} is not an object)"
        stale = header_problem(manifest, header)
        if stale is not None:
            return stale
        digests = self._digests_of(manifest)
        if digests is None:
            return f"corrupt ({self.manifest} lists no files)"
        if self.files is None:
            unlisted = sorted(set(self._listed(root)) - set(digests))
            if unlisted:
                return f"corrupt ({unlisted[0]} is not in {self.manifest})"
        for name in self.files if self.files is not None else sorted(digests):
            try:
                if not (root / name).is_file():
                    return f"incomplete ({name} is missing)"
                if digests.get(name) != verified_sha256(root / name):
                    return f"corrupt ({name} does not match its sha256)"
            except OSError as err:
                return f"unreadable ({name}: {err.strerror or err})"
        return None

    def _started(self, root: Path) -> bool:
        """Whether any part of an entry is there (an empty folder, or a caller's own files, is not one)."""
        if not root.is_dir():
            return root.exists()
        if self.files is None:
            return any(root.iterdir())
        return any((root / name).exists() for name in (self.manifest, *self.files))

    def is_valid(self, root: Path, header: Mapping[str, Any]) -> bool:
        """Whether ``root`` is a complete, verified entry for ``header``."""
        return self.problem(root, header) is None

    def check(self, root: Path, header: Mapping[str, Any]) -> bool:
        """:meth:`is_valid`, warning (with the reason) when an entry is there but unusable.

        A missing entry is a plain first build, and is not warned about.
        """
        if not self._started(root):
            return False
        reason = self.problem(root, header)
        if reason is not None:
            _rebuilding(root, reason, self.what)
        return reason is None

    def publish(
        self,
        root: Path,
        header: Mapping[str, Any],
        save: Callable[[Path], None],
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """Fill a private temporary sibling with ``save(tmp)``, add the manifest, rename it to ``root``.

        Build what is slow before calling this: the temporary should live for
        seconds (see :data:`agentenv.storage.paths.STALE_AFTER_S`). The entry gets the
        mode a plain ``mkdir`` would (:func:`agentenv.storage.paths.normal_mode`), not
        ``mkdtemp``'s private one. When another process renamed its own
        complete entry into place first, that one is kept.
        """
        tmp = make_temp_dir(root.parent, root.name, legacy=self.legacy)
        try:
            os.chmod(tmp, normal_mode(directory=True))
            save(tmp)
            self.write_manifest(tmp, header, extra)
            discard(root)
            try:
                os.replace(tmp, root)
            except OSError:
                if not self.is_valid(
                    root, header
                ):  # another process won only if it left a valid entry
                    raise
                log.info("%s %s was written concurrently; keeping it", self.what, root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def write_in_place(
        self,
        root: Path,
        header: Mapping[str, Any],
        contents: Mapping[str, bytes],
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        """Write ``contents`` into the folder ``root`` file by file, atomically, then the manifest.

        For an entry whose folder belongs to the caller (it may hold other
        files), which therefore cannot be replaced as a whole. A reader that
        comes between two writes sees a manifest that does not match, which
        is a miss, never a wrong hit.
        """
        for name, data in contents.items():
            atomic_write_bytes(root / name, data, legacy=self.legacy)
        self.write_manifest(root, header, extra)
