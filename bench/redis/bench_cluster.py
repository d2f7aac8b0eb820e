"""Per-shard learned cascades against per-shard Bloom filters on a Redis
Cluster of 1, 3 and 6 primaries on one machine (docs/cluster.md "Served
from the cluster").

For each cluster size: one key set (table rows, where a row is a member
when its table number is even and a hash of the row says so: learnable
structure with some noise), a sample of non-member queries to train on,
then

- cascade: amq.cluster.ShardedCascade.train at a global target eps, its
  budgets chosen by the allocation engine (each shard's key is a learned
  cascade or a plain filter, whichever is smaller at its budget);
- bf: BF.RESERVE key eps n NONSCALING + BF.MADD per shard, RedisBloom's
  commands at the same rate on every shard, so the same global eps.

Both answer the same workload of fresh queries, 90% and 99% absent keys,
sent by amq_redis_load (bench/tools/redis_load.c: closed loop, 4
connections a primary, one request in flight each) straight to the
primary that owns each key; the runs of the two alternate. Reported:
requests/s, P50 and P99 latency, server CPU per request (used_cpu_user +
used_cpu_sys of every primary, before and after), bytes per shard (MEMORY
USAGE) and bits per member, and the measured false-positive rate against
the global bound (the cascade's composed certified bound; the Bloom
filters' target).

Run: make bench-cluster   (or bench_cluster.py --module M --build B
     [--members N] [--primaries 1,3,6] [--write docs/cluster.md])
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "redis"))
sys.path.insert(0, os.path.join(ROOT, "python"))
from harness import Server  # noqa: E402


def rows(n, seed, member):
    """n keys tenantTTT/tableBB/rowR: members (or non-members) of the
    table-row rule."""
    rnd = random.Random(seed)
    out = []
    while len(out) < n:
        t, tb, row = rnd.randrange(500), rnd.randrange(16), \
            rnd.randrange(10**10)
        m = tb % 2 == 0 and ((row * 2654435761) >> 7) % 10 < 8
        if m == member:
            out.append("tenant%03d/table%02d/row%d" % (t, tb, row))
    return out


def start_cluster(module, primaries):
    """`primaries` nodes, the slots split evenly, no replicas."""
    nodes = [Server(module, args=["--cluster-enabled", "yes",
                                  "--cluster-config-file", "nodes.conf",
                                  "--cluster-node-timeout", "2000"])
             for _ in range(primaries)]
    per = 16384 // primaries
    for i, s in enumerate(nodes):
        lo, hi = i * per, (16383 if i == primaries - 1 else
                           (i + 1) * per - 1)
        s.client.execute_command("CLUSTER ADDSLOTSRANGE", lo, hi)
    for s in nodes[1:]:
        s.client.execute_command("CLUSTER MEET", "127.0.0.1", nodes[0].port)
    deadline = time.time() + 30
    while time.time() < deadline:
        infos = [s.client.cluster("info") for s in nodes]
        if all(i["cluster_state"] == "ok" and
               int(i["cluster_known_nodes"]) == primaries for i in infos):
            time.sleep(0.5)
            return nodes
        time.sleep(0.1)
    raise RuntimeError("the cluster did not reach state ok")


def cpu(nodes):
    t = 0.0
    for s in nodes:
        i = s.client.info("cpu")
        t += i["used_cpu_user"] + i["used_cpu_sys"]
    return t


def load(tool, lines, nodes, conns):
    with tempfile.NamedTemporaryFile("w", suffix=".req", delete=False) as f:
        f.write("".join(lines))
        path = f.name
    try:
        c0 = cpu(nodes)
        out = subprocess.run([tool, "-c", str(conns), path],
                             capture_output=True, text=True, check=True)
        c1 = cpu(nodes)
    finally:
        os.unlink(path)
    r = json.loads(out.stdout.splitlines()[0])
    r["cpu_us"] = (c1 - c0) * 1e6 / r["requests"]
    return r


def median_run(runs):
    """The run of median throughput, with the median of each figure."""
    out = {}
    for k in runs[0]:
        vals = sorted(r[k] for r in runs)
        out[k] = vals[len(vals) // 2]
    out["false_positives"] = sum(r["false_positives"] for r in runs)
    out["absent"] = sum(r["absent"] for r in runs)
    out["false_negatives"] = sum(r["false_negatives"] for r in runs)
    return out


def one_size(args, primaries, tool):
    from redis.cluster import RedisCluster
    from amq.cluster import ShardedCascade

    nodes = start_cluster(args.module, primaries)
    try:
        rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
        members = rows(args.members, 1, True)
        sample = rows(2 * args.members, 2, False)
        t = time.time()
        sc = ShardedCascade.train(rc, members, sample, args.eps,
                                  name="casc", curve=(2.0, 1.0, 0.5))
        train_s = time.time() - t
        bf_keys = []
        counts = [0] * len(sc.shards)
        for k in members:
            counts[sc.shard_of(k)] += 1
        for s, n in zip(sc.shards, counts):
            key = "bf{%s}" % s.tag
            rc.execute_command("BF.RESERVE", key, args.eps, n, "NONSCALING")
            bf_keys.append(key)
        groups = {}
        for k in members:
            groups.setdefault(sc.shard_of(k), []).append(k)
        for si, ks in groups.items():
            for a in range(0, len(ks), 1000):
                rc.execute_command("BF.MADD", bf_keys[si], *ks[a:a + 1000])
        port = [rc.get_node_from_key(s.live[0]).port for s in sc.shards]
        casc_cmd = ["AMQ.CASCADE.EXISTS" if s.live[1] == "cascade" else
                    "AMQ.EXISTS" for s in sc.shards]
        mem_c = [int(rc.memory_usage(s.live[0])) for s in sc.shards]
        mem_b = [int(rc.memory_usage(k)) for k in bf_keys]
        bound = sc.bound()
        kinds = {}
        for s in sc.shards:
            kinds[s.live[1]] = kinds.get(s.live[1], 0) + 1
        # fresh absent keys for every run: the measured rates are then
        # over rounds * queries distinct keys
        absent_pool = iter(rows(2 * args.rounds * args.queries, 3, False))
        rnd = random.Random(4)
        out = []
        for absent in (0.90, 0.99):
            runs = {"cascade": [], "bf": []}
            for _ in range(args.rounds):
                qs = []
                for i in range(args.queries):
                    if rnd.random() < absent:
                        qs.append((next(absent_pool), 0))
                    else:
                        qs.append((members[rnd.randrange(len(members))], 1))
                shard = [sc.shard_of(q) for q, _ in qs]
                lines = {
                    "cascade": ["%d\t%s\t%s\t%s\t%d\n" %
                                (port[si], casc_cmd[si],
                                 sc.shards[si].live[0], q, tr)
                                for (q, tr), si in zip(qs, shard)],
                    "bf": ["%d\tBF.EXISTS\t%s\t%s\t%d\n" %
                           (port[si], bf_keys[si], q, tr)
                           for (q, tr), si in zip(qs, shard)]}
                for m in ("cascade", "bf"):
                    runs[m].append(load(tool, lines[m], nodes, args.conns))
            for m in ("cascade", "bf"):
                r = median_run(runs[m])
                mem = mem_c if m == "cascade" else mem_b
                out.append({
                    "primaries": primaries, "share_absent": absent,
                    "method": m,
                    "ops": r["ops"], "p50_us": r["p50_us"],
                    "p99_us": r["p99_us"], "cpu_us": r["cpu_us"],
                    "bytes_per_shard": sum(mem) / len(mem),
                    "bits_per_member": 8.0 * sum(mem) / len(members),
                    "fpr": r["false_positives"] / max(1, r["absent"]),
                    "absent": r["absent"],
                    "bound": bound if m == "cascade" else args.eps,
                    "false_negatives": r["false_negatives"],
                    "kinds": " + ".join(
                        "%d %s" % (n, "learned" if k == "cascade" else "sbbf")
                        for k, n in sorted(kinds.items()))
                    if m == "cascade" else "bf",
                    "train_s": train_s if m == "cascade" else 0.0})
        rc.close()
        return out
    finally:
        for s in nodes:
            s.close()


def table(results, args):
    head = ("| primaries | absent | method | requests/s | P50 µs | P99 µs | "
            "server CPU µs/request | bytes/shard | bits/member | "
            "measured FPR (± 2σ) | global bound |\n"
            "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    body = ""
    for r in results:
        body += ("| %d | %d%% | %s | %.0f | %.0f | %.0f | %.2f | %.0f | "
                 "%.2f | %.4f ± %.4f | %.4f |\n" %
                 (r["primaries"], round(100 * r["share_absent"]),
                  "cascade: %s" % r["kinds"] if r["method"] == "cascade"
                  else "BF.*", r["ops"], r["p50_us"], r["p99_us"],
                  r["cpu_us"], r["bytes_per_shard"], r["bits_per_member"],
                  r["fpr"], 2 * math.sqrt(r["fpr"] * (1 - r["fpr"]) /
                                          max(1, r["absent"])), r["bound"]))
    note = ("\n%d members, eps %g, %d queries a run (fresh absent keys in "
            "each), %d connections a primary, median of %d alternating runs "
            "(the rates over all of them). `%s`\n" %
            (args.members, args.eps, args.queries, args.conns, args.rounds,
             "make bench-cluster"))
    return head + body + note


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--module", required=True)
    ap.add_argument("--build", default="build")
    ap.add_argument("--members", type=int, default=30000)
    ap.add_argument("--queries", type=int, default=100000)
    ap.add_argument("--eps", type=float, default=0.01)
    ap.add_argument("--conns", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--primaries", default="1,3,6")
    ap.add_argument("--write", help="replace the table in this file")
    args = ap.parse_args()
    if not os.path.isfile(args.module):
        sys.exit("no module at %s" % args.module)
    tool = os.path.join(args.build, "bench", "amq_redis_load")
    if not os.access(tool, os.X_OK):
        sys.exit("no %s (make build makes it)" % tool)
    os.environ.setdefault("AMQ_LIBRARY",
                          os.path.join(args.build, "libamq.so"))
    results = []
    for p in [int(x) for x in args.primaries.split(",")]:
        got = one_size(args, p, tool)
        for r in got:
            print(json.dumps(r), flush=True)
        results += got
    text = table(results, args)
    print(text)
    bad = [r for r in results if r["false_negatives"]]
    if bad:
        sys.exit("false negatives: %r" % bad)
    if args.write:
        with open(args.write) as f:
            doc = f.read()
        begin, end = "<!-- cluster-bench:begin -->\n", \
            "<!-- cluster-bench:end -->"
        a, b = doc.index(begin) + len(begin), doc.index(end)
        with open(args.write, "w") as f:
            f.write(doc[:a] + text + doc[b:])


if __name__ == "__main__":
    main()
