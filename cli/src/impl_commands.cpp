// treering impl list | show: the implementation profiles --impl names (topologies/impls/), and what each sets.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cluster_args.hpp"
#include "commands.hpp"
#include "reporter.hpp"
#include "table.hpp"
#include "treering/topologies/impl_profile.hpp"

namespace treering::cli {
namespace {

using nlohmann::ordered_json;
using topologies::ImplProfile;

// impl list's table: name and description, and how to see one.
void print_profiles(std::ostream& out, const std::vector<ImplProfile>& profiles) {
  Table table({"profile", "description"});
  for (const ImplProfile& profile : profiles) table.add_row({profile.name, profile.description});
  table.print(out);
  out << "treering impl show NAME prints one with the source of each figure; --impl takes a name or a YAML file of "
         "the same form\n";
}

// impl list's JSON: name, description, implementation of each.
ordered_json profiles_json(const std::vector<ImplProfile>& profiles) {
  ordered_json list = ordered_json::array();
  for (const ImplProfile& profile : profiles)
    list.push_back(
        {{"name", profile.name}, {"description", profile.description}, {"implementation", profile.implementation}});
  return list;
}

void add_list(CLI::App& parent) {
  auto* command = parent.add_subcommand("list", "List the implementation profiles compiled in (--impl NAME)");
  auto format = std::make_shared<OutputFormat>();
  add_format_option(*command, *format);
  command->callback([format] {
    const std::vector<ImplProfile>& profiles = topologies::impl_presets();
    make_reporter(*format, std::cout)
        ->report(FunctionReport({.table = [&](std::ostream& out) { print_profiles(out, profiles); },
                                 .csv = {},
                                 .json = [&] { return profiles_json(profiles); }}));
  });
}

void add_show(CLI::App& parent) {
  auto* command =
      parent.add_subcommand("show", "Print one implementation profile as YAML, each figure with its source");
  auto name = std::make_shared<std::string>();
  command->add_option("profile", *name, "A profile name (treering impl list) or a YAML file")->required();
  command->callback([name] { std::cout << topologies::impl_profile_yaml(topologies::load_impl_profile(*name)); });
}

}  // namespace

void add_impl_commands(CLI::App& app) {
  auto* command = app.add_subcommand("impl", "Implementation profiles: how a program runs the plans (--impl)");
  command->require_subcommand(1);
  add_list(*command);
  add_show(*command);
}

}  // namespace treering::cli
