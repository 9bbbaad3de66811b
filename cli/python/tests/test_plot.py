"""treering.plot(): `treering plot` from Python, on a file a command wrote or on the records sweep() returns.

Run as test_api.py is (ctest's python/api): PYTHONPATH=build/python python3 -m unittest discover -s cli/python/tests
"""

import os
import pathlib
import re
import subprocess
import tempfile
import unittest

import treering
from test_api import command_binary


class PlotTest(unittest.TestCase):
    """plot() is `treering plot`: the same figure from a file or from records, the command's errors."""

    SWEEP = ["sweep", "--cluster", "dgx-h100", "--nodes", "2,4", "--tp", "8", "--cp", "2", "--scope", "step",
             "--workload", "llama3.1-8b", "--seq-len", "128k,256k,512k", "--algo", "tree,ring"]

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def run_command(self, arguments):
        binary = command_binary()
        if not binary.exists():
            self.skipTest(f"{binary} not built")
        subprocess.run([str(binary)] + arguments, check=True, capture_output=True)

    def test_the_commands_figure_from_its_file_and_from_records(self):
        # The command's sweep file and plot, against plot() on that file and on sweep()'s records of the same
        # layout: one figure, byte for byte (the records hold the numbers the file does).
        self.run_command(self.SWEEP + ["-o", self.path("sweep.csv")])
        self.run_command(["plot", self.path("sweep.csv"), "--x", "seq_len", "--y", "step_s", "--series", "algo,gpus",
                          "--log-x", "-o", self.path("command.svg")])
        kwargs = dict(x="seq_len", y="step_s", series=["algo", "gpus"], log_x=True)
        self.assertEqual(treering.plot(self.path("sweep.csv"), output=self.path("file.svg"), **kwargs), self.path("file.svg"))
        records = treering.sweep("dgx-h100", "128k,256k,512k", nodes=[2, 4], workloads="llama3.1-8b", algos="tree,ring",
                                 tp=8, cp=2, scope="step")
        treering.plot(records, output=self.path("records.svg"), **kwargs)
        def document(name):  # cairo numbers its surfaces per process: "surface1" in one, "surface48" in another
            return re.sub(rb"surface[0-9]+", b"surface", pathlib.Path(self.path(name)).read_bytes())
        command = document("command.svg")
        self.assertIn(b"<svg", command)
        self.assertEqual(document("file.svg"), command)
        self.assertEqual(document("records.svg"), command)

    def test_png_of_records(self):
        rows = [{"x": 1, "y": 10.0, "s": "a"}, {"x": 2, "y": 20.0, "s": "a"}, {"x": 2, "y": None, "s": "b"},
                {"x": 4, "y": 5.0, "s": "b"}]
        treering.plot(rows, "x", "y", self.path("fig.png"), series="s")
        png = pathlib.Path(self.path("fig.png")).read_bytes()
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual((int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")), (960, 600))

    def test_errors_are_the_commands(self):
        csv_path = self.path("rows.csv")
        pathlib.Path(csv_path).write_text("algo,seq_len,latency_s\ntree,80000,1e-4\n")
        with self.assertRaisesRegex(treering.InputError, r"rows.csv: error: no column 'step_s' \(columns: algo, seq_len, latency_s\)"):
            treering.plot(csv_path, "seq_len", "step_s", self.path("a.png"))
        with self.assertRaisesRegex(treering.InputError, r"column 'algo' is not numeric \(numeric columns: seq_len, latency_s\)"):
            treering.plot(csv_path, "algo", "latency_s", self.path("a.png"))
        with self.assertRaisesRegex(treering.InputError, r"name a .png or .svg file"):
            treering.plot(csv_path, "seq_len", "latency_s", self.path("a.jpg"))
        pathlib.Path(self.path("empty.json")).write_text("")
        with self.assertRaisesRegex(treering.InputError, r"empty.json: error: the file is empty"):
            treering.plot(self.path("empty.json"), "a", "b", self.path("a.png"))
        with self.assertRaisesRegex(treering.InputError, r"no records"):
            treering.plot([], "a", "b", self.path("a.png"))
        self.assertFalse(os.path.exists(self.path("a.png")))

    def test_the_output_is_never_the_input(self):
        csv_path = self.path("rows.csv")
        text = "algo,seq_len,latency_s\ntree,80000,1e-4\ntree,160000,2e-4\n"
        pathlib.Path(csv_path).write_text(text)
        os.symlink(csv_path, self.path("fig.svg"))  # the figure's name, the rows' file
        with self.assertRaisesRegex(treering.InputError, r"fig.svg: error: is also an input of this run"):
            treering.plot(csv_path, "seq_len", "latency_s", self.path("fig.svg"))
        self.assertEqual(pathlib.Path(csv_path).read_text(), text)
        treering.plot(csv_path, "seq_len", "latency_s", self.path("other.svg"))  # and a later call may write elsewhere
        self.assertTrue(pathlib.Path(self.path("other.svg")).read_text().startswith("<?xml"))


if __name__ == "__main__":
    unittest.main()
