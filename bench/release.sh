#!/usr/bin/env bash
# Benchmarks chartkit's release engine against helm's, side by side in one run:
# `install --wait`, `upgrade --wait` and `uninstall --wait` of the same charts, each tool
# into a fresh sandbox of its own with zero readiness delay and zero Job run time (so what
# is measured is rendering, API traffic and bookkeeping, not simulated waiting). The
# sandbox's audit log counts the API requests each tool makes. Prints Markdown (copy it
# into BENCHMARKS.md): median wall seconds over RUNS runs, the ratio, and requests.
#   bench/release.sh                              3 runs per chart and tool
#   RUNS=1 bench/release.sh                       quick
#   CHARTKIT_BIN=target/.../chartkit bench/release.sh   a release binary built already
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3}
helm=${CHARTKIT_HELM:-$HOME/.cache/chartkit-peers/helm}
corpus=${CHARTKIT_CORPUS:-$root/../shared/corpus}
[[ -x $helm ]] || { echo "helm not found at $helm (run shared/tools/get-peers)" >&2; exit 1; }
chartkit=${CHARTKIT_BIN:-$("$root/scripts/build-release" --quiet)}

work=$(mktemp -d)
sandbox_pid=
cleanup() {
  [[ -n $sandbox_pid ]] && kill "$sandbox_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The charts: helm's own starter (a Deployment, Service, ServiceAccount and a test
# hook), and corpus charts with many objects (podinfo), hook Jobs (ingress-nginx) and
# CRDs (sealed-secrets).
"$helm" create "$work/starter" >/dev/null
charts=("starter=$work/starter")
for name in podinfo ingress-nginx sealed-secrets; do
  tgz=$(ls "$corpus"/charts/"$name"-[0-9]*.tgz 2>/dev/null | head -1 || true)
  [[ -n $tgz ]] && charts+=("$name=$tgz")
done

# start_sandbox DIR: a fresh sandbox whose kubeconfig is DIR/kubeconfig and whose audit
# log is DIR/audit.jsonl.
start_sandbox() {
  local dir=$1
  mkdir -p "$dir"
  "$chartkit" sandbox up --addr 127.0.0.1:0 --pod-ready-delay 0s --job-duration 0s \
    --kubeconfig "$dir/kubeconfig" --state-file "$dir/state.json" \
    --audit-log "$dir/audit.jsonl" >"$dir/sandbox.log" 2>&1 &
  sandbox_pid=$!
  for _ in $(seq 1 500); do
    [[ -s $dir/state.json ]] && return 0
    sleep 0.01
  done
  echo "the sandbox did not start: $(cat "$dir/sandbox.log")" >&2
  exit 1
}

stop_sandbox() {
  kill "$sandbox_pid" 2>/dev/null || true
  wait "$sandbox_pid" 2>/dev/null || true
  sandbox_pid=
}

# step TOOL DIR ARGS...: runs one command against the sandbox; prints "seconds requests".
step() {
  local tool=$1 dir=$2; shift 2
  local before after start end
  before=$(wc -l <"$dir/audit.jsonl")
  start=$(date +%s%N)
  KUBECONFIG=$dir/kubeconfig HELM_CONFIG_HOME=$work/helm-config HELM_CACHE_HOME=$work/helm-cache \
    CHARTKIT_CONFIG_HOME=$work/ck-config CHARTKIT_CACHE_HOME=$work/ck-cache \
    "$tool" "$@" >"$dir/last.out" 2>&1 || { echo "failed: $tool $*" >&2; cat "$dir/last.out" >&2; exit 1; }
  end=$(date +%s%N)
  after=$(wc -l <"$dir/audit.jsonl")
  awk -v ns=$((end - start)) -v n=$((after - before)) 'BEGIN {printf "%.3f %d\n", ns / 1e9, n}'
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

declare -A secs reqs
for entry in "${charts[@]}"; do
  name=${entry%%=*} chart=${entry#*=}
  for run in $(seq 1 "$runs"); do
    for tool in helm chartkit; do
      bin=$helm; [[ $tool == chartkit ]] && bin=$chartkit
      dir=$work/$name-$tool-$run
      start_sandbox "$dir"
      read -r s n < <(step "$bin" "$dir" install web "$chart" --wait --timeout 2m)
      secs[$name,install,$tool]+="$s "; reqs[$name,install,$tool]=$n
      read -r s n < <(step "$bin" "$dir" upgrade web "$chart" --wait --timeout 2m)
      secs[$name,upgrade,$tool]+="$s "; reqs[$name,upgrade,$tool]=$n
      read -r s n < <(step "$bin" "$dir" uninstall web --wait --timeout 2m)
      secs[$name,uninstall,$tool]+="$s "; reqs[$name,uninstall,$tool]=$n
      stop_sandbox
    done
  done
done

echo "| chart | step | helm (s) | chartkit (s) | chartkit is | helm requests | chartkit requests |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
for entry in "${charts[@]}"; do
  name=${entry%%=*}
  for op in install upgrade uninstall; do
    h=$(tr ' ' '\n' <<<"${secs[$name,$op,helm]}" | grep . | median)
    c=$(tr ' ' '\n' <<<"${secs[$name,$op,chartkit]}" | grep . | median)
    ratio=$(awk -v h="$h" -v c="$c" 'BEGIN {printf "%.1fx faster", h / c}')
    echo "| $name | $op | $h | $c | $ratio | ${reqs[$name,$op,helm]} | ${reqs[$name,$op,chartkit]} |"
  done
done
echo
echo "helm $("$helm" version --short), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end, $runs runs (median)"
