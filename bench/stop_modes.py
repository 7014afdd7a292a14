#!/usr/bin/env python3
"""bench/stop_modes.py — what one sample's stop costs in gdb's all-stop and
non-stop modes, side by side, straight over gdb/MI (no xgdbprof involved).

    bench/stop_modes.py [--stops N] [--rounds R] [--modes "MODE ..."] BUILD_DIR

Needs BUILD_DIR/bench/bench_target (bench/profile.sh builds it) and gdb.
Each round starts a fresh bench_target (1 busy thread "busy", 4 idle, main)
per mode, attaches gdb with the settings xgdbprof uses (mi-async on,
frame-arguments none, entry-values no), lets it run, then N times, 50 ms
apart: interrupt (all-stop: -exec-interrupt --all; non-stop: -exec-interrupt
--thread <busy>), wait for the busy thread's *stopped (all-stop: the one
*stopped), read the eight registers the fast walker needs, resume
(-exec-continue [--all]) and wait for ^running. Two more non-stop modes:
non-stop-piped, what xgdbprof's sampler does since session 10 (rip and rsp
come from /proc, so only rbp is read, and the read and
`-exec-continue --thread` go to gdb in one write); non-stop-floor, the
interrupt and the resume alone (no register read: gdb's floor for a
stop). Prints, per mode, the median and p90 over all stops of: interrupt →
*stopped, the register read (piped: read and resume), and the whole stop.
Rounds rotate the modes' order.
"""
import argparse
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time

REGS = "16 7 6 3 12 13 14 15"   # rip rsp rbp rbx r12-r15 in gdb's x86-64 numbering


class Gdb:
    def __init__(self, settings):
        args = ["gdb", "-nx", "-q", "--interpreter=mi3"]
        for s in ["set auto-load off", "set debuginfod enabled off", "set confirm off",
                  "set pagination off", "set width 0", "set height 0"]:
            args += ["-iex", s]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.buf = b""
        for s in settings:
            self.call(s)

    def line(self, timeout=15):
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                raise SystemExit("gdb did not answer within %d s" % timeout)
            data = os.read(self.proc.stdout.fileno(), 65536)
            if not data:
                raise SystemExit("gdb exited")
            self.buf += data
        text, self.buf = self.buf.split(b"\n", 1)
        return text.decode(errors="replace")

    def send(self, command):
        self.proc.stdin.write((command + "\n").encode())

    def call(self, command):
        self.send(command)
        while True:
            text = self.line()
            if text.startswith("^error"):
                raise SystemExit("%s: %s" % (command, text))
            if text.startswith(("^done", "^running")):
                return text

    def wait(self, prefix):
        while True:
            text = self.line()
            if text.startswith(prefix):
                return text

    def close(self):
        self.proc.kill()
        self.proc.wait()


def busy_gdb_id(gdb, pid):
    info = gdb.call("-thread-info")
    for gid, lwp in re.findall(r'\{id="(\d+)",target-id="[^"]*?LWP (\d+)\)?"', info):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, lwp)) as f:
                if f.read().strip() == "busy":
                    return gid
        except OSError:
            pass
    raise SystemExit("no thread named busy in %d" % pid)


def one_run(target, mode, stops):
    progress = tempfile.mktemp(prefix="stop_modes.")
    victim = subprocess.Popen([target, progress, "600"])
    settings = ["-gdb-set mi-async on", "-gdb-set print frame-arguments none",
                "-gdb-set print entry-values no"]
    if mode.startswith("non-stop"):
        settings.append("-gdb-set non-stop on")
    gdb = Gdb(settings)
    try:
        time.sleep(1)
        gdb.call("-file-exec-and-symbols " + target)
        gdb.call("-target-attach %d" % victim.pid)
        if mode.startswith("non-stop"):
            for _ in range(len(os.listdir("/proc/%d/task" % victim.pid))):
                gdb.wait("*stopped")
        else:
            gdb.wait("*stopped")
        busy = busy_gdb_id(gdb, victim.pid)
        gdb.call("-exec-continue --all" if mode.startswith("non-stop") else "-exec-continue")
        time.sleep(0.3)
        figures = []
        for _ in range(stops):
            time.sleep(0.05)
            t0 = time.monotonic()
            if mode.startswith("non-stop"):
                gdb.call("-exec-interrupt --thread " + busy)
            else:
                gdb.call("-exec-interrupt --all")
            gdb.wait("*stopped")
            t1 = time.monotonic()
            if mode == "non-stop-piped":
                gdb.send("-data-list-register-values --thread %s x 6\n-exec-continue --thread %s" % (busy, busy))
                gdb.wait("^done")
                gdb.wait("^running")
                t2 = t3 = time.monotonic()
            elif mode == "non-stop-floor":
                t2 = t1
                gdb.call("-exec-continue --thread " + busy)
                t3 = time.monotonic()
            else:
                gdb.call("-data-list-register-values --thread %s x %s" % (busy, REGS))
                t2 = time.monotonic()
                gdb.call("-exec-continue --all" if mode == "non-stop" else "-exec-continue")
                t3 = time.monotonic()
            figures.append((t1 - t0, t2 - t1, t3 - t0))
        return figures
    finally:
        gdb.close()
        victim.kill()
        victim.wait()
        for path in (progress, progress + ".tmp"):
            if os.path.exists(path):
                os.unlink(path)


def summary(values):
    values = sorted(v * 1e3 for v in values)
    return "%6.3f %6.3f" % (statistics.median(values), values[int(len(values) * 0.9)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stops", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default="all-stop non-stop non-stop-piped non-stop-floor")
    ap.add_argument("build_dir")
    opts = ap.parse_args()
    target = os.path.join(os.path.abspath(opts.build_dir), "bench", "bench_target")
    if not os.access(target, os.X_OK):
        raise SystemExit("%s missing: run bench/profile.sh once (it builds it)" % target)
    modes = opts.modes.split()
    for mode in modes:
        if mode not in ("all-stop", "non-stop", "non-stop-piped", "non-stop-floor"):
            raise SystemExit("unknown mode %s: all-stop, non-stop, non-stop-piped, non-stop-floor" % mode)
    results = {mode: [] for mode in modes}
    for r in range(opts.rounds):
        order = modes[r % len(modes):] + modes[:r % len(modes)]
        for mode in order:
            print("round %d/%d: %s" % (r + 1, opts.rounds, mode), file=sys.stderr)
            results[mode] += one_run(target, mode, opts.stops)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print("stop cost per sample, bench_target (1 busy thread, 5 idle); %d rounds x %d stops; load %s"
          % (opts.rounds, opts.stops, load))
    print("%-14s %15s %15s %15s" % ("mode", "stop med p90", "regs med p90", "total med p90"))
    for mode, figures in results.items():
        print("%-14s %15s %15s %15s" % (mode, summary(f[0] for f in figures),
                                       summary(f[1] for f in figures), summary(f[2] for f in figures)))
    print("(ms; stop = interrupt sent -> *stopped; total = interrupt -> resume acknowledged)")


if __name__ == "__main__":
    main()
