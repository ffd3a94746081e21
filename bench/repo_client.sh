#!/usr/bin/env bash
# Benchmarks the repository client against helm, side by side in one run: `repo add`,
# `repo update` and `search repo --version ^1.2 NAME` on a large synthetic index served
# by nginx (a plain static server with ETags). Prints a Markdown table (copy it into
# BENCHMARKS.md).
#   bench/repo_client.sh                 full run (50 MB index)
#   INDEX_MB=5 bench/repo_client.sh      quick run
#   CHARTKIT_BIN=target/release/chartkit bench/repo_client.sh   a binary built already
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/bench/out
index_mb=${INDEX_MB:-50}
helm=${CHARTKIT_HELM:-$HOME/.cache/chartkit-peers/helm}
mkdir -p "$out"
[[ -x $helm ]] || { echo "helm not found at $helm (run shared/tools/get-peers)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "/usr/bin/time missing: apt-get install time" >&2; exit 1; }
command -v nginx >/dev/null || { echo "nginx missing: apt-get install nginx-light" >&2; exit 1; }
chartkit=${CHARTKIT_BIN:-$("$root/scripts/build-release" --quiet)}

rows=()
# measure LABEL CMD...: wall seconds and peak RSS (MiB) from /usr/bin/time -v.
measure() {
  local label=$1; shift
  local start end wall rss
  start=$(date +%s%N)
  /usr/bin/time -v "$@" >"$out/last.out" 2>"$out/last.time" || { cat "$out/last.out" "$out/last.time" >&2; exit 1; }
  end=$(date +%s%N)
  wall=$(awk -v ns=$((end - start)) 'BEGIN {printf "%.3f", ns / 1e9}')
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2/1024}' "$out/last.time")
  rows+=("| $label | $wall | $rss |")
}

# The repository: one synthetic index.yaml (no packages are needed to add, update and search).
site=$out/repo-client-site
mkdir -p "$site"
idx=$out/index-${index_mb}mb.yaml
[[ -f $idx.charts ]] || python3 "$root/bench/make_inputs.py" index "$idx" "$index_mb" >"$idx.charts"
cp "$idx" "$site/index.yaml"
chart=$(printf 'chart-%04d' $(( $(cat "$idx.charts") / 2 )))
idx_mb=$(du -m --apparent-size "$site/index.yaml" | cut -f1)

# nginx on a free port, serving the site with ETag and Last-Modified.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
conf=$out/repo-client-nginx.conf
cat >"$conf" <<CONF
daemon off;
worker_processes 1;
pid $out/repo-client-nginx.pid;
error_log $out/repo-client-nginx.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $out/nginx-tmp;
  proxy_temp_path $out/nginx-tmp;
  fastcgi_temp_path $out/nginx-tmp;
  uwsgi_temp_path $out/nginx-tmp;
  scgi_temp_path $out/nginx-tmp;
  server { listen 127.0.0.1:$port; root $site; }
}
CONF
mkdir -p "$out/nginx-tmp"
nginx -c "$conf" -p "$out" &
nginx_pid=$!
trap 'kill $nginx_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/index.yaml" && break; sleep 0.1; done
url=http://127.0.0.1:$port

# helm, in its own homes.
hh=$out/repo-client-helm
rm -rf "$hh"
export_helm=(env HELM_CONFIG_HOME="$hh/config" HELM_CACHE_HOME="$hh/cache" HELM_DATA_HOME="$hh/data")
measure "helm repo add (${idx_mb} MB index)" "${export_helm[@]}" "$helm" repo add bench "$url"
measure "helm repo update" "${export_helm[@]}" "$helm" repo update
measure "helm search repo bench/$chart --version ^1.2" "${export_helm[@]}" "$helm" search repo "bench/$chart" --version ^1.2 -o json
helm_answer=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))[0]["version"])' "$out/last.out")

# chartkit, in its own homes.
ch=$out/repo-client-chartkit
rm -rf "$ch"
export_chartkit=(env CHARTKIT_CONFIG_HOME="$ch/config" CHARTKIT_CACHE_HOME="$ch/cache")
measure "chartkit repo add" "${export_chartkit[@]}" "$chartkit" repo add bench "$url"
measure "chartkit repo update, index unchanged (304, no body)" "${export_chartkit[@]}" "$chartkit" repo update
# A changed index (a new ETag) is downloaded again and its compact form rebuilt.
printf '# changed\n' >>"$site/index.yaml"
measure "chartkit repo update, index changed (download + compact form)" "${export_chartkit[@]}" "$chartkit" repo update
measure "chartkit search repo bench/$chart --version ^1.2, first after the update" "${export_chartkit[@]}" "$chartkit" search repo "bench/$chart" --version ^1.2 -o json
ours=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))[0]["version"])' "$out/last.out")
measure "chartkit search repo bench/$chart --version ^1.2, again" "${export_chartkit[@]}" "$chartkit" search repo "bench/$chart" --version ^1.2 -o json
echo "search ^1.2: helm chose $helm_answer, chartkit chose $ours"

echo
echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo
echo "| run | wall (s) | peak RSS (MiB) |"
echo "| --- | ---: | ---: |"
printf '%s\n' "${rows[@]}"
