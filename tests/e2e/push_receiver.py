#!/usr/bin/env python3
"""A profile backend for the push tests: Pyroscope's HTTP ingest API,
POST /ingest, checked against its documentation and recorded.

    push_receiver.py DIR [PORT]

Listens on 127.0.0.1 (PORT, default 0 = any; the port chosen is written
to DIR/port). Reads DIR/mode before every request:
    ok        answer 200 (default)
    503       answer 503 Service Unavailable
    400       answer 400 Bad Request
    hang      read the request, never answer (the client times out)
    slow      read the body one byte a second
    ok-then-slow N   answer the first N requests 200, then as slow
    delay S   take the request (recorded as accepted), then wait S seconds
              before answering 200: a client killed meanwhile never hears
              that the backend has it
Every request is checked as the API documents it: POST /ingest; `name`
an application name with a {key=value,...} label set; `from` and `until`
Unix seconds, from <= until; format=pprof; spyName=hearth; units samples
(with a sampleRate in Hz), nanoseconds, or objects (a count of memory
events: aggregationType=sum, the spelling the server reads); a gzip'd
body of the length given. A request that breaks it is answered 422 and written to
DIR/invalid.log. A request answered 200 or 400 is written to
DIR/accepted.tsv or DIR/rejected.tsv (one line: sequence, service,
from, until, units, sampleRate, labels, body file, whether the
Authorization header was EXPECT_AUTH, the X-Scope-OrgID header), its
body to DIR/bodies/SEQ.pb.gz. Requests read but not answered 2xx/400 are
counted in DIR/failed.log (one line each, with the mode).
"""
import http.server
import os
import re
import sys
import threading
import time
import urllib.parse

DIR = sys.argv[1]
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
EXPECT_AUTH = os.environ.get("EXPECT_AUTH")
LOCK = threading.Lock()
STATE = {"seq": 0, "answered": 0}
NAME_RE = re.compile(r"^([A-Za-z0-9_./-]+)\{(.*)\}$")
LABEL_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def mode():
    try:
        with open(os.path.join(DIR, "mode")) as f:
            return f.read().split()
    except OSError:
        return ["ok"]


def append(name, line):
    with LOCK:
        with open(os.path.join(DIR, name), "a") as f:
            f.write(line + "\n")


def check(q, body, headers):
    """The reason the request breaks the documented API, or None."""
    for k in ("name", "from", "until", "format", "spyName", "units"):
        if len(q.get(k, [])) != 1:
            return "query parameter %s missing or repeated" % k
    m = NAME_RE.match(q["name"][0])
    if not m:
        return "name %r is not app{labels}" % q["name"][0]
    labels = {}
    if m.group(2):
        for pair in m.group(2).split(","):
            k, eq, v = pair.partition("=")
            if not eq or not LABEL_KEY_RE.match(k) or not v or k in labels:
                return "bad label %r" % pair
            labels[k] = v
    for k in ("hostname", "hearth_version"):
        if k not in labels:
            return "label %s missing" % k
    try:
        frm, until = int(q["from"][0]), int(q["until"][0])
    except ValueError:
        return "from/until are not Unix seconds"
    if not (1500000000 < frm <= until < 4000000000):
        return "from %d until %d out of order or range" % (frm, until)
    if q["format"][0] != "pprof" or q["spyName"][0] != "hearth":
        return "format/spyName wrong"
    units = q["units"][0]
    if units == "samples":
        if len(q.get("sampleRate", [])) != 1 or not q["sampleRate"][0].isdigit() \
                or int(q["sampleRate"][0]) <= 0:
            return "on-CPU profile without a sampleRate in Hz"
    elif units == "objects":
        if q.get("aggregationType") != ["sum"] or "sampleRate" in q:
            return "objects profile without aggregationType=sum, or with a sampleRate"
    elif units != "nanoseconds":
        return "units %r" % units
    if body[:2] != b"\x1f\x8b":
        return "body is not gzip'd"
    if headers.get("Content-Type") != "application/octet-stream":
        return "Content-Type %r" % headers.get("Content-Type")
    return (m.group(1), labels, frm, until, units, q.get("sampleRate", [""])[0])


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, text=b""):
        self.send_response(code)
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def read_body(self, slow):
        n = int(self.headers.get("Content-Length", "-1"))
        if n < 0:
            return None
        if not slow:
            return self.rfile.read(n)
        got = b""
        while len(got) < n:
            b = self.rfile.read(1)
            if not b:
                return None
            got += b
            time.sleep(1)
        return got

    def do_POST(self):
        md = mode()
        with LOCK:
            STATE["seq"] += 1
            seq = STATE["seq"]
            if md[0] == "ok-then-slow" and STATE["answered"] >= int(md[1]):
                md = ["slow"]
            elif md[0] == "ok-then-slow":
                md = ["ok"]
        url = urllib.parse.urlsplit(self.path)
        body = self.read_body(md[0] == "slow")
        if body is None:
            append("failed.log", "%d %s body-cut" % (seq, md[0]))
            self.close_connection = True
            return
        if url.path != "/ingest":
            append("invalid.log", "%d path %s" % (seq, url.path))
            return self.answer(404)
        why = check(urllib.parse.parse_qs(url.query, keep_blank_values=True), body, self.headers)
        if isinstance(why, str):
            append("invalid.log", "%d %s" % (seq, why))
            return self.answer(422, why.encode())
        if md[0] == "hang":
            append("failed.log", "%d hang" % seq)
            time.sleep(3600)
            return
        if md[0] == "503":
            append("failed.log", "%d 503" % seq)
            return self.answer(503, b"ingester unavailable")
        service, labels, frm, until, units, rate = why
        path = os.path.join(DIR, "bodies", "%d.pb.gz" % seq)
        with open(path, "wb") as f:
            f.write(body)
        auth = self.headers.get("Authorization")
        line = "\t".join([str(seq), service, str(frm), str(until), units, rate,
                          ",".join("%s=%s" % kv for kv in sorted(labels.items())), path,
                          "auth-ok" if auth == EXPECT_AUTH else "auth-BAD:%s" % auth,
                          self.headers.get("X-Scope-OrgID", "")])
        if md[0] == "400":
            append("rejected.tsv", line)
            return self.answer(400, b"profile rejected by this test")
        with LOCK:
            STATE["answered"] += 1
        append("accepted.tsv", line)
        if md[0] == "delay":
            time.sleep(float(md[1]))
        self.answer(200)


def main():
    os.makedirs(os.path.join(DIR, "bodies"), exist_ok=True)
    # A restarted backend numbers on from where the last one stopped.
    for name in ("accepted.tsv", "rejected.tsv", "failed.log", "invalid.log"):
        try:
            with open(os.path.join(DIR, name)) as f:
                for line in f:
                    STATE["seq"] = max(STATE["seq"], int(line.split()[0]))
        except OSError:
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    srv.daemon_threads = True
    with open(os.path.join(DIR, "port.tmp"), "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
    srv.serve_forever()


main()
