#!/usr/bin/env bash
# prometheus.sh — continuous mode's metrics reach a real Prometheus
# (docs/continuous.md, "A fleet"): Debian's prometheus and
# prometheus-node-exporter, started here on 127.0.0.1 with private data and
# a 1 s scrape, the node exporter's textfile collector pointed at our
# --metrics-file. Checked through Prometheus' HTTP API:
#  - the demo's hot function, as Prometheus holds it for a window, equals
#    that window's own report (self share, to the report's 0.1 point);
#  - the series go stale once continuous mode stops (the file is removed);
#  - a reader never sees half a metrics file (each is renamed into place).
# Mutations seen failing (together, in one run): write_metrics writing the
# file in place, unbuffered (the reader saw partial files), and
# run_continuous leaving the file at exit (the series stayed).
. "$TOP_SRCDIR/tests/lib.sh" || exit 99
require_attach
require_tool prometheus prometheus
require_tool prometheus-node-exporter prometheus-node-exporter
require_tool python3 python3

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
NE_PORT=$(free_port)
PROM_PORT=$(free_port)
mkdir -p "$TMP/textfile" "$TMP/prom-data"
prometheus-node-exporter --web.listen-address="127.0.0.1:$NE_PORT" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$TMP/textfile" >"$TMP/ne.log" 2>&1 &
TEST_PIDS="$TEST_PIDS $!"
cat >"$TMP/prom.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$NE_PORT']
YML
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom-data" \
	--web.listen-address="127.0.0.1:$PROM_PORT" >"$TMP/prom.log" 2>&1 &
TEST_PIDS="$TEST_PIDS $!"

# query PROMQL: the API's result as "value<TAB>labels-json" lines
# query PROMQL: an instant query, evaluated at $QUERY_TIME (Unix seconds)
# when set: every query about one window is asked of the same scrape,
# though the file may change (the next window) between two of them
query() {
	python3 - "$PROM_PORT" "$1" "${QUERY_TIME:-}" <<'PY'
import json, sys, urllib.parse, urllib.request
params = {"query": sys.argv[2]}
if sys.argv[3]:
    params["time"] = sys.argv[3]
url = "http://127.0.0.1:%s/api/v1/query?%s" % (sys.argv[1], urllib.parse.urlencode(params))
try:
    data = json.load(urllib.request.urlopen(url, timeout=5))
except Exception as e:
    print("error\t%s" % e); sys.exit(0)
for r in data["data"]["result"]:
    print("%s\t%s" % (r["value"][1], json.dumps(r["metric"], sort_keys=True)))
PY
}
up=""
for i in $(seq 1 100); do
	up=$(query 'up{job="node"}' | cut -f1)
	[ "$up" = 1 ] && break
	sleep 0.2
done
check "prometheus scrapes the node exporter" test "$up" = 1 || { show "$TMP/prom.log"; show "$TMP/ne.log"; }

"$FIXTURES/cache-service" 300 --progress "$TMP/demo.progress" >/dev/null &
DEMO=$!
TEST_PIDS="$TEST_PIDS $DEMO"
wait_for_file "$TMP/demo.progress"
PROM_FILE=$TMP/textfile/xgdbprof.prom

# a reader during the renames: every read is a whole file (its last family
# there) or no file at all
( while :; do
	if [ -f "$PROM_FILE" ]; then
		if cat "$PROM_FILE" 2>/dev/null >"$TMP/read.txt"; then
			if [ -s "$TMP/read.txt" ] && ! tail -1 "$TMP/read.txt" | grep -q '^xgdbprof_window_end_timestamp_seconds{'; then
				echo partial
			else
				echo whole
			fi
		fi
	fi
	sleep 0.001
  done >"$TMP/reads" ) &
READER=$!
TEST_PIDS="$TEST_PIDS $READER"

# every 8 s: after window 2 the file stays the same for ~6 s, time for a
# 1 s scrape to pick it up before window 3 replaces it
"$XGDBPROF" --every 8s --duration 2s -o "$TMP/cont" --metrics-file "$PROM_FILE" "$DEMO" \
	>"$TMP/cont.out" 2>"$TMP/cont.err" &
CONT=$!
TEST_PIDS="$TEST_PIDS $CONT"
for i in $(seq 1 300); do [ "$(wc -l <"$TMP/cont/index.jsonl" 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.1; done
check "two windows ran" test "$(wc -l <"$TMP/cont/index.jsonl" 2>/dev/null || echo 0)" -ge 2 || show "$TMP/cont.err"
# the window the file holds now is the index's last; wait until Prometheus
# has scraped it (its end timestamp) before comparing
stamp=$(tail -1 "$TMP/cont/index.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["window"])')
file_end=$(sed -n 's/^xgdbprof_window_end_timestamp_seconds{.*} //p' "$PROM_FILE")
prom_end=""
for i in $(seq 1 50); do
	QUERY_TIME=$(date +%s.%N)
	prom_end=$(query 'xgdbprof_window_end_timestamp_seconds' | cut -f1)
	[ -n "$file_end" ] && python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 0.0005)' "$prom_end" "$file_end" 2>/dev/null && break
	sleep 0.2
done
check "prometheus holds window $stamp (its end, $file_end)" \
	python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 0.0005)' "${prom_end:-0}" "${file_end:-1}" ||
	{ echo "    prometheus: '$prom_end'"; show "$PROM_FILE"; }
query 'xgdbprof_function_self_ratio' >"$TMP/self.tsv"
query 'topk(1, xgdbprof_function_self_ratio)' >"$TMP/top1.tsv"
hot=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().split("\t",1)[1])["function"])' "$TMP/top1.tsv" 2>/dev/null)
prom_share=$(cut -f1 "$TMP/top1.tsv" | head -1)
# the same window's report: "top functions by self", the row of that function
report_share=$(python3 - "$TMP/cont/$stamp/report.txt" "$hot" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read().split("top functions by self", 1)[1].split("\n\n", 1)[0]
for line in text.splitlines():
    cols = line.split()
    if len(cols) >= 4 and cols[0].endswith("%") and line.find(sys.argv[2][:40]) >= 0:
        print(cols[0].rstrip("%")); break
PY
)
echo "# PromQL topk(1, xgdbprof_function_self_ratio) = $prom_share for $hot; the window's report: ${report_share:-?}%"
# the report's first row (its name may be shortened with … to the width)
report_first=$(sed -n '/^top functions by self/{n;n;p;q}' "$TMP/cont/$stamp/report.txt" | awk '{print $4}')
check "the hottest function in Prometheus is the window's own first by self ($report_first)" \
	python3 -c 'import sys; h, r = sys.argv[1], sys.argv[2]; head, _, tail = r.partition("\u2026"); sys.exit(not (h.startswith(head) and h.endswith(tail) and r))' "$hot" "$report_first" ||
	cat "$TMP/top1.tsv"
# (the queries above ask the scrape that held this window: in a CI run,
# loaded, the next window replaced it between two queries, and the share
# of window 3 was compared with window 2's report, 38.9% against 42.9%)
check "its share in Prometheus is the report's (within 0.1 point)" \
	python3 -c 'import sys; sys.exit(abs(100 * float(sys.argv[1]) - float(sys.argv[2])) > 0.11)' "$prom_share" "$report_share" ||
	sed -n '/top functions by self/,/^$/p' "$TMP/cont/$stamp/report.txt"
# (the hottest function's file: the demo's Rust, or glibc's assembly when
# memcpy leads, as in a loaded run: __memcpy_avx512_unaligned_erms at 32%)
check "labels: exe, build_id, function, file, line" \
	python3 -c 'import json,sys; m=json.loads(open(sys.argv[1]).read().split("\t",1)[1]); sys.exit(not (m["exe"]=="cache-service" and len(m["build_id"])>=20 and m["file"].endswith((".rs", ".c", ".S", ".h")) and int(m["line"])>0))' "$TMP/top1.tsv" ||
	cat "$TMP/top1.tsv"
series=$(query '{__name__=~"xgdbprof_.*"}' | wc -l)
check "series per host bounded: $series (at most 2 x 20 functions x 2 + 12)" test "$series" -gt 10 -a "$series" -le 92
# as many paths as the window's report has headlines, up to three (a
# window loaded by other work can hold fewer distinct paths: a loaded CI run
# had one function at 99% of its stacks)
headlines=$(grep -cE '^#[0-9]+ hottest code path' "$TMP/cont/$stamp/report.txt")
[ "$headlines" -gt 3 ] && headlines=3
paths=$(query 'xgdbprof_path_ratio' | wc -l)
check "the hottest paths, named as the headlines: $paths in Prometheus, $headlines in the window's report (at most 3)" \
	test "$paths" -eq "$headlines" -a "$headlines" -ge 1
check "target CPU min/avg/max" test "$(query 'xgdbprof_target_cpu_ratio' | wc -l)" -eq 3
held=$(query 'xgdbprof_observer_held_ratio' | cut -f1)
p99=$(query 'xgdbprof_observer_stop_p99_seconds' | cut -f1)
check "observer effect: held share ($held) and stop p99 ($p99 s)" test -n "$held" -a -n "$p99"

unset QUERY_TIME   # from here on: now
kill -TERM "$CONT"
wait "$CONT"
check "continuous mode ends with status 0" test $? -eq 0 || show "$TMP/cont.err"
check "its metrics file is removed at exit" test ! -e "$PROM_FILE"
gone=""
for i in $(seq 1 50); do
	[ -z "$(query 'xgdbprof_window_stacks')" ] && { gone=yes; break; }
	sleep 0.2
done
check "the series go stale in Prometheus once continuous mode stops" test "$gone" = yes || query 'xgdbprof_window_stacks'
kill "$READER" 2>/dev/null
wait "$READER" 2>/dev/null
check "a reader never saw half a metrics file ($(grep -c whole "$TMP/reads") whole reads)" \
	sh -c "! grep -q partial '$TMP/reads' && grep -q whole '$TMP/reads'"
check "the demo runs free afterwards" target_runs_free "$DEMO" "$TMP/demo.progress"
finish
