"""The remote compile cache's hand-written protocol buffers against BuildGrid's own
generated Remote Execution API and ByteStream classes: every message the client writes
parses there with the fields it means, and every answer a server writes parses in the
client. A wrong field number on both sides (which a round trip through the client's own
code would pass) fails here.

    BUILDGRID_PYTHON tools/remote_cache_messages_test.py

Run by tools/remote_cache_test.sh with BuildGrid's virtualenv (tools/remote_cache.sh install).
"""
import hashlib
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import remote_compile_cache as client  # noqa: E402
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re  # noqa: E402
from buildgrid._protos.google.bytestream import bytestream_pb2 as bs  # noqa: E402


def sha(data):
    return hashlib.sha256(data).hexdigest()


class ClientWritesWhatTheApiMeans(unittest.TestCase):
    def test_the_action_and_its_command(self):
        command, action, (ad_hash, ad_size) = client.action_digest("ab12")
        c = re.Command.FromString(command)
        self.assertEqual(list(c.arguments), [client.FORMAT, "ab12"])
        a = re.Action.FromString(action)
        self.assertEqual((a.command_digest.hash, a.command_digest.size_bytes), (sha(command), len(command)))
        self.assertEqual((a.input_root_digest.hash, a.input_root_digest.size_bytes), (sha(b""), 0))
        self.assertEqual((ad_hash, ad_size), (sha(action), len(action)))

    def test_get_action_result_request(self):
        raw = client.message((1, "inst"), (2, client.digest_message(("aa" * 32, 7))))
        r = re.GetActionResultRequest.FromString(raw)
        self.assertEqual((r.instance_name, r.action_digest.hash, r.action_digest.size_bytes), ("inst", "aa" * 32, 7))

    def test_update_action_result_request_with_its_output_files(self):
        d = client.digest_of(b"{}")
        result = client.message((2, client.message((1, "result.json"), (2, client.digest_message(d)))), (4, 0))
        raw = client.message((1, "inst"), (2, client.digest_message(("bb" * 32, 9))), (3, result))
        r = re.UpdateActionResultRequest.FromString(raw)
        self.assertEqual(r.instance_name, "inst")
        self.assertEqual(r.action_digest.hash, "bb" * 32)
        self.assertEqual(len(r.action_result.output_files), 1)
        f = r.action_result.output_files[0]
        self.assertEqual((f.path, f.digest.hash, f.digest.size_bytes), ("result.json", d[0], d[1]))
        self.assertEqual(r.action_result.exit_code, 0)

    def test_find_missing_blobs_request(self):
        raw = client.message((1, "inst"), (2, client.digest_message(("cc" * 32, 3))),
                             (2, client.digest_message(("dd" * 32, 4))))
        r = re.FindMissingBlobsRequest.FromString(raw)
        self.assertEqual([(d.hash, d.size_bytes) for d in r.blob_digests], [("cc" * 32, 3), ("dd" * 32, 4)])

    def test_bytestream_read_and_write_requests(self):
        r = bs.ReadRequest.FromString(client.message((1, "inst/blobs/ee/5")))
        self.assertEqual((r.resource_name, r.read_offset, r.read_limit), ("inst/blobs/ee/5", 0, 0))
        w = bs.WriteRequest.FromString(client.message((1, "inst/uploads/u/blobs/ee/5"), (2, 3), (3, True), (10, b"xy")))
        self.assertEqual((w.resource_name, w.write_offset, w.finish_write, w.data),
                         ("inst/uploads/u/blobs/ee/5", 3, True, b"xy"))


class ClientReadsWhatAServerWrites(unittest.TestCase):
    def test_an_action_result(self):
        result = re.ActionResult(output_files=[
            re.OutputFile(path="result.json", digest=re.Digest(hash="ff" * 32, size_bytes=12)),
            re.OutputFile(path="archive.pt2", digest=re.Digest(hash="ee" * 32, size_bytes=3 << 20))])
        files = [client.parse(raw) for raw in client.parse(result.SerializeToString())[2]]
        self.assertEqual([(f[1][0].decode(), client.digest_from(f[2][0])) for f in files],
                         [("result.json", ("ff" * 32, 12)), ("archive.pt2", ("ee" * 32, 3 << 20))])

    def test_find_missing_blobs_response(self):
        answer = re.FindMissingBlobsResponse(missing_blob_digests=[re.Digest(hash="aa" * 32, size_bytes=1 << 40)])
        raw = client.parse(answer.SerializeToString())
        self.assertEqual({client.digest_from(d) for d in raw[2]}, {("aa" * 32, 1 << 40)})

    def test_a_read_response(self):
        self.assertEqual(client.parse(bs.ReadResponse(data=b"\x00\x01blob").SerializeToString())[10][0], b"\x00\x01blob")


if __name__ == "__main__":
    unittest.main()
