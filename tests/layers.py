#!/usr/bin/env python3
"""tests/layers.py — the layer rule of docs/design.md, checked on the build.

The diagram in docs/design.md ("## The layers") says which folder of src/
may use which. This reads it and holds every folder to it, two ways:

  includes  every `#include "X/..."` (and mi's "mi_*.h") in src/F/ names F,
            util/ or a folder F has an arrow to;
  symbols   every symbol a folder's library leaves undefined (`nm -u`) and
            another of our libraries defines is defined in F's own
            arrows' libraries (or util's).

Arrows are direct: a folder that calls into a folder two arrows away must
say so in the diagram. An arrow nothing uses is drift too and fails.
Before all that it proves it can fail: with one arrow struck from the
diagram, the same check must report that arrow's uses.

usage: layers.py SRCDIR BUILDDIR     prints TAP-like ok / not ok lines
"""
import os
import re
import subprocess
import sys

SRC, BUILD = sys.argv[1], sys.argv[2]


# Folders drawn with "everything below": their arrows are a permission,
# not a claim that each is used. Folders drawn with "nothing of ours" may
# not use util/ either (mi/, the standalone client; arch/).
everything = set()
self_contained = set()


def read_diagram(path):
    """{folder: set(folders it may use)} from the first fenced block under
    "## The layers". "everything below" means every folder on later lines;
    util/ ("used by all") may be used by every folder."""
    text = open(path, encoding="utf-8").read()
    section = text.split("## The layers", 1)[1]
    block = section.split("```", 2)[1]
    rows = []
    for line in block.splitlines():
        m = re.match(r"^(\w+)/\s", line)
        if m:
            rows.append((m.group(1), line))
    names = [name for name, _ in rows]
    arrows = {}
    for i, (name, line) in enumerate(rows):
        used = set()
        if "►" in line:
            rhs = line.split("►", 1)[1]
            if "everything below" in rhs:
                used.update(names[i + 1:])
            used.update(re.findall(r"(\w+)/", rhs))
        arrows[name] = used - {name}
        if "everything below" in line:
            everything.add(name)
        if "nothing of ours" in line:
            self_contained.add(name)
    return arrows


def library_of(folder):
    if folder == "mi":
        return os.path.join(BUILD, "libmi.a")
    return os.path.join(BUILD, "src", folder, "lib%s.a" % folder)


def nm(args, lib):
    out = subprocess.run(["nm"] + args + [lib], check=True, capture_output=True, text=True).stdout
    return out


def symbol_owners(folders):
    owner = {}
    for f in folders:
        for line in nm(["-g", "--defined-only"], library_of(f)).splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRVWC":
                owner.setdefault(parts[2], f)
    return owner


def undefined(folder):
    return {line.split()[-1] for line in nm(["-u"], library_of(folder)).splitlines()
            if line.strip() and not line.endswith(":")}


def source_files(folder):
    top = os.path.join(SRC, "mi" if folder == "mi" else os.path.join("src", folder))
    for name in sorted(os.listdir(top)):
        if name.endswith((".c", ".h")):
            yield os.path.join(top, name)


def uses(folders):
    """[(from, to, where)]: every include and every call across folders."""
    found = []
    for f in folders:
        for path in source_files(f):
            rel = os.path.relpath(path, SRC)
            for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                to = "mi" if re.match(r"mi_\w+\.h$", inc) and f != "mi" else inc.split("/")[0]
                if to in folders and to != f:
                    found.append((f, to, "%s:%d includes %s" % (rel, n, inc)))
    owner = symbol_owners(folders)
    for f in folders:
        for sym in sorted(undefined(f)):
            to = owner.get(sym)
            if to and to != f:
                found.append((f, to, "%s calls %s" % (os.path.basename(library_of(f)), sym)))
    return found


def allowed(arrows, f):
    """What f may use: its arrows, and util/ ("used by all") unless f is
    drawn as using nothing of ours."""
    return arrows.get(f, set()) | ({"util"} if f not in self_contained else set())


def violations(arrows, found):
    return [(f, to, where) for f, to, where in found if to not in allowed(arrows, f)]


def main():
    arrows = read_diagram(os.path.join(SRC, "docs", "design.md"))
    on_disk = sorted(d for d in os.listdir(os.path.join(SRC, "src"))
                     if os.path.isdir(os.path.join(SRC, "src", d))) + ["mi"]
    failures = 0

    def check(ok, what, details=()):
        nonlocal failures
        print("%s - %s" % ("ok" if ok else "not ok", what))
        for d in details:
            print("    " + d)
        failures += 0 if ok else 1

    missing = [f for f in on_disk if f not in arrows]
    check(not missing, "every folder of src/ and mi/ is in docs/design.md's diagram",
          ["not in the diagram: %s/" % f for f in missing])
    folders = [f for f in on_disk if f in arrows]
    found = uses(folders)

    # The check must be able to fail: strike one arrow that is used and
    # see its uses reported.
    used_pairs = sorted({(f, to) for f, to, _ in found if to in arrows.get(f, ())})
    if used_pairs:
        f, to = ("stacks", "session") if ("stacks", "session") in used_pairs else used_pairs[0]
        struck = {k: set(v) for k, v in arrows.items()}
        struck[f].discard(to)
        seen = [v for v in violations(struck, found) if v[:2] == (f, to)]
        check(bool(seen), "with %s/ -> %s/ struck from the diagram, the check reports its %d uses"
              % (f, to, len(seen)))

    bad = violations(arrows, found)
    for f in folders:
        mine = [where for g, to, where in bad if g == f]
        may = " ".join(sorted(a + "/" for a in allowed(arrows, f))) or "nothing of ours"
        check(not mine, "%s/ uses only what the diagram allows (%s)" % (f, may),
              ["%s (%s/ -> %s/ is not an arrow)" % (where, g, to) for g, to, where in bad if g == f][:20])

    for f in (f for f in folders if f not in everything):
        unused = sorted(a for a in arrows[f] if a in folders and not any(g == f and to == a for g, to, _ in found))
        check(not unused, "every arrow from %s/ in the diagram is used" % f,
              ["%s/ -> %s/ is drawn but nothing of %s/ includes or calls %s/" % (f, a, f, a) for a in unused])

    print("%d check(s) failed" % failures if failures else "all layer checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
