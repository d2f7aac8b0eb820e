"""A 3-primary + 3-replica Redis Cluster on loopback with amq-redis.so:
writes through python3-redis's RedisCluster (BF, CF, AMQ and AMQ.WINDOW
keys spread over every slot range), each acknowledged by WAIT 1 on the
owning primary; one primary is killed (SIGKILL by PID); once its replica
is promoted, every acknowledged item is still answered present.

Also a logical filter sharded over the three primaries by `amq shard plan`
(slot ranges from CLUSTER SLOTS, one false-positive budget) survives the
same failover.

Run: test_cluster.py --module build/modules/redis/amq-redis.so --amq build/amq
"""
import signal
import subprocess
import time

import redis
from redis.cluster import RedisCluster
from harness import REDIS_CLI, Server, run

N_KEYS = 60
N_ITEMS = 20


def wait_for(cond, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if cond():
                return True
        except (redis.RedisError, OSError):
            pass
        time.sleep(0.1)
    raise RuntimeError("timed out waiting for " + what)


def cluster_ok(servers):
    return all(s.client.cluster("info")["cluster_state"] == "ok"
               for s in servers)


def promoted(alive, dead_port):
    """Every live node sees the dead primary failed and owning no slots (a
    replica took them), and the cluster whole again."""
    for s in alive:
        nodes = s.client.execute_command("CLUSTER", "NODES").decode()
        for line in nodes.splitlines():
            f = line.split()
            if f[1].startswith(f"127.0.0.1:{dead_port}@") and \
                    ("fail" not in f[2].split(",") or len(f) > 8):
                return False
    return cluster_ok(alive)


def start_cluster(module, servers):
    nodes = []
    for _ in range(6):
        s = Server(module, args=["--cluster-enabled", "yes",
                                 "--cluster-config-file", "nodes.conf",
                                 "--cluster-node-timeout", "1000",
                                 "--appendonly", "no"])
        servers.append(s)
        nodes.append(s)
    addrs = [f"127.0.0.1:{s.port}" for s in nodes]
    subprocess.run([REDIS_CLI, "--cluster", "create", *addrs,
                    "--cluster-replicas", "1", "--cluster-yes"],
                   check=True, capture_output=True, timeout=60)
    wait_for(lambda: cluster_ok(nodes), 30, "cluster state ok")
    return nodes


def write_all(rc, c):
    """Write every item; return what WAIT 1 acknowledged."""
    acked = []
    for k in range(N_KEYS):
        key = f"amq:{k}"
        its = [f"{key}:{i}" for i in range(N_ITEMS)]
        kind = k % 4
        if kind == 0:
            rc.bf().madd(key, *its)
        elif kind == 1:
            rc.cf().insert(key, its)
        elif kind == 2:
            rc.execute_command("AMQ.RESERVE", key, "cuckoo", "CAPACITY", 100)
            rc.execute_command("AMQ.MADD", key, *its)
        else:  # a sliding window of a day, written at the server's time
            rc.execute_command("AMQ.WINDOW.RESERVE", key, "MS", 86_400_000,
                               "CAPACITY", 1000)
            rc.execute_command("AMQ.WINDOW.MADD", key, *its)
        node = rc.get_node_from_key(key)
        conn = rc.get_redis_connection(node)
        if conn.execute_command("WAIT", 1, 5000) >= 1:
            acked.append((kind, key, its))
    c.ok(len(acked) == N_KEYS, f"{len(acked)} of {N_KEYS} keys acknowledged")
    return acked


def sharded_filter(rc, amq, c):
    """One logical filter over the three primaries (amq shard plan with the
    cluster's slot ranges): each shard lands on its range's primary, items
    are routed by `amq shard route`; returns (kind, key, items) triples."""
    keys = [f"k{i}" for i in range(50)]
    out = subprocess.run([amq, "shard", "slot", *keys], check=True,
                         capture_output=True, text=True).stdout.split()
    c.ok([int(x) for x in out[1::2]] ==
         [rc.keyslot(k) for k in keys], "amq shard slot = CLUSTER KEYSLOT")
    ranges = sorted((lo, hi) for lo, hi, *_ in
                    rc.execute_command("CLUSTER SLOTS",
                                       target_nodes=RedisCluster.RANDOM))
    spec = ",".join(f"{lo}-{hi}" for lo, hi in ranges)
    plan = subprocess.run(
        [amq, "shard", "plan", "--type", "bloom", "--fpr", "0.01",
         "--keys", "200,200,200", "--queries", "70,20,10", "--name", "users",
         "--slots", spec, "--commands"],
        check=True, capture_output=True, text=True).stdout.splitlines()
    shard_keys = []
    for line, (lo, hi) in zip(plan, ranges):
        words = line.split()
        rc.execute_command(*words)
        shard_keys.append(words[1])
        c.ok(lo <= rc.keyslot(words[1]) <= hi, f"{words[1]} in {lo}-{hi}")
    items = [f"user:{i}" for i in range(300)]
    route = subprocess.run([amq, "shard", "route", "--shards", "3"],
                           input="\n".join(items) + "\n", check=True,
                           capture_output=True, text=True).stdout.split()
    groups = {}
    for it, s in zip(items, route):
        groups.setdefault(shard_keys[int(s)], []).append(it)
    for key, its in groups.items():
        rc.execute_command("AMQ.MADD", key, *its)
        rc.get_redis_connection(rc.get_node_from_key(key)).execute_command(
            "WAIT", 1, 5000)
    return [(2, key, its) for key, its in groups.items()]


def present(rc, kind, key, its):
    if kind == 0:
        return all(rc.bf().mexists(key, *its))
    if kind == 1:
        return all(rc.cf().exists(key, i) for i in its)
    if kind == 2:
        return all(rc.execute_command("AMQ.MEXISTS", key, *its))
    return all(rc.execute_command("AMQ.WINDOW.MEXISTS", key, *its))


def main(args, c, servers):
    t0 = time.time()
    nodes = start_cluster(args.module, servers)
    rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
    acked = write_all(rc, c)
    if args.amq:
        acked += sharded_filter(rc, args.amq, c)
    # kill the primary that owns the first key
    victim_node = rc.get_node_from_key(acked[0][1])
    victim = next(s for s in nodes if s.port == victim_node.port)
    victim.stop(signal.SIGKILL)
    alive = [s for s in nodes if s is not victim]
    try:
        wait_for(lambda: promoted(alive, victim.port), 30, "failover")
    except RuntimeError:
        print(alive[0].client.execute_command("CLUSTER", "NODES").decode())
        raise
    c.ok(True, "replica promoted")
    rc.close()
    rc = RedisCluster(host="127.0.0.1", port=alive[0].port)
    lost = [key for kind, key, its in acked if not present(rc, kind, key, its)]
    c.ok(not lost, f"acknowledged writes lost after failover: {lost[:5]}")
    moved = [key for _, key, _ in acked
             if rc.get_node_from_key(key).port == victim.port]
    c.ok(not moved, "no key still routed to the dead primary")
    rc.close()
    c.ok(time.time() - t0 < 60, f"cluster test took {time.time() - t0:.1f}s")


if __name__ == "__main__":
    run(main)
