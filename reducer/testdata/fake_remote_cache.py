"""A Remote Execution API cache in memory, for compile_cache_test: the action cache and
the content-addressable store as tools/remote_compile_cache.py calls them (GetActionResult,
UpdateActionResult, FindMissingBlobs, ByteStream Read and Write).

    python fake_remote_cache.py CLIENT_DIR PORT_FILE [--garble] [--require_header NAME:VALUE]

Writes the port it listens on to PORT_FILE and serves until killed. --garble flips a byte
of every blob it reads back (a server or a disk that corrupts what it stores).
--require_header refuses (UNAUTHENTICATED) every call without that header, as a server
behind a bearer token does."""
import os
import sys
import time
from concurrent import futures

import grpc

sys.path.insert(0, sys.argv[1])
from remote_compile_cache import digest_from, message, parse  # noqa: E402

garble = "--garble" in sys.argv
required = None
if "--require_header" in sys.argv:
    name, _, value = sys.argv[sys.argv.index("--require_header") + 1].partition(":")
    required = (name.strip().lower(), value.strip())
action_cache, blobs = {}, {}


def get_action_result(request, context):
    hash_ = digest_from(parse(request)[2][0])[0]
    if hash_ not in action_cache:
        context.abort(grpc.StatusCode.NOT_FOUND, "no such action")
    return action_cache[hash_]


def update_action_result(request, context):
    f = parse(request)
    action_cache[digest_from(f[2][0])[0]] = f[3][0]
    return f[3][0]


def find_missing_blobs(request, context):
    missing = [d for d in parse(request).get(2, []) if digest_from(d)[0] not in blobs]
    return message(*[(2, d) for d in missing])


def read(request, context):
    hash_ = parse(request)[1][0].decode().split("/")[-2]
    if hash_ not in blobs:
        context.abort(grpc.StatusCode.NOT_FOUND, "no such blob")
    data = blobs[hash_]
    if garble and data:
        data = bytes([data[0] ^ 1]) + data[1:]
    yield message((10, data))


def write(requests, context):
    name, data = None, b""
    for r in requests:
        f = parse(r)
        name = name or f.get(1, [b""])[0].decode()
        data += f.get(10, [b""])[0]
    blobs[name.split("/")[-2]] = data
    return message((1, len(data)))


def handler(kind, fn):
    make = {"unary": grpc.unary_unary_rpc_method_handler, "stream_out": grpc.unary_stream_rpc_method_handler,
            "stream_in": grpc.stream_unary_rpc_method_handler}[kind]

    def checked(request, context):
        if required and required not in context.invocation_metadata():
            context.abort(grpc.StatusCode.UNAUTHENTICATED, f"no {required[0]} header, or not the right one")
        return fn(request, context)

    return make(checked, request_deserializer=None, response_serializer=None)


server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
server.add_generic_rpc_handlers([
    grpc.method_handlers_generic_handler("build.bazel.remote.execution.v2.ActionCache", {
        "GetActionResult": handler("unary", get_action_result),
        "UpdateActionResult": handler("unary", update_action_result)}),
    grpc.method_handlers_generic_handler("build.bazel.remote.execution.v2.ContentAddressableStorage", {
        "FindMissingBlobs": handler("unary", find_missing_blobs)}),
    grpc.method_handlers_generic_handler("google.bytestream.ByteStream", {
        "Read": handler("stream_out", read), "Write": handler("stream_in", write)}),
])
port = server.add_insecure_port("127.0.0.1:0")
server.start()
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(port))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
while True:
    time.sleep(3600)
