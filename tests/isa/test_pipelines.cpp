// `pipeline` declarations and pipeline statements (isa/pipelines.cpp): the barriers and counts each class
// declares, what each statement does when run (both sides of each rule), the errors, and the PTX spellings.
#include <catch2/catch.hpp>

#include <fmt/format.h>
#include <set>

#include "isa/ops.hpp"
#include "isa/pipelines.hpp"
#include "support.hpp"

using namespace smpipe;
using models::Outcome;
using test::compile_error;
using test::compile_text;
using test::run_text;

namespace {

// A TMA mainloop on a PipelineTmaAsync: a producer warp, CONS consumer warpgroups, a CX x CY cluster.
std::string tma_program(int cx, int cy, int consumer_wgs, const std::string& decl_extra = "", bool tail = true,
                        bool release_last = true) {
  return fmt::format(R"(param KT = 8
kernel k grid=({0}, {1}, 1) cluster=({0}, {1}, 1) warps={2} {{
  pipeline ml PipelineTmaAsync stages=2 consumers={3} tx=16K {4}
  smem sA[2] bytes=16K
  tensor A dtype=bf16 shape=(1024, 1024)
  warp 0 producer {{
    elect {{
      for k in 0..KT {{
        producer_acquire ml k
        tma.load A box=(128, 64) at=(0, k * 64) dst=sA[k % 2] bar=ml.full[k % 2]
      }}
      if {5} {{ producer_tail ml KT }}
    }}
  }}
  # wgmma reads the stage for the whole warpgroup: in a cluster each warp signals only some CTAs
  # (CUTLASS's spread of the releases relies on it).
  warpgroups 1..{6} consumer {{
    for k in 0..KT {{
      consumer_wait ml k
      wgmma.fence
      wgmma m64n64k16 dtype=bf16 a=sA[k % 2] b=sA[k % 2] count=4
      wgmma.commit
      wgmma.wait 0
      if k < KT - 1 || {7} {{ consumer_release ml k }}
    }}
  }}
}}
)",
                     cx, cy, 4 + 4 * consumer_wgs, 128 * consumer_wgs, decl_extra, tail ? 1 : 0, 1 + consumer_wgs,
                     release_last ? 1 : 0);
}

}  // namespace

TEST_CASE("a pipeline declares its class's barriers with CUTLASS's counts", "[isa][pipelines]") {
  auto one = compile_text(tma_program(1, 1, 2));
  CHECK(test::barrier_count(one, "ml.full") == 1);
  CHECK(test::barrier_count(one, "ml.empty") == 256);  // every consumer thread
  CHECK(one.mbarriers.at(0).size == 2);
  CHECK(one.mbarriers.at(0).array);
  // A cluster: (x + y - 1) signalling threads per consumer warpgroup (PipelineTmaAsync::init_barriers).
  CHECK(test::barrier_count(compile_text(tma_program(2, 2, 2)), "ml.empty") == 3 * 2);
  CHECK(test::barrier_count(compile_text(tma_program(4, 1, 1)), "ml.empty") == 4);
  CHECK(test::barrier_count(compile_text(tma_program(1, 1, 2, "producers=2")), "ml.full") == 2);
  CHECK(test::barrier_count(compile_text(tma_program(1, 1, 2, "empty_count=7")), "ml.empty") == 7);
  CHECK(test::barrier_count(compile_text(tma_program(1, 1, 2, "empty_count=0")), "ml.empty") == 256);

  auto others = compile_text(R"(kernel k cluster=(2, 1, 1) grid=(2, 1, 1) warps=8 {
  pipeline u PipelineTmaUmmaAsync stages=3 tx=1K
  pipeline t PipelineTransactionAsync stages=2 producers=32 consumers=128
  pipeline a PipelineAsync stages=4 producers=1 consumers=64
  pipeline o OrderedSequenceBarrier depth=2 length=3 group_size=128
})");
  CHECK(test::barrier_count(others, "u.full") == 1);
  CHECK(test::barrier_count(others, "u.empty") == 2);  // cluster x + cluster y - 1
  CHECK(test::barrier_count(others, "t.full") == 32);
  CHECK(test::barrier_count(others, "t.empty") == 128);
  CHECK(test::barrier_count(others, "a.full") == 1);
  CHECK(test::barrier_count(others, "a.empty") == 64);
  CHECK(test::barrier_count(others, "o.bar") == 128);
  CHECK(others.mbarriers.back().size == 6);
}

TEST_CASE("PipelineTmaAsync statements run the mbarrier protocol, in a CTA and in clusters", "[isa][pipelines]") {
  for (auto [cx, cy, wgs] : {std::tuple{1, 1, 2}, std::tuple{1, 1, 1}, std::tuple{2, 1, 2}, std::tuple{2, 2, 2},
                             std::tuple{4, 1, 1}, std::tuple{1, 4, 2}, std::tuple{4, 4, 1}}) {
    INFO(cx << "x" << cy << " cluster, " << wgs << " consumer warpgroup(s)");
    auto r = run_text(tma_program(cx, cy, wgs));
    CHECK(r.outcome == Outcome::kFinished);
    CHECK(test::problem(r).empty());
  }
  // One consumer warp in a cluster: lane 2j signals rank j.
  auto warp = R"(kernel k grid=(4, 1, 1) cluster=(4, 1, 1) warps=2 {
  pipeline ml PipelineTmaAsync stages=2 consumers=32 tx=0
  warp 0 producer { elect { for k in 0..6 { producer_acquire ml k }
                            producer_tail ml 6 } }
  warp 1 consumer { for k in 0..6 { consumer_wait ml k
                                    consumer_release ml k } }
})";
  CHECK(run_text(warp).outcome == Outcome::kFinished);
  // A count larger than the arrivals hangs on the first stage, and the report names the pipeline's barrier.
  auto big = run_text(tma_program(1, 1, 2, "empty_count=512"));
  REQUIRE(big.outcome == Outcome::kDeadlock);
  CHECK_THAT(test::problem(big), Catch::Contains("ml.empty[0]: initialised with count 512 but only 256 arrival(s) came"));
  CHECK_THAT(test::problem(big), Catch::Contains("`producer_acquire ml k: wait ml.empty`"));
  // producer_tail waits for every stage's release: a consumer that keeps the last stage hangs the tail only.
  auto kept = run_text(tma_program(1, 1, 2, "", true, false));
  REQUIRE(kept.outcome == Outcome::kDeadlock);
  CHECK_THAT(test::problem(kept), Catch::Contains("`producer_tail ml KT: wait ml.empty`"));
  CHECK(run_text(tma_program(1, 1, 2, "", false, false)).outcome == Outcome::kFinished);
  // The producer's expect-tx is the stage's bytes: a declared tx that does not match the box hangs.
  auto tx = run_text(tma_program(1, 1, 1).replace(tma_program(1, 1, 1).find("tx=16K"), 6, "tx=32K"));
  REQUIRE(tx.outcome == Outcome::kDeadlock);
  CHECK_THAT(test::problem(tx), Catch::Contains("ml.full[0]: all 1 arrivals came but the tx-count is stuck"));
}

TEST_CASE("producer_acquire's tx= overrides the declaration's, a missing one is an error", "[isa][pipelines]") {
  std::string p = tma_program(1, 1, 1);
  std::string no_tx = p;
  no_tx.replace(no_tx.find(" tx=16K"), 7, "");
  CHECK_THAT(compile_error(no_tx), Catch::Contains("'producer_acquire' needs the bytes of a stage"));
  std::string given = no_tx;
  given.replace(given.find("producer_acquire ml k"), 21, "producer_acquire ml k tx=16K");
  CHECK(run_text(given).outcome == Outcome::kFinished);
}

TEST_CASE("PipelineAsync and PipelineTransactionAsync: commit arrives on full, release on empty", "[isa][pipelines]") {
  auto prog = [](const std::string& producers, bool commit) {
    return fmt::format(R"(kernel k warps=8 {{
  pipeline p PipelineTransactionAsync stages=2 producers={} consumers=128 tx=4K
  smem s[2] bytes=4K
  tensor T dtype=bf16 shape=(256, 256)
  warp 0 producer {{
    for i in 0..6 {{
      producer_acquire p i
      elect {{
        producer_expect_tx p i
        tma.load T box=(32, 64) at=(0, 0) dst=s[i % 2] bar=p.full[i % 2]
      }}
      if {} {{ producer_commit p i }}
    }}
    producer_tail p 6
  }}
  warpgroup 1 consumer {{ for i in 0..6 {{ consumer_wait p i
                                          consumer_release p i }} }}
}})",
                       producers, commit ? 1 : 0);
  };
  CHECK(run_text(prog("32", true)).outcome == Outcome::kFinished);
  CHECK(run_text(prog("32", false)).outcome == Outcome::kDeadlock);  // no producer_commit: full never completes
  CHECK(run_text(prog("64", true)).outcome == Outcome::kDeadlock);   // 32 lanes commit, 64 expected

  auto plain = R"(kernel k warps=2 {
  pipeline p PipelineAsync stages=3 producers=1 consumers=32
  warp 0 producer { elect { for i in 0..9 { producer_acquire p i
                                            producer_commit p i } } }
  warp 1 consumer { for i in 0..9 { consumer_wait p i
                                    consumer_release p i } }
})";
  CHECK(run_text(plain).outcome == Outcome::kFinished);
}

TEST_CASE("PipelineTmaUmmaAsync releases with tcgen05.commit", "[isa][pipelines]") {
  auto prog = [](int cluster) {
    return fmt::format(R"(kernel k grid=({0}, 1, 1) cluster=({0}, 1, 1) warps=2 {{
  pipeline ml PipelineTmaUmmaAsync stages=2 tx=32K
  mbarrier done count=1
  smem sA[2] bytes=16K
  smem sB[2] bytes=16K
  tensor A dtype=bf16 shape=(1024, 1024)
  warp 0 producer {{ elect {{
    for k in 0..6 {{
      producer_acquire ml k
      tma.load A box=(128, 64) at=(0, k * 64) dst=sA[k % 2] bar=ml.full[k % 2]
      tma.load A box=(128, 64) at=(128, k * 64) dst=sB[k % 2] bar=ml.full[k % 2]
    }}
    producer_tail ml 6
  }} }}
  warp 1 mma {{
    tmem.alloc cols=128 -> t
    for k in 0..6 {{
      consumer_wait ml k
      elect {{ umma m128n128k16 kind=f16 a=sA[k % 2] b=sB[k % 2] count=4 tmem=t }}
      consumer_release ml k
    }}
    elect {{ umma.commit done }}
    wait done parity=0
    tmem.relinquish
    tmem.dealloc t cols=128
  }}
}})",
                       cluster);
  };
  CHECK(test::barrier_count(compile_text(prog(1), {}, "t.pipe", "b200"), "ml.empty") == 1);
  auto r = run_text(prog(1), "b200");
  CHECK(r.outcome == Outcome::kFinished);
  CHECK(test::problem(r).empty());
  auto dump = compile_text(prog(2), {}, "t.pipe", "b200").dump();
  CHECK_THAT(dump, Catch::Contains("consumer_release ml k: umma.commit ml.empty"));
}

TEST_CASE("OrderedSequenceBarrier: group 0 goes first, each arrive hands the turn to the next group", "[isa][pipelines]") {
  // Each group sleeps 4000 cycles in each of its two turns (stages 0 and 1). In order: group 0's stage 0,
  // then group 0's stage 1 beside group 1's stage 0, then group 1's stage 1: three turns' time.
  auto prog = [](const std::string& g1) {
    return fmt::format(R"(kernel k warps=8 {{
  pipeline o OrderedSequenceBarrier depth=2 length=2 group_size=128
  warpgroup 0 first {{ for n in 0..2 {{ sequence_wait o n group=0
                                      sleep 4000
                                      sequence_arrive o n group=0 }} }}
  warpgroup 1 second {{ for n in 0..2 {{ sequence_wait o n group={0}
                                       sleep 4000
                                       sequence_arrive o n group={0} }} }}
}})",
                       g1);
  };
  auto ordered = run_text(prog("1"));
  REQUIRE(ordered.outcome == Outcome::kFinished);
  CHECK(ordered.cycles >= 3 * 4000);
  CHECK(ordered.cycles < 3 * 4000 + 1000);
  // Both claiming group 0: nobody waits for anybody, each group's two turns take two turns' time.
  auto both_first = run_text(prog("0"));
  CHECK(both_first.cycles < 2 * 4000 + 1000);
}

TEST_CASE("pipeline declarations and statements are checked", "[isa][pipelines]") {
  auto with = [](const std::string& decl, const std::string& body = "") {
    return "kernel k cluster=(2, 1, 1) grid=(2, 1, 1) warps=8 {\n  " + decl + "\n  warp 0 w {\n" + body + "\n  }\n}\n";
  };
  const std::string ml = "pipeline ml PipelineTmaAsync stages=2 consumers=256 tx=1K";
  CHECK_THAT(compile_error(with("pipeline p PipelineFoo stages=2")), Catch::Contains("unknown pipeline class 'PipelineFoo'"));
  CHECK_THAT(compile_error(with("pipeline p PipelineAsync stages=2 producers=1")), Catch::Contains("a PipelineAsync needs 'consumers='"));
  CHECK_THAT(compile_error(with("pipeline p PipelineAsync stages=2 producers=1 consumers=1 tx=4")),
             Catch::Contains("unknown attribute 'tx' for a PipelineAsync"));
  CHECK_THAT(compile_error(with("pipeline p PipelineAsync stages=4097 producers=1 consumers=1")), Catch::Contains("stages=4097 out of range 0..4096"));
  CHECK(compile_error(with("pipeline p PipelineAsync stages=4096 producers=1 consumers=1")).empty());
  CHECK_THAT(compile_error(with("pipeline p PipelineAsync stages=-1 producers=1 consumers=1")), Catch::Contains("out of range"));
  CHECK_THAT(compile_error(with("pipeline p PipelineAsync stages=2 producers=0 consumers=1")), Catch::Contains("producers=0 out of range 1.."));
  CHECK_THAT(compile_error(with("pipeline p PipelineAsync stages=2 producers=1 producers=2 consumers=1")), Catch::Contains("given twice"));
  CHECK_THAT(compile_error(with("pipeline ml PipelineTmaAsync stages=2 consumers=100")),
             Catch::Contains("consumers=100: in a cluster a PipelineTmaAsync's consumers are whole warpgroups"));
  CHECK(compile_error(with("pipeline ml PipelineTmaAsync stages=2 consumers=32")).empty());
  CHECK_THAT(compile_error(with("pipeline o OrderedSequenceBarrier depth=64 length=65 group_size=1")),
             Catch::Contains("length=65 out of range 1..64"));
  CHECK_THAT(compile_error(with(ml + "\n  mbarrier ml.full count=1")), Catch::Contains("'ml.full' is declared twice"));
  CHECK_THAT(compile_error(with(ml + "\n  mbarrier ml count=1")), Catch::Contains("'ml' is declared twice"));
  CHECK_THAT(compile_error(with(ml, "consumer_wait mx 0")), Catch::Contains("unknown pipeline 'mx' (did you mean 'ml'?)"));
  CHECK_THAT(compile_error(with(ml, "consumer_wait ml")), Catch::Contains("'consumer_wait' takes a pipeline and a state"));
  CHECK_THAT(compile_error(with(ml, "consumer_wait 3 0")), Catch::Contains("'consumer_wait' names a pipeline first"));
  CHECK_THAT(compile_error(with(ml, "consumer_wait ml 0 tx=4")), Catch::Contains("unknown attribute 'tx' for 'consumer_wait'"));
  CHECK_THAT(compile_error(with(ml, "wait ml[0] parity=0")), Catch::Contains("'ml' is a pipeline: name one of its barriers (ml.full, ml.empty)"));
  CHECK(compile_error(with(ml, "wait ml.full[1] parity=0")).empty());
  const std::string o = "pipeline o OrderedSequenceBarrier depth=2 length=2 group_size=32";
  CHECK_THAT(compile_error(with(o, "sequence_wait o 0")), Catch::Contains("'sequence_wait' needs 'group='"));
  CHECK_THAT(compile_error(with(o, "consumer_wait o 0")), Catch::Contains("an OrderedSequenceBarrier has no 'consumer_wait'"));
  // A run-time state past the array (negative) is caught when it runs, not guessed.
  auto neg = run_text("kernel k warps=1 {\n  pipeline p PipelineAsync stages=2 producers=1 consumers=1\n"
                      "  warp 0 w { let g = 0 - 1\n    elect { producer_commit p g } }\n}\n");
  CHECK(neg.outcome == Outcome::kUndefined);
}

TEST_CASE("PTX spellings compile to the op they name, with the flag they imply", "[isa][pipelines]") {
  auto ops_of = [](const std::string& body) {
    auto p = compile_text("kernel k warps=1 {\n  mbarrier b count=1\n  smem s bytes=1K\n  tensor T dtype=bf16 shape=(64, 64)\n"
                          "  warp 0 w {\n" + body + "\n  }\n}\n");
    return p.roles.at(0).ops;
  };
  auto a = ops_of("elect { tma.store T box=(16, 32) at=(0, 0) src=s\n cp.async.bulk.commit_group\n cp.async.bulk.wait_group.read 1 }");
  REQUIRE(a.size() == 3);
  CHECK(a[1].kind == isa::OpKind::kTmaCommit);
  CHECK(a[2].kind == isa::OpKind::kTmaWait);
  CHECK(a[2].text == "cp.async.bulk.wait_group.read 1");
  auto read = a[2].slot(isa::Attr::kRead);
  REQUIRE(read != nullptr);
  CHECK(read->present);
  CHECK(a[2].base_values.at(read->first) == 1);
  auto b = ops_of("elect { tma.store T box=(16, 32) at=(0, 0) src=s }\n cp.async.bulk.wait_group 1");
  auto unread = b[1].slot(isa::Attr::kRead);
  CHECK(b[1].base_values.at(unread->first) == 0);
  auto c = ops_of("mbarrier.try_wait.parity b parity=0\n mbarrier.arrive b\n nanosleep 10");
  CHECK(c[0].kind == isa::OpKind::kWait);
  CHECK(c[1].kind == isa::OpKind::kArrive);
  CHECK(c[2].kind == isa::OpKind::kSleep);
  // Every alias names an existing op, is not itself an op name, and is unique.
  std::set<std::string_view> seen;
  for (const auto& al : isa::op_aliases()) {
    INFO(al.alias);
    CHECK(isa::find_op(al.op).has_value());
    CHECK_FALSE(isa::find_op(al.alias).has_value());
    CHECK(seen.insert(al.alias).second);
  }
  // The same program with tcgen05 spellings runs exactly like the one with smpipe's names.
  const std::string umma = R"(kernel k warps=1 {
  mbarrier done count=1
  smem sA bytes=16K
  warp 0 w {
    tmem.alloc cols=64 -> t
    elect { umma m128n64k16 kind=f16 a=sA b=sA tmem=t
            umma.commit done }
    wait done parity=0
    tmem.relinquish
    tmem.dealloc t cols=64
  }
})";
  std::string ptx = umma;
  for (auto [from, to] : {std::pair{"tmem.alloc", "tcgen05.alloc"}, std::pair{"umma m128", "tcgen05.mma m128"},
                          std::pair{"umma.commit", "tcgen05.commit"}, std::pair{"tmem.relinquish", "tcgen05.relinquish_alloc_permit"},
                          std::pair{"tmem.dealloc", "tcgen05.dealloc"}})
    ptx.replace(ptx.find(from), std::string(from).size(), to);
  auto r1 = run_text(umma, "b200"), r2 = run_text(ptx, "b200");
  REQUIRE(r1.outcome == Outcome::kFinished);
  CHECK(r2.outcome == Outcome::kFinished);
  CHECK(r1.cycles == r2.cycles);
  CHECK(r1.stats.ops == r2.stats.ops);
}

TEST_CASE("pipeline statements take only what their class uses, and an OrderedSequenceBarrier group in range", "[isa][pipelines]") {
  auto in_kernel = [](const std::string& decl, const std::string& body, const std::string& cluster = "(1, 1, 1)") {
    return "kernel k cluster=" + cluster + " grid=" + cluster + " warps=8 {\n  " + decl + "\n  warp 0 w {\n" + body + "\n  }\n}\n";
  };
  const std::string async = "pipeline p PipelineAsync stages=2 producers=1 consumers=1";
  CHECK_THAT(compile_error(in_kernel(async, "producer_acquire p 0 tx=4")), Catch::Contains("unknown attribute 'tx' for 'producer_acquire'"));
  CHECK_THAT(compile_error(in_kernel(async, "consumer_release p 0 -> x")), Catch::Contains("'consumer_release' gives no result"));
  // CUTLASS's producer_expect_transaction exists on the TMA classes too: one elected expect_tx on full.
  const std::string tma = "pipeline ml PipelineTmaAsync stages=2 consumers=128 tx=1K";
  auto p = compile_text(in_kernel(tma, "producer_expect_tx ml 3 tx=512"));
  REQUIRE(p.roles.at(0).ops.size() == 1);
  CHECK(p.roles[0].ops[0].kind == isa::OpKind::kExpectTx);
  CHECK(p.roles[0].ops[0].lanes == 1);
  CHECK_THAT(compile_error(in_kernel(async, "producer_expect_tx p 0")), Catch::Contains("a PipelineAsync has no 'producer_expect_tx'"));
  // A 3-D cluster is not one CUTLASS's TMA pipelines count for.
  CHECK_THAT(compile_error(in_kernel(tma, "", "(1, 1, 2)")), Catch::Contains("in a cluster of depth 2"));
  CHECK(compile_error(in_kernel(async, "", "(1, 1, 2)")).empty());
  // OrderedSequenceBarrier: a constant group outside 0..length-1 is an input error; a computed one is caught
  // when it runs, not turned into another stage's barrier.
  const std::string seq = "pipeline o OrderedSequenceBarrier depth=2 length=2 group_size=32";
  CHECK_THAT(compile_error(in_kernel(seq, "sequence_wait o 0 group=2")), Catch::Contains("group=2 out of range 0..1"));
  CHECK(compile_error(in_kernel(seq, "sequence_wait o 0 group=1")).empty());
  for (const char* g : {"2", "0 - 1", "5"}) {
    INFO("group " << g);
    auto r = run_text("kernel k warps=1 {\n  " + seq + "\n  warp 0 w { let g = " + g + "\n    sequence_arrive o 1 group=g }\n}\n");
    CHECK(r.outcome == Outcome::kUndefined);
    CHECK_THAT(test::problem(r), Catch::Contains("out of range"));
  }
  CHECK(run_text("kernel k warps=1 {\n  " + seq + "\n  warp 0 w { let g = 1\n    sequence_arrive o 1 group=g }\n}\n").outcome ==
        Outcome::kFinished);
  // producer_tail's loop variable cannot be one of the program's (whatever the program names its variables).
  auto tail = R"(kernel k warps=2 {
  pipeline p PipelineAsync stages=2 producers=1 consumers=32
  warp 0 producer { elect { for p.tail in 0..1 { producer_acquire p p.tail
                                                 producer_commit p p.tail }
                            producer_tail p 1 } }
  warp 1 consumer { consumer_wait p 0
                    consumer_release p 0 }
})";
  CHECK(run_text(tail).outcome == Outcome::kFinished);
  // A pipeline of 0 stages compiles; a statement on it is an index out of range: at compile time with a
  // constant state, when it runs with a computed one (and never where it does not run).
  const std::string none = "pipeline c PipelineTransactionAsync stages=0 producers=32 consumers=32";
  CHECK(compile_error(in_kernel(none, "")).empty());
  CHECK_THAT(compile_error(in_kernel(none, "producer_acquire c 0")), Catch::Contains("index 0 out of range: 'c.empty' has 0 elements"));
  CHECK(compile_error(in_kernel(none, "let g = 0\n if g { producer_acquire c g }")).empty());
  auto ran = run_text("kernel k warps=1 {\n  " + none + "\n  warp 0 w { let g = 0\n    producer_acquire c g }\n}\n");
  CHECK(ran.outcome == Outcome::kUndefined);
}

TEST_CASE("PTX's barrier.sync is the aligned form's spelling only", "[isa][pipelines]") {
  CHECK(isa::find_alias("barrier.sync.aligned") != nullptr);
  CHECK(isa::find_alias("barrier.sync") == nullptr);  // the non-aligned form may diverge; bar.sync may not
  CHECK(isa::find_alias("barrier.arrive") == nullptr);
}

TEST_CASE("PipelineUmmaAsync: the MMA warp commits an accumulator stage, the epilogue releases it", "[isa][pipelines]") {
  auto prog = [](const std::string& consumers, bool commit) {
    return fmt::format(R"(kernel k warps=8 {{
  pipeline acc PipelineUmmaAsync stages=2 consumers={}
  smem sA bytes=16K
  warp 0 mma {{
    tmem.alloc cols=256 -> t
    for i in 0..6 {{
      producer_acquire acc i
      elect {{ umma m128n128k16 kind=f16 a=sA b=sA tmem=t + (i % 2) * 128 }}
      if {} {{ producer_commit acc i }}
    }}
    producer_tail acc 6
    tmem.relinquish
    tmem.dealloc t cols=256
  }}
  warpgroup 1 epilogue {{
    for i in 0..6 {{
      consumer_wait acc i
      tmem.ld 32x32b.x64
      tmem.wait ld
      consumer_release acc i
    }}
  }}
}})",
                       consumers, commit ? 1 : 0);
  };
  auto p = compile_text(prog("128", true), {}, "t.pipe", "b200");
  CHECK(test::barrier_count(p, "acc.full") == 1);
  CHECK(test::barrier_count(p, "acc.empty") == 128);
  auto ok = run_text(prog("128", true), "b200");
  CHECK(ok.outcome == Outcome::kFinished);
  CHECK(test::problem(ok).empty());
  CHECK(run_text(prog("128", false), "b200").outcome == Outcome::kDeadlock);  // nothing commits: full never completes
  CHECK(run_text(prog("256", true), "b200").outcome == Outcome::kDeadlock);   // 128 epilogue threads release
  CHECK_THAT(p.dump(), Catch::Contains("producer_commit acc i: umma.commit acc.full"));
}
