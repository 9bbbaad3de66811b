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

// impl list's profiles: name and description, and how to see one (table); name, description, implementation (json).
class ProfilesReport : public Report {
 public:
  explicit ProfilesReport(const std::vector<ImplProfile>& profiles) : profiles_(profiles) {}
  void print_table(std::ostream& out) const override {
    Table table({"profile", "description"});
    for (const ImplProfile& profile : profiles_) table.add_row({profile.name, profile.description});
    table.print(out);
    out << "treering impl show NAME prints one with the source of each figure; --impl takes a name or a YAML file of "
           "the same form\n";
  }
  ordered_json json() const override {
    ordered_json list = ordered_json::array();
    for (const ImplProfile& profile : profiles_) {
      list.push_back(
          {{"name", profile.name}, {"description", profile.description}, {"implementation", profile.implementation}});
    }
    return list;
  }

 private:
  const std::vector<ImplProfile>& profiles_;
};

void add_list(CLI::App& parent) {
  auto* command = parent.add_subcommand("list", "List the implementation profiles compiled in (--impl NAME)");
  auto format = std::make_shared<OutputFormat>();
  add_format_option(*command, *format);
  command->callback(
      [format] { make_reporter(*format, std::cout)->report(ProfilesReport(topologies::impl_presets())); });
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
