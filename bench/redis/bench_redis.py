"""amq-redis.so throughput and memory, against Redis's own SET/GET in the
same run and RedisBloom's documented bits per item.

Throughput: redis-benchmark against one server with the module: SET, GET,
BF.ADD, BF.EXISTS (random items from a 10^6 range, a filter reserved for
them) at 1 and 50 clients, without and with pipelining (16). The ratio
BF.ADD / SET and BF.EXISTS / GET is the speed claim; both sides run in the
same server, the same run, the same machine.

Memory: MEMORY USAGE of a key holding N items, in bits per item, for BF and
CF (RedisBloom's commands) and for amq's types through AMQ.*, at eps = 1%
and 0.1%, with the false-positive rate measured on 10^5 items never added.
Small keys: MEMORY USAGE of a key holding one item, and used_memory a key
over 10^4 such keys.

Run: make bench-redis   (or bench_redis.py --module M [--write docs/redis.md])
"""
import argparse
import csv
import io
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "redis"))
from harness import Server  # noqa: E402

BENCH = "/usr/bin/redis-benchmark"


def rps(port, n, clients, pipeline, *cmd, tests=None):
    args = [BENCH, "-h", "127.0.0.1", "-p", str(port), "-n", str(n),
            "-c", str(clients), "-P", str(pipeline), "-r", "1000000",
            "--csv"]
    args += ["-t", tests] if tests else list(cmd)
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    rows = list(csv.reader(io.StringIO(out.stdout)))
    return {r[0]: float(r[1]) for r in rows[1:]}


def server_cpu(r):
    i = r.info("cpu")
    return i["used_cpu_user"] + i["used_cpu_sys"]


def timed(r, port, n, clients, pipeline, *cmd, tests=None):
    """(requests/s, server CPU µs per request) of one redis-benchmark run."""
    c0 = server_cpu(r)
    res = rps(port, n, clients, pipeline, *cmd, tests=tests)
    return list(res.values())[0], (server_cpu(r) - c0) * 1e6 / n


def median(xs):
    return sorted(xs)[len(xs) // 2]


def throughput(port, n, r, rounds):
    """Each cell: `rounds` alternating runs of SET, GET, BF.ADD and
    BF.EXISTS; the median rate and server CPU per request of each (the
    machine is shared: alternating keeps a burst of outside load from
    landing on one side only, and CPU per request is what outside load
    disturbs least)."""
    r.execute_command("BF.RESERVE", "bench", 0.01, 2000000)
    cmds = {"SET": dict(tests="set"), "GET": dict(tests="get"),
            "ADD": dict(cmd=("BF.ADD", "bench", "__rand_int__")),
            "EXISTS": dict(cmd=("BF.EXISTS", "bench", "__rand_int__"))}
    table = []
    for clients in (1, 50):
        for pipeline in (1, 16):
            m = n * (4 if pipeline > 1 else 1)
            runs = {k: [] for k in cmds}
            for _ in range(rounds):
                for k, how in cmds.items():
                    runs[k].append(timed(r, port, m, clients, pipeline,
                                         *how.get("cmd", ()),
                                         tests=how.get("tests")))
            med = {k: (median([x[0] for x in v]), median([x[1] for x in v]))
                   for k, v in runs.items()}
            table.append((clients, pipeline, med))
    return table


def pipeline_cmds(r, cmd, key, items, batch=2000):
    for i in range(0, len(items), batch):
        r.execute_command(cmd, key, *items[i:i + batch])


def fpr(r, cmd, key, probes, batch=5000):
    hits = 0
    for i in range(0, len(probes), batch):
        hits += sum(1 for x in r.execute_command(cmd, key, *probes[i:i + batch])
                    if x)
    return hits / len(probes)


SUBJECTS = [
    # (label, how, spec or None, eps)
    ("BF (scalable, first stage eps/2)", "bf", None),
    ("CF, BUCKETSIZE 2 (RedisBloom default)", "cf", 2),
    ("CF, BUCKETSIZE 4", "cf", 4),
    ("AMQ bloom", "reserve", "bloom"),
    ("AMQ blocked", "reserve", "blocked"),
    ("AMQ sbbf", "reserve", "sbbf"),
    ("AMQ cuckoo", "reserve", "cuckoo"),
    ("AMQ vacuum", "reserve", "vacuum"),
    ("AMQ qf", "reserve", "qf"),
    ("AMQ xor8 / xor16", "build", "xor"),
    ("AMQ fuse8 / fuse16", "build", "fuse"),
    ("AMQ ribbon", "build", "ribbon"),
]


def memory(r, n, eps):
    items = [f"item:{i}" for i in range(n)]
    probes = [f"absent:{i}" for i in range(100000)]
    rows = []
    for label, how, spec in SUBJECTS:
        key = f"mem:{how}:{spec}:{eps}"
        if how == "bf":
            r.execute_command("BF.RESERVE", key, eps, n)
            pipeline_cmds(r, "BF.MADD", key, items)
            q = "BF.MEXISTS"
        elif how == "cf":
            if eps != 0.01:
                continue  # RedisBloom's CF rate is set by the bucket size
            r.execute_command("CF.RESERVE", key, n, "BUCKETSIZE", spec)
            for i in range(0, n, 2000):
                r.execute_command("CF.INSERT", key, "ITEMS", *items[i:i + 2000])
            q = "CF.MEXISTS"
        elif how == "reserve":
            r.execute_command("AMQ.RESERVE", key, spec, "CAPACITY", n,
                              "ERROR", eps)
            pipeline_cmds(r, "AMQ.MADD", key, items)
            q = "AMQ.MEXISTS"
        else:
            width = 8 if eps == 0.01 else 16
            s = {"xor": f"xor{width}", "fuse": f"fuse{width}",
                 "ribbon": "ribbon:bits=%g" % (7 if eps == 0.01 else 10)}[spec]
            r.execute_command("AMQ.BUILD", key, s, *items)
            q = "AMQ.MEXISTS"
        mem = r.memory_usage(key, samples=0)
        rows.append((label, eps, 8 * mem / n, fpr(r, q, key, probes)))
        r.delete(key)
    return rows


SMALL = [
    ("BF, one BF.ADD", [("BF.ADD", "{k}", "item-{i}")]),
    ("CF, one CF.ADD", [("CF.ADD", "{k}", "item-{i}")]),
    ("TOPK, k = 10, one TOPK.ADD", [("TOPK.RESERVE", "{k}", "10"),
                                    ("TOPK.ADD", "{k}", "item-{i}")]),
]


def small_keys(r, n=10000):
    """MEMORY USAGE of one key holding one item, and used_memory a key over
    n such keys (a filter per entity)."""
    rows = []
    for label, cmds in SMALL:
        r.flushall()
        for cmd in cmds:
            r.execute_command(*[a.format(k="probe", i=0) for a in cmd])
        one = r.memory_usage("probe", samples=0)
        r.flushall()
        before = r.info("memory")["used_memory"]
        pipe = r.pipeline(transaction=False)
        for i in range(n):
            for cmd in cmds:
                pipe.execute_command(*[a.format(k=f"e:{i}", i=i) for a in cmd])
        pipe.execute()
        per = (r.info("memory")["used_memory"] - before) / n
        rows.append((label, one, per))
    r.flushall()
    return rows


def markdown(tp, mem, n_tp, n_mem, rounds, machine, small=()):
    out = [f"Measured on {machine}; `make bench-redis` "
           f"(throughput: {n_tp} requests per run, x4 when pipelined, "
           f"median of {rounds} alternating runs; memory: {n_mem} items, FPR over "
           f"10^5 items never added).", ""]
    out += ["| clients | pipeline | SET/s | BF.ADD/s | BF.ADD ÷ SET | GET/s "
            "| BF.EXISTS/s | BF.EXISTS ÷ GET | server CPU µs/op: SET, "
            "BF.ADD, GET, BF.EXISTS | CPU ratio SET/BF.ADD, GET/BF.EXISTS |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for c, p, m in tp:
        (s, cs), (g, cg) = m["SET"], m["GET"]
        (a, ca), (e, ce) = m["ADD"], m["EXISTS"]
        out.append(f"| {c} | {p} | {s:,.0f} | {a:,.0f} | **{a / s:.2f}** | "
                   f"{g:,.0f} | {e:,.0f} | **{e / g:.2f}** | "
                   f"{cs:.2f}, {ca:.2f}, {cg:.2f}, {ce:.2f} | "
                   f"{cs / ca:.2f}, {cg / ce:.2f} |")
    out += ["", "| structure | ε | bits/item (MEMORY USAGE) | measured FPR |",
            "|---|---:|---:|---:|"]
    for label, eps, bits, f in mem:
        out.append(f"| {label} | {eps:g} | {bits:.2f} | {f:.5f} |")
    if small:
        out += ["", "| small key | MEMORY USAGE, bytes | used_memory a key "
                "over 10^4 keys, bytes |", "|---|---:|---:|"]
        for label, one, per in small:
            out.append(f"| {label} | {one} | {per:.0f} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", required=True)
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--items", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--write", help="replace the table block in this file")
    a = ap.parse_args()
    srv = Server(a.module)
    try:
        r = srv.client
        tp = throughput(srv.port, a.requests, r, a.rounds)
        r.flushall()
        mem = memory(r, a.items, 0.01) + memory(r, a.items, 0.001)
        small = small_keys(r)
    finally:
        srv.close()
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
            cpu = m.group(1).strip() if m else cpu
    except OSError:
        pass
    text = markdown(tp, mem, a.requests, a.items, a.rounds,
                    f"{cpu}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}",
                    small)
    print(text)
    if a.write:
        with open(a.write) as f:
            doc = f.read()
        begin, end = "<!-- bench:begin -->\n", "<!-- bench:end -->"
        i, j = doc.index(begin) + len(begin), doc.index(end)
        with open(a.write, "w") as f:
            f.write(doc[:i] + text + doc[j:])


if __name__ == "__main__":
    main()
