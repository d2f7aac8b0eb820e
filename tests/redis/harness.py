"""Servers for the module's integration tests: each starts redis-server on
127.0.0.1 (a free port) in a temporary directory, is stopped by its PID, and
the directory is removed. A tiny check registry prints 'N passed, N failed'.
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import redis

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def _bindable(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port():
    """A free port p with p + 10000 free too (a cluster node's bus port)."""
    rnd = random.Random()
    while True:
        p = rnd.randrange(20000, 45000)
        if _bindable(p) and _bindable(p + 10000):
            return p


class Server:
    """One redis-server with the module loaded."""

    def __init__(self, module, args=(), modargs=(), port=None, workdir=None):
        self.module = os.path.abspath(module)
        self.args, self.modargs = list(args), list(modargs)
        self.port = port or free_port()
        self.own_dir = workdir is None
        self.dir = workdir or tempfile.mkdtemp(prefix="amq-redis-")
        self.proc = None
        self.start()

    def start(self):
        cmd = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
               "--dir", self.dir, "--save", "", "--appendonly", "no",
               "--enable-debug-command", "yes", "--logfile", "server.log",
               "--repl-diskless-sync-delay", "0",
               "--loadmodule", self.module] + self.modargs + self.args
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.client = redis.Redis(host="127.0.0.1", port=self.port)
        deadline = time.time() + 10
        while True:
            try:
                if self.client.ping():
                    break
            except (redis.ConnectionError, redis.BusyLoadingError):
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("redis-server did not start:\n" +
                                       self.log())
                time.sleep(0.05)

    def log(self):
        try:
            with open(os.path.join(self.dir, "server.log")) as f:
                return f.read()
        except OSError:
            return ""

    def alive(self):
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.client.close()

    def restart(self):
        self.stop()
        self.start()

    def close(self):
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def wait_synced(replica, timeout=10):
    """True once replica's link to its primary is up (False on timeout)."""
    deadline = time.time() + timeout
    while replica.info("replication")["master_link_status"] != "up":
        if time.time() > deadline:
            return False
        time.sleep(0.05)
    return True


def primary_and_replica(module, servers):
    """Clients of a new primary and its synced replica (both registered in
    servers for closing), or None if the replica never synced."""
    prim = Server(module)
    servers.append(prim)
    rep = Server(module, args=["--replicaof", "127.0.0.1", str(prim.port)])
    servers.append(rep)
    if not wait_synced(rep.client):
        return None
    return prim.client, rep.client


def chunk_copy(r, src, dst):
    """Move src to dst in AMQ.SCANDUMP pieces through AMQ.LOADCHUNK."""
    it, chunks = 0, []
    while True:
        it, data = r.execute_command("AMQ.SCANDUMP", src, it)
        if it == 0:
            break
        chunks.append((it, data))
    for it, data in chunks:
        r.execute_command("AMQ.LOADCHUNK", dst, it, data)


def aof_on(r, timeout=20):
    """Switch the AOF on and wait for the rewrite that starts it."""
    r.config_set("appendonly", "yes")
    deadline = time.time() + timeout
    while r.info("persistence")["aof_rewrite_in_progress"] or \
            r.info("persistence").get("aof_rewrite_scheduled"):
        if time.time() > deadline:
            break
        time.sleep(0.05)


def restart_from_aof(srv):
    """Restart srv from its AOF alone (the RDB file removed)."""
    rdb = os.path.join(srv.dir, "dump.rdb")
    if os.path.exists(rdb):
        os.remove(rdb)
    srv.args += ["--appendonly", "yes"]
    srv.restart()


def resp3(port, request):
    """The raw bytes a RESP3 connection (HELLO 3) receives for request
    (RESP-encoded commands)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"HELLO 3\r\n")
    time.sleep(0.1)
    s.recv(65536)
    s.sendall(request)
    time.sleep(0.2)
    resp = s.recv(1 << 20)
    s.close()
    return resp


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what, flush=True)

    def raises(self, fn, fragment, what):
        try:
            fn()
        except redis.ResponseError as e:
            self.ok(fragment.lower() in str(e).lower(),
                    f"{what}: error {e!r} lacks {fragment!r}")
            return
        self.ok(False, f"{what}: no error")

    def report(self, suite):
        print(f"{suite}: {self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 else 1


def parse_args():
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--module", required=True)
    p.add_argument("--amq", default=None)
    return p.parse_args()


def run(main):
    """Run main(args, checks); servers it registers are closed on exit."""
    args = parse_args()
    checks = Checks()
    servers = []
    try:
        main(args, checks, servers)
    finally:
        for s in servers:
            s.close()
    sys.exit(checks.report(os.path.basename(sys.argv[0])))


def resp(args):
    """args (str or bytes) as one RESP command."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a.encode() if isinstance(a, str) else bytes(a)
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class Raw:
    """One connection that returns each reply's bytes as sent."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            self._more()
        i = self.buf.index(b"\r\n")
        line, self.buf = self.buf[:i + 2], self.buf[i + 2:]
        return line

    def _more(self):
        got = self.s.recv(65536)
        if not got:
            raise ConnectionError("the server closed the connection")
        self.buf += got

    def _take(self, n):
        while len(self.buf) < n:
            self._more()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def reply(self):
        line = self._line()
        t = line[:1]
        if t in b"$=!":
            n = int(line[1:-2])
            return line if n < 0 else line + self._take(n + 2)
        if t in b"*~>":
            n = int(line[1:-2])
            return line + b"".join(self.reply() for _ in range(max(n, 0)))
        if t == b"%":
            n = int(line[1:-2])
            return line + b"".join(self.reply() for _ in range(2 * n))
        if t == b"|":
            n = int(line[1:-2])
            attrs = b"".join(self.reply() for _ in range(2 * n))
            return line + attrs + self.reply()
        return line

    def ask(self, args):
        self.s.sendall(resp(args))
        return self.reply()

    def close(self):
        self.s.close()
