// TensorRT-LLM's `trtllm-bench --model M throughput --dataset D --streaming --concurrency N --report_json F`
// (tensorrt_llm/bench/dataclasses/reporting.py, get_statistics_dict): one JSON object with "engine" (model,
// version, backend), "world_info" (tp_size, pp_size, ep_size, max_batch_size, ...), "request_info" (num_requests,
// avg_num_concurrent_requests, avg_input_length, avg_output_length), "performance" (latencies and throughputs in
// ms and tokens/s) and, with --streaming only, "streaming_metrics" (avg_ttft_ms, avg_tpot_ms and percentiles).
// Read as vLLM's serving runs are (engine_runs.hpp): a closed loop at the measured mean concurrency, of the mean
// lengths, whose quantity is the mean TPOT; a report without streaming metrics (no TPOT measured) or with pipeline
// parallelism is refused. Private to validate (engine_runs.cpp reads through it).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "treering/validate/engine_runs.hpp"

namespace treering::validate::detail {

// True when `json` is a trtllm-bench report (an object with engine, world_info, request_info and performance).
bool is_trtllm_bench_report(const nlohmann::json& json);
// Its run, the workload not yet resolved. topologies::InputError "PATH: error: ..." as above.
EngineRun run_from_trtllm_bench(const nlohmann::json& json, const std::string& path);

}  // namespace treering::validate::detail
