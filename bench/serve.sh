#!/usr/bin/env bash
# chartkit serve under load, side by side with nginx in the same run:
#  1. GET /index.yaml throughput with wrk against chartkit and against nginx serving the
#     same bytes (a repository of BIG small charts);
#  2. upload latency (POST /api/charts, one at a time, keep-alive) into a repository of 100
#     charts and into one of BIG charts, each upload followed by GET /index.yaml (gzip, as
#     helm asks for it), which renders the changed chart again; then GET /index.yaml with
#     nothing changed. Flat means the upload and the render do not grow with the
#     repository (sending the index does: it is 50 times larger at 5,000 charts).
# Appends the results to BENCHMARKS.md.
# Usage: bench/serve.sh     env: DURATION (wrk seconds, default 10), UPLOADS (default 200),
#                           BIG (default 5000), CONNECTIONS (default 64), CHARTKIT_BIN
#                           (a release binary built already)
# Needs: wrk and nginx (apt-get install -y wrk nginx), python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
duration=${DURATION:-10}
uploads=${UPLOADS:-200}
big=${BIG:-5000}
connections=${CONNECTIONS:-64}
for tool in wrk nginx python3; do
  command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] || { echo "$tool not found (apt-get install -y wrk nginx)" >&2; exit 1; }
done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

. "$root/bench/lib.sh"
chartkit=$(bench_chartkit)
bench_work
# nginx's workers run as an unprivileged user; mktemp's 0700 would answer them 403.
chmod 755 "$work"
bench_cleanup_more() {
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
}

echo "making inputs: 100 and $big charts, $uploads to upload" >&2
python3 "$root/bench/make_inputs.py" small "$work/small" 100
python3 "$root/bench/make_inputs.py" small "$work/big" "$big"
python3 "$root/bench/make_inputs.py" small "$work/new" "$uploads" new

# 1. index.yaml throughput.
url=$(bench_serve "$work/big")
mkdir -p "$work/www"
curl -sf "$url/index.yaml" -o "$work/www/index.yaml"
index_bytes=$(stat -c %s "$work/www/index.yaml")
nginx_port=$(free_port)
cat >"$work/nginx.conf" <<CONF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nginx_port;
    root $work/www;
  }
}
CONF
"$nginx_bin" -c "$work/nginx.conf"
sleep 0.5
# Requests per second; wrk counts error answers as requests, so any non-2xx fails the run.
rps() {
  local out
  out=$(wrk -t1 -c"$connections" -d"${duration}s" "$1")
  if grep -q 'Non-2xx' <<<"$out"; then
    echo "wrk got error answers from $1:" >&2
    echo "$out" >&2
    exit 1
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}
curl -sf "http://127.0.0.1:$nginx_port/index.yaml" | cmp -s - "$work/www/index.yaml" ||
  { echo "nginx does not serve the same index.yaml" >&2; exit 1; }
echo "wrk: chartkit" >&2
ck_rps=$(rps "$url/index.yaml")
echo "wrk: nginx" >&2
ng_rps=$(rps "http://127.0.0.1:$nginx_port/index.yaml")

# 2. upload latency at 100 and BIG charts.
latency() {
  python3 - "$1" "$2" <<'PY'
import http.client, os, sys, time, urllib.parse
url, folder = sys.argv[1], sys.argv[2]
u = urllib.parse.urlparse(url)
conn = http.client.HTTPConnection(u.hostname, u.port)
def get_index():
    start = time.perf_counter()
    conn.request("GET", "/index.yaml", headers={"Accept-Encoding": "gzip"})
    response = conn.getresponse()
    response.read()
    assert response.status == 200, response.status
    return time.perf_counter() - start
uploads, after, steady = [], [], []
for name in sorted(os.listdir(folder)):
    body = open(os.path.join(folder, name), "rb").read()
    start = time.perf_counter()
    conn.request("POST", "/api/charts", body=body, headers={"Content-Type": "application/gzip"})
    response = conn.getresponse()
    response.read()
    uploads.append(time.perf_counter() - start)
    assert response.status == 201, (name, response.status)
    after.append(get_index())
for _ in range(len(uploads)):
    steady.append(get_index())
def stats(times):
    times = sorted(times)
    return f"{times[len(times) // 2] * 1000:.2f} {times[int(len(times) * 0.95)] * 1000:.2f}"
print(stats(uploads), stats(after), stats(steady))
PY
}
small_url=$(bench_serve "$work/small")
big_url=$(bench_serve "$work/big")
cp -r "$work/new" "$work/new2"
read -r small_med small_p95 small_after_med small_after_p95 small_get_med small_get_p95 < <(latency "$small_url" "$work/new")
read -r big_med big_p95 big_after_med big_after_p95 big_get_med big_get_p95 < <(latency "$big_url" "$work/new2")
render_ms=$(curl -sf "$big_url/metrics" | awk '/^chartkit_index_render_seconds_total/ {print $2}')
gzip_bytes=$(curl -sf -H 'Accept-Encoding: gzip' "$big_url/index.yaml" | wc -c)

report=$(cat <<REPORT

## chartkit serve ($(date -u +%Y-%m-%d))

machine: $(nproc) cores, $(uname -m); $("$nginx_bin" -v 2>&1 | sed 's/nginx version: //'); chartkit $("$chartkit" --version | awk '{print $2}'), release build

GET /index.yaml ($big charts, $index_bytes bytes, no compression), wrk -t1 -c$connections -d${duration}s, same run:

| server | requests/s |
| --- | ---: |
| chartkit serve | $ck_rps |
| nginx (static file) | $ng_rps |
| **chartkit / nginx** | **$(awk -v a="$ck_rps" -v b="$ng_rps" 'BEGIN {printf "%.2fx", a / b}')** |

Upload latency, POST /api/charts one at a time over keep-alive ($uploads uploads; each is
validated, fsynced and indexed before the 201), each followed by GET /index.yaml with
gzip (which renders the changed chart's part again), then as many GETs with nothing
changed ($big charts: $gzip_bytes bytes gzipped):

| charts in the repository | upload median (ms) | upload p95 (ms) | GET after upload median (ms) | p95 (ms) | GET unchanged median (ms) | p95 (ms) |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 100 | $small_med | $small_p95 | $small_after_med | $small_after_p95 | $small_get_med | $small_get_p95 |
| $big | $big_med | $big_p95 | $big_after_med | $big_after_p95 | $big_get_med | $big_get_p95 |

Rendering the index $uploads times at $big charts (after each upload), total: ${render_ms} s.
REPORT
)
echo "$report"
echo "$report" >>"$root/BENCHMARKS.md"
echo
echo "appended to BENCHMARKS.md"
