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
#include "moe_command.hpp"
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

// --timeout, for the commands that run MPI transfers.
void add_timeout_option(CLI::App& command, double& timeout_s) {
  command
      .add_option("--timeout", timeout_s, "Seconds a transfer or barrier may take before the run is aborted as hung")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
}

CLI::App* add_decode_command(CLI::App& cli, app::DecodeOptions& options, double& timeout_s) {
  auto* command = cli.add_subcommand("decode", "Run decode plans, check them against the reference, time them");
  app::add_backend_option(*command, options.backend, "cpu (host kernels, MPI) or cuda (one GPU per rank, NCCL)",
                          app::cpu_or_cuda);
  command
      ->add_option("--algo", options.algorithms,
                   treering::model::decode_algorithm_names(true) +
                       " (cpu also: " + treering::model::decode_algorithm_names(false) + ")")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--workload", options.workload, "A workload preset (16-bit)")->capture_default_str();
  command
      ->add_option("--seq-len", options.seq_len,
                   std::string("Context lengths: 10000, lists 1k,10k and ranges 1k:64k:x2; ") +
                       treering::topologies::kTokenCountRule)
      ->capture_default_str();
  command->add_option("--batch", options.batch, "Sequences decoded together (default: the workload's)")
      ->check(CLI::Range(1, 1 << 20));
  command->add_option("--repeats", options.repeats, "Timed runs per case")->capture_default_str();
  command->add_option("--warmup", options.warmup, "Untimed runs first (cuda: at least 1)")->capture_default_str();
  command->add_option("--cluster", options.cluster, "The cluster whose model makes the plans and predicts the bytes")
      ->capture_default_str();
  command->add_option("--seed", options.seed, "Seed of the made-up inputs")->capture_default_str();
  command->add_option("-o,--output", options.output, "Write the results as JSON (rank 0)");
  command->add_option(
      "--loopback", options.loopback,
      "cuda: run the plan's P ranks as P virtual ranks on this one GPU (every byte counted; the time is that "
      "GPU's work: treering validate --cluster loopback-h100 --gpus-per-node P predicts it). One MPI rank.");
  add_timeout_option(*command, timeout_s);
  return command;
}

CLI::App* add_bench_command(CLI::App& cli, app::BenchOptions& options, double& timeout_s) {
  auto* command =
      cli.add_subcommand("bench", "Microbenchmarks: allreduce, allgather, sendrecv (nccl-tests style), hbm, attention");
  app::add_bench_kind_option(*command, options.kind);
  app::add_backend_option(*command, options.backend, "cpu (MPI rings, host kernel) or cuda (NCCL, the CUDA kernel)",
                          app::cpu_or_cuda);
  auto* sizes =
      command->add_option("--sizes", options.sizes, "Collective sizes in bytes: 8:1G doubles (K M G: powers of 1024)")
          ->capture_default_str();
  command->add_option("--bytes", options.copy_bytes, "hbm, attention: bytes copied")->capture_default_str();
  auto* tokens = command->add_option("--tokens", options.tokens, "attention: tokens per call")->capture_default_str();
  command->add_option("--workload", options.workload, "attention: the workload's shape")->capture_default_str();
  command
      ->add_flag(
          "--for-plan", options.for_plan,
          "Measure at the sizes the decode plans of --algo and --seq-len use (with a ladder of sizes for the knees)")
      ->excludes(sizes)
      ->excludes(tokens);
  command->add_option("--algo", options.algorithms, "--for-plan: the algorithms (as decode --algo)")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--seq-len", options.seq_len, "--for-plan: the context lengths (as decode --seq-len)")
      ->capture_default_str();
  command->add_option("--batch", options.batch, "--for-plan: sequences decoded together (default: the workload's)")
      ->check(CLI::Range(1, 1 << 20));
  command
      ->add_option("--cluster", options.cluster,
                   "--for-plan: the cluster whose model makes the plans (as decode --cluster)")
      ->capture_default_str();
  command->add_option(
      "--loopback", options.loopback,
      "Collectives on cuda: P virtual ranks on this GPU, rings of device copies (as decode --loopback)");
  command->add_option("--iters", options.iterations, "Timed iterations per size")->capture_default_str();
  command->add_option("--warmup", options.warmup, "Untimed iterations first")->capture_default_str();
  command->add_option("-o,--output", options.output, "Write the results as JSON (rank 0)");
  add_timeout_option(*command, timeout_s);
  return command;
}

CLI::App* add_step_command(CLI::App& cli, app::StepOptions& options) {
  auto* command = cli.add_subcommand(
      "step", "One whole decode step of a Llama-architecture model on the GPU, timed as a CUDA graph, by part");
  app::add_backend_option(*command, options.backend, "cuda (the step's GEMMs need a GPU)",
                          [](const std::string&) { return std::string(app::kStepNeedsCuda); });
  command
      ->add_option("--workload", options.workloads,
                   "Presets (llama3.2-1b, llama3.1-8b, ...), workload YAML or Hugging Face config.json files")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--seq-len", options.seq_len, "Context lengths: 4k, lists 4k,32k,128k, ranges 4k:128k:x2")
      ->capture_default_str();
  command->add_option("--batch", options.batch, "Sequences decoded together: 1,8,32")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  command->add_option("--tp", options.tp, "Tensor-parallel ranks, run as loopback ranks on this GPU: 1,2,4")
      ->delimiter(',')
      ->check(CLI::Range(1, 8))
      ->capture_default_str();
  command->add_option("--cp", options.cp, "Context-parallel ranks (1 only, for now)")->capture_default_str();
  command->add_option("--iters", options.iterations, "Timed replays of the step's graph per point")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  command->add_option("--warmup", options.warmup, "Untimed steps first")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  command->add_option("--seed", options.seed, "Seed of the random weights, cache and hidden state")
      ->capture_default_str();
  command->add_option("-o,--output", options.output, "Write the results as JSON (else to stdout)");
  return command;
}

CLI::App* add_moe_command(CLI::App& cli, app::MoeOptions& options, double& timeout_s) {
  auto* command = cli.add_subcommand(
      "moe", "An MoE layer with expert parallelism over the ranks: dispatch, experts, combine, checked");
  app::add_backend_option(*command, options.backend, "cpu (MPI; the experts split evenly over the ranks)",
                          [](const std::string& name) { return "--backend " + name + ": cpu"; });
  command->add_option("--workload", options.workload, "An MoE workload: preset, YAML or Hugging Face config.json")
      ->capture_default_str();
  command->add_option("--batch", options.batch, "Tokens each rank routes")
      ->check(CLI::Range(0, 1 << 20))
      ->capture_default_str();
  command->add_option("--hidden", options.hidden, "The hidden size to run at (default: the workload's)")
      ->check(CLI::Range(1, 1 << 20));
  command->add_option("--expert-intermediate", options.intermediate, "One expert's width (default: the workload's)")
      ->check(CLI::Range(1, 1 << 20));
  command->add_option("--seed", options.seed, "Seed of the made-up weights and tokens")->capture_default_str();
  command->add_option("--format", options.format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  add_timeout_option(*command, timeout_s);
  return command;
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
  app::BenchOptions bench;
  bench.argv = options.argv;
  app::StepOptions step;
  step.argv = options.argv;
  double timeout_s = 600;
  add_decode_command(cli, options, timeout_s);
  auto* bench_command = add_bench_command(cli, bench, timeout_s);
  auto* step_command = add_step_command(cli, step);
  app::MoeOptions moe;
  auto* moe_command = add_moe_command(cli, moe, timeout_s);
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
  if (moe_command->parsed()) return app::run_moe(moe, transport);
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
