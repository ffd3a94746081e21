#!/usr/bin/env bash
# Benchmarks chartkit's OCI registry client against helm's, side by side in one run,
# against a local registry (Debian's docker-registry, the CNCF distribution registry, on
# 127.0.0.1, anonymous, plain http): `push` of 20 packages, `pull` of 20 charts by range
# with a cold cache and again warm, a warm `pull` by digest, and `install` from oci://
# into a sandbox. Pulls are measured twice: one process per chart for both tools, and
# one process for all 20 (`pull A B C ...`, which both tools take). helm pushes one
# package per process; chartkit's push takes several, so push is measured as a process
# per package for both, and as helm's 20 processes against chartkit's one command.
# The registry's access log counts the requests each tool sends. Prints Markdown (copy
# it into BENCHMARKS.md): median wall seconds over RUNS runs, the ratio, and requests.
#   bench/oci.sh                                  3 runs
#   RUNS=1 bench/oci.sh                           quick
#   CHARTKIT_BIN=target/.../chartkit bench/oci.sh   a release binary built already
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3}
charts=${CHARTS:-20}
helm=${CHARTKIT_HELM:-$HOME/.cache/chartkit-peers/helm}
[[ -x $helm ]] || { echo "helm not found at $helm (run shared/tools/get-peers)" >&2; exit 1; }
command -v docker-registry >/dev/null || { echo "docker-registry missing: apt-get install docker-registry" >&2; exit 1; }
chartkit=${CHARTKIT_BIN:-$("$root/scripts/build-release" --quiet)}

work=$(mktemp -d)
registry_pid= sandbox_pid=
cleanup() {
  [[ -n $registry_pid ]] && kill "$registry_pid" 2>/dev/null || true
  [[ -n $sandbox_pid ]] && kill "$sandbox_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The registry, its access log (one line per request) in $work/registry.log.
port=$(free_port)
host=127.0.0.1:$port
cat >"$work/registry.yml" <<YAML
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: $host
YAML
docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://$host/v2/" && break; sleep 0.05; done
requests() { grep -c '^127\.0\.0\.1 - - \[' "$work/registry.log" || true; }

# The charts: c01..c20, each at 1.0.0, 1.1.0 and 2.0.0 (pull --version ^1 picks 1.1.0),
# packaged once with helm; the same files are pushed and pulled by both tools.
pkgs=$work/packages
mkdir -p "$pkgs"
mapfile -t names < <(for i in $(seq 1 "$charts"); do printf 'c%02d\n' "$i"; done)
for name in "${names[@]}"; do
  for v in 1.0.0 1.1.0 2.0.0; do
    src=$work/src/$name-$v/$name
    mkdir -p "$src/templates"
    printf 'apiVersion: v2\nname: %s\nversion: %s\ndescription: benchmark chart\n' "$name" "$v" >"$src/Chart.yaml"
    printf 'replicas: 1\n' >"$src/values.yaml"
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  replicas: "{{ .Values.replicas }}"\n' >"$src/templates/cm.yaml"
    "$helm" package "$src" -d "$pkgs" >/dev/null
  done
done
"$helm" create "$work/starter" >/dev/null
"$helm" package "$work/starter" -d "$pkgs" >/dev/null

env_for() { # env_for TOOL RUN: the command prefix giving each tool and run its own homes
  local home=$work/home-$1-$2
  echo env HOME="$home" HELM_CONFIG_HOME="$home/config" HELM_CACHE_HOME="$home/cache" \
    HELM_DATA_HOME="$home/data" CHARTKIT_CONFIG_HOME="$home/ck-config" CHARTKIT_CACHE_HOME="$home/ck-cache"
}

# timed TOOL HOME CMD...: runs CMD once per chart (CHART in the arguments replaced by
# c01..c20) with the homes named HOME; prints "seconds requests" for the whole batch.
timed() {
  local tool=$1 run=$2; shift 2
  local bin=$helm before start end name args
  [[ $tool == chartkit ]] && bin=$chartkit
  before=$(requests)
  start=$(date +%s%N)
  for name in "${names[@]}"; do
    args=("${@//CHART/$name}")
    $(env_for "$tool" "$run") "$bin" "${args[@]}" >"$work/last.out" 2>&1 \
      || { echo "failed: $tool ${args[*]}" >&2; cat "$work/last.out" >&2; exit 1; }
  done
  end=$(date +%s%N)
  sleep 0.2 # the registry writes its access log line after the answer
  awk -v ns=$((end - start)) -v n=$(($(requests) - before)) 'BEGIN {printf "%.3f %d\n", ns / 1e9, n}'
}

# The pull repositories, pushed once (not measured).
for p in "$pkgs"/c*.tgz "$pkgs"/starter-*.tgz; do
  "$chartkit" push "$p" "oci://$host/charts" --plain-http >/dev/null 2>&1
done

# once TOOL HOME CMD...: runs CMD once with the homes named HOME; prints "seconds requests".
once() {
  local tool=$1 run=$2; shift 2
  local bin=$helm before start end
  [[ $tool == chartkit ]] && bin=$chartkit
  before=$(requests)
  start=$(date +%s%N)
  $(env_for "$tool" "$run") "$bin" "$@" >"$work/last.out" 2>&1 \
    || { echo "failed: $tool $*" >&2; cat "$work/last.out" >&2; exit 1; }
  end=$(date +%s%N)
  sleep 0.2
  awk -v ns=$((end - start)) -v n=$(($(requests) - before)) 'BEGIN {printf "%.3f %d\n", ns / 1e9, n}'
}

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
declare -A secs reqs
record() { secs[$1,$2]+="$3 "; reqs[$1,$2]=$4; }

refs=() pushed=()
for name in "${names[@]}"; do
  refs+=("oci://$host/charts/$name")
  pushed+=("$pkgs/$name-1.1.0.tgz")
done

for run in $(seq 1 "$runs"); do
  for tool in helm chartkit; do
    out=$work/out-$tool-$run
    mkdir -p "$out"/{cold,warm,many-cold,many-warm,digest-first,digest}
    # push: 20 packages into a repository path of this tool and run (blobs not there
    # yet), from homes of their own (chartkit keeps what it pushed in its content store,
    # which would warm the cold pulls).
    read -r s n < <(timed "$tool" "push-$run" push "$pkgs/CHART-1.1.0.tgz" "oci://$host/push-$tool-$run" --plain-http)
    record "$tool" push "$s" "$n"
    if [[ $tool == chartkit ]]; then
      read -r s n < <(once "$tool" "push-many-$run" push "${pushed[@]}" "oci://$host/push-many-$run" --plain-http)
      record "$tool" push-many "$s" "$n"
    fi
    # pull by range, cold (fresh homes), then warm: a process per chart, then one
    # process for all (homes of its own, so its cold pull is cold).
    read -r s n < <(timed "$tool" "$run" pull "oci://$host/charts/CHART" --version ^1 --plain-http -d "$out/cold")
    record "$tool" "pull-cold" "$s" "$n"
    read -r s n < <(timed "$tool" "$run" pull "oci://$host/charts/CHART" --version ^1 --plain-http -d "$out/warm")
    record "$tool" "pull-warm" "$s" "$n"
    read -r s n < <(once "$tool" "many-$run" pull "${refs[@]}" --version ^1 --plain-http -d "$out/many-cold")
    record "$tool" "pull-many-cold" "$s" "$n"
    read -r s n < <(once "$tool" "many-$run" pull "${refs[@]}" --version ^1 --plain-http -d "$out/many-warm")
    record "$tool" "pull-many-warm" "$s" "$n"
    # pull by digest, warm: the digests helm printed for 1.1.0.
    bin=$helm; [[ $tool == chartkit ]] && bin=$chartkit
    declare -A digest=()
    for name in "${names[@]}"; do
      digest[$name]=$(curl -sfI -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
        "http://$host/v2/charts/$name/manifests/1.1.0" \
        | tr -d '\r' | awk -F': ' 'tolower($1) == "docker-content-digest" {print $2}')
      $(env_for "$tool" "$run") "$bin" pull "oci://$host/charts/$name@${digest[$name]}" \
        --plain-http -d "$out/digest-first" >/dev/null 2>&1
    done
    before=$(requests); start=$(date +%s%N)
    for name in "${names[@]}"; do
      $(env_for "$tool" "$run") "$bin" pull "oci://$host/charts/$name@${digest[$name]}" \
        --plain-http -d "$out/digest" >"$work/last.out" 2>&1 || { cat "$work/last.out" >&2; exit 1; }
    done
    end=$(date +%s%N); sleep 0.2
    record "$tool" "pull-digest" "$(awk -v ns=$((end - start)) 'BEGIN {printf "%.3f", ns / 1e9}')" $(($(requests) - before))
  done
  # Both tools wrote the same files.
  for dir in cold warm many-cold many-warm digest; do
    diff -r "$work/out-helm-$run/$dir" "$work/out-chartkit-$run/$dir" >/dev/null \
      || { echo "helm and chartkit pulled different files into $dir" >&2; exit 1; }
  done
done

# install from oci:// into one sandbox (zero readiness delay): helm's starter chart, by
# range, a release per run and tool.
sb=$work/sandbox
mkdir -p "$sb"
"$chartkit" sandbox up --addr 127.0.0.1:0 --pod-ready-delay 0s --job-duration 0s \
  --kubeconfig "$sb/kubeconfig" --state-file "$sb/state.json" >"$sb/sandbox.log" 2>&1 &
sandbox_pid=$!
for _ in $(seq 1 500); do [[ -s $sb/state.json ]] && break; sleep 0.01; done
for run in $(seq 1 "$runs"); do
  for tool in helm chartkit; do
    bin=$helm; [[ $tool == chartkit ]] && bin=$chartkit
    before=$(requests); start=$(date +%s%N)
    KUBECONFIG=$sb/kubeconfig $(env_for "$tool" "$run") "$bin" install "$tool-$run" "oci://$host/charts/starter" \
      --version '^0.1' --plain-http >"$work/last.out" 2>&1 || { cat "$work/last.out" >&2; exit 1; }
    end=$(date +%s%N); sleep 0.2
    record "$tool" install "$(awk -v ns=$((end - start)) 'BEGIN {printf "%.3f", ns / 1e9}')" $(($(requests) - before))
  done
done

# Each row: label, helm's measurement, chartkit's.
rows=(
  "push, $charts packages: helm a process each, chartkit one process (\`push a.tgz b.tgz ...\`)|push|push-many"
  "push, $charts packages, a process each (both)|push|push"
  "pull --version ^1, $charts charts in one process (\`pull A B ...\`), cold cache|pull-many-cold|pull-many-cold"
  "pull --version ^1, $charts charts in one process, warm cache|pull-many-warm|pull-many-warm"
  "pull --version ^1, $charts charts, a process each, cold cache|pull-cold|pull-cold"
  "pull --version ^1, $charts charts, a process each, warm cache|pull-warm|pull-warm"
  "pull NAME@sha256:..., $charts charts, a process each, warm cache|pull-digest|pull-digest"
  "install oci://.../starter --version ^0.1 into the sandbox|install|install"
)
echo "| step | helm (s) | chartkit (s) | chartkit is | helm requests | chartkit requests |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for row in "${rows[@]}"; do
  IFS='|' read -r label hop cop <<<"$row"
  h=$(tr ' ' '\n' <<<"${secs[helm,$hop]}" | grep . | median)
  c=$(tr ' ' '\n' <<<"${secs[chartkit,$cop]}" | grep . | median)
  ratio=$(awk -v h="$h" -v c="$c" 'BEGIN {printf "%.1fx faster", h / c}')
  echo "| $label | $h | $c | $ratio | ${reqs[helm,$hop]} | ${reqs[chartkit,$cop]} |"
done
echo
echo "helm $("$helm" version --short), docker-registry $(docker-registry --version 2>/dev/null | awk '{print $NF}'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the end, $runs runs (median)"
