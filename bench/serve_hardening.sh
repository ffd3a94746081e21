#!/usr/bin/env bash
# chartkit serve against clients that hold connections or guess passwords: the acceptance
# numbers of the hardening issue, measured on a release build.
#  1. /health latency (a new connection per request, as a load balancer probes) with 400
#     idle connections open, the server started under `ulimit -Sn 256` (it raises its soft
#     limit to the hard one) and under `ulimit -n 256` (nothing to raise: idle connections
#     make room). Target: p99 under 100 ms.
#  2. /health latency while 8 clients send wrong passwords as fast as they are answered,
#     against a cost-12 htpasswd. Target: p99 under 20 ms.
#  3. How long an upload with a wrong password and one from an unknown user take (cost 12,
#     ROUNDS of each, interleaved, one keep-alive connection). Target: means within 10 %.
# Appends the results to BENCHMARKS.md.
# Usage: bench/serve_hardening.sh   env: CHARTKIT (binary to measure; default: build one with
#                                   scripts/build-release), REQUESTS (/health requests per
#                                   measurement, default 400), ROUNDS (default 20)
# Needs: python3 with the crypt module (3.12 or older) or htpasswd (apache2-utils), to
# make the cost-12 htpasswd.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
requests=${REQUESTS:-400}
rounds=${ROUNDS:-20}
. "$root/bench/lib.sh"
chartkit=${CHARTKIT:-$(bench_chartkit)}
bench_work

# Starts chartkit serve on a free port after running a shell snippet (a ulimit); prints
# the address. Further arguments go to chartkit serve.
serve() {
  local before=$1 port
  shift
  port=$(free_port)
  mkdir -p "$work/repo-$port"
  sh -c "$before && exec \"\$0\" \"\$@\"" "$chartkit" serve "$work/repo-$port" \
    --addr "127.0.0.1:$port" "$@" >"$work/serve-$port.out" 2>"$work/serve-$port.err" &
  bench_track $!
  bench_wait_listening "$work/serve-$port.out"
  echo "127.0.0.1:$port"
}

# The measurements, in Python: http.client and raw sockets.
cat >"$work/measure.py" <<'PY'
import base64, http.client, socket, sys, threading, time

def health_once(addr):
    host, port = addr.split(":")
    start = time.perf_counter()
    s = socket.create_connection((host, int(port)), timeout=30)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    took = (time.perf_counter() - start) * 1000
    assert data.startswith(b"HTTP/1.1 200"), data
    return took

def health(addr, count, gap=0.0):
    times = []
    for _ in range(count):
        times.append(health_once(addr))
        if gap:
            time.sleep(gap)
    times.sort()
    return times

def summary(times):
    n = len(times)
    return f"{times[n // 2]:.2f} {times[min(n - 1, int(n * 0.99))]:.2f} {times[-1]:.2f}"

def idle(addr, count, requests):
    """/health with `count` idle connections open; p50 p99 max, and how many idle
    connections the server still holds afterwards."""
    host, port = addr.split(":")
    conns = [socket.create_connection((host, int(port))) for _ in range(count)]
    time.sleep(1)
    times = health(addr, requests)
    held = 0
    for c in conns:
        c.setblocking(False)
        try:
            held += c.recv(1) != b""
        except BlockingIOError:
            held += 1
        except OSError:
            pass
    return f"{summary(times)} {held}"

def auth(user, password):
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}", "Content-Type": "application/gzip"}

def upload(conn, user, password):
    start = time.perf_counter()
    conn.request("POST", "/api/charts", body=b"", headers=auth(user, password))
    response = conn.getresponse()
    response.read()
    return response.status, (time.perf_counter() - start) * 1000

def guessing(addr, clients, requests):
    """/health while `clients` threads send wrong passwords; p50 p99 max, guesses made."""
    host, port = addr.split(":")
    stop = threading.Event()
    statuses = []
    def guess(i):
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        n = 0
        while not stop.is_set():
            status, _ = upload(conn, "ci", f"guess-{i}-{n}")
            statuses.append(status)
            n += 1
    threads = [threading.Thread(target=guess, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1)
    times = health(addr, requests, gap=0.01)
    stop.set()
    for t in threads:
        t.join()
    assert set(statuses) <= {401, 503}, set(statuses)
    return f"{summary(times)} {len(statuses)} {statuses.count(503)}"

def timing(addr, rounds):
    """Mean and median ms of a wrong password and of an unknown user, interleaved; then
    the right password's first and remembered times."""
    host, port = addr.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    wrong, unknown = [], []
    for i in range(rounds):
        status, took = upload(conn, "ci", f"wrong-{i}")
        assert status == 401, status
        wrong.append(took)
        status, took = upload(conn, f"nobody-{i}", "let-me-in")
        assert status == 401, status
        unknown.append(took)
    first = upload(conn, "ci", "let-me-in")
    again = upload(conn, "ci", "let-me-in")
    assert first[0] == again[0] == 400, (first, again)
    mean = lambda xs: sum(xs) / len(xs)
    median = lambda xs: sorted(xs)[len(xs) // 2]
    return (f"{mean(wrong):.1f} {median(wrong):.1f} {mean(unknown):.1f} {median(unknown):.1f} "
            f"{first[1]:.1f} {again[1]:.2f}")

mode, addr = sys.argv[1], sys.argv[2]
if mode == "baseline":
    print(summary(health(addr, int(sys.argv[3]))))
elif mode == "idle":
    print(idle(addr, int(sys.argv[3]), int(sys.argv[4])))
elif mode == "guessing":
    print(guessing(addr, int(sys.argv[3]), int(sys.argv[4])))
elif mode == "timing":
    print(timing(addr, int(sys.argv[3])))
PY
measure() { python3 "$work/measure.py" "$@"; }

# A cost-12 htpasswd for user `ci`.
if hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("let-me-in", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=4096)))' 2>/dev/null) &&
  [[ $hash == '$2b$12$'* ]]; then
  echo "ci:$hash" >"$work/htpasswd"
elif command -v htpasswd >/dev/null; then
  htpasswd -nbB -C 12 ci let-me-in | head -1 >"$work/htpasswd"
else
  echo "need python3's crypt module (python 3.12 or older) or htpasswd to make a bcrypt hash" >&2
  exit 1
fi

echo "1. idle connections" >&2
soft=$(serve "ulimit -Sn 256")
read -r base_p50 base_p99 base_max < <(measure baseline "$soft" "$requests")
read -r soft_p50 soft_p99 soft_max soft_held < <(measure idle "$soft" 400 "$requests")
soft_limit=$(grep -o 'open_files=[0-9]* raised_from=[0-9]* max_connections=[0-9]*' "$work/serve-${soft#*:}.err" || true)
hard=$(serve "ulimit -n 256")
read -r hard_p50 hard_p99 hard_max hard_held < <(measure idle "$hard" 400 "$requests")
hard_limit=$(grep -o 'open_files=[0-9]* max_connections=[0-9]*' "$work/serve-${hard#*:}.err" || true)
emfile=$(cat "$work"/serve-*.err | grep -c 'Too many open files' || true)

echo "2. wrong passwords" >&2
guarded=$(serve true --basic-auth-file "$work/htpasswd")
read -r quiet_p50 quiet_p99 quiet_max < <(measure baseline "$guarded" "$requests")
read -r guess_p50 guess_p99 guess_max guesses busy < <(measure guessing "$guarded" 8 "$requests")

echo "3. unknown user vs wrong password" >&2
read -r wrong_mean wrong_median unknown_mean unknown_median first again < <(measure timing "$guarded" "$rounds")
difference=$(awk -v a="$unknown_mean" -v b="$wrong_mean" 'BEGIN {d = (a - b) / b * 100; printf "%+.1f %%", d}')

report=$(cat <<REPORT

## chartkit serve hardening (\`bench/serve_hardening.sh\`, $(date -u +%Y-%m-%d))

machine: $(nproc) cores, $(uname -m); chartkit $("$chartkit" --version | awk '{print $2}'), release build;
clients in Python on the same machine. /health is one new connection per request
($requests requests per row); times in ms.

Idle connections (never sending a byte), server started under a low descriptor limit:

| server started under | idle connections | /health p50 | p99 | max | idle ones still held |
| --- | ---: | ---: | ---: | ---: | ---: |
| \`ulimit -Sn 256\` | 0 | $base_p50 | $base_p99 | $base_max | |
| \`ulimit -Sn 256\` ($soft_limit) | 400 | $soft_p50 | $soft_p99 | $soft_max | $soft_held |
| \`ulimit -n 256\` ($hard_limit) | 400 | $hard_p50 | $hard_p99 | $hard_max | $hard_held |

\`Too many open files\` in the servers' logs: $emfile times.

8 clients sending wrong passwords (each its next guess as soon as it is answered) to a
cost-12 htpasswd; /health every 10 ms:

| load | /health p50 | p99 | max | guesses answered (503 of them) |
| --- | ---: | ---: | ---: | ---: |
| none | $quiet_p50 | $quiet_p99 | $quiet_max | |
| 8 guessing clients | $guess_p50 | $guess_p99 | $guess_max | $guesses ($busy) |

Upload refused for bad credentials, cost 12, $rounds of each interleaved on one connection:

| credentials | mean | median |
| --- | ---: | ---: |
| known user, wrong password | $wrong_mean | $wrong_median |
| unknown user | $unknown_mean | $unknown_median |
| **unknown vs wrong** | **$difference** | |

The right password: $first ms the first time (bcrypt), $again ms the next (remembered).
REPORT
)
echo "$report"
echo "$report" >>"$root/BENCHMARKS.md"
echo
echo "appended to BENCHMARKS.md"
