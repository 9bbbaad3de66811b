"""Python gives the command's answers: the README's examples of tune, calibrate and sweep, and validate on each
kind of measurement, run both ways and compared whole (crossover: test_crossover_parity.py). Both sides come from
the same analysis library, so any difference is a front end adding, dropping or re-deriving something; the
expected values are the command's own output, which other tests check against hand-derived figures.

Run with the package on the path: PYTHONPATH=build/python python3 -m unittest discover -s cli/python/tests
"""

import csv
import io
import json
import math
import pathlib
import subprocess
import tempfile
import unittest

import treering

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[3]
MEASURED = SOURCE_DIR / "validate" / "data" / "measured"
NDR_LOG = SOURCE_DIR / "validate" / "data" / "nccl-tests-allreduce-h100-2node-ndr.log"
KERNELS = sorted((MEASURED / "h100-80gb-hbm3-2026-11-26-decode").glob("attention-*.json"))
STEPS = MEASURED / "h100-80gb-hbm3-2026-11-26" / "step-realrun.json"
DECODES = MEASURED / "h100-80gb-hbm3-2026-11-26-decode" / "decode-1rank.json"


def command_output(test, arguments, output_format):
    """What `treering ARGUMENTS --format FORMAT` prints; skipped where the command was not built."""
    binary = pathlib.Path(treering.__file__).resolve().parents[2] / "bin" / "treering"
    if not binary.exists():
        test.skipTest(f"{binary} not built")
    return subprocess.run([str(binary)] + [str(a) for a in arguments] + ["--format", output_format], check=True,
                          capture_output=True, text=True).stdout


def command_json(test, arguments):
    return json.loads(command_output(test, arguments, "json"))


def undated(path):
    """A written file's lines but its date (two runs astride midnight differ there only)."""
    return [line for line in pathlib.Path(path).read_text().splitlines() if "date:" not in line]


class TuneParityTest(unittest.TestCase):
    def test_readme_example(self):
        # README: treering tune --cluster dgx-h100 --nodes 16 --workload paper-mha16 --seq-len 1M --top 5
        command = command_json(self, ["tune", "--cluster", "dgx-h100", "--nodes", "16", "--workload", "paper-mha16",
                                      "--seq-len", "1M", "--top", "5"])
        ours = treering.tune(treering.load_cluster("dgx-h100", nodes=16), "1M", workload="paper-mha16")
        # Python's records are the command's "strategies", an unbounded band's high end inf where JSON has null.
        for record in command["strategies"]:
            if record["latency_s_high"] is None:
                record["latency_s_high"] = math.inf
        self.assertEqual(ours, command["strategies"])
        self.assertEqual(ours[0]["strategy"], command["best"])
        self.assertEqual(sum(1 + r["equivalents"] for r in ours), command["strategies_tried"])


class CalibrateParityTest(unittest.TestCase):
    def both(self, files, cluster_arguments, python_cluster, **python_options):
        """The command's JSON and file, and Python's result and file, for the same run."""
        with tempfile.TemporaryDirectory() as folder:
            theirs, ours = pathlib.Path(folder) / "theirs.yaml", pathlib.Path(folder) / "ours.yaml"
            options = []
            if "tokens" in python_options:
                options += ["--tokens", python_options["tokens"]]
            if "fit" in python_options:
                options += ["--fit", python_options["fit"]]
            command = command_json(self, ["calibrate"] + files + cluster_arguments + options + ["-o", theirs])
            result = treering.calibrate(python_cluster, files, ours, **python_options)
            self.assertEqual((command.pop("output"), result.pop("output")), (str(theirs), str(ours)))
            self.assertEqual(undated(ours), undated(theirs))
            return command, result

    def test_readme_example_network(self):
        # README: treering calibrate validate/data/nccl-tests-allreduce-h100-2node-ndr.log --cluster dgx-h100
        #         --nodes 2 -o cal.yaml
        command, result = self.both([NDR_LOG], ["--cluster", "dgx-h100", "--nodes", "2"],
                                    treering.load_cluster("dgx-h100", nodes=2))
        self.assertEqual(result.pop("cluster").gpus, 16)
        self.assertEqual(result, command)
        self.assertEqual(result["collectives"], 32)  # the log's 32 sizes
        self.assertIsNone(result["attention"])

    def test_attention_kernels_and_steps(self):
        # Every fit but the network's: the attention kernel by shape (five shapes) and the decode step's parts.
        command, result = self.both(KERNELS + [STEPS], ["--cluster", "dgx-h100", "--nodes", "1"],
                                    treering.load_cluster("dgx-h100", nodes=1))
        result.pop("cluster")
        self.assertEqual(result, command)
        self.assertEqual(len(result["attention"]["shapes"]), len(KERNELS))  # one shape per workload here
        self.assertEqual(result["step"]["steps"], 14)  # step-realrun.json's 14 one-GPU steps

    def test_attention_at_some_token_counts(self):
        command, result = self.both(KERNELS, ["--cluster", "dgx-h100", "--nodes", "1"],
                                    treering.load_cluster("dgx-h100", nodes=1), tokens="1k,16k,128k")
        result.pop("cluster")
        self.assertEqual(result, command)
        self.assertEqual(result["attention"]["kernels"], 3 * len(KERNELS))

    def test_timed_decodes_fit_a_profile(self):
        command, result = self.both([DECODES], ["--cluster", "dgx-h100"], "dgx-h100", fit="kernel_launch")
        self.assertEqual(result, command)
        self.assertEqual([o["overhead"] for o in result["overheads"]], ["kernel_launch"])

    def test_one_kind_per_run(self):
        with tempfile.TemporaryDirectory() as folder:
            with self.assertRaisesRegex(treering.InputError, "separate runs"):
                treering.calibrate("dgx-h100", [DECODES, NDR_LOG], pathlib.Path(folder) / "x.yaml")
            with self.assertRaisesRegex(treering.InputError, "timed decodes"):
                treering.calibrate("dgx-h100", [NDR_LOG], pathlib.Path(folder) / "x.yaml", impl="efficient")
            with self.assertRaisesRegex(treering.InputError, "needs the cluster they ran on"):
                treering.calibrate(None, [NDR_LOG], pathlib.Path(folder) / "x.yaml")
            self.assertEqual(list(pathlib.Path(folder).iterdir()), [])


class ValidateParityTest(unittest.TestCase):
    def test_each_kind_of_measurement(self):
        heldout = MEASURED / "h100-80gb-hbm3-2026-11-26" / "step-heldout.json"
        for files, engines in (([NDR_LOG], "model,sim"), ([heldout], "model"), (KERNELS, "model")):
            with self.subTest(files=[f.name for f in files]):
                command = command_json(self, ["validate"] + files + ["--cluster", "dgx-h100", "--nodes", "2",
                                                                     "--engine", engines])
                ours = treering.validate(treering.load_cluster("dgx-h100", nodes=2), files, engines=engines)
                self.assertEqual(ours, command)
                self.assertTrue(ours["cases"])


class SweepParityTest(unittest.TestCase):
    def test_readme_example(self):
        # README: treering sweep --cluster dgx-h100 --nodes 1,2,4,8,16 --seq-len 80k:5.12M:x2 --batch 1,8
        #         --algo tree,ring,tree-fused --engine model,sim --jobs 2
        # Python's records are the CSV's lines (the JSON nests some columns): the same columns in the same order,
        # numbers that read back to the same double, an empty cell where a record has None.
        arguments = ["sweep", "--cluster", "dgx-h100", "--nodes", "1,2,4,8,16", "--seq-len", "80k:5.12M:x2",
                     "--batch", "1,8", "--algo", "tree,ring,tree-fused", "--engine", "model,sim", "--jobs", "2"]
        lines = list(csv.DictReader(io.StringIO(command_output(self, arguments, "csv"))))
        nested = command_json(self, arguments)  # the simulator's rows' transfers_simulated, which the CSV leaves out
        ours = treering.sweep("dgx-h100", "80k:5.12M:x2", nodes=[1, 2, 4, 8, 16], batches=[1, 8],
                              algos=["tree", "ring", "tree-fused"], engines=["model", "sim"], jobs=2)
        self.assertEqual(len(ours), 5 * 7 * 2 * 3 * 2)  # nodes x lengths (80k .. 5.12M) x batches x algos x engines
        self.assertEqual(len(lines), len(ours))
        for line, record, theirs in zip(lines, ours, nested):
            # The CSV has the columns every row carries; a simulator's row also its transfers_simulated (JSON's).
            if record["engine"] == "sim":
                self.assertEqual(record.pop("transfers_simulated"), theirs["transfers_simulated"])
            self.assertEqual(list(line), list(record))
            for key, value in record.items():
                if value is None:
                    self.assertEqual(line[key], "", key)
                elif isinstance(value, str):
                    self.assertEqual(line[key], value, key)
                else:
                    self.assertEqual(type(value)(line[key]), value, key)  # shortest text: the same double


if __name__ == "__main__":
    unittest.main()
