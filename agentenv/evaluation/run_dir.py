"""The run directory of ``agentenv eval``: the one writer of ``summary.json``, ``episodes.jsonl`` and ``run.json``.

Why one writer: a run must never lose finished work and never overwrite
another run by accident, whether it runs in local processes, on Ray, or from
``reproduce``. So every path that writes a run goes through
:class:`RunDirectory`:

* ``open`` refuses a folder that already holds a run unless the caller asked
  to ``overwrite`` it or to ``resume`` it, and refuses an ``--out`` that is a
  file;
* ``run.json`` records what defines the run (env id and kwargs, agent and its
  arguments, split or task-file sha256, seed), written before the first
  episode, so a resumed run can be checked against it even after a ``kill -9``;
* each episode record is appended to ``episodes.jsonl`` (and flushed) as it
  finishes, in episode order, so the file always holds episodes ``0..k-1``;
  each line carries a digest chained to the line before it and to the run's
  header (:mod:`agentenv.evaluation.run_files`), so an edited, cut or foreign
  row is refused, naming its line, when the run is resumed or ranked;
* ``write_summary`` replaces ``summary.json`` atomically; an interrupted or
  stopped run's summary says ``"complete": false``.

A resumed run reads the finished records back (checking each one's digest and
the ranges of its numbers, :mod:`agentenv.evaluation.run_values`), runs
episodes ``k..N-1`` and appends them: since episode ``i`` is fully determined by ``(seed, i)``
(:mod:`agentenv.evaluation.runner`), its ``episodes.jsonl`` is byte-identical
to that of a run that was never interrupted.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Literal

from agentenv import __version__
from agentenv.errors import UserInputError
from agentenv.evaluation.fingerprint import describe_part, differing
from agentenv.evaluation.run_files import (
    DIGEST_FORMAT,
    RunFileError,
    chain_line,
    header_digest,
    iter_lines,
    parse_object,
    read_json_object,
    row_digest,
    shown_value,
    split_digest,
)
from agentenv.evaluation.run_values import check_record
from agentenv.storage.paths import normal_mode

SUMMARY_FILE = "summary.json"
EPISODES_FILE = "episodes.jsonl"
IDENTITY_FILE = "run.json"
RUN_FILES = (SUMMARY_FILE, EPISODES_FILE, IDENTITY_FILE)
PREVIOUS_RUN = ".previous-run"
"""The folder in a run directory where an overwritten run waits until its replacement completes
(hidden: the leaderboard does not read it)."""
IDENTITY_KEYS = ("env_id", "env_kwargs", "agent", "agent_args", "split", "tasks_sha256", "seed")
"""What must match for ``--resume`` to continue a run (``episodes`` may grow: a longer run's
first episodes are the shorter run's)."""
HEADER_KEYS = (
    "env_id",
    "env_kwargs",
    "split",
    "tasks_sha256",
    "seed",
    "package_version",
    "fingerprint",
)
"""What the digest chain of ``episodes.jsonl`` starts from (recorded in ``run.json``): what defines the
episodes (env id and kwargs, split or task file, seed), the package version that ran them and the env's
fingerprint (:mod:`~agentenv.evaluation.fingerprint`). Not the agent: episode ``i`` of a scripted agent
and of the same agent behind a slow wrapper are the same bytes, and ``--resume`` checks the agent apart."""


SERVED_KEYS = ("corpus_checksums", "reward_preset", "n_tasks")
"""What the env served (its corpora's sha256, the reward preset's name, the tasks the episodes were
drawn from), recorded in ``run.json`` and joining the chain's header, so a summary cannot claim
another corpus, preset name or task count (``n_tasks`` grants the every-task-once exemption) than
the run had. Runs written before these were recorded have none of them; their header is unchanged."""


def run_header(identity: Mapping[str, Any]) -> dict[str, Any]:
    """The chain's header of a run identity (``run.json``), as JSON reads it back (tuples -> lists):
    :data:`HEADER_KEYS`, and the :data:`SERVED_KEYS` the identity records."""
    header = {key: identity.get(key) for key in HEADER_KEYS}
    header.update((key, identity[key]) for key in SERVED_KEYS if key in identity)
    return json.loads(json.dumps(header))


def served_fields(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The :data:`SERVED_KEYS` of an env's metadata (:func:`~agentenv.evaluation.runner.env_metadata`),
    as JSON reads them back."""
    return json.loads(json.dumps({key: meta[key] for key in SERVED_KEYS if key in meta}))


def read_chain(
    file: Path, root: str, *, cut_tail: bool = False
) -> tuple[list[dict[str, Any]], str, int]:
    """The records of ``episodes.jsonl``, each line's digest checked against the chain from ``root``.

    Returns the records, the last digest (``root`` for no rows) and the bytes of complete lines.
    ``cut_tail``: a last line without its newline (a run killed mid-write) ends the read instead of
    being an error.

    Raises:
        RunFileError: naming ``file line N``: not a regular file, a line too long, not a JSON object, no
            digest, a digest that does not chain, an episode out of order, a value out of range.
    """
    records: list[dict[str, Any]] = []
    previous, keep = root, 0
    for number, raw in iter_lines(file):
        where = f"{file} line {number}"
        if not raw.endswith(b"\n"):
            if cut_tail:
                break  # cut off mid-write: this episode runs again
            raise RunFileError(
                f"{where}: cut off (no newline at its end); the run file is incomplete"
            )
        split = split_digest(raw)
        if split is None:
            parse_object(raw, where, "an episode record")  # a broken line says so first
            raise RunFileError(
                f"{where}: no digest (written by an agentenv without row digests, or edited); "
                "its rows cannot be verified: run it again"
            )
        body, digest = split
        if digest != row_digest(previous, body):
            what = (
                "the run's header (run.json): it was written by another run (env, kwargs, task set, "
                "seed, package version, fingerprint, corpora or task count) or edited"
                if number == 1
                else "the row before: this row was edited, or rows before it were cut, reordered or "
                "pasted from another run"
            )
            raise RunFileError(f"{where}: its digest does not follow from {what}")
        record = parse_object(raw, where, "an episode record")
        episode = record.get("episode")
        if type(episode) is not int or episode != len(records):
            raise RunFileError(
                f"{where}: is episode {record.get('episode')!r}, expected {len(records)}"
            )
        check_record(record, where)
        records.append(record)
        previous = digest
        keep += len(raw)
    return records, previous, keep


Mode = Literal["new", "overwrite", "resume"]


class RenderedRecord(dict):  # type: ignore[type-arg]
    """A record whose ``episodes.jsonl`` line was rendered where the episode ran (a worker process).

    Why: pickling each record's whole transcript back through the process pool, and encoding it again
    in the parent, made ``--workers 2`` slower than one process. A worker sends the finished line (one
    string, cheap to pickle) and a compact record without ``messages`` (what the summary reads); the
    writer appends the line as it is, so ``episodes.jsonl`` is byte-identical for any worker count.
    """

    line: str


def rendered(record: Mapping[str, Any], line: str) -> RenderedRecord:
    """``record`` (compact) carrying its already-rendered ``line``."""
    out = RenderedRecord(record)
    out.line = line
    return out


def record_line(record: Mapping[str, Any]) -> str:
    """One ``episodes.jsonl`` line: the record as JSON, non-ASCII kept, and a newline (or the line a
    worker already rendered, for a :class:`RenderedRecord`)."""
    line = getattr(record, "line", None)
    return line if line is not None else json.dumps(record, ensure_ascii=False) + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename, so a reader
    (or an interrupt) sees the old file or the new one, never half of one."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, normal_mode())  # as a plain open() leaves it, not mkstemp's 0600
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def holds_run(path: Path) -> bool:
    """Whether ``path`` already holds (part of) a run."""
    return any((path / name).exists() for name in RUN_FILES)


def run_below(path: Path, depth: int = 6, limit: int = 4096) -> Path | None:
    """A run folder inside ``path`` (``depth`` levels down, at most ``limit`` folders looked at),
    or None.

    Why: ``agentenv eval`` without ``--out`` writes to ``results/``, the folder the README's runs
    sit in (``results/bm25``, ``results/casual/bm25``); a run written there joined theirs in
    ``agentenv leaderboard results/`` as a row of no folder of its own.
    """
    level, seen = [path], 0
    for _ in range(depth):
        below: list[Path] = []
        for folder in level:
            try:
                children = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for child in children:
                if seen >= limit:
                    return None
                if not child.is_dir(follow_symlinks=False) or child.name.startswith("."):
                    continue
                seen += 1
                if holds_run(Path(child.path)):
                    return Path(child.path)
                below.append(Path(child.path))
        level = below
    return None


def refuse_file(path: Path, flag: str = "--out") -> None:
    """A one-line error for an output location that is a file or lies under one."""
    for parent in (path, *path.parents):
        if parent.exists():
            if not parent.is_dir():
                where = "is a file" if parent == path else f"is inside {parent}, which is a file"
                raise UserInputError(f"{flag} {path}: {where}; give a folder")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise UserInputError(f"{flag} {path}: cannot write in {parent} (permission denied)")
            return


class RunDirectory:
    """One run's folder: opened once, appended to episode by episode, summarised at the end or on a stop.

    Args:
        path: the run directory (``--out``).
        identity: what defines the run (see :data:`IDENTITY_KEYS`), plus ``episodes``, the planned count.
        mode: ``new`` (refuse a folder holding a run), ``overwrite`` (remove its run files first) or
            ``resume`` (check the identity, keep its finished episodes).
    """

    def __init__(self, path: Path, identity: Mapping[str, Any], mode: Mode = "new") -> None:
        self.path = Path(path)
        self.identity = dict(identity)
        self.mode = mode
        self.records: list[dict[str, Any]] = []
        """The finished records read back on resume (those appended later are the caller's)."""
        self._episodes: IO[str] | None = None
        self._started = False
        self._recorded: dict[str, Any] | None = None
        self.last_digest: str | None = None
        """The digest of the last row written or read back (``summary.json``'s ``episodes_digest``)."""
        self._open()

    @property
    def done(self) -> int:
        """Finished episodes found on resume: the run continues at this episode."""
        return len(self.records)

    def _open(self) -> None:
        """Check what is there; nothing is written until :meth:`start` (a run that fails to build leaves no trace)."""
        refuse_file(self.path)
        exists = holds_run(self.path)
        if self.mode == "new" and exists:
            raise UserInputError(
                f"{self.path} already holds a run; pass --overwrite to replace it, "
                "--resume to continue it, or choose another --out (from Python: overwrite=True, "
                "resume=True or another out=)"
            )
        if self.mode == "resume":
            if not exists:
                raise UserInputError(
                    f"--resume: {self.path} holds no run to continue; drop --resume to start one"
                )
            for name in RUN_FILES:  # resume writes these: through a link it would edit another run
                if (self.path / name).is_symlink():
                    raise UserInputError(
                        f"--resume: {self.path / name} is a symbolic link; a resumed run writes its "
                        "own files: copy the run directory instead of linking its files"
                    )
            self._check_identity()
            self.records = self._read_finished()

    def start(self, config: object = None, meta: Mapping[str, Any] | None = None) -> None:
        """Write ``run.json`` (removing an overwritten run's files first) and open ``episodes.jsonl`` for appending.

        Called once the env is built and the agent checked, just before the first episode, with the
        env's metadata: its ``fingerprint`` joins the run's header. A resumed run whose env now has
        another fingerprint (a reworded prompt, another tool, reward or grader) is refused, naming the part.
        """
        if self._started:
            return
        if self.mode != "resume":  # checked here, once the env and agent are known to be good
            inner = run_below(self.path)
            if inner is not None:
                raise UserInputError(
                    f"--out {self.path} holds other runs below it ({inner}); a run written there "
                    f"would sit among theirs (`agentenv leaderboard {self.path}` reads them all): "
                    f"give it a folder of its own, e.g. --out {self.path / 'NAME'}"
                )
        fingerprint = (meta or {}).get("fingerprint")
        if (
            meta is None and self._recorded is not None
        ):  # nothing new to check (a summary-only start)
            fingerprint = self._recorded.get("fingerprint")
        elif self._recorded is not None:  # resume: the header the finished rows chain from
            parts = differing(self._recorded.get("fingerprint"), fingerprint)
            if parts:
                raise UserInputError(
                    f"--resume: {self.path} was run with another "
                    f"{' and '.join(describe_part(p) for p in parts)} than this env has (its "
                    "fingerprint in run.json); its episodes cannot be continued here: pass "
                    "--overwrite to start again"
                )
        self._started = True
        self._record_served(meta)
        planned = getattr(config, "episodes", None)
        if self.identity.get("episodes") is None and type(planned) is int:
            # one pass over a task file (no --episodes): the plan is known once the env is built
            self.identity["episodes"] = planned
        self.identity["package_version"] = __version__
        self.identity["fingerprint"] = json.loads(json.dumps(fingerprint))
        self.identity["digest_format"] = DIGEST_FORMAT
        if self.last_digest is None:
            self.last_digest = header_digest(run_header(self.identity))
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as err:  # a place no folder can be made (under /proc, a read-only disk)
            raise UserInputError(
                f"--out {self.path}: cannot make the folder ({err.strerror or err}); "
                "give a folder you can write in"
            ) from None
        if self.mode == "overwrite" and holds_run(self.path):
            self._keep_previous()
        elif self.mode != "resume":
            for name in RUN_FILES:
                (self.path / name).unlink(missing_ok=True)
        write_atomic(
            self.path / IDENTITY_FILE,
            json.dumps(self.identity, indent=2, ensure_ascii=False) + "\n",
        )
        self._episodes = (self.path / EPISODES_FILE).open("a", encoding="utf-8")

    def _record_served(self, meta: Mapping[str, Any] | None) -> None:
        """Put what the env served into the identity: a new run's from ``meta``; a resumed run keeps
        what ``run.json`` recorded (none for a run written before these were recorded, so its
        header stays the one its rows chain from) and is refused if the env now serves otherwise."""
        served = served_fields(meta) if meta is not None else {}
        if self._recorded is None:
            self.identity.update(served)
            return
        recorded = {key: self._recorded[key] for key in SERVED_KEYS if key in self._recorded}
        for key, value in recorded.items():
            if key in served and served[key] != value:
                raise UserInputError(
                    f"--resume: {self.path} was run with {key}={shown_value(value)} (run.json), this "
                    f"env has {key}={shown_value(served[key])}; its episodes cannot be continued here: "
                    "pass --overwrite to start again"
                )
        self.identity.update(recorded)

    def _check_identity(self) -> None:
        file = self.path / IDENTITY_FILE
        try:
            recorded = read_json_object(file, "a run.json")
        except FileNotFoundError:
            raise UserInputError(
                f"--resume: {self.path} has no {IDENTITY_FILE} (written by an older agentenv), "
                "so it cannot be checked; pass --overwrite to start again"
            ) from None
        except RunFileError as err:
            raise UserInputError(f"--resume: {err}; pass --overwrite to start again") from None
        except OSError as err:
            raise UserInputError(
                f"--resume: {file} is unreadable ({err.strerror or err}); pass --overwrite to start again"
            ) from None
        if recorded.get("digest_format") != DIGEST_FORMAT:
            raise UserInputError(
                f"--resume: {self.path} was written by an agentenv without row digests "
                f"({IDENTITY_FILE} has no digest_format {DIGEST_FORMAT!r}), so its episodes cannot be "
                "verified; pass --overwrite to run it again"
            )
        if recorded.get("package_version") != __version__:
            raise UserInputError(
                f"--resume: {self.path} was run by agentenv {recorded.get('package_version')!r}, this is "
                f"{__version__!r}; a resumed run must be the one an uninterrupted run writes: finish it "
                "with that version, or pass --overwrite"
            )
        self._recorded = recorded
        for key in IDENTITY_KEYS:
            mine = json.loads(
                json.dumps(self.identity.get(key))
            )  # as JSON reads it back (tuples -> lists)
            if recorded.get(key) != mine:
                raise UserInputError(
                    f"--resume: {self.path} was run with {key}={recorded.get(key)!r}, this run has "
                    f"{key}={mine!r}; resume with the same arguments, or pass --overwrite"
                )

    def _read_finished(self) -> list[dict[str, Any]]:
        """The complete, verified lines of ``episodes.jsonl``; a last line cut off by a kill is dropped
        from the file. Any other flaw refuses the resume, naming the first bad line."""
        file = self.path / EPISODES_FILE
        if not os.path.lexists(file):
            return []
        assert self._recorded is not None
        root = header_digest(run_header(self._recorded))
        try:
            records, last, keep = read_chain(file, root, cut_tail=True)
        except RunFileError as err:
            raise UserInputError(f"--resume: {err}; pass --overwrite to run it again") from None
        except OSError as err:
            raise UserInputError(
                f"--resume: {file} is unreadable ({err.strerror or err}); pass --overwrite"
            ) from None
        self.last_digest = last
        if keep != file.stat().st_size:
            with file.open("r+b") as f:
                f.truncate(keep)
        return records

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one finished episode's record, flushed, so an interrupt keeps it."""
        self.start()
        if self._episodes is None or self.last_digest is None:
            raise RuntimeError(f"{self.path}: the run directory is closed")
        line = chain_line(record_line(record), self.last_digest)
        self._episodes.write(line)
        self._episodes.flush()
        self.last_digest = line[-67:-3]

    def _keep_previous(self) -> None:
        """Move the run being overwritten into :data:`PREVIOUS_RUN`, replacing an older one there.

        Why: an ``--overwrite`` run stopped by Ctrl-C used to leave neither run whole: the old
        one's files were deleted before the first new episode. The old run now stays in the
        folder until the new one completes.
        """
        previous = self.path / PREVIOUS_RUN
        if previous.is_dir() and not previous.is_symlink() and not _complete(self.path):
            for name in RUN_FILES:  # a stopped replacement: the complete run kept before stays
                (self.path / name).unlink(missing_ok=True)
            return
        if previous.is_symlink() or previous.is_file():
            previous.unlink()
        elif previous.exists():
            shutil.rmtree(previous)
        previous.mkdir()
        for name in RUN_FILES:
            if (self.path / name).exists() or (self.path / name).is_symlink():
                (self.path / name).replace(previous / name)

    def write_summary(self, summary_json: str) -> Path:
        """Replace ``summary.json`` (atomically) and close ``episodes.jsonl``; once the run is
        complete, the run it overwrote (kept in :data:`PREVIOUS_RUN`) is removed."""
        self.start()
        self.close()
        path = self.path / SUMMARY_FILE
        write_atomic(path, summary_json if summary_json.endswith("\n") else summary_json + "\n")
        if json.loads(summary_json).get("complete", True) is True:  # a finished one omits it
            shutil.rmtree(self.path / PREVIOUS_RUN, ignore_errors=True)
        return path

    def close(self) -> None:
        """Close ``episodes.jsonl`` (everything appended is already on disk)."""
        if self._episodes is not None:
            self._episodes.close()
            self._episodes = None


def _complete(path: Path) -> bool:
    """Whether the run in ``path`` finished: a summary that does not say ``"complete": false``."""
    try:
        summary = json.loads((path / SUMMARY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and summary.get("complete", True) is True


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Inside, SIGTERM raises :class:`KeyboardInterrupt` as Ctrl-C does, so a killed run writes what finished
    (a batch scheduler's stop is a SIGTERM)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def replace_folder(staged: Path, target: Path) -> None:
    """Move a finished ``staged`` folder to ``target``; an existing ``target`` is moved aside first and
    removed after, so ``target`` is always the whole old folder or the whole new one."""
    aside = None
    if target.exists():
        aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
        os.replace(target, aside / target.name)
    os.replace(staged, target)
    if aside is not None:
        shutil.rmtree(aside, ignore_errors=True)


def staging_folder(target: Path) -> Path:
    """An empty temporary folder beside ``target`` (same file system, so the final rename is atomic).

    Raises:
        UserInputError: no folder can be made there (under ``/proc``, on a read-only disk).
    """
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staged = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
        staged.chmod(normal_mode(directory=True))  # the export's folder, not mkdtemp's 0700
        return staged
    except OSError as err:
        raise UserInputError(
            f"--out {target}: cannot make a folder there ({err.strerror or err}); "
            "give a folder you can write in"
        ) from None
