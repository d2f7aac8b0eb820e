// sst_route.cc — amq-rocksdb-route: one routing maplet against RocksDB's
// own per-file filters, over sorted runs in RocksDB's table format on disk.
//
// R runs (run 0 the oldest) hold N keys in all: each run brings N/R new
// keys, rewrites a tenth as many keys of older runs (an update: the newer
// run wins) and deletes a fiftieth as many (a marker value, since
// SstFileReader hides RocksDB's own tombstones). Each run is written twice
// with SstFileWriter (block-based tables, 4 KiB blocks, no block cache so
// every data-block access is a read):
//
//   filters   with RocksDB's Bloom (or Ribbon) filter of B bits per key,
//             whole keys through a 16-byte prefix extractor, so an
//             iterator's Seek asks the filter first;
//   plain     without, for the maplet.
//
// A lookup asks runs newest first until one holds the key. With the
// filters it asks every run; with the maplet (one multiset maplet of
// (key, run) pairs, amq_maplet_get_all, sized to the filters' bytes) only
// the runs the maplet names. Reported per arm, from RocksDB's perf
// context: data blocks read per absent and per present lookup, lookups per
// second (the faster of two passes), bytes; and the runs read in vain per
// absent lookup as a distribution (P >= 1, >= 2, >= 3: the strong maplet property says a
// wrong run comes with probability eps, two with eps^2). Every answer of
// both arms is checked against the truth; --check (a ctest) runs a small
// case and also holds the maplet's measured rate to its certified bound.
//
// usage: amq-rocksdb-route [--keys N] [--runs R,R,...] [--bits B]
//          [--ribbon] [--lookups L] [--dir D] [--doc FILE] | --check DIR
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/iterator.h>
#include <rocksdb/options.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_reader.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "amq/amq.h"
#include "doc_section.h"

namespace {

struct Opts {
    uint64_t keys = 10000000;
    std::vector<unsigned> runs = {4, 16, 64};
    double bits = 10;
    bool ribbon = false;
    uint64_t lookups = 200000;
    std::string dir = "bench-data/rocksdb-route";
    std::string doc;
    bool check = false;
};

constexpr size_t KEY_LEN = 16;
const char *const DELETED = ""; // the marker value of a delete

uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Key of id: 16 hex digits of a bijection of id (sorted as numbers).
std::string key_of(uint64_t id) {
    char b[KEY_LEN + 1];
    snprintf(b, sizeof b, "%016" PRIx64, mix(id));
    return std::string(b, KEY_LEN);
}

// Absent keys: ids past every written one.
uint64_t absent_id(const Opts &o, uint64_t i) { return o.keys * 4 + i; }

struct Entry {
    std::string key;
    uint64_t id;
    bool del;
};

// The runs' contents, and the truth: the newest run of each id (or -1)
// and whether it is deleted there.
struct Data {
    std::vector<std::vector<Entry>> runs; // by run id; empty once compacted
    std::vector<int16_t> newest;
    std::vector<uint8_t> deleted;
    std::vector<uint64_t> live; // the ids of the runs there are, ascending
};

Data make_data(const Opts &o, unsigned R) {
    Data d;
    uint64_t per = o.keys / R, seed = 7;
    d.runs.resize(R);
    d.newest.assign(per * R, -1);
    d.deleted.assign(per * R, 0);
    for (unsigned r = 0; r < R; r++) {
        std::vector<Entry> &run = d.runs[r];
        std::vector<uint8_t> seen;
        for (uint64_t i = 0; i < per; i++)
            run.push_back({key_of(r * per + i), r * per + i, false});
        if (r > 0) { // updates (a tenth) and deletes (a fiftieth) of older keys
            for (uint64_t i = 0; i < per / 10 + per / 50; i++) {
                uint64_t id = mix(seed++) % (r * per);
                run.push_back({key_of(id), id, i >= per / 10});
            }
        }
        std::sort(run.begin(), run.end(),
                  [](const Entry &a, const Entry &b) { return a.key < b.key; });
        run.erase(std::unique(run.begin(), run.end(),
                              [](const Entry &a, const Entry &b) {
                                  return a.key == b.key;
                              }),
                  run.end());
        for (const Entry &e : run) {
            d.newest[e.id] = (int16_t)r;
            d.deleted[e.id] = e.del;
        }
        d.live.push_back(r);
    }
    return d;
}

// A compaction of runs 0..h-1 into run 0 (the node's oldest run: the
// newest version of each key wins, deletes are dropped as nothing older
// remains); the truth follows.
void compact(Data &d, unsigned h) {
    std::vector<Entry> merged;
    for (unsigned r = h; r-- > 0;) {
        merged.insert(merged.end(), d.runs[r].begin(), d.runs[r].end());
        d.runs[r].clear();
    }
    std::stable_sort(
        merged.begin(), merged.end(),
        [](const Entry &a, const Entry &b) { return a.key < b.key; });
    merged.erase(std::unique(merged.begin(), merged.end(),
                             [](const Entry &a, const Entry &b) {
                                 return a.key == b.key;
                             }),
                 merged.end());
    std::vector<Entry> kept;
    for (const Entry &e : merged) {
        if (d.newest[e.id] >= (int16_t)h)
            continue; /* a newer run holds it */
        d.newest[e.id] = e.del ? -1 : 0;
        d.deleted[e.id] = 0;
        if (!e.del)
            kept.push_back(e);
    }
    d.runs[0] = kept;
    d.live.erase(d.live.begin() + 1, d.live.begin() + h);
}

rocksdb::Options table_options(const Opts &o, bool filters) {
    rocksdb::Options opt;
    rocksdb::BlockBasedTableOptions t;
    t.block_size = 4096;
    t.no_block_cache = true;
    if (filters)
        t.filter_policy.reset(o.ribbon ? rocksdb::NewRibbonFilterPolicy(o.bits)
                                       : rocksdb::NewBloomFilterPolicy(o.bits));
    opt.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    opt.prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(KEY_LEN));
    return opt;
}

bool write_run(const Opts &o, const std::vector<Entry> &run,
               const std::string &path, bool filters) {
    rocksdb::SstFileWriter w(rocksdb::EnvOptions(), table_options(o, filters));
    char value[32];
    if (!w.Open(path).ok())
        return false;
    for (const Entry &e : run) {
        snprintf(value, sizeof value, "v%015" PRIu64, e.id);
        if (!w.Put(e.key, e.del ? DELETED : value).ok())
            return false;
    }
    return w.Finish().ok();
}

// One arm: the runs' files open for reading, and their iterators.
struct Arm {
    std::vector<std::unique_ptr<rocksdb::SstFileReader>> readers;
    std::vector<std::unique_ptr<rocksdb::Iterator>> its;
    uint64_t filter_bytes = 0;
};

bool open_arm(const Opts &o, const std::vector<std::string> &paths,
              bool filters, Arm &a) {
    rocksdb::ReadOptions ro;
    ro.verify_checksums = false;
    a = Arm();
    for (const std::string &p : paths) {
        if (p.empty()) { /* a run compacted away */
            a.readers.emplace_back(nullptr);
            a.its.emplace_back(nullptr);
            continue;
        }
        a.readers.emplace_back(
            new rocksdb::SstFileReader(table_options(o, filters)));
        if (!a.readers.back()->Open(p).ok())
            return false;
        a.filter_bytes += a.readers.back()->GetTableProperties()->filter_size;
        a.its.emplace_back(a.readers.back()->NewIterator(ro));
    }
    return true;
}

// Runs read for one key, newest first among cands (run ids, ascending):
// 1 found (present), 0 not found or deleted; *reads the runs asked.
int lookup(Arm &a, const std::string &key, const uint64_t *cands, size_t n,
           size_t *asked) {
    *asked = 0;
    for (size_t i = n; i-- > 0;) {
        rocksdb::Iterator *it = a.its[cands[i]].get();
        ++*asked;
        it->Seek(key);
        if (it->Valid() && it->key() == rocksdb::Slice(key))
            return it->value().size() > 0;
    }
    return 0;
}

uint64_t data_reads() {
    const rocksdb::PerfContext *pc = rocksdb::get_perf_context();
    return pc->block_read_count - pc->index_block_read_count -
           pc->filter_block_read_count - pc->compression_dict_block_read_count;
}

struct Result {
    std::string label;
    uint64_t bytes = 0;
    double absent_reads = 0, present_reads = 0, absent_ns = 0, present_ns = 0;
    double wrong_ge[4] = {0, 0, 0, 0}; // P(runs read in vain >= k), k = 1..3
    uint64_t wrong_answers = 0;
};

// The truth of id: 1 present, 0 absent (never written, or deleted).
int truth(const Data &d, uint64_t id) {
    return id < d.newest.size() && d.newest[id] >= 0 && !d.deleted[id];
}

// The lookups of one arm (maplet NULL: every run is a candidate).
void run_arm(const Opts &o, const Data &d, Arm &a, const amq_filter *m,
             Result &r) {
    std::vector<uint64_t> all = d.live, vals(d.runs.size() * 4 + 16);
    uint64_t seed = 99;
    for (int kind = 0; kind < 2; kind++) { // 0 absent, 1 present
        uint64_t reads = 0, before = 0;
        std::vector<uint64_t> vain(4, 0);
        auto t0 = std::chrono::steady_clock::now();
        rocksdb::get_perf_context()->Reset();
        before = data_reads();
        for (uint64_t q = 0; q < o.lookups; q++) {
            uint64_t id = absent_id(o, q);
            while (kind == 1 && !truth(d, id = mix(seed++) % d.newest.size()))
                ; /* a key that is there: not deleted, not compacted away */
            std::string key = key_of(id);
            const uint64_t *c = all.data();
            size_t n = all.size(), asked;
            if (m != nullptr) {
                n = 0;
                amq_status st = amq_maplet_get_all(
                    m, amq_filter_hash(m, key.data(), KEY_LEN), vals.data(),
                    vals.size(), &n);
                if (st != AMQ_OK)
                    n = 0;
                n = std::min(n, vals.size());
                c = vals.data();
            }
            uint64_t was = data_reads();
            int got = lookup(a, key, c, n, &asked);
            if (got != truth(d, id))
                r.wrong_answers++;
            if (kind == 0) {
                uint64_t v = data_reads() - was;
                for (unsigned k = 1; k <= 3; k++)
                    vain[k] += v >= k;
            }
        }
        double ns = std::chrono::duration<double, std::nano>(
                        std::chrono::steady_clock::now() - t0)
                        .count() /
                    (double)o.lookups;
        reads = data_reads() - before;
        if (kind == 0) {
            r.absent_reads = (double)reads / (double)o.lookups;
            r.absent_ns = ns;
            for (unsigned k = 1; k <= 3; k++)
                r.wrong_ge[k] = (double)vain[k] / (double)o.lookups;
        } else {
            r.present_reads = (double)reads / (double)o.lookups;
            r.present_ns = ns;
        }
    }
}

// The maplet of every run's (key, run) pairs at rate eps (multiset: a key
// in several runs has a slot per run).
amq_filter *make_maplet(const Data &d, double eps) {
    unsigned R = (unsigned)d.runs.size(), v = 1;
    uint64_t pairs = 0;
    while ((1u << v) < R)
        v++;
    for (const auto &run : d.runs)
        pairs += run.size();
    char spec[64];
    snprintf(spec, sizeof spec, "maplet:op=max,v=%u,multiset=1", v);
    for (uint64_t cap = pairs;; cap += cap / 16 + 64) {
        amq_filter *m = nullptr;
        if (amq_maplet_new(spec, cap, eps, nullptr, &m, nullptr) != AMQ_OK)
            return nullptr;
        amq_status st = AMQ_OK;
        for (unsigned r = 0; r < R && st == AMQ_OK; r++)
            for (const Entry &e : d.runs[r])
                if ((st = amq_maplet_put(m, e.key.data(), KEY_LEN, r)) !=
                    AMQ_OK)
                    break;
        if (st == AMQ_OK)
            return m;
        amq_filter_free(m);
        if (st != AMQ_ERR_FULL)
            return nullptr;
    }
}

// The maplet of the smallest eps (a power of 2) that fits in bytes.
amq_filter *fit_maplet(const Data &d, uint64_t bytes) {
    amq_filter *best = nullptr;
    for (double e = 0.5; e > 1e-7; e /= 2) {
        amq_filter *m = make_maplet(d, e);
        if (m == nullptr || amq_filter_serialized_size(m) > bytes) {
            amq_filter_free(m);
            break;
        }
        amq_filter_free(best);
        best = m;
    }
    return best;
}

void print_row(std::string &doc, unsigned R, const Result &r) {
    char line[512];
    snprintf(line, sizeof line,
             "| %u | %s | %" PRIu64 " | %.4f | %.4f | %.5f | %.6f | %.7f | "
             "%.0f | %.0f |\n",
             R, r.label.c_str(), r.bytes, r.absent_reads, r.present_reads,
             r.wrong_ge[1], r.wrong_ge[2], r.wrong_ge[3], 1e9 / r.absent_ns,
             1e9 / r.present_ns);
    fputs(line, stdout);
    doc += line;
}

// Write run r of d twice (with filters, plain) under a name with tag.
bool write_pair(const Opts &o, const Data &d, unsigned R, unsigned r,
                const char *tag, std::string &fpath, std::string &ppath) {
    char f[600], p[600];
    snprintf(f, sizeof f, "%s/R%u%s-filters-%03u.sst", o.dir.c_str(), R, tag,
             r);
    snprintf(p, sizeof p, "%s/R%u%s-plain-%03u.sst", o.dir.c_str(), R, tag, r);
    if (!write_run(o, d.runs[r], f, true) ||
        !write_run(o, d.runs[r], p, false)) {
        fprintf(stderr, "amq-rocksdb-route: cannot write %s\n", f);
        return false;
    }
    fpath = f;
    ppath = p;
    return true;
}

// Both arms' lookups, twice each and alternating: the counts are the same,
// the faster time of the two is kept (the first pass warms the page cache).
void measure(const Opts &o, const Data &d, Arm &fa, Arm &pa,
             const amq_filter *m, Result &rf, Result &rm) {
    for (int pass = 0; pass < 2; pass++) {
        Result f = rf, p = rm;
        run_arm(o, d, fa, nullptr, f);
        run_arm(o, d, pa, m, p);
        if (pass == 1) {
            f.absent_ns = std::min(f.absent_ns, rf.absent_ns);
            f.present_ns = std::min(f.present_ns, rf.present_ns);
            p.absent_ns = std::min(p.absent_ns, rm.absent_ns);
            p.present_ns = std::min(p.present_ns, rm.present_ns);
        }
        rf = f;
        rm = p;
    }
}

// Wrong answers fail the run; so, in --check, does a maplet above its
// certified bound, or (when it was fitted to them: same_bytes) above its
// filters' bytes. After a compaction the filters shrink and the maplet
// keeps its size.
void judge(const Opts &o, unsigned R, const amq_filter *m, const Result &rf,
           const Result &rm, bool same_bytes, int *fails) {
    if (rf.wrong_answers || rm.wrong_answers) {
        fprintf(stderr,
                "amq-rocksdb-route: R=%u: %" PRIu64 " and %" PRIu64
                " wrong answers\n",
                R, rf.wrong_answers, rm.wrong_answers);
        ++*fails;
    }
    if (!o.check)
        return;
    double b = amq_filter_fpr_bound(m), n = (double)o.lookups;
    double tol = 4 * std::sqrt(b / n) + 3 / n;
    if (rm.wrong_ge[1] > b + tol) {
        fprintf(stderr,
                "amq-rocksdb-route: R=%u: absent keys read a run "
                "%.5f of the time, above the bound %.5f\n",
                R, rm.wrong_ge[1], b);
        ++*fails;
    }
    if (rm.present_reads > 1.0 + b + tol ||
        (same_bytes && rm.bytes > rf.bytes)) {
        fprintf(stderr,
                "amq-rocksdb-route: R=%u: %.4f reads per present "
                "lookup, %" PRIu64 " bytes against %" PRIu64 "\n",
                R, rm.present_reads, rm.bytes, rf.bytes);
        ++*fails;
    }
}

// The maplet after compacting runs 0..h-1 into run 0: their pairs dropped
// in one pass (amq_maplet_keep_values), the merged run's keys put with
// id 0 (a compaction reads them anyway). Milliseconds, or -1.
double update_maplet(amq_filter *m, const Data &d, unsigned h, unsigned R) {
    auto t0 = std::chrono::steady_clock::now();
    if (amq_maplet_keep_values(m, h, R - 1) != AMQ_OK)
        return -1;
    for (const Entry &e : d.runs[0])
        if (amq_maplet_put(m, e.key.data(), KEY_LEN, 0) != AMQ_OK)
            return -1;
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - t0)
        .count();
}

bool run_case(const Opts &o, unsigned R, std::string &doc, int *fails) {
    Data d = make_data(o, R);
    std::vector<std::string> fpaths(R), ppaths(R);
    mkdir(o.dir.c_str(), 0755);
    for (unsigned r = 0; r < R; r++)
        if (!write_pair(o, d, R, r, "", fpaths[r], ppaths[r]))
            return false;
    Arm fa, pa;
    if (!open_arm(o, fpaths, true, fa) || !open_arm(o, ppaths, false, pa))
        return false;
    amq_filter *m = fit_maplet(d, fa.filter_bytes);
    if (m == nullptr)
        return false;
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
    Result rf, rm;
    char label[160];
    snprintf(label, sizeof label, "RocksDB %s, %g bits/key, a filter per run",
             o.ribbon ? "Ribbon" : "Bloom", o.bits);
    rf.label = label;
    rf.bytes = fa.filter_bytes;
    snprintf(label, sizeof label, "routing maplet (bound %.3g)",
             amq_filter_fpr_bound(m));
    rm.label = label;
    rm.bytes = amq_filter_serialized_size(m);
    measure(o, d, fa, pa, m, rf, rm);
    print_row(doc, R, rf);
    print_row(doc, R, rm);
    judge(o, R, m, rf, rm, true, fails);

    /* compact the older half into one run; the maplet follows */
    unsigned h = R / 2;
    compact(d, h);
    std::vector<std::string> old_f = fpaths, old_p = ppaths;
    for (unsigned r = 1; r < h; r++)
        fpaths[r] = ppaths[r] = "";
    if (!write_pair(o, d, R, 0, "-compacted", fpaths[0], ppaths[0]) ||
        !open_arm(o, fpaths, true, fa) || !open_arm(o, ppaths, false, pa))
        return false;
    double ms = update_maplet(m, d, h, R);
    if (ms < 0)
        return false;
    Result cf, cm;
    snprintf(label, sizeof label, "the same, runs 0-%u compacted into one",
             h - 1);
    cf.label = label;
    cf.bytes = fa.filter_bytes;
    snprintf(
        label, sizeof label,
        "maplet, runs 0-%u compacted into one (update %.0f ms, bound %.3g)",
        h - 1, ms, amq_filter_fpr_bound(m));
    cm.label = label;
    cm.bytes = amq_filter_serialized_size(m);
    measure(o, d, fa, pa, m, cf, cm);
    print_row(doc, R - h + 1, cf);
    print_row(doc, R - h + 1, cm);
    judge(o, R, m, cf, cm, false, fails);
    amq_filter_free(m);
    fa = Arm();
    pa = Arm();
    for (const std::vector<std::string> *v : {&old_f, &old_p, &fpaths, &ppaths})
        for (const std::string &p : *v)
            if (!p.empty())
                remove(p.c_str());
    return true;
}

bool parse(int argc, char **argv, Opts &o) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--ribbon") {
            o.ribbon = true;
            continue;
        }
        if (v == nullptr)
            return false;
        i++;
        if (a == "--keys")
            o.keys = (uint64_t)strtod(v, nullptr);
        else if (a == "--bits")
            o.bits = strtod(v, nullptr);
        else if (a == "--lookups")
            o.lookups = (uint64_t)strtod(v, nullptr);
        else if (a == "--dir")
            o.dir = v;
        else if (a == "--doc")
            o.doc = v;
        else if (a == "--check") {
            o.check = true;
            o.dir = v;
            o.keys = 200000;
            o.lookups = 20000;
            o.runs = {4, 16};
        } else if (a == "--runs") {
            o.runs.clear();
            for (const char *p = v; *p;) {
                char *end;
                o.runs.push_back((unsigned)strtoul(p, &end, 10));
                p = *end == ',' ? end + 1 : end;
                if (end == p && *p)
                    return false;
            }
        } else
            return false;
    }
    for (unsigned R : o.runs)
        if (R < 2 || R > 1024 || o.keys / R == 0)
            return false;
    return o.keys > 0 && o.lookups > 0 && o.bits > 0;
}

} // namespace

int main(int argc, char **argv) {
    Opts o;
    if (!parse(argc, argv, o)) {
        fprintf(stderr, "usage: amq-rocksdb-route [--keys N] [--runs R,...] "
                        "[--bits B] [--ribbon] [--lookups L] [--dir D] "
                        "[--doc FILE] | --check DIR\n");
        return 2;
    }
    std::string doc;
    char head[1024];
    snprintf(head, sizeof head,
             "%" PRIu64 " keys in R sorted runs (SstFileWriter, 4 KiB blocks), "
             "%" PRIu64 " lookups each of absent and present keys "
             "(`build/integrations/rocksdb/amq-rocksdb-route --keys %" PRIu64
             " --bits %g%s --lookups %" PRIu64 " --doc docs/maplets.md`):\n\n"
             "| runs | routing | filter bytes | data blocks read per absent "
             "lookup | per present lookup | absent: P(a run read in vain) | "
             "P(2 or more) | P(3 or more) | absent lookups/s | present "
             "lookups/s |\n"
             "|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
             o.keys, o.lookups, o.keys, o.bits, o.ribbon ? " --ribbon" : "",
             o.lookups);
    fputs(head, stdout);
    doc = head;
    int fails = 0;
    for (unsigned R : o.runs)
        if (!run_case(o, R, doc, &fails))
            return 1;
    if (!o.doc.empty() &&
        doc_section_replace(o.doc.c_str(), "rocksdb-route", doc.c_str()) != 0)
        return 1;
    return fails ? 1 : 0;
}
