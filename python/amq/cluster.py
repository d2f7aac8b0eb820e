"""amq.cluster: one learned cascade per shard of a Redis Cluster, with
one global certified bound, audits, rollouts and slot moves
(docs/cluster.md).

A shard is a set of slot ranges and its cascade. Every member key
belongs to the shard that owns its slot (CLUSTER KEYSLOT), so each shard
gets a cascade trained on its own members and on the non-member queries
it is asked, stored as an AMQ.CASCADE key whose hash tag puts it in the
shard's slots: the cluster keeps the cascade next to the data it guards,
replicates it and moves it on failover.

Budgets. Shard m receives a share w_m of the non-member queries. A query
for an absent key is answered by its shard's key only, so the cluster's
false-positive rate is sum w_m eps_m, and each eps_m is certified by
that shard's bound. train() measures each shard's memory-vs-eps curve
(cascades trained at a few rates around the target) and lets the
allocation engine choose the eps_m that minimise the total memory
subject to sum w_m eps_m <= eps (amq_cascade_shard_budgets); then it
trains every shard at its eps_m. bound() recomposes the global bound
from the loaded keys' own certified bounds (AMQ.CASCADE.INFO), so it
follows their insert buffers, deletes and fallbacks.

The configuration. What a client needs to query (the slot map, each
shard's live key, the moves under way) is one JSON document stored in
the cluster under NAME.config and numbered by its epoch; every change
(a rollout, a switch to a standby, a slot move) publishes a new epoch.
ShardedCascade.open(rc, name) reads it; refresh() rereads it when the
epoch changed. Keys are named by the epoch that built them
(NAME.E{tag}), and a key is never written under a name it had before,
so two versions can be live at once: clients that still hold the old
epoch answer with the old keys, clients that have the new one with the
new keys, and both are right. retire() deletes the old keys once every
client has moved; a client that asks a retired key sees it is gone in
the same round trip (an EXISTS after the query), rereads the
configuration and asks again, so a retired key never answers 0.

Audits (audit(), audit_step(), check()). Each live cascade key samples
a share of its queries (AMQ.CASCADE.AUDIT); audit_step() pops the
samples, asks the caller's is_member() about them and reports the truth
back (AMQ.CASCADE.TRUTH). From the audits check() estimates every
shard's share of the non-member queries, recomposes the global bound
with those shares, reports the shards whose audit found their bound
violated (the key then falls back on the module side) and, when a shard
has a standby (a plain filter kept beside it, train(standby=True)),
switches that shard's queries to it. When the measured shares push the
global bound past eps, check() says replan is due: replan() gives the
budgets for the new shares, rollout() trains and loads them as a new
epoch.

Slot moves (move_slots()). Before a slot range moves, its members are
added to the destination shard's cascade (its insert buffer); then the
slots move (CLUSTER SETSLOT and MIGRATE, the cascade keys with them if
their slots are in the range) and the configuration names the new
owner. The source keeps the moved members until its next rollout, so a
client with either epoch finds every member: no false negative at any
point of the move.

Needs redis-py (Debian python3-redis) for the cluster; everything else is
the amq binding.
"""

import ctypes
import json
import math
import time
from dataclasses import asdict, dataclass, field
from typing import (Any, Callable, Dict, Iterable, List, Optional, Sequence,
                    Tuple)

from ._cascade import Cascade
from ._errors import FullError, NotFoundError, check
from ._filter import Filter
from .alloc import _invalid
from ._native import S, c_size_t, declare, lib


class _Curve(ctypes.Structure):
    """amq_cascade_shard_curve."""
    _fields_ = [("weight", ctypes.c_double),
                ("eps", ctypes.POINTER(ctypes.c_double)),
                ("bits", ctypes.POINTER(ctypes.c_double)),
                ("npoints", c_size_t)]


_DA = ctypes.POINTER(ctypes.c_double)
declare({
    "amq_cascade_shard_budgets": (S, [ctypes.POINTER(_Curve), c_size_t,
                                      ctypes.c_double, _DA, _DA]),
})

MAX_SHARDS = 256
SLOTS = 16384
STANDBY_SPEC = "sbbf"
"""The standby's type: a split-block Bloom filter, the fastest plain
filter that takes adds."""
HEADROOM = 0.05
"""Each shard's insert buffer, as a share of its members: room for adds
and for the members of slot ranges moved in."""
_BATCH = 1000
_OPS = {"cascade": ("AMQ.CASCADE.MEXISTS", "AMQ.CASCADE.ADD",
                    "AMQ.CASCADE.INFO", "AMQ.CASCADE.LOAD"),
        "filter": ("AMQ.MEXISTS", "AMQ.MADD", "AMQ.INFO", "AMQ.LOAD")}
"""Per kind of key: its query, add, info and load commands."""
_CAS = """local c = redis.call('GET', KEYS[1])
if c and cjson.decode(c)['epoch'] ~= tonumber(ARGV[1]) then
  return cjson.decode(c)['epoch']
end
redis.call('SET', KEYS[1], ARGV[2])
return -1"""


def shard_budgets(curves: Sequence[Tuple[float, Sequence[Tuple[float,
                                                                float]]]],
                  eps: float) -> List[Tuple[float, float]]:
    """For shards given as (weight, [(eps_j, bits_j), ...]) — a share of
    the non-member queries and points of the memory-vs-eps curve — the
    (eps_m, bits_m) that minimise sum bits_m subject to
    sum weight_m eps_m <= eps (the lower convex hull of each curve,
    interpolated). InvalidError when eps is out of reach."""
    n = len(curves)
    if not 1 <= n <= MAX_SHARDS:
        raise _invalid("1 .. %d shards, not %d" % (MAX_SHARDS, n))
    arr = (_Curve * n)()
    keep = []
    for i, (w, pts) in enumerate(curves):
        if not pts:
            raise _invalid("shard %d has no curve points" % i)
        e = (ctypes.c_double * len(pts))(*[float(p[0]) for p in pts])
        b = (ctypes.c_double * len(pts))(*[float(p[1]) for p in pts])
        keep += [e, b]
        arr[i] = _Curve(float(w), e, b, len(pts))
    eo = (ctypes.c_double * n)()
    bo = (ctypes.c_double * n)()
    check(lib.amq_cascade_shard_budgets(arr, n, float(eps), eo, bo))
    return [(eo[i], bo[i]) for i in range(n)]


def _text(x: Any) -> Any:
    return x.decode() if isinstance(x, bytes) else x


def _fields(reply: Any) -> Dict[str, Any]:
    """A map reply (RESP3 dict or RESP2 flat list) with str keys."""
    if reply is None:
        return {}
    if isinstance(reply, list):
        reply = dict(zip(reply[::2], reply[1::2]))
    return {_text(k): v for k, v in reply.items()}


def _merge(ranges: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    out: List[Tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _minus(ranges: List[Tuple[int, int]], lo: int,
           hi: int) -> List[Tuple[int, int]]:
    out = []
    for a, b in ranges:
        if b < lo or a > hi:
            out.append((a, b))
            continue
        if a < lo:
            out.append((a, lo - 1))
        if b > hi:
            out.append((hi + 1, b))
    return out


@dataclass
class Shard:
    """One shard: its slot ranges, its keys, and what training measured
    and chose."""
    slots: List[Tuple[int, int]]
    key: str                     # its filter's key
    tag: str                     # the hash tag of its keys
    kind: str = "cascade"        # cascade (AMQ.CASCADE.*) or filter (AMQ.*)
    members: int = 0             # at training, plus those moved in
    weight: float = 0.0          # share of the non-member queries
    eps: float = 0.0             # its budget
    bits: int = 0                # its cascade's bytes * 8
    bound: float = 0.0           # its certified bound at training
    room: int = 0                # its insert buffer's capacity
    curve: List[Tuple[float, float]] = field(default_factory=list)
    standby: str = ""            # a plain filter beside it; "" for none
    on_standby: bool = False     # queries go to the standby
    old: List[str] = field(default_factory=list)  # earlier epochs' keys

    @property
    def live(self) -> Tuple[str, str]:
        """The key that answers this shard's queries, and its kind."""
        return ((self.standby, "filter") if self.on_standby else
                (self.key, self.kind))


@dataclass
class Health:
    """What check() found."""
    epoch: int
    bound: float                  # sum w_m b_m, w from the training sample
    worst: float                  # max b_m: the bound for any mix of shards
    measured_bound: Optional[float]  # sum w_m b_m, w measured by the audits
    shares: Optional[List[float]]  # those measured shares
    fpr_estimate: Optional[float]  # sum w_m (each audit's FPR estimate)
    violated: List[int]           # shards whose bound the audit broke
    switched: List[int]           # shards moved to their standby now
    unaudited: List[int]          # shards with no audit evidence
    replan: bool                  # retrain: the global bound passed eps


def _slot_ranges(rc: Any) -> List[List[Tuple[int, int]]]:
    """Slot ranges per primary, from CLUSTER SLOTS, primaries in order of
    their first slot."""
    by_node: Dict[Tuple[str, int], List[Tuple[int, int]]] = {}
    from redis.cluster import RedisCluster  # type: ignore[import]
    reply = rc.execute_command("CLUSTER SLOTS",
                               target_nodes=RedisCluster.RANDOM)
    # redis-py answers {(lo, hi): {"primary": (host, port), ...}}; the
    # raw reply is [[lo, hi, [host, port, id], replicas...], ...]
    rows = ([(lo, hi, v["primary"]) for (lo, hi), v in reply.items()]
            if isinstance(reply, dict) else [(r[0], r[1], r[2])
                                             for r in reply])
    for lo, hi, primary in rows:
        host, port = _text(primary[0]), primary[1]
        by_node.setdefault((host, int(port)), []).append((int(lo), int(hi)))
    return sorted((_merge(r) for r in by_node.values()), key=lambda r: r[0])


def _tag_in(rc: Any, ranges: List[Tuple[int, int]]) -> str:
    """The first tag t (a number) whose slot lies in ranges."""
    for t in range(1 << 20):
        s = rc.keyslot("{%d}" % t)
        if any(lo <= s <= hi for lo, hi in ranges):
            return str(t)
    raise _invalid("no key name hashes into %r" % (ranges,))


def migrate_slots(rc: Any, lo: int, hi: int, host: str, port: int, *,
                  timeout_ms: int = 5000, batch: int = 100) -> int:
    """Move slots lo..hi to the primary at host:port with Redis Cluster's
    own steps, slot by slot: IMPORTING on the destination, MIGRATING on
    the source, MIGRATE of the slot's keys, then SETSLOT NODE on both and
    on every other primary. Returns the keys moved. The cluster answers
    for every key throughout (ASK redirections while a slot moves)."""
    from redis.client import Redis  # type: ignore[import]
    if not 0 <= lo <= hi < SLOTS:
        raise _invalid("slots are 0 .. %d, not %d .. %d" % (SLOTS - 1, lo,
                                                            hi))
    conns: Dict[Tuple[str, int], Any] = {}

    def conn(h: str, p: int) -> Any:
        if (h, p) not in conns:
            conns[(h, p)] = Redis(host=h, port=p)
        return conns[(h, p)]

    dst = conn(host, port)
    dst_id = _text(dst.execute_command("CLUSTER MYID"))
    rc.nodes_manager.initialize()
    primaries = [(n.host, n.port) for n in rc.get_primaries()]
    moved = 0
    try:
        for slot in range(lo, hi + 1):
            node = rc.nodes_manager.get_node_from_slot(slot)
            if (node.host, node.port) == (host, port):
                continue
            src = conn(node.host, node.port)
            src_id = _text(src.execute_command("CLUSTER MYID"))
            dst.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", src_id)
            src.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", dst_id)
            while True:
                keys = src.execute_command("CLUSTER GETKEYSINSLOT", slot,
                                           batch)
                if not keys:
                    break
                src.execute_command("MIGRATE", host, port, "", 0,
                                    timeout_ms, "KEYS", *keys)
                moved += len(keys)
            for h, p in [(host, port), (node.host, node.port)] + \
                    [x for x in primaries
                     if x not in ((host, port), (node.host, node.port))]:
                conn(h, p).execute_command("CLUSTER SETSLOT", slot, "NODE",
                                           dst_id)
    finally:
        for c in conns.values():
            c.close()
        rc.nodes_manager.initialize()
    return moved


class ShardedCascade:
    """Per-shard cascades of one key set, loaded into a Redis Cluster,
    with their configuration (slot map, live keys, epoch)."""

    def __init__(self, rc: Any, name: str, eps: float, shards: List[Shard],
                 *, epoch: int = 0,
                 slot_queries: Optional[Dict[int, int]] = None,
                 moves: Optional[List[Tuple[int, int, int]]] = None) -> None:
        self.rc, self.name, self.eps, self.shards = rc, name, eps, shards
        self.epoch = epoch
        self.slot_queries: Dict[int, int] = dict(slot_queries or {})
        self.moves: List[Tuple[int, int, int]] = list(moves or [])
        self._audit: Optional[Tuple[float, int, int]] = None
        self._index()

    def _index(self) -> None:
        self._slot_shard: List[int] = [-1] * SLOTS
        for i, s in enumerate(self.shards):
            for lo, hi in s.slots:
                for slot in range(lo, hi + 1):
                    self._slot_shard[slot] = i
        if -1 in self._slot_shard:
            raise _invalid("slot %d belongs to no shard" %
                           self._slot_shard.index(-1))

    def _reweigh(self) -> None:
        """Each shard's share of the sampled non-member queries, from the
        per-slot counts (so a slot move carries its queries along)."""
        total = sum(self.slot_queries.values())
        if total == 0:
            return
        cnt = [0] * len(self.shards)
        for slot, n in self.slot_queries.items():
            cnt[self._slot_shard[slot]] += n
        for s, c in zip(self.shards, cnt):
            s.weight = c / total

    def _key(self, epoch: int, tag: str, standby: bool = False) -> str:
        return "%s.%d%s{%s}" % (self.name, epoch, ".plain" if standby else "",
                                tag)

    @property
    def config_key(self) -> str:
        return self.name + ".config"

    # ---- training -------------------------------------------------------------

    @classmethod
    def train(cls, rc: Any, members: Sequence[Any], nonmembers: Sequence[Any],
              eps: float, *, name: str = "cascade",
              curve: Sequence[float] = (4.0, 2.0, 1.0, 0.5, 0.25),
              headroom: float = HEADROOM, standby: bool = False,
              load: bool = True, **train_kw: Any) -> "ShardedCascade":
        """Split members and the sample of non-member queries by their
        slots' shards, measure each shard's curve at eps times each factor
        of `curve`, choose the budgets (sum w_m eps_m <= eps), train every
        shard at its budget and (load=True) AMQ.CASCADE.LOAD it into its
        key, then publish the configuration (epoch 1) under NAME.config.

        headroom: each shard's insert buffer as a share of its members
        (add() and move_slots() fill it; 0: none). standby=True also loads
        a plain filter per shard at its budget (a split-block Bloom filter
        over the same members, with the same headroom), to which check()
        switches a shard whose audit breaks its bound. train_kw go to
        amq.Cascade (dim_bits, residual, aux_capacity, worst_case, ...).
        The non-member sample is both the training's non-members and the
        measure of the shares w_m, so it should be drawn from the queries
        the cluster is asked."""
        if not 0.0 < eps < 1.0:
            raise _invalid("eps must be in (0, 1)")
        if not name or any(c in name for c in "{}"):
            raise _invalid("a name without braces, not %r" % (name,))
        if not 0.0 <= headroom <= 1.0:
            raise _invalid("headroom is a share of the members, in [0, 1]")
        ranges = _slot_ranges(rc)
        if not ranges:
            raise _invalid("CLUSTER SLOTS lists no primary")
        shards = [Shard(r, "", _tag_in(rc, r)) for r in ranges]
        sc = cls(rc, name, eps, shards)
        sc._build(members, nonmembers, 1, None, curve, headroom, standby,
                  load, train_kw)
        if load:
            sc.publish()
        else:
            sc.epoch = 1
        return sc

    def _build(self, members: Sequence[Any], nonmembers: Sequence[Any],
               epoch: int, weights: Optional[Sequence[float]],
               curve: Sequence[float], headroom: float, standby: bool,
               load: bool, train_kw: Dict[str, Any]) -> None:
        """Train and load every shard's keys of `epoch`; the old keys go
        to each shard's `old` list."""
        mem: List[List[Any]] = [[] for _ in self.shards]
        non: List[List[Any]] = [[] for _ in self.shards]
        slots: Dict[int, int] = {}
        for k in members:
            mem[self.shard_of(k)].append(k)
        for k in nonmembers:
            slot = self.rc.keyslot(k)
            slots[slot] = slots.get(slot, 0) + 1
            non[self._slot_shard[slot]].append(k)
        if not slots:
            raise _invalid("no non-member queries to train and weigh on")
        for s, m, n in zip(self.shards, mem, non):
            if not m or not n:
                raise _invalid(
                    "shard %s has %d members and %d non-member queries: "
                    "each shard needs both" % (s.tag, len(m), len(n)))
        self.slot_queries = slots
        self._reweigh()
        if weights is not None:
            if len(weights) != len(self.shards) or \
                    not math.isclose(sum(weights), 1.0, rel_tol=1e-6) or \
                    any(w < 0 for w in weights):
                raise _invalid("one share a shard, non-negative, summing "
                               "to 1")
            for s, w in zip(self.shards, weights):
                s.weight = float(w)
        for s, m, n in zip(self.shards, mem, non):
            s.room = math.ceil(headroom * len(m))
            s.curve = []
            for e in sorted({min(0.5, self.eps * f) for f in curve}):
                try:  # a point nothing certifies is left off the curve
                    got = self._candidates(m, n, s.room, e, train_kw)
                except FullError:
                    continue
                s.curve.append((e, float(got[0][0])))
            if not s.curve:
                raise FullError(5, "no filter certifies a rate in %g .. %g "
                                "for shard %s (%d members)" %
                                (self.eps * min(curve), self.eps * max(curve),
                                 s.tag, len(m)))
        reach = sum(s.weight * min(e for e, _ in s.curve)
                    for s in self.shards)
        if reach > self.eps * (1 + 1e-9):
            raise FullError(5, "eps %g is out of reach: the lowest rates the "
                            "shards certify compose to %g (more non-member "
                            "queries to certify on, or a larger eps)" %
                            (self.eps, reach))
        budgets = shard_budgets([(s.weight, s.curve) for s in self.shards],
                                self.eps)
        for s, (e, _), m, n in zip(self.shards, budgets, mem, non):
            bits, kind, obj = min(self._candidates(m, n, s.room, e,
                                                   train_kw, keep=True),
                                  key=lambda x: x[0])
            s.members, s.eps, s.bits, s.bound = (len(m), e, bits,
                                                 obj.fpr_bound)
            key = self._key(epoch, s.tag)
            plain = self._key(epoch, s.tag, True) if standby else ""
            if load:
                self._fresh(key, epoch)
                self.rc.execute_command(_OPS[kind][3], key, obj.to_bytes())
            obj.close()
            if plain and load:
                flt = self._plain(m, s.room, e)
                self._fresh(plain, epoch)
                self.rc.execute_command("AMQ.LOAD", plain, flt.to_bytes())
                flt.close()
            s.old += [k for k in (s.key, s.standby) if k]
            s.key, s.kind, s.standby, s.on_standby = key, kind, plain, False

    @staticmethod
    def _plain(members: Sequence[Any], room: int, eps: float) -> Filter:
        flt = Filter(STANDBY_SPEC, len(members) + room, eps)
        flt.add_many(members)
        return flt

    def _candidates(self, m: Sequence[Any], n: Sequence[Any], room: int,
                    eps: float, train_kw: Dict[str, Any],
                    keep: bool = False) -> List[Tuple[int, str, Any]]:
        """(bits, kind, object) of what can serve a shard at eps with room
        for `room` adds: a learned cascade (with an insert buffer of that
        size; none when training cannot certify eps) and a plain dynamic
        filter (which takes the adds itself), smallest first. Objects are
        closed unless keep."""
        out: List[Tuple[int, str, Any]] = []
        kw = dict(train_kw)
        if room > 0:
            kw.setdefault("aux_capacity", room)
        try:
            c = Cascade(m, n, fpr=eps, **kw)
            out.append((8 * c.size_bytes, "cascade", c))
        except FullError:
            pass
        if "aux_capacity" not in train_kw and room > 0:
            # a plain filter with room of its own (training's plain
            # candidates are static and take no adds)
            flt = self._plain(m, room, eps)
            out.append((8 * len(flt.to_bytes()), "filter", flt))
        if not out:
            raise FullError(5, "no filter certifies eps %g for a shard of "
                            "%d members" % (eps, len(m)))
        out.sort(key=lambda x: x[0])
        if not keep:
            for x in out:
                x[2].close()
        else:
            for x in out[1:]:
                x[2].close()
            out = out[:1]
        return out

    def _fresh(self, key: str, epoch: int) -> None:
        """Make room for a key of a new epoch: one left by a build that
        never published goes; one a published configuration names is an
        error (another process rolled out meanwhile)."""
        if not self.rc.exists(key):
            return
        stored = self._stored()
        if stored is not None and stored["epoch"] >= epoch:
            raise _invalid("epoch %d is already published (by another "
                           "process): refresh() first" % epoch)
        self.rc.delete(key)

    # ---- the configuration ----------------------------------------------------

    def _stored(self) -> Optional[Dict[str, Any]]:
        text = self.rc.get(self.config_key)
        return None if text is None else json.loads(text)

    def publish(self) -> int:
        """Store the configuration as the next epoch (compare-and-set: an
        epoch published meanwhile by another process is an error, and
        nothing is written). Returns the new epoch."""
        self.epoch += 1
        got = self.rc.eval(_CAS, 1, self.config_key, self.epoch - 1,
                           self.to_json())
        if int(got) != -1:
            self.epoch -= 1
            raise _invalid("the configuration is at epoch %d, this object "
                           "at %d: refresh() first" % (int(got), self.epoch))
        return self.epoch

    @classmethod
    def open(cls, rc: Any, name: str = "cascade") -> "ShardedCascade":
        """The sharded cascade whose configuration is stored under
        NAME.config. NotFoundError if there is none."""
        text = rc.get(name + ".config")
        if text is None:
            raise NotFoundError(14, "no configuration %s.config" % name)
        return cls.from_json(rc, text)

    def refresh(self) -> bool:
        """Reread the stored configuration; True if its epoch changed."""
        d = self._stored()
        if d is None or d["epoch"] == self.epoch:
            return False
        other = self.from_json(self.rc, json.dumps(d))
        self.eps, self.shards, self.epoch = other.eps, other.shards, other.epoch
        self.slot_queries, self.moves = other.slot_queries, other.moves
        self._index()
        return True

    def to_json(self) -> str:
        """The configuration: what from_json needs to query the keys."""
        return json.dumps({
            "name": self.name, "eps": self.eps, "epoch": self.epoch,
            "slot_queries": {str(k): v for k, v in
                             sorted(self.slot_queries.items())},
            "moves": [list(m) for m in self.moves],
            "shards": [asdict(s) for s in self.shards]})

    @classmethod
    def from_json(cls, rc: Any, text: str) -> "ShardedCascade":
        d = json.loads(text)
        shards = []
        for s in d["shards"]:
            s = dict(s)
            s["slots"] = [(int(r[0]), int(r[1])) for r in s["slots"]]
            s["curve"] = [(float(p[0]), float(p[1])) for p in s["curve"]]
            shards.append(Shard(**s))
        return cls(rc, d["name"], float(d["eps"]), shards,
                   epoch=int(d.get("epoch", 0)),
                   slot_queries={int(k): int(v) for k, v in
                                 d.get("slot_queries", {}).items()},
                   moves=[(int(m[0]), int(m[1]), int(m[2]))
                          for m in d.get("moves", [])])

    # ---- queries ----------------------------------------------------------------

    def shard_of(self, key: Any) -> int:
        """Index of the shard that answers for key's slot."""
        return self._slot_shard[self.rc.keyslot(key)]

    def contains(self, key: Any) -> bool:
        return self.contains_many([key])[0]

    def contains_many(self, keys: Sequence[Any]) -> List[bool]:
        """One MEXISTS a shard (up to 1000 items a command); answers in
        the keys' order. Each command is followed, in the same round trip,
        by EXISTS of the key it asked: a key retired meanwhile is seen,
        the configuration reread and the shard asked again."""
        out = [False] * len(keys)
        pending = list(range(len(keys)))
        for _ in range(3):
            groups: Dict[int, List[int]] = {}
            for i in pending:
                groups.setdefault(self.shard_of(keys[i]), []).append(i)
            pending = []
            for si, idx in groups.items():
                key, kind = self.shards[si].live
                for a in range(0, len(idx), _BATCH):
                    part = idx[a:a + _BATCH]
                    p = self.rc.pipeline(transaction=False)
                    p.execute_command(_OPS[kind][0], key,
                                      *[keys[i] for i in part])
                    p.execute_command("EXISTS", key)
                    got, present = p.execute()
                    if not present:
                        pending += part
                        continue
                    for i, g in zip(part, got):
                        out[i] = bool(g)
            if not pending or not self.refresh():
                break
        if pending:
            gone = self.shards[self.shard_of(keys[pending[0]])].live[0]
            raise NotFoundError(14, "the key %s is gone and the stored "
                                "configuration names no other" % gone)
        return out

    def _targets(self, si: int) -> List[Tuple[str, str]]:
        s = self.shards[si]
        out = [(_OPS[s.kind][1], s.key)]
        if s.standby:
            out.append(("AMQ.MADD", s.standby))
        return out

    def add(self, keys: Sequence[Any]) -> int:
        """New members, into their shard's insert buffer (and its standby;
        and the destination's too while their slot is being moved).
        FullError when a buffer is full: rollout() with every member."""
        groups: Dict[int, List[Any]] = {}
        for k in keys:
            slot = self.rc.keyslot(k)
            si = self._slot_shard[slot]
            groups.setdefault(si, []).append(k)
            for lo, hi, dst in self.moves:
                if lo <= slot <= hi and dst != si:
                    groups.setdefault(dst, []).append(k)
        for si, items in groups.items():
            self._add_to(si, items)
        return len(keys)

    def _add_to(self, si: int, items: Sequence[Any]) -> None:
        from redis.exceptions import ResponseError  # type: ignore[import]
        for cmd, key in self._targets(si):
            for a in range(0, len(items), _BATCH):
                try:
                    self.rc.execute_command(cmd, key, *items[a:a + _BATCH])
                except ResponseError as e:
                    raise FullError(5, "%s: %s; rollout() with every member "
                                    "rebuilds it" % (key, e)) from None

    # ---- the global bound -----------------------------------------------------

    def _info(self, s: Shard, live: bool = True) -> Dict[str, Any]:
        key, kind = s.live if live else (s.key, s.kind)
        return _fields(self.rc.execute_command(_OPS[kind][2], key))

    def _room_left(self, s: Shard) -> int:
        """Adds the shard's key (and its standby) can still take."""
        info = self._info(s, live=False)
        used = int(info["Added"]) if s.kind == "cascade" else \
            int(info["Items"]) - s.members
        return s.room - used

    def shard_bounds(self) -> List[float]:
        """Each live key's certified bound now (its INFO's Error bound)."""
        return [float(self._info(s)["Error bound"]) for s in self.shards]

    def bound(self, weights: Optional[Sequence[float]] = None) -> float:
        """sum w_m bound_m: the cluster's certified false-positive bound
        for a non-member query drawn as the training sample was (or with
        the shares `weights`). While a slot range moves, its share counts
        against the source's and the destination's bounds both."""
        w = [s.weight for s in self.shards] if weights is None else weights
        if len(w) != len(self.shards) or any(x < 0 for x in w) or \
                not math.isclose(sum(w), 1.0, rel_tol=1e-6):
            raise _invalid("one share a shard, non-negative, summing "
                           "to 1")
        b = self.shard_bounds()
        return sum(x * y for x, y in zip(w, b))

    def shares(self, queries: Sequence[Any]) -> List[float]:
        """The shards' shares of a sample of queries (to recompose the
        bound when the queries drift: bound(sc.shares(sample)))."""
        cnt = [0] * len(self.shards)
        for k in queries:
            cnt[self.shard_of(k)] += 1
        t = sum(cnt)
        if t == 0:
            raise _invalid("no queries")
        return [c / t for c in cnt]

    def replan(self, weights: Sequence[float]) -> List[Tuple[float, float]]:
        """The budgets (eps_m, bits_m) the allocation engine would choose
        for these shares, from the curves measured at training."""
        return shard_budgets([(w, s.curve) for w, s in
                              zip(weights, self.shards)], self.eps)

    def info(self) -> Dict[str, Any]:
        bounds = self.shard_bounds()
        return {
            "name": self.name, "eps": self.eps, "epoch": self.epoch,
            "bound": sum(s.weight * b for s, b in zip(self.shards, bounds)),
            "bits": sum(s.bits for s in self.shards),
            "shards": [{"key": s.live[0], "slots": s.slots, "members": s.members,
                        "weight": s.weight, "eps": s.eps, "bits": s.bits,
                        "bound": b, "standby": s.on_standby}
                       for s, b in zip(self.shards, bounds)]}

    # ---- audits -----------------------------------------------------------------

    def audit(self, rate: float, *, seed: int = 0,
              window: int = 100000) -> None:
        """Start (restart) the shadow-sampling audit of every shard's
        cascade key: a share `rate` of its queries is kept for the truth
        (AMQ.CASCADE.AUDIT). Audits live on the primaries, in memory:
        audit_step() restarts one that a failover or restart lost."""
        self._audit = (float(rate), int(seed), int(window))
        for i, s in enumerate(self.shards):
            if s.kind == "cascade":
                self._audit_on(i, s)

    def _audit_on(self, i: int, s: Shard) -> None:
        assert self._audit is not None
        rate, seed, window = self._audit
        self.rc.execute_command("AMQ.CASCADE.AUDIT", s.key, "RATE", rate,
                                "SEED", seed + i, "WINDOW", window)

    def audit_step(self, is_member: Callable[[List[bytes]], Iterable[Any]],
                   count: int = 1000) -> int:
        """Pop up to `count` sampled queries a shard, ask is_member(items)
        (the store's answer for each: a lookup the cascade did not
        filter) and report the truths back. Returns the truths given."""
        from redis.exceptions import ResponseError  # type: ignore[import]
        done = 0
        for i, s in enumerate(self.shards):
            if s.kind != "cascade":
                continue
            try:
                items = self.rc.execute_command("AMQ.CASCADE.SAMPLES", s.key,
                                                "COUNT", count)
            except ResponseError as e:
                if "no audit" in str(e) and self._audit is not None:
                    self._audit_on(i, s)
                    continue
                raise
            if not items:
                continue
            truth = [1 if t else 0 for t in is_member(list(items))]
            if len(truth) != len(items):
                raise _invalid("is_member answered %d truths for %d items" %
                               (len(truth), len(items)))
            args: List[Any] = []
            for k, t in zip(items, truth):
                args += [k, t]
            self.rc.execute_command("AMQ.CASCADE.TRUTH", s.key, *args)
            done += len(items)
        return done

    def check(self, *, switch: bool = True) -> Health:
        """Read every shard's audit: estimate the shards' shares of the
        non-member queries and recompose the global bound with them; list
        the shards whose bound the audit found violated (or whose key fell
        back to a bound above its budget) and, with switch=True, move
        those that have a standby onto it (publishing a new epoch); say
        replan when the recomposed bound passes eps or a broken shard has
        no standby."""
        est: List[Optional[float]] = []
        fph: List[float] = []
        violated, switched, unaudited = [], [], []
        for i, s in enumerate(self.shards):
            info = self._info(s, live=False)
            a = _fields(info.get("Audit"))
            bound = float(info["Error bound"])
            if a:
                q = int(a["Queries"])
                mem = int(a["Members reported"])
                non = int(a["Non-members reported"])
                est.append(q * non / (mem + non) if mem + non else None)
                fph.append(float(a["FPR estimate"]) if non else bound)
                broke = bool(int(a["Violated"]))
            else:
                est.append(None)
                fph.append(bound)
                broke = False
            if not a or (est[-1] is None):
                unaudited.append(i)
            if broke or bound > s.eps * (1 + 1e-9) + 1e-12:
                violated.append(i)
                if switch and s.standby and not s.on_standby:
                    s.on_standby = True
                    switched.append(i)
        if switched:
            self.publish()
        bounds = self.shard_bounds()
        shares: Optional[List[float]] = None
        known = [e for e in est if e is not None]
        if known and sum(known) > 0:
            # a shard without evidence keeps its training share
            tot = sum(known)
            unknown_w = sum(s.weight for s, e in zip(self.shards, est)
                            if e is None)
            shares = [(e / tot) * (1.0 - unknown_w) if e is not None else
                      s.weight for s, e in zip(self.shards, est)]
        bound = sum(s.weight * b for s, b in zip(self.shards, bounds))
        measured = (sum(w * b for w, b in zip(shares, bounds))
                    if shares is not None else None)
        fpr = (sum(w * f for w, f in zip(shares, fph))
               if shares is not None else None)
        broken = any(not self.shards[i].on_standby for i in violated)
        return Health(self.epoch, bound, max(bounds), measured, shares, fpr,
                      violated, switched, unaudited,
                      broken or (measured is not None and
                                 measured > self.eps * (1 + 1e-9)))

    def use_standby(self, shard: int, on: bool = True) -> None:
        """Answer a shard's queries from its standby (on) or its cascade."""
        s = self.shards[shard]
        if on and not s.standby:
            raise _invalid("shard %d has no standby (train(standby=True))" %
                           shard)
        if s.on_standby != on:
            s.on_standby = on
            self.publish()

    # ---- rollouts -----------------------------------------------------------------

    def rollout(self, members: Sequence[Any], nonmembers: Sequence[Any], *,
                weights: Optional[Sequence[float]] = None,
                curve: Sequence[float] = (4.0, 2.0, 1.0, 0.5, 0.25),
                headroom: float = HEADROOM, standby: Optional[bool] = None,
                **train_kw: Any) -> int:
        """Train every shard again (the members now, a fresh sample of
        non-member queries; weights, e.g. check().shares, in place of the
        sample's shares) and load the new keys beside the old ones under
        the next epoch, then publish it. Clients on the old epoch go on
        answering from the old keys, which stay until retire(). Returns
        the new epoch."""
        self.refresh()
        if self.moves:
            raise _invalid("a slot move is under way")
        sb = any(s.standby for s in self.shards) if standby is None \
            else standby
        self._build(members, nonmembers, self.epoch + 1, weights, curve,
                    headroom, sb, True, train_kw)
        return self.publish()

    def retire(self) -> int:
        """Delete the keys of earlier epochs (once every client has read
        the current one; a client that still asks a retired key rereads
        the configuration and asks again). Returns the keys deleted."""
        gone = 0
        for s in self.shards:
            for k in s.old:
                gone += int(self.rc.delete(k))
            s.old = []
        self.publish()
        return gone

    # ---- slot moves -----------------------------------------------------------------

    def move_slots(self, lo: int, hi: int, shard: int, *,
                   members: Optional[Sequence[Any]] = None) -> int:
        """Move slots lo..hi to the node that holds shard's key, its
        filter with it: the range's members (`members`, or every key the
        cluster holds in those slots apart from this cascade's own) are
        added to the shard's insert buffer first, then the slots move
        (migrate_slots) and the configuration names the shard as their
        owner. Returns the members added. FullError, before anything
        moves, when the buffer cannot take them.

        A move that stopped part way (an error from a node, a lost
        connection) stays in the configuration: writers go on adding the
        range's new members to both shards, and the same call again
        resumes it without adding the members twice (it returns 0)."""
        self.refresh()
        if not 0 <= lo <= hi < SLOTS or not 0 <= shard < len(self.shards):
            raise _invalid("slots 0 .. %d and a shard 0 .. %d" %
                           (SLOTS - 1, len(self.shards) - 1))
        if (lo, hi, shard) in self.moves:
            self._finish_move(lo, hi, shard, 0)
            return 0
        if any(a <= hi and lo <= b for a, b, _ in self.moves):
            raise _invalid("slots %d .. %d overlap a move under way: "
                           "finish it first" % (lo, hi))
        if members is None:
            items = self._keys_in(lo, hi)
        else:
            items = [k for k in members if lo <= self.rc.keyslot(k) <= hi]
        items = [k for k in items if self.shard_of(k) != shard]
        dst = self.shards[shard]
        left = self._room_left(dst)
        if len(items) > left:
            raise FullError(5, "%s takes %d more members, not %d: "
                            "rollout() rebuilds it" %
                            (dst.key, left, len(items)))
        self._add_to(shard, items)
        self.moves.append((lo, hi, shard))
        self.publish()
        self._finish_move(lo, hi, shard, len(items))
        return len(items)

    def _finish_move(self, lo: int, hi: int, shard: int, added: int) -> None:
        dst = self.shards[shard]
        node = self.rc.get_node_from_key(dst.live[0])
        migrate_slots(self.rc, lo, hi, node.host, node.port)
        for i, s in enumerate(self.shards):
            s.slots = _minus(s.slots, lo, hi)
            if i == shard:
                s.slots = _merge(s.slots + [(lo, hi)])
        dst.members += added
        self.moves.remove((lo, hi, shard))
        self._index()
        self._reweigh()
        self.publish()

    def _keys_in(self, lo: int, hi: int) -> List[Any]:
        """The keys the cluster holds in slots lo..hi, apart from this
        cascade's own keys (NAME.*)."""
        own = self.name + "."
        out: List[Any] = []
        for slot in range(lo, hi + 1):
            node = self.rc.nodes_manager.get_node_from_slot(slot)
            n = int(self.rc.execute_command("CLUSTER COUNTKEYSINSLOT", slot,
                                            target_nodes=node))
            if n:
                got = self.rc.execute_command("CLUSTER GETKEYSINSLOT", slot, n,
                                              target_nodes=node)
                out += [k for k in got if not _text(k).startswith(own)]
        return out
