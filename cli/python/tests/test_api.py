"""The Python API (`import treering`): clusters, predict, simulate, sweep, tune, sensitivity, errors.

Run with the package on the path: PYTHONPATH=build/python python3 -m unittest discover -s cli/python/tests
(ctest's python/api does this). Expected figures are worked out by hand in the comments, from the workload's
shape and the cluster files, not copied from the program's output.

paper-mha16 (model/src/workload.cpp): 1 layer, 16 query and 16 KV heads of 128, bf16 (2 B), batch 1.
  K and V per token: 2 x 16 x 128 x 2 B x 1 layer = 8192 B.
dgx-h100 (topologies/clusters/dgx-h100.yaml): 8 GPUs per node (one NVLink domain each), 8 NICs of 400 Gb/s.
"""

import csv
import io
import json
import math
import os
import pathlib
import subprocess
import tempfile
import unittest

import treering

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[3]
KV_BYTES_PER_TOKEN = 2 * 16 * 128 * 2 * 1  # 8192 B
ALGOS = ["ring", "tree", "tree-fused", "tree-lse", "allgather-merge"]  # the defaults
ALL_ALGOS = ALGOS + ["pass-q", "a2a", "ag-rs"]


def command_binary():
    """The `treering` command built beside this package (build/bin/treering next to build/python/treering)."""
    return pathlib.Path(treering.__file__).resolve().parents[2] / "bin" / "treering"


def command_output(test, arguments, output_format):
    """What `treering ARGUMENTS --format FORMAT` prints; the test is skipped where the command was not built."""
    binary = command_binary()
    if not binary.exists():
        test.skipTest(f"{binary} not built")
    return subprocess.run([str(binary)] + arguments + ["--format", output_format], check=True, capture_output=True,
                          text=True).stdout


def by_algo(rows):
    return {row["algo"]: row for row in rows}


class ClusterTest(unittest.TestCase):
    def test_presets_and_workloads(self):
        self.assertIn("dgx-h100", treering.presets())
        self.assertIn("mi300x", treering.presets())
        self.assertIn("paper-mha16", treering.workloads())
        self.assertIn("llama3.1-8b", treering.workloads())
        self.assertEqual(treering.algorithms(), ALL_ALGOS)

    def test_properties(self):
        # 16 nodes x 8 GPUs = 128 GPUs, one NVLink domain per node.
        c = treering.load_cluster("dgx-h100", nodes=16)
        self.assertEqual((c.name, c.nodes, c.gpus, c.domains), ("dgx-h100", 16, 128, 16))
        self.assertEqual(c.source, "dgx-h100")
        # 2 PCIe boxes of 4 GPUs (of their 8 slots): 8 GPUs, each box its own domain. (A DGX cannot drop GPUs:
        # its file maps each of the 8 GPUs to a NIC.)
        small = treering.load_cluster("rtx4090-pcie", nodes=2, gpus_per_node=4)
        self.assertEqual((small.nodes, small.gpus, small.domains), (2, 8, 2))
        self.assertIn("rtx4090-pcie", repr(small))

    def test_file_is_the_preset(self):
        path = SOURCE_DIR / "topologies" / "clusters" / "dgx-h100.yaml"
        from_file = treering.predict(treering.load_cluster(str(path), nodes=2), "1M")
        from_preset = treering.predict(treering.load_cluster("dgx-h100", nodes=2), "1M")
        self.assertEqual(from_file, from_preset)

    def test_setting_values(self):
        c = treering.load_cluster("dgx-h100", nodes=2)
        self.assertEqual(c.setting_values("nics.bandwidth"), ["400Gb/s"])
        self.assertEqual(c.what_if(set={"nics.bandwidth": "800Gb/s"}).setting_values("nics.bandwidth"), ["800Gb/s"])
        # 400 Gb/s x 1.5 in its own unit.
        self.assertEqual(c.what_if(scale={"nics.bandwidth": 1.5}).setting_values("nics.bandwidth"), ["600Gb/s"])


class PredictTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = treering.load_cluster("dgx-h100", nodes=2)  # 16 GPUs
        cls.rows = treering.predict(cls.cluster, seq_len=[80000, "1M"], algos=["tree", "ring"])

    def test_order_and_context(self):
        # Lengths outer, algorithms inner, as `treering predict`.
        self.assertEqual([(r["seq_len"], r["algo"]) for r in self.rows],
                         [(80000, "tree"), (80000, "ring"), (1000000, "tree"), (1000000, "ring")])
        for row in self.rows:
            self.assertEqual((row["engine"], row["cluster"], row["nodes"], row["gpus"], row["workload"], row["batch"]),
                             ("model", "dgx-h100", 2, 16, "paper-mha16", 1))

    def test_columns_and_types(self):
        for row in self.rows:
            self.assertEqual(tuple(row), treering.COLUMNS)
            for key in ("nodes", "gpus", "batch", "seq_len"):
                self.assertIs(type(row[key]), int, key)
            for key in treering.COLUMNS[8:19]:
                self.assertIs(type(row[key]), float, key)
            self.assertEqual(row["calibration"], "none")  # a preset: nominal figures, nothing to extrapolate from
            self.assertEqual(row["extrapolation"], "")

    def test_units(self):
        # Every column has a unit entry; seconds end in _s, rates in _per_s, bytes in _bytes (names say the unit).
        self.assertTrue(set(treering.COLUMNS) <= set(treering.UNITS))
        for name, unit in treering.UNITS.items():
            if name.endswith("_per_s"):
                self.assertTrue(unit.endswith("/s"), name)
            elif name.endswith("_s"):
                self.assertEqual(unit, "s", name)
            if name.endswith("_bytes"):
                self.assertEqual(unit, "bytes", name)
        self.assertEqual(treering.UNITS["seq_len"], "tokens")

    def test_dataframe(self):
        import pandas
        frame = pandas.DataFrame(self.rows)
        self.assertEqual(tuple(frame.columns), treering.COLUMNS)
        self.assertEqual(len(frame), 4)
        self.assertEqual(str(frame["seq_len"].dtype), "int64")
        self.assertEqual(str(frame["latency_s"].dtype), "float64")

    def test_memory_and_volume(self):
        row = by_algo(self.rows[2:])
        # 1M tokens over 16 GPUs: 62,500 each, x 8192 B = 512,000,000 B of KV cache per GPU.
        kv = 62500 * KV_BYTES_PER_TOKEN
        self.assertEqual(kv, 512_000_000)
        # Partial states: q and o, 16 heads x 128 x 2 B = 4096 B each, lse 16 x 4 B (fp32) = 64 B.
        states = 4096 + 4096 + 64
        # tree: plus its workspace, the max/denominator statistics (64 B); nothing received, no weights.
        self.assertEqual(row["tree"]["peak_memory_bytes"], kv + states + 64)
        # ring: plus two foreign K/V blocks in flight (more than 2 GPUs), each a shard.
        self.assertEqual(row["ring"]["peak_memory_bytes"], 3 * kv + states)
        # ring: every GPU forwards 15 of the 16 shards.
        self.assertEqual(row["ring"]["volume_per_gpu_bytes"], 15 * kv)

    def test_tree_beats_ring_at_1m(self):
        # The ring moves 512 MB per step through 50 GB/s NICs (10 ms) against ~0.2 ms of attention per shard;
        # tree's all-reduces move kilobytes.
        row = by_algo(self.rows[2:])
        self.assertLess(row["tree"]["latency_s"], row["ring"]["latency_s"])
        self.assertLess(row["tree"]["latency_s"] * 100, row["ring"]["latency_s"])

    def test_seq_len_forms(self):
        lengths = lambda s: [r["seq_len"] for r in treering.predict(self.cluster, s, algos="tree")]
        self.assertEqual(lengths(80000), [80000])
        self.assertEqual(lengths("80k"), [80000])
        self.assertEqual(lengths("80k,1M"), [80000, 1000000])
        self.assertEqual(lengths(["80k", 1000000]), [80000, 1000000])
        self.assertEqual(lengths("80k:320k:x2"), [80000, 160000, 320000])
        self.assertEqual(lengths(1e6), [1000000])

    def test_defaults_and_names(self):
        # All five algorithms by default; a preset name is loaded as it is (16 nodes, 128 GPUs).
        rows = treering.predict("dgx-h100", "80k")
        self.assertEqual([r["algo"] for r in rows], ALGOS)
        self.assertEqual(rows[0]["gpus"], 128)

    def test_batch(self):
        # batch 4: four sequences' K/V, 4 x 512,000,000 B; q, o and lse four times too, and the workspace.
        row = treering.predict(self.cluster, "1M", algos="tree", batch=4)[0]
        self.assertEqual(row["batch"], 4)
        self.assertEqual(row["peak_memory_bytes"], 4 * (512_000_000 + 4096 + 4096 + 64 + 64))

    def test_what_if_faster_nics(self):
        # Ring on 2 nodes waits on the NICs (see above): doubling them nearly halves it; tree hardly notices.
        faster = treering.load_cluster("dgx-h100", nodes=2, set={"nics.bandwidth": "800Gb/s"})
        base, fast = by_algo(self.rows[2:]), by_algo(treering.predict(faster, "1M", algos=["tree", "ring"]))
        ratio = fast["ring"]["latency_s"] / base["ring"]["latency_s"]
        self.assertGreater(ratio, 0.45)
        self.assertLess(ratio, 0.55)
        self.assertAlmostEqual(fast["tree"]["latency_s"] / base["tree"]["latency_s"], 1.0, delta=0.01)
        # The same what-if three ways: set as a dict, as "PATH=VALUE", or on a loaded cluster.
        as_text = treering.load_cluster("dgx-h100", nodes=2, set=["nics.bandwidth=800Gb/s"])
        self.assertEqual(treering.predict(as_text, "1M"), treering.predict(faster, "1M"))
        self.assertEqual(treering.predict(self.cluster.what_if(set={"nics.bandwidth": "800Gb/s"}), "1M"),
                         treering.predict(faster, "1M"))

    def test_split(self):
        # Every GPU of a DGX is as fast as the others: a split by speed is the equal split.
        self.assertEqual(treering.predict(self.cluster, "1M", split="by-speed"), treering.predict(self.cluster, "1M"))
        with self.assertRaises(treering.InputError):
            treering.predict(self.cluster, "1M", split="sideways")

    def test_lengths_out_of_range(self):
        # 1e30 and 10**30 tokens: InputError with the command line's message (was pybind's TypeError on the
        # conversion to a 64-bit count); 0: not a whole number of tokens >= 1.
        for length in (1e30, 10**30, 0):
            with self.assertRaises(treering.InputError) as caught:
                treering.predict(self.cluster, length, algos="tree")
            self.assertIn("tokens", str(caught.exception))

    def test_check_memory(self):
        # 1G tokens over 16 GPUs: 62.5M x 8192 B = 512 GB of KV per GPU; an H100 has 80 GB.
        with self.assertRaises(treering.InputError) as caught:
            treering.predict(self.cluster, "1000M", algos="tree", check_memory=True)
        self.assertIn("does not fit", str(caught.exception))
        row = treering.predict(self.cluster, "1000M", algos="tree")[0]  # as the command: computed, and marked
        self.assertGreater(row["peak_memory_bytes"], 512e9)
        self.assertEqual(row["fits"], 0)
        self.assertIn("a GPU has 80 GB", row["does_not_fit"])
        self.assertEqual(treering.predict(self.cluster, "1M", algos="tree")[0]["fits"], 1)


class SimulateTest(unittest.TestCase):
    def test_simulate_beside_the_model(self):
        c = treering.load_cluster("dgx-h100", nodes=2)
        simulated = treering.simulate(c, seq_len="1M")
        predicted = by_algo(treering.predict(c, seq_len="1M"))
        self.assertEqual([r["algo"] for r in simulated], ALGOS)
        for row in simulated:
            self.assertEqual(tuple(row), treering.COLUMNS + ("model_latency_s", "transfers_simulated"))
            self.assertEqual(row["engine"], "sim")
            # The model's figure for the same plan, and the plan's own volumes and memory.
            model = predicted[row["algo"]]
            self.assertTrue(math.isclose(row["model_latency_s"], model["latency_s"], rel_tol=1e-12))
            self.assertEqual(row["peak_memory_bytes"], model["peak_memory_bytes"])
            self.assertEqual(row["volume_total_bytes"], model["volume_total_bytes"])
            self.assertGreater(row["latency_s"], 0)
        import pandas
        self.assertIn("model_latency_s", pandas.DataFrame(simulated).columns)


class SameRowsAsTheCommandTest(unittest.TestCase):
    """A record has the columns of the command's CSV, in its order, with the same values (one list feeds both)."""

    def command_rows(self, arguments):
        return list(csv.DictReader(io.StringIO(command_output(self, arguments, "csv"))))

    def check_same(self, lines, records):
        self.assertEqual(len(lines), len(records))
        for line, record in zip(lines, records):
            self.assertEqual(list(line), list(record))
            for key, value in record.items():
                if isinstance(value, str):
                    self.assertEqual(line[key], value, key)
                elif value is None:
                    self.assertEqual(line[key], "", key)
                else:
                    self.assertEqual(type(value)(line[key]), value, key)  # shortest text: the same double

    def test_predict_records_are_the_csv_lines(self):
        lines = self.command_rows(["predict", "--cluster", "dgx-h100", "--nodes", "2", "--seq-len", "80k,1M",
                                   "--algo", "tree,ring"])
        self.check_same(lines, treering.predict(treering.load_cluster("dgx-h100", nodes=2), "80k,1M",
                                                algos=["tree", "ring"]))

    def test_a_deployed_layout_with_its_step_and_generation(self):
        # Llama 3.1 8B on two DGX H100, TP 8 inside each node x CP 2 across them, the whole step, 4 new tokens
        # after the prompt: the command's options and predict()'s arguments give the same rows.
        arguments = ["--cluster", "dgx-h100", "--nodes", "2", "--workload", "llama3.1-8b", "--seq-len", "128k",
                     "--algo", "pass-q,tree", "--tp", "8", "--cp", "2", "--scope", "step", "--tokens", "4", "--prefill"]
        kwargs = dict(workload="llama3.1-8b", algos=["pass-q", "tree"], tp=8, cp=2, scope="step", tokens=4, prefill=True)
        c = treering.load_cluster("dgx-h100", nodes=2)
        predicted = treering.predict(c, "128k", **kwargs)
        self.check_same(self.command_rows(["predict"] + arguments), predicted)
        for row in predicted:
            self.assertEqual((row["tp"], row["cp"], row["gpus"], row["scope"]), (8, 2, 16, "step"))
            self.assertGreater(row["step_s"], row["layer_s"])  # 32 layers and the LM head
            self.assertGreater(row["generation_s"], row["prefill_s"])
        simulated = treering.simulate(c, "128k", **kwargs)
        self.check_same(self.command_rows(["simulate"] + arguments), simulated)

    def test_a_layer_makes_no_token(self):
        one_node = treering.load_cluster("dgx-h100", nodes=1)
        row = treering.predict(one_node, "128k", workload="llama3.1-8b", algos="tree", tp=8, scope="layer")[0]
        self.assertIsNone(row["tokens_per_s"])
        self.assertEqual((row["tp"], row["cp"]), (8, 1))  # one node: tp 8 takes its 8 GPUs, cp the rest (1)

    def test_latent_attention_layouts_as_the_command(self):
        kwargs = dict(workload="deepseek-v3", algos=["a2a", "tree"], tp=8, dcp=8, scope="step")
        rows = treering.predict("dgx-h200", "128k", **kwargs)
        arguments = ["predict", "--cluster", "dgx-h200", "--seq-len", "128k", "--workload", "deepseek-v3", "--tp", "8",
                     "--dcp", "8", "--scope", "step", "--algo", "a2a,tree"]
        self.check_same(self.command_rows(arguments), rows)
        self.assertEqual(rows[0]["attention_parallelism"], "dcp")
        data = treering.predict("dgx-h200", "4k", workload="deepseek-v3", algos="a2a", tp=8, dp_attention=True,
                                batch=64, scope="layer")[0]
        self.assertEqual(data["attention_parallelism"], "dp-attention")
        with self.assertRaises(treering.InputError):
            treering.predict("dgx-h200", "4k", workload="deepseek-v3", algos="pass-q", tp=8, dcp=8)

    def test_expert_parallelism_as_the_command(self):
        kwargs = dict(workload="deepseek-v3", algos="tree", dp_attention=True, ep=16, batch=512, scope="step")
        rows = treering.predict(treering.load_cluster("dgx-h800", nodes=2), "4k", **kwargs)
        arguments = ["predict", "--cluster", "dgx-h800", "--nodes", "2", "--seq-len", "4k", "--workload", "deepseek-v3",
                     "--dp-attention", "--ep", "16", "--batch", "512", "--scope", "step", "--algo", "tree"]
        self.check_same(self.command_rows(arguments), rows)
        self.assertEqual(rows[0]["ep"], 16)
        with self.assertRaises(treering.InputError):
            treering.predict("dgx-h800", "4k", workload="deepseek-v3", ep=16, ep_kernel="fast", scope="step")

    def test_bad_layouts_are_input_errors(self):
        for kwargs in (dict(tp=3), dict(tp=0), dict(scope="token"), dict(placement="outer"), dict(tokens=0)):
            with self.assertRaises(treering.InputError, msg=str(kwargs)):
                treering.predict("dgx-h100", "128k", workload="llama3.1-8b", algos="tree", **kwargs)


class CollectiveAndPlanTest(unittest.TestCase):
    """collective() and plan() return what the command's --format json prints."""

    def command_json(self, arguments):
        return json.loads(command_output(self, arguments, "json"))

    def test_sendrecv_across_nodes(self):
        # A small send between two DGX H100 nodes (NCCL's p2p, Simple protocol): base 8.4 us + the network hop's
        # 14 us + the post of the shared buffer 3 us + the receiver's clear-to-send 5.0 us = 30.4 us, plus 8 B at
        # the NIC's rate (~0.2 ns): model/README.md's parameter table has each constant's source.
        c = treering.load_cluster("dgx-h100", nodes=2)
        rows = treering.collective(c, "sendrecv", [8, 1 << 20])
        self.assertEqual([r["bytes"] for r in rows], [8, 1 << 20])
        self.assertAlmostEqual(rows[0]["time_s"], 30.4e-6, delta=0.01e-6)
        self.assertEqual(rows[0]["algorithm"], "p2p")
        self.assertEqual(rows, self.command_json(["collective", "--cluster", "dgx-h100", "--nodes", "2", "--op", "sendrecv",
                                                  "--bytes", "8,1048576"]))

    def test_forced_algorithm_and_bad_op(self):
        c = treering.load_cluster("dgx-h100", nodes=2)
        ring = treering.collective(c, "allreduce", "64M", algorithm="ring")[0]
        self.assertEqual(ring["algorithm"], "ring")
        with self.assertRaises(treering.InputError):
            treering.collective(c, "allsum", "1M")

    def test_moe_exchange_is_the_commands(self):
        c = treering.load_cluster("dgx-h800", nodes=2)
        rows = treering.moe_exchange(c, "moe-dispatch", "deepseek-v3", [1, 128], engines="model,sim")
        self.assertEqual(rows, self.command_json(["collective", "--cluster", "dgx-h800", "--nodes", "2", "--op",
                                                  "moe-dispatch", "--workload", "deepseek-v3", "--batch", "1,128",
                                                  "--engine", "model,sim"]))
        # 128 tokens x 8 copies x (7,168 fp8 + 56 x 4 B scales + a 16 B header), all through the NIC
        self.assertEqual(rows[1]["nic_bytes_per_gpu"], 128 * 8 * 7408)
        with self.assertRaises(treering.InputError):
            treering.moe_exchange(c, "moe-dispatch", "llama3.1-8b")

    def test_plan_with_a_tpot_target(self):
        c = treering.load_cluster("dgx-h200", nodes=2)
        report = treering.plan(c, "4k", workload="deepseek-v3", confirm=0, tpot_target_ms=40)
        self.assertEqual(report, self.command_json(["plan", "--cluster", "dgx-h200", "--nodes", "2", "--workload",
                                                    "deepseek-v3", "--seq-len", "4k", "--confirm", "0",
                                                    "--tpot-target", "40"]))
        per_gpu = [choice["tokens_per_s_per_gpu"] for choice in report["ranked"]]
        self.assertEqual(per_gpu, sorted(per_gpu, reverse=True))
        self.assertTrue(all(choice["step_s"] <= 0.040 for choice in report["ranked"]))

    def test_plan_is_the_commands(self):
        c = treering.load_cluster("dgx-h100", nodes=2)
        report = treering.plan(c, "128k", workload="llama3.1-8b", confirm=1)
        self.assertEqual(report, self.command_json(["plan", "--cluster", "dgx-h100", "--nodes", "2", "--workload",
                                                    "llama3.1-8b", "--seq-len", "128k", "--confirm", "1"]))
        ranked = report["ranked"]
        tie = [choice for choice in ranked if choice["within_best_band"]]
        self.assertEqual(ranked[:len(tie)], tie)  # the tie with the fastest first, least time across nodes first
        across = [choice["cross_node"]["time_s"] for choice in tie]
        self.assertEqual(across, sorted(across))
        rest = [choice["step_s"] for choice in ranked[len(tie):]]
        self.assertEqual(rest, sorted(rest))  # then the others, fastest first
        self.assertEqual(min(choice["step_s"] for choice in ranked), ranked[report["fastest_rank"] - 1]["step_s"])
        self.assertIn("simulated_step_s", report["ranked"][0])
        self.assertNotIn("simulated_step_s", report["ranked"][1])
        with self.assertRaises(treering.InputError):
            treering.plan(c, "128k,1M")


class EngineRunsTest(unittest.TestCase):
    """validate() and calibrate() on a serving engine's benchmarks (vLLM latency and serve JSON), as the command."""

    FILES = [SOURCE_DIR / "validate" / "tests" / "data" / "vllm" / name for name in ("latency-b8.json", "serve-c16.json")]

    def test_validate_is_the_commands(self):
        report = treering.validate(treering.load_cluster("dgx-h100", nodes=1), self.FILES)
        command = CollectiveAndPlanTest.command_json(self, ["validate", "--cluster", "dgx-h100", "--nodes", "1"] +
                                                     [str(f) for f in self.FILES])
        self.assertEqual(report, command)
        self.assertEqual([r["benchmark"] for r in report["runs"]], ["latency", "serve"])

    def test_calibrate_fits_as_the_command_and_the_profile_predicts(self):
        with tempfile.TemporaryDirectory() as folder:
            ours, theirs = pathlib.Path(folder) / "ours.yaml", pathlib.Path(folder) / "theirs.yaml"
            result = treering.calibrate(treering.load_cluster("dgx-h100", nodes=1), self.FILES, ours)
            command = CollectiveAndPlanTest.command_json(self, ["calibrate"] + [str(f) for f in self.FILES] +
                                                         ["--cluster", "dgx-h100", "--nodes", "1", "-o", str(theirs)])
            self.assertEqual(result["engine_step"]["fixed_s"], command["engine_step"]["fixed_s"])
            self.assertEqual(result["engine_step"]["per_sequence_s"], command["engine_step"]["per_sequence_s"])
            after = treering.validate("dgx-h100", self.FILES, impl=ours)
            self.assertAlmostEqual(after["summary"]["median_abs_rel_error"],
                                   result["summary"]["median_abs_rel_error_after"], delta=1e-6)
            with self.assertRaises(treering.InputError):  # impl is for engines' benchmarks only
                treering.validate("dgx-h100", CalibrateAndValidateTest.LOG, impl=ours)


class CalibrateAndValidateTest(unittest.TestCase):
    """calibrate() and validate() on the public 2-node H100 all-reduce log (validate/data), as the command."""

    LOG = SOURCE_DIR / "validate" / "data" / "nccl-tests-allreduce-h100-2node-ndr.log"

    def test_validate_is_the_commands(self):
        report = treering.validate(treering.load_cluster("dgx-h100", nodes=2), self.LOG, engines="model")
        command = CollectiveAndPlanTest.command_json(self, ["validate", "--cluster", "dgx-h100", "--nodes", "2",
                                                            str(self.LOG)])
        self.assertEqual(report, command)
        self.assertEqual(len(report["cases"]), 32)  # the log's 32 sizes, 8 B to 16 GiB (x2)

    def test_calibrate_writes_the_commands_file_and_lowers_the_error(self):
        with tempfile.TemporaryDirectory() as folder:
            ours, theirs = pathlib.Path(folder) / "ours.yaml", pathlib.Path(folder) / "theirs.yaml"
            result = treering.calibrate(treering.load_cluster("dgx-h100", nodes=2), self.LOG, ours)
            subprocess.run([str(command_binary()), "calibrate", str(self.LOG), "--cluster", "dgx-h100", "--nodes", "2", "-o",
                            str(theirs)], check=True, capture_output=True)
            def undated(path):  # the date is the day's: two runs astride midnight differ there only
                return [line for line in path.read_text().splitlines() if "date:" not in line]
            self.assertEqual(undated(ours), undated(theirs))  # the same fit, the same text
            self.assertEqual(result["collectives"], 32)
            self.assertLess(result["median_abs_rel_error_after"], result["median_abs_rel_error_before"])
            self.assertEqual(result["cluster"].gpus, 16)
            after = treering.validate(result["cluster"], self.LOG)
            medians = [s["median_abs_rel_error"] for s in after["summary"]]
            # The file holds the fitted values rounded to their printed digits: within 1e-5 of the fit's own error.
            self.assertAlmostEqual(medians[0], result["median_abs_rel_error_after"], delta=1e-5)

    def test_calibrate_refuses_to_write_onto_a_file_the_session_read(self):
        with tempfile.TemporaryDirectory() as folder:
            log, cluster = pathlib.Path(folder) / "g2.log", pathlib.Path(folder) / "in.yaml"
            log.write_text(self.LOG.read_text())
            cluster.write_text((SOURCE_DIR / "topologies" / "clusters" / "dgx-h100.yaml").read_text())
            cluster_text = cluster.read_text()
            loaded = treering.load_cluster(str(cluster), nodes=2)  # read here, written below: refused
            for output in (log, cluster, pathlib.Path(folder) / "." / "in.yaml"):
                with self.assertRaisesRegex(treering.InputError, "is also an input of this run"):
                    treering.calibrate(loaded, log, output)
            self.assertEqual(log.read_text(), self.LOG.read_text())
            self.assertEqual(cluster.read_text(), cluster_text)
            self.assertEqual(sorted(p.name for p in pathlib.Path(folder).iterdir()), ["g2.log", "in.yaml"])
            # A cell run again writes its output again: the file the first call wrote (and loaded) is no input here.
            out = pathlib.Path(folder) / "cal.yaml"
            for _ in range(2):
                self.assertEqual(treering.calibrate(loaded, log, out)["cluster"].gpus, 16)

    def test_bad_measurements(self):
        attention = SOURCE_DIR / "validate" / "data" / "measured" / "h100-80gb-hbm3-2026-11-25" / "attention-llama3.1-8b.json"
        self.assertTrue(attention.exists())
        for call in (lambda: treering.calibrate("dgx-h100", [], "x.yaml"),
                     lambda: treering.validate("dgx-h100", [attention, self.LOG]),
                     lambda: treering.validate("dgx-h100", self.LOG, engines="magic")):
            with self.assertRaises(treering.InputError):
                call()
        with self.assertRaisesRegex(treering.InputError, "apart from other measurements"):
            treering.validate("dgx-h100", [attention, self.LOG])


class SweepTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rows = treering.sweep("dgx-h100", nodes=[1, 2], seq_len="80k:320k:x2", batches=[1, 2],
                                  algos=["tree", "ring"], engines=["model", "sim"])

    def test_count_and_order(self):
        # 2 node counts x 1 workload x 2 batches x 3 lengths (80k, 160k, 320k) x 2 algorithms x 2 engines = 48,
        # the engine varying fastest and the node count slowest.
        self.assertEqual(len(self.rows), 2 * 1 * 2 * 3 * 2 * 2)
        self.assertEqual([r["engine"] for r in self.rows[:4]], ["model", "sim", "model", "sim"])
        self.assertEqual([r["algo"] for r in self.rows[:4]], ["tree", "tree", "ring", "ring"])
        self.assertEqual([r["gpus"] for r in self.rows[:24]], [8] * 24)
        self.assertEqual([r["gpus"] for r in self.rows[24:]], [16] * 24)
        for row in self.rows:
            simulated = ("transfers_simulated",) if row["engine"] == "sim" else ()
            self.assertEqual(tuple(row), treering.COLUMNS + ("model_latency_s",) + simulated)

    def test_rows_are_predict_and_simulate(self):
        c = treering.load_cluster("dgx-h100", nodes=2)
        predicted = treering.predict(c, "160k", algos="ring", batch=2)[0]
        simulated = treering.simulate(c, "160k", algos="ring", batch=2)[0]
        swept = [r for r in self.rows if (r["gpus"], r["batch"], r["seq_len"], r["algo"]) == (16, 2, 160000, "ring")]
        self.assertEqual(len(swept), 2)
        self.assertEqual(swept[0], dict(predicted, model_latency_s=predicted["latency_s"]))
        self.assertEqual(swept[1], simulated)

    def test_jobs_and_settings(self):
        serial = treering.sweep("dgx-h100", "80k,1M", nodes=2, algos="ring", set={"nics.bandwidth": "800Gb/s"})
        threaded = treering.sweep("dgx-h100", "80k,1M", nodes=2, algos="ring", set={"nics.bandwidth": "800Gb/s"}, jobs=3)
        self.assertEqual(serial, threaded)
        faster = treering.load_cluster("dgx-h100", nodes=2, set={"nics.bandwidth": "800Gb/s"})
        self.assertEqual([r["latency_s"] for r in serial], [r["latency_s"] for r in treering.predict(faster, "80k,1M", "ring")])

    def test_workloads(self):
        rows = treering.sweep("dgx-h100", "80k", nodes=1, workloads=["paper-mha16", "llama3.1-8b"], algos="tree")
        self.assertEqual([r["workload"] for r in rows], ["paper-mha16", "llama3.1-8b"])

    def test_a_deployed_layout_is_predicts_and_simulates(self):
        # TP 8 inside each DGX H100 x CP 2 across two of them, the whole step: each swept record is predict()'s (or
        # simulate()'s) for the same layout, in worker processes too; a 4-node sweep uses the same 16 GPUs.
        kwargs = dict(workload="llama3.1-8b", algos=["tree", "ring"], tp=8, cp=2, scope="step")
        swept = treering.sweep("dgx-h100", "128k", nodes=[2, 4], engines=["model", "sim"], workloads="llama3.1-8b",
                               algos=["tree", "ring"], tp=8, cp=2, scope="step", jobs=2)
        self.assertEqual(len(swept), 2 * 2 * 2)
        two = treering.load_cluster("dgx-h100", nodes=2)
        predicted = treering.predict(two, "128k", **kwargs)
        simulated = treering.simulate(two, "128k", **kwargs)
        for i in range(2):
            self.assertEqual(swept[2 * i], dict(predicted[i], model_latency_s=predicted[i]["latency_s"]))
            self.assertEqual(swept[2 * i + 1], simulated[i])
        for row in swept:
            self.assertEqual((row["tp"], row["cp"], row["gpus"], row["placement"], row["scope"]), (8, 2, 16, "tp-inner", "step"))
        self.assertEqual([r["cluster_nodes"] for r in swept], [2] * 4 + [4] * 4)
        self.assertEqual([r["step_s"] for r in swept[:4]], [r["step_s"] for r in swept[4:]])

    def test_a_layout_that_does_not_fit_a_node_count(self):
        # tp 8 x cp 2 needs 16 GPUs; one DGX H100 has 8.
        with self.assertRaisesRegex(treering.InputError, r"at 1 node \(8 GPUs\)"):
            treering.sweep("dgx-h100", "80k", nodes=[1, 2], tp=8, cp=2)
        for kwargs in (dict(tp=0), dict(scope="token"), dict(placement="outer")):
            with self.assertRaises(treering.InputError, msg=str(kwargs)):
                treering.sweep("dgx-h100", "80k", nodes=2, **kwargs)


class TuneTest(unittest.TestCase):
    def test_best_first(self):
        c = treering.load_cluster("dgx-h100", nodes=2)
        ranked = treering.tune(c, seq_len="1M")
        self.assertGreater(len(ranked), 10)
        # The best `confirm` (5, the command's --confirm) also carry the simulator's replay, as the command's do.
        self.assertEqual(set(ranked[0]), {"rank", "strategy", "equivalents", "algo", "latency_s", "latency_s_low", "latency_s_high",
                                          "within_best_band", "simulated_latency_s"})
        self.assertNotIn("simulated_latency_s", ranked[5])
        # efficient's errors: compute 0.125, communication 0.23, across nodes at latency-bound sizes 0.46, so a
        # latency x split any way has a band from between x / 1.46 and x / 1.125 to between x / 0.875 and x / 0.54.
        # The best is within its own band; a strategy up to 1.125 / 0.875 = 1.29x the best's latency is within it,
        # one over 1.46 / 0.54 = 2.7x is not.
        self.assertTrue(ranked[0]["within_best_band"])
        best = ranked[0]["latency_s"]
        for r in ranked:
            x = r["latency_s"]
            self.assertTrue(x / 1.46 * (1 - 1e-12) <= r["latency_s_low"] <= x / 1.125 * (1 + 1e-12), r["strategy"])
            self.assertTrue(x / 0.875 * (1 - 1e-12) <= r["latency_s_high"] <= x / 0.54 * (1 + 1e-12), r["strategy"])
            if x <= 1.28 * best:
                self.assertTrue(r["within_best_band"], r["strategy"])
            if x > 2.71 * best:
                self.assertFalse(r["within_best_band"], r["strategy"])
        self.assertEqual([r["rank"] for r in ranked], list(range(1, len(ranked) + 1)))
        latencies = [r["latency_s"] for r in ranked]
        self.assertEqual(latencies, sorted(latencies))
        # The paper's tree is one of the strategies tried, so the best is no slower.
        tree = treering.predict(c, "1M", algos="tree")[0]["latency_s"]
        self.assertLessEqual(ranked[0]["latency_s"], tree)
        plain = [r for r in ranked if r["strategy"] == "tree, NCCL's pick"]
        self.assertEqual(len(plain), 1)
        self.assertTrue(math.isclose(plain[0]["latency_s"], tree, rel_tol=1e-12))


class SensitivityTest(unittest.TestCase):
    def test_elasticities(self):
        rows = treering.sensitivity(treering.load_cluster("dgx-h100", nodes=2), "1M", algos=["tree", "ring"])
        e = {(r["parameter"], r["algo"]): r["elasticity"] for r in rows}
        # Ring on 2 DGX H100 nodes is the NICs' transfer time (PredictTest): L ~ 1 / bandwidth, elasticity ~ -1.
        self.assertGreater(e[("nics.bandwidth", "ring")], -1.05)
        self.assertLess(e[("nics.bandwidth", "ring")], -0.9)
        # ...and HBM bandwidth (the attention, hidden behind the transfers) hardly moves it.
        self.assertLess(abs(e[("hbm_bandwidth", "ring")]), 0.05)
        # Tree's all-reduces move kilobytes: NIC bandwidth hardly matters.
        self.assertLess(abs(e[("nics.bandwidth", "tree")]), 0.05)
        value = {r["parameter"]: r["value"] for r in rows}
        self.assertEqual(value["nics.bandwidth"], "400Gb/s")


class ErrorTest(unittest.TestCase):
    def test_bad_setting_points_at_the_line(self):
        with self.assertRaises(treering.InputError) as caught:
            treering.load_cluster("dgx-h100", set={"nics.bandwidth": "fast"})
        self.assertIsInstance(caught.exception, ValueError)
        self.assertIn("preset:dgx-h100:", str(caught.exception))
        self.assertIn("error:", str(caught.exception))

    def test_bad_file_points_at_the_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "broken.yaml")
            with open(path, "w") as f:
                f.write("name: broken\nnodes: [\n")
            with self.assertRaises(ValueError) as caught:
                treering.load_cluster(path)
            self.assertTrue(str(caught.exception).startswith(path + ":"), str(caught.exception))

    def test_bad_arguments(self):
        c = treering.load_cluster("dgx-h100", nodes=1)
        cases = [
            lambda: treering.load_cluster("no-such-cluster"),
            lambda: treering.load_cluster("dgx-h100", nodes=0),
            lambda: treering.load_cluster("dgx-h100", set={"no.such.path": "1"}),
            lambda: treering.load_cluster("dgx-h100", set=["no-equals-sign"]),
            lambda: treering.load_cluster("dgx-h100", scale={"nics.bandwidth": -2}),
            lambda: treering.predict(c, "lots"),
            lambda: treering.predict(c, 0),
            lambda: treering.predict(c, "80k", algos="bogus"),
            lambda: treering.predict(c, "80k", workload="bogus"),
            lambda: treering.predict(c, "80k", batch=0),
            lambda: treering.tune(c, "80k,1M"),
            lambda: treering.sweep("dgx-h100", "80k", engines="quantum"),
            lambda: treering.sweep("dgx-h100", "80k", nodes=0),
            lambda: treering.sweep("dgx-h100", "80k", jobs=0),
        ]
        for i, case in enumerate(cases):
            with self.subTest(case=i), self.assertRaises(treering.InputError):
                case()

    def test_wrong_types(self):
        c = treering.load_cluster("dgx-h100", nodes=1)
        with self.assertRaises(TypeError):
            treering.sweep(c, "80k")
        with self.assertRaises(TypeError):
            treering.predict(c, 80.5)
        with self.assertRaises(TypeError):
            treering.predict(42, "80k")


if __name__ == "__main__":
    unittest.main()
