// Serving engines' own benchmarks, read as the engines write them, and predicted like for like.
//
// vLLM's `vllm bench latency --output-json F` (vllm/benchmarks/latency.py; benchmarks/benchmark_latency.py before
// the CLI) times llm.generate() of one batch: `batch_size` prompts of `input_len` random tokens, each generating
// exactly `output_len` tokens (ignore_eos), end to end, `num_iters` times. F holds only the times:
//   {"avg_latency": 1.23, "std_latency": 0.01, "latencies": [...], "percentiles": {"10": ..., "50": ..., ...}}
// With SAVE_TO_PYTORCH_BENCHMARK_FORMAT=1 it also writes F's stem + ".pytorch.json", a list of records whose
// benchmark.extra_info.args are the command's arguments (batch_size, input_len, output_len,
// tensor_parallel_size, model, n, use_beam_search, ...) and whose metric.benchmark_values are the latencies.
// The settings are read from that record (the .pytorch.json named, or found beside F), or from the same keys
// written into F itself; a file without them is refused: a time is meaningless without its batch, lengths and TP.
//
// vLLM's `vllm bench serve --save-result` (vllm/benchmarks/serve.py; benchmark_serving.py before the CLI) sends
// requests to a running server and writes one JSON object: model_id, max_concurrency, request_rate ("inf" or a
// rate), completed, total_input_tokens, total_output_tokens, mean/median/p99 ttft_ms, tpot_ms (a request's time
// after its first token over its other tokens), itl_ms, and every `--metadata KEY=VALUE` as a top-level string.
// Read as a closed loop of max_concurrency requests (request_rate "inf"; a finite rate is refused: the
// concurrency then varies), each of the mean prompt and output lengths; the server's TP is not in the file and
// must come as metadata (`--metadata tensor_parallel_size=2`, or tp=2). Its quantity is the mean TPOT.
//
// SGLang's `python -m sglang.bench_one_batch --result-filename F` appends a JSON line per (batch, input, output) of
// its sweep: prefill_latency, median_decode_latency (each decode step synchronised and timed alone), total_latency,
// but neither the model nor the TP: "model_path" and "tp_size" must be added to each line. Each line is a run whose
// quantity is the median decode step.
//
// LMDeploy's profile_generation CSV (a row a run, the median token latency its quantity; "model" and "tp" columns
// added) and treering's table of published engine measurements are read too (engine_tables.hpp in validate/src),
// and TensorRT-LLM's `trtllm-bench ... --streaming --report_json F` reports, as serving runs (trtllm_runs.hpp).
#pragma once

#include <string>
#include <vector>

namespace treering::validate {

struct EngineRun {
  std::string engine = "vllm";  // vllm, sglang, lmdeploy, or a table's "ENGINE VERSION"
  // latency (vLLM, tables): the whole batch's generate(); serve (vLLM, trtllm-bench): a server at a concurrency; step
  // (SGLang's one-batch, LMDeploy's token latency, tables): the median of a batch's decode steps
  std::string benchmark = "latency";
  std::string model;         // as the engine was given it (a Hugging Face id)
  std::string workload;      // the treering workload preset it is
  int batch = 1;             // latency: the batch; serve: the concurrency (sequences decoding at once)
  long long input_len = 0;   // prompt tokens per sequence
  long long output_len = 0;  // generated tokens per sequence
  int tp = 1;
  // Every sequence is the same prompt decoded greedily (TensorRT-LLM's examples/run.py given one input text for the
  // whole batch): an MoE model's sequences route alike (topologies::Workload::identical_sequences).
  bool identical_sequences = false;
  // What the benchmark reports: latency, the median of the iterations' end-to-end times; serve, the mean TPOT;
  // step, the median decode step.
  double measured_s = 0;
  std::vector<double> latencies_s;  // latency: every iteration's
  double mean_ttft_s = 0;           // serve: the mean time to the first token
  double median_itl_s = 0;          // serve: the median and 99th-percentile inter-token latency (0: not in the file)
  double p99_itl_s = 0;
  // Steps of the engine in the quantity: latency, output_len (the prefill's and every decode step); else one.
  long long engine_steps() const { return benchmark == "latency" ? output_len : 1; }
  std::string file;
};

// True when `path` is a JSON file of vLLM's latency benchmark (its results, or its .pytorch.json records) or of its
// serving benchmark, trtllm-bench's report, SGLang's one-batch JSON lines, LMDeploy's profile_generation CSV or
// treering's engine table.
bool is_engine_benchmark_file(const std::string& path);

// The run `path` holds (one batch size, lengths and TP per file). topologies::InputError naming the file when the
// settings are missing or out of range, the model is no workload preset, or a setting the model cannot predict
// was used (n > 1, beam search, a finite request rate).
EngineRun read_engine_run(const std::string& path);
// Every run `path` holds: a vLLM file's one, a line each of SGLang's, a row each of a CSV's. The same errors.
std::vector<EngineRun> read_engine_runs(const std::string& path);

// The workload preset a Hugging Face model id names, compared without case, organisation, "Meta-" and
// "-Instruct" and with only letters and digits: "meta-llama/Llama-3.1-8B-Instruct" -> "llama3.1-8b",
// "meta-llama/Llama-3.1-405B-Instruct-FP8" -> "llama3.1-405b-fp8"; a release after the size is dropped:
// "mistralai/Mistral-7B-v0.1" -> "mistral-7b". "" when none matches.
std::string workload_for_model(const std::string& model_id);

}  // namespace treering::validate
