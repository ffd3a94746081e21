#!/usr/bin/env bash
# Benchmarks chartkit's repository index against helm, side by side, and runs the fuzz
# targets briefly. Prints a Markdown table (copy it into BENCHMARKS.md).
#   bench/index.sh            full run (2,000 packages, 50 MB index, 30 s of fuzzing each)
#   PACKAGES=200 INDEX_MB=5 FUZZ_SECONDS=5 bench/index.sh   quick run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/out
packages=${PACKAGES:-2000}
index_mb=${INDEX_MB:-50}
fuzz_seconds=${FUZZ_SECONDS:-30}
corpus=${CHARTKIT_CORPUS:-$root/../shared/corpus}
[[ -d $corpus/charts ]] || corpus=/work/shared/corpus
helm=${CHARTKIT_HELM:-$HOME/.cache/chartkit-peers/helm}
mkdir -p "$out"
[[ -x $helm ]] || { echo "helm not found at $helm (run shared/tools/get-peers)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time missing: apt-get install time" >&2; exit 1; }

chartkit=$("$root/scripts/build-release" --quiet)

# measure LABEL CMD...: wall seconds and peak RSS (MiB) from /usr/bin/time -v.
rows=()
measure() {
  local label=$1; shift
  local start end wall rss
  start=$(date +%s%N)
  /usr/bin/time -v "$@" >"$out/last.out" 2>"$out/last.time" || { cat "$out/last.time" >&2; exit 1; }
  end=$(date +%s%N)
  wall=$(awk -v ns=$((end - start)) 'BEGIN {printf "%.3f", ns / 1e9}')
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$out/last.time")
  rows+=("| $label | $wall | $rss |")
}

pkgdir=$out/packages-$packages
if [[ ! -f $pkgdir/.done ]]; then
  rm -rf "$pkgdir"
  python3 "$root/bench/make_inputs.py" packages "$corpus" "$pkgdir" "$packages"
  touch "$pkgdir/.done"
fi
total_mb=$(du -sm --apparent-size "$pkgdir" | cut -f1)

# (a) repo index: cold (no index.yaml, no digest cache) and warm (both present).
export CHARTKIT_CACHE_HOME=$out/chartkit-cache
sync
rm -f "$pkgdir/index.yaml"
measure "helm repo index ($packages packages, ${total_mb} MB)" "$helm" repo index "$pkgdir" --url https://charts.example.com
cp "$pkgdir/index.yaml" "$out/helm-index.yaml"
rm -rf "$pkgdir/index.yaml" "$CHARTKIT_CACHE_HOME"
measure "chartkit repo index, cold" "$chartkit" repo index "$pkgdir" --url https://charts.example.com
measure "chartkit repo index, warm (unchanged packages)" "$chartkit" repo index "$pkgdir" --url https://charts.example.com
measure "sha256sum of every package (1 core, the hashing bound)" sh -c "cat '$pkgdir'/*.tgz | sha256sum"
diff <(grep -v 'created:\|generated:' "$out/helm-index.yaml") <(grep -v 'created:\|generated:' "$pkgdir/index.yaml") >/dev/null \
  && echo "repo index: chartkit's index equals helm's (timestamps aside)" \
  || echo "repo index: OUTPUT DIFFERS from helm's" >&2
# The warm run's fallback: one new package means a full run over the previous index.
mkdir -p "$pkgdir/added"
cp "$(ls "$pkgdir"/*.tgz | head -n 1)" "$pkgdir/added/"
measure "chartkit repo index, warm, one package added" "$chartkit" repo index "$pkgdir" --url https://charts.example.com
rm -rf "$pkgdir/added"

# (b) load a synthetic index and resolve ^1.2.
idx=$out/index-${index_mb}mb.yaml
[[ -f $idx.charts ]] || python3 "$root/bench/make_inputs.py" index "$idx" "$index_mb" >"$idx.charts"
chart=$(printf 'chart-%04d' $(( $(cat "$idx.charts") / 2 )))
idx_mb=$(du -m --apparent-size "$idx" | cut -f1)
hh=$out/helm-home
mkdir -p "$hh/config/helm" "$hh/cache/helm/repository"
printf 'apiVersion: ""\ngenerated: "0001-01-01T00:00:00Z"\nrepositories:\n- name: bench\n  url: http://127.0.0.1:9/\n' >"$hh/config/helm/repositories.yaml"
cp "$idx" "$hh/cache/helm/repository/bench-index.yaml"
measure "helm search repo --version ^1.2 (${idx_mb} MB index)" env HELM_CONFIG_HOME="$hh/config/helm" HELM_CACHE_HOME="$hh/cache/helm" HELM_DATA_HOME="$hh/data" \
  "$helm" search repo bench/$chart --version ^1.2 -o json
helm_answer=$(jq -r '.[0].version' "$out/last.out" 2>/dev/null || python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))[0]["version"])' "$out/last.out")
rm -rf "$CHARTKIT_CACHE_HOME/index-v1"
measure "chartkit repo query --version ^1.2, first load (parses, writes cache)" "$chartkit" repo query "$idx" "$chart" --version ^1.2
measure "chartkit repo query --version ^1.2, cached" "$chartkit" repo query "$idx" "$chart" --version ^1.2
ours=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))[0]["version"])' "$out/last.out")
echo "resolve ^1.2: helm chose $helm_answer, chartkit chose $ours"

echo
echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo "| run | wall (s) | peak RSS (MiB) |"
echo "| --- | ---: | ---: |"
printf '%s\n' "${rows[@]}"

# Fuzzing, briefly (needs cargo-fuzz and a nightly toolchain).
echo
if cargo fuzz --version >/dev/null 2>&1 && rustup toolchain list | grep -q nightly; then
  for target in index_parse range_parse; do
    (cd "$root/fuzz" && cargo +nightly fuzz run "$target" -- -max_total_time="$fuzz_seconds" 2>&1 | tail -n 3)
  done
else
  echo "fuzz: skipped (cargo-fuzz or nightly missing); the proptest no-panic tests in index/tests/malformed.rs cover the parsers"
fi
