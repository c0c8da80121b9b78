"""Cache writers survive killed builds, unwritable homes and corrupt files.

Each writer (index cache, HPO cache, media catalog/questions files) goes
through :mod:`agentenv.storage.paths`; these tests check, per writer, that

* the temporary of a build whose process died is removed by the next build,
  while one a live process owns is kept;
* an unwritable ``AGENTENV_HOME`` raises one clear error naming the variable
  and the fix, which the CLI prints without a traceback;
* a corrupt catalog or HPO cache is rebuilt with a warning naming the file.

Everything runs in a fresh ``tmp_path`` home, on tiny synthetic inputs.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from agentenv.cli import main as cli
from agentenv.corpora.hpo import cache as hpo_cache
from agentenv.corpora.media import catalog as media
from agentenv.corpora.media import files as media_files
from agentenv.corpora.media import source as media_source
from agentenv.corpora.media.catalog import Title, load_catalog
from agentenv.corpora.media.files import pack, write_atomic
from agentenv.retrieval import storage as index_storage
from agentenv.retrieval.bm25 import BM25Retriever
from agentenv.retrieval.cache import cached_index, index_dir
from agentenv.storage import paths
from agentenv.storage.paths import TEMP_PREFIX, CacheNotWritableError, cache_dir, sweep_leftovers

TEXTS = ["red apple", "blue sky", "green pear"]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh agentenv home per test, so no test sees another's cache."""
    root = tmp_path / "home"
    monkeypatch.setenv("AGENTENV_HOME", str(root))
    return root


# --------------------------------------------------------------------------- helpers


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped): an orphan's owner."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.fixture
def live_child() -> Iterator[int]:
    """The pid of another live process: a concurrent builder in a different process."""
    child = subprocess.Popen(["sleep", "60"])
    try:
        yield child.pid
    finally:
        child.kill()
        child.wait()


def owned(
    parent: Path, pid: int, *, host: str | None = None, is_dir: bool = True, label: str = "entry"
) -> Path:
    """Create a temporary named as the writers name theirs, owned by ``pid`` (on ``host``)."""
    parent.mkdir(parents=True, exist_ok=True)
    tag = host or paths._host_tag()
    path = parent / f"{TEMP_PREFIX}{tag}-{pid}-{label}-x1y2z3"
    if is_dir:
        path.mkdir()
        (path / "half-written.npy").write_bytes(b"\0" * 1024)
    else:
        path.write_bytes(b"\0" * 1024)
    return path


def age(path: Path, seconds: float) -> Path:
    """Backdate ``path`` by ``seconds``, as if a build left it there that long ago."""
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def build_index() -> None:
    """One index-cache build (the writer of ``$AGENTENV_HOME/indexes``)."""
    cached_index("bm25", "corpus-v1", {"k1": 1.5}, lambda: BM25Retriever.from_texts(TEXTS))


def build_media_file() -> None:
    """One media-cache write (the writer of the catalog, people and questions files)."""
    write_atomic(media.cache_path(), pack({"format": 1}, [1, 2, 3]))


FAKE_FILES = SimpleNamespace(checksum="ab" * 32, obo_sha256="o", hpoa_sha256="h", release="r")


@pytest.fixture
def tiny_hpo(monkeypatch: pytest.MonkeyPatch) -> Callable[[], Path]:
    """The HPO cache writer with its (slow) table build replaced by a tiny one."""
    tables = ({"ids": ["HP:1"]}, {"a": np.zeros(1)}, {"ids": ["OMIM:1"]}, {"b": np.ones(1)})
    monkeypatch.setattr(hpo_cache, "build_tables", lambda files: tables)
    monkeypatch.setattr(hpo_cache, "TermGraph", SimpleNamespace(from_arrays=lambda ids, arrs: None))
    monkeypatch.setattr(hpo_cache, "universe_arrays", lambda *args: {"u": np.arange(3)})

    def write() -> Path:
        target = cache_dir("hpo") / FAKE_FILES.checksum[:32]
        hpo_cache.write_cache(target, FAKE_FILES)  # type: ignore[arg-type]
        return target

    return write


WRITERS = {
    "index": (build_index, lambda: paths.agentenv_home() / "indexes"),
    "media": (build_media_file, lambda: media.cache_path().parent),
}


@pytest.fixture(params=["index", "media", "hpo"])
def writer(request: pytest.FixtureRequest, tiny_hpo: Callable[[], Path]) -> tuple[Callable, Path]:
    """(build function, folder it writes into) for every cache writer of the package."""
    if request.param == "hpo":
        return tiny_hpo, paths.agentenv_home() / "hpo"
    build, folder = WRITERS[request.param]
    return build, folder()


# --------------------------------------------------------------------------- 1. orphans


def test_next_build_removes_dead_owners_leftovers_and_keeps_live_ones(
    writer: tuple[Callable, Path], live_child: int
) -> None:
    build, folder = writer
    orphan_dir = owned(folder, dead_pid())
    orphan_file = owned(folder, dead_pid(), is_dir=False, label="file")
    mine = owned(folder, os.getpid())
    other_live = owned(folder, live_child)
    build()
    assert not orphan_dir.exists() and not orphan_file.exists()
    assert mine.is_dir() and other_live.is_dir()  # live concurrent builders keep theirs


def test_sweep_keeps_other_hosts_until_stale_and_removes_stale_ones(home: Path) -> None:
    folder = cache_dir("indexes")
    foreign = owned(folder, dead_pid(), host="00000000")  # a dead pid here says nothing there
    assert sweep_leftovers(folder) == []
    age(foreign, paths.STALE_AFTER_S + 60)
    assert sweep_leftovers(folder) == [foreign]


def test_a_live_pid_is_no_shield_after_stale_after(home: Path) -> None:
    """A pid can be reused after a reboot; an entry hours old is an orphan regardless."""
    folder = cache_dir("indexes")
    old = age(owned(folder, os.getpid()), paths.STALE_AFTER_S + 60)
    assert sweep_leftovers(folder) == [old]


LEGACY = {
    "indexes": (index_storage.LEGACY_TEMPS, ".bm25-0123456789abcdef01234567-k3j2h1", "bm25-0123"),
    "hpo": (hpo_cache._LEGACY_TEMPS, ".abababababababababababababababab.k3j2h1", "abababab"),
    "media": (media_files._LEGACY_TEMPS, "catalog-v3.jsonk3j2h1.tmp", "catalog-v3.json"),
}


@pytest.mark.parametrize("folder", sorted(LEGACY))
def test_leftovers_of_older_versions_go_once_stale(folder: str) -> None:
    """Temporaries named before owned names existed have no owner: only age tells.

    Entries under their final name, and files no writer makes, are never swept.
    """
    legacy, name, final_name = LEGACY[folder]
    parent = cache_dir(folder)
    leftover = parent / name
    leftover.mkdir()
    kept = [parent / final_name, parent / ".DS_Store"]
    for path in kept:
        path.write_text("")
        age(path, paths.STALE_AFTER_S + 60)
    assert sweep_leftovers(parent, legacy) == []
    age(leftover, paths.STALE_AFTER_S + 60)
    assert sweep_leftovers(parent, legacy) == [leftover]
    assert all(path.exists() for path in kept)


KILLED_BUILD = textwrap.dedent(
    """
    import os, signal
    import agentenv.retrieval.cache as cache
    from agentenv.storage.checksummed_cache import ChecksummedDir
    from agentenv.retrieval.bm25 import BM25Retriever

    def die(*args, **kwargs):  # SIGKILL mid-save: no finally, no cleanup
        os.kill(os.getpid(), signal.SIGKILL)

    ChecksummedDir.write_manifest = die
    cache.cached_index("bm25", "corpus-v1", {"k1": 1.5}, lambda: BM25Retriever.from_texts(%r))
    """
)


def test_a_sigkilled_build_leaves_an_orphan_that_the_next_build_removes(home: Path) -> None:
    code = KILLED_BUILD % (TEXTS,)
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), timeout=120)
    assert proc.returncode == -signal.SIGKILL
    leftovers = [p for p in (home / "indexes").iterdir() if p.name.startswith(TEMP_PREFIX)]
    assert len(leftovers) == 1 and (leftovers[0] / "index").is_dir()
    build_index()
    final = index_dir("bm25", "corpus-v1", {"k1": 1.5})
    assert [p.name for p in (home / "indexes").iterdir()] == [final.name]


# --------------------------------------------------------------------------- 2. unwritable home


def assert_clear(err: BaseException, root: str) -> None:
    """The message names the variable, its value and the fix."""
    message = str(err)
    assert f"AGENTENV_HOME={root} is not writable" in message
    assert "point AGENTENV_HOME at a writable directory" in message
    assert "export AGENTENV_HOME=" in message


def test_home_under_a_regular_file_is_reported_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: tuple[Callable, Path]
) -> None:
    build, _ = writer
    (tmp_path / "file").write_text("not a directory")
    root = str(tmp_path / "file" / "sub")
    monkeypatch.setenv("AGENTENV_HOME", root)
    with pytest.raises(CacheNotWritableError) as info:
        build()
    assert_clear(info.value, root)
    assert "Not a directory" in str(info.value)
    assert isinstance(info.value, OSError)  # callers that catch OSError still do


@pytest.mark.parametrize("code", [errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR])
@pytest.mark.parametrize("where", ["mkdir", "tempfile"])
def test_every_kind_of_unwritable_is_reported_alike(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    writer: tuple[Callable, Path],
    code: int,
    where: str,
) -> None:
    """Permission denied, read-only FS and not-a-directory are one user problem with one fix.

    Root ignores ``chmod``, so the failure is injected where the file system
    would report it: creating the folder, or creating the temporary in it.
    """
    build, _ = writer

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code), str(home))

    if where == "mkdir":
        monkeypatch.setattr(Path, "mkdir", refuse)
    else:
        monkeypatch.setattr(paths.tempfile, "mkdtemp", refuse)
        monkeypatch.setattr(paths.tempfile, "mkstemp", refuse)
    with pytest.raises(CacheNotWritableError) as info:
        build()
    assert_clear(info.value, str(home))
    assert os.strerror(code) in str(info.value)


def test_other_os_errors_are_not_disguised(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An I/O error is not a configuration problem: it keeps its own type and message."""

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(paths.tempfile, "mkdtemp", broken)
    with pytest.raises(OSError) as info:
        build_index()
    assert not isinstance(info.value, CacheNotWritableError)


def test_home_that_is_a_file_is_reported_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "home-file"
    root.write_text("")
    monkeypatch.setenv("AGENTENV_HOME", str(root))
    with pytest.raises(CacheNotWritableError) as info:
        build_index()
    assert_clear(info.value, str(root))


def test_an_existing_cache_folder_is_usable_without_writing(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A prebuilt cache on a read-only mount must still be readable: only writes may fail."""
    existing = cache_dir("media")

    def read_only_mount(path: object, *args: object, **kwargs: object) -> None:
        # Linux answers EEXIST before EROFS for a name that exists.
        code = errno.EEXIST if os.path.exists(str(path)) else errno.EROFS
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(os, "mkdir", read_only_mount)
    assert cache_dir("media") == existing
    with pytest.raises(CacheNotWritableError, match="Read-only file system"):
        cache_dir("indexes")


def test_default_home_message_says_the_variable_is_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.delenv("AGENTENV_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "file"))
    with pytest.raises(CacheNotWritableError, match="AGENTENV_HOME is not set") as info:
        cache_dir("indexes")
    assert f"export AGENTENV_HOME={Path(tempfile.gettempdir()) / 'agentenv'}" in str(info.value)


def test_the_error_survives_pickling() -> None:
    """Evaluation workers send exceptions to the parent process by pickle."""
    err = paths.not_writable(paths.agentenv_home(), OSError(errno.EROFS, "Read-only file system"))
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is CacheNotWritableError and str(again) == str(err)


def test_cli_prints_the_fix_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    root = str(tmp_path / "file" / "sub")
    monkeypatch.setenv("AGENTENV_HOME", root)

    def run(argv: object) -> int:
        cache_dir("media")
        return 0

    monkeypatch.setattr(cli, "_main", run)
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentenv: error: ") and "Traceback" not in err
    assert_clear(Exception(err), root)


# --------------------------------------------------------------------------- 3. corrupt caches


def tiny_titles() -> list[Title]:
    """Three synthetic films: enough for a catalog cache, in milliseconds."""
    return [
        Title(
            f"tt{i}",
            f"Film {i}",
            2000 + i,
            None,
            100,
            ("Drama",),
            (f"Director {i}",),
            (),
            ("Actor A", "Actor B"),
            ("English",),
            ("USA",),
            7.0,
            80,
            10,
            None,
            0,
            None,
            None,
        )
        for i in range(3)
    ]


@pytest.fixture
def tiny_catalog(monkeypatch: pytest.MonkeyPatch) -> Callable[[], media.Catalog]:
    """``load_catalog`` on three synthetic films, with no in-process memo between calls."""
    monkeypatch.setattr(media_source, "verified_db", lambda: Path("movies.db"))
    monkeypatch.setattr(media_source, "read_titles", lambda path: tiny_titles())

    def load() -> media.Catalog:
        monkeypatch.setattr(media, "_LOADED", {})
        return load_catalog()

    return load


def flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:40])


def bad_rows(path: Path) -> None:
    """Checksum right, rows wrong: a file some other version wrote with this header."""
    head = json.loads(path.read_bytes().partition(b"\n")[0])
    path.write_bytes(pack({k: v for k, v in head.items() if k != "body_sha256"}, [[1, 2]]))


def warnings_about(caplog: pytest.LogCaptureFixture, path: Path) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING
        and r.name.startswith("agentenv.")
        and str(path) in r.getMessage()
    ]


def test_first_catalog_build_is_silent(
    tiny_catalog: Callable, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    tiny_catalog()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("damage", [flip_last_byte, truncate, bad_rows])
def test_corrupt_catalog_cache_is_rebuilt_with_a_warning(
    tiny_catalog: Callable, caplog: pytest.LogCaptureFixture, damage: Callable[[Path], None]
) -> None:
    tiny_catalog()
    path = media.cache_path()
    damage(path)
    caplog.set_level(logging.WARNING)
    catalog = tiny_catalog()
    assert len(catalog) == 3
    [message] = warnings_about(caplog, path)
    assert "rebuilding" in message
    caplog.clear()
    tiny_catalog()  # the rebuilt file is good again
    assert warnings_about(caplog, path) == []


def test_corrupt_people_cache_is_rebuilt_with_a_warning(
    tiny_catalog: Callable, caplog: pytest.LogCaptureFixture
) -> None:
    tiny_catalog()
    people = media.people_cache_path()
    flip_last_byte(people)
    caplog.set_level(logging.WARNING)
    assert tiny_catalog().person("Actor A") is not None
    [message] = warnings_about(caplog, people)
    assert "rebuilding" in message


def test_corrupt_hpo_cache_is_rebuilt_with_a_warning(
    tiny_hpo: Callable[[], Path], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    target = tiny_hpo()
    assert warnings_about(caplog, target) == []  # a first build is not a rebuild
    with open(target / "terms.json", "a", encoding="utf-8") as fh:
        fh.write(" ")
    assert not hpo_cache.cache_is_valid(target, FAKE_FILES)  # type: ignore[arg-type]
    tiny_hpo()
    [message] = warnings_about(caplog, target)
    assert "terms.json" in message and "rebuilding" in message
    assert hpo_cache.cache_is_valid(target, FAKE_FILES)  # type: ignore[arg-type]
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temp or trash left


def test_hpo_cache_with_a_missing_manifest_is_named_in_the_warning(
    tiny_hpo: Callable[[], Path], caplog: pytest.LogCaptureFixture
) -> None:
    target = tiny_hpo()
    (target / "manifest.json").unlink()
    caplog.set_level(logging.WARNING)
    tiny_hpo()
    [message] = warnings_about(caplog, target)
    assert "manifest.json" in message and "rebuilding" in message


# --------------------------------------------------------------------------- 4. permissions


@pytest.fixture(params=[0o022, 0o077, 0o002], ids=["umask-022", "umask-077", "umask-002"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run the test under this process umask, then restore the previous one."""
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def test_cache_entries_get_the_mode_a_plain_open_would(
    writer: tuple[Callable, Path], umask: int
) -> None:
    """Every file a cache writer leaves is ``0o666 & ~umask``, every folder ``0o777 & ~umask``.

    Why: the temporaries come from ``mkstemp``/``mkdtemp`` (``0o600``/``0o700``);
    renamed into place as they are, the other workers and tools of the user
    (a group-shared home, a read-only copy) could not read the cache.
    """
    build, folder = writer
    build()
    entries = list(folder.rglob("*"))
    assert entries
    for path in entries:
        expected = (0o777 if path.is_dir() else 0o666) & ~umask
        assert oct(path.stat().st_mode & 0o777) == oct(expected), path


def test_atomic_write_respects_the_umask(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "x.bin"
    paths.atomic_write_bytes(path, b"abc")
    assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~umask)
    paths.atomic_write_text(path, "é")  # replacing keeps to the rule, and writes the new content
    assert path.read_text(encoding="utf-8") == "é" and oct(path.stat().st_mode & 0o777) == oct(
        0o666 & ~umask
    )
    assert [p.name for p in tmp_path.iterdir()] == ["x.bin"]  # no temporary left


def test_home_at_restores_the_previous_home(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Examples that point the cache elsewhere leave ``AGENTENV_HOME`` as they found it, set or not."""
    with paths.home_at(tmp_path / "elsewhere") as inside:
        assert paths.agentenv_home() == inside == tmp_path / "elsewhere"
    assert os.environ["AGENTENV_HOME"] == str(home)
    monkeypatch.delenv("AGENTENV_HOME")
    with pytest.raises(RuntimeError), paths.home_at(tmp_path / "elsewhere"):
        raise RuntimeError("an example that fails")
    assert "AGENTENV_HOME" not in os.environ
