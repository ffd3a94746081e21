#!/usr/bin/env bash
# Packs every corpus chart with chartkit and with helm in the same run and prints the
# wall-time ratio. Usage: bench/package.sh [ROUNDS]   (default 7; median reported)
# Needs: the corpus (CHARTKIT_CORPUS, default ../shared/corpus) and helm (../shared/tools/get-peers).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${CHARTKIT_CORPUS:-$root/../shared/corpus}
rounds=${1:-7}
helm=${HELM:-$(command -v helm || echo "${CHARTKIT_PEERS:-$HOME/.cache/chartkit-peers}/helm")}
[[ -x $helm ]] || { echo "helm not found; run ../shared/tools/get-peers" >&2; exit 1; }
[[ -d $corpus/charts ]] || { echo "corpus not found at $corpus" >&2; exit 1; }

chartkit=$("$root/scripts/build-release" --quiet)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dirs=()
i=0
while IFS= read -r package; do
  i=$((i + 1))
  mkdir -p "$work/src/$i"
  tar -xzf "$package" -C "$work/src/$i"
  dir=$(find "$work/src/$i" -mindepth 1 -maxdepth 1 -type d | head -1)
  # Keep only charts helm itself can package, so both tools do the same work.
  if "$helm" package "$dir" -d "$work/probe" >/dev/null 2>&1; then dirs+=("$dir"); fi
done < <(find "$corpus/charts" -name '*.tgz' | sort)
bytes=$(du -sb "$work/src" | cut -f1)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_ms() { # runs "$@" once, prints wall milliseconds
  local start end
  start=$(date +%s%N); "$@" >/dev/null 2>&1; end=$(date +%s%N)
  echo $(((end - start) / 1000000))
}
ours=(); theirs=()
for ((r = 0; r < rounds; r++)); do
  rm -rf "$work/out-ck" "$work/out-helm"
  ours+=("$(time_ms "$chartkit" package "${dirs[@]}" -d "$work/out-ck")")
  theirs+=("$(time_ms "$helm" package "${dirs[@]}" -d "$work/out-helm")")
done
ck=$(printf '%s\n' "${ours[@]}" | median)
hm=$(printf '%s\n' "${theirs[@]}" | median)
echo "machine:   $(nproc) cores, $(uname -m); $("$helm" version --short) vs chartkit $("$chartkit" --version | cut -d' ' -f2)"
echo "input:     ${#dirs[@]} corpus charts (with vendored subcharts), $((bytes / 1024)) KiB unpacked; warm page cache; median of $rounds rounds"
echo "chartkit:  ${ck} ms   ($(ls "$work/out-ck" | wc -l) packages)"
echo "helm:      ${hm} ms   ($(ls "$work/out-helm" | wc -l) packages)"
awk -v a="$hm" -v b="$ck" 'BEGIN { if (b < 1) b = 1; printf "ratio:     chartkit is %.1fx faster than helm\n", a / b }'
