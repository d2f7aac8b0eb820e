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
#include <map>

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

// ---- bits that change ------------------------------------------------------

struct AdaptiveLevelFilterPolicy::State {
    mutable std::mutex mu;
    FilterKind kind;
    std::vector<double> bits;
    // by bits x 100: made once, kept while the policy lives
    mutable std::map<long, std::unique_ptr<const rocksdb::FilterPolicy>> inner;

    const rocksdb::FilterPolicy &For(double b) const {
        long k = std::lround(b * 100);
        auto it = inner.find(k);
        if (it == inner.end())
            it = inner.emplace(k, MakeInner(k / 100.0, kind)).first;
        return *it->second;
    }
};

static std::vector<double> Clean(std::vector<double> bits) {
    if (bits.empty())
        bits.push_back(10.0);
    for (double &b : bits)
        if (!(b >= 0) || !std::isfinite(b))
            b = 0;
    return bits;
}

AdaptiveLevelFilterPolicy::AdaptiveLevelFilterPolicy(
    std::vector<double> bits_per_level, FilterKind kind)
    : state_(new State) {
    state_->kind = kind;
    state_->bits = Clean(std::move(bits_per_level));
    state_->For(10.0); // the reader and the compatibility name
}

AdaptiveLevelFilterPolicy::~AdaptiveLevelFilterPolicy() = default;

void AdaptiveLevelFilterPolicy::SetBits(std::vector<double> bits_per_level) {
    std::lock_guard<std::mutex> g(state_->mu);
    state_->bits = Clean(std::move(bits_per_level));
}

std::vector<double> AdaptiveLevelFilterPolicy::bits() const {
    std::lock_guard<std::mutex> g(state_->mu);
    return state_->bits;
}

double AdaptiveLevelFilterPolicy::BitsForLevel(int level) const {
    std::lock_guard<std::mutex> g(state_->mu);
    size_t i = level < 0 ? 0 : static_cast<size_t>(level);
    return state_->bits[std::min(i, state_->bits.size() - 1)];
}

const char *AdaptiveLevelFilterPolicy::CompatibilityName() const {
    std::lock_guard<std::mutex> g(state_->mu);
    return state_->For(10.0).CompatibilityName();
}

rocksdb::FilterBitsBuilder *AdaptiveLevelFilterPolicy::GetBuilderWithContext(
    const rocksdb::FilterBuildingContext &context) const {
    std::lock_guard<std::mutex> g(state_->mu);
    size_t i = context.level_at_creation < 0
                   ? 0
                   : static_cast<size_t>(context.level_at_creation);
    double b = state_->bits[std::min(i, state_->bits.size() - 1)];
    return state_->For(b).GetBuilderWithContext(context);
}

rocksdb::FilterBitsReader *AdaptiveLevelFilterPolicy::GetFilterBitsReader(
    const rocksdb::Slice &contents) const {
    std::lock_guard<std::mutex> g(state_->mu);
    return state_->For(10.0).GetFilterBitsReader(contents);
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
