#include "sweep_wire.hpp"

#include <concepts>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace treering::cli {
namespace {

// A field added to one of these structs must be added to its fields() below too, or the worker processes would
// drop it silently: these sizes (GCC's libstdc++ on x86-64) stop the build until then.
#if defined(__GLIBCXX__) && defined(__x86_64__)
// Worked out field by field, e.g. DecodeResult: algorithm 4 + pad 4, seq_len 8, gpus 4, domains 4, impl 32,
// latency_s 8, breakdown 6 x 8, volume 4 x 8, memory 6 x 8, weights_s + token_s + first_call_s 24, phases 24 = 240.
static_assert(sizeof(DecodeRow) == 888, "DecodeRow changed: update fields(DecodeRow) in sweep_wire.cpp, then this size");
static_assert(sizeof(model::DecodeResult) == 240, "DecodeResult changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::DecodeBreakdown) == 48, "DecodeBreakdown changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::DecodeVolume) == 32, "DecodeVolume changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::DecodeMemory) == 48, "DecodeMemory changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::PhaseTime) == 80, "PhaseTime changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::RelativeErrors) == 64, "RelativeErrors changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::Band) == 16, "Band changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::Layout) == 12, "Layout changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::StepResult) == 200, "StepResult changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::StepPartBytes) == 40, "StepPartBytes changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::StepBreakdown) == 56, "StepBreakdown changed: update sweep_wire.cpp, then this size");
static_assert(sizeof(model::StepMemory) == 56, "StepMemory changed: update sweep_wire.cpp, then this size");
#endif

// T, const or not: one list of fields serves both the writer (const rows) and the reader.
template <class T, class U>
concept Of = std::same_as<std::remove_const_t<T>, U>;

template <class A, Of<model::DecodeBreakdown> T>
void fields(A& a, T& b) {
  a(b.compute_s, b.intra_node_s, b.inter_node_s, b.inter_node_latency_bound_s, b.overlapped_communication_s, b.host_s);
}
template <class A, Of<model::DecodeVolume> T>
void fields(A& a, T& v) {
  a(v.per_gpu, v.intra_node, v.inter_node, v.total);
}
template <class A, Of<model::DecodeMemory> T>
void fields(A& a, T& m) {
  a(m.kv_cache, m.receive_buffers, m.partial_states, m.workspace, m.weights, m.total);
}
template <class A, Of<model::PhaseTime> T>
void fields(A& a, T& p) {
  a(p.label, p.time_s, p.inter_node, p.how);
}
template <class A, Of<model::DecodeResult> T>
void fields(A& a, T& r) {
  a(r.algorithm, r.seq_len, r.gpus, r.domains, r.impl, r.latency_s, r.breakdown, r.volume, r.memory, r.weights_s, r.token_s,
    r.first_call_s, r.phases);
}
template <class A, Of<model::RelativeErrors> T>
void fields(A& a, T& e) {
  a(e.compute, e.communication, e.network_latency, e.source, e.host_staged);
}
template <class A, Of<model::Band> T>
void fields(A& a, T& b) {
  a(b.low_s, b.high_s);
}
template <class A, Of<model::Layout> T>
void fields(A& a, T& l) {
  a(l.tp, l.cp, l.replicas);
}
template <class A, Of<model::StepBreakdown> T>
void fields(A& a, T& b) {
  a(b.attention_s, b.projections_s, b.mlp_s, b.tp_communication_s, b.tp_network_latency_s, b.other_s, b.lm_head_s);
}
template <class A, Of<model::StepPartBytes> T>
void fields(A& a, T& b) {
  a(b.attention, b.projections, b.mlp, b.other, b.lm_head);
}
template <class A, Of<model::StepMemory> T>
void fields(A& a, T& m) {
  a(m.weights, m.kv_cache, m.buffers, m.activations, m.total, m.capacity, m.max_seq_len);
}
template <class A, Of<model::StepResult> T>
void fields(A& a, T& s) {
  a(s.scope, s.layer_s, s.step_s, s.tokens_per_s, s.post_attention_gpus, s.tokens_per_gpu, s.breakdown, s.part_bytes,
    s.calibrated_parts, s.memory);
}
template <class A, Of<DecodeRow> T>
void fields(A& a, T& row) {
  a(row.result, row.engine, row.cluster, row.cluster_nodes, row.nodes_used, row.workload, row.batch, row.prefill_s,
    row.generation_s, row.model_latency_s, row.transfers_simulated, row.links, row.calibration, row.extrapolation,
    row.errors, row.latency_band, row.generation_band, row.layout, row.placement, row.step, row.memory_shortfall);
}

template <class T>
concept Plain = (std::is_arithmetic_v<T> || std::is_enum_v<T>) && !std::same_as<T, bool>;

// Numbers and enums as their bytes, bools as one byte, strings and vectors after their length (8 bytes),
// optionals after a presence byte, JSON as CBOR (binary doubles: JSON text would turn infinity into null).
class Writer {
 public:
  template <class... T>
  void operator()(const T&... values) {
    (put(values), ...);
  }
  std::string bytes;

 private:
  template <Plain T>
  void put(const T& value) {
    bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put(bool value) { bytes += value ? '\1' : '\0'; }
  void put(const std::string& text) {
    put(static_cast<std::uint64_t>(text.size()));
    bytes += text;
  }
  void put(const nlohmann::ordered_json& json) {
    const std::vector<std::uint8_t> cbor = nlohmann::ordered_json::to_cbor(json);
    put(std::string(cbor.begin(), cbor.end()));
  }
  template <class T>
  void put(const std::optional<T>& value) {
    put(value.has_value());
    if (value) put(*value);
  }
  template <class T>
  void put(const std::vector<T>& values) {
    put(static_cast<std::uint64_t>(values.size()));
    for (const T& value : values) put(value);
  }
  template <class T>
    requires std::is_class_v<T>
  void put(const T& record) {
    fields(*this, record);
  }
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  template <class... T>
  void operator()(T&... values) {
    (get(values), ...);
  }
  void expect_end() const {
    if (at_ != bytes_.size()) throw std::runtime_error("a sweep row with " + std::to_string(bytes_.size() - at_) + " bytes left over");
  }

 private:
  void take(void* out, std::size_t size) {
    if (size > bytes_.size() - at_) throw std::runtime_error("a truncated sweep row");
    std::memcpy(out, bytes_.data() + at_, size);
    at_ += size;
  }
  std::uint64_t take_count() {
    std::uint64_t count = 0;
    take(&count, sizeof count);
    if (count > bytes_.size() - at_) throw std::runtime_error("a truncated sweep row");  // each element >= 1 byte
    return count;
  }
  template <Plain T>
  void get(T& value) {
    take(&value, sizeof value);
  }
  void get(bool& value) {
    char byte = 0;
    take(&byte, 1);
    if (byte != 0 && byte != 1) throw std::runtime_error("a sweep row with a bad flag");
    value = byte == 1;
  }
  void get(std::string& text) {
    text.resize(take_count());
    take(text.data(), text.size());
  }
  void get(nlohmann::ordered_json& json) {
    std::string cbor;
    get(cbor);
    json = nlohmann::ordered_json::from_cbor(cbor);
  }
  template <class T>
  void get(std::optional<T>& value) {
    bool present = false;
    get(present);
    value.reset();
    if (present) get(value.emplace());
  }
  template <class T>
  void get(std::vector<T>& values) {
    values.resize(take_count());
    for (T& value : values) get(value);
  }
  template <class T>
    requires std::is_class_v<T>
  void get(T& record) {
    fields(*this, record);
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

}  // namespace

std::string encode_row(const DecodeRow& row) {
  Writer writer;
  writer(row);
  return std::move(writer.bytes);
}

DecodeRow decode_row(const std::string& bytes) {
  DecodeRow row;
  Reader reader(bytes);
  reader(row);
  reader.expect_end();
  return row;
}

}  // namespace treering::cli
