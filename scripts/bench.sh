#!/usr/bin/env bash
# bench.sh: bankd's benchmarks beside their baselines, in one session on one machine.
#
#   1. Go baselines on the embedded engine with a data dir (bench/): the fail-fast lock of the
#      classic design, lock-free conditional $inc transfers (the ceiling), and bankd's
#      transaction.Service in-process (no HTTP); then the ceiling and bankd behind the same
#      Go HTTP client (BenchmarkHTTPTransfer);
#   2. bankd over HTTP with durable writes (bankload -embedded): uniform (10,000 accounts),
#      hot (2 accounts) and retries (uniform, 10% of answers dropped and retried), 64 clients;
#   3. PostgreSQL's pgbench (TPC-B-like default script, fsync on) at scale 50 (uniform) and
#      scale 1 (hot), 64 clients, on a throwaway cluster listening on 127.0.0.1 only.
#
# It prints the raw figures and a Markdown summary table with the ratios, and removes
# everything it started or created. Everything talks to 127.0.0.1 only.
#
# Environment: BENCH_DURATION (seconds per bankload/pgbench run, default 20),
# BENCH_BENCHTIME (go test -benchtime, default 3s), BENCH_LOGS (a directory to keep the raw
# logs in; default: discarded). Needs root: PostgreSQL runs as the postgres user (runuser), and
# is installed with apt-get (Debian's postgresql) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# The Go baselines run at the garbage collector setting bankd uses by default (app.TuneGC).
export GOGC=${GOGC:-400}
DUR=${BENCH_DURATION:-20}
BENCHTIME=${BENCH_BENCHTIME:-3s}
CLIENTS=64
WORK=$(mktemp -d /tmp/bankd-bench.XXXXXX)
PGWORK=""
PGCTL=""

cleanup() {
	local rc=$?
	if [[ -n "$PGCTL" && -f "$PGWORK/data/postmaster.pid" ]]; then
		runuser -u postgres -- "$PGCTL" -D "$PGWORK/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	if [[ -n "${BENCH_LOGS:-}" ]]; then
		mkdir -p "$BENCH_LOGS" && cp "$WORK"/*.txt "$WORK"/*.log "$BENCH_LOGS"/ 2>/dev/null || true
		[[ -n "$PGWORK" ]] && cp "$PGWORK/server.log" "$BENCH_LOGS/pg-server.log" 2>/dev/null || true
	fi
	[[ -n "$PGWORK" ]] && rm -rf "$PGWORK"
	rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '\n== %s (%s)\n' "$*" "$(date -u +%H:%M:%S)" >&2; }

say "conditions"
{
	echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cpu:     $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "memory:  $(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
	echo "kernel:  $(uname -r)"
	echo "go:      $(go version | cut -d' ' -f3-)"
	echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, at start)"
} | tee "$WORK/conditions.txt"

# --- 1. Go baselines ------------------------------------------------------------------------
say "Go baselines: go test -run '^\$' -bench . -benchtime $BENCHTIME ./bench/"
go test -run '^$' -bench . -benchtime "$BENCHTIME" ./bench/ | tee "$WORK/go.txt" || echo "bench.sh: go test failed" >&2

# --- 2. bankd over HTTP ---------------------------------------------------------------------
go build -o "$WORK/bankload" ./cmd/bankload
bankload() { # name, then bankload's flags
	local name=$1
	shift
	say "bankload $name: bankload -embedded -clients $CLIENTS -duration ${DUR}s -seed 1 $*"
	# Exit status 1 means a broken invariant: recorded in the JSON line, the run goes on.
	"$WORK/bankload" -embedded -clients "$CLIENTS" -duration "${DUR}s" -seed 1 "$@" \
		>"$WORK/bankload-$name.txt" 2>"$WORK/bankload-$name.log" || true
	tail -n 3 "$WORK/bankload-$name.log" >&2
	tail -n 1 "$WORK/bankload-$name.txt"
}
bankload hot -accounts 2
bankload uniform -accounts 10000
bankload retries -accounts 10000 -retry-rate 0.1

# --- 3. pgbench -----------------------------------------------------------------------------
say "PostgreSQL"
pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
if [[ -z "$(pgbin)" || ! -x "$(pgbin)/pgbench" ]]; then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
PGBIN=$(pgbin)
PGCTL="$PGBIN/pg_ctl"
PGWORK=$(mktemp -d /tmp/bankd-pg.XXXXXX)
chown postgres: "$PGWORK"
PORT=55432
while (: >"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; do PORT=$((PORT + 1)); done
runuser -u postgres -- "$PGBIN/initdb" -D "$PGWORK/data" -U postgres -A trust --no-instructions >"$WORK/pg-initdb.log"
# Debian's defaults otherwise (fsync, synchronous_commit and full_page_writes on).
pgstart() {
	runuser -u postgres -- "$PGCTL" -D "$PGWORK/data" -l "$PGWORK/server.log" -w start \
		-o "-c listen_addresses=127.0.0.1 -p $PORT -k $PGWORK -c max_connections=100" >/dev/null
}
# It failed to start once, right after a previous run's server had stopped: say why, try again.
if ! pgstart; then
	echo "bench.sh: PostgreSQL did not start; the end of its log:" >&2
	tail -n 20 "$PGWORK/server.log" >&2 || true
	sleep 5
	pgstart
fi
PG=(-h 127.0.0.1 -p "$PORT" -U postgres)
"$PGBIN/psql" "${PG[@]}" -qAt -c "SHOW server_version" -c "SHOW fsync" -c "SHOW synchronous_commit" |
	paste -sd' ' | sed 's/^/postgres: version, fsync, synchronous_commit = /' | tee -a "$WORK/conditions.txt"
"$PGBIN/createdb" "${PG[@]}" bench
pgbench() { # name, scale
	say "pgbench $1: pgbench -i -s $2 -q; pgbench -c $CLIENTS -j 2 -T $DUR"
	"$PGBIN/pgbench" "${PG[@]}" -i -s "$2" -q bench >"$WORK/pgbench-$1-init.log" 2>&1
	"$PGBIN/pgbench" "${PG[@]}" -c "$CLIENTS" -j 2 -T "$DUR" bench >"$WORK/pgbench-$1.txt" 2>"$WORK/pgbench-$1.log"
	grep -E '^(latency average|tps)' "$WORK/pgbench-$1.txt"
}
pgbench uniform 50
pgbench hot 1
runuser -u postgres -- "$PGCTL" -D "$PGWORK/data" -m fast -w stop >/dev/null
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, at end)" | tee -a "$WORK/conditions.txt" >&2

# --- summary --------------------------------------------------------------------------------
# gobench BENCH/SUB UNIT: the metric from go.txt ("" if absent).
gobench() { awk -v b="$1" -v u="$2" '$1 == b || $1 ~ ("^" b "-[0-9]+$") { for (i = 3; i <= NF; i++) if ($i == u) v = $(i - 1) } END { print v }' "$WORK/go.txt"; }
# field NAME KEY: a number from bankload's JSON line;
# field NAME errors: the error codes other than account_busy, "code:n,...".
field() {
	local line
	line=$(tail -n 1 "$WORK/bankload-$1.txt" 2>/dev/null || true)
	if [[ $2 == errors ]]; then
		sed -nE 's/.*"errors":\{([^}]*)\}.*/\1/p' <<<"$line" | sed -E 's/"account_busy":[0-9]+,?//; s/,$//; s/"//g'
		return
	fi
	sed -nE "s/.*\"$2\":(-?[0-9.]+|true|false).*/\1/p" <<<"$line"
}
busy() { # account_busy answers of a bankload run
	local line
	line=$(tail -n 1 "$WORK/bankload-$1.txt" 2>/dev/null || true)
	sed -nE 's/.*"account_busy":([0-9]+).*/\1/p' <<<"$line" | grep . || echo 0
}
pgtps() { sed -nE 's/^tps = ([0-9.]+) \(without initial connection time\)/\1/p' "$WORK/pgbench-$1.txt" 2>/dev/null || true; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.2f", a / b }'; }
num() { awk -v a="$1" 'BEGIN { if (a == "") print "n/a"; else printf "%.0f", a }'; }

say "summary"
{
	echo
	# The ceiling runs in-process (no HTTP), so its like-for-like ratio is the Service's
	# in-process figure over it; bankd over HTTP against it is shown too.
	echo "| load | bankd HTTP tps | p50 / p99 ms | account_busy | other errors | invariants | Service in-process tps | \$inc ceiling tps | fail-fast success % (tps) | pgbench tps | bankd HTTP / pgbench | Service / ceiling | bankd HTTP / ceiling |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	for load in uniform hot retries; do
		sub=$load pgcase=$load
		[[ $load == retries ]] && sub=uniform pgcase=""
		tps=$(field "$load" throughput_per_s)
		other=$(field "$load" errors)
		ceil=$(gobench "BenchmarkConditionalInc/$sub" transfers/s)
		svc=$(gobench "BenchmarkServiceTransfer/$sub" transfers/s)
		pg=""
		[[ -n $pgcase ]] && pg=$(pgtps "$pgcase")
		printf '| %s | %s | %s / %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s |\n' \
			"$load" "$(num "$tps")" "$(field "$load" p50_ms)" "$(field "$load" p99_ms)" "$(busy "$load")" "${other:-none}" \
			"$(field "$load" invariants_ok)" "$(num "$svc")" "$(num "$ceil")" \
			"$(gobench "BenchmarkFailFast/$sub" success_%)" "$(num "$(gobench "BenchmarkFailFast/$sub" transfers/s)")" \
			"${pg:+$(num "$pg")}" "$(ratio "$tps" "$pg")" "$(ratio "$svc" "$ceil")" "$(ratio "$tps" "$ceil")"
	done
	echo
	hc=$(gobench BenchmarkHTTPTransfer/ceiling/uniform transfers/s)
	hb=$(gobench BenchmarkHTTPTransfer/bankd/uniform transfers/s)
	echo "uniform over HTTP, one Go client for both (BenchmarkHTTPTransfer): bankd $(num "$hb") tps," \
		"\$inc ceiling $(num "$hc") tps, bankd / ceiling $(ratio "$hb" "$hc")"
	echo
	hot_ok=$(awk -v b="$(busy hot)" -v p="$(field hot p99_ms)" 'BEGIN { print (b == 0 && p != "" && p < 250) ? "met" : "missed" }')
	half() { awk -v r="$1" 'BEGIN { print (r != "n/a" && r >= 0.5) ? "met" : "missed" }'; }
	uni_ok="in-process $(half "$(ratio "$(gobench BenchmarkServiceTransfer/uniform transfers/s)" "$(gobench BenchmarkConditionalInc/uniform transfers/s)")"),"
	uni_ok+=" over HTTP $(half "$(ratio "$hb" "$hc")")"
	pgu=$(awk -v r="$(ratio "$(field uniform throughput_per_s)" "$(pgtps uniform)")" 'BEGIN { print (r != "n/a" && r >= 1) ? "met" : "missed" }')
	pgh=$(awk -v r="$(ratio "$(field hot throughput_per_s)" "$(pgtps hot)")" 'BEGIN { print (r != "n/a" && r >= 1) ? "met" : "missed" }')
	echo "targets: hot zero account_busy and p99 < 250 ms: $hot_ok; uniform >= half the ceiling: $uni_ok;" \
		"bankd >= pgbench: uniform $pgu, hot $pgh"
} | tee "$WORK/summary.txt"
