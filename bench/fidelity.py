#!/usr/bin/env python3
"""fidelity.py — compares an xgdbprof profile with perf's of the same process
over the same time (bench/fidelity.sh runs both; tests/fidelity.sh too).

    fidelity.py compare PERF_SCRIPT PROFILE_JSON [--busy REGEX] [--top N]
                        [--perf-seconds S]
        PERF_SCRIPT: `perf script -F comm,tid,ip,sym,dso` of `perf record
        -F 499 -g` over S seconds (default: xgdbprof's duration)
        PROFILE_JSON: the profile.json of xgdbprof's run (hot-cpu recipe)
        Either may be "A+B": several windows of the same process, summed
        prints "key value" lines, then with --top N the N functions with the
        most self time in either profile, side by side. Busy threads: those
        whose name matches REGEX (default ^worker-, kvservice's workers).
    fidelity.py perf PERF_SCRIPT [--busy REGEX] [--perf-seconds S]
        the perf-side figures alone (perf_samples, lock_wait_perf_pct,
        busy_cpu_pct_median).
    fidelity.py table RESULTS
        RESULTS: lines "ROUND MODE key value" as bench/fidelity.sh collects
        them; prints the side-by-side table (medians over rounds; the loss
        is the median throughput's against the median of mode "baseline").
    fidelity.py normalize NAME...
        prints each name as both profiles are compared (for checking).

What is compared: flat self time at symbol level. A sample's function is the
one whose machine code holds the PC: for perf, the first frame outside the
kernel (perf only samples threads on a CPU; in a system call that is the
user frame that entered the kernel, which is what a ptrace-based sampler
sees); for xgdbprof, the innermost frame that is not an inline copy (inline
frames are a DWARF refinement perf's symbol table does not have). Both names
are normalized (see normalize) so the two tools' spellings of one function
compare equal. overlap = sum over functions of min(p, q), p and q the two
shares: 100% for identical distributions.

Lock wait: samples whose innermost frames (or, for perf, kernel frames) are
a futex wait or glibc's __lll_lock_wait*: a thread there is asleep, so perf
(sampling on-CPU time) sees it only on its way in and out. sched_yield: the
samples whose function is sched_yield, where parking_lot's spinning waiters
(and crossbeam's) give up the CPU: runnable, but mostly not running.
"""
import json
import random
import re
import statistics
import sys
from collections import Counter, defaultdict

LOCK_WAIT = re.compile(r"futex_wait|futex_abstimed_wait|lll_lock_wait")
# How many innermost frames may show the wait: `syscall` ← parking_lot's
# ThreadParker::futex_wait, or glibc's futex_wait inlined in __lll_lock_wait.
LOCK_WAIT_DEPTH = 3
HASH = re.compile(r"::h[0-9a-f]{16}$")
CRATE_DISAMBIGUATOR = re.compile(r"\[[0-9a-f]+\]")
CLOSURE = re.compile(r"\{\{closure\}\}|\{closure#\d+\}")
# glibc's aliases of one function: perf names a PC by one symbol of the
# table, DWARF by the function's own name.
GLIBC_ALIASES = {"cfree": "free", "__libc_free": "free", "__libc_malloc": "malloc",
                 "__libc_realloc": "realloc", "__libc_calloc": "calloc",
                 "__sched_yield": "sched_yield", "__GI___sched_yield": "sched_yield"}
# glibc's system call wrappers have a __name alias (__mprotect, mprotect).
GLIBC_SYSCALL_WRAPPER = re.compile(r"^__(mprotect|munmap|mmap|mmap64|madvise|mremap|brk|sbrk|sched_yield|"
                                   r"nanosleep|clock_nanosleep|write|read|close|open64|openat64|rename)$")
MEMCPY_ALIAS = re.compile(r"^__memcpy_(\w*_unaligned(?:_erms)?)$")
# Our [in kernel: futex] frames (a sample caught on the kernel's way out):
# perf's samples are charged to their first user frame, so ours are too.
KERNEL_MARKER = re.compile(r"^\[in kernel: .*\]$")


def _matching(text, start):
    """Index of the '>' closing the '<' at start ('->' does not close)."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">" and not (i > 0 and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                return i
    return len(text) - 1


def _split_as(inner):
    """Splits '<X as Y>''s inside at its top-level ' as '."""
    depth = 0
    for i, c in enumerate(inner):
        if c == "<":
            depth += 1
        elif c == ">" and not (i > 0 and inner[i - 1] == "-"):
            depth -= 1
        elif depth == 0 and inner.startswith(" as ", i):
            return inner[:i], inner[i + 4:]
    return None


def _strip_generics(text):
    out = ""
    i = 0
    while i < len(text):
        c = text[i]
        if c != "<":
            out += c
            i += 1
            continue
        j = _matching(text, i)
        inner = text[i + 1:j]
        if out.endswith("::") and not inner.startswith("impl "):
            out = out[:-2]          # v0's turbofish ::<…>
        elif out.endswith("::"):
            out += "<" + inner + ">"  # core::slice::<impl [T]>::…
        elif out == "" or out.endswith((" ", "(", ",", "&", "*")):
            # A qualified path: <T as Trait> keeps both sides, v0's <T> of an
            # inherent impl is just T.
            parts = _split_as(inner)
            if parts:
                out += "<%s as %s>" % (_strip_generics(parts[0]), _strip_generics(parts[1]))
            else:
                out += _strip_generics(inner)
        # else: generic arguments after a name: dropped
        i = j + 1
    return out.replace("::::", "::")


def normalize(name):
    """One spelling per function: no hash, crate disambiguator, generic
    arguments, symbol version or offset; closures as {closure}; v0's <T>
    wrapper of inherent impls unwrapped; glibc aliases folded."""
    if not name:
        return "[unknown]"
    name = re.sub(r"\+0x[0-9a-f]+$", "", name)
    name = name.split("@", 1)[0]                    # cfree@GLIBC_2.2.5
    name = HASH.sub("", name)
    name = CRATE_DISAMBIGUATOR.sub("", name)
    name = CLOSURE.sub("{closure}", name)
    if "<" in name:
        name = _strip_generics(name)
    name = re.sub(r"::\{closure\}$", "::{closure}", name)
    if name.startswith("__GI_"):
        name = name[len("__GI_"):]
    name = GLIBC_SYSCALL_WRAPPER.sub(r"\1", name)
    # glibc's multiarch memcpy_*_unaligned* is the memmove of the same name
    # (one address, two symbols): perf and we may each pick either.
    name = MEMCPY_ALIAS.sub(r"__memmove_\1", name)
    return GLIBC_ALIASES.get(name, name)


def read_perf(path):
    """Yields (thread name, user frames, kernel frames) per sample of a
    `perf script -F comm,tid,ip,sym,dso` listing, frames leaf first; of
    each listing in turn for "A+B"."""
    for part in path.split("+"):
        yield from read_one_perf(part)


def read_one_perf(path):
    comm = None
    user, kernel = [], []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if comm is not None:
                    yield comm, user, kernel
                comm, user, kernel = None, [], []
                continue
            if not line[0].isspace():
                # "comm tid" — comm may hold spaces; tid is the last field.
                comm = line.rsplit(None, 1)[0].strip() if len(line.split()) > 1 else line.strip()
                continue
            m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\(([^()]*)\)\s*$", line)
            if not m:
                continue
            ip, sym, dso = m.groups()
            if dso.startswith("[kernel") or dso.startswith("[guest.kernel") or int(ip, 16) >= 0xffff800000000000:
                kernel.append(sym)
            else:
                user.append(sym)
    if comm is not None:
        yield comm, user, kernel


def perf_profile(path, threads=None):
    flat, per_thread = Counter(), Counter()
    lock_wait = total = 0
    for comm, user, kernel in read_perf(path):
        if threads is not None and comm not in threads:
            continue
        if not user:            # a kernel thread's sample, or no user stack
            continue
        total += 1
        per_thread[comm] += 1
        flat[normalize(user[0])] += 1
        if any(LOCK_WAIT.search(s) for s in kernel) or any(LOCK_WAIT.search(s or "") for s in user[:LOCK_WAIT_DEPTH]):
            lock_wait += 1
    return flat, per_thread, lock_wait, total


def our_profile(path):
    """The flat profile of a profile.json; of several summed for "A+B"
    (their stack counts and durations summed, other meta the first's)."""
    flat, per_thread, lock_wait, total, meta = one_profile(path.split("+")[0])
    for part in path.split("+")[1:]:
        f2, t2, l2, n2, m2 = one_profile(part)
        flat.update(f2)
        per_thread.update(t2)
        lock_wait, total = lock_wait + l2, total + n2
        meta["samples_per_thread"].update(m2["samples_per_thread"])
        for key in ("thread_samples", "duration_actual_s"):
            if meta.get(key) is not None and m2.get(key) is not None:
                meta[key] += m2[key]
    return flat, per_thread, lock_wait, total, meta


def one_profile(path):
    with open(path) as f:
        profile = json.load(f)
    frames = profile["frames"]
    flat, per_thread = Counter(), Counter()
    samples_per_thread = Counter()
    lock_wait = total = 0
    for sample in profile["samples"]:
        weight = sample.get("weight", 1)
        # a CPU-weighted profile (hot-cpu: weight = on-CPU ns) says how
        # many samples each weight sums in "events"
        samples_per_thread[sample.get("thread") or "?"] += sample.get("events", weight)
        stack = [frames[i] for i in sample["stack"]
                 if not KERNEL_MARKER.match(frames[i].get("function") or "")]
        if not stack:
            continue
        total += weight
        per_thread[sample.get("thread") or "?"] += weight
        physical = next((fr for fr in stack if not fr.get("inlined")), stack[-1])
        flat[normalize(physical.get("function"))] += weight
        if any(LOCK_WAIT.search(fr.get("function") or "") for fr in stack[:LOCK_WAIT_DEPTH]):
            lock_wait += weight
    profile["meta"]["samples_per_thread"] = samples_per_thread
    return flat, per_thread, lock_wait, total, profile["meta"]


def shares(counts):
    total = sum(counts.values())
    return {k: 100.0 * v / total for k, v in counts.items()} if total else {}


def overlap(p, q):
    return sum(min(p.get(k, 0.0), q.get(k, 0.0)) for k in set(p) | set(q))


def perfect_sampler_overlap(theirs, stacks, draws=200, seed=1):
    """The overlap with perf's flat profile that a sampler without bias
    reaches with `stacks` stacks: perf's own distribution resampled (seeded,
    so a run's figure is repeatable), the median over `draws` draws."""
    names, counts = list(theirs), list(theirs.values())
    if not names or stacks <= 0:
        return None
    p = shares(theirs)
    rng = random.Random(seed)
    figures = [overlap(p, shares(Counter(rng.choices(names, weights=counts, k=stacks)))) for _ in range(draws)]
    return statistics.median(figures)


def largest_differences(p, q, n=5):
    """The n functions whose shares differ most (points), with both shares."""
    names = sorted(set(p) | set(q), key=lambda k: -abs(p.get(k, 0) - q.get(k, 0)))[:n]
    return [(k, p.get(k, 0), q.get(k, 0)) for k in names]


def perf_only(perf_path, seconds, busy_regex):
    """The perf-side figures of a perf run on its own."""
    theirs, perf_threads, perf_lock, perf_total = perf_profile(perf_path)
    busy = re.compile(busy_regex)
    cpu = [100.0 * n / (499.0 * seconds) for t, n in perf_threads.items() if busy.search(t)]
    print("perf_samples %d" % perf_total)
    print("lock_wait_perf_pct %s" % ("%.1f" % (100.0 * perf_lock / perf_total) if perf_total else "-"))
    print("yield_perf_pct %s" % yield_pct(theirs))
    print("busy_cpu_pct_median %s" % ("%.0f" % statistics.median(cpu) if cpu else "-"))


def yield_pct(flat):
    total = sum(flat.values())
    return "%.1f" % (100.0 * flat.get("sched_yield", 0) / total) if total else "-"


def compare(perf_path, profile_path, busy_regex, top, perf_seconds):
    ours, our_threads, our_lock, our_total, meta = our_profile(profile_path)
    # Only the target's threads that xgdbprof could see: perf -p follows the
    # same process, so the sets agree; no filter needed.
    theirs, perf_threads, perf_lock, perf_total = perf_profile(perf_path)
    p, q = shares(theirs), shares(ours)
    duration = meta.get("duration_actual_s") or 0
    busy = re.compile(busy_regex)
    busy_names = sorted(t for t in set(perf_threads) | set(our_threads) if busy.search(t))
    out = []
    put = lambda k, v: out.append("%s %s" % (k, v))
    put("perf_samples", perf_total)
    put("our_samples", sum(meta["samples_per_thread"].values()))
    put("overlap_pct", "%.1f" % overlap(p, q) if p and q else "-")
    # What a sampler without bias would reach with as many stacks as ours
    # (judge the overlap against this, not against 100%).
    stacks = meta.get("thread_samples") or sum(meta["samples_per_thread"].values())
    perfect = perfect_sampler_overlap(theirs, stacks)
    put("perfect_overlap_pct", "%.1f" % perfect if perfect is not None else "-")
    # Functions perf gives >= 5% that we put outside [perf/2, 2 perf], judged
    # only where our stack count makes 2x wider than the binomial bound at
    # 1e-4 (z 3.89: stacks >= 4 z^2 (1-p)/p, 1150 stacks at 5%, 242 at 20%).
    judged = [k for k in sorted(p) if p[k] >= 5 and stacks >= 4 * 3.89 ** 2 * (100 - p[k]) / p[k]]
    put("judged_2x", len(judged))
    put("off_2x", ",".join("%s:%.1f/%.1f" % (k.replace(" ", "_"), p[k], q.get(k, 0)) for k in judged
                           if not p[k] / 2 <= q.get(k, 0) <= 2 * p[k]) or "-")
    # The same without sched_yield in either profile (shares renormalized):
    # how much of the gap that one artefact is.
    p_rest = shares(Counter({k: v for k, v in theirs.items() if k != "sched_yield"}))
    q_rest = shares(Counter({k: v for k, v in ours.items() if k != "sched_yield"}))
    put("overlap_without_yield_pct", "%.1f" % overlap(p_rest, q_rest) if p_rest and q_rest else "-")
    put("lock_wait_perf_pct", "%.1f" % (100.0 * perf_lock / perf_total) if perf_total else "-")
    put("lock_wait_ours_pct", "%.1f" % (100.0 * our_lock / our_total) if our_total else "-")
    put("yield_perf_pct", yield_pct(theirs))
    put("yield_ours_pct", yield_pct(ours))
    for key in ("stop_mode", "frequency_achieved_hz", "stop_median_ms", "stop_p99_ms", "stopped_pct",
                "thread_stopped_max_pct", "held_median_ms", "held_p99_ms", "thread_held_max_pct",
                "thread_samples", "duration_actual_s", "threads"):
        value = meta.get(key)
        put(key, "-" if value is None else value)
    hz = [meta["samples_per_thread"].get(t, 0) / duration for t in busy_names] if duration else []
    put("busy_threads", ",".join(busy_names) or "-")
    put("busy_hz_min", "%.1f" % min(hz) if hz else "-")
    put("busy_hz_median", "%.1f" % statistics.median(hz) if hz else "-")
    # perf samples a thread only on a CPU: its rate over 499 Hz is the
    # thread's CPU share, the most our sampler can see of it running.
    perf_duration = perf_seconds or duration or 1
    cpu = [100.0 * perf_threads.get(t, 0) / (499.0 * perf_duration) for t in busy_names]
    put("busy_cpu_pct_median", "%.0f" % statistics.median(cpu) if cpu else "-")
    print("\n".join(out))
    if p and q:
        print("largest differences (points): " + "; ".join(
            "%s perf %.1f%% ours %.1f%%" % (k, a, b) for k, a, b in largest_differences(p, q)))
    if top:
        print("function self time                                              perf    ours")
        names = sorted(set(p) | set(q), key=lambda k: -max(p.get(k, 0), q.get(k, 0)))[:top]
        for name in names:
            print("  %-60.60s %6.1f%% %6.1f%%" % (name, p.get(name, 0), q.get(name, 0)))


def table(path):
    results = defaultdict(lambda: defaultdict(list))
    modes = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 3)
            if len(parts) < 4:
                continue
            _, mode, key, value = parts
            if mode not in modes:
                modes.append(mode)
            results[mode][key].append(value)

    def numbers(mode, key):
        """The rounds' values of key that are numbers ("-" and the like left out)."""
        values = []
        for v in results[mode].get(key, []):
            try:
                values.append(float(v))
            except ValueError:
                pass
        return values

    def med(mode, key, fmt="%.1f"):
        values = numbers(mode, key)
        return fmt % statistics.median(values) if values else "-"

    def span(mode, key, fmt="%.1f"):
        """min-max over rounds (the spread, on a shared machine)."""
        values = numbers(mode, key)
        if not values:
            return "-"
        if len(values) == 1:
            return fmt % values[0]
        return (fmt + "-" + fmt) % (min(values), max(values))

    def text(mode, key):
        values = results[mode].get(key, [])
        return values[-1] if values else "-"

    def loss(mode):
        base, ops = med("baseline", "ops_per_s", "%f"), med(mode, "ops_per_s", "%f")
        if mode == "baseline" or "-" in (base, ops) or float(base) <= 0:
            return "-"
        return "%.1f%%" % (100.0 * (1 - float(ops) / float(base)))

    def loss_span(mode):
        # Each round's loss against the same round's baseline.
        base = results["baseline"].get("ops_per_s", [])
        ops = results[mode].get("ops_per_s", [])
        losses = []
        for b, o in zip(base, ops):
            try:
                if float(b) > 0:
                    losses.append(100.0 * (1 - float(o) / float(b)))
            except ValueError:
                pass
        return "%.1f-%.1f%%" % (min(losses), max(losses)) if losses else "-"

    rounds = max((len(results[m].get("ops_per_s", [])) for m in modes), default=0)
    columns = ["mode", "stop mode", "overlap", "w/o yield", "lock wait perf/ours", "sched_yield perf/ours", "Hz/busy thread min/med",
               "busy CPU", "stop med/p99 ms", "held med/p99 ms", "stopped", "thread max stopped", "thread max held", "thread stacks", "throughput", "loss"]
    rows = []
    for mode in modes:
        rows.append([
            mode,
            text(mode, "stop_mode"),
            med(mode, "overlap_pct") + ("%" if med(mode, "overlap_pct") != "-" else ""),
            med(mode, "overlap_without_yield_pct") + ("%" if med(mode, "overlap_without_yield_pct") != "-" else ""),
            "%s%% / %s" % (med(mode, "lock_wait_perf_pct"),
                           med(mode, "lock_wait_ours_pct") + "%" if med(mode, "lock_wait_ours_pct") != "-" else "-")
            if med(mode, "lock_wait_perf_pct") != "-" else "-",
            "%s%% / %s" % (med(mode, "yield_perf_pct"),
                           med(mode, "yield_ours_pct") + "%" if med(mode, "yield_ours_pct") != "-" else "-")
            if med(mode, "yield_perf_pct") != "-" else "-",
            "%s / %s" % (med(mode, "busy_hz_min"), med(mode, "busy_hz_median")) if mode not in ("baseline", "perf-only") else "-",
            med(mode, "busy_cpu_pct_median", "%.0f") + ("%" if med(mode, "busy_cpu_pct_median") != "-" else ""),
            "%s / %s" % (med(mode, "stop_median_ms", "%.2f"), med(mode, "stop_p99_ms", "%.2f"))
            if mode not in ("baseline", "perf-only") else "-",
            "%s / %s" % (med(mode, "held_median_ms", "%.2f"), med(mode, "held_p99_ms", "%.2f"))
            if mode not in ("baseline", "perf-only") else "-",
            med(mode, "stopped_pct") + ("%" if med(mode, "stopped_pct") != "-" else ""),
            med(mode, "thread_stopped_max_pct") + ("%" if med(mode, "thread_stopped_max_pct") != "-" else ""),
            med(mode, "thread_held_max_pct") + ("%" if med(mode, "thread_held_max_pct") != "-" else ""),
            med(mode, "thread_samples", "%.0f"),
            med(mode, "ops_per_s", "%.0f") + "/s",
            loss(mode),
        ])
    widths = [max(len(r[i]) for r in rows + [columns]) for i in range(len(columns))]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    print("medians over %d round(s)" % rounds)
    print(line(columns))
    for r in rows:
        print(line(r))
    if rounds > 1:
        # The spread over rounds of what the rate work is judged by.
        print("ranges over rounds (min-max):")
        for mode in modes:
            if mode in ("baseline", "perf-only"):
                continue
            print("  %-14s overlap %s%%  Hz/busy thread (min) %s  stop median %s ms  p99 %s ms  thread max stopped %s%%  loss %s" % (
                mode, span(mode, "overlap_pct"), span(mode, "busy_hz_min"), span(mode, "stop_median_ms", "%.2f"),
                span(mode, "stop_p99_ms", "%.2f"), span(mode, "thread_stopped_max_pct"), loss_span(mode)))
    print("overlap against a perfect sampler with as many stacks (median, min-max over rounds):")
    for mode in modes:
        if mode in ("baseline", "perf-only") or not numbers(mode, "perfect_overlap_pct"):
            continue
        print("  %-14s overlap %s (%s)  perfect sampler %s (%s)  functions outside 2x of perf's >= 5%%: %s" % (
            mode, med(mode, "overlap_pct"), span(mode, "overlap_pct"), med(mode, "perfect_overlap_pct"),
            span(mode, "perfect_overlap_pct"),
            "; ".join(v for v in results[mode].get("off_2x", []) if v != "-") or "none"))
    if rounds > 1:
        # Round by round: a fixture's regime (the demo runs at two speeds,
        # its workers' shared counter cheap or contended) shows in the
        # throughput beside the overlap.
        print("round by round (overlap at the fixture's throughput; perf alone: its own throughput):")
        for mode in modes:
            overlaps = results[mode].get("overlap_pct", [])
            ops = results[mode.split("~")[0]].get("ops_per_s", [])
            if not overlaps:
                continue
            cells = []
            for i, o in enumerate(overlaps):
                try:
                    cell = "%.1f%%" % float(o)
                except ValueError:
                    cell = o
                if i < len(ops) and ops[i] not in ("-", ""):
                    cell += " at %s/s" % ops[i]
                if "~perf-alone" in mode:
                    base = results["perf-only"].get("ops_per_s", [])
                    if i < len(base):
                        cell += " (perf alone at %s/s)" % base[i]
                cells.append(cell)
            print("  %-14s %s" % (mode, "; ".join(cells)))
    for mode in modes:
        headline = results[mode].get("headline")
        if headline:
            # the #1 path's first frame, each round: the same in every round?
            firsts = [re.sub(r"^#1 hottest code path \([^)]*\): ", "", h) for h in headline]
            print("%s headline: %s (#1 the same in %d of %d rounds)" % (
                mode, headline[-1], max(firsts.count(f) for f in firsts), len(firsts)))


def main(argv):
    if len(argv) >= 3 and argv[0] in ("compare", "perf"):
        busy, top, seconds = r"^worker-", 0, 0.0
        rest = argv[3:] if argv[0] == "compare" else argv[2:]
        while rest:
            if rest[0] == "--busy" and len(rest) > 1:
                busy, rest = rest[1], rest[2:]
            elif rest[0] == "--top" and len(rest) > 1:
                top, rest = int(rest[1]), rest[2:]
            elif rest[0] == "--perf-seconds" and len(rest) > 1:
                seconds, rest = float(rest[1]), rest[2:]
            else:
                sys.exit("fidelity.py: unknown option %s" % rest[0])
        if argv[0] == "compare":
            compare(argv[1], argv[2], busy, top, seconds)
        else:
            perf_only(argv[1], seconds or 1.0, busy)
    elif len(argv) == 2 and argv[0] == "table":
        table(argv[1])
    elif len(argv) >= 2 and argv[0] == "normalize":
        for name in argv[1:]:
            print(normalize(name))
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
