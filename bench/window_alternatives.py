"""Memory of two classic sliding-window designs against one Bloom filter
for the window, by exact computation (docs/structures.md, "Sliding
windows", "Why not an age-partitioned Bloom filter").

Age-partitioned Bloom filter (Shtul, Baquero, Almeida 2020): k + l slices
of m bits; a key sets one bit in each of k consecutive slices (slices 0..k-1
when added; every g adds the slices shift by one and the oldest is
cleared); a query answers present when some k consecutive slices all hold
its bit. Slice i holds min(i, k - 1) + 1 generations of g keys, so at the
worst moment its fill is 1 - exp(-j g / m); a key never added is a false
positive when a run of k hits occurs, which a dynamic program over the
slices computes exactly (bit independence assumed, as in the paper). It is
sure to hold the last l g keys. The search minimises bits per held key,
(k + l) m / (l g), at the target rate over k, l and m / g.

Ring of G + 1 Bloom filters: each generation of n / G keys in its own
Bloom filter at eps / (G + 1); bits per window key (1 + 1/G) 1.44
log2((G + 1) / eps).

Run: python3 bench/window_alternatives.py
"""
import math

LN2 = math.log(2)


def run_prob(fills, k):
    """P(some k consecutive slices all hit), slices independent."""
    state = [0.0] * (k + 1)  # run length so far, k: found
    state[0] = 1.0
    for p in fills:
        nxt = [0.0] * (k + 1)
        nxt[k] = state[k]
        for r in range(k):
            nxt[min(r + 1, k)] += state[r] * p
            nxt[0] += state[r] * (1 - p)
        state = nxt
    return state[k]


def apbf_fpr(k, l, ratio):
    """ratio = m / g, bits of a slice per key of a generation."""
    fills = [1 - math.exp(-(min(i, k - 1) + 1) / ratio) for i in range(k + l)]
    return run_prob(fills, k)


def apbf_best(eps, kmax=20, lmax=80):
    best = None
    for k in range(2, kmax + 1):
        for l in range(1, lmax + 1):
            lo, hi = 0.1, 400.0
            for _ in range(40):
                mid = (lo + hi) / 2
                if apbf_fpr(k, l, mid) > eps:
                    lo = mid
                else:
                    hi = mid
            bits = (k + l) * hi / l
            if best is None or bits < best[0]:
                best = (bits, k, l)
    return best


def ring(eps, g):
    return (1 + 1 / g) * math.log2((g + 1) / eps) / LN2


def main():
    print("| eps | Bloom bits/key | APBF best (k, l) | APBF / Bloom | "
          "ring G=4 / Bloom | ring G=8 / Bloom |")
    print("|---:|---:|---|---:|---:|---:|")
    for eps in (0.01, 0.001, 0.0001):
        bloom = math.log2(1 / eps) / LN2
        bits, k, l = apbf_best(eps)
        print("| %g | %.2f | %.2f (%d, %d) | %.2f | %.2f | %.2f |" %
              (eps, bloom, bits, k, l, bits / bloom, ring(eps, 4) / bloom,
               ring(eps, 8) / bloom))


if __name__ == "__main__":
    main()
