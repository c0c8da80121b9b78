#!/usr/bin/env bash
# Every leaderboard run, then the boards: bash benchmarks/leaderboard_runs.sh [OUT] [media|rare|all]
# (not a test; about 2 minutes on 2 cores once the caches are built: 1 min 52 s at load 2.5-3.7).
# Each split is its own board: the leaderboard refuses to mix splits or question sets. OUT defaults
# to results/leaderboard.
set -euo pipefail
out="${1:-results/leaderboard}"
which="${2:-all}"
size() {  # split env: how many tasks the split has (every board covers its whole split, once)
  python -c "import gymnasium as gym, agentenv; print(len(gym.make('$2', split='$1').unwrapped.tasks))"
}
run() {  # split env agent
  agentenv eval "$2" --agent "$3" --split "$1" --episodes "$(size "$1" "$2")" --workers 2 --no-progress \
    --overwrite --out "$out/$1/$2/$3"
}
if [[ "$which" != rare ]]; then
  for env in MediaSearch-v0 MediaSearch-SingleTurn-v0; do
    for agent in random oracle bm25; do
      run test "$env" "$agent"
      run casual "$env" "$agent"
    done
  done
fi
if [[ "$which" != media ]]; then
  for env in RareDiseaseDiagnosis-v0 RareDiseaseDiagnosis-SingleTurn-v0; do
    for agent in random oracle bm25 phenotype-ranker; do
      run test "$env" "$agent"
      run real "$env" "$agent"
    done
  done
fi
for split in test casual real; do
  if [[ -d "$out/$split" ]]; then agentenv leaderboard "$out/$split" --out "$out/board-$split"; fi
done
