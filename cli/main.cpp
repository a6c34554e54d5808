#include <iostream>

#include "cli/commands.hpp"

int main(int argc, char** argv) { return smpipe::cli::main(argc, argv, std::cout, std::cerr); }
