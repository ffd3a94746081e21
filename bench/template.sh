#!/usr/bin/env bash
# Renders every corpus case (cases.tsv) with chartkit and with helm in the same run and
# compares whole-process wall time and peak memory (/usr/bin/time -f), medians over a few
# rounds, per chart and overall. Appends the results to BENCHMARKS.md.
# Usage: bench/template.sh [ROUNDS]   (default 5)
# Needs: the corpus (CHARTKIT_CORPUS, default ../shared/corpus), helm
# (../shared/tools/get-peers) and GNU time (/usr/bin/time).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${CHARTKIT_CORPUS:-$root/../shared/corpus}
rounds=${1:-5}
helm=${HELM:-$(command -v helm || echo "${CHARTKIT_PEERS:-$HOME/.cache/chartkit-peers}/helm")}
[[ -x $helm ]] || { echo "helm not found; run ../shared/tools/get-peers" >&2; exit 1; }
[[ -f $corpus/cases.tsv ]] || { echo "corpus not found at $corpus" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "GNU time not found at /usr/bin/time (apt-get install time)" >&2; exit 1; }

cargo build --release --quiet -p chartkit --manifest-path "$root/Cargo.toml"
chartkit=$root/target/release/chartkit
corpus=$(cd "$corpus" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One measurement: TOOL CASE-COMMAND-ARGS... -> "wall_seconds max_rss_kib" on stdout.
measure() {
  local tool=$1
  shift
  (cd "$corpus" && /usr/bin/time -f '%e %M' -o "$work/time" "$tool" "$@" >/dev/null 2>&1) || true
  cat "$work/time" | tail -1
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

results=$work/results.tsv
: >"$results"
while IFS=$'\t' read -r chart case _package _values command _rest; do
  [[ $chart == chart ]] && continue
  read -ra words <<<"$command"
  args=("${words[@]:1}")
  ck_t=(); ck_m=(); hm_t=(); hm_m=()
  for ((r = 0; r < rounds; r++)); do
    read -r t m < <(measure "$chartkit" "${args[@]}"); ck_t+=("$t"); ck_m+=("$m")
    read -r t m < <(measure "$helm" "${args[@]}"); hm_t+=("$t"); hm_m+=("$m")
  done
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$chart" "$case" \
    "$(printf '%s\n' "${ck_t[@]}" | median)" "$(printf '%s\n' "${ck_m[@]}" | median)" \
    "$(printf '%s\n' "${hm_t[@]}" | median)" "$(printf '%s\n' "${hm_m[@]}" | median)" >>"$results"
done <"$corpus/cases.tsv"

report=$work/report.md
{
  echo "machine: $(nproc) cores, $(uname -m); $("$helm" version --short) vs chartkit $("$chartkit" --version | cut -d' ' -f2), release build"
  echo "input: $(wc -l <"$results") corpus cases (cases.tsv, every command as recorded); median of $rounds rounds; whole process, /usr/bin/time -f '%e %M'"
  echo
  echo "| chart | cases | chartkit wall (s) | helm wall (s) | speed-up | chartkit peak RSS (MiB) | helm peak RSS (MiB) |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  awk -F'\t' '
    { n[$1]++; ct[$1]+=$3; ht[$1]+=$5; if ($4>cm[$1]) cm[$1]=$4; if ($6>hm[$1]) hm[$1]=$6 }
    END {
      for (c in n) printf "| %s | %d | %.3f | %.3f | %.1fx | %.1f | %.1f |\n", c, n[c], ct[c], ht[c], (ct[c]>0)?ht[c]/ct[c]:0, cm[c]/1024, hm[c]/1024
    }' "$results" | sort
  awk -F'\t' '
    { ct+=$3; ht+=$5; if ($4>cm) cm=$4; if ($6>hm) hm=$6; n++ }
    END { printf "| **all** | %d | %.3f | %.3f | **%.1fx** | %.1f | %.1f |\n", n, ct, ht, (ct>0)?ht/ct:0, cm/1024, hm/1024 }' "$results"
} >"$report"
cat "$report"

{
  echo
  echo "## chartkit template vs helm template ($(date -u +%Y-%m-%d))"
  echo
  echo "Every case of the corpus rendered by \`bench/template.sh\`: the recorded \`helm template\`"
  echo "command run once with helm and once with chartkit per round, from the corpus directory."
  echo "Wall time and peak RSS of the whole process (\`/usr/bin/time -f '%e %M'\`), median of"
  echo "the rounds, summed per chart (peak RSS: the largest case)."
  echo
  cat "$report"
} >>"$root/BENCHMARKS.md"
echo
echo "appended to BENCHMARKS.md"
