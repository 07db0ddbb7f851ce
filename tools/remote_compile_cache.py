"""remote_compile_cache.py: the reducer's compile cache entries in a Remote Execution API
server (the action cache and the content-addressable store Bazel's --remote_cache uses).

    python remote_compile_cache.py get --url grpc://HOST:PORT --key KEY --out DIR
    python remote_compile_cache.py put --url grpc://HOST:PORT --key KEY --dir DIR
        [--instance NAME] [--timeout SECONDS]
        [--ca_cert PEM] [--client_cert PEM --client_key PEM] [--header_file FILE]

grpcs:// is TLS: the system's roots, or --ca_cert's; a client certificate where the server
asks for one. --header_file: "Name: value" lines (e.g. "Authorization: Bearer TOKEN"), sent
with every call, as Bazel's --remote_header (a file, so no secret is on a command line).
Files are streamed in 1 MiB chunks both ways, never held whole in memory.

An entry of the local cache (reducer/compile_cache.h: result.json, and archive.pt2 when
the compile left one) is one action result. Its action is
Action{command_digest: Command{arguments: ["aoti_harness.compile_cache/1", KEY]}} and its
output files are the entry's files, their contents in the CAS. `put` uploads the files
the server lacks (ByteStream Write), the Command and the Action, then the action result;
`get` reads the action result and each file (ByteStream Read) into DIR, checking each
file's SHA-256 against its digest: a blob the server garbled is a miss, never an entry.

Exit status: 0 a hit (get) or stored (put); 3 a miss (or, for get, an entry larger than
--max_bytes: nothing of it is fetched); 4 the server failed or did not
answer within the timeout; 5 it gave a blob that does not match its digest (nothing is
written); 2 wrong arguments. The last line on stderr says what happened.

Needs grpcio; the protocol buffers are written and read by hand (only the few fields
these messages use), so no generated code and no protobuf package. tools/remote_cache_messages_test.py
checks every message against BuildGrid's own generated Remote Execution API classes.
"""
import argparse
import hashlib
import os
import sys
import uuid

FORMAT = "aoti_harness.compile_cache/1"
FILES = ("result.json", "archive.pt2")
CHUNK = 1 << 20
# A blob's transfer gets the call's timeout plus this much time per byte (20 MiB/s), so
# that a large compiled archive is not taken for a hung server.
SECONDS_PER_BYTE = 1 / (20 << 20)
AC = "/build.bazel.remote.execution.v2.ActionCache/"
CAS = "/build.bazel.remote.execution.v2.ContentAddressableStorage/"
BYTESTREAM = "/google.bytestream.ByteStream/"

MISS, SERVER, CORRUPT, USAGE = 3, 4, 5, 2


# --- protocol buffer wire format: varints (type 0) and length-delimited fields (type 2) ---

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, value):
    """One field: an int as a varint, bytes or str length-delimited (a submessage is bytes)."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    return varint(number << 3 | 2) + varint(len(value)) + value


def message(*fields):
    return b"".join(field(n, v) for n, v in fields if v is not None)


def parse(data):
    """{field number: [values]}: ints for varints, bytes for length-delimited fields."""
    fields, i = {}, 0

    def read_varint():
        nonlocal i
        shift = result = 0
        while True:
            b = data[i]
            i += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    while i < len(data):
        key = read_varint()
        number, kind = key >> 3, key & 7
        if kind == 0:
            value = read_varint()
        elif kind == 2:
            n = read_varint()
            value, i = data[i:i + n], i + n
        elif kind == 1:
            value, i = data[i:i + 8], i + 8
        elif kind == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {kind} of field {number}")
        fields.setdefault(number, []).append(value)
    return fields


def digest_of(data):
    return hashlib.sha256(data).hexdigest(), len(data)


def digest_message(d):
    return message((1, d[0]), (2, d[1]))


def digest_from(raw):
    f = parse(raw)
    return f.get(1, [b""])[0].decode(), f.get(2, [0])[0]


def action_digest(key):
    command = message((1, FORMAT), (1, key))
    empty_root = digest_of(b"")
    action = message((1, digest_message(digest_of(command))), (2, digest_message(empty_root)))
    return command, action, digest_of(action)


# --- the calls ---

def read_headers(path):
    """[(name, value)] from a header file: "Name: value" per line; blank lines and # comments
    skipped. gRPC metadata names are lower case."""
    headers = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, sep, value = line.partition(":")
            if not sep or not name.strip():
                raise ValueError(f"{path}:{n}: expected 'Name: value'")
            headers.append((name.strip().lower(), value.strip()))
    return headers


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def file_digest(path):
    """(sha256 hex, size) of a file, read in chunks."""
    h, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


class Server:
    def __init__(self, url, instance, timeout, ca_cert=None, client_cert=None, client_key=None, header_file=None):
        import grpc  # here: a usage error needs no grpcio
        self.grpc, self.instance, self.timeout = grpc, instance, timeout
        self.metadata = read_headers(header_file) if header_file else []
        if url.startswith("grpcs://"):
            credentials = grpc.ssl_channel_credentials(
                root_certificates=read_file(ca_cert) if ca_cert else None,
                private_key=read_file(client_key) if client_key else None,
                certificate_chain=read_file(client_cert) if client_cert else None)
            self.channel = grpc.secure_channel(url[len("grpcs://"):], credentials)
        else:
            if ca_cert or client_cert:
                raise ValueError(f"{url}: certificates are given, so expected grpcs://HOST:PORT")
            self.channel = grpc.insecure_channel(url[len("grpc://"):] if url.startswith("grpc://") else url)

    def unary(self, method, request):
        call = self.channel.unary_unary(method, request_serializer=None, response_deserializer=None)
        return call(request, timeout=self.timeout, metadata=self.metadata)

    def read(self, d, path):
        """The blob `d` into the file `path`, streamed; True when its bytes match the digest
        (else the file is removed)."""
        name = f"{self.instance}/blobs/{d[0]}/{d[1]}".lstrip("/")
        call = self.channel.unary_stream(BYTESTREAM + "Read", request_serializer=None, response_deserializer=None)
        timeout = self.timeout + d[1] * SECONDS_PER_BYTE
        h, size = hashlib.sha256(), 0
        with open(path, "wb") as f:
            for response in call(message((1, name)), timeout=timeout, metadata=self.metadata):
                chunk = parse(response).get(10, [b""])[0]
                h.update(chunk)
                size += len(chunk)
                if size > d[1]:  # more than the digest says: never written past it
                    break
                f.write(chunk)
        if (h.hexdigest(), size) != tuple(d):
            os.remove(path)
            return False
        return True

    def write(self, d, data=None, path=None):
        """The blob `d` from bytes or from a file (streamed)."""
        name = f"{self.instance}/uploads/{uuid.uuid4()}/blobs/{d[0]}/{d[1]}".lstrip("/")

        def chunks():
            if data is not None:
                for offset in range(0, max(len(data), 1), CHUNK):
                    yield data[offset:offset + CHUNK]
                return
            with open(path, "rb") as f:
                yield from iter(lambda: f.read(CHUNK), b"")

        def requests():
            offset, first = 0, True
            pending = None
            for chunk in chunks():
                if pending is not None:
                    yield message((1, name if first else None), (2, offset), (3, False), (10, pending))
                    offset, first = offset + len(pending), False
                pending = chunk
            yield message((1, name if first else None), (2, offset), (3, True), (10, pending or b""))

        call = self.channel.stream_unary(BYTESTREAM + "Write", request_serializer=None, response_deserializer=None)
        call(requests(), timeout=self.timeout + d[1] * SECONDS_PER_BYTE, metadata=self.metadata)

    def missing(self, digests):
        request = message((1, self.instance), *[(2, digest_message(d)) for d in digests])
        answer = parse(self.unary(CAS + "FindMissingBlobs", request))
        return {digest_from(raw) for raw in answer.get(2, [])}


def get(server, key, out, max_bytes=None):
    """The entry `key` into `out`: 0, or MISS (also for an entry above max_bytes, said on
    stderr: nothing of it is fetched), or CORRUPT."""
    _, _, ad = action_digest(key)
    try:
        result = server.unary(AC + "GetActionResult", message((1, server.instance), (2, digest_message(ad))))
    except server.grpc.RpcError as e:
        if e.code() == server.grpc.StatusCode.NOT_FOUND:
            return MISS
        raise
    files = {}
    for raw in parse(result).get(2, []):
        f = parse(raw)
        path = f.get(1, [b""])[0].decode()
        if path not in FILES:
            return MISS  # not an entry of ours
        files[path] = digest_from(f.get(2, [b""])[0])
    if "result.json" not in files:
        return MISS
    total = sum(d[1] for d in files.values())
    if max_bytes is not None and total > max_bytes:
        print(f"get {key[:12]}: the entry is {total} bytes, above --max_bytes {max_bytes}; not fetched",
              file=sys.stderr)
        return MISS
    os.makedirs(out, exist_ok=True)
    for path, d in files.items():
        try:
            matches = server.read(d, os.path.join(out, path))
        except server.grpc.RpcError as e:
            if e.code() == server.grpc.StatusCode.NOT_FOUND:
                return MISS  # the store lost the blob: the entry is gone
            raise
        if not matches:
            print(f"get {key[:12]}: the server's {path} does not match its digest (a corrupt store); "
                  "not taken", file=sys.stderr)
            return CORRUPT
    return 0


def put(server, key, entry):
    if not os.path.exists(os.path.join(entry, "result.json")):
        print(f"put: {entry} has no result.json", file=sys.stderr)
        return USAGE
    command, action, ad = action_digest(key)
    blobs = {digest_of(command): (command, None), ad: (action, None)}
    outputs = []
    for path in FILES:
        full = os.path.join(entry, path)
        if not os.path.exists(full):
            continue
        d = file_digest(full)
        blobs[d] = (None, full)
        outputs.append((2, message((1, path), (2, digest_message(d)))))
    for d in server.missing(list(blobs)):
        data, full = blobs[d]
        server.write(d, data=data, path=full)
    result = message(*outputs, (4, 0))
    server.unary(AC + "UpdateActionResult",
                 message((1, server.instance), (2, digest_message(ad)), (3, result)))
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=["get", "put"])
    p.add_argument("--url", required=True, help="grpc://HOST:PORT or grpcs://HOST:PORT")
    p.add_argument("--instance", default="", help="the server's instance name")
    p.add_argument("--key", required=True, help="the compile cache key (hex)")
    p.add_argument("--out", help="get: the directory the entry's files go to")
    p.add_argument("--dir", help="put: the local entry's directory")
    p.add_argument("--timeout", type=float, default=10, help="seconds for each call")
    p.add_argument("--ca_cert", help="grpcs://: a PEM bundle of CAs to trust (default: the system's roots)")
    p.add_argument("--client_cert", help="grpcs://: this client's certificate (PEM)")
    p.add_argument("--client_key", help="grpcs://: its private key (PEM)")
    p.add_argument("--header_file", help="'Name: value' lines sent with every call")
    p.add_argument("--max_bytes", type=int, default=8 << 30,
                   help="get: the largest entry fetched, in bytes (default 8 GiB); a larger one is a miss, and no "
                        "blob is written past the size its digest gives")
    a = p.parse_args(argv)
    if bool(a.client_cert) != bool(a.client_key):
        p.error("--client_cert and --client_key go together")
    if a.command == "get" and not a.out or a.command == "put" and not a.dir:
        p.error("get needs --out DIR, put needs --dir DIR")
    if not all(c in "0123456789abcdef" for c in a.key) or not a.key:
        p.error(f"--key {a.key!r}: expected a hex digest")
    try:
        server = Server(a.url, a.instance, a.timeout, a.ca_cert, a.client_cert, a.client_key, a.header_file)
    except (OSError, ValueError) as e:
        print(f"{a.command} {a.key[:12]} at {a.url}: {type(e).__name__}: {e}", file=sys.stderr)
        return USAGE
    except ImportError:
        print("grpcio is not installed in this Python "
              f"({sys.executable}); bash tools/setup.sh installs it", file=sys.stderr)
        return SERVER
    try:
        return get(server, a.key, a.out, a.max_bytes) if a.command == "get" else put(server, a.key, a.dir)
    except server.grpc.RpcError as e:
        print(f"{a.command} {a.key[:12]} at {a.url}: {e.code().name}: {e.details()}", file=sys.stderr)
        return SERVER
    except (OSError, ValueError, IndexError) as e:
        print(f"{a.command} {a.key[:12]} at {a.url}: {type(e).__name__}: {e}", file=sys.stderr)
        return SERVER


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
