// A replay's outcome as bytes and back (replay_codec.hpp): its fields in order, each number in its machine form.
#include "replay_codec.hpp"

#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace treering::sim::detail {
namespace {

class Writer {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  template <typename T>
  void put(const std::vector<T>& values) {
    put(values.size());
    for (const T& value : values) put(value);
  }
  void put(const std::string& text) {
    put(text.size());
    out += text;
  }
  void put(const RankTimes& t) {
    for (double value : {t.compute_s, t.wait_intra_s, t.wait_inter_s, t.collective_s, t.send_s, t.overlapped_s}) put(value);
    put(t.rank);
    put(t.phase_s);
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  void get(T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (bytes_.size() - at_ < sizeof value) throw std::runtime_error("simulator: truncated results");
    std::memcpy(&value, bytes_.data() + at_, sizeof value);
    at_ += sizeof value;
  }
  template <typename T>
  void get(std::vector<T>& values) {
    size_t count = 0;
    get(count);
    if (count > bytes_.size() - at_) throw std::runtime_error("simulator: truncated results");
    values.resize(count);
    for (T& value : values) get(value);
  }
  void get(std::string& text) {
    size_t size = 0;
    get(size);
    if (size > bytes_.size() - at_) throw std::runtime_error("simulator: truncated results");
    text = bytes_.substr(at_, size);
    at_ += size;
  }
  void get(RankTimes& t) {
    for (double* value : {&t.compute_s, &t.wait_intra_s, &t.wait_inter_s, &t.collective_s, &t.send_s, &t.overlapped_s}) get(*value);
    get(t.rank);
    get(t.phase_s);
  }
  bool at_end() const { return at_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
};

}  // namespace

std::string encode(const ReplayResult& result) {
  Writer w;
  w.put(result.activities);
  w.put(result.latency_s);
  w.put(result.gpus);
  w.put(result.rank_finish_s);
  w.put(result.link_bytes);
  w.put(result.critical);
  w.put(result.stages.size());
  for (const StageOutcome& stage : result.stages) {
    w.put(stage.finish_s);
    w.put(stage.critical);
    w.put(stage.critical_group);
  }
  w.put(result.transfers_simulated);
  w.put(result.engine);
  w.put(result.groups);
  w.put(result.groups_replayed);
  w.put(result.shortcuts.size());
  for (const std::string& shortcut : result.shortcuts) w.put(shortcut);
  return std::move(w.out);
}

ReplayResult decode_replay(const std::string& bytes) {
  Reader r(bytes);
  ReplayResult result;
  r.get(result.activities);
  r.get(result.latency_s);
  r.get(result.gpus);
  r.get(result.rank_finish_s);
  r.get(result.link_bytes);
  r.get(result.critical);
  size_t stages = 0;
  r.get(stages);
  if (stages > bytes.size()) throw std::runtime_error("simulator: truncated results");
  result.stages.resize(stages);
  for (StageOutcome& stage : result.stages) {
    r.get(stage.finish_s);
    r.get(stage.critical);
    r.get(stage.critical_group);
  }
  r.get(result.transfers_simulated);
  r.get(result.engine);
  r.get(result.groups);
  r.get(result.groups_replayed);
  size_t shortcuts = 0;
  r.get(shortcuts);
  if (shortcuts > bytes.size()) throw std::runtime_error("simulator: truncated results");
  result.shortcuts.resize(shortcuts);
  for (std::string& shortcut : result.shortcuts) r.get(shortcut);
  if (!r.at_end()) throw std::runtime_error("simulator: results run on");
  return result;
}

}  // namespace treering::sim::detail
