#!/usr/bin/env bash
# Renders every corpus case (cases.tsv) with chartkit and with helm in the same run and
# compares whole-process wall time and peak memory (bench/run_cases.py), medians over a few
# rounds, per chart and overall. Appends the results to BENCHMARKS.md.
# Usage: bench/template.sh [ROUNDS]   (default 5)
# Needs: the corpus (CHARTKIT_CORPUS, default ../shared/corpus), helm
# (../shared/tools/get-peers) and python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${CHARTKIT_CORPUS:-$root/../shared/corpus}
rounds=${1:-5}
helm=${HELM:-$(command -v helm || echo "${CHARTKIT_PEERS:-$HOME/.cache/chartkit-peers}/helm")}
[[ -x $helm ]] || { echo "helm not found; run ../shared/tools/get-peers" >&2; exit 1; }
[[ -f $corpus/cases.tsv ]] || { echo "corpus not found at $corpus" >&2; exit 1; }

chartkit=$("$root/scripts/build-release" --quiet)
corpus=$(cd "$corpus" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

results=$work/results.tsv
python3 "$root/bench/run_cases.py" "$corpus" "$rounds" "$chartkit" "$helm" >"$results"

report=$work/report.md
{
  echo "machine: $(nproc) cores, $(uname -m); $("$helm" version --short) vs chartkit $("$chartkit" --version | cut -d' ' -f2), release build"
  echo "input: $(wc -l <"$results") corpus cases (cases.tsv, every command as recorded); median of $rounds rounds; whole process (fork to exit, wait4 rusage)"
  echo
  echo "| chart | cases | chartkit wall (s) | helm wall (s) | speed-up | chartkit peak RSS (MiB) | helm peak RSS (MiB) |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
  awk -F'\t' '
    { n[$1]++; ct[$1]+=$3; ht[$1]+=$5; if ($4>cm[$1]) cm[$1]=$4; if ($6>hm[$1]) hm[$1]=$6 }
    END {
      for (c in n) printf "| %s | %d | %.4f | %.4f | %.1fx | %.1f | %.1f |\n", c, n[c], ct[c], ht[c], (ct[c]>0)?ht[c]/ct[c]:0, cm[c]/1024, hm[c]/1024
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
  echo "Wall time and peak RSS of the whole process (\`bench/run_cases.py\`: fork to exit, wait4's rusage), median of"
  echo "the rounds, summed per chart (peak RSS: the largest case)."
  echo
  cat "$report"
} >>"$root/BENCHMARKS.md"
echo
echo "appended to BENCHMARKS.md"
