#!/usr/bin/env python3
"""Writes validate/data/engine-runs/llm-inference-bench-*.csv from LLM-Inference-Bench's results.

LLM-Inference-Bench (Chitty-Venkata et al., PMBS 2024, arXiv 2411.00136; github.com/argonne-lcf/LLM-Inference-Bench)
publishes every run of its study in Plots/All_results.csv: Hardware, Num of Hardware (the TP), Framework, Model,
Input Output Length (the prompt and the output are both this long), Batch Size, Latency (seconds, the batch end to
end) and Throughput (batch x (input + output) / latency). This keeps the rows treering can predict like for like:
  - vLLM (its benchmark_latency: ignore_eos, every sequence generates output_len tokens) on A100, H100 and MI300X,
    and TensorRT-LLM 0.11 (static batch, run.py --run_profiling) on A100 and H100;
  - models that are treering workload presets; batch 1 to 64;
  - a configuration measured twice: the mean of the two (they agree within 3 %);
  - latencies that are physically possible: at least output_len decode steps, each streaming the active weights
    (fp16) of one TP rank at the GPU's peak HBM bandwidth. Faster rows generated fewer tokens than asked (the
    TensorRT-LLM runs stop at end-of-sequence; some Qwen2 rows at 2,048 tokens take barely the prefill's time).
The prompts column says how the batch was made: vLLM's script (vLLM/A100/Throughput_measurement/
benchmark_throughput.py) draws each sequence's prompt at random and samples at temperature 1 ("distinct"); the
TensorRT-LLM one (TensorRT-LLM/H100/run_power.py, generate_input) replicates one prompt ("France" input_len times)
over the batch and decodes greedily (run.py's default top_k 1), so every sequence is the same ("identical"), and
Mixtral's sequences route to the same two experts a layer whatever the batch.
Left out: DeepSpeed-MII (its pipeline stops at end-of-sequence: the tokens generated are not known), llama.cpp
(no tensor parallelism), GH200, MI250, Gaudi2, Intel and SambaNova (no treering cluster preset).

Usage: engine_tables_from_llm_inference_bench.py All_results.csv OUTPUT_DIR [COMMIT]
"""
import csv
import sys
from collections import defaultdict

GPUS = {"Nvidia A100 GPU": "a100", "Nvidia H100 GPU": "h100", "AMD MI300X GPU": "mi300x"}
# The study's A100 runs were made on ALCF Polaris (its scripts' paths, /lus/grand/projects, are Polaris's file
# system): A100 SXM4 40GB, four to a node.
CLUSTERS = {"a100": "polaris-a100", "h100": "dgx-h100", "mi300x": "mi300x"}
MODELS = {"meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf", "meta-llama/Meta-Llama-3-8B",
          "meta-llama/Meta-Llama-3-70B", "mistralai/Mistral-7B-v0.1", "mistralai/Mixtral-8x7B-v0.1",
          "Qwen/Qwen2-7B", "Qwen/Qwen2-72B"}
# The releases, from the study's own files: vLLM on MI300X is built from `git checkout v0.6.1`; on A100 its
# requirements (vllm-flash-attn 2.6.1, xformers 0.0.27.post2, mistral_common >= 1.4) are vLLM 0.6.1's; on H100 it is
# `pip install vllm` of mid-2024, unpinned; TensorRT-LLM is tensorrt_llm==0.11.0 (its requirements.txt).
VERSIONS = {("vLLM", "a100"): "0.6.1", ("vLLM", "h100"): "2024 pip (unpinned)", ("vLLM", "mi300x"): "0.6.1 ROCm",
            ("TensorRT-LLM", "a100"): "0.11.0", ("TensorRT-LLM", "h100"): "0.11.0"}
ENGINES = {"vLLM": "vllm", "TensorRT-LLM": "trtllm"}
PROMPTS = {"vLLM": "distinct", "TensorRT-LLM": "identical"}
# Peak HBM bandwidth (datasheets: A100 40GB SXM 1,555 GB/s, H100 SXM 3.35 TB/s, MI300X 5.3 TB/s) and the parameters
# a decode step of one sequence reads (the model cards; Mixtral 8x7B: 12.9e9 active of 46.7e9).
PEAK_HBM_BPS = {"a100": 1.555e12, "h100": 3.35e12, "mi300x": 5.3e12}
ACTIVE_PARAMETERS = {"meta-llama/Llama-2-7b-hf": 6.74e9, "meta-llama/Llama-2-70b-hf": 68.98e9,
                     "meta-llama/Meta-Llama-3-8B": 8.03e9, "meta-llama/Meta-Llama-3-70B": 70.55e9,
                     "mistralai/Mistral-7B-v0.1": 7.24e9, "mistralai/Mixtral-8x7B-v0.1": 12.9e9,
                     "Qwen/Qwen2-7B": 7.62e9, "Qwen/Qwen2-72B": 72.71e9}


def physically_possible(gpu, model, tp, length, seconds):
    floor_s = length * 2 * ACTIVE_PARAMETERS[model] / tp / PEAK_HBM_BPS[gpu]
    return seconds >= floor_s


def main(source, out_dir, commit="4211f5d"):
    latencies = defaultdict(list)
    for row in csv.DictReader(open(source, newline="")):
        gpu = GPUS.get(row["Hardware"])
        if gpu is None or row["Model"] not in MODELS or (row["Framework"], gpu) not in VERSIONS:
            continue
        if int(row["Batch Size"]) > 64:
            continue
        key = (gpu, row["Framework"], row["Model"], int(row["Num of Hardware"]), int(row["Batch Size"]),
               int(row["Input Output Length"]))
        if physically_possible(gpu, row["Model"], key[3], key[5], float(row["Latency"])):
            latencies[key].append(float(row["Latency"]))
        else:
            print(f"left out (faster than the weights allow): {','.join(str(k) for k in key)} {row['Latency']} s")
    for gpu, framework in sorted(set((key[0], key[1]) for key in latencies)):
        path = f"{out_dir}/llm-inference-bench-{ENGINES[framework]}-{gpu}.csv"
        with open(path, "w", newline="") as out:
            out.write(f"# LLM-Inference-Bench (Chitty-Venkata et al., PMBS 2024, arXiv 2411.00136), "
                      f"github.com/argonne-lcf/LLM-Inference-Bench commit {commit}, Plots/All_results.csv: the rows of "
                      f"{framework} on {gpu} (treering validate --cluster {CLUSTERS[gpu]} --nodes 1 FILE).\n")
            out.write("# fp16; prompt and output equally long; latency = the batch end to end (prefill + decode); "
                      "written by scripts/engine_tables_from_llm_inference_bench.py\n")
            out.write("engine,version,model,tp,batch,input_len,output_len,quantity,measured_s,prompts\n")
            for key in sorted(k for k in latencies if k[:2] == (gpu, framework)):
                model, tp, batch, length = key[2:]
                seconds = sum(latencies[key]) / len(latencies[key])
                out.write(f"{ENGINES[framework]},{VERSIONS[(framework, gpu)]},{model},{tp},{batch},{length},{length},"
                          f"latency,{seconds:.6g},{PROMPTS[framework]}\n")
        print(path)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
