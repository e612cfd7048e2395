#include "core/frontend/syntax_functions.h"

namespace tf::frontend {

const std::vector<std::string>& syntax_function_names() {
  static const std::vector<std::string> names = {"reshard", "local", "tile", "load_tile"};
  return names;
}

}  // namespace tf::frontend
