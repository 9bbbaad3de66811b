// Comma-separated fields, as treering's own tables and the engines' CSVs write them (no quoting: none of their
// fields holds a comma). Private to validate.
#pragma once

#include <string>
#include <vector>

#include "treering/topologies/input_error.hpp"

namespace treering::validate::detail {

// `text` without leading and trailing blanks (spaces, tabs, carriage returns).
std::string trimmed(const std::string& text);

// The fields of one line, each trimmed; a trailing comma gives a last, empty field.
std::vector<std::string> fields_of(const std::string& line);

// A whole number in [smallest, largest]; InputError at `where` "WHAT must be a whole number from A to B, got 'X'".
long long whole(const std::string& text, long long smallest, long long largest, const topologies::InputLocation& where,
                const char* what);

// A positive, finite number of seconds; InputError at `where` "WHAT must be a positive number of seconds, got 'X'".
double seconds(const std::string& text, const topologies::InputLocation& where, const char* what);

}  // namespace treering::validate::detail
