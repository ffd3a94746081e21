#!/usr/bin/env bash
# chartkit serve's web view under load (issue #34, acceptance 3): a repository of BIG
# distinct charts (bench/make_inputs.py web: README of a few KB, values, three templates,
# some with 2-3 versions, a few deprecated, every 100th signed), served from a local
# directory by the release binary, then wrk -t2 -cCONNECTIONS --latency against, one at a
# time:
#   GET /index.yaml with Accept-Encoding: gzip, as helm sends it (the baseline);
#   GET / (the list page), GET /?q=WORD, GET /charts/NAME (one chart, its data cached after
#   the first request) and GET /charts/NAME over every chart in turn (each page's package
#   read and its README rendered again once the server's cache is full), all with
#   Accept: text/html as a browser sends it;
# then /index.yaml again WHILE a second wrk asks for the pages (each wrk -t1 on 2 cores),
# and one helm-like client (-c1) asking for /index.yaml alone and then during page traffic.
# Prints p50/p99/requests per second and, for the pages, pass/fail against p99 < 20 ms, as
# Markdown (copy it into BENCHMARKS.md).
# Usage: bench/web.sh     env: BIG (charts, default 5000), DURATION (wrk seconds, default 15),
#                         CONNECTIONS (default 32), WORD (searched for, default postgres),
#                         CHARTKIT_BIN (a release binary built already; bench/lib.sh)
# Needs: wrk (apt-get install -y wrk), python3, curl.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
big=${BIG:-5000}
duration=${DURATION:-15}
connections=${CONNECTIONS:-32}
word=${WORD:-postgres}
aim_ms=20
for tool in wrk python3 curl; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y wrk)" >&2; exit 1; }
done

. "$root/bench/lib.sh"
chartkit=$(bench_chartkit)
bench_work

echo "making $big charts" >&2
start=$(date +%s.%N)
packages=$(python3 "$root/bench/make_inputs.py" web "$work/charts" "$big")
# Every 100th chart signed (all its versions): the list's signed badge and the chart page's
# provenance come from real .prov files, verified against --keyring.
"$chartkit" key generate -o "$work/key" --name "Bench Signer" --email bench@example.com >/dev/null
mkdir -p "$work/unpacked"
signed=()
for package in "$work"/charts/*-[0-9][0-9]00-*.tgz; do
  dir="$work/unpacked/$(basename "$package" .tgz)"
  mkdir -p "$dir"
  tar xzf "$package" -C "$dir"
  signed+=("$dir"/*)
  rm "$package"
done
"$chartkit" package "${signed[@]}" -d "$work/charts" --sign --key bench@example.com \
  --keyring "$work/key/secret.asc" >/dev/null
made_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "$packages packages ($(du -sh "$work/charts" | cut -f1)) in ${made_s} s, ${#signed[@]} signed" >&2

# The server binds port 0 and prints the address it got (no free_port race); its pid is
# kept for its peak memory at the end.
: >"$work/serve.out"
start=$(date +%s.%N)
CHARTKIT_LOG=warn "$chartkit" serve "$work/charts" --addr 127.0.0.1:0 \
  --keyring "$work/key/public.asc" >"$work/serve.out" 2>&1 &
server_pid=$!
bench_track "$server_pid"
url=
for _ in $(seq 1200); do
  url=$(sed -n 's|^Listening on \(http://[^/]*\)/$|\1|p' "$work/serve.out")
  [[ -n $url ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.out" >&2; exit 1; }
  sleep 0.05
done
[[ -n $url ]] || { echo "chartkit serve did not start:" >&2; cat "$work/serve.out" >&2; exit 1; }
ready_s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
echo "serving at $url after ${ready_s} s" >&2

html='Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
gzip_header='Accept-Encoding: gzip'
# make_inputs.py's first chart: three versions, signed.
chart=redis-operator-0000
python3 - "$work/charts" >"$work/names.lua" <<'PY'
import os, re, sys
names = sorted({re.sub(r"-[0-9][0-9.]*\.tgz$", "", f) for f in os.listdir(sys.argv[1]) if f.endswith(".tgz")})
print("names = {" + ",".join(f'"{n}"' for n in names) + "}")
PY
# Every chart's page in turn, each wrk thread from its own place in the list.
cat >>"$work/names.lua" <<'LUA'
local counter = 0
function setup(thread)
  thread:set("offset", counter * 1009)
  counter = counter + 1
end
local i = 0
function request()
  i = i + 1
  return wrk.format(nil, "/charts/" .. names[(offset + i) % #names + 1])
end
LUA

# Checks an answer before it is timed: status 200, the type, and something of the page.
check() {
  local path=$1 accept=$2 type=$3 expect=$4
  curl -s -D "$work/headers" -o "$work/body" -H "$accept" "$url$path"
  grep -qi "^HTTP/1.1 200" "$work/headers" || { echo "GET $path: not 200:" >&2; cat "$work/headers" >&2; exit 1; }
  grep -qi "^content-type: $type" "$work/headers" || { echo "GET $path: not $type:" >&2; cat "$work/headers" >&2; exit 1; }
  grep -qF -- "$expect" "$work/body" || { echo "GET $path: no \"$expect\" in the answer" >&2; exit 1; }
}
check /index.yaml "$gzip_header" 'application/\(x-\)\?yaml' ''
grep -qi '^content-encoding: gzip' "$work/headers" || { echo "GET /index.yaml: not gzipped" >&2; exit 1; }
check / "$html" text/html '<ul class="charts">'
check "/?q=$word" "$html" text/html "$word"
check "/charts/$chart" "$html" text/html '<span class="badge verified">'
matches=$(curl -s -H "$html" "$url/?q=$word&fragment=1" | sed -n 's|^<p class="muted">\([0-9]*\) charts\?</p>.*|\1|p')
list_bytes=$(curl -s -H "$html" "$url/" | wc -c)
chart_bytes=$(curl -s -H "$html" "$url/charts/$chart" | wc -c)
index_gzip_bytes=$(curl -s -H "$gzip_header" "$url/index.yaml" | wc -c)

# wrk ARGS... -> "p50_ms p99_ms requests_per_s"; any error answer or socket error fails the run.
measure() {
  local out
  out=$(wrk --latency "$@")
  echo "$out" >>"$work/wrk.log"
  if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then
    echo "wrk $*: errors:" >&2
    echo "$out" >&2
    exit 1
  fi
  awk '
    function ms(v) {
      if (v ~ /us$/) return v / 1000
      if (v ~ /ms$/) return v + 0
      if (v ~ /s$/) return v * 1000
      return v
    }
    /^ +50%/ { p50 = ms($2) }
    /^ +99%/ { p99 = ms($2) }
    /^Requests\/sec/ { rps = $2 }
    END { printf "%.2f %.2f %.0f\n", p50, p99, rps }' <<<"$out"
}
wrk_args=(-t2 -c"$connections" -d"${duration}s")
declare -A result
run() {
  local key=$1
  shift
  echo "wrk: $key" >&2
  result[$key]=$(measure "$@")
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
run index "${wrk_args[@]}" -H "$gzip_header" "$url/index.yaml"
run list "${wrk_args[@]}" -H "$html" "$url/"
run search "${wrk_args[@]}" -H "$html" "$url/?q=$word"
run chart "${wrk_args[@]}" -H "$html" "$url/charts/$chart"
run every_chart "${wrk_args[@]}" -H "$html" -s "$work/names.lua" "$url"

# index.yaml while the pages are asked for; the page wrk runs a second longer on each side.
together() {
  local key=$1 index_connections=$2
  echo "wrk: $key" >&2
  wrk -t1 -c"$connections" -d"$((duration + 2))s" -H "$html" -s "$work/names.lua" "$url" \
    >"$work/pages-$key.out" &
  local pages=$!
  sleep 1
  result[$key]=$(measure -t1 -c"$index_connections" -d"${duration}s" -H "$gzip_header" "$url/index.yaml")
  wait "$pages"
  grep -q 'Non-2xx\|Socket errors' "$work/pages-$key.out" && { cat "$work/pages-$key.out" >&2; exit 1; }
  return 0
}
run index_t1 -t1 -c"$connections" -d"${duration}s" -H "$gzip_header" "$url/index.yaml"
together index_with_pages "$connections"
run helm_alone -t1 -c1 -d"${duration}s" -H "$gzip_header" "$url/index.yaml"
together helm_with_pages 1
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
rss_mib=$(awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$server_pid/status")

row() {
  local label=$1 key=$2 aim=${3:-} p50 p99 rps verdict=""
  read -r p50 p99 rps <<<"${result[$key]}"
  if [[ -n $aim ]]; then
    verdict=$(awk -v p="$p99" -v aim="$aim_ms" 'BEGIN {print (p < aim) ? "pass" : "**fail**"}')
  fi
  echo "| $label | $p50 | $p99 | $rps | $verdict |"
}
row2() {
  local p50 p99 rps
  read -r p50 p99 rps <<<"${result[$3]}"
  echo "| $1 | $2 | $p50 | $p99 | $rps |"
}
ratio() {
  awk -v a="$(cut -d' ' -f"$3" <<<"${result[$1]}")" -v b="$(cut -d' ' -f"$3" <<<"${result[$2]}")" \
    'BEGIN {printf "%.2fx", a / b}'
}

cat <<REPORT

machine: $(nproc) cores, $(uname -m), $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo); load $load_before before, $load_after after;
chartkit $("$chartkit" --version | awk '{print $2}') ($(git -C "$root" rev-parse --short HEAD)), release build; $(wrk -v 2>&1 | head -1 | awk '{print $1, $2}')

Repository: $big charts, $packages packages ($(du -sh "$work/charts" | cut -f1)), ${#signed[@]} of them signed,
made in ${made_s} s; the server answered ${ready_s} s after it started (every package judged).
Pages: the list $list_bytes bytes (first 100 of $big charts), \`/?q=$word\` finds $matches charts,
\`/charts/$chart\` $chart_bytes bytes; index.yaml $index_gzip_bytes bytes gzipped.
The server's peak RSS after all runs: $rss_mib MiB.

\`BIG=$big DURATION=$duration CONNECTIONS=$connections bench/web.sh\`; each row wrk -t2 -c$connections -d${duration}s --latency
alone, times in ms:

| request | p50 | p99 | requests/s | p99 < $aim_ms ms |
| --- | ---: | ---: | ---: | --- |
$(row "GET /index.yaml, gzip (baseline)" index)
$(row "GET / (list page)" list aim)
$(row "GET /?q=$word" search aim)
$(row "GET /charts/$chart" chart aim)
$(row "GET /charts/NAME, every chart in turn" every_chart aim)

GET /index.yaml (gzip) with and without page traffic: each wrk -t1 -d${duration}s, the
pages' wrk (-c$connections, every chart's page in turn) running throughout:

| index.yaml client | pages | p50 | p99 | requests/s |
| --- | --- | ---: | ---: | ---: |
$(row2 "-c$connections" none index_t1)
$(row2 "-c$connections" "-c$connections" index_with_pages)
$(row2 "-c1 (one helm)" none helm_alone)
$(row2 "-c1 (one helm)" "-c$connections" helm_with_pages)

One helm client's index.yaml p99 during page traffic: $(ratio helm_with_pages helm_alone 2) of its p99 alone.
REPORT
