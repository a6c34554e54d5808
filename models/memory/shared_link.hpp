// A link shared by processor sharing: at every moment each source (an SM) with work queued on it gets an equal share
// of its rate, and a source's own work is served in the order it came. Unlike a first-come-first-served queue, work
// that starts together ends together: n SMs that each start a transfer of w bytes at once all finish after n * w / rate.
//
// Kept in virtual time V, the work each busy source has received so far: V grows at rate / (busy sources). Work w
// added to source s at virtual time V0 ends when V reaches max(V0, the end of s's earlier work) + w, whatever starts
// or finishes meanwhile; only the real time at which V gets there moves. Real times are fractional cycles.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace smpipe::models {

class SharedLink {
 public:
  void configure(std::size_t sources, double rate) {
    rate_ = rate;
    end_.assign(sources, 0.0);
    busy_flag_.assign(sources, 0);
  }

  // Moves the link to real time `now` (not before the time it is at): sources whose work ends on the way stop sharing.
  void advance(double now) {
    while (busy_ > 0) {
      drop_stale();
      const double e = ends_.top().first;
      const double at = t_ + (e - v_) * static_cast<double>(busy_) / rate_;
      if (at > now) break;
      v_ = e;
      t_ = at;
      while (!ends_.empty() && (stale(ends_.top()) || ends_.top().first <= e)) {
        auto [end, s] = ends_.top();
        ends_.pop();
        if (stale({end, s})) continue;
        busy_flag_[s] = 0;
        --busy_;
        sum_end_ -= end;
      }
    }
    if (now > t_) {
      if (busy_ > 0) v_ += (now - t_) * rate_ / static_cast<double>(busy_);
      t_ = now;
    }
  }

  // Queues `work` on source s at the link's current time (advance first); the virtual time at which it ends.
  double add(std::uint32_t s, double work) {
    if (work <= 0) return busy_flag_[s] ? end_[s] : v_;
    if (!busy_flag_[s]) {
      busy_flag_[s] = 1;
      ++busy_;
      end_[s] = v_;
    } else {
      sum_end_ -= end_[s];
    }
    end_[s] += work;
    sum_end_ += end_[s];
    ends_.emplace(end_[s], s);
    return end_[s];
  }

  // The real time at which virtual time reaches `v` if the sources busy now stay busy (an estimate: sources that
  // finish before make it earlier, sources that start make it later).
  double projected(double v) const { return v <= v_ ? t_ : t_ + (v - v_) * static_cast<double>(busy_) / rate_; }
  // The real time at which `work` queued on source s now would be through if the sources busy now stayed busy (an
  // estimate, as projected; nothing is queued).
  double estimate(std::uint32_t s, double work) const {
    const double v0 = busy_flag_[s] ? end_[s] : v_;
    return t_ + (v0 + work - v_) * static_cast<double>(busy_ + (busy_flag_[s] ? 0 : 1)) / rate_;
  }
  // The virtual time at which the next busy source runs out of work (infinity: none busy).
  double next_end() {
    drop_stale();
    return ends_.empty() ? kNever : ends_.top().first;
  }
  // When the link is through with all the work queued (at the rate it would then have: the sum of what is left).
  double drained() const { return t_ + (sum_end_ - static_cast<double>(busy_) * v_) / rate_; }

  static constexpr double kNever = 1e300;

 private:
  using End = std::pair<double, std::uint32_t>;
  bool stale(const End& e) const { return !busy_flag_[e.second] || end_[e.second] != e.first; }
  void drop_stale() {
    while (!ends_.empty() && stale(ends_.top())) ends_.pop();
  }

  double rate_ = 1, v_ = 0, t_ = 0, sum_end_ = 0;
  std::int64_t busy_ = 0;
  std::vector<double> end_;      // per source: the virtual time its queued work ends
  std::vector<char> busy_flag_;  // per source: it has work queued
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;  // (end, source), earliest first; stale ones skipped
};

}  // namespace smpipe::models
