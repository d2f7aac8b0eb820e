// rocksdb_bench.cc — amq-rocksdb-bench: does Monkey save reads inside a
// real RocksDB at equal filter memory?
//
// Three databases, loaded the same way (N keys of 16 bytes in a shuffled
// order, values of 100 bytes, leveled compaction with size ratio T = 10,
// level sizes from the bottom up) and differing only in the filters:
//
//   uniform     every level B bits per key (RocksDB's usual setting)
//   monkey      per-level bits planned for absent keys: every lookup of an
//               absent key probes each L0 file and one file per level
//   workload    per-level bits planned from the probes each level actually
//               received, measured in the uniform run (absent keys, and
//               present keys on the way to the level holding them)
//
// The plans (amq_rocksdb::PlanLevels, amq's allocation engine) spend the
// same total, B times the keys. The lookup workload (same sequence for
// all three) mixes absent keys with present keys drawn Zipf-skewed toward
// the most recently written (hot data lives in the upper levels). From
// RocksDB's statistics and per-level perf context: filter bytes, lookups
// the filters stopped, full positives, true positives (their difference
// are the false positives, each a wasted data-block read), the FPR of
// each level, data-block reads per lookup, lookups per second.
//
// usage: amq-rocksdb-bench [--keys N] [--bits B] [--lookups L]
//          [--absent F] [--zipf S] [--curve C] [--ribbon] [--level-base MB]
//          [--dir D] [--doc FILE] [--section NAME]
// A benchmark, not a test: the default (2e7 keys) loads ~2.3 GB three
// times; run it on an otherwise idle machine. --doc writes the table into
// FILE between "<!-- BEGIN rocksdb-bench -->" and "<!-- END ... -->"
// (--section names another pair of markers).
#include <rocksdb/db.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
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
    uint64_t keys = 20000000;
    double bits = 5;
    uint64_t lookups = 2000000;
    double absent = 0.5;
    double zipf = 1.0;
    std::string curve = "blocked";
    bool ribbon = false;
    double level_base_mb = 8; // max_bytes_for_level_base
    std::string dir = "/tmp";
    std::string doc;
    std::string section = "rocksdb-bench";
};

// The shuffled write order: entry i is the key number written i-th.
std::vector<uint64_t> WriteOrder(uint64_t n) {
    std::vector<uint64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    uint64_t s = 12345;
    for (uint64_t i = n; i-- > 1;)
        std::swap(order[i], order[Mix(&s) % (i + 1)]);
    return order;
}

// Lookups: absent keys (odd numbers, uniform), or present keys by a
// bounded Zipf(s) rank over recency (rank 1 = written last).
std::vector<uint64_t> Workload(const Opts &o,
                               const std::vector<uint64_t> &order) {
    std::vector<uint64_t> ids(o.lookups);
    uint64_t s = 777;
    double n = static_cast<double>(o.keys);
    for (uint64_t i = 0; i < o.lookups; i++) {
        if (Unit(&s) < o.absent) {
            ids[i] = 2 * (Mix(&s) % o.keys) + 1;
            continue;
        }
        uint64_t rank = ZipfRank(n, o.zipf, Unit(&s));
        ids[i] = 2 * order[o.keys - rank];
    }
    return ids;
}

struct Result {
    std::string name;
    std::vector<double> bits;         // per level planned
    std::map<int, LevelStats> levels; // by level number
    double filter_bytes = 0, seconds = 0, load_seconds = 0;
    uint64_t useful = 0, positive = 0, true_positive = 0, block_reads = 0;
    uint64_t lookups = 0, found = 0;
};

void Shape(rocksdb::DB *db, Result *r) {
    r->filter_bytes += amq_bench::Shape(db, &r->levels);
}

bool Load(const Opts &o, const std::string &dir,
          const std::vector<uint64_t> &order,
          std::shared_ptr<const rocksdb::FilterPolicy> fp, Result *r) {
    rocksdb::DB *db = nullptr;
    rocksdb::Status st =
        rocksdb::DB::Open(DbOptions(o.level_base_mb, fp), dir, &db);
    if (!st.ok()) {
        std::fprintf(stderr, "open %s: %s\n", dir.c_str(),
                     st.ToString().c_str());
        return false;
    }
    auto t0 = std::chrono::steady_clock::now();
    rocksdb::WriteOptions wo;
    wo.disableWAL = true;
    std::string value(100, 'x');
    uint64_t s = 99;
    for (uint64_t i = 0; i < o.keys; i++) {
        for (size_t b = 0; b < value.size(); b += 8) {
            uint64_t x = Mix(&s);
            std::memcpy(&value[b], &x, std::min<size_t>(8, value.size() - b));
        }
        db->Put(wo, Key(2 * order[i]), value);
        if (i % 2000000 == 0)
            std::fprintf(stderr, "  %s: %" PRIu64 " keys\n", r->name.c_str(),
                         i);
    }
    db->Flush(rocksdb::FlushOptions());
    WaitForCompactions(db);
    r->load_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    Shape(db, r);
    delete db;
    return true;
}

bool Run(const Opts &o, const std::string &dir,
         const std::vector<uint64_t> &ids,
         std::shared_ptr<const rocksdb::FilterPolicy> fp, Result *r) {
    rocksdb::Options opt = DbOptions(o.level_base_mb, fp);
    rocksdb::DB *db = nullptr;
    if (!rocksdb::DB::Open(opt, dir, &db).ok())
        return false;
    std::string v;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    rocksdb::get_perf_context()->Reset();
    rocksdb::get_perf_context()->EnablePerLevelPerfContext();
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t id : ids)
        r->found += db->Get(rocksdb::ReadOptions(), Key(id), &v).ok();
    r->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    r->block_reads = rocksdb::get_perf_context()->block_read_count;
    LevelProbes(&r->levels);
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    r->useful = opt.statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL);
    r->positive =
        opt.statistics->getTickerCount(rocksdb::BLOOM_FILTER_FULL_POSITIVE);
    r->true_positive = opt.statistics->getTickerCount(
        rocksdb::BLOOM_FILTER_FULL_TRUE_POSITIVE);
    r->lookups = ids.size();
    delete db;
    return true;
}

// Levels in use, shallow to deep.
std::vector<int> LevelsOf(const Result &r) {
    std::vector<int> out;
    for (const auto &[level, s] : r.levels)
        if (s.keys > 0)
            out.push_back(level);
    return out;
}

// Per-level bits for the policy: index = RocksDB level number.
std::vector<double> PolicyBits(const std::vector<int> &levels,
                               const std::vector<double> &bits) {
    std::vector<double> out(levels.back() + 1, bits.front());
    for (size_t i = 0; i < levels.size(); i++)
        out[levels[i]] = bits[i];
    for (int l = 1; l <= levels.back();
         l++) // empty levels: the next deeper one's
        if (std::find(levels.begin(), levels.end(), l) == levels.end())
            out[l] = out[l - 1];
    return out;
}

bool Plan(const Opts &o, const Result &base, bool measured,
          std::vector<double> *bits) {
    std::vector<int> levels = LevelsOf(base);
    std::vector<double> keys, probes;
    for (int l : levels) {
        const LevelStats &s = base.levels.at(l);
        keys.push_back(s.keys);
        if (measured) // negative probes: stopped, plus let through wrongly
            probes.push_back(
                static_cast<double>(s.useful + s.positive - s.true_positive));
        else // an absent key probes every L0 file and one file per level
            probes.push_back(l == 0 ? s.files : 1.0);
    }
    std::vector<double> planned;
    std::string err;
    if (!amq_rocksdb::PlanLevels(keys, probes, o.bits, o.curve, &planned,
                                 &err)) {
        std::fprintf(stderr, "plan: %s\n", err.c_str());
        return false;
    }
    *bits = PolicyBits(levels, planned);
    return true;
}

std::string Table(const Opts &o, const std::vector<Result> &rs) {
    std::ostringstream t;
    char line[512];
    std::snprintf(
        line, sizeof line,
        "%" PRIu64 " keys (16-byte keys, 100-byte values, shuffled), "
        "leveled, T = 10, level sizes from the bottom up with a base "
        "level of at least %g MiB; %" PRIu64 " lookups, %.0f%% absent, present "
        "keys Zipf(%.2f) over recency; %g bits/key on average; planner "
        "curve %s; %s filters.\n\n",
        o.keys, o.level_base_mb, o.lookups, 100 * o.absent, o.zipf, o.bits,
        o.curve.c_str(), o.ribbon ? "RocksDB Ribbon" : "RocksDB Bloom");
    t << line;
    t << "| policy | bits/key per level (L0, ...) | filter MiB | filter "
         "bits/key | "
         "stopped by filter | full positives | true positives | false "
         "positives | "
         "FP per lookup | data-block reads per lookup | lookups/s |\n"
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Result &r : rs) {
        std::string bits;
        for (int l : LevelsOf(r)) {
            std::snprintf(line, sizeof line, "%sL%d %.2f",
                          bits.empty() ? "" : ", ", l,
                          r.bits[std::min<size_t>(l, r.bits.size() - 1)]);
            bits += line;
        }
        uint64_t fp = r.positive - r.true_positive;
        std::snprintf(line, sizeof line,
                      "| %s | %s | %.1f | %.3f | %" PRIu64 " | %" PRIu64
                      " | %" PRIu64 " | %" PRIu64 " | %.4f | %.4f | %.0f |\n",
                      r.name.c_str(), bits.c_str(), r.filter_bytes / 1048576,
                      8 * r.filter_bytes / static_cast<double>(o.keys),
                      r.useful, r.positive, r.true_positive, fp,
                      static_cast<double>(fp) / r.lookups,
                      static_cast<double>(r.block_reads) / r.lookups,
                      r.lookups / r.seconds);
        t << line;
    }
    t << "\nFalse-positive rate per level: false positives / negative probes "
         "(the probes; the level's keys). A level's files cover only part of "
         "the "
         "key space when compaction has moved the rest down, so the probes per "
         "level differ between the databases.\n\n"
         "| policy |";
    std::vector<int> levels = LevelsOf(rs.front());
    for (int l : levels)
        t << " L" << l << " |";
    t << "\n|---|";
    for (size_t i = 0; i < levels.size(); i++)
        t << "---:|";
    t << "\n";
    for (const Result &r : rs) {
        t << "| " << r.name << " |";
        for (int l : levels) {
            auto it = r.levels.find(l);
            double neg = 0, fp = 0;
            if (it != r.levels.end()) {
                fp = static_cast<double>(it->second.positive -
                                         it->second.true_positive);
                neg = static_cast<double>(it->second.useful) + fp;
            }
            std::snprintf(line, sizeof line, " %.4f of %.0f (%.0f keys) |",
                          neg > 0 ? fp / neg : 0.0, neg,
                          it != r.levels.end() ? it->second.keys : 0.0);
            t << line;
        }
        t << "\n";
    }
    std::snprintf(
        line, sizeof line,
        "\nLoad times: %.0f s, %.0f s, %.0f s. Command: `amq-rocksdb-bench "
        "--keys %" PRIu64 " --bits %g --lookups %" PRIu64 " --absent %g "
        "--zipf %g --curve %s --level-base %g%s`\n",
        rs[0].load_seconds, rs.size() > 1 ? rs[1].load_seconds : 0.0,
        rs.size() > 2 ? rs[2].load_seconds : 0.0, o.keys, o.bits, o.lookups,
        o.absent, o.zipf, o.curve.c_str(), o.level_base_mb,
        o.ribbon ? " --ribbon" : "");
    t << line;
    return t.str();
}

bool Parse(int argc, char **argv, Opts *o) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--ribbon") {
            o->ribbon = true;
            continue;
        }
        if (i + 1 >= argc)
            return false;
        std::string v = argv[++i];
        char *end = nullptr;
        if (a == "--keys")
            o->keys = static_cast<uint64_t>(std::strtod(v.c_str(), &end));
        else if (a == "--bits")
            o->bits = std::strtod(v.c_str(), &end);
        else if (a == "--lookups")
            o->lookups = static_cast<uint64_t>(std::strtod(v.c_str(), &end));
        else if (a == "--absent")
            o->absent = std::strtod(v.c_str(), &end);
        else if (a == "--zipf")
            o->zipf = std::strtod(v.c_str(), &end);
        else if (a == "--curve")
            o->curve = v;
        else if (a == "--dir")
            o->dir = v;
        else if (a == "--level-base")
            o->level_base_mb = std::strtod(v.c_str(), &end);
        else if (a == "--doc")
            o->doc = v;
        else if (a == "--section")
            o->section = v;
        else
            return false;
        if (end != nullptr && *end != '\0')
            return false;
    }
    return o->keys >= 1000 && o->bits > 0 && o->lookups >= 1000 &&
           o->absent >= 0 && o->absent <= 1 && o->zipf >= 0 &&
           o->level_base_mb > 0;
}

} // namespace

int main(int argc, char **argv) {
    Opts o;
    if (!Parse(argc, argv, &o)) {
        std::fprintf(
            stderr,
            "usage: amq-rocksdb-bench [--keys N] [--bits B] [--lookups L] "
            "[--absent F] [--zipf S] [--curve C] [--ribbon] [--level-base MB] "
            "[--dir D] [--doc FILE] [--section NAME]\n");
        return 2;
    }
    auto kind = o.ribbon ? amq_rocksdb::FilterKind::kRibbon
                         : amq_rocksdb::FilterKind::kBloom;
    std::vector<uint64_t> order = WriteOrder(o.keys);
    std::vector<uint64_t> ids = Workload(o, order);
    std::vector<Result> rs(3);
    rs[0].name = "uniform", rs[1].name = "Monkey",
    rs[2].name = "workload-aware Monkey";
    for (int k = 0; k < 3; k++) {
        if (k == 0)
            rs[0].bits = {o.bits};
        else if (!Plan(o, rs[0], k == 2, &rs[k].bits))
            return 1;
        std::string dir = o.dir + "/amq-rocksdb-bench-XXXXXX";
        if (mkdtemp(&dir[0]) == nullptr) {
            std::perror("mkdtemp");
            return 1;
        }
        auto fp =
            std::make_shared<amq_rocksdb::LevelFilterPolicy>(rs[k].bits, kind);
        std::fprintf(stderr, "%s: loading into %s\n", rs[k].name.c_str(),
                     dir.c_str());
        bool ok =
            Load(o, dir, order, fp, &rs[k]) && Run(o, dir, ids, fp, &rs[k]);
        rocksdb::DestroyDB(dir, rocksdb::Options());
        rmdir(dir.c_str());
        if (!ok)
            return 1;
    }
    std::string table = Table(o, rs);
    std::fputs(table.c_str(), stdout);
    if (!o.doc.empty() && doc_section_replace(o.doc.c_str(), o.section.c_str(),
                                              table.c_str()) != 0)
        return 1;
    return 0;
}
