#include "models/memory/l2.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <tuple>
#include <vector>

#include "isa/program.hpp"
#include "isa/source.hpp"
#include "models/gpu/simulator.hpp"
#include "sim/free_list.hpp"

namespace smpipe::models {

// The parts of a block (a bit per 64-byte half of each of its kBlockRows rows) that `rows` rows from row `r0`
// (relative to the block) cover in bytes [c0, c1) of each row.
std::uint64_t CachedL2::block_parts(std::int64_t r0, std::int64_t rows, std::int64_t c0, std::int64_t c1) {
  static_assert(kBlockRows * 2 == 64 && kBlockBytes == 128, "a bit per 64-byte half row of a block");
  const std::uint64_t row_bits = rows >= kBlockRows ? ~std::uint64_t{0} : ((std::uint64_t{1} << (2 * rows)) - 1) << (2 * r0);
  const bool low = c0 < 64, high = c1 > 64;
  const std::uint64_t halves = low && high ? ~std::uint64_t{0} : low ? 0x5555555555555555ULL : 0xAAAAAAAAAAAAAAAAULL;
  return row_bits & halves;
}

namespace {
// Whether an op names the tensor box it moves (its attribute `tensor` and box=).
bool addressed(const OpContext& ctx, isa::Attr tensor) { return ctx.attr(tensor).present && ctx.present(isa::Attr::kBox); }

TensorAccess access(const OpContext& ctx, isa::Attr tensor, Cycle sent, std::int64_t bytes, bool write) {
  const isa::AttrSlot& t = ctx.attr(tensor);
  TensorAccess a;
  a.tensor = t.decl;
  a.rank = static_cast<int>(ctx.sim.program().tensors[static_cast<std::size_t>(t.decl)].shape.size());
  bool has_at = ctx.present(isa::Attr::kAt);
  for (int i = 0; i < a.rank; ++i) {
    a.box[i] = ctx.value(isa::Attr::kBox, i);
    a.at[i] = has_at ? ctx.value(isa::Attr::kAt, i) : 0;
  }
  a.bytes = bytes;
  a.write = write;
  a.sm = ctx.cta().sm;
  a.cta = ctx.cta().id;
  a.sent = sent;
  return a;
}
}  // namespace

Cycle through_l2(MemoryHierarchy& l2, const OpContext& ctx, isa::Attr tensor, Cycle start, Cycle sent, std::int64_t bytes,
                 bool write) {
  if (!addressed(ctx, tensor)) return l2.transfer(start, bytes, static_cast<std::uint32_t>(ctx.cta().sm));
  return l2.transfer(start, access(ctx, tensor, sent, bytes, write));
}

void read_l2(MemoryHierarchy& l2, const OpContext& ctx, isa::Attr tensor, Cycle start, Cycle sent, std::int64_t bytes,
             Landing& to, std::uint32_t token, bool multicast, std::optional<Cycle> loaded) {
  if (!addressed(ctx, tensor)) return to.landed(token, l2.transfer(start, bytes, static_cast<std::uint32_t>(ctx.cta().sm)));
  TensorAccess a = access(ctx, tensor, sent, bytes, false);
  a.multicast = multicast;
  a.under_load = loaded.has_value();
  a.loaded = loaded.value_or(Cycle(0));
  a.zero_fill = true;  // (TMA loads are the reads that come this way)
  l2.read(start, a, to, token);
}

Cycle SingleQueueL2::transfer(Cycle start, std::int64_t bytes, std::uint32_t) {
  return queue_.serve(start, bytes, sim_.machine().l2_bytes_per_cycle);
}

namespace {
// A GPU-wide link that moved `bytes` at `per_cycle` over a run of `cycles`, its queue free from `free_at` (the
// bytes it had still to move at the end do not count).
UnitStats link_stats(const char* name, std::int64_t bytes, double per_cycle, std::int64_t cycles, sim::Cycle free_at) {
  double b = std::max(0.0, static_cast<double>(bytes) - static_cast<double>(busy_past_end(free_at.v, cycles)) * per_cycle);
  return UnitStats{name, static_cast<std::int64_t>(b / per_cycle), b / (per_cycle * static_cast<double>(std::max<std::int64_t>(cycles, 1)))};
}
}  // namespace

void SingleQueueL2::add_stats(Stats& s, std::int64_t cycles, std::int64_t) const {
  s.units.push_back(link_stats("L2 bandwidth (whole GPU)", sim_.counters().bytes_loaded + sim_.counters().bytes_stored,
                               sim_.machine().l2_bytes_per_cycle, cycles, queue_.free()));
}

CachedL2::CachedL2(Simulator& sim)
    : MemoryHierarchy(sim), cache_(sim.machine().l2_capacity_bytes / (kBlockRows * kBlockBytes)) {
  l2_share_.resize(static_cast<std::size_t>(sim.machine().sm_count));
  delivery_share_.resize(static_cast<std::size_t>(sim.machine().sm_count));
  const Machine& m = sim.machine();
  if (m.l2_combine_sms > 1) {
    std::int64_t groups = (m.sm_count + m.l2_combine_sms - 1) / m.l2_combine_sms;
    requests_.assign(static_cast<std::size_t>(groups) * kRequestsPerGroup, InFlightRead{});
  }
  if (m.l2_combine_near_share > 0 || m.l2_combine_far_share > 0) cta_reads_.assign(std::size_t{1} << kCtaReadBits, InFlightRead{});
  if (m.l2_partitions > 1) {
    // The first half of the GPCs (in SM order) reads through one partition, the rest through the other; without a GPC
    // list, the first half of the SMs.
    const std::vector<int> gpc = m.gpc_of_sms();
    const bool by_gpc = m.gpc_count() >= 2;
    const int half = static_cast<int>((m.gpc_count() + 1) / 2);
    const std::size_t n = static_cast<std::size_t>(m.sm_count);
    partition_of_sm_.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) partition_of_sm_[i] = by_gpc ? gpc[i] >= half : 2 * i >= n;  // (gpc_of_sms has sm_count entries)
  }
  if (sim.program().cluster_size() > 1 && m.gpc_count() >= 2) gpc_of_sm_ = m.gpc_of_sms();
  sharing_ = m.l2_processor_sharing != 0;
  link_.configure(static_cast<std::size_t>(m.sm_count), m.l2_bytes_per_cycle);
  start_warm(sim.options().warm_l2, sim.options().l2_dirty_bytes, sim.options().l2_dirty_tensors);
}

// The blocks of every tensor the program's code names with a box (in an op it can run: not one in a branch dropped at
// compile time, such as C's loads with beta = 0; not a prefetch), each as rows of its innermost dimension, kBlockRows x kBlockBytes a block:
// in whole blocks, what the program could touch. When they all fit, a previous launch of the same kernel leaves every
// block it touched in the L2 (LRU evicts nothing while everything fits), so a warm start holds them all; which of
// them this launch touches does not matter. When they do not fit, what the previous launch leaves depends on the order
// of its last accesses: the start stays cold (an approximation: the launch reads from HBM what a previous one may
// have left).
void CachedL2::start_warm(bool warm, std::int64_t dirty_bytes, const std::vector<std::string>& dirty_tensors) {
  const isa::Program& program = sim_.program();
  std::vector<char> named(program.tensors.size(), 0);
  for (const isa::RoleCode& role : program.roles)
    for (const isa::Instr& in : role.code) {
      if (in.opc != isa::Opc::kOp) continue;
      const isa::OpDesc& op = role.ops[in.a];
      // Only ops that reach the L2 at an address: a box of their tensor (a prefetch moves nothing the model counts).
      const int box = op.attr_index[static_cast<std::size_t>(isa::Attr::kBox)];
      if (op.kind == isa::OpKind::kTmaPrefetch || box < 0 || !op.attrs[static_cast<std::size_t>(box)].present) continue;
      const auto& specs = isa::op_spec(op.kind).attrs;
      for (std::size_t i = 0; i < op.attrs.size() && i < specs.size(); ++i)
        if (specs[i].type == isa::AttrType::kTensor && op.attrs[i].present && op.attrs[i].decl >= 0)
          named[static_cast<std::size_t>(op.attrs[i].decl)] = 1;
    }
  struct Extent {
    std::int32_t tensor;
    std::int64_t row_blocks, col_blocks;
  };
  // A tensor in whole blocks: rows of its innermost dimension, kBlockRows x kBlockBytes a block (as doubles: the shapes'
  // product may overflow 64 bits; compared with the capacity only).
  const auto extent_of = [&](std::size_t i, double& rb, double& cb) {
    const isa::TensorDecl& t = program.tensors[i];
    double rows = 1;
    for (std::size_t d = 0; d + 1 < t.shape.size(); ++d) rows *= static_cast<double>(t.shape[d]);
    const double row_bytes = t.shape.empty() ? 0.0 : static_cast<double>(t.shape.back()) * t.bits / 8;
    rb = std::ceil(rows / kBlockRows), cb = std::ceil(row_bytes / kBlockBytes);
    return Extent{static_cast<std::int32_t>(i), static_cast<std::int64_t>(std::min(rb, 1e18)), static_cast<std::int64_t>(std::min(cb, 1e18))};
  };
  std::vector<Extent> extents;
  double blocks = 0;
  for (std::size_t i = 0; i < program.tensors.size(); ++i) {
    if (!named[i]) continue;
    double rb = 0, cb = 0;
    extents.push_back(extent_of(i, rb, cb));
    blocks += rb * cb;
  }
  constexpr double kBlock = kBlockRows * kBlockBytes;
  footprint_ = static_cast<std::int64_t>(std::min(blocks * kBlock, 9e18));
  // With two partitions a previous launch leaves a copy in each (both halves of the GPU read the tensors): they fit
  // when both copies do.
  const int copies = partition_of_sm_.empty() ? 1 : 2;
  if (dirty_bytes > 0) {
    // Another kernel's stores: blocks under a tensor number and column block no program's tensor reaches (the key's
    // last tensor number, 255, at a column block 64 MB into its rows), rows 0, 1, ... in turn in each partition (the SMs
    // of both halves of the GPU stored them), as many as the bytes fill, at most the share of the L2 a kernel leaves
    // dirty (l2_dirty_left_share).
    const std::int64_t block = kBlockRows * kBlockBytes;
    const auto most = static_cast<std::int64_t>(std::floor(sim_.machine().l2_dirty_left_share * static_cast<double>(cache_.capacity())));
    const std::int64_t asked = dirty_bytes / block + (dirty_bytes % block != 0);
    const std::int64_t n = std::min({most, asked, cache_.capacity()});
    dirty_capped_ = n < asked;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t key = block_key(0xff, 0x7ffff, i / copies) | (i % copies ? kPartitionBit : 0);
      cache_.parts(cache_.touch(key, true).node) = ~std::uint64_t{0};
    }
    dirty_start_ = n * block;
  }
  if (!dirty_tensors.empty()) {
    // The program's own tensors as the kernel that wrote them leaves them: their blocks in the order named, each
    // tensor's rows in order (a row's column blocks in turn), the last ones stored last; the L2 holds the last of them
    // that the share a kernel leaves dirty allows (l2_dirty_left_share), each once, in the partition of the SMs that
    // stored it (row blocks in turn: the writer's tiles spread over both halves of the GPU). This launch finds them
    // there (in either partition) and writes them back to HBM when it evicts them.
    const std::int64_t block = kBlockRows * kBlockBytes;
    std::vector<Extent> held;
    double total = 0;
    for (const std::string& name : dirty_tensors)
      for (std::size_t i = 0; i < program.tensors.size(); ++i)
        if (program.tensors[i].name == name) {
          double rb = 0, cb = 0;
          held.push_back(extent_of(i, rb, cb));
          total += rb * cb;
        }
    const auto most = static_cast<std::int64_t>(std::floor(sim_.machine().l2_dirty_left_share * static_cast<double>(cache_.capacity())));
    const std::int64_t n = std::min(most, cache_.capacity());
    dirty_capped_ = total > static_cast<double>(n);
    // From the last tensor back, how many of each one's last blocks are held; then held from the first, in order.
    std::vector<std::int64_t> take(held.size(), 0);
    std::int64_t left = n;
    for (std::size_t h = held.size(); h-- > 0 && left > 0;) {
      const double all = static_cast<double>(held[h].row_blocks) * static_cast<double>(held[h].col_blocks);
      take[h] = all < static_cast<double>(left) ? static_cast<std::int64_t>(all) : left;
      left -= take[h];
    }
    for (std::size_t h = 0; h < held.size(); ++h) {
      const Extent& e = held[h];
      if (take[h] == 0) continue;
      // The first of its last take[h] blocks (without the product of its extents, which may overflow), then on in order.
      const std::int64_t part = take[h] % e.col_blocks;
      std::int64_t rb = e.row_blocks - take[h] / e.col_blocks - (part ? 1 : 0), cb = part ? e.col_blocks - part : 0;
      for (std::int64_t b = 0; b < take[h]; ++b) {
        const std::uint64_t key = block_key(e.tensor, cb, rb) | (rb % copies ? kPartitionBit : 0);
        cache_.parts(cache_.touch(key, true).node) = ~std::uint64_t{0};
        if (++cb == e.col_blocks) cb = 0, ++rb;
      }
      dirty_start_ += take[h] * block;
    }
    dirty_tensors_ = dirty_tensors;
  }
  warm_ = warm && dirty_bytes == 0 && dirty_tensors.empty() && blocks * copies <= static_cast<double>(cache_.capacity());
  if (!warm_) return;
  for (int c = 0; c < copies; ++c)
    for (const Extent& e : extents)
      for (std::int64_t cb = 0; cb < e.col_blocks; ++cb)
        for (std::int64_t rb = 0; rb < e.row_blocks; ++rb) {
          // Every part held, none coming; clean (whether the previous launch wrote it matters only when it is evicted,
          // and nothing is while the tensors fit).
          BlockCache::Touch tc = cache_.touch(block_key(e.tensor, cb, rb) | (c ? kPartitionBit : 0), false);
          cache_.parts(tc.node) = ~std::uint64_t{0};
        }
}

void check_l2_tensors(const isa::Program& program, const std::vector<std::string>& names, const std::string& option) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) != names.begin() + static_cast<std::ptrdiff_t>(i))
      throw isa::InputError(fmt::format("{}: tensor {} is named twice", isa::printable(option), names[i]));
  for (const std::string& name : names)
    if (std::none_of(program.tensors.begin(), program.tensors.end(), [&](const isa::TensorDecl& t) { return t.name == name; })) {
      std::string have;
      for (const isa::TensorDecl& t : program.tensors) have += (have.empty() ? "" : ", ") + t.name;
      throw isa::InputError(fmt::format("{}: the program declares no tensor {} ({})", isa::printable(option), name,
                                        have.empty() ? "it declares none" : "its tensors: " + have));
    }
}

Cycle CachedL2::RoundRobin::serve(std::uint32_t sm, Cycle start, std::int64_t bytes, double per_cycle) {
  // SMs whose transfers ended by `start` no longer share it.
  while (!ends.empty() && ends.top().first <= start.v) {
    auto [end, s] = ends.top();
    ends.pop();
    if (busy[s] && free[s].v == end) {
      busy[s] = 0;
      --n;
    }
  }
  if (!busy[sm]) {
    busy[sm] = 1;
    ++n;
  }
  const Cycle begin = sim::max(start, free[sm]);
  free[sm] = begin + Cycle(transfer_cycles(bytes, per_cycle / static_cast<double>(n)));
  ends.emplace(free[sm].v, sm);
  last = sim::max(last, free[sm]);
  return free[sm];
}

Cycle CachedL2::fair_share(std::uint32_t sm, Cycle start, std::int64_t bytes) {
  return l2_share_.serve(sm, start, bytes, sim_.machine().l2_bytes_per_cycle);
}

Cycle CachedL2::transfer(Cycle start, std::int64_t bytes, std::uint32_t sm) {
  hit_bytes_ += bytes;
  l2_work_ += bytes;
  if (sharing_) return shared(sm, start, bytes, true);
  return l2_.serve(start, bytes, sim_.machine().l2_bytes_per_cycle);
}

// ---- processor sharing (l2_processor_sharing) ----

Cycle CachedL2::shared(std::uint32_t sm, Cycle start, std::int64_t work, bool queue) {
  link_.advance(static_cast<double>(sim_.now().v));
  if (!queue) return sim::max(start, Cycle(static_cast<std::int64_t>(std::ceil(link_.estimate(sm, static_cast<double>(work))))));
  const double end = link_.projected(link_.add(sm, static_cast<double>(work)));
  reschedule();
  // A transfer told its end now is not re-timed when SMs start later: the GPU-wide queue of all the L2's work (the
  // reads' too) keeps such transfers together within the L2's bandwidth.
  return sim::max(l2_.serve(start, work, sim_.machine().l2_bytes_per_cycle), Cycle(static_cast<std::int64_t>(std::ceil(end))));
}

// The next time something in the link changes (a read through, an SM out of work): one tick event then.
void CachedL2::reschedule() {
  const std::int64_t now = sim_.now().v;
  std::int64_t at = -1;
  // A read is through at the first whole cycle at or after its end (within rounding, the same test as tick's).
  if (!pending_.empty()) at = static_cast<std::int64_t>(std::ceil(link_.projected(std::get<0>(pending_.top())) - 1e-6));
  if (double e = link_.next_end(); e != SharedLink::kNever) {
    auto end = static_cast<std::int64_t>(std::ceil(link_.projected(e)));
    at = at < 0 ? end : std::min(at, end);
  }
  if (at < 0) return;
  sim_.schedule(*this, Cycle(std::max(at, now)), sim::Priority::kCompletion, kTick, ++tick_);
}

void CachedL2::arrive(std::uint32_t j) {
  link_.advance(static_cast<double>(sim_.now().v));
  Job& job = jobs_[j];
  job.vend = link_.add(job.sm, static_cast<double>(job.work));
  job.arrived = true;
  pending_.emplace(job.vend, job.order, j);
  reschedule();
}

bool CachedL2::in_flight(const InFlightRead& r) const { return r.job != kNoJob && jobs_[r.job].gen == r.gen; }

bool CachedL2::joinable(const InFlightRead& r, std::uint64_t key, Cycle at, std::uint64_t need) const {
  return r.key == key && at.v <= r.until && (need & ~r.parts) == 0 && (in_flight(r) || at.v < r.done);
}

double CachedL2::outstanding(const InFlightRead& r, Cycle at) const {
  if (!in_flight(r) || !jobs_[r.job].arrived) return r.outstanding(at);
  // Its end: no sooner than estimated when it started, later where SMs that started since slow it (its end as its
  // share gives it now: plan advanced the link to the current cycle).
  const double end = std::max(link_.projected(jobs_[r.job].vend), static_cast<double>(r.done));
  const double span = end - static_cast<double>(r.start);
  return span <= 0 || at.v <= r.start ? 1.0 : std::clamp((end - static_cast<double>(at.v)) / span, 0.0, 1.0);
}

// The CTAs whose reads combine at the near share: a plain launch's aligned blocks of l2_combine_block_ctas CTAs in launch
// order; a launch of clusters, the CTAs on the SMs of one GPC (none in either when l2_combine_block_ctas is 0: a
// distinct group per CTA). Measured
// on the H200 (validation/results/h200/clusteredge, clusters of 2 and 4 launched one after another in a 1D grid, pairs
// of CTAs reading the same boxes): CTAs of different clusters combine 0.15-0.26 of the second reader's requests at 2-16
// CTAs apart, inside an aligned block of 16 CTAs or not (the block rule would give 0.62), the other TPC of a cluster of 4
// 0.61, and clusters 8 apart, which the GPU (as the model, cluster_launch_order) places in one GPC, 0.43.
std::int64_t CachedL2::near_group(std::int64_t cta, std::uint32_t sm) const {
  const std::int64_t block = sim_.machine().l2_combine_block_ctas;
  if (block <= 0) return -1 - cta;  // no near pairs at all (a what-if machine)
  return gpc_of_sm_.empty() ? cta / block : gpc_of_sm_[sm];
}

void CachedL2::complete(std::uint32_t target, std::uint64_t payload) {
  if (target == kArrive) return arrive(static_cast<std::uint32_t>(payload));
  if (payload != tick_) return;  // superseded by a later tick
  const std::int64_t now = sim_.now().v;
  link_.advance(static_cast<double>(now));
  while (!pending_.empty() && link_.projected(std::get<0>(pending_.top())) <= static_cast<double>(now) + 1e-6) {
    std::uint32_t j = std::get<2>(pending_.top());
    pending_.pop();
    jobs_[j].through_done = true;
    jobs_[j].through = Cycle(now);
    finish(j);
  }
  reschedule();
}

// A read whose share is through and whose joined reads are all done ends: its waiter hears it, then those that
// joined it.
void CachedL2::finish(std::uint32_t j) {
  Job& job = jobs_[j];
  if (!job.through_done || job.deps > 0) return;
  Cycle done = job.floor;
  if (job.work > 0) done = sim::max(done, sim_.spread(job.start, job.through, sim_.machine().l2_latency_spread, 2 * job.box));
  for (auto [group_table, index] : job.entries) {
    InFlightRead& e = group_table ? requests_[index] : cta_reads_[index];
    if (e.job == j && e.gen == job.gen) e.done = done.v, e.job = kNoJob;
  }
  Landing* to = job.to;
  const std::uint32_t token = job.token;
  std::vector<std::uint32_t> dependents;
  dependents.swap(job.dependents);
  job.entries.clear();
  ++job.gen;
  free_jobs_.push_back(j);
  to->landed(token, done);
  for (std::uint32_t d : dependents) {
    jobs_[d].floor = sim::max(jobs_[d].floor, done);
    --jobs_[d].deps;
    finish(d);
  }
}

void CachedL2::read(Cycle start, const TensorAccess& a, Landing& to, std::uint32_t token) {
  if (!sharing_) return to.landed(token, transfer(start, a));
  const Plan p = plan(start, a);
  const std::uint32_t j = sim::take_slot(jobs_, free_jobs_);
  Job& job = jobs_[j];
  job.start = start;
  job.floor = p.floor;
  job.box = p.box;
  job.work = p.hit + p.miss + p.outside > 0 ? p.work : 0;
  job.sm = a.sm;
  job.token = token;
  job.to = &to;
  job.deps = 0;
  job.through_done = false;
  job.order = issued_reads_++;
  job.arrived = false;
  // What the tables say of it until it is through: the end its share would give if no SM started or finished.
  Cycle estimate = job.work > 0 ? sim::max(p.floor, shared(a.sm, start, job.work, false)) : p.floor;
  for (auto [other, gen, their_estimate] : joined_) {
    estimate = sim::max(estimate, Cycle(their_estimate));
    if (jobs_[other].gen != gen) {
      job.floor = sim::max(job.floor, Cycle(their_estimate));
      continue;
    }
    jobs_[other].dependents.push_back(j);
    ++job.deps;
  }
  remember(p, start, estimate, j);
  if (job.work == 0) {
    job.through_done = true;
    job.through = start;
    finish(j);
    return;
  }
  l2_.serve(start, job.work, sim_.machine().l2_bytes_per_cycle);  // (the GPU-wide account: shared())
  if (start > sim_.now()) {
    sim_.schedule(*this, start, sim::Priority::kCompletion, kArrive, j);
  } else {
    arrive(j);
  }
}

Cycle CachedL2::transfer(Cycle start, const TensorAccess& a) {
  const Machine& m = sim_.machine();
  const Plan p = plan(start, a);
  Cycle done = p.floor;
  // A read that joined one still in flight (processor sharing): that read's estimated end.
  for (auto [other, gen, their_estimate] : joined_) done = sim::max(done, Cycle(their_estimate));
  if (std::int64_t moved = p.hit + p.miss + p.written + p.outside; moved > 0) {
    Cycle through = sharing_ ? shared(a.sm, start, p.work, true)
                             : sim::max(l2_.serve(start, p.work, m.l2_bytes_per_cycle), fair_share(a.sm, start, moved));
    if (p.written > 0) through = sim::max(through, stores_.serve(start, p.written, m.l2_store_bytes_per_cycle));
    done = sim::max(done, sim_.spread(start, through, m.l2_latency_spread, 2 * p.box));
  }
  remember(p, start, done, kNoJob);
  return done;
}

CachedL2::Plan CachedL2::plan(Cycle start, const TensorAccess& a) {
  const Machine& m = sim_.machine();
  const isa::TensorDecl& t = sim_.program().tensors[static_cast<std::size_t>(a.tensor)];
  const int r = a.rank;
  const std::int64_t near = near_group(a.cta, a.sm);  // the CTAs whose reads this one joins at the near share
  // The box's address (its tensor and origin): what the spread of its time draws by.
  std::uint64_t box = static_cast<std::uint64_t>(a.tensor) + 1;
  for (int i = 0; i < r; ++i) box = box * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(a.at[static_cast<std::size_t>(i)]);
  // The tensor as rows of its innermost dimension (the leading coordinates flatten into a row index);
  // [col0, col1): the bytes of each row the box covers.
  const std::int64_t col0 = std::max<std::int64_t>(0, a.at[r - 1]) * t.bits / 8;
  const std::int64_t col1 = std::min(a.at[r - 1] + a.box[r - 1], t.shape[static_cast<std::size_t>(r - 1)]) * t.bits / 8;
  std::int64_t hit = 0, miss = 0, written = 0, back = 0, merged = 0, promoted = 0;
  Cycle merged_done = start;
  // The tensor map's L2 promotion: a miss brings the whole aligned `promotion`-byte segment of each row it touches (the
  // model's finest part is a 64-byte half row; 128: both halves of the block's rows; 256: the neighbouring block's too).
  const int promotion = t.l2_promotion;
  const std::int64_t row_bytes = t.shape[static_cast<std::size_t>(r - 1)] * t.bits / 8;
  // The 64-byte halves of column block cb that lie inside the tensor's rows (a bit pair per row).
  auto halves_in_row = [&](std::int64_t cb) {
    std::uint64_t halves = 0;
    if (row_bytes > cb * kBlockBytes) halves |= 0x5555555555555555ULL;
    if (row_bytes > cb * kBlockBytes + kBlockBytes / 2) halves |= 0xAAAAAAAAAAAAAAAAULL;
    return halves;
  };
  // 256: the rows a box missed in block (cb, rb) bring the same rows of the block beside it (cb ^ 1). Applied after
  // the box's own walk (which may read that block itself): the parts neither partition holds come from HBM, counted as
  // promoted bytes, held from now and coming until the box is done.
  promotions_.clear();
  auto promote = [&](std::int64_t cb, std::int64_t rb, std::uint64_t rows_missed) {
    const std::uint64_t want = (rows_missed | (rows_missed << 1)) & halves_in_row(cb);
    const std::uint64_t key = copy_key(block_key(a.tensor, cb, rb), a.sm);
    std::uint64_t has = 0;
    if (const std::int32_t n = cache_.peek(key); n >= 0) has = cache_.parts(n);
    if (!partition_of_sm_.empty())
      if (const std::int32_t f = cache_.peek(key ^ kPartitionBit); f >= 0) has |= cache_.parts(f);
    const std::uint64_t fetch = want & ~has;
    if (fetch == 0) return;
    BlockCache::Touch tp = cache_.touch(key, false);
    if (tp.evicted_dirty) back += kBlockRows * kBlockBytes;
    // (A block this box read itself keeps what it has coming: its stamp becomes the box's end in remember().)
    if (cache_.stamp(tp.node) <= start.v && std::find(fresh_.begin(), fresh_.end(), tp.node) == fresh_.end())
      cache_.coming(tp.node) = 0;
    cache_.parts(tp.node) |= fetch;
    cache_.coming(tp.node) |= fetch;
    fresh_.push_back(tp.node);
    promoted += std::popcount(fetch) * (kBlockBytes / 2);
  };
  fresh_.clear();
  issued_.clear();
  owned_.clear();
  // With l2_multicast_combines 0 a multicast read neither joins other SMs' reads of the same data nor is joined by theirs
  // (measured: a GEMM stage's multicast operand that every cluster of the grid reads at once is read at the rate of one
  // no other cluster reads, where unicast reads of it gain 12 %: validation/microbench, group multicast,
  // mcast_split_gemm_*).
  const bool alone = a.multicast && m.l2_multicast_combines == 0;
  const bool combines = m.l2_combine_sms > 1 && !a.write && !alone;
  const bool ctas_combine = !cta_reads_.empty() && !a.write && !alone;
  const std::int64_t per_group = std::max<std::int64_t>(1, m.l2_combine_sms);
  const std::int64_t group = static_cast<std::int64_t>(a.sm) / per_group;
  const std::uint64_t me = std::uint64_t{1} << (static_cast<std::int64_t>(a.sm) % per_group);
  joined_.clear();
  if (sharing_) link_.advance(static_cast<double>(sim_.now().v));  // (outstanding() projects reads in flight from now)
  // Joining a read in flight: done no sooner than it is (with processor sharing, while its end is not known yet, when
  // it comes; joined_ holds it and its estimate).
  auto join = [&](const InFlightRead& r) {
    if (r.job != kNoJob) joined_.emplace_back(r.job, r.gen, r.done);
    else merged_done = sim::max(merged_done, Cycle(r.done));
  };
  auto touch_rows = [&](std::int64_t row0, std::int64_t row1) {  // rows [row0, row1) of the flattened tensor
    // First every block the rows cover: its key and its entries in the two tables, with a hint to load them (the
    // entries of a box's blocks lie far apart: loading them together lets their cache misses overlap). The walk
    // below takes them in the same order.
    walk_.clear();
    for (std::int64_t rb = row0 / kBlockRows; rb * kBlockRows < row1; ++rb)
      for (std::int64_t cb = col0 / kBlockBytes; cb * kBlockBytes < col1; ++cb) {
        const std::uint64_t key = block_key(a.tensor, cb, rb);
        cache_.prefetch(copy_key(key, a.sm));
        InFlightRead* req = combines ? &request(group, key) : nullptr;
        InFlightRead* cta = ctas_combine ? &cta_read(key) : nullptr;
        if (req != nullptr) __builtin_prefetch(req);
        if (cta != nullptr) __builtin_prefetch(cta);
        walk_.push_back({key, req, cta});
      }
    std::size_t next = 0;
    for (std::int64_t rb = row0 / kBlockRows; rb * kBlockRows < row1; ++rb) {
      std::int64_t rows = std::min(row1, (rb + 1) * kBlockRows) - std::max(row0, rb * kBlockRows);
      for (std::int64_t cb = col0 / kBlockBytes; cb * kBlockBytes < col1; ++cb) {
        const std::int64_t c0 = std::max(col0, cb * kBlockBytes) - cb * kBlockBytes, c1 = std::min(col1, (cb + 1) * kBlockBytes) - cb * kBlockBytes;
        std::int64_t bytes = rows * (c1 - c0);
        const std::uint64_t need = block_parts(std::max(row0, rb * kBlockRows) - rb * kBlockRows, rows, c0, c1);
        const WalkBlock& wb = walk_[next++];
        const std::uint64_t key = wb.key;
        // Two partitions: what the other partition's copy holds (read before this one's touch, which may evict it).
        std::uint64_t far_parts = 0, far_coming = 0;
        std::int64_t far_stamp = 0;
        if (!partition_of_sm_.empty() && !a.write) {
          const std::int32_t f = cache_.peek(copy_key(key, a.sm) ^ kPartitionBit);
          if (f >= 0) far_parts = cache_.parts(f), far_coming = cache_.coming(f), far_stamp = cache_.stamp(f);
        }
        BlockCache::Touch tc = cache_.touch(copy_key(key, a.sm), a.write);
        if (tc.evicted_dirty) back += kBlockRows * kBlockBytes;
        std::int64_t& in_flight = cache_.stamp(tc.node);
        InFlightRead* mine = wb.request;
        std::uint64_t& held = cache_.parts(tc.node);
        std::uint64_t missing = need & ~held;
        held |= need;
        if (const std::uint64_t from_far = missing & far_parts; from_far != 0) {
          // Parts this partition lacks and the other holds come from there (an L2 hit for HBM's sake): no sooner than
          // they reach it when they are still coming from HBM.
          if (far_stamp > start.v && (from_far & far_coming) != 0) merged_done = sim::max(merged_done, Cycle(far_stamp));
          missing &= ~from_far;
        }
        // The parts of the block a read is still bringing from HBM (until its stamp): a later read waits only
        // for those it needs.
        std::uint64_t& coming = cache_.coming(tc.node);
        if (in_flight <= start.v) coming = 0;
        if (a.write) {
          written += bytes;
        } else {
          if (mine != nullptr && joinable(*mine, key, start, need) && !(mine->sms & me)) {
            // Another SM of the group started a read of every part this one needs lately, and its data is still
            // coming: this one's requests join those of it still outstanding; the rest are lookups of their own
            // (of parts the L2 holds or has coming).
            const auto joined = static_cast<std::int64_t>(std::llround(static_cast<double>(bytes) * outstanding(*mine, start)));
            merged += joined;
            join(*mine);
            mine->sms |= me;
            bytes -= joined;
          } else {
            if (combines) issued_.emplace_back(key, need);
            InFlightRead* other = wb.cta_read;
            if (other != nullptr && joinable(*other, key, start, need) && other->cta != a.cta) {
              // Another CTA's read of every part this one needs is in flight: a share of this one's bytes reaches
              // the L2 with the requests of it still outstanding.
              const bool is_near = other->has_near(a.cta, near);
              const double share = (is_near ? m.l2_combine_near_share : m.l2_combine_far_share) * outstanding(*other, start);
              const auto joined = static_cast<std::int64_t>(std::llround(static_cast<double>(bytes) * share));
              if (joined > 0) {
                merged += joined;
                join(*other);
                bytes -= joined;
              }
              other->add_joiner(a.cta, near);
            } else if (other != nullptr) {
              owned_.emplace_back(key, need);
            }
          }
          // The parts of the block the L2 does not hold yet come from HBM (a block whose every part it holds
          // is a hit; one just inserted holds none).
          const std::int64_t missed = missing == need ? bytes
                                      : missing == 0  ? 0
                                                      : bytes * std::popcount(missing) / std::popcount(need);
          if (missed < bytes) {
            hit += bytes - missed;
            // Parts it needs are still coming from HBM for another group's read: a lookup that waits for that data.
            if (in_flight > start.v && (need & ~missing & coming) != 0) merged_done = sim::max(merged_done, Cycle(in_flight));
          }
          if (missed > 0) {
            miss += missed;
            coming |= missing;
            fresh_.push_back(tc.node);
            if (promotion >= 128) {
              // The rows that missed, one bit each (the first half's); their other halves in this block, then (256)
              // in the block beside it within the aligned 256 bytes.
              const std::uint64_t rows_missed = (missing | (missing >> 1)) & 0x5555555555555555ULL;
              const std::uint64_t other = (rows_missed | (rows_missed << 1)) & halves_in_row(cb) & ~held;
              // (halves the other partition holds come from there, as the box's own do)
              if (const std::uint64_t fetch = other & ~far_parts; fetch != 0) {
                held |= fetch;
                coming |= fetch;
                promoted += std::popcount(fetch) * (kBlockBytes / 2);
              }
              if (promotion >= 256) promotions_.emplace_back(cb ^ 1, rb, rows_missed);
            }
          }
        }
      }
    }
  };
  if (col1 > col0) {
    if (r == 1) {
      touch_rows(0, 1);
    } else {
      // Every combination of the coordinates outside the two innermost dimensions that lies inside the tensor
      // ([first, end) per dimension: the box clipped to the tensor), then a run of rows.
      std::array<std::int64_t, 5> idx{}, first{}, end{};
      bool any = true;
      for (int i = 0; i < r - 2; ++i) {
        first[i] = std::max<std::int64_t>(0, a.at[i]);
        end[i] = std::min(a.at[i] + a.box[i], t.shape[static_cast<std::size_t>(i)]);
        any &= end[i] > first[i];
        idx[i] = first[i];
      }
      while (any) {
        std::int64_t base = 0;
        for (int i = 0; i < r - 1; ++i) base = base * t.shape[static_cast<std::size_t>(i)] + (i < r - 2 ? idx[i] : 0);
        std::int64_t rows = t.shape[static_cast<std::size_t>(r - 2)];
        std::int64_t lo = std::max<std::int64_t>(0, a.at[r - 2]), hi = std::min(a.at[r - 2] + a.box[r - 2], rows);
        if (hi > lo) touch_rows(base + lo, base + hi);
        int i = r - 3;
        for (; i >= 0; --i) {
          if (++idx[i] < end[i]) break;
          idx[i] = first[i];
        }
        if (i < 0) break;
      }
    }
  }
  for (const auto& pr : promotions_) std::apply(promote, pr);
  // The parts of a TMA load's box outside its tensor move no data, but the L2 answers them (with zeros) at most at
  // l2_oob_bytes_per_cycle when every SM loads them alone, in its own time: a byte of them costs the L2 what
  // l2_bytes_per_cycle / l2_oob_bytes_per_cycle bytes that hit do (measured: validation/microbench, group oob; one SM
  // alone loads them as fast as a box inside its tensor).
  std::int64_t outside = 0;
  if (a.zero_fill && m.l2_oob_bytes_per_cycle > 0) {
    double inside = 1;
    for (int i = 0; i < r; ++i) {
      const std::int64_t in = std::min(a.at[i] + a.box[i], t.shape[static_cast<std::size_t>(i)]) - std::max<std::int64_t>(0, a.at[i]);
      inside *= a.box[i] > 0 ? static_cast<double>(std::max<std::int64_t>(0, in)) / static_cast<double>(a.box[i]) : 1.0;
    }
    outside = a.bytes - static_cast<std::int64_t>(std::llround(static_cast<double>(a.bytes) * inside));
    outside_bytes_ += outside;
  }
  hit_bytes_ += hit;
  miss_bytes_ += miss;
  merged_bytes_ += merged;
  written_back_ += back;
  written_ += written;
  Plan p;
  p.hit = hit, p.miss = miss, p.written = written, p.outside = outside;
  p.box = box, p.group = group, p.me = me, p.cta = a.cta, p.near = near;
  p.floor = merged_done;
  // Every SM's copy of what it reads crosses from the L2 to the SMs, whether its requests combined with others' or not:
  // the delivery rate bounds reads that share their requests (l2_delivery_bytes_per_cycle), shared round robin by the
  // SMs with transfers in flight as the L2's bandwidth is without l2_processor_sharing (an SM's reads follow one another
  // on its share; one SM loading beside a saturated delivery is not queued behind the others: the H200's
  // loadlat_*_g16/g131 probes). A multicast read counts once, on its issuer's share: where its copies fan out to the
  // cluster's SMs is not known.
  // (What it reads of the tensor: the parts of a TMA box outside it are not read; l2_oob_bytes_per_cycle prices them.)
  if (const std::int64_t read = hit + miss + merged; !a.write && read > 0 && m.l2_delivery_bytes_per_cycle > 0) {
    delivered_ += read;
    p.floor = sim::max(p.floor, delivery_share_.serve(a.sm, start, read, m.l2_delivery_bytes_per_cycle));
  }
  if (hit + miss + written + outside > 0) {
    // (A promoted byte costs the L2 its fill: what a byte read from HBM costs beyond its own lookup.)
    p.work = hit + static_cast<std::int64_t>(std::llround(static_cast<double>(written) * m.l2_store_cost)) +
             (outside > 0 ? static_cast<std::int64_t>(std::llround(static_cast<double>(outside) * m.l2_bytes_per_cycle / m.l2_oob_bytes_per_cycle)) : 0) +
             static_cast<std::int64_t>(std::llround(static_cast<double>(miss) * m.l2_miss_lookups)) +
             static_cast<std::int64_t>(std::llround(static_cast<double>(promoted) * std::max(0.0, m.l2_miss_lookups - 1)));
    // The L2 serves multicast reads slower than unicast ones (measured: mcast_split_loaded_*, l2_multicast_read_cost).
    if (a.multicast) p.work = static_cast<std::int64_t>(std::llround(static_cast<double>(p.work) * m.l2_multicast_read_cost));
    l2_work_ += p.work;
  }
  if (miss + back > 0) {
    hbm_bytes_ += miss + promoted + back;
    hbm_read_bytes_ += miss + promoted;
    // HBM's share of its recent time, before this box (hbm_loaded_latency); then its turn in the HBM queue.
    const double load = m.hbm_loaded_utilisation.empty() ? 0.0 : hbm_recent_share(start);
    const Cycle waits = sim::max(start, hbm_.free()) - start;
    const std::int64_t cost = hbm_cost(start, miss + promoted, back);
    if (!m.hbm_loaded_utilisation.empty()) hbm_load_.cur += cost;
    Cycle fetched = hbm_.serve(start, cost, m.hbm_bytes_per_cycle);
    // The missed parts arrive hbm_latency_cycles after HBM served them and after the SM sent the box's last request:
    // HBM's latency adds to the box's time through the SM (tma_load_latency_hbm_* - tma_load_latency_l2_*: 494-520
    // cycles on the H100 at every box size from 1 to 32 KB, 455-543 on the H200). Under load HBM's latency grows before
    // its bandwidth is spent (its channels and banks queue the requests that come together): the machine's
    // hbm_loaded_latency at the share of HBM's time its recent traffic took, less what this box already waits for that
    // load here (the delay its turn in the HBM queue gives it: its end against the same box with HBM free at its start)
    // and in its SM's GPC (tma_gpc_latency_cycles: TensorAccess::loaded). TMA loads only (TensorAccess::under_load).
    if (miss > 0) {
      const Cycle through = sim::max(fetched, a.sent);
      std::int64_t latency = m.hbm_latency_cycles;
      if (load > 0 && a.under_load) {
        const Cycle delayed = through - sim::max(fetched - waits, a.sent);
        latency += std::max<std::int64_t>(
            0, std::llround(m.hbm_loaded_latency(load) - static_cast<double>(delayed.v) - static_cast<double>(a.loaded.v)));
      }
      p.floor = sim::max(p.floor, sim_.spread(start, through + Cycle(latency), m.hbm_latency_spread, 2 * box + 1));
    }
    // A block evicted dirty leaves the L2 before its place takes the new data: the box waits for the write-back.
    if (back > 0) p.floor = sim::max(p.floor, fetched);
  }
  return p;
}

// The share of HBM's time (its cost in bytes of hbm_bytes_per_cycle) that the transfers started in the last window took,
// the window being an HBM read's own latency alone (tma_load_latency_cycles + hbm_latency_cycles: the time a request
// spends in the memory, over which the requests that meet it in HBM's queues were sent). Counted in two buckets of the
// window's length (the current one whole, the one before for the part of the window it still covers), in basic
// arithmetic only, so every platform gives the same share.
double CachedL2::hbm_recent_share(Cycle start) {
  const Machine& m = sim_.machine();
  const std::int64_t window = std::max<std::int64_t>(1, m.tma_load_latency_cycles + m.hbm_latency_cycles);
  const std::int64_t bucket = std::max<std::int64_t>(0, start.v) / window;
  if (bucket > hbm_load_.bucket) {
    hbm_load_.prev = bucket == hbm_load_.bucket + 1 ? hbm_load_.cur : 0;
    hbm_load_.cur = 0;
    hbm_load_.bucket = bucket;
  }
  const std::int64_t base = hbm_load_.bucket * window;
  const double into = static_cast<double>(std::max(start.v, base) - base) / static_cast<double>(window);
  const double recent = static_cast<double>(hbm_load_.prev) * (1 - into) + static_cast<double>(hbm_load_.cur);
  return recent / (static_cast<double>(window) * m.hbm_bytes_per_cycle);
}

// HBM's time for `read` bytes read and `written` bytes written back from `start`, in bytes of hbm_bytes_per_cycle: each
// byte costs 1 + hbm_turnaround x, x the share of HBM's traffic of the last hbm_latency_cycles that went the other way
// before it (the bus turns around between reads and writes; measured: 1:1 mixes of TMA loads and stores streaming
// through HBM move 0.89-0.93 of either direction alone, store.json). The last window's traffic is counted in two
// buckets of hbm_latency_cycles (the current one whole, the one before it for the part of the window it still covers),
// in basic arithmetic only, so every platform gives the same cost; a transfer that starts before the current bucket
// counts in it.
std::int64_t CachedL2::hbm_cost(Cycle start, std::int64_t read, std::int64_t written) {
  const Machine& m = sim_.machine();
  std::int64_t cost = read + written;
  if (m.hbm_turnaround > 0) {
    const std::int64_t window = std::max<std::int64_t>(1, m.hbm_latency_cycles);
    const std::int64_t bucket = std::max<std::int64_t>(0, start.v) / window;
    if (bucket > mix_bucket_) {
      const bool next = bucket == mix_bucket_ + 1;
      mix_prev_ = next ? mix_cur_ : MixBytes{};
      mix_cur_ = MixBytes{};
      mix_bucket_ = bucket;
    }
    const std::int64_t base = mix_bucket_ * window;
    const double into = static_cast<double>(std::max(start.v, base) - base) / static_cast<double>(window);
    const double recent_read = static_cast<double>(mix_prev_.read) * (1 - into) + static_cast<double>(mix_cur_.read);
    const double recent_written = static_cast<double>(mix_prev_.written) * (1 - into) + static_cast<double>(mix_cur_.written);
    if (const double recent = recent_read + recent_written; recent > 0) {
      const double w = recent_written / recent;
      cost += std::llround(m.hbm_turnaround * (static_cast<double>(read) * w + static_cast<double>(written) * (1 - w)));
    }
    mix_cur_.read += read;
    mix_cur_.written += written;
  }
  hbm_busy_bytes_ += cost;
  return cost;
}

void CachedL2::remember(const Plan& p, Cycle start, Cycle done, std::uint32_t job) {
  // The blocks this box read itself are in flight until it is done: later readers of them (outside its group's
  // window) are lookups that wait for that data.
  for (std::int32_t n : fresh_) cache_.stamp(n) = std::max(cache_.stamp(n), done.v);
  const std::int64_t until = start.v + sim_.machine().l2_combine_window_cycles;
  const std::uint32_t gen = job != kNoJob ? jobs_[job].gen : 0;
  for (auto [key, parts] : issued_) {
    const std::size_t index = static_cast<std::size_t>(p.group) * kRequestsPerGroup + slot(key, kRequestBits);
    requests_[index] = InFlightRead{.key = key, .start = start.v, .until = until, .done = done.v, .parts = parts, .sms = p.me, .job = job, .gen = gen};
    if (job != kNoJob) jobs_[job].entries.emplace_back(true, index);
  }
  for (auto [key, parts] : owned_) {
    const std::size_t index = slot(key, kCtaReadBits);
    cta_reads_[index] = InFlightRead{.key = key, .start = start.v, .until = until, .done = done.v, .parts = parts, .cta = p.cta, .near = static_cast<std::int32_t>(p.near), .job = job, .gen = gen};
    if (job != kNoJob) jobs_[job].entries.emplace_back(false, index);
  }
}

void CachedL2::add_stats(Stats& s, std::int64_t cycles, std::int64_t) const {
  const Machine& m = sim_.machine();
  const Cycle l2_free = sharing_ ? Cycle(static_cast<std::int64_t>(std::ceil(link_.drained()))) : l2_.free();
  s.units.push_back(link_stats("L2 bandwidth (whole GPU)", l2_work_, m.l2_bytes_per_cycle, cycles, l2_free));
  s.units.push_back(link_stats("HBM bandwidth", hbm_busy_bytes_, m.hbm_bytes_per_cycle, cycles, hbm_.free()));
  if (written_ > 0) s.units.push_back(link_stats("L2 stores (whole GPU)", written_, m.l2_store_bytes_per_cycle, cycles, stores_.free()));
  // (Without combined requests the L2's own bandwidth bounds what it delivers first: the line only where reads combined.)
  if (merged_bytes_ > 0 && m.l2_delivery_bytes_per_cycle > 0)
    s.units.push_back(link_stats("L2 delivery to the SMs (whole GPU)", delivered_, m.l2_delivery_bytes_per_cycle, cycles, delivery_share_.last));
  s.l2_hit_bytes = hit_bytes_ + merged_bytes_;
  s.l2_merged_bytes = merged_bytes_;
  s.l2_outside_bytes = outside_bytes_;
  s.l2_miss_bytes = miss_bytes_;
  s.hbm_bytes = hbm_bytes_;
  s.hbm_read_bytes = hbm_read_bytes_;
  s.l2_footprint_bytes = footprint_;
  s.l2_copies = partition_of_sm_.empty() ? 1 : 2;
  // In whole blocks, as the warm start compares it (a capacity that is not a multiple of a block holds what fits).
  s.l2_capacity_bytes = cache_.capacity() * kBlockRows * kBlockBytes;
  s.l2_warm = warm_;
  s.l2_dirty_start_bytes = dirty_start_;
  s.l2_dirty_capped = dirty_capped_;
  s.l2_dirty_start_tensors = dirty_tensors_;
  s.l2_dirty_left_share = sim_.machine().l2_dirty_left_share;
}

}  // namespace smpipe::models
