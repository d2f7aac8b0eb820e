// bench_common.h — what the RocksDB benchmarks share (rocksdb_bench.cc,
// adapt_bench.cc): the key stream, the database's options, waiting for
// compactions, and reading per-level shape (keys, files, filter bytes)
// from RocksDB's metadata and per-level probes from its perf context.
#ifndef AMQ_ROCKSDB_BENCH_COMMON_H
#define AMQ_ROCKSDB_BENCH_COMMON_H

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>

namespace amq_bench {

inline uint64_t Mix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

inline double Unit(uint64_t *s) { return ((Mix(s) >> 11) + 0.5) * 0x1.0p-53; }

// 16-byte keys: the big-endian key number, then 8 bytes derived from it
// (so keys are not a dense prefix range).
inline std::string Key(uint64_t id) {
    char b[16];
    uint64_t t = id, h = id * 0x9e3779b97f4a7c15ULL;
    for (int i = 7; i >= 0; i--)
        b[i] = static_cast<char>(t & 255), t >>= 8;
    std::memcpy(b + 8, &h, 8);
    return std::string(b, 16);
}

// A rank in 1..n drawn from the bounded Zipf(s) law by inversion (u in
// (0, 1)).
inline uint64_t ZipfRank(double n, double s, double u) {
    double r = std::fabs(s - 1) < 1e-9
                   ? std::pow(n, u)
                   : std::pow((std::pow(n, 1 - s) - 1) * u + 1, 1 / (1 - s));
    uint64_t k = static_cast<uint64_t>(r);
    return k < 1 ? 1 : (k > n ? static_cast<uint64_t>(n) : k);
}

// Leveled, T = 10, level sizes from the bottom up, no compression, no
// block cache (every data-block access is a read), statistics on; write
// buffers and table files of buffer_mb.
inline rocksdb::Options DbOptions(
    double level_base_mb, std::shared_ptr<const rocksdb::FilterPolicy> fp,
    double buffer_mb = 16) {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.compression = rocksdb::kNoCompression;
    o.write_buffer_size = static_cast<size_t>(buffer_mb * 1048576);
    o.max_write_buffer_number = 3;
    o.target_file_size_base = static_cast<uint64_t>(buffer_mb * 1048576);
    o.max_bytes_for_level_base = static_cast<uint64_t>(level_base_mb * 1048576);
    o.max_bytes_for_level_multiplier = 10;
    o.level_compaction_dynamic_level_bytes = true;
    o.max_background_jobs = 2;
    o.max_open_files = -1;
    o.statistics = rocksdb::CreateDBStatistics();
    rocksdb::BlockBasedTableOptions t;
    t.filter_policy = std::move(fp);
    t.no_block_cache = true;
    t.cache_index_and_filter_blocks = false;
    o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
    return o;
}

inline void WaitForCompactions(rocksdb::DB *db) {
    for (;;) {
        uint64_t pending = 1, running = 1;
        db->GetIntProperty("rocksdb.compaction-pending", &pending);
        db->GetIntProperty("rocksdb.num-running-compactions", &running);
        if (pending == 0 && running == 0)
            return;
        usleep(100000);
    }
}

struct LevelStats {
    double keys = 0, files = 0, filter_bytes = 0;
    uint64_t useful = 0, positive = 0, true_positive = 0;
};

// Keys, files and filter bytes of every level (by level number) into
// *levels; the database's filter bytes in all.
inline double Shape(rocksdb::DB *db, std::map<int, LevelStats> *levels) {
    rocksdb::ColumnFamilyMetaData meta;
    rocksdb::TablePropertiesCollection props;
    double total = 0;
    db->GetColumnFamilyMetaData(&meta);
    db->GetPropertiesOfAllTables(&props);
    std::map<std::string, const rocksdb::TableProperties *> by_name;
    for (const auto &[path, tp] : props)
        by_name[path.substr(path.rfind('/'))] = tp.get();
    for (const auto &l : meta.levels)
        for (const auto &f : l.files) {
            LevelStats &s = (*levels)[l.level];
            s.files += 1;
            s.keys += static_cast<double>(f.num_entries);
            auto it = by_name.find(f.name);
            if (it != by_name.end()) {
                s.filter_bytes += static_cast<double>(it->second->filter_size);
                total += static_cast<double>(it->second->filter_size);
            }
        }
    return total;
}

// The filters' counts per level since the perf context was reset (with
// per-level counting enabled), into *levels.
inline void LevelProbes(std::map<int, LevelStats> *levels) {
    rocksdb::PerfContext *pc = rocksdb::get_perf_context();
    if (pc->level_to_perf_context == nullptr)
        return;
    for (const auto &[level, c] : *pc->level_to_perf_context) {
        LevelStats &s = (*levels)[static_cast<int>(level)];
        s.useful = c.bloom_filter_useful;
        s.positive = c.bloom_filter_full_positive;
        s.true_positive = c.bloom_filter_full_true_positive;
    }
}

} // namespace amq_bench

#endif
