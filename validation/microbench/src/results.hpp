// Host-side result collection: per-measurement samples -> statistics -> one JSON document.
// Header-only, plain C++17; no external JSON library so the driver builds anywhere nvcc does.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace mb {

inline std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

inline std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  // Integers print without exponent; others with enough digits to be useful.
  if (std::fabs(v) < 1e15 && v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", v);
  }
  return buf;
}

// A small ordered key -> JSON-literal map (values are already-rendered JSON).
struct JObj {
  std::vector<std::pair<std::string, std::string>> kv;
  JObj& str(const std::string& k, const std::string& v) {
    kv.emplace_back(k, "\"" + json_escape(v) + "\"");
    return *this;
  }
  JObj& num(const std::string& k, double v) {
    kv.emplace_back(k, json_num(v));
    return *this;
  }
  JObj& boolean(const std::string& k, bool v) {
    kv.emplace_back(k, v ? "true" : "false");
    return *this;
  }
  JObj& raw(const std::string& k, const std::string& json) {
    kv.emplace_back(k, json);
    return *this;
  }
  std::string render(int indent = 0) const {
    std::string pad(indent + 2, ' '), pad0(indent, ' ');
    std::string o = "{";
    for (size_t i = 0; i < kv.size(); ++i) {
      o += (i ? ",\n" : "\n") + pad + "\"" + json_escape(kv[i].first) + "\": " + kv[i].second;
    }
    o += kv.empty() ? "}" : "\n" + pad0 + "}";
    return o;
  }
};

struct Stats {
  double median = NAN, min = NAN, max = NAN, p10 = NAN, p90 = NAN, mean = NAN;
  size_t n = 0;
};

// Percentile by linear interpolation between closest ranks (numpy's default).
inline double percentile_sorted(const std::vector<double>& s, double p) {
  if (s.empty()) return NAN;
  double pos = p * (s.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, s.size() - 1);
  double f = pos - lo;
  return s[lo] * (1 - f) + s[hi] * f;
}

inline Stats compute_stats(std::vector<double> v) {
  Stats st;
  st.n = v.size();
  if (v.empty()) return st;
  std::sort(v.begin(), v.end());
  st.min = v.front();
  st.max = v.back();
  st.median = percentile_sorted(v, 0.5);
  st.p10 = percentile_sorted(v, 0.1);
  st.p90 = percentile_sorted(v, 0.9);
  double sum = 0;
  for (double x : v) sum += x;
  st.mean = sum / v.size();
  return st;
}

struct Measurement {
  std::string name, group, unit, description, status = "ok";
  Stats st;
  JObj params;
};

class Results {
 public:
  JObj header;  // gpu, clocks, date, command line ...
  std::vector<Measurement> meas;
  std::vector<std::pair<std::string, std::string>> failures;  // name, reason
  std::vector<std::string> notes;
  std::string path;

  Measurement& add(const std::string& name, const std::string& group, const std::string& unit,
                   const std::vector<double>& samples, const std::string& desc, JObj params = {},
                   const std::string& status = "ok") {
    Measurement m;
    m.name = name;
    m.group = group;
    m.unit = unit;
    m.description = desc;
    m.st = compute_stats(samples);
    m.params = std::move(params);
    m.status = status;
    meas.push_back(std::move(m));
    const Measurement& r = meas.back();
    std::printf("  %-48s %12.2f %-10s (min %.2f p10 %.2f p90 %.2f max %.2f, n=%zu)%s\n", r.name.c_str(),
                r.st.median, r.unit.c_str(), r.st.min, r.st.p10, r.st.p90, r.st.max, r.st.n,
                r.status == "ok" ? "" : ("  [" + r.status + "]").c_str());
    std::fflush(stdout);
    return meas.back();
  }

  void fail(const std::string& name, const std::string& reason) {
    failures.emplace_back(name, reason);
    std::printf("  FAILED %s: %s\n", name.c_str(), reason.c_str());
    std::fflush(stdout);
  }

  std::string render() const {
    JObj root = header;
    std::string ms = "[";
    for (size_t i = 0; i < meas.size(); ++i) {
      const Measurement& m = meas[i];
      JObj o;
      o.str("name", m.name)
          .str("group", m.group)
          .str("unit", m.unit)
          .num("median", m.st.median)
          .num("min", m.st.min)
          .num("max", m.st.max)
          .num("p10", m.st.p10)
          .num("p90", m.st.p90)
          .num("mean", m.st.mean)
          .num("reps", static_cast<double>(m.st.n))
          .str("status", m.status)
          .str("description", m.description)
          .raw("params", m.params.render(6));
      ms += (i ? ",\n    " : "\n    ") + o.render(4);
    }
    ms += meas.empty() ? "]" : "\n  ]";
    root.raw("measurements", ms);
    std::string fs = "[";
    for (size_t i = 0; i < failures.size(); ++i) {
      JObj o;
      o.str("name", failures[i].first).str("reason", failures[i].second);
      fs += (i ? ", " : "") + o.render(4);
    }
    fs += "]";
    root.raw("failures", fs);
    std::string ns = "[";
    for (size_t i = 0; i < notes.size(); ++i) ns += (i ? ",\n    \"" : "\n    \"") + json_escape(notes[i]) + "\"";
    ns += notes.empty() ? "]" : "\n  ]";
    root.raw("notes", ns);
    return root.render(0) + "\n";
  }

  // Rewritten after every benchmark group so that a crash or hang later keeps what was measured.
  bool write() const {
    if (path.empty()) return false;
    std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) return false;
    std::string s = render();
    bool ok = std::fwrite(s.data(), 1, s.size(), f) == s.size();
    ok = (std::fclose(f) == 0) && ok;
    if (ok) ok = std::rename(tmp.c_str(), path.c_str()) == 0;
    return ok;
  }
};

}  // namespace mb
