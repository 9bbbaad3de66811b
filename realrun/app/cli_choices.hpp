// The command line's named choices read into their types once, where CLI11 reads them: --backend into
// model::RealrunBackend, bench's benchmark into BenchKind. --help shows them as the plain strings they were.
#pragma once

#include "treering/model/workload.hpp"

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "bench_command.hpp"
#include "treering/model/realrun_plans.hpp"

namespace treering::realrun::app {

// --backend cpu|cuda into `backend`, whose value --help shows as the default. Any other name (cuda-loopback too:
// --loopback asks for that) throws topologies::InputError(refusal(name)) as the command line is read.
CLI::Option* add_backend_option(CLI::App& command, model::RealrunBackend& backend, const std::string& help,
                                const std::function<std::string(const std::string&)>& refusal);

// decode's and bench's refusal: "--backend NAME: cpu or cuda".
std::string cpu_or_cuda(const std::string& name);

// bench's required positional `what` into `kind`; an unknown name is CLI11's validation error ("what: unknown
// benchmark 'foo' (choose ...)", exit 2).
CLI::Option* add_bench_kind_option(CLI::App& command, BenchKind& kind);

// A workload preset, a workload YAML or a Hugging Face config.json (completed and checked).
model::Workload workload_named(const std::string& name_or_path);

}  // namespace treering::realrun::app
