// A replay's outcome as bytes and back (replay_codec.hpp): one list of its fields (fields(), below) that a writer
// and a reader both walk, each number in its machine form, each vector and string after its length.
#include "replay_codec.hpp"

#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace treering::sim::detail {
namespace {

class Writer {
 public:
  template <typename T>
  void operator()(const T& value) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      out.append(reinterpret_cast<const char*>(&value), sizeof value);
    } else if constexpr (std::is_same_v<T, std::string>) {
      (*this)(value.size());
      out += value;
    } else {
      (*this)(value.size());
      for (const auto& item : value) fields(*this, const_cast<typename T::value_type&>(item));
    }
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  void operator()(T& value) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      take(sizeof value);
      std::memcpy(&value, bytes_.data() + at_ - sizeof value, sizeof value);
    } else if constexpr (std::is_same_v<T, std::string>) {
      const size_t size = count();
      take(size);
      value = bytes_.substr(at_ - size, size);
    } else {
      value.resize(count());
      for (auto& item : value) fields(*this, item);
    }
  }
  bool at_end() const { return at_ == bytes_.size(); }

 private:
  size_t count() {  // a length, no larger than what is left (a count of items takes at least a byte each)
    size_t size = 0;
    (*this)(size);
    if (size > bytes_.size() - at_) throw std::runtime_error("simulator: truncated results");
    return size;
  }
  void take(size_t size) {
    if (bytes_.size() - at_ < size) throw std::runtime_error("simulator: truncated results");
    at_ += size;
  }
  const std::string& bytes_;
  size_t at_ = 0;
};

// Every field, in order, for both directions; plain values go as they are.
template <class Archive, class T>
void fields(Archive& a, T& value) {
  a(value);
}
template <class Archive>
void fields(Archive& a, RankTimes& t) {
  for (double* value : {&t.compute_s, &t.wait_intra_s, &t.wait_inter_s, &t.collective_s, &t.send_s, &t.overlapped_s})
    a(*value);
  a(t.rank);
  a(t.phase_s);
}
template <class Archive>
void fields(Archive& a, StageOutcome& stage) {
  a(stage.finish_s);
  fields(a, stage.critical);
  a(stage.critical_group);
}
template <class Archive>
void fields(Archive& a, ReplayResult& r) {
  a(r.activities);
  a(r.latency_s);
  a(r.gpus);
  a(r.rank_finish_s);
  a(r.link_bytes);
  fields(a, r.critical);
  a(r.stages);
  a(r.transfers_simulated);
  a(r.engine);
  a(r.groups);
  a(r.groups_replayed);
  a(r.shortcuts);
}

}  // namespace

std::string encode(const ReplayResult& result) {
  Writer writer;
  fields(writer, const_cast<ReplayResult&>(result));
  return std::move(writer.out);
}

ReplayResult decode_replay(const std::string& bytes) {
  Reader reader(bytes);
  ReplayResult result;
  fields(reader, result);
  if (!reader.at_end()) throw std::runtime_error("simulator: results run on");
  return result;
}

}  // namespace treering::sim::detail
