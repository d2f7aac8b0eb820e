// amq_rocksdb.cc — see amq_rocksdb.h.
//
//   flush / compaction into level L
//        |  FilterBuildingContext{level_at_creation = L}
//        v
//   LevelFilterPolicy --(bits_[L])--> RocksDB's Bloom/Ribbon policy
//        |                                  builds the filter block
//   reads: any built-in reader (the format says its own parameters)
//
// One inner policy per level is made up front (RocksDB's policies are
// immutable and cheap), so building never allocates a policy.
#include "amq_rocksdb.h"

#include <algorithm>
#include <cmath>

#include "amq/amq.h"

namespace amq_rocksdb {

namespace {

std::unique_ptr<const rocksdb::FilterPolicy> MakeInner(double bits,
                                                       FilterKind kind) {
    if (kind == FilterKind::kRibbon)
        return std::unique_ptr<const rocksdb::FilterPolicy>(
            rocksdb::NewRibbonFilterPolicy(bits));
    return std::unique_ptr<const rocksdb::FilterPolicy>(
        rocksdb::NewBloomFilterPolicy(bits));
}

} // namespace

LevelFilterPolicy::LevelFilterPolicy(std::vector<double> bits_per_level,
                                     FilterKind kind)
    : bits_(std::move(bits_per_level)) {
    if (bits_.empty())
        bits_.push_back(10.0);
    for (double &b : bits_) {
        if (!(b >= 0) || !std::isfinite(b))
            b = 0; // no filter
        inner_.push_back(MakeInner(b, kind));
    }
}

double LevelFilterPolicy::BitsForLevel(int level) const {
    size_t i = level < 0 ? 0 : static_cast<size_t>(level);
    return bits_[std::min(i, bits_.size() - 1)];
}

const rocksdb::FilterPolicy &LevelFilterPolicy::ForLevel(int level) const {
    size_t i = level < 0 ? 0 : static_cast<size_t>(level);
    return *inner_[std::min(i, inner_.size() - 1)];
}

const char *LevelFilterPolicy::CompatibilityName() const {
    return inner_.front()->CompatibilityName();
}

rocksdb::FilterBitsBuilder *LevelFilterPolicy::GetBuilderWithContext(
    const rocksdb::FilterBuildingContext &context) const {
    return ForLevel(context.level_at_creation).GetBuilderWithContext(context);
}

rocksdb::FilterBitsReader *LevelFilterPolicy::GetFilterBitsReader(
    const rocksdb::Slice &contents) const {
    return inner_.front()->GetFilterBitsReader(contents);
}

bool PlanLevels(const std::vector<double> &keys,
                const std::vector<double> &lookups, double bits_per_key,
                const std::string &curve, std::vector<double> *out,
                std::string *error) {
    error->clear();
    if (keys.size() != lookups.size() || keys.empty()) {
        *error = "one key count and one lookup count per level";
        return false;
    }
    amq_alloc_curve *c = nullptr;
    amq_diag diag = {};
    amq_status st =
        curve == "model"
            ? amq_alloc_curve_model(AMQ_ALLOC_BLOOM_C, nullptr, &c)
            : amq_alloc_curve_spec(curve.c_str(), nullptr, &c, &diag);
    std::vector<amq_alloc_group> groups;
    std::vector<amq_alloc_pick> picks(keys.size());
    double total = 0;
    for (size_t i = 0; st == AMQ_OK && i < keys.size(); i++) {
        groups.push_back(amq_alloc_group{keys[i], lookups[i], c});
        total += keys[i];
    }
    if (st == AMQ_OK)
        st = amq_alloc_min_cost(groups.data(), groups.size(),
                                bits_per_key * total, picks.data(), nullptr);
    amq_alloc_curve_free(c);
    if (st != AMQ_OK) {
        *error = std::string(amq_strerror(st)) +
                 (diag.message[0] ? std::string(": ") + diag.message : "");
        return false;
    }
    out->clear();
    for (const amq_alloc_pick &p : picks)
        out->push_back(p.bits_per_key);
    return true;
}

} // namespace amq_rocksdb
