#!/usr/bin/env bash
# chartkit serve as an OCI registry against the distribution registry (Debian's
# docker-registry), in the same run:
#  1. push of PUSHES charts into each (one at a time over keep-alive, as a client pushing
#     Helm's manifest does: POST + PUT for the chart layer, POST + PUT for the config, PUT
#     for the manifest), both already holding 100 charts;
#  2. GET of a manifest and GET of a chart layer blob, with wrk;
#  3. chartkit's push latency again into a repository of BIG charts: flat means a push
#     does not grow with what is stored.
# Prints the results and appends them to BENCHMARKS.md.
# Usage: bench/serve-oci.sh   env: DURATION (wrk seconds, default 10), PUSHES (default 200),
#                             BIG (default 5000), CONNECTIONS (default 64), CHARTKIT_BIN
#                             (a release binary built already)
# Needs: wrk, docker-registry (apt-get install -y wrk docker-registry), python3, curl.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
duration=${DURATION:-10}
pushes=${PUSHES:-200}
big=${BIG:-5000}
connections=${CONNECTIONS:-64}
for tool in wrk docker-registry python3 curl; do
  command -v "$tool" >/dev/null || { echo "$tool not found (apt-get install -y wrk docker-registry)" >&2; exit 1; }
done

. "$root/bench/lib.sh"
chartkit=$(bench_chartkit)
bench_work

# Starts docker-registry with its storage under DIR (Debian's default configuration: the
# in-memory blob descriptor cache, no access log); prints its URL.
registry() {
  local dir=$1 port
  port=$(free_port)
  mkdir -p "$dir"
  cat >"$dir/config.yml" <<CONF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  cache:
    blobdescriptor: inmemory
  filesystem:
    rootdirectory: $dir/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
CONF
  docker-registry serve "$dir/config.yml" >"$dir/log" 2>&1 &
  bench_track $!
  bench_wait_url "http://127.0.0.1:$port/v2/"
  echo "http://127.0.0.1:$port"
}

# Pushes every package in FOLDER to URL under charts/NAME:VERSION; prints the total
# seconds, then the median and p95 of one chart's push in milliseconds.
push() {
  python3 - "$1" "$2" <<'PY'
import hashlib, http.client, json, os, sys, time, urllib.parse
url, folder = sys.argv[1], sys.argv[2]
u = urllib.parse.urlparse(url)
conn = http.client.HTTPConnection(u.hostname, u.port)
def request(method, path, body=None, headers={}, expect=(200,)):
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    assert response.status in expect, (method, path, response.status)
    return response
def blob(repository, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    started = request("POST", f"/v2/{repository}/blobs/uploads/", expect=(202,))
    location = urllib.parse.urlparse(started.getheader("Location"))
    path = location.path + "?" + (location.query + "&" if location.query else "") + "digest=" + digest
    request("PUT", path, body=data, headers={"Content-Type": "application/octet-stream"}, expect=(201,))
    return {"digest": digest, "size": len(data)}
times = []
total = time.perf_counter()
for file in sorted(os.listdir(folder)):
    name, version = file[: -len(".tgz")].rsplit("-", 1)
    package = open(os.path.join(folder, file), "rb").read()
    config = json.dumps({"name": name, "version": version, "apiVersion": "v2"}, separators=(",", ":")).encode()
    start = time.perf_counter()
    repository = f"charts/{name}"
    layer = blob(repository, package)
    config_blob = blob(repository, config)
    manifest = json.dumps({
        "schemaVersion": 2,
        "config": {"mediaType": "application/vnd.cncf.helm.config.v1+json", **config_blob},
        "layers": [{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", **layer}],
        "annotations": {"org.opencontainers.image.title": name, "org.opencontainers.image.version": version},
    }, separators=(",", ":")).encode()
    request("PUT", f"/v2/{repository}/manifests/{version}", body=manifest,
            headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"}, expect=(201,))
    times.append(time.perf_counter() - start)
total = time.perf_counter() - total
times.sort()
print(f"{total:.3f} {times[len(times) // 2] * 1000:.2f} {times[int(len(times) * 0.95)] * 1000:.2f}")
PY
}

# Requests per second; wrk counts error answers as requests, so any non-2xx fails the run.
rps() {
  local out
  out=$(wrk -t1 -c"$connections" -d"${duration}s" -H "Accept: application/vnd.oci.image.manifest.v1+json" "$1")
  if grep -q 'Non-2xx' <<<"$out"; then
    echo "wrk got error answers from $1:" >&2
    echo "$out" >&2
    exit 1
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}

echo "making inputs: 100 and $big charts stored, $pushes to push" >&2
python3 "$root/bench/make_inputs.py" small "$work/seed" 100
python3 "$root/bench/make_inputs.py" small "$work/big" "$big"
python3 "$root/bench/make_inputs.py" small "$work/new" "$pushes" new

# 1. Push into each, both holding 100 charts: chartkit's copied in (it indexes and serves
# them over both faces), the registry's pushed.
mkdir -p "$work/store"
cp "$work/seed"/*.tgz "$work/store/"
ck=$(bench_serve "$work/store")
reg=$(registry "$work/registry")
push "$reg" "$work/seed" >/dev/null
echo "push: chartkit" >&2
read -r ck_total ck_med ck_p95 < <(push "$ck" "$work/new")
echo "push: docker-registry" >&2
read -r reg_total reg_med reg_p95 < <(push "$reg" "$work/new")

# 2. GETs of one pushed chart's manifest and chart layer, the same bytes from both.
manifest_path=/v2/charts/new00001/manifests/1.1.0
accept="Accept: application/vnd.oci.image.manifest.v1+json"
ck_manifest=$(curl -sf -H "$accept" "$ck$manifest_path")
[[ $ck_manifest == "$(curl -sf -H "$accept" "$reg$manifest_path")" ]] ||
  { echo "the two servers answer different manifests" >&2; exit 1; }
layer=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["layers"][0]["digest"])' "$ck_manifest")
blob_path=/v2/charts/new00001/blobs/$layer
cmp -s <(curl -sf "$ck$blob_path") <(curl -sfL "$reg$blob_path") ||
  { echo "the two servers answer different blobs" >&2; exit 1; }
echo "wrk: manifests" >&2
ck_manifest_rps=$(rps "$ck$manifest_path")
reg_manifest_rps=$(rps "$reg$manifest_path")
echo "wrk: blobs" >&2
ck_blob_rps=$(rps "$ck$blob_path")
reg_blob_rps=$(rps "$reg$blob_path")

# 3. chartkit's push latency with BIG charts stored.
python3 "$root/bench/make_inputs.py" small "$work/late" "$pushes" late
big_url=$(bench_serve "$work/big")
echo "push: chartkit, $big charts stored" >&2
read -r big_total big_med big_p95 < <(push "$big_url" "$work/late")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx", a / b}'; }
report=$(cat <<REPORT

## chartkit serve as an OCI registry (\`bench/serve-oci.sh\`, $(date -u +%Y-%m-%d))

machine: $(nproc) cores, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg) at the end; chartkit $("$chartkit" --version | awk '{print $2}'), release build; $(docker-registry --version | awk '{print $2, $3}'), filesystem storage with the in-memory descriptor cache; both on 127.0.0.1, plain http

Push of $pushes charts one at a time over keep-alive (two blob uploads, POST then PUT each,
and the manifest PUT; chartkit judges each chart as an upload, writes it durably and puts
it in index.yaml before the 201), both holding 100 charts:

| server | total (s) | charts/s | per chart median (ms) | p95 (ms) |
| --- | ---: | ---: | ---: | ---: |
| chartkit serve | $ck_total | $(awk -v t="$ck_total" -v n="$pushes" 'BEGIN {printf "%.0f", n / t}') | $ck_med | $ck_p95 |
| docker-registry | $reg_total | $(awk -v t="$reg_total" -v n="$pushes" 'BEGIN {printf "%.0f", n / t}') | $reg_med | $reg_p95 |
| **chartkit / registry (throughput)** | **$(ratio "$reg_total" "$ck_total")** | | | |

GETs of one chart's manifest and chart layer (the same bytes from both), wrk -t1
-c$connections -d${duration}s:

| request | chartkit serve (requests/s) | docker-registry (requests/s) | chartkit / registry |
| --- | ---: | ---: | ---: |
| GET manifest by tag | $ck_manifest_rps | $reg_manifest_rps | $(ratio "$ck_manifest_rps" "$reg_manifest_rps") |
| GET blob (chart layer) | $ck_blob_rps | $reg_blob_rps | $(ratio "$ck_blob_rps" "$reg_blob_rps") |

chartkit's push latency by charts stored ($pushes pushes each):

| charts stored | median (ms) | p95 (ms) |
| ---: | ---: | ---: |
| 100 | $ck_med | $ck_p95 |
| $big | $big_med | $big_p95 |
REPORT
)
echo "$report"
echo "$report" >>"$root/BENCHMARKS.md"
echo
echo "appended to BENCHMARKS.md"
