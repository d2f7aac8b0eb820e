// amq_rocksdb.h — Monkey inside RocksDB: a filter policy that gives each
// LSM level its own bits per key, planned by amq's allocation engine.
//
//   auto bits = amq_rocksdb::PlanLevels(keys_per_level, lookups_per_level,
//                                       5.0, "blocked");
//   table_options.filter_policy =
//       std::make_shared<amq_rocksdb::LevelFilterPolicy>(bits);
//
// The policy builds no filter itself: for a table file written to level L
// (FilterBuildingContext::level_at_creation: 0 for flushes, the output
// level for compactions) it hands the build to RocksDB's own Bloom (or
// Ribbon) policy at level L's bits per key, and every table is read by
// RocksDB's own reader. Its CompatibilityName is the built-in one, so the
// tables stay readable by RocksDB's stock Bloom/Ribbon policies and a
// database may switch policies between opens: only newly written tables
// get the new sizes.
//
// Levels deeper than the vector use its last entry; 0 bits (below 0.5)
// means no filter for that level. Thread-safety: as RocksDB requires of a
// FilterPolicy (immutable after construction).
#ifndef AMQ_ROCKSDB_H
#define AMQ_ROCKSDB_H

#include <rocksdb/filter_policy.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace amq_rocksdb {

enum class FilterKind { kBloom, kRibbon };

class LevelFilterPolicy : public rocksdb::FilterPolicy {
  public:
    explicit LevelFilterPolicy(std::vector<double> bits_per_level,
                               FilterKind kind = FilterKind::kBloom);

    const char *Name() const override { return "amq.LevelFilterPolicy"; }
    const char *CompatibilityName() const override;
    rocksdb::FilterBitsBuilder *GetBuilderWithContext(
        const rocksdb::FilterBuildingContext &context) const override;
    rocksdb::FilterBitsReader *GetFilterBitsReader(
        const rocksdb::Slice &contents) const override;

    // The bits per key a table written to `level` gets.
    double BitsForLevel(int level) const;
    const std::vector<double> &bits() const { return bits_; }

  private:
    const rocksdb::FilterPolicy &ForLevel(int level) const;

    std::vector<double> bits_;
    std::vector<std::unique_ptr<const rocksdb::FilterPolicy>> inner_;
};

// The same with bits that change while the database runs: SetBits gives
// the tables written from then on (flushes and compactions) the new
// per-level bits; tables already written keep theirs until compaction
// rewrites them. Inner policies are made once per distinct bits value
// (rounded to 1/100) and kept. Thread-safety: any call from any thread
// (a mutex guards the bits; RocksDB builds filters from its background
// threads).
class AdaptiveLevelFilterPolicy : public rocksdb::FilterPolicy {
  public:
    explicit AdaptiveLevelFilterPolicy(std::vector<double> bits_per_level,
                                       FilterKind kind = FilterKind::kBloom);
    ~AdaptiveLevelFilterPolicy() override;

    const char *Name() const override {
        return "amq.AdaptiveLevelFilterPolicy";
    }
    const char *CompatibilityName() const override;
    rocksdb::FilterBitsBuilder *GetBuilderWithContext(
        const rocksdb::FilterBuildingContext &context) const override;
    rocksdb::FilterBitsReader *GetFilterBitsReader(
        const rocksdb::Slice &contents) const override;

    void SetBits(std::vector<double> bits_per_level);
    std::vector<double> bits() const;
    double BitsForLevel(int level) const;

  private:
    struct State;
    std::unique_ptr<State> state_;
};

// Monkey through amq's allocation engine (amq/alloc.h): level i holds
// keys[i] keys and receives lookups[i] probes of absent keys (any scale);
// the levels share bits_per_key * sum(keys) bits. `curve` is "model"
// (e^(-(ln 2)^2 b)) or an amq spec whose curve stands in for RocksDB's
// filter ("blocked": RocksDB's Bloom is cache-line local too). On success
// *out holds one bits-per-key value per level and *error is empty;
// otherwise *error says why and false is returned.
bool PlanLevels(const std::vector<double> &keys,
                const std::vector<double> &lookups, double bits_per_key,
                const std::string &curve, std::vector<double> *out,
                std::string *error);

} // namespace amq_rocksdb

#endif
