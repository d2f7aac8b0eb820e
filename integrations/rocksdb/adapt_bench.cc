// adapt_bench.cc — amq-rocksdb-adapt: per-level filter bits that follow a
// drifting workload inside a running RocksDB, against static Monkey and
// uniform bits at equal memory.
//
// Three databases are loaded the same way (N keys of 16 bytes, shuffled,
// 100-byte values; leveled, T = 10) and then run the same E epochs. Each
// epoch writes W new keys (flushes and compactions rewrite tables, and a
// table gets the bits its level has when it is written) and then serves
// L lookups: a share of absent keys, the rest present keys drawn Zipf(s_t)
// over recency. The exponent drifts between epochs as the simulator's
// Ornstein-Uhlenbeck process (docs/lsm.md, "Adaptivity frontier"): ln s_t
// is a walk pulled back toward ln s_0, so the hot keys move between the
// upper and the deep levels, and with them the levels' negative probes.
//
//   uniform    B bits per key on every level, always;
//   static     Monkey planned once from the negative probes each level
//              received in a calibration epoch at s_0 (on the uniform
//              database), never changed;
//   adaptive   the same start; after every epoch the controller reads
//              each level's negative probes from RocksDB's per-level perf
//              context (counted no lower than the absent lookups) and
//              decides, by the three regimes of the LSM
//              paper's frontier: keep the plan (drift r <= 0.41 r*), plan
//              again from this epoch's probes (tracking), or fall back to
//              uniform bits (r >= 3.3 r*). r is the key-weighted spread of
//              the change in ln(probe share) since the plan was made, r* =
//              sqrt(2G) with G = C_uniform / C_planned - 1 on the model
//              curve (docs/lsm.md measures both thresholds).
//
// All plans spend B bits per key over the levels' key counts at planning
// time (amq_rocksdb::PlanLevels). Reported per database: false positives
// per lookup (each a wasted data-block read), data-block reads per lookup,
// lookups per second, filter bits per key at the end; and per epoch each
// database's false positives per lookup with the controller's decision.
// Every present key must be found (checked: the run fails otherwise).
//
// usage: amq-rocksdb-adapt [--keys N] [--bits B] [--epochs E]
//          [--writes W] [--lookups L] [--absent F] [--zipf S0]
//          [--sigma X] [--theta T] [--level-base MB] [--dir D]
//          [--doc FILE] | --check DIR
#include <rocksdb/db.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "amq_rocksdb.h"
#include "bench_common.h"
#include "doc_section.h"

namespace {

using namespace amq_bench;

struct Opts {
    uint64_t keys = 4000000, writes = 250000, lookups = 200000;
    unsigned epochs = 10;
    double bits = 5, absent = 0.5, zipf = 1.0, sigma = 0.5, theta = 0.2;
    double level_base_mb = 1, buffer_mb = 16;
    std::string dir = "/tmp", doc;
    bool check = false;
};

// The keep and fall-back thresholds, in r*, measured by the simulator.
constexpr double KEEP_BELOW = 0.41, UNIFORM_ABOVE = 3.3;
const double MODEL_C = std::log(2.0) * std::log(2.0);

// The workload's exponent per epoch (index 0 is the calibration's).
std::vector<double> Drift(const Opts &o) {
    std::vector<double> s(o.epochs + 1);
    uint64_t seed = 4242;
    double x = 0;
    for (unsigned t = 0; t <= o.epochs; t++) {
        s[t] = o.zipf * std::exp(x);
        double g = std::sqrt(-2 * std::log(Unit(&seed))) *
                   std::cos(2 * M_PI * Unit(&seed));
        x = x * (1 - o.theta) + o.sigma * g;
    }
    return s;
}

struct Epoch {
    double s = 0, fp_per_lookup = 0, reads_per_lookup = 0, seconds = 0;
    double wasted_per_lookup = 0; // data-block reads that found nothing
    uint64_t lookups = 0, missed = 0;
    std::string decision;
};

struct Arm {
    std::string name;
    std::shared_ptr<amq_rocksdb::AdaptiveLevelFilterPolicy> policy;
    rocksdb::DB *db = nullptr;
    std::vector<Epoch> epochs;
    std::vector<double> plan_shares; // the probe shares the plan came from
    double filter_bytes = 0;
    uint64_t written = 0; // keys 0..written-1 (as 2 id), in order[]
};

// Per level (levels with keys): keys, negative probes.
struct LevelCounts {
    std::vector<int> levels;
    std::vector<double> keys, negatives;
};

// A level's probes are counted no lower than the absent lookups (floor):
// what they would give it if its files covered the key range, as the next
// compaction may make them. A level nearly empty while measured is
// probed little, and a plan from that alone gives it no filter just
// before new tables arrive there.
LevelCounts Count(rocksdb::DB *db, const std::map<int, LevelStats> &probes,
                  double floor) {
    std::map<int, LevelStats> shape;
    Shape(db, &shape);
    LevelCounts c;
    for (const auto &[level, s] : shape) {
        if (s.keys <= 0)
            continue;
        auto it = probes.find(level);
        double neg = 0;
        if (it != probes.end())
            neg = static_cast<double>(it->second.useful + it->second.positive -
                                      it->second.true_positive);
        c.levels.push_back(level);
        c.keys.push_back(s.keys);
        c.negatives.push_back(std::max(neg, floor) + 1);
    }
    return c;
}

std::vector<double> Shares(const std::vector<double> &v) {
    double t = std::accumulate(v.begin(), v.end(), 0.0);
    std::vector<double> out;
    for (double x : v)
        out.push_back(x / t);
    return out;
}

// Per-level bits for the policy (index = level), from a plan over the
// levels in use; empty levels take the next deeper planned value.
std::vector<double> PolicyBits(const LevelCounts &c,
                               const std::vector<double> &bits) {
    std::vector<double> out(c.levels.back() + 1, bits.back());
    for (int l = c.levels.back(), i = (int)c.levels.size() - 1; l >= 0; l--) {
        if (i >= 0 && c.levels[i] == l)
            out[l] = bits[i--];
        else if (l + 1 < (int)out.size())
            out[l] = out[l + 1];
    }
    return out;
}

bool PlanFrom(const Opts &o, const LevelCounts &c, std::vector<double> *bits) {
    std::string err;
    if (!amq_rocksdb::PlanLevels(c.keys, c.negatives, o.bits, "blocked", bits,
                                 &err)) {
        std::fprintf(stderr, "amq-rocksdb-adapt: plan: %s\n", err.c_str());
        return false;
    }
    return true;
}

// ---- the database and its epochs -------------------------------------------

bool Open(const Opts &o, Arm *a, const std::string &dir) {
    rocksdb::Status st = rocksdb::DB::Open(
        DbOptions(o.level_base_mb, a->policy, o.buffer_mb), dir, &a->db);
    if (!st.ok())
        std::fprintf(stderr, "open %s: %s\n", dir.c_str(),
                     st.ToString().c_str());
    return st.ok();
}

void Write(Arm *a, const std::vector<uint64_t> &order, uint64_t upto) {
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;
    std::string value(100, 'x');
    uint64_t s = 99 + a->written;
    for (uint64_t i = a->written; i < upto; i++) {
        for (size_t b = 0; b < value.size(); b += 8) {
            uint64_t x = Mix(&s);
            std::memcpy(&value[b], &x, std::min<size_t>(8, value.size() - b));
        }
        a->db->Put(wo, Key(2 * order[i]), value);
    }
    a->written = upto;
    a->db->Flush(rocksdb::FlushOptions());
    WaitForCompactions(a->db);
}

// One epoch's lookups at exponent s: the counts into *e and *probes.
void Lookups(const Opts &o, Arm *a, const std::vector<uint64_t> &order,
             double s, uint64_t seed, Epoch *e,
             std::map<int, LevelStats> *probes) {
    std::string v;
    uint64_t positive = 0, true_positive = 0, hits = 0;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
    rocksdb::get_perf_context()->ClearPerLevelPerfContext();
    rocksdb::get_perf_context()->EnablePerLevelPerfContext();
    auto t0 = std::chrono::steady_clock::now();
    double n = static_cast<double>(a->written);
    for (uint64_t i = 0; i < o.lookups; i++) {
        bool absent = Unit(&seed) < o.absent;
        uint64_t id = absent
                          ? 2 * (Mix(&seed) % a->written) + 1
                          : 2 * order[a->written - ZipfRank(n, s, Unit(&seed))];
        bool found = a->db->Get(rocksdb::ReadOptions(), Key(id), &v).ok();
        e->missed += !absent && !found;
        hits += found;
    }
    e->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    probes->clear();
    LevelProbes(probes);
    for (const auto &[level, st] : *probes) {
        positive += st.positive;
        true_positive += st.true_positive;
    }
    e->s = s;
    e->lookups = o.lookups;
    e->fp_per_lookup =
        static_cast<double>(positive - true_positive) / (double)o.lookups;
    const rocksdb::PerfContext *pc = rocksdb::get_perf_context();
    double data =
        static_cast<double>(pc->block_read_count - pc->index_block_read_count -
                            pc->filter_block_read_count);
    e->reads_per_lookup = data / (double)o.lookups;
    /* a lookup that finds its key reads one data block for it; every other
     * read found nothing (a false positive, or a level without a filter) */
    e->wasted_per_lookup = (data - (double)hits) / (double)o.lookups;
    rocksdb::get_perf_context()->DisablePerLevelPerfContext();
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
}

// The model's cost of bits b for probe shares w.
double Cost(const std::vector<double> &w, const std::vector<double> &b) {
    double c = 0;
    for (size_t i = 0; i < w.size(); i++)
        c += w[i] * std::exp(-MODEL_C * b[i]);
    return c;
}

// The controller after an epoch: keep, plan again, or uniform.
std::string Decide(const Opts &o, Arm *a, const LevelCounts &c) {
    std::vector<double> w = Shares(c.negatives), plan;
    if (!PlanFrom(o, c, &plan))
        return "plan failed";
    double g =
        Cost(w, std::vector<double>(w.size(), o.bits)) / Cost(w, plan) - 1;
    double rstar = std::sqrt(2 * std::max(g, 1e-12));
    double r = 0, mean = 0,
           nk = std::accumulate(c.keys.begin(), c.keys.end(), 0.0);
    bool comparable = a->plan_shares.size() == w.size();
    std::vector<double> d(w.size(), 0);
    for (size_t i = 0; comparable && i < w.size(); i++) {
        d[i] = std::log(w[i]) - std::log(a->plan_shares[i]);
        mean += c.keys[i] / nk * d[i];
    }
    for (size_t i = 0; comparable && i < w.size(); i++)
        r += c.keys[i] / nk * (d[i] - mean) * (d[i] - mean);
    r = comparable ? std::sqrt(r) : 1e9; /* the levels changed: plan again */
    char why[96];
    const char *what;
    if (comparable && r <= KEEP_BELOW * rstar)
        what = "keep";
    else if (comparable && r >= UNIFORM_ABOVE * rstar) {
        what = "uniform";
        a->policy->SetBits({o.bits});
        a->plan_shares = w;
    } else {
        what = "plan";
        a->policy->SetBits(PolicyBits(c, plan));
        a->plan_shares = w;
    }
    if (comparable)
        std::snprintf(why, sizeof why, "%s (r = %.2f r*)", what, r / rstar);
    else
        std::snprintf(why, sizeof why, "%s (levels changed)", what);
    return why;
}

bool RunArm(const Opts &o, Arm *a, const std::vector<uint64_t> &order,
            const std::vector<double> &s, bool adaptive,
            std::vector<double> *calibrated) {
    std::string dir = o.dir + "/amq-rocksdb-adapt-XXXXXX";
    if (mkdtemp(&dir[0]) == nullptr || !Open(o, a, dir))
        return false;
    std::fprintf(stderr, "%s: loading %" PRIu64 " keys into %s\n",
                 a->name.c_str(), o.keys, dir.c_str());
    Write(a, order, o.keys);
    std::map<int, LevelStats> probes;
    if (calibrated != nullptr) { /* the calibration epoch at s_0 */
        Epoch e;
        Lookups(o, a, order, s[0], 1, &e, &probes);
        LevelCounts c = Count(a->db, probes, o.lookups * o.absent);
        std::vector<double> plan;
        if (!PlanFrom(o, c, &plan))
            return false;
        *calibrated = PolicyBits(c, plan);
    }
    if (adaptive) { /* the shares the starting plan came from */
        Epoch e;
        Lookups(o, a, order, s[0], 1, &e, &probes);
        a->plan_shares =
            Shares(Count(a->db, probes, o.lookups * o.absent).negatives);
    }
    for (unsigned t = 1; t <= o.epochs; t++) {
        Epoch e;
        Write(a, order, o.keys + t * o.writes);
        Lookups(o, a, order, s[t], 1000 + t, &e, &probes);
        if (adaptive)
            e.decision =
                Decide(o, a, Count(a->db, probes, o.lookups * o.absent));
        a->epochs.push_back(e);
        std::fprintf(
            stderr, "%s: epoch %u, s = %.2f: %.4f wasted reads per lookup %s\n",
            a->name.c_str(), t, s[t], e.wasted_per_lookup, e.decision.c_str());
    }
    std::map<int, LevelStats> shape;
    a->filter_bytes = Shape(a->db, &shape);
    delete a->db;
    a->db = nullptr;
    rocksdb::DestroyDB(dir, rocksdb::Options());
    rmdir(dir.c_str());
    return true;
}

// ---- the report ----------------------------------------------------------------

std::string Report(const Opts &o, const std::vector<Arm> &arms) {
    std::ostringstream t;
    char line[512];
    uint64_t total = o.keys + o.epochs * o.writes;
    std::snprintf(line, sizeof line,
                  "%" PRIu64 " keys loaded (16-byte keys, 100-byte values), "
                  "then %u epochs of %" PRIu64 " new keys and %" PRIu64
                  " lookups (%.0f%% absent; present keys Zipf(s_t) over "
                  "recency, ln s_t an Ornstein-Uhlenbeck walk from ln %.2f, "
                  "sigma %.2f, pull %.2f); %g bits/key; leveled, T = 10, base "
                  "level %g MiB (`amq-rocksdb-adapt --keys %" PRIu64
                  " --epochs %u --writes %" PRIu64 " --lookups %" PRIu64
                  " --bits %g --sigma %g --theta %g --level-base %g`):\n\n",
                  o.keys, o.epochs, o.writes, o.lookups, 100 * o.absent, o.zipf,
                  o.sigma, o.theta, o.bits, o.level_base_mb, o.keys, o.epochs,
                  o.writes, o.lookups, o.bits, o.sigma, o.theta,
                  o.level_base_mb);
    t << line
      << "| bits | wasted data-block reads per lookup | against uniform | "
         "filters' false positives per lookup | data-block reads per lookup | "
         "lookups/s | filter bits/key at the end | bits per level at the end "
         "|\n|---|--:|--:|--:|--:|--:|--:|---|\n";
    double base = 0;
    for (const Arm &a : arms) {
        double fp = 0, reads = 0, wasted = 0, secs = 0, n = 0;
        for (const Epoch &e : a.epochs) {
            fp += e.fp_per_lookup * (double)e.lookups;
            reads += e.reads_per_lookup * (double)e.lookups;
            wasted += e.wasted_per_lookup * (double)e.lookups;
            secs += e.seconds;
            n += (double)e.lookups;
        }
        if (base == 0)
            base = wasted / n;
        std::string bits;
        std::vector<double> b = a.policy->bits();
        for (size_t l = 0; l < b.size(); l++) {
            std::snprintf(line, sizeof line, "%sL%zu %.2f", l ? ", " : "", l,
                          b[l]);
            bits += line;
        }
        std::snprintf(line, sizeof line,
                      "| %s | %.4f | %.2f | %.4f | %.4f | %.0f | %.3f | %s |\n",
                      a.name.c_str(), wasted / n, wasted / n / base, fp / n,
                      reads / n, n / secs, 8 * a.filter_bytes / (double)total,
                      bits.c_str());
        t << line;
    }
    t << "\n| epoch | s_t |";
    for (const Arm &a : arms)
        t << " " << a.name << " |";
    t << " controller |\n|--:|--:|";
    for (size_t i = 0; i < arms.size(); i++)
        t << "--:|";
    t << "---|\n";
    for (unsigned e = 0; e < o.epochs; e++) {
        std::snprintf(line, sizeof line, "| %u | %.2f |", e + 1,
                      arms[0].epochs[e].s);
        t << line;
        for (const Arm &a : arms) {
            std::snprintf(line, sizeof line, " %.4f |",
                          a.epochs[e].wasted_per_lookup);
            t << line;
        }
        t << " " << arms.back().epochs[e].decision << " |\n";
    }
    return t.str();
}

bool Parse(int argc, char **argv, Opts *o) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 >= argc)
            return false;
        std::string v = argv[++i];
        char *end = nullptr;
        double x = std::strtod(v.c_str(), &end);
        if (a == "--dir" || a == "--doc" || a == "--check") {
            (a == "--doc" ? o->doc : o->dir) = v;
            if (a == "--check") {
                o->check = true;
                o->keys = 200000, o->writes = 40000, o->lookups = 20000;
                o->epochs = 4;
                o->level_base_mb = 0.25;
                o->buffer_mb = 0.5;
            }
            continue;
        }
        if (*end != '\0' || !(x >= 0))
            return false;
        if (a == "--keys")
            o->keys = (uint64_t)x;
        else if (a == "--writes")
            o->writes = (uint64_t)x;
        else if (a == "--lookups")
            o->lookups = (uint64_t)x;
        else if (a == "--epochs")
            o->epochs = (unsigned)x;
        else if (a == "--bits")
            o->bits = x;
        else if (a == "--absent")
            o->absent = x;
        else if (a == "--zipf")
            o->zipf = x;
        else if (a == "--sigma")
            o->sigma = x;
        else if (a == "--theta")
            o->theta = x;
        else if (a == "--level-base")
            o->level_base_mb = x;
        else
            return false;
    }
    return o->keys >= 1000 && o->lookups >= 100 && o->epochs >= 1 &&
           o->bits > 0 && o->absent <= 1 && o->zipf > 0 && o->theta <= 1 &&
           o->level_base_mb > 0;
}

} // namespace

int main(int argc, char **argv) {
    Opts o;
    if (!Parse(argc, argv, &o)) {
        std::fprintf(stderr,
                     "usage: amq-rocksdb-adapt [--keys N] [--bits B] [--epochs "
                     "E] [--writes W] [--lookups L] [--absent F] [--zipf S0] "
                     "[--sigma X] [--theta T] [--level-base MB] [--dir D] "
                     "[--doc FILE] | --check DIR\n");
        return 2;
    }
    if (o.check)
        mkdir(o.dir.c_str(), 0755);
    uint64_t total = o.keys + o.epochs * o.writes, seed = 12345;
    std::vector<uint64_t> order(total);
    std::iota(order.begin(), order.end(), 0);
    for (uint64_t i = total; i-- > 1;)
        std::swap(order[i], order[Mix(&seed) % (i + 1)]);
    std::vector<double> s = Drift(o), plan0;
    std::vector<Arm> arms(3);
    arms[0].name = "uniform", arms[1].name = "static Monkey",
    arms[2].name = "adaptive";
    arms[0].policy = std::make_shared<amq_rocksdb::AdaptiveLevelFilterPolicy>(
        std::vector<double>{o.bits});
    if (!RunArm(o, &arms[0], order, s, false, &plan0))
        return 1;
    for (int k = 1; k < 3; k++) {
        arms[k].policy =
            std::make_shared<amq_rocksdb::AdaptiveLevelFilterPolicy>(plan0);
        if (!RunArm(o, &arms[k], order, s, k == 2, nullptr))
            return 1;
    }
    uint64_t missed = 0;
    for (const Arm &a : arms)
        for (const Epoch &e : a.epochs)
            missed += e.missed;
    std::string report = Report(o, arms);
    std::fputs(report.c_str(), stdout);
    if (missed) {
        std::fprintf(stderr,
                     "amq-rocksdb-adapt: %" PRIu64 " present keys not found\n",
                     missed);
        return 1;
    }
    if (!o.doc.empty() && doc_section_replace(o.doc.c_str(), "rocksdb-adapt",
                                              report.c_str()) != 0)
        return 1;
    return 0;
}
