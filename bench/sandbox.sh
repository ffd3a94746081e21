#!/usr/bin/env bash
# chartkit sandbox under load (release build), in memory and with --data:
#  1. startup: from exec until the state file with the address appears, and until
#     GET /version answers; plain, --tls, --data on a small state, and --data on the
#     large state the load left (restore time);
#  2. load (sandbox/examples/sandbox_load.rs, HTTP/1.1 keep-alive, CONCURRENCY
#     connections): COUNT creates, gets, 20 full lists, COUNT merge patches with a live
#     watch, and a watch replaying every change; ConfigMaps (~1.5 KiB) and Pods (two
#     containers), each with requests/s, p50/p99 and the server's RSS per 10,000 objects;
#  3. kubectl against the loaded sandbox, when ~/.cache/chartkit-peers/kubectl is there.
# Prints Markdown; BENCHMARKS.md quotes a run.
# Usage: bench/sandbox.sh     env: COUNT (default 10000), CONCURRENCY (default 16),
#                             RUNS (startup runs, default 20), CHARTKIT (a release
#                             binary already built, with examples/sandbox_load beside it)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
count=${COUNT:-10000}
concurrency=${CONCURRENCY:-16}
runs=${RUNS:-20}

if [[ -n ${CHARTKIT:-} ]]; then
  chartkit=$CHARTKIT
else
  chartkit=$("$root/scripts/build-release" --quiet)
  # With chartkit's own flags and features, so it reuses that build's dependencies.
  "$root/scripts/build-release" --quiet -p chartkit-sandbox --example sandbox_load >/dev/null
fi
load=$(dirname "$chartkit")/examples/sandbox_load
kubectl=${KUBECTL:-$HOME/.cache/chartkit-peers/kubectl}
[[ -x $kubectl ]] || kubectl=$(command -v kubectl || true)

work=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Starts a sandbox with the given extra arguments; sets $pid and $url.
start() {
  local state=$work/state-$RANDOM.json
  "$chartkit" sandbox up --addr 127.0.0.1:0 --kubeconfig "$work/kubeconfig" \
    --state-file "$state" "$@" >>"$work/sandbox.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    [[ -s $state ]] && break
    sleep 0.01
  done
  url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$state")
  [[ -n $url ]] || { cat "$work/sandbox.log" >&2; exit 1; }
}

stop() {
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  pid=
}

echo "## chartkit sandbox ($(date -u +%F), $(nproc) cores, $(sed -n 's/model name\s*: //p' /proc/cpuinfo | head -1))"
if [[ $runs -gt 0 ]]; then
  echo
  echo "### Startup"
  echo
  "$load" startup "$chartkit" "$runs"
  "$load" startup "$chartkit" "$runs" --tls
  "$load" startup "$chartkit" "$runs" --data "$work/small"
fi

for mode in ${MODES:-memory data}; do
  echo
  if [[ $mode == data ]]; then
    echo "### Load with --data (every write synced before it is answered)"
    start --data "$work/data"
  else
    echo "### Load in memory"
    start
  fi
  for kind in configmap pod; do
    echo
    "$load" load "$url" "$pid" --count "$count" --concurrency "$concurrency" --kind "$kind"
  done
  echo
  echo "Server RSS with both loads: $(awk '/VmRSS/ {printf "%.1f MiB", $2/1024}' "/proc/$pid/status")"
  if [[ $mode == data ]]; then
    echo "Data directory: $(du -sh "$work/data" | cut -f1) ($(ls "$work/data" | tr '\n' ' '))"
  fi
  if [[ -n $kubectl && $mode == memory ]]; then
    echo
    echo "kubectl $("$kubectl" version --client -o json | sed -n 's/.*"gitVersion": "\([^"]*\)".*/\1/p' | head -1) against the loaded sandbox:"
    echo
    export KUBECONFIG=$work/kubeconfig
    t0=$(date +%s%N)
    rows=$("$kubectl" get configmaps -n load-configmap --no-headers | wc -l)
    t1=$(date +%s%N)
    echo "- kubectl get configmaps ($rows rows, server-side Table): $(( (t1 - t0) / 1000000 )) ms"
    t0=$(date +%s%N)
    for i in $(seq 0 9); do
      "$kubectl" label configmap "configmap-0000$i" -n load-configmap kubectl=yes >/dev/null
    done
    t1=$(date +%s%N)
    echo "- kubectl label configmap (GET + merge PATCH): $(( (t1 - t0) / 10000000 )) ms per command (10 runs, process start included)"
  fi
  stop
done

echo
echo "### Restart on the loaded data directory"
echo
"$load" startup "$chartkit" 5 --data "$work/data"
