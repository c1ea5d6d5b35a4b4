"""Checks of --json and --prometheus output (run by json_output.sh): each
parses with a real parser (python3's json module; prometheus_client's
text parser) and holds the same figures as the text of the same command.

Usage: python3 json_output.py CHECK ARGS...; prints what it compared and
exits 1 on the first difference.
  record JSON STDERR          record --json against its summary lines
  status HEARTH SOCKET        status --json against status, taken when
                              the figures stood still between two --json
  prometheus HEARTH SOCKET    status --prometheus against status --json
  prometheus-down HEARTH SOCKET  a socket nobody answers: hearthd_up 0
  marks HEARTH SOCKET         marks --json against marks
  diff HEARTH ARGS...         diff --json ARGS against diff ARGS
"""
import json
import re
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(argv, ok=(0,)):
    r = subprocess.run(argv, capture_output=True)
    if r.returncode not in ok:
        fail(f"{' '.join(argv)} exited {r.returncode}: {r.stderr.decode(errors='replace')}")
    return r.stdout.decode("utf-8")


def documented(what, obj):
    """Every key of @obj (nested too) is named in hearth(1)'s JSON OUTPUT."""
    man = open("man/hearth.1", encoding="utf-8").read()
    sec = man[man.index(".SH JSON OUTPUT"):]
    sec = sec[: sec.index("\n.SH ", 1)]
    named = set(re.findall(r"^\.B[IR]? ([a-z_]+)", sec, re.M))

    def keys(o):
        if isinstance(o, dict):
            for k, v in o.items():
                yield k
                yield from keys(v)
        elif isinstance(o, list):
            for v in o:
                yield from keys(v)
    missing = sorted(set(keys(obj)) - named)
    if missing:
        fail(f"{what}: hearth(1) JSON OUTPUT does not name {missing}")


def equal(what, text, js):
    if text != js:
        fail(f"{what}: the text says {text!r}, the JSON {js!r}")


def check_record(json_path, err_path):
    j = json.load(open(json_path, encoding="utf-8"))
    documented("record --json", j)
    err = open(err_path, encoding="utf-8", errors="replace").read()
    m = re.search(r"hearth: (\d+) on-CPU samples \((\d+) idle\), (\d+) off-CPU waits "
                  r"\(([\d.]+) s blocked\), (\d+) processes, ([\d.]+) s; drops: (\d+) stack, "
                  r"(\d+) map full, (\d+) events", err)
    if not m:
        fail(f"no summary line in: {err}")
    equal("samples", int(m[1]), j["samples"])
    equal("idle", int(m[2]), j["idle_samples"])
    equal("waits", int(m[3]), j["offcpu_waits"])
    equal("blocked", m[4], f"{j['offcpu_ns'] / 1e9:.3f}")
    equal("processes", int(m[5]), j["processes"])
    equal("duration", m[6], f"{j['duration_ns'] / 1e9:.2f}")
    equal("drops", [int(m[7]), int(m[8]), int(m[9])],
          [j["drops"]["stack"], j["drops"]["map_full"], j["drops"]["events"]])
    # A line per cause of drops there was, none for the others.
    causes = {"stack map collisions": "stack_collisions", "stack map full": "stack_map_full",
              "aggregation map full": "aggregation_map_full", "ring full": "ring_full",
              "over the copy budget": "copy_budget", "symbolization gave up": "unnamed"}
    said = {causes[c[2]]: int(c[1])
            for c in re.finditer(r"^hearth: drops: (\d+) ([a-z ]+?): ", err, re.M)}
    for key in causes.values():
        equal(f"drops {key}", said.get(key, 0), j["drops"][key])
    m = re.search(r"hearth: (\d+) stacks unwound with DWARF \(([\d.]+)% to the outermost "
                  r"frame, ([\d.]+) us each\), (\d+) waits reused an earlier unwind, (\d+) over", err)
    u = j["unwind"]
    if u["mode"] != "fp" and u["dwarf_unwinds"]:
        if not m:
            fail("no unwinding line for an unwinding run")
        equal("unwinds", int(m[1]), u["dwarf_unwinds"])
        equal("complete", m[2], f"{100 * u['complete'] / u['dwarf_unwinds']:.1f}")
        equal("unwind time", m[3], f"{u['unwind_ns'] / 1e3 / u['dwarf_unwinds']:.1f}")
        equal("reused", int(m[4]), u["reused"])
        equal("fallbacks", int(m[5]), u["fp_fallbacks"])
    if not j["written"] or j["samples"] <= 0:
        fail(f"record --json says written={j['written']}, samples={j['samples']}")
    print(f"record: {j['samples']} samples, {j['offcpu_waits']} waits, "
          f"{j['processes']} processes, unwind {u['mode']}: JSON = text")


# What the status text shows, and where: counters that only grow are
# compared as lying between two --json calls around the text's (the
# sampler keeps counting meanwhile); the rest (the modules held shrink
# when processes end) must equal one of them.
STATUS_TEXT = {
    "pid": r"^hearthd: +pid (\d+),",
    "windows": r"^windows stored: (\d+) of",
    "segments": r"^windows stored: .*, (\d+) segments,",
    "samples": r"^samples: +(\d+) on-CPU",
    "idle_samples": r"^samples: .*, (\d+) idle;",
    "offcpu_s": r"^samples: .*off-CPU ([\d.]+) s blocked",
    "drops": r"^drops: +(\d+)",
    "cpu_percent2": r"^own cost: +([\d.]+)% of one core",
    "symbol_modules": r"^symbols: +(\d+) modules cached",
    "symbol_evictions": r"^symbols: .*, (\d+) evicted",
    "clients": r"^clients: +(\d+)",
}
GROWING = {"windows", "segments", "samples", "idle_samples", "offcpu_s", "drops",
           "symbol_evictions"}


def status_json(hearth, sock):
    j = json.loads(run([hearth, "status", "--json", "--socket", sock]))
    j["offcpu_s"] = round(j["offcpu_ns"] / 1e9, 3)
    c = str(j["cpu_percent"])
    j["cpu_percent2"] = c[: c.index(".") + 3]
    return j


def check_status(hearth, sock):
    # The others change at a window's cut: two cuts between the calls on
    # a slow machine leave the text equal to neither; take another turn.
    for attempt in range(10):
        a = status_json(hearth, sock)
        text = run([hearth, "status", "--socket", sock])
        b = status_json(hearth, sock)
        moved = []
        for key, rx in STATUS_TEXT.items():
            m = re.search(rx, text, re.M)
            if not m:
                fail(f"status text lacks {key}: {text}")
            if key in GROWING:
                if not a[key] <= float(m[1]) <= b[key]:
                    fail(f"status {key}: the text says {m[1]}, the JSON before {a[key]} and after {b[key]}")
            elif m[1] not in (str(a[key]), str(b[key])):
                moved.append(f"{key}: the text says {m[1]}, the JSON {a[key]} and {b[key]}")
        if not moved:
            break
    else:
        fail(f"status: {'; '.join(moved)}")
    missing = {"uptime_ns", "window_ns", "store_bytes", "rss_bytes", "cpu_ns", "store_error",
               "windows_lost", "windows_held", "retention_bytes", "retention_age_ns",
               "last_window_end_ns", "store_error_message"} - set(a)
    if missing:
        fail(f"status --json lacks {sorted(missing)}")
    documented("status --json", {k: v for k, v in a.items() if k not in ("offcpu_s", "cpu_percent2")})
    if a["windows"] < 2 or a["samples"] <= 0:
        fail(f"status --json: {a['windows']} windows, {a['samples']} samples")
    print(f"status: {len(STATUS_TEXT)} figures agree with the text (turn {attempt + 1}); "
          f"{len(a) - 2} fields")


def prometheus(text):
    from prometheus_client.parser import text_string_to_metric_families
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[s.name] = (fam.type, s.value)
    return out


def check_prometheus(hearth, sock):
    a = json.loads(run([hearth, "status", "--json", "--socket", sock]))
    p = prometheus(run([hearth, "status", "--prometheus", "--socket", sock]))
    b = json.loads(run([hearth, "status", "--json", "--socket", sock]))
    growing = [("hearthd_samples_total", "samples", 1), ("hearthd_windows_stored", "windows", 1),
               ("hearthd_idle_samples_total", "idle_samples", 1),
               ("hearthd_offcpu_blocked_seconds_total", "offcpu_ns", 1e-9),
               ("hearthd_drops_total", "drops", 1), ("hearthd_cpu_seconds_total", "cpu_ns", 1e-9),
               ("hearthd_uptime_seconds", "uptime_ns", 1e-9)]
    fixed = [("hearthd_pid", "pid", 1), ("hearthd_window_seconds", "window_ns", 1e-9),
             ("hearthd_retention_bytes", "retention_bytes", 1),
             ("hearthd_retention_age_seconds", "retention_age_ns", 1e-9),
             ("hearthd_symbol_cache_limit_bytes", "symbol_cache_limit_bytes", 1)]
    for name, key, scale in growing + fixed:
        if name not in p:
            fail(f"no {name} in the Prometheus text")
        lo, hi = a[key] * scale, b[key] * scale
        if not lo - 1e-9 <= p[name][1] <= hi + 1e-9:
            fail(f"{name} is {p[name][1]}, the JSON says {lo} and {hi}")
    if p["hearthd_up"][1] != 1 or p["hearthd_samples_total"][0] != "counter":
        fail("hearthd_up is not 1, or hearthd_samples_total not a counter")
    print(f"prometheus: {len(p)} metrics parse; {len(growing) + len(fixed)} agree with the JSON")


def check_prometheus_down(hearth, sock):
    r = subprocess.run([hearth, "status", "--prometheus", "--socket", sock], capture_output=True)
    if r.returncode != 1:
        fail(f"status --prometheus with no hearthd exited {r.returncode}")
    p = prometheus(r.stdout.decode())
    if p != {"hearthd_up": ("gauge", 0.0)}:
        fail(f"with no hearthd the metrics are {p}")
    print("prometheus: hearthd_up 0 when hearthd does not answer")


def check_marks(hearth, sock):
    j = json.loads(run([hearth, "marks", "--json", "--socket", sock]))
    documented("marks --json", j)
    text = run([hearth, "marks", "--socket", sock]).splitlines()
    if len(j["marks"]) != len(text) or not text:
        fail(f"{len(j['marks'])} marks in the JSON, {len(text)} lines of text")
    for m, line in zip(j["marks"], text):
        want = f"{m['at']}  @{m['at_ns'] // 10**9}.{m['at_ns'] % 10**9 // 10**6:03d}  {m['name']}"
        equal("mark", line, want)
    print(f"marks: {len(text)} marks, JSON = text")


ROW = re.compile(r"^(.{40}) (.{7})% (.{8}) (.{7})% (.{8}) (.{8})pp   (.*)% -> (.*)%$")


def check_diff(hearth, args):
    j = json.loads(run([hearth, "diff", "--json"] + args))
    documented("diff --json", j)
    raw = subprocess.run([hearth, "diff"] + args, capture_output=True).stdout
    text = raw.decode("utf-8", errors="replace").splitlines()
    if j.get("mark"):
        m = re.match(r"mark (\S+) at .*: (\d+) windows before, (\d+) after", text.pop(0))
        equal("mark", [m[1], int(m[2]), int(m[3])],
              [j["mark"]["name"], j["before"]["windows"], j["after"]["windows"]])
        if text[0].startswith("(the after side"):
            text.pop(0)
    for side in ("before", "after"):
        m = re.match(rf"{side}: +(.*), total (.*)$", text.pop(0))
        if not m:
            fail(f"no {side} total line")
        equal(f"{side} name", m[1], j[side]["name"])
        if j["unit"] == "samples" and j[side]["total"] < 1000:
            equal(f"{side} total", m[2], f"{j[side]['total']} samples")
    text.pop(0)  # the header
    rows = [ROW.match(line) for line in text]
    if len(rows) != len(j["functions"]) or not all(rows):
        fail(f"{len(j['functions'])} functions in the JSON, rows: {text}")
    for f, r in zip(j["functions"], rows):
        got = [r[1].rstrip(), float(r[2]), float(r[4]), float(r[6]), float(r[7]), float(r[8])]
        want = [f["name"][:40].rstrip(), round(f["share_before"], 2), round(f["share_after"], 2),
                round(f["change_pp"], 2), round(f["self_share_before"], 2),
                round(f["self_share_after"], 2)]
        equal(f"row {f['name']!r}", got, want)
        if j["unit"] == "samples":
            for col, key in ((3, "before"), (5, "after")):
                if f[key] < 1000:
                    equal(f"{f['name']!r} {key}", r[col].strip(), str(f[key]))
        tb, ta = j["before"]["total"], j["after"]["total"]
        if abs(100 * f["before"] / tb - f["share_before"]) > 1e-6 or \
           abs(100 * f["after"] / ta - f["share_after"]) > 1e-6:
            fail(f"{f['name']!r}: shares are not value over total")
    print(f"diff: {len(rows)} functions, totals {j['before']['total']} and "
          f"{j['after']['total']} {j['unit']}: JSON = text")


check, args = sys.argv[1], sys.argv[2:]
{"record": lambda: check_record(*args),
 "status": lambda: check_status(*args),
 "prometheus": lambda: check_prometheus(*args),
 "prometheus-down": lambda: check_prometheus_down(*args),
 "marks": lambda: check_marks(*args),
 "diff": lambda: check_diff(args[0], args[1:])}[check]()
