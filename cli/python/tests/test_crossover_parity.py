"""treering.crossover() against `treering crossover --format json`: the same records (both modes), and bad input.

Run with the package on the path: PYTHONPATH=build/python python3 -m unittest discover -s cli/python/tests
(ctest's python/api does this). The command's tests (cli/tests/test_cli_crossover.cpp) check the figures
themselves; here only that Python gives what the command prints.
"""

import json
import unittest

import treering
from test_api import command_output


class CrossoverParityTest(unittest.TestCase):
    def test_two_algorithms_as_the_readme_example(self):
        printed = command_output(self, ["crossover", "--cluster", "rtx4090-pcie", "--nodes", "1,2,4",
                                        "--algo", "tree,ring"], "json")
        records = treering.crossover("rtx4090-pcie", nodes=[1, 2, 4], algos=["tree", "ring"])
        self.assertEqual(json.loads(printed), records)
        self.assertEqual(len(records), 3 * 7)  # 1, 2, 4 nodes x 80k ... 5.12M (x2: seven lengths)
        self.assertEqual(records[0]["first"], "tree")

    def test_defaults_and_options_as_the_command(self):
        printed = command_output(self, ["crossover", "--cluster", "dgx-h100", "--nodes", "2", "--seq-len", "80k,1M",
                                        "--algo", "ring,allgather-merge", "--batch", "2",
                                        "--set", "nics.bandwidth=800Gb/s"], "json")
        records = treering.crossover("dgx-h100", seq_len="80k,1M", nodes=2, algos="ring,allgather-merge", batches=2,
                                     set={"nics.bandwidth": "800Gb/s"})
        self.assertEqual(json.loads(printed), records)

    def test_vs_tp(self):
        arguments = ["crossover", "--vs", "tp", "--cluster", "dgx-h100", "--nodes", "2", "--workload", "llama3.1-70b",
                     "--seq-len", "32k:256k:x2", "--batch", "1,4"]
        printed = command_output(self, arguments, "json")
        records = treering.crossover("dgx-h100", seq_len="32k:256k:x2", nodes=[2], workload="llama3.1-70b",
                                     batches=[1, 4], vs="tp")
        self.assertEqual(json.loads(printed), records)
        self.assertEqual(len(records), 4 * 2)  # 32k, 64k, 128k, 256k x batches 1, 4
        self.assertEqual({r["winner"] for r in records} - {"cp", "tp", "none"}, set())

    def test_vs_tp_with_combines(self):
        arguments = ["crossover", "--vs", "tp", "--cluster", "dgx-h100", "--nodes", "1", "--workload", "llama3.1-8b",
                     "--seq-len", "32k,128k", "--algo", "tree,ring"]
        records = treering.crossover("dgx-h100", seq_len="32k,128k", nodes=1, workload="llama3.1-8b",
                                     algos=["tree", "ring"], vs="tp")
        self.assertEqual(json.loads(command_output(self, arguments, "json")), records)


class CrossoverInputTest(unittest.TestCase):
    def test_bad_input_raises_input_error(self):
        cases = [
            dict(algos=["tree", "nope"]),  # an unknown algorithm
            dict(algos=["tree", "tree"]),  # not two different ones
            dict(algos=["tree"]),
            dict(batches=[1, 2]),  # several batches: --vs tp only
            dict(nodes=[0]),
            dict(nodes=[]),
            dict(engine="nope"),
            dict(vs="pp"),
            dict(vs="tp", engine="sim"),  # --vs tp runs the model only
            dict(jobs=0),
            dict(seq_len=[]),
        ]
        for case in cases:
            with self.subTest(**case), self.assertRaises(treering.InputError):
                treering.crossover("dgx-h100", **{"seq_len": "80k", "nodes": 1, **case})

    def test_unknown_algorithm_message_is_the_commands(self):
        with self.assertRaisesRegex(treering.InputError, "unknown algorithm 'nope'"):
            treering.crossover("dgx-h100", seq_len="80k", nodes=1, algos="tree,nope")

    def test_a_cluster_object_is_refused(self):
        with self.assertRaises(TypeError):
            treering.crossover(treering.load_cluster("dgx-h100"), seq_len="80k")


if __name__ == "__main__":
    unittest.main()
