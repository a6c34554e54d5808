// smpipe_fuzz_regress: the fuzz targets without libFuzzer (any compiler), for the regression test of the
// crash inputs in tests/fuzz_regressions/<target>/ and for the tools around the fuzzers (docs/fuzzing.md):
//   smpipe_fuzz_regress TARGET PATH...            run each file (each file of each folder) through TARGET
//   smpipe_fuzz_regress --pipe-dict               print the dictionary of fuzz_pipe (fuzz/pipe.dict)
//   smpipe_fuzz_regress --render-tokens FILE      print the .pipe text of a fuzz_pipe_tokens input
//   smpipe_fuzz_regress --encode-tokens IN OUT    write a .pipe file as a fuzz_pipe_tokens input
//   smpipe_fuzz_regress --mutator-self-test N TARGET FILE [--count-accepted]
//                                                 N JSON mutations of FILE (and how many the reader accepts)
// A failing input aborts the process (targets.hpp); exit status 0 means every input passed.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz/pipe_vocab.hpp"
#include "fuzz/targets.hpp"
#include "isa/source.hpp"
#include "models/machine.hpp"
#include "traces/hwtrace.hpp"

namespace fs = std::filesystem;
using namespace smpipe::fuzz;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) {
    std::cerr << "cannot read " << p << "\n";
    std::exit(2);
  }
  return std::string(std::istreambuf_iterator<char>(f), {});
}

int usage() {
  std::cerr << "usage: smpipe_fuzz_regress TARGET PATH... | --pipe-dict | --render-tokens FILE | --encode-tokens IN OUT |"
               " --mutator-self-test N TARGET FILE [--count-accepted]\ntargets:";
  for (const Target& t : targets()) std::cerr << " " << t.name;
  std::cerr << "\n";
  return 2;
}

// A stand-in for LLVMFuzzerMutate: flips, inserts or erases a few bytes.
std::mt19937 byte_rng(1);
std::size_t byte_mutate(std::uint8_t* data, std::size_t size, std::size_t max_size) {
  switch (byte_rng() % 3) {
    case 0:
      if (size) data[byte_rng() % size] ^= static_cast<std::uint8_t>(1u << (byte_rng() % 8));
      return size;
    case 1:
      if (size < max_size) {
        std::size_t at = size ? byte_rng() % (size + 1) : 0;
        std::memmove(data + at + 1, data + at, size - at);
        data[at] = static_cast<std::uint8_t>(byte_rng());
        return size + 1;
      }
      return size;
    default:
      if (size) {
        std::size_t at = byte_rng() % size;
        std::memmove(data + at, data + at + 1, size - at - 1);
        return size - 1;
      }
      return size;
  }
}

int mutator_self_test(int n, const std::string& target, const std::string& file, bool count_accepted) {
  auto mutate = target == "fuzz_hwtrace" ? mutate_hwtrace : target == "fuzz_machine" ? mutate_machine : nullptr;
  if (!mutate) return usage();
  std::string seed = read_file(file);
  std::size_t max_size = seed.size() * 2 + 4096;
  std::vector<std::uint8_t> buf(seed.begin(), seed.end());
  std::size_t size = buf.size();
  buf.resize(max_size);
  std::size_t json_outputs = 0, accepted = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 4 == 0) {  // restart from the seed now and then, as libFuzzer mutates corpus entries
      std::memcpy(buf.data(), seed.data(), seed.size());
      size = seed.size();
    }
    size = mutate(buf.data(), size, max_size, static_cast<unsigned>(i), byte_mutate);
    if (size > max_size) {
      std::cerr << "mutator returned " << size << " bytes, more than max_size " << max_size << "\n";
      return 1;
    }
    json_outputs += size && buf[0] == '{';
    if (!count_accepted) continue;
    std::string text(reinterpret_cast<const char*>(buf.data()), size);
    try {  // how many mutations the reader still accepts (the rest test its checks)
      if (target == "fuzz_hwtrace")
        smpipe::traces::parse_hwtrace(text, "mutated");
      else
        smpipe::models::parse_machine(text, "mutated");
      ++accepted;
    } catch (const smpipe::isa::InputError&) {
    }
  }
  std::cout << target << ": " << n << " mutations, " << json_outputs << " JSON objects";
  if (count_accepted) std::cout << ", " << accepted << " accepted by the reader";
  std::cout << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage();
  if (args[0] == "--pipe-dict") {
    std::cout << pipe_dictionary();
    return 0;
  }
  if (args[0] == "--render-tokens" && args.size() == 2) {
    std::string in = read_file(args[1]);
    std::cout << render_tokens(reinterpret_cast<const std::uint8_t*>(in.data()), in.size());
    return 0;
  }
  if (args[0] == "--encode-tokens" && args.size() == 3) {
    std::vector<std::uint8_t> codes;
    try {
      codes = encode_tokens(read_file(args[1]));
    } catch (const std::exception& e) {
      std::cerr << args[1] << ": " << e.what() << "\n";
      return 1;
    }
    std::ofstream(args[2], std::ios::binary).write(reinterpret_cast<const char*>(codes.data()), static_cast<std::streamsize>(codes.size()));
    return 0;
  }
  if (args[0] == "--mutator-self-test" && (args.size() == 4 || (args.size() == 5 && args[4] == "--count-accepted")))
    return mutator_self_test(std::stoi(args[1]), args[2], args[3], args.size() == 5);

  const Target* target = nullptr;
  for (const Target& t : targets())
    if (args[0] == t.name) target = &t;
  if (!target || args.size() < 2) return usage();
  std::vector<fs::path> files;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (fs::is_directory(args[i])) {
      for (const auto& e : fs::directory_iterator(args[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.emplace_back(args[i]);
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::string data = read_file(f);
    std::cout << target->name << " " << f.string() << " ..." << std::flush;
    target->one(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
    std::cout << " ok\n";
  }
  return 0;
}
