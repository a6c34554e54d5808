// smpipe_mpi: the smpipe command for mpirun. `mpirun -np N smpipe_mpi sweep ...` splits the sweep's points over
// the N processes (every N-th point from the process's rank, each on all its cores) and rank 0 gathers the
// rows and prints and writes what one process would, byte for byte (docs/cli.md); `check` splits its seeds
// the same way. Any other command runs on rank 0 alone.
#include <mpi.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/load.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool sweep = argc > 1 && (std::string(argv[1]) == "sweep" || std::string(argv[1]) == "check");  // split over ranks
  int code = smpipe::cli::kOk;
  if (sweep) {
    smpipe::cli::set_ranks({rank, size, [rank, size](const std::string& mine) {
                              int n = static_cast<int>(mine.size());
                              std::vector<int> sizes(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
                              MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
                              std::vector<char> all;
                              if (rank == 0) {
                                int total = 0;
                                for (int i = 0; i < size; ++i) offsets[i] = total, total += sizes[i];
                                all.resize(static_cast<std::size_t>(total) + 1);
                              }
                              MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
                                          MPI_COMM_WORLD);
                              std::vector<std::string> texts;
                              if (rank == 0)
                                for (int i = 0; i < size; ++i) texts.emplace_back(all.data() + offsets[i], static_cast<std::size_t>(sizes[i]));
                              return texts;
                            }});
  }
  if (rank == 0) {
    code = smpipe::cli::main(argc, argv, std::cout, std::cerr);
  } else if (sweep) {
    std::ostringstream out, err;  // the other ranks only run their points
    code = smpipe::cli::main(argc, argv, out, err);
    if (code == smpipe::cli::kInternal) std::cerr << err.str();
  }
  std::cout.flush();
  // A rank that failed before the gather would leave the others waiting in it: stop them all.
  if (code == smpipe::cli::kInternal) MPI_Abort(MPI_COMM_WORLD, code);
  MPI_Finalize();
  return code;
}
