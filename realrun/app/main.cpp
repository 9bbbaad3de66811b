// treering-realrun: runs the decode plans for real, one MPI rank per GPU (or CPU process):
//   mpirun -np 3 treering-realrun decode --backend cpu --algo tree,ring --workload paper-mha16 --seq-len 10000 -o
//   run.json treering-realrun info
// Exit codes: 0 success, 1 a failed check or an internal error, 2 bad input.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <stdexcept>

#include "bench_command.hpp"
#include "cli_choices.hpp"
#include "decode_command.hpp"
#include "mpi_transport.hpp"
#include "nccl_bench.hpp"
#include "step_command.hpp"
#include "treering/model/decode_algorithms.hpp"
#include "treering/realrun/build_info.hpp"
#include "treering/topologies/error_exit.hpp"
#include "treering/topologies/input_files_read.hpp"
#include "treering/topologies/output_file.hpp"
#include "treering/topologies/units.hpp"

using namespace treering::realrun;

namespace {

void print_info(const app::MpiTransport& transport) {
  const BuildInfo info = build_info();
  std::printf(
      "treering-realrun\n  backends: %s\n  MPI:      %s, %d ranks\n  CUDA:     %s\n  NCCL:     %s\n  devices:  %s\n",
      backends_line(info).c_str(), transport.library_version().c_str(), transport.ranks(),
      info.cuda_compiled ? info.cuda_runtime_version.c_str() : "not compiled in",
      info.nccl_compiled ? info.nccl_version.c_str() : "not compiled in", info.cuda_device_status.c_str());
}

int run(int argc, char** argv, app::MpiTransport& transport) {
  if (!transport.same_on_all_ranks(app::arguments_fingerprint(argc, argv))) {
    if (transport.rank() == 0) {
      std::fprintf(stderr,
                   "error: the ranks were started with different arguments; every rank must run the same command "
                   "(check the mpirun/srun line)\n");
    }
    return 2;
  }
  CLI::App cli{"treering-realrun: the decode plans run for real (launch with mpirun, one rank per device)"};
  cli.require_subcommand(1);
  auto* info = cli.add_subcommand("info", "What was compiled in, the MPI library and the devices visible");
  app::DecodeOptions options;
  for (int i = 0; i < argc; ++i) options.argv.emplace_back(argv[i]);
  auto* decode = cli.add_subcommand("decode", "Run decode plans, check them against the reference, time them");
  app::add_backend_option(*decode, options.backend, "cpu (host kernels, MPI) or cuda (one GPU per rank, NCCL)",
                          app::cpu_or_cuda);
  decode
      ->add_option("--algo", options.algorithms,
                   treering::model::decode_algorithm_names(true) +
                       " (cpu also: " + treering::model::decode_algorithm_names(false) + ")")
      ->delimiter(',')
      ->capture_default_str();
  decode->add_option("--workload", options.workload, "A workload preset (16-bit)")->capture_default_str();
  decode
      ->add_option("--seq-len", options.seq_len,
                   std::string("Context lengths: 10000, lists 1k,10k and ranges 1k:64k:x2; ") +
                       treering::topologies::kTokenCountRule)
      ->capture_default_str();
  decode->add_option("--batch", options.batch, "Sequences decoded together (default: the workload's)")
      ->check(CLI::Range(1, 1 << 20));
  decode->add_option("--repeats", options.repeats, "Timed runs per case")->capture_default_str();
  decode->add_option("--warmup", options.warmup, "Untimed runs first (cuda: at least 1)")->capture_default_str();
  decode->add_option("--cluster", options.cluster, "The cluster whose model makes the plans and predicts the bytes")
      ->capture_default_str();
  decode->add_option("--seed", options.seed, "Seed of the made-up inputs")->capture_default_str();
  decode->add_option("-o,--output", options.output, "Write the results as JSON (rank 0)");
  decode->add_option(
      "--loopback", options.loopback,
      "cuda: run the plan's P ranks as P virtual ranks on this one GPU (every byte counted; the time is that "
      "GPU's work: treering validate --cluster loopback-h100 --gpus-per-node P predicts it). One MPI rank.");
  double timeout_s = 600;

  app::BenchOptions bench;
  bench.argv = options.argv;
  auto* bench_command =
      cli.add_subcommand("bench", "Microbenchmarks: allreduce, allgather, sendrecv (nccl-tests style), hbm, attention");
  app::add_bench_kind_option(*bench_command, bench.kind);
  app::add_backend_option(*bench_command, bench.backend, "cpu (MPI rings, host kernel) or cuda (NCCL, the CUDA kernel)",
                          app::cpu_or_cuda);
  auto* sizes =
      bench_command
          ->add_option("--sizes", bench.sizes, "Collective sizes in bytes: 8:1G doubles (K M G: powers of 1024)")
          ->capture_default_str();
  bench_command->add_option("--bytes", bench.copy_bytes, "hbm, attention: bytes copied")->capture_default_str();
  auto* tokens =
      bench_command->add_option("--tokens", bench.tokens, "attention: tokens per call")->capture_default_str();
  bench_command->add_option("--workload", bench.workload, "attention: the workload's shape")->capture_default_str();
  bench_command
      ->add_flag(
          "--for-plan", bench.for_plan,
          "Measure at the sizes the decode plans of --algo and --seq-len use (with a ladder of sizes for the knees)")
      ->excludes(sizes)
      ->excludes(tokens);
  bench_command->add_option("--algo", bench.algorithms, "--for-plan: the algorithms (as decode --algo)")
      ->delimiter(',')
      ->capture_default_str();
  bench_command->add_option("--seq-len", bench.seq_len, "--for-plan: the context lengths (as decode --seq-len)")
      ->capture_default_str();
  bench_command->add_option("--batch", bench.batch, "--for-plan: sequences decoded together (default: the workload's)")
      ->check(CLI::Range(1, 1 << 20));
  bench_command
      ->add_option("--cluster", bench.cluster,
                   "--for-plan: the cluster whose model makes the plans (as decode --cluster)")
      ->capture_default_str();
  bench_command->add_option(
      "--loopback", bench.loopback,
      "Collectives on cuda: P virtual ranks on this GPU, rings of device copies (as decode --loopback)");
  bench_command->add_option("--iters", bench.iterations, "Timed iterations per size")->capture_default_str();
  bench_command->add_option("--warmup", bench.warmup, "Untimed iterations first")->capture_default_str();
  bench_command->add_option("-o,--output", bench.output, "Write the results as JSON (rank 0)");
  app::StepOptions step;
  step.argv = options.argv;
  auto* step_command = cli.add_subcommand(
      "step", "One whole decode step of a Llama-architecture model on the GPU, timed as a CUDA graph, by part");
  app::add_backend_option(*step_command, step.backend, "cuda (the step's GEMMs need a GPU)",
                          [](const std::string&) { return std::string(app::kStepNeedsCuda); });
  step_command
      ->add_option("--workload", step.workloads,
                   "Presets (llama3.2-1b, llama3.1-8b, ...), workload YAML or Hugging Face config.json files")
      ->delimiter(',')
      ->capture_default_str();
  step_command->add_option("--seq-len", step.seq_len, "Context lengths: 4k, lists 4k,32k,128k, ranges 4k:128k:x2")
      ->capture_default_str();
  step_command->add_option("--batch", step.batch, "Sequences decoded together: 1,8,32")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  step_command->add_option("--tp", step.tp, "Tensor-parallel ranks, run as loopback ranks on this GPU: 1,2,4")
      ->delimiter(',')
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  step_command->add_option("--cp", step.cp, "Context-parallel ranks (1 only, for now)")->capture_default_str();
  step_command->add_option("--iters", step.iterations, "Timed replays of the step's graph per point")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  step_command->add_option("--warmup", step.warmup, "Untimed steps first")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  step_command->add_option("--seed", step.seed, "Seed of the random weights, cache and hidden state")
      ->capture_default_str();
  step_command->add_option("-o,--output", step.output, "Write the results as JSON (else to stdout)");
  for (CLI::App* command : {decode, bench_command}) {
    command
        ->add_option("--timeout", timeout_s, "Seconds a transfer or barrier may take before the run is aborted as hung")
        ->check(CLI::Range(0.001, 1e6))
        ->capture_default_str();
  }
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& error) {  // --help is one too, with exit code 0
    if (error.get_exit_code() == 0) return transport.rank() == 0 ? cli.exit(error) : 0;
    if (transport.rank() == 0) {
      std::fprintf(stderr, "error: %s\n(run 'treering-realrun --help' or 'treering-realrun COMMAND --help')\n",
                   error.what());
    }
    return 2;
  }
  transport.set_timeout(timeout_s);
  options.timeout_s = timeout_s;
  if (info->parsed()) {
    if (transport.rank() == 0) print_info(transport);
    return 0;
  }
  if (bench_command->parsed()) return app::run_bench(bench, transport);
  if (step_command->parsed()) return app::run_step(step, transport);
  return app::run_decode(options, transport);
}

}  // namespace

int main(int argc, char** argv) {
  app::MpiSession session(argc, argv);
  app::MpiTransport transport;
  treering::topologies::remove_unfinished_outputs_on_signals();  // an interrupted run leaves its -o file as it was
  const treering::topologies::InputFilesScope inputs;            // and -o may not name one of its inputs
  int code = 1;
  try {
    code = run(argc, argv, transport);
  } catch (...) {  // bad input: every rank has it, rank 0 says it; an internal error: each rank says its own
    const treering::topologies::ErrorExit exit = treering::topologies::error_exit(std::current_exception());
    if (exit.bad_input()) {
      if (transport.rank() == 0) std::fprintf(stderr, "%s\n", exit.message.c_str());
    } else {
      std::fprintf(stderr, "rank %d: %s\n", transport.rank(), exit.message.c_str());
    }
    code = exit.code;
  }
  app::close_nccl(code == 0);  // before MPI_Finalize (the session's end)
  return code;
}
