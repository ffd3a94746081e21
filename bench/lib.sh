# Shell functions the benchmarks share: the binary measured, a work directory removed on
# exit with every server started in it, free ports, and `chartkit serve` started and
# waited for. Sourced after `root` is set:  . "$root/bench/lib.sh"

# The chartkit binary to measure: CHARTKIT_BIN when given (a release binary built
# already), otherwise one built now with scripts/build-release.
bench_chartkit() {
  if [[ -n ${CHARTKIT_BIN:-} ]]; then
    echo "$CHARTKIT_BIN"
  else
    "$root/scripts/build-release" --quiet
  fi
}

# Makes $work, a temporary directory, and kills the processes listed in $work/pids and
# removes $work when the script exits. A script with more to stop defines
# bench_cleanup_more, which runs first.
bench_work() {
  work=$(mktemp -d)
  trap bench_cleanup EXIT
}

bench_cleanup() {
  if declare -F bench_cleanup_more >/dev/null; then
    bench_cleanup_more
  fi
  [[ -f $work/pids ]] && while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$work/pids"
  rm -rf "$work"
}

# Remembers a background process for bench_cleanup. Servers are started inside $(...),
# so their pids go to a file rather than a shell array.
bench_track() {
  echo "$1" >>"$work/pids"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits (up to a minute) for a chartkit serve whose stdout goes to FILE to listen.
bench_wait_listening() {
  local file=$1
  for _ in $(seq 600); do
    grep -q '^Listening on' "$file" 2>/dev/null && break
    sleep 0.1
  done
}

# Waits (up to 20 s) for URL to answer with a success.
bench_wait_url() {
  local url=$1
  for _ in $(seq 200); do
    curl -sf "$url" >/dev/null 2>&1 && break
    sleep 0.1
  done
}

# Starts `$chartkit serve DIR ARGS...` on a free port, logging into $work; prints its URL.
bench_serve() {
  local dir=$1 port
  shift
  port=$(free_port)
  CHARTKIT_LOG=warn "$chartkit" serve "$dir" --addr "127.0.0.1:$port" "$@" >"$work/serve-$port.out" 2>&1 &
  bench_track $!
  bench_wait_listening "$work/serve-$port.out"
  echo "http://127.0.0.1:$port"
}
