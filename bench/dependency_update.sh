#!/usr/bin/env bash
# `dependency update` of a chart with 10 dependencies from two repositories (two
# `chartkit serve` processes on 127.0.0.1, each with 5 charts × 20 versions), helm and
# chartkit in the same run:
#   cold: empty caches (helm: repo add + dependency update; chartkit: repo add + dependency update)
#   warm: a second `dependency update` with everything cached (charts/ removed first)
#   build: `dependency build` from the lock with a warm cache (charts/ removed first)
# Prints a Markdown table (copy it into BENCHMARKS.md).
# Usage: bench/dependency_update.sh     env: RUNS (repetitions, median reported; default 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-5}
helm=${CHARTKIT_HELM:-$HOME/.cache/chartkit-peers/helm}
[[ -x $helm ]] || { echo "helm not found at $helm (run shared/tools/get-peers)" >&2; exit 1; }
. "$root/bench/lib.sh"
chartkit=$(bench_chartkit)
bench_work

# Two repositories of 5 charts × 20 versions, each chart with a few templates and values.
for repo in one two; do
  mkdir -p "$work/$repo"
  for c in 1 2 3 4 5; do
    name=$repo-chart$c
    src=$work/src/$name
    mkdir -p "$src/templates"
    for i in $(seq 1 20); do printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-%s\ndata:\n  i: "%s"\n' "$i" "$i" >"$src/templates/cm$i.yaml"; done
    printf 'replicas: 1\nimage: {repository: example/%s, tag: latest}\n' "$name" >"$src/values.yaml"
    for v in $(seq 0 19); do
      printf 'apiVersion: v2\nname: %s\nversion: 1.%s.0\ndescription: chart %s\n' "$name" "$v" "$name" >"$src/Chart.yaml"
      "$chartkit" package "$src" -d "$work/$repo" >/dev/null
    done
  done
done
url_one=$(bench_serve "$work/one")
url_two=$(bench_serve "$work/two")

chart=$work/parent
mkdir -p "$chart"
{
  printf 'apiVersion: v2\nname: parent\nversion: 1.0.0\ndependencies:\n'
  for c in 1 2 3 4 5; do
    printf -- '- name: one-chart%s\n  version: "^1.%s"\n  repository: "@one"\n' "$c" "$c"
    printf -- '- name: two-chart%s\n  version: "~1.1%s.0"\n  repository: "@two"\n' "$c" "$c"
  done
} >"$chart/Chart.yaml"

# time_ms CMD...: wall milliseconds of one run (output discarded, failure fatal).
time_ms() {
  local start end
  start=$(date +%s%N)
  "$@" >"$work/last.out" 2>&1 || { cat "$work/last.out" >&2; exit 1; }
  end=$(date +%s%N)
  echo $(((end - start) / 1000000))
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Adds the two repositories to chartkit's settings (with `repo add` when the binary has it).
ck_add() {
  if "$chartkit" repo add --help >/dev/null 2>&1; then
    ck_env "$chartkit" repo add one "$url_one" >/dev/null && ck_env "$chartkit" repo add two "$url_two" >/dev/null
  else
    mkdir -p "$work/ck/config"
    printf 'apiVersion: ""\ngenerated: "0001-01-01T00:00:00Z"\nrepositories:\n- name: one\n  url: %s\n- name: two\n  url: %s\n' "$url_one" "$url_two" >"$work/ck/config/repositories.yaml"
  fi
}
helm_env() { env HELM_CONFIG_HOME="$work/helm/config" HELM_CACHE_HOME="$work/helm/cache" HELM_DATA_HOME="$work/helm/data" "$@"; }
ck_env() { env CHARTKIT_CONFIG_HOME="$work/ck/config" CHARTKIT_CACHE_HOME="$work/ck/cache" "$@"; }

# The timed `bash -c` commands see these.
export work chartkit url_one url_two
declare -A results
for _ in $(seq "$runs"); do
  # helm, cold.
  rm -rf "$work/helm" "$chart/charts" "$chart/Chart.lock"
  results[helm_cold]+="$(time_ms bash -c "$(declare -f helm_env); helm_env '$helm' repo add one '$url_one' && helm_env '$helm' repo add two '$url_two' && helm_env '$helm' dependency update '$chart'") "
  rm -rf "$chart/charts"
  results[helm_warm]+="$(time_ms helm_env "$helm" dependency update "$chart") "
  rm -rf "$chart/charts"
  results[helm_build]+="$(time_ms helm_env "$helm" dependency build "$chart") "
  cp "$chart/Chart.lock" "$work/helm.lock"
  # chartkit, cold.
  rm -rf "$work/ck" "$chart/charts" "$chart/Chart.lock"
  results[ck_cold]+="$(time_ms bash -c "$(declare -f ck_env ck_add); ck_add && ck_env '$chartkit' dependency update '$chart'") "
  rm -rf "$chart/charts"
  results[ck_warm]+="$(time_ms ck_env "$chartkit" dependency update "$chart") "
  rm -rf "$chart/charts"
  results[ck_build]+="$(time_ms ck_env "$chartkit" dependency build "$chart") "
done
# Both tools lock the same versions.
diff <(grep -v generated "$work/helm.lock") <(grep -v generated "$chart/Chart.lock") >&2 \
  || { echo "helm and chartkit locked different dependencies" >&2; exit 1; }

row() { echo "| $1 | $(tr ' ' '\n' <<<"${results[$2]}" | grep . | median) | $(tr ' ' '\n' <<<"${results[$3]}" | grep . | median) |"; }
echo "## dependency update, 10 dependencies from two repositories ($(date -u +%Y-%m-%d), median of $runs)"
echo
echo "| run | helm (ms) | chartkit (ms) |"
echo "| --- | ---: | ---: |"
row "cold: repo add ×2 + dependency update (empty caches)" helm_cold ck_cold
row "warm: dependency update again (charts/ removed)" helm_warm ck_warm
row "dependency build from the lock (charts/ removed)" helm_build ck_build
