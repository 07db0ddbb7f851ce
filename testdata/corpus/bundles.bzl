"""The healthy corpus's bundles, read by its BUILD file and by //testdata:corpus_aoti_test."""

# Programs that prove the same kind of construct are compiled together, as one bundle
# (bundle.py: each program on its own inputs, every output judged), so that the corpus costs
# one AOTI compile per bundle rather than one per program. A program stays alone where a
# test reads its package by name, or where it has dynamic shapes or a custom op.
BUNDLES = {
    "bundle_pointwise": [
        "activations",
        "bool_logic",
        "elementwise_math",
        "where_masked_fill",
        "int_arith",
        "inplace_chain",
        "inplace_ops",
        "creation_dtypes",
        "dtype_args",
    ],
    "bundle_shapes": [
        "cat_split_chunk",
        "views",
        "pad_flip_roll",
        "index_ops",
        "embedding_gather",
        "multi_output",
        "sort_topk_cumsum",
        "reductions",
    ],
    "bundle_layers": [
        "attention_manual",
        "attention_sdpa",
        "conv1d_pool",
        "conv_transpose_upsample",
        "group_norm",
        "layer_norm",
        "matmul_family",
        "normalize_rms",
        "residual_block",
        "softmax_family",
    ],
    "bundle_control_flow": ["cond_branches", "map_scan", "nested_loop_cond", "loop_nonzero"],
    "bundle_state": ["buffer_mutation", "lifted_state"],
}

def bundled_programs():
    """The number of programs the bundles hold."""
    return len([name for members in BUNDLES.values() for name in members])
