#!/usr/bin/env python3
"""wire_phases: servelab's per-request timing columns against a packet capture.

Reads a pcap written by `tcpdump -i lo -w FILE port P` (micro- or nanosecond
stamps), a run's requests.csv and its meta.json, and prints, for each timing
column the rows have, how far the row is from what the wire saw:

  sent_ms         the client's SYN (a new connection only)
  connect_ms      SYN to the client's ACK of the SYN-ACK; 0 on a reused one
  written_ms      the request's last data segment, client to server
  first_byte_ms   the response's first data segment, server to client
  first_token_ms  the first server segment with a `data:` event carrying text

A TCP connection is tied to a request by the X-Request-Id header servelab
sends (req-N); several requests on one connection are told apart by that
header too. Capture stamps are CLOCK_REALTIME: with meta.json's t0_utc
(the run's t=0 on that clock, to the microsecond) t_pcap - t0 compares with a column
directly; either way the figures after removing the median offset are shown
as well, so a constant clock offset and a real spread can be told apart.

Standard library only (the bench machines have no pip packages).
  python3 bench/wire_phases.py CAPTURE.pcap SERVER_PORT RUN_DIR [LIMIT_MS]
Exit status 1 when a column fails its main check, 2 on bad input."""

import csv
import datetime
import json
import re
import statistics
import struct
import sys
from decimal import Decimal

# ---- pcap ----

LINK_ETHERNET, LINK_SLL, LINK_SLL2 = 1, 113, 276


def pcap_packets(path):
    """(stamp in ns, link type, frame bytes) for every record of the file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file (too short)")
    magic = data[:4]
    known = {
        b"\xd4\xc3\xb2\xa1": ("<", 1000),
        b"\xa1\xb2\xc3\xd4": (">", 1000),
        b"\x4d\x3c\xb2\xa1": ("<", 1),
        b"\xa1\xb2\x3c\x4d": (">", 1),
    }
    if magic not in known:
        raise ValueError(f"{path}: not a pcap file (pcapng is not read; use tcpdump -w)")
    order, frac_ns = known[magic]
    link = struct.unpack(order + "I", data[20:24])[0]
    at = 24
    while at + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack(order + "IIII", data[at : at + 16])
        at += 16
        yield sec * 1_000_000_000 + frac * frac_ns, link, data[at : at + incl]
        at += incl


def tcp_segment(link, frame):
    """(src port, dst port, flags, payload) of an IPv4 TCP frame, else None."""
    if link == LINK_ETHERNET:
        ethertype, ip = struct.unpack(">H", frame[12:14])[0], 14
    elif link == LINK_SLL:
        ethertype, ip = struct.unpack(">H", frame[14:16])[0], 16
    elif link == LINK_SLL2:
        ethertype, ip = struct.unpack(">H", frame[0:2])[0], 20
    else:
        raise ValueError(f"link type {link} is not read")
    if ethertype != 0x0800 or len(frame) < ip + 20 or frame[ip + 9] != 6:
        return None
    ip_len = (frame[ip] & 0x0F) * 4
    total = struct.unpack(">H", frame[ip + 2 : ip + 4])[0]
    tcp = ip + ip_len
    sport, dport = struct.unpack(">HH", frame[tcp : tcp + 4])
    tcp_len = (frame[tcp + 12] >> 4) * 4
    flags = frame[tcp + 13]
    return sport, dport, flags, frame[tcp + tcp_len : ip + total]


SYN, ACK = 0x02, 0x10

# ---- connections and requests ----

REQUEST_ID = re.compile(rb"\r\nX-Request-Id:[ \t]*([^\r\n]+)", re.IGNORECASE)
# an SSE event whose text or delta content is not empty
CONTENT_EVENT = re.compile(rb'data: \{.*?"(?:text|content)":"[^"]', re.DOTALL)


def new_request(req_id, conn):
    """A request seen on the wire; the handshake belongs to a connection's first."""
    first = not conn["requests"]
    req = {
        "id": req_id,
        "syn": conn["syn"] if first else None,
        "connect": 0 if not first else (
            conn["ack"] - conn["syn"] if conn["ack"] is not None else None),
        "written": None,
        "first_byte": None,
        "first_token": None,
        "server_segments": [],  # every response segment's stamp
    }
    conn["requests"].append(req)
    return req


def on_client_data(conn, ts, payload):
    m = REQUEST_ID.search(payload)
    if m:
        conn["current"] = new_request(m.group(1).strip().decode("ascii", "replace"), conn)
    req = conn["current"]
    if req and req["first_byte"] is None:  # still the request's own bytes
        req["written"] = ts


def on_server_data(conn, ts, payload):
    req = conn["current"]
    if not req:
        return
    req["server_segments"].append(ts)
    if req["first_byte"] is None:
        req["first_byte"] = ts
    if req["first_token"] is None and CONTENT_EVENT.search(payload):
        req["first_token"] = ts


def wire_requests(path, server_port):
    """Every request the capture shows, by id; and how many connections it had."""
    open_conns, done = {}, []
    for ts, link, frame in pcap_packets(path):
        seg = tcp_segment(link, frame)
        if not seg:
            continue
        sport, dport, flags, payload = seg
        from_client = dport == server_port
        client_port = sport if from_client else dport
        if from_client and flags & SYN and not flags & ACK:
            if client_port in open_conns:  # the port came round again
                done.append(open_conns[client_port])
            open_conns[client_port] = {"syn": ts, "ack": None, "synack": False,
                                       "requests": [], "current": None}
            continue
        conn = open_conns.get(client_port)
        if conn is None:
            continue  # began before the capture
        if not from_client and flags & SYN:
            conn["synack"] = True
        elif from_client and conn["synack"] and conn["ack"] is None and flags & ACK:
            conn["ack"] = ts
        if payload:
            (on_client_data if from_client else on_server_data)(conn, ts, payload)
    done.extend(open_conns.values())
    by_id = {}
    for conn in done:
        for req in conn["requests"]:
            by_id[req["id"]] = req
    return by_id, len(done)


# ---- the run's side ----


def find_key(obj, key):
    """The first value under `key` anywhere in a JSON document, else None."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        values = obj.values()
    elif isinstance(obj, list):
        values = obj
    else:
        return None
    for v in values:
        found = find_key(v, key)
        if found is not None:
            return found
    return None


def start_ns(run_dir):
    """meta.json's t0_utc ("2026-12-01T10:50:58.123456Z", the wall clock at
    the run's t=0) in integer ns since the epoch (kept exact), else None."""
    try:
        with open(f"{run_dir}/meta.json") as f:
            meta = json.load(f)
    except (OSError, ValueError):
        return None
    v = meta.get("t0_utc")
    if not isinstance(v, str) or not v.endswith("Z") or "." not in v:
        return None
    whole, frac = v[:-1].split(".", 1)
    try:
        t = datetime.datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(
            tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
    return int(t.timestamp()) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])


# (column, what the wire saw, the wire field, whether it is an offset from
# t=0, whether it is judged). sent_ms is shown, not judged: it is when the
# client started the request, before it built the body and the socket, so
# it precedes the SYN by the client's own work (which written_ms - sent_ms
# - connect_ms in the rows accounts for).
CHECKS = [
    ("sent_ms", "SYN", "syn", True, False),
    ("connect_ms", "SYN to handshake ACK", "connect", False, True),
    ("written_ms", "last request segment", "written", True, True),
    ("first_byte_ms", "first response segment", "first_byte", True, True),
    ("first_token_ms", "first content event", "first_token", True, True),
]


def pairs(rows, wire, column, field, is_offset, t0_ns):
    """(request id, row value, wire value), values in ms, for every row both
    sides have. Offsets
    are relative to t0_ns, or to the capture's epoch when t0_ns is None
    (then only the aligned figures mean anything)."""
    out = []
    for row in rows:
        req = wire.get(row.get("request_id", ""))
        text = row.get(column, "")
        if req is None or req[field] is None or text in ("", "nan"):
            continue
        v = req[field]
        if is_offset:
            v -= t0_ns or 0
        out.append((row["request_id"], float(text), v / 1e6))
    return out


def pct(sorted_vals, p):
    """Nearest-rank percentile."""
    k = max(0, min(len(sorted_vals) - 1, -(-len(sorted_vals) * p // 100) - 1))
    return sorted_vals[int(k)]


def report_line(label, diffs, limit_ms, note, judged=True):
    """One line for (request id, row - wire) pairs; whether p99 is in the limit."""
    errs = sorted(abs(d) for _, d in diffs)
    worst_id, worst = max(diffs, key=lambda x: abs(x[1]))
    p99 = pct(errs, 99)
    verdict = ("PASS" if p99 < limit_ms else "FAIL") if judged else "info"
    print(f"{label:<50} {len(errs):>7} {pct(errs, 50):>9.4f} {p99:>9.4f} {errs[-1]:>9.4f}"
          f"  {verdict}  worst {worst_id} ({worst:+.4f}) {note}")
    return verdict == "PASS"


def stamped_late(wire, field, diffs, limit_ms):
    """Of the rows over the limit, (how many, how many carry the arrival of a
    later segment of their own response): the mark of a read that took
    several segments at once and stamped them all with the last one's time."""
    over = late = 0
    for rid, d in diffs:
        if abs(d) < limit_ms:
            continue
        over += 1
        req = wire[rid]
        at = req[field] + d * 1e6
        if any(t > req[field] and abs(t - at) < limit_ms * 1e6 for t in req["server_segments"]):
            late += 1
    return over, late


def check_column(column, what, field, diffs, absolute, wire, limit_ms, judged):
    """The column's lines; returns whether its main one passed."""
    offset = statistics.median(d for _, d in diffs)
    aligned = [(i, d - offset) for i, d in diffs]
    main = True
    if absolute:
        main = report_line(f"{column} vs {what}", diffs, limit_ms, "", judged)
    note = f"(median row - wire {offset:+.4f} ms)" if absolute else "(clocks differ: median removed)"
    passed = report_line(f"{column} vs {what}, aligned", aligned, limit_ms, note, judged)
    if field in ("first_byte", "first_token"):
        over, late = stamped_late(wire, field, diffs if absolute else aligned, limit_ms)
        if over:
            print(f"  {late} of the {over} rows over {limit_ms:g} ms carry the arrival of a later "
                  "segment of their response (segments read together, stamped with the last)")
    return main if absolute else passed


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    capture, server_port, run_dir = argv[1], int(argv[2]), argv[3]
    limit_ms = float(argv[4]) if len(argv) == 5 else 0.1
    wire, n_conns = wire_requests(capture, server_port)
    with open(f"{run_dir}/requests.csv", newline="") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames or [], list(reader)
    t0 = start_ns(run_dir)
    matched = sum(1 for r in rows if r.get("request_id") in wire)
    print(f"wire_phases: {len(rows)} rows, {n_conns} connections and {len(wire)} requests "
          f"in the capture, {matched} rows matched by X-Request-Id")
    print("t=0: " + (f"meta.json t0_utc = {Decimal(t0) / 10**9} s since the epoch" if t0 is not None else
                     "meta.json has no t0_utc: offsets are compared after alignment only"))
    print(f"{'column vs capture':<50} {'matched':>7} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}"
          f"  p99 < {limit_ms:g} ms")
    ok = True
    for column, what, field, is_offset, judged in CHECKS:
        if column not in header:
            print(f"{column:<50} (not in requests.csv)")
            continue
        got = pairs(rows, wire, column, field, is_offset, t0)
        if not got:
            print(f"{column:<50} {0:>7}  (no row matched the capture)")
            ok = False
            continue
        absolute = t0 is not None or not is_offset
        diffs = [(i, r - w) for i, r, w in got]
        passed = check_column(column, what, field, diffs, absolute, wire, limit_ms, judged)
        ok &= passed or not judged
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, ValueError) as e:
        print(f"wire_phases: {e}", file=sys.stderr)
        sys.exit(2)
