"""Failover under load: a 3-primary + 3-replica Redis Cluster on loopback
with amq-redis.so, writers running the whole time.

Three writer threads add items to BF, CF, AMQ (cuckoo), AMQ.MAP (maplet)
and AMQ.CASCADE (a learned cascade's insert buffer) keys spread over every
slot range. Each write goes to the primary that owns its key, followed on
the same connection by WAIT 1: a write counts as acknowledged only when
WAIT says a replica has it (the reply is checked; errors, MOVED and
timeouts count as not acknowledged, and the writer refreshes its map of
the cluster and goes on). Three faults, one after the other, while the
writers run:

 1. a primary is killed (SIGKILL by PID) and its replica promoted;
 2. a replica is killed (its primary's writes then go unacknowledged);
 3. a partition: DEBUG SLEEP on a primary for longer than the node
    timeout, so that its replica is promoted while it sleeps and it
    rejoins as a replica when it wakes.

After each, once the cluster is whole again, every acknowledged write is
present: the item answers 1 (BF, CF, AMQ, CASCADE), or its value at least
the one written (a max maplet never answers less). The killed nodes are
restarted and rejoin as replicas before the next fault.

Run: test_failover.py --module build/modules/redis/amq-redis.so --amq build/amq
"""
import logging
import os
import random
import signal
import socket
import subprocess
import tempfile
import threading
import time

from redis.cluster import ClusterNode, RedisCluster

from harness import run
from test_cluster import cluster_ok, promoted, start_cluster, wait_for

# The writers expect refused connections while a node is down; redis-py
# logs each one with its traceback.
logging.getLogger("redis.cluster").setLevel(logging.CRITICAL)

KINDS = ("bf", "cf", "amq", "map", "cascade")
KEYS_PER_KIND = 4
AUX = 20000  # the cascade's insert buffer


def train_cascade(amq):
    """A small cascade with an insert buffer, as `amq cascade train`
    writes it."""
    rnd = random.Random(3)
    members = sorted({"user%d.shop.example" % rnd.randrange(10 ** 6)
                      for _ in range(1500)})
    nonmembers = sorted({"%d/page" % rnd.randrange(10 ** 6)
                         for _ in range(3000)})
    with tempfile.TemporaryDirectory() as tmp:
        mp, np_ = os.path.join(tmp, "m"), os.path.join(tmp, "n")
        for path, keys in ((mp, members), (np_, nonmembers)):
            with open(path, "w") as f:
                f.write("\n".join(keys) + "\n")
        out = os.path.join(tmp, "c.amq")
        subprocess.run([amq, "cascade", "train", "--members", mp,
                        "--nonmembers", np_, "-e", "0.02", "--aux", str(AUX),
                        "--dim-bits", "10", "-q", "-o", out],
                       check=True, capture_output=True)
        with open(out, "rb") as f:
            return f.read()


def make_keys(rc, frame):
    keys = []
    for kind in KINDS:
        for i in range(KEYS_PER_KIND):
            key = "%s:%d" % (kind, i)
            if kind == "bf":
                rc.execute_command("BF.RESERVE", key, 0.01, 50000)
            elif kind == "cf":
                rc.execute_command("CF.RESERVE", key, 50000)
            elif kind == "amq":
                rc.execute_command("AMQ.RESERVE", key, "cuckoo", "CAPACITY",
                                   50000)
            elif kind == "map":
                rc.execute_command("AMQ.MAP.RESERVE", key, "maplet:op=max,v=8",
                                   "CAPACITY", 50000)
            else:
                rc.execute_command("AMQ.CASCADE.LOAD", key, frame)
            keys.append((kind, key))
    return keys


def write_cmd(kind, key, item, value):
    return {"bf": ("BF.ADD", key, item),
            "cf": ("CF.ADD", key, item),
            "amq": ("AMQ.ADD", key, item),
            "map": ("AMQ.MAP.PUT", key, item, value),
            "cascade": ("AMQ.CASCADE.ADD", key, item)}[kind]


class Writer(threading.Thread):
    """Writes until stopped; keeps what WAIT acknowledged."""

    def __init__(self, wid, ports, keys):
        super().__init__(daemon=True)
        self.wid, self.ports, self.keys = wid, ports, keys

        self.stop = threading.Event()
        self.acked, self.tried, self.errors = [], 0, 0
        self.rnd = random.Random(wid)

    def client(self):
        return RedisCluster(
            startup_nodes=[ClusterNode("127.0.0.1", p) for p in self.ports()],
            socket_timeout=2, socket_connect_timeout=1)

    def refresh(self, rc):
        """A new map of the cluster (at most every 100 ms); the client
        itself is kept, so writes to healthy shards go on meanwhile."""
        now = time.time()
        if now - self.refreshed < 0.1:
            return rc
        self.refreshed = now
        try:
            if rc is None:
                return self.client()
            rc.nodes_manager.initialize()
        except Exception:  # noqa: BLE001 -- the cluster is moving: retry
            time.sleep(0.02)
        return rc

    def run(self):
        rc, n = None, 0
        self.refreshed = 0.0
        while not self.stop.is_set():
            if rc is None:
                rc = self.refresh(rc)
                continue
            kind, key = self.rnd.choice(self.keys)
            item, value = "w%d-%d" % (self.wid, n), self.rnd.randrange(256)
            n += 1
            self.tried += 1
            try:
                conn = rc.get_redis_connection(rc.get_node_from_key(key))
                p = conn.pipeline(transaction=False)
                p.execute_command(*write_cmd(kind, key, item, value))
                p.execute_command("WAIT", 1, 20)
                res = p.execute(raise_on_error=False)
            except Exception:  # noqa: BLE001 -- not acknowledged
                self.errors += 1
                rc = self.refresh(rc)
                continue
            if any(isinstance(x, Exception) for x in res):
                self.errors += 1  # MOVED, CLUSTERDOWN, ...: not acknowledged
                rc = self.refresh(rc)
            elif res[1] >= 1:
                self.acked.append((kind, key, item, value))
        if rc is not None:
            rc.close()


def lost_writes(port, acked):
    """The acknowledged writes the cluster no longer holds."""
    rc = RedisCluster(host="127.0.0.1", port=port)
    by_key = {}
    for kind, key, item, value in acked:
        by_key.setdefault((kind, key), []).append((item, value))
    lost = []
    for (kind, key), its in by_key.items():
        for i in range(0, len(its), 500):
            part = its[i:i + 500]
            items = [it for it, _ in part]
            if kind == "bf":
                got = rc.execute_command("BF.MEXISTS", key, *items)
            elif kind == "cf":
                got = rc.execute_command("CF.MEXISTS", key, *items)
            elif kind == "amq":
                got = rc.execute_command("AMQ.MEXISTS", key, *items)
            elif kind == "cascade":
                got = rc.execute_command("AMQ.CASCADE.MEXISTS", key, *items)
            else:
                vals = rc.execute_command("AMQ.MAP.MGET", key, *items)
                got = [v is not None and int(v) >= want
                       for v, (_, want) in zip(vals, part)]
            lost += [(kind, key, it) for it, ok in zip(items, got) if not ok]
    rc.close()
    return lost


def role_of(s):
    return s.client.info("replication")["role"]


def synced(nodes):
    """Three primaries each with a connected replica."""
    if not cluster_ok(nodes):
        return False
    prim = [s for s in nodes if role_of(s) == "master"]
    return len(prim) == 3 and all(
        s.client.info("replication").get("connected_slaves", 0) >= 1
        for s in prim)


def under_load(c, nodes, keys, what, fault, recover):
    """Writers run; fault() strikes after a second; recover() waits for
    the cluster; writers go on a second more; then every acknowledged
    write must be present."""
    writers = [Writer(w, lambda: [s.port for s in nodes if s.alive()], keys)
               for w in range(3)]
    for w in writers:
        w.start()
    time.sleep(1.0)
    before = sum(len(w.acked) for w in writers)
    struck = fault()
    recover(struck)
    after = sum(len(w.acked) for w in writers)
    time.sleep(1.0)
    for w in writers:
        w.stop.set()
    for w in writers:
        w.join(timeout=30)
    acked = [a for w in writers for a in w.acked]
    tried = sum(w.tried for w in writers)
    errors = sum(w.errors for w in writers)
    alive = next(s.port for s in nodes if s.alive())
    lost = lost_writes(alive, acked)
    print("%s: %d writes tried, %d acknowledged (%d before the fault, %d "
          "while it lasted, %d after recovery), %d errors; %d acknowledged "
          "writes lost" %
          (what, tried, len(acked), before, after - before, len(acked) - after,
           errors, len(lost)))
    c.ok(before > 0 and after > before and len(acked) > after,
         "%s: writes acknowledged before, during and after the fault" % what)
    c.ok(not lost, "%s: acknowledged writes lost: %r" % (what, lost[:5]))
    return struck


def main(args, c, servers):
    t0 = time.time()
    frame = train_cascade(args.amq)
    nodes = start_cluster(args.module, servers)
    rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
    keys = make_keys(rc, frame)
    # the first primary owning a key of each kind's first key
    victim_port = rc.get_node_from_key(keys[0][1]).port
    rc.close()

    def kill_primary():
        v = next(s for s in nodes if s.port == victim_port)
        v.stop(signal.SIGKILL)
        return v

    def await_promotion(v):
        alive = [s for s in nodes if s is not v]
        wait_for(lambda: promoted(alive, v.port), 30, "failover")

    def rejoin(v):
        v.start()
        wait_for(lambda: synced(nodes), 60, "the node rejoining as replica")

    v = under_load(c, nodes, keys, "primary killed", kill_primary,
                   await_promotion)
    rejoin(v)

    def kill_replica():
        v = next(s for s in nodes if role_of(s) == "slave")
        v.stop(signal.SIGKILL)
        return v

    def replica_gone(v):
        alive = [s for s in nodes if s is not v]
        wait_for(lambda: cluster_ok(alive), 30, "cluster ok without a "
                 "replica")
        time.sleep(1.0)  # writes to its primary go unacknowledged meanwhile

    v = under_load(c, nodes, keys, "replica killed", kill_replica,
                   replica_gone)
    rejoin(v)

    def partition():
        v = next(s for s in nodes if role_of(s) == "master")
        sock = socket.create_connection(("127.0.0.1", v.port))
        # RESP by hand: the reply comes when the sleep ends
        sock.sendall(b"*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$1\r\n4\r\n")
        v.sleeper = sock
        return v

    def sleeper_demoted(v):
        alive = [s for s in nodes if s is not v]
        wait_for(lambda: promoted(alive, v.port) or
                 (cluster_ok(alive) and role_of(v) == "slave"), 30,
                 "the sleeping primary's replica promoted")
        v.sleeper.recv(64)
        v.sleeper.close()
        wait_for(lambda: role_of(v) == "slave" and synced(nodes), 60,
                 "the old primary back as a replica")

    under_load(c, nodes, keys, "partition (DEBUG SLEEP)", partition,
               sleeper_demoted)
    c.ok(all(s.alive() for s in nodes), "every node alive at the end")
    c.ok(time.time() - t0 < 100, "failover test took %.1fs" % (time.time() - t0))


if __name__ == "__main__":
    run(main)
