"""The libraries' enums in Python (treering.Algorithm, Engine, Scope, Placement, Op): one member per name the
command takes, str() the name, and every call answering a member as it answers its name."""

import unittest

import treering


class EnumTest(unittest.TestCase):
    def test_members_are_the_commands_names(self):
        self.assertEqual([str(a) for a in treering.Algorithm.__members__.values()], treering.algorithms())
        self.assertEqual(str(treering.Algorithm.tree_fused), "tree-fused")  # a Python name cannot hold '-'
        self.assertEqual([str(e) for e in treering.Engine.__members__.values()], ["model", "sim"])
        self.assertEqual([str(s) for s in treering.Scope.__members__.values()], ["attention", "layer", "step"])
        self.assertEqual([str(p) for p in treering.Placement.__members__.values()], ["tp-inner", "cp-inner"])
        self.assertIn("allreduce", [str(o) for o in treering.Op.__members__.values()])

    def test_a_member_answers_as_its_name(self):
        c = treering.load_cluster("dgx-h100", nodes=2)
        by_member = treering.predict(c, "128k", workload="llama3.1-8b", tp=8, algos=[treering.Algorithm.tree_fused],
                                     scope=treering.Scope.layer, placement=treering.Placement.cp_inner)
        by_name = treering.predict(c, "128k", workload="llama3.1-8b", tp=8, algos=["tree-fused"], scope="layer",
                                   placement="cp-inner")
        self.assertEqual(by_member, by_name)
        self.assertEqual(treering.sweep("dgx-h100", "80k", algos=treering.Algorithm.ring, engines=treering.Engine.sim),
                         treering.sweep("dgx-h100", "80k", algos="ring", engines="sim"))
        self.assertEqual(treering.collective(c, op=treering.Op.allgather, bytes=4096),
                         treering.collective(c, op="allgather", bytes=4096))


if __name__ == "__main__":
    unittest.main()
