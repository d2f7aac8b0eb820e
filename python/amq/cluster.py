"""amq.cluster: one learned cascade per shard of a Redis Cluster, with
one global certified bound (docs/cluster.md).

A shard is a primary and its slot ranges. Every member key belongs to the
shard that owns its slot (CLUSTER KEYSLOT), so each shard gets a cascade
trained on its own members and on the non-member queries it is asked,
stored as an AMQ.CASCADE key whose name hashes into the shard's slots:
the cluster keeps the cascade next to the data it guards, replicates it
and moves it on failover.

Budgets. Shard m receives a share w_m of the non-member queries. A query
for an absent key is answered by its shard's cascade only, so the
cluster's false-positive rate is sum w_m eps_m, and each eps_m is
certified by that shard's bound. train() measures each shard's
memory-vs-eps curve (cascades trained at a few rates around the target)
and lets the allocation engine choose the eps_m that minimise the total
memory subject to sum w_m eps_m <= eps (amq_cascade_shard_budgets); then
it trains every shard at its eps_m. bound() recomposes the global bound
from the loaded keys' own certified bounds (AMQ.CASCADE.INFO), so it
follows their residual loads, inserts and fallbacks.

Queries: contains(key) asks AMQ.CASCADE.EXISTS on the cascade key of the
shard that owns key's slot; redis-py's RedisCluster routes the command to
the node that holds that key. The map from slots to cascade keys is made
from CLUSTER SLOTS at train() and kept in the ShardedCascade (save it
with to_json()). When slots move, retrain: a moved slot range's members
are then in another shard's cascade.

Needs redis-py (Debian python3-redis) for the cluster; everything else is
the amq binding.
"""

import ctypes
import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._cascade import Cascade
from ._errors import check
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


@dataclass
class Shard:
    """One shard: its slot ranges, its cascade key, and what training
    measured and chose."""
    slots: List[Tuple[int, int]]
    key: str
    members: int = 0
    weight: float = 0.0          # share of the non-member queries
    eps: float = 0.0             # its budget
    bits: int = 0                # its cascade's bytes * 8
    bound: float = 0.0           # its certified bound at train()
    curve: List[Tuple[float, float]] = field(default_factory=list)


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
        host, port = primary[0], primary[1]
        if isinstance(host, bytes):
            host = host.decode()
        by_node.setdefault((host, int(port)), []).append((int(lo), int(hi)))
    return sorted((sorted(r) for r in by_node.values()), key=lambda r: r[0])


def _key_in(rc: Any, name: str, ranges: List[Tuple[int, int]]) -> str:
    """name{t} with the first tag t whose slot lies in ranges."""
    for t in range(1 << 20):
        k = "%s{%d}" % (name, t)
        s = rc.keyslot(k)
        if any(lo <= s <= hi for lo, hi in ranges):
            return k
    raise _invalid("no key name hashes into %r" % (ranges,))


class ShardedCascade:
    """Per-shard cascades of one key set, loaded into a Redis Cluster."""

    def __init__(self, rc: Any, name: str, eps: float,
                 shards: List[Shard]) -> None:
        self.rc, self.name, self.eps, self.shards = rc, name, eps, shards
        self._slot_shard: List[int] = [0] * 16384
        for i, s in enumerate(shards):
            for lo, hi in s.slots:
                for slot in range(lo, hi + 1):
                    self._slot_shard[slot] = i

    # ---- training -------------------------------------------------------------

    @classmethod
    def train(cls, rc: Any, members: Sequence[Any], nonmembers: Sequence[Any],
              eps: float, *, name: str = "cascade",
              curve: Sequence[float] = (4.0, 2.0, 1.0, 0.5, 0.25),
              load: bool = True, **train_kw: Any) -> "ShardedCascade":
        """Split members and the sample of non-member queries by their
        slots' shards, measure each shard's curve at eps times each factor
        of `curve`, choose the budgets (sum w_m eps_m <= eps), train every
        shard at its budget and (load=True) AMQ.CASCADE.LOAD it into its
        key. train_kw go to amq.Cascade (dim_bits, residual, aux_capacity,
        worst_case, ...). The non-member sample is both the training's
        non-members and the measure of the shares w_m, so it should be
        drawn from the queries the cluster is asked."""
        if not 0.0 < eps < 1.0:
            raise _invalid("eps must be in (0, 1)")
        ranges = _slot_ranges(rc)
        if not ranges:
            raise _invalid("CLUSTER SLOTS lists no primary")
        shards = [Shard(r, _key_in(rc, name, r)) for r in ranges]
        sc = cls(rc, name, eps, shards)
        mem: List[List[Any]] = [[] for _ in shards]
        non: List[List[Any]] = [[] for _ in shards]
        for k in members:
            mem[sc.shard_of(k)].append(k)
        for k in nonmembers:
            non[sc.shard_of(k)].append(k)
        total = sum(len(x) for x in non)
        if total == 0:
            raise _invalid("no non-member queries to train and weigh on")
        curves = []
        for s, m, n in zip(shards, mem, non):
            if not m or not n:
                raise _invalid(
                    "shard %s has %d members and %d non-member queries: "
                    "each shard needs both" % (s.key, len(m), len(n)))
            s.members, s.weight = len(m), len(n) / total
            for f in curve:
                e = min(0.5, eps * f)
                c = Cascade(m, n, fpr=e, **train_kw)
                s.curve.append((e, 8.0 * c.size_bytes))
                c.close()
            curves.append((s.weight, s.curve))
        for s, (e, _), m, n in zip(shards, shard_budgets(curves, eps), mem,
                                   non):
            c = Cascade(m, n, fpr=e, **train_kw)
            s.eps, s.bits, s.bound = e, 8 * c.size_bytes, c.fpr_bound
            if load:
                rc.delete(s.key)
                rc.execute_command("AMQ.CASCADE.LOAD", s.key, c.to_bytes())
            c.close()
        return sc

    # ---- queries ----------------------------------------------------------------

    def shard_of(self, key: Any) -> int:
        """Index of the shard that owns key's slot."""
        return self._slot_shard[self.rc.keyslot(key)]

    def contains(self, key: Any) -> bool:
        s = self.shards[self.shard_of(key)]
        return bool(self.rc.execute_command("AMQ.CASCADE.EXISTS", s.key, key))

    def contains_many(self, keys: Sequence[Any]) -> List[bool]:
        """One AMQ.CASCADE.MEXISTS a shard; answers in the keys' order."""
        groups: Dict[int, List[int]] = {}
        for i, k in enumerate(keys):
            groups.setdefault(self.shard_of(k), []).append(i)
        out = [False] * len(keys)
        for si, idx in groups.items():
            key = self.shards[si].key
            for a in range(0, len(idx), 1000):
                part = idx[a:a + 1000]
                got = self.rc.execute_command("AMQ.CASCADE.MEXISTS", key,
                                              *[keys[i] for i in part])
                for i, g in zip(part, got):
                    out[i] = bool(g)
        return out

    # ---- the global bound -----------------------------------------------------

    def shard_bounds(self) -> List[float]:
        """Each loaded key's certified bound now (AMQ.CASCADE.INFO)."""
        out = []
        for s in self.shards:
            info = self.rc.execute_command("AMQ.CASCADE.INFO", s.key)
            if isinstance(info, list):
                info = dict(zip(info[::2], info[1::2]))
            info = {(k.decode() if isinstance(k, bytes) else k): v
                    for k, v in info.items()}
            out.append(float(info["Error bound"]))
        return out

    def bound(self, weights: Optional[Sequence[float]] = None) -> float:
        """sum w_m bound_m: the cluster's certified false-positive bound
        for a non-member query drawn as the training sample was (or with
        the shares `weights`)."""
        w = [s.weight for s in self.shards] if weights is None else weights
        if len(w) != len(self.shards) or any(x < 0 for x in w) or \
                not math.isclose(sum(w), 1.0, rel_tol=1e-6):
            raise _invalid("one share a shard, non-negative, summing "
                               "to 1")
        return sum(x * b for x, b in zip(w, self.shard_bounds()))

    def shares(self, queries: Sequence[Any]) -> List[float]:
        """The shares of the shards among a sample of queries (to recompose
        the bound when the queries drift: bound(sc.shares(sample)))."""
        cnt = [0] * len(self.shards)
        for k in queries:
            cnt[self.shard_of(k)] += 1
        t = sum(cnt)
        if t == 0:
            raise _invalid("no queries")
        return [c / t for c in cnt]

    def info(self) -> Dict[str, Any]:
        bounds = self.shard_bounds()
        return {
            "name": self.name, "eps": self.eps,
            "bound": sum(s.weight * b for s, b in zip(self.shards, bounds)),
            "bits": sum(s.bits for s in self.shards),
            "shards": [{"key": s.key, "slots": s.slots, "members": s.members,
                        "weight": s.weight, "eps": s.eps, "bits": s.bits,
                        "bound": b} for s, b in zip(self.shards, bounds)]}

    def to_json(self) -> str:
        """What from_json needs to query the loaded keys again."""
        return json.dumps({
            "name": self.name, "eps": self.eps,
            "shards": [{"slots": s.slots, "key": s.key, "members": s.members,
                        "weight": s.weight, "eps": s.eps, "bits": s.bits,
                        "bound": s.bound, "curve": s.curve}
                       for s in self.shards]})

    @classmethod
    def from_json(cls, rc: Any, text: str) -> "ShardedCascade":
        d = json.loads(text)
        shards = [Shard([(int(r[0]), int(r[1])) for r in s["slots"]],
                        str(s["key"]), int(s["members"]), float(s["weight"]),
                        float(s["eps"]), int(s["bits"]), float(s["bound"]),
                        [(float(p[0]), float(p[1])) for p in s["curve"]])
                  for s in d["shards"]]
        return cls(rc, d["name"], d["eps"], shards)
