"""Filters past one 512 MB Redis value.

 1. A Bloom filter key of more than 2 GiB (BF.RESERVE for 1.8 * 10^9
    items at 1%, NONSCALING) holding 20 000 items: MEMORY USAGE says so;
    BF.SCANDUMP moves it through BF.LOADCHUNK in 16 MiB pieces into a copy
    with the same digest and answers; a replica takes it by full sync and
    then a write through WAIT; the primary is killed and the promoted
    replica answers every item, takes writes, survives DEBUG RELOAD; DUMP
    and RESTORE copy it (sparse, so its RDB encoding compresses).
 2. A dense Bloom filter in RedisBloom's layout of about 600 MB (its bits
    random, sent by BF.LOADCHUNK, which takes RedisBloom's stream): its
    DUMP payload is past the 512 MB a bulk string may have by default,
    so RESTORE on a server at the default proto-max-bulk-len is refused
    (the server's limit, which MIGRATE meets too), and succeeds, with the
    same digest, once the target's proto-max-bulk-len is raised
    (docs/redis.md, "Filters past 512 MB").

Needs about 12 GB of free memory; with less it says so and checks nothing
else (the machines CI runs on have 24 GB). The quick suites
(AMQ_TEST_QUICK=1: the sanitizer and clang builds) leave it to the full
one.
"""
import os
import random
import signal
import struct
import time

import redis

from harness import Server, run, wait_synced
import rb_format as rb

CAPACITY = 1_800_000_000
ITEMS = ["item:%d" % i for i in range(20_000)]


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def scandump_copy(r, src, dst):
    """BF.SCANDUMP src into BF.LOADCHUNK dst, piece by piece; the pieces'
    count and largest size."""
    it, n, largest = 0, 0, 0
    while True:
        it, data = r.execute_command("BF.SCANDUMP", src, it)
        if it == 0:
            return n, largest
        r.execute_command("BF.LOADCHUNK", dst, it, data)
        n, largest = n + 1, max(largest, len(data))


def all_present(r, key, items):
    for i in range(0, len(items), 1000):
        if not all(r.execute_command("BF.MEXISTS", key, *items[i:i + 1000])):
            return False
    return True


def madd(r, key, items):
    for i in range(0, len(items), 1000):
        r.execute_command("BF.MADD", key, *items[i:i + 1000])


def digest(r, key):
    return r.execute_command("DEBUG", "DIGEST-VALUE", key)


def big_amq_filter(args, c, servers):
    prim = Server(args.module)
    servers.append(prim)
    r = prim.client
    r.execute_command("BF.RESERVE", "big", 0.01, CAPACITY, "NONSCALING")
    madd(r, "big", ITEMS)
    size = r.memory_usage("big")
    c.ok(size > 2 ** 31, "the filter is past 2 GiB: %d bytes" % size)
    c.ok(all_present(r, "big", ITEMS), "every item answers")

    t = time.time()
    n, largest = scandump_copy(r, "big", "copy")
    c.ok(n > 100 and largest <= 16 << 20,
         "SCANDUMP in %d pieces of at most %d bytes" % (n, largest))
    c.ok(digest(r, "copy") == digest(r, "big") and
         all_present(r, "copy", ITEMS), "LOADCHUNK rebuilt the same filter")
    print("SCANDUMP/LOADCHUNK of %d bytes: %.1f s" % (size, time.time() - t))
    print("peak memory with the copy: %s" %
          r.info("memory")["used_memory_peak_human"])
    r.delete("copy")

    t = time.time()
    rep = Server(args.module, args=["--replicaof", "127.0.0.1",
                                    str(prim.port)])
    servers.append(rep)
    synced = wait_synced(rep.client, timeout=300)
    while synced and not rep.client.exists("big"):
        time.sleep(0.1)
    c.ok(synced, "the replica synced")
    print("full sync: %.1f s" % (time.time() - t))
    c.ok(digest(rep.client, "big") == digest(r, "big"),
         "the replica holds the same filter")
    r.execute_command("BF.ADD", "big", "late")
    c.ok(r.execute_command("WAIT", 1, 60000) == 1,
         "the write after the sync reached the replica")
    c.ok(rep.client.execute_command("BF.EXISTS", "big", "late") == 1,
         "the replica answers the later write")

    prim.stop(signal.SIGKILL)
    rc = rep.client
    rc.execute_command("REPLICAOF", "NO", "ONE")
    c.ok(all_present(rc, "big", ITEMS + ["late"]),
         "the promoted replica answers every item")
    c.ok(rc.execute_command("BF.ADD", "big", "after-failover") == 1,
         "the promoted replica takes writes")
    t = time.time()
    rc.execute_command("DEBUG", "RELOAD")
    c.ok(all_present(rc, "big", ITEMS + ["late", "after-failover"]),
         "DEBUG RELOAD keeps every answer")
    print("DEBUG RELOAD: %.1f s" % (time.time() - t))
    payload = rc.dump("big")
    rc.restore("restored", 0, payload)
    c.ok(digest(rc, "restored") == digest(rc, "big"),
         "DUMP (%d bytes) and RESTORE copy the filter" % len(payload))
    print("peak memory of the promoted replica: %s" %
          rc.info("memory")["used_memory_peak_human"])
    rep.close()
    servers.remove(rep)


def dense_rb_filter(args, c, servers):
    """A RedisBloom-layout BF of random bits, by LOADCHUNK."""
    src = Server(args.module)
    servers.append(src)
    r = src.client
    chain = rb.BloomChain(capacity=None, nonscaling=True)
    link = rb.BloomLink.create(500_000_000, 0.01, chain.options)
    link.bf = None  # its bits are sent below, never held here
    link.size = 400_000_000
    chain.links.append(link)
    chain.size = link.size
    r.execute_command("BF.LOADCHUNK", "dense", 1, chain.header())
    rnd = random.Random(7)
    pos = 0
    while pos < link.bytes:
        n = min(rb.MAX_CHUNK, link.bytes - pos)
        data = rnd.randbytes(n)
        pos += n
        r.execute_command("BF.LOADCHUNK", "dense", 1 + pos, data)
    info = r.execute_command("BF.INFO", "dense")
    c.ok(info[1] == link.entries, "the dense filter loaded: %r" % info[:4])
    payload = r.dump("dense")
    c.ok(len(payload) > 512 << 20,
         "its DUMP payload is past 512 MB: %d bytes" % len(payload))
    want = digest(r, "dense")

    dst = Server(args.module)
    servers.append(dst)
    try:
        dst.client.restore("dense", 0, payload)
        c.ok(False, "RESTORE past proto-max-bulk-len was taken")
    except (redis.ResponseError, redis.ConnectionError) as e:
        c.ok(True, str(e))
        print("RESTORE at the default proto-max-bulk-len: %s" %
              (str(e) or type(e).__name__))
    d = redis.Redis(host="127.0.0.1", port=dst.port)
    d.config_set("proto-max-bulk-len", str(2 << 30))
    d.restore("dense", 0, payload)
    c.ok(digest(d, "dense") == want,
         "RESTORE with proto-max-bulk-len raised gives the same filter")
    d.close()


def main(args, c, servers):
    if os.environ.get("AMQ_TEST_QUICK") == "1":
        # the quick suites (sanitizer, clang) run the same module code on
        # small keys; this one is about size, and runs in the full suite
        print("test_big: AMQ_TEST_QUICK=1: not run (make test runs it)")
        return
    need = 12 << 30
    have = mem_available()
    if have < need:
        print("test_big: %.1f GB available, %.1f GB needed: not run" %
              (have / 1e9, need / 1e9))
        return
    big_amq_filter(args, c, servers)
    dense_rb_filter(args, c, servers)


if __name__ == "__main__":
    run(main)
