"""The harness' raw tensor format (harness/archive/tensor_io.h) and the records of a package's
tensors.
"""



from aoti_aten_fallbacks import ContractError


def tensor_record(t, name, file_name):
    return {
        "name": name,
        "dtype": str(t.dtype).replace("torch.", ""),
        "sizes": list(t.shape),
        "strides": list(t.stride()),
        "device": str(t.device),
        "file": file_name,
    }


def raw_bytes(t):
    """The harness' raw tensor format (harness/archive/tensor_io.h): the values in row-major order;
    tensor_record() keeps the strides to rebuild the layout."""
    import torch

    # A fresh dense copy: .contiguous() alone keeps odd strides on size-1 dims (a [1, 1]
    # tensor with strides [2, 2] is "contiguous"), which the byte view refuses.
    t = t.detach().to("cpu")
    flat = torch.empty(t.numel(), dtype=t.dtype).copy_(t.reshape(-1))
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def read_raw_tensor(rec, data):
    """The inverse of raw_bytes + tensor_record, as ReadRawTensor in harness/archive/tensor_io.cc:
    the recorded strides come back, and a broadcast layout (stride 0, from expand) is
    rebuilt over one copy of each repeated value."""
    import torch

    dtype = getattr(torch, rec["dtype"], None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"tensor {rec.get('name', '')!r}: unknown dtype {rec['dtype']!r}")
    sizes, strides = list(rec["sizes"]), list(rec.get("strides") or [])
    numel = 1
    for s in sizes:
        numel *= s
    expected = numel * torch.empty((), dtype=dtype).element_size()
    if len(data) != expected:
        raise ValueError(f"tensor {rec.get('name', '')!r}: holds {len(data)} bytes, expected {expected} "
                         f"for {rec['dtype']}{sizes}")
    flat = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
    t = flat.view(dtype).reshape(sizes) if data else torch.empty(sizes, dtype=dtype)
    if not strides or list(t.stride()) == strides:
        return t.clone()
    stored_sizes, source = list(sizes), t
    for d, (size, stride) in enumerate(zip(sizes, strides)):
        if stride == 0 and size > 1:
            stored_sizes[d] = 1
            source = source.narrow(d, 0, 1)
    try:
        out = torch.empty_strided(stored_sizes, strides, dtype=dtype)
        out.copy_(source)
    except RuntimeError:
        return t.clone()  # some other overlapping layout: the values, laid out contiguously
    return out.as_strided(sizes, strides)


def tensor_records(ep, flat_in, flat_out, flat_out64, source):
    """The raw tensors and their manifest records: the flat inputs, eager's and float64's outputs."""
    import torch

    sig = ep.graph_signature
    in_names = [s.arg.name for s in sig.input_specs if s.kind.name == "USER_INPUT"]
    out_names = [getattr(s.arg, "name", "") for s in sig.output_specs if s.kind.name == "USER_OUTPUT"]
    tensors, records = [], {"inputs": [], "eager": [], "eager_fp64": []}
    for i, t in enumerate(flat_in):
        if not isinstance(t, torch.Tensor):
            raise ContractError(f"{source}: input {i} is a {type(t).__name__}; only tensor inputs are supported")
        fname = f"tensors/input_{i}.bin"
        records["inputs"].append(tensor_record(t, in_names[i] if i < len(in_names) else f"input_{i}", fname))
        tensors.append((fname, raw_bytes(t)))
    for group, flat in (("eager", flat_out), ("eager_fp64", flat_out64 or [])):
        for i, t in enumerate(flat):
            if not isinstance(t, torch.Tensor):
                continue
            fname = f"tensors/{group}_{i}.bin"
            records[group].append(tensor_record(t, out_names[i] if i < len(out_names) else f"output_{i}", fname))
            tensors.append((fname, raw_bytes(t)))
    return tensors, records


def shape_input_records(ep, points, source, tensors):
    """The model file's inputs per shape point ({name: (args, kwargs)}) as manifest records
    ({name: [record]}), their raw bytes appended to `tensors`. Each point's inputs run through
    the exported program first: inputs outside its ranges, or that eager refuses, are the
    model file's error, named here, not a test's failure later."""
    import copy

    import torch

    from .model_file import flat_inputs

    n_user = sum(1 for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT")
    in_names = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    out = {}
    for name, (args, kwargs) in points.items():
        what = f"{source}: shape_inputs()[{name!r}]"
        flat = flat_inputs(ep, args, kwargs)
        if len(flat) != n_user:
            raise ContractError(f"{what} gives {len(flat)} inputs; the program takes {n_user}")
        for i, t in enumerate(flat):
            if not isinstance(t, torch.Tensor):
                raise ContractError(f"{what}: input {i} is a {type(t).__name__}; only tensor inputs are supported")
        try:
            with torch.no_grad():
                ep.module()(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        except Exception as e:
            raise ContractError(f"{what}: the exported program refuses these inputs ({type(e).__name__}: "
                                f"{str(e).strip()[:400]}); give inputs within dynamic_shapes()'s ranges that "
                                "the model runs") from e
        out[name] = []
        for i, t in enumerate(flat):
            fname = f"tensors/shape_{name}_input_{i}.bin"
            out[name].append(tensor_record(t, in_names[i] if i < len(in_names) else f"input_{i}", fname))
            tensors.append((fname, raw_bytes(t)))
    return out
