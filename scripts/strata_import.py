#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""strata import: a float or QDQ ONNX model -> a Strata network (YAML + int8 .npy parameters).

Run by `strata import MODEL.onnx --calibration X.npy --out DIR` with the project
venv's python (.venv/bin/python: onnx, onnxruntime, numpy; `make setup`).

Post-training quantisation to the numerics contract (docs/numerics.md):
  - weights: per output channel symmetric int8, s_w[c] = max|w[c]| / 127;
  - activations: one symmetric scale per tensor, s = max|x| / 127 over the
    calibration images run through the float model with onnxruntime (the
    network input's scale from the calibration data), zero point 0;
  - bias: int32 round(b / (s_in * s_w[c]));
  - requantisation: M[c] (uint16), S[c] (0..47) with M / 2^S ~ s_in * s_w[c] / s_out,
    the largest S whose M fits 16 bits (as sw/src/gen.cpp's calibrate_channel);
  - add (y = clamp(rshift_round(a * Ma + b * Mb, S), lo, hi)): in the form the compiler
    maps onto the PE array, a per-channel two-tap weighted sum (int8 weights wa, wb, then
    the requantiser's M, S): Ma = wa * M, Mb = wb * M with 0 <= wa, wb <= 127. With
    ra = s_a / s_out, rb = s_b / s_out, r = max(ra, rb): the larger operand's weight is
    127, the other's round(127 * min(ra, rb) / r); M / 2^S ~ r / 127 with the largest S
    (<= 47) for which Ma and Mb still fit uint16, i.e. M <= 516. (Any Ma, Mb pair is valid
    numerics for the golden model; only this form runs on the PE array.)
  - activations: ReLU -> [0, 127]; Clip(lo, hi) -> [round(lo / s), round(hi / s)]
    within [-128, 127]; a chain of them (PyTorch's ReLU6 is Relu then Clip(0, 6)) is the
    intersection of their ranges; fused into the conv / fc / add before it when each is
    the only consumer of the one before, else clamp layers.

Graph forms mapped exactly: a ReduceMean over H and W is a global_avgpool (keepdims 0: the
[N, C] a flatten of it would be); a standalone Pad (constant 0, H and W only) folds into the one
Conv reading it as extra padding, or into a MaxPool when its input is >= 0 (a Relu's or a Clip's
with a minimum >= 0; anything else before a pool would not be exact: refused); an edge Pad
(mode 'edge') folds into the one MaxPool reading it (the copies never exceed a window's
maximum); a final Softmax
over the channels is dropped (the logits have the same class; the import prints a note);
dilations must be all ones. Concat (channels) -> concat, Split and Slice (channels, step 1) ->
slice, nearest Resize / Upsample by an integer factor selecting pixel (y / s, x / s) -> upsample;
static shapes (Shape of a tensor whose shape inference knows it, nodes of constants only) are
folded into constants, in rounds with shape inference between them (Graph.fold_constants); a
standalone BatchNormalization folds into the unpadded Conv after it, else is a 1x1 depthwise
layer; a chain of Reshape / Transpose that permutes the channels of a map (a channel shuffle)
is a selection of channels, folded into the convolutions that read it (Converter.rearrange);
a convolution kernel above --max-kernel at stride >= 2 becomes a space-to-depth layer and a
smaller kernel (Converter.space_to_depth), the same sums bit for bit.
A concat's inputs and output share one scale: the tensors joined through Concats and the
operators that keep their input's scale form groups, each with one scale (the largest calibrated
one; a QDQ model's QuantizeLinear scales, which must agree), that the layers producing them
requantise to (Converter.share_scales; docs/cli.md, "Concat scales").

A QDQ model (any QuantizeLinear / DequantizeLinear node, as onnxruntime's quantize_static
writes it) already carries its quantisation; with every zero point 0 and int8 values it maps
directly: the int8 weights as they are (per-channel scales along the output channels, or one
per tensor), the int32 biases as they are when their scale is s_in * s_w[c] (else
round(b / (s_in * s_w[c]))), a layer's output scale the scale of the QuantizeLinear after it (or
after its fused Relu / Clip chain), the input's the first QuantizeLinear's; M, S and an add's
Ma, Mb as above. The calibration images then only feed the agreement report, against
onnxruntime running the QDQ model. A nonzero zero point, uint8, a per-channel activation scale,
an unfolded BatchNormalization or a Q/DQ node anywhere else is an error naming the node.

Checks before writing: every float constant a node reads is finite (a Clip's -inf minimum
or +inf maximum means no bound), and so are the calibration images; the network satisfies
the limits sw/src/network.cpp's reader enforces (docs/network-format.md: kernel 1..11,
stride 1..8, pads below the kernel, fc weights [Cout][C*H*W] for a flat input, output
channels, tensor sizes, the int32 accumulator range, every layer read), each failure naming
the ONNX node, so that even with --no-check nothing is written that `strata info` refuses.

Writes DIR/<name>.yaml, DIR/<name>/*.npy (the file names docs/network-format.md
expects) and DIR/calibration_input.npy (the int8 calibration images), all or nothing:
they are built in a staging directory DIR/.<name>.import-* , where the agreement check
also runs (the float model and the golden model, `strata run`, on the calibration set,
writing calibration_output.npy; skipped with --no-check), and only when everything
succeeded are they renamed into place, replacing an earlier import's files (its <name>/
as a whole; its calibration_output.npy is dropped with --no-check). A golden run that
fails is an error like any other: the stage, and any directory created for --out, are
removed, and an earlier import in DIR stays as it was. Every error is one line
"strata: error: ...", exit 1.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

from hw_constants import MAX_SHIFT, MULT_MAX

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
    import onnxruntime as ort
except ImportError as e:  # the one message a user without the venv sees
    print(f"strata: error: strata import needs the Python packages numpy, onnx and onnxruntime "
          f"in the project venv ({e.name or e} is missing): run make setup", file=sys.stderr)
    sys.exit(1)

# Elementwise operators that make up a table activation (docs/cli.md, "Table
# activations"): a connected group of them reading one tensor and constants is one
# function of that tensor, evaluated on the 256 int8 codes into a lookup table.
TABLE_OPS = {"Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu", "Gelu", "Erf",
             "Softplus", "Mul", "Div", "Sub", "Add", "Relu", "Clip"}
SUPPORTED_OPS = {"Conv", "Gemm", "MatMul", "Relu", "Clip", "MaxPool", "AveragePool",
                 "GlobalAveragePool", "ReduceMean", "Pad", "Add", "Flatten", "Reshape",
                 "BatchNormalization", "Identity", "Dropout", "Concat", "Split", "Slice",
                 "Resize", "Upsample", "Transpose"} | TABLE_OPS
ACT_TABLE_SIZE = 256
QDQ_OPS = {"QuantizeLinear", "DequantizeLinear"}
RANGE_KEEPING_OPS = {"MaxPool", "Flatten", "Reshape", "Identity", "Dropout"}
# Operators whose output has their (first) input's int8 scale: what the Converter emits for
# them keeps the scale (pools, flatten, clamp layers) or is no layer at all. A concat stacks
# raw int8 codes, so its inputs and output, joined through these, share one scale
# (Converter.share_scales).
SCALE_KEEPING_OPS = {"MaxPool", "AveragePool", "GlobalAveragePool", "ReduceMean", "Flatten",
                     "Reshape", "Identity", "Dropout", "Pad", "Concat", "Split", "Slice",
                     "Resize", "Upsample", "Transpose"}
MAX_CONCAT_INPUTS = 64
MAX_FOLD_ELEMENTS = 4096  # largest tensor the static-shape folding reads or writes
MAX_UPSAMPLE = 8
MAX_MULT = MULT_MAX
# The network format's limits, as sw/src/network.cpp's reader checks them
# (docs/network-format.md, "Limits checked by the reader").
MAX_KERNEL = 11
MAX_STRIDE = 8
MAX_DIM = 65535             # C, H, W of the input; out_channels, out_features
MAX_ELEMENTS = 1 << 28      # of any activation or weight tensor
MAX_OUTPUTS = 16            # network outputs (docs/network-format.md, "Outputs")
WEIGHT_MAX = 127   # an add's per-operand weight on the PE array (int8, non-negative)


class ImportFailure(Exception):
    """An error in the model or the data: printed as one line, exit status 1."""


def fail(msg):
    raise ImportFailure(msg)


def node_label(node):
    return f"node '{node.name or node.output[0]}' ({node.op_type})"


def unsupported(node):
    op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
    fail(f"{node_label(node)}: unsupported operator {op} (docs/cli.md, strata import, lists "
         "the supported operators)")


# ---- ONNX model access -------------------------------------------------------

class Graph:
    def __init__(self, model):
        g = model.graph
        self.model = model
        self.inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
        self.origin = {t: f"initializer '{t}'" for t in self.inits}  # for messages
        self.nodes = []
        for n in g.node:
            if n.op_type == "Constant":  # constants are parameters, like initializers
                val = next((a for a in n.attribute if a.name == "value"), None)
                if val is None:
                    fail(f"{node_label(n)}: only 'value' constants are supported")
                self.inits[n.output[0]] = numpy_helper.to_array(val.t)
                self.origin[n.output[0]] = f"constant '{n.output[0]}'"
                continue
            if n.op_type == "Identity" and n.input[0] in self.inits:
                # torch.onnx.export shares equal initializers through Identity nodes.
                self.inits[n.output[0]] = self.inits[n.input[0]]
                self.origin[n.output[0]] = self.origin[n.input[0]]
                continue
            self.nodes.append(n)
        self.outputs = [o.name for o in g.output]
        self.qdq = any(n.op_type in QDQ_OPS for n in self.nodes)
        self.qscale = {}    # QDQ: float tensor -> the scale of the QuantizeLinear quantising it
        self.qinit = {}     # QDQ: dequantised constant -> (int values, scale, axis, DQ node)
        if self.qdq:
            self.strip_qdq()
        self.fold_constants()
        self.consumers = {}
        for n in self.nodes:
            for i in n.input:
                if i:
                    self.consumers.setdefault(i, []).append(n)
        inputs = [i for i in g.input if i.name not in self.inits]
        if len(inputs) != 1:
            fail(f"the model has {len(inputs)} graph inputs ({', '.join(i.name for i in inputs)}); "
                 "strata import takes exactly one")
        if not 1 <= len(self.outputs) <= MAX_OUTPUTS:
            fail(f"the model has {len(self.outputs)} graph outputs"
                 f"{' (' + ', '.join(self.outputs) + ')' if self.outputs else ''}; strata import "
                 f"takes 1 to {MAX_OUTPUTS} (each becomes a network output, in the graph's order)")
        if len(set(self.outputs)) != len(self.outputs):
            fail(f"the graph lists output '{next(o for o in self.outputs if self.outputs.count(o) > 1)}' "
                 "twice")
        self.input = inputs[0]
        t = self.input.type.tensor_type
        if t.elem_type != onnx.TensorProto.FLOAT:
            fail(f"graph input '{self.input.name}' is not float32")
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        if len(dims) != 4:
            fail(f"graph input '{self.input.name}' has {len(dims)} dimensions; "
                 "expected [N, C, H, W]")
        shown = [d.dim_value if d.HasField("dim_value") else d.dim_param for d in t.shape.dim]
        if any(d is not None and d <= 0 for d in dims[1:]):
            what = "a zero" if 0 in dims[1:] else "a negative"
            fail(f"graph input '{self.input.name}' has {what} dimension: shape {shown} (C, H "
                 "and W must each be at least 1)")
        if any(d is None for d in dims[1:]):
            fail(f"graph input '{self.input.name}' has a dynamic or unknown shape {shown}; "
                 "C, H and W must be fixed (only the batch may be symbolic)")
        if any(d > MAX_DIM for d in dims[1:]) or math.prod(dims[1:]) > MAX_ELEMENTS:
            fail(f"graph input '{self.input.name}' of shape {shown} exceeds the network "
                 f"format's limits (C, H, W each at most {MAX_DIM}, C * H * W at most "
                 f"{MAX_ELEMENTS}; docs/network-format.md)")
        if self.qdq and self.input.name not in self.qscale:
            # quantize_static may leave a max pool or a reshape before the first QuantizeLinear
            # in float; both commute with quantisation (a clamp is monotone), so the input
            # takes that Q's scale. An average would clip the input at its output's range.
            t = self.input.name
            while t not in self.qscale:
                c = self.consumers.get(t, [])
                if len(c) == 1 and c[0].op_type not in RANGE_KEEPING_OPS:
                    fail(f"{node_label(c[0])}: reads the graph input '{self.input.name}' in "
                         "float, before any QuantizeLinear (only max pools, reshapes and "
                         "flattens may; quantise the input first)")
                if len(c) != 1 or t in self.outputs:
                    fail(f"graph input '{self.input.name}' is not quantised: a QDQ model "
                         "quantises its input with a QuantizeLinear")
                t = c[0].output[0]
            self.qscale[self.input.name] = self.qscale[t]
        self.batch_fixed = dims[0] if dims[0] else None
        self.chw = tuple(dims[1:])
        self.notes = []     # printed after the import's summary
        self.drop_final_softmax()
        for n in self.nodes:  # a Reshape's target must be known before anything else is said
            if n.op_type == "Reshape" and (len(n.input) < 2 or n.input[1] not in self.inits):
                prod = next((m for m in self.nodes if n.input[1] in m.output), None)
                how = f", computed by {node_label(prod)} from tensor values" if prod else ""
                fail(f"{node_label(n)}: its target shape '{n.input[1]}' stays unknown at import "
                     f"time{how} (only constants and shapes known statically are folded; "
                     "docs/cli.md, Static shapes)")
        for n in self.nodes:  # before the float run: name the first node we cannot convert
            if n.op_type not in SUPPORTED_OPS or n.domain not in ("", "ai.onnx"):
                unsupported(n)
        self.check_concat_shapes()
        self.check_batchnorm_shapes()
        self.check_finite()

    def check_concat_shapes(self):
        """A Concat of maps of different sizes (which onnxruntime would refuse with a less
        direct message), from the model's shape inference: refused naming the node."""
        for n in self.nodes:
            if n.op_type != "Concat":
                continue
            ins = [i for i in n.input if i and i not in self.inits]
            shapes = [self.shape_of(i) for i in ins]
            if any(s is None or len(s) != 4 for s in shapes):
                continue
            hw = [tuple(s[2:]) for s in shapes]
            bad = next((k for k in range(1, len(hw)) if hw[k] != hw[0] and
                        all(isinstance(d, int) and d > 0 for d in hw[k] + hw[0])), None)
            if bad is not None:
                fail(f"{node_label(n)}: concatenates '{ins[0]}' of shape {shapes[0][1:]} and "
                     f"'{ins[bad]}' of shape {shapes[bad][1:]} per image: a concat needs one "
                     "H x W")

    def check_batchnorm_shapes(self):
        """A BatchNormalization whose parameters do not hold one value per channel of its input
        (which onnxruntime would refuse with a less direct message): refused naming the node."""
        for n in self.nodes:
            if n.op_type != "BatchNormalization":
                continue
            shape = self.shape_of(n.input[0])
            c = shape[1] if shape is not None and len(shape) > 1 else None
            for t in n.input[1:5]:
                v = self.inits.get(t)
                if isinstance(c, int) and c > 0 and v is not None and v.size != c:
                    fail(f"{node_label(n)}: its parameter '{t}' holds {v.size} values for the "
                         f"{c} channels of '{n.input[0]}' (one per channel)")

    def fold_constants(self):
        """Static shapes become constants (docs/cli.md, "Static shapes"): a Shape of a tensor
        whose shape onnx's shape inference knows, and any node of constants only (Gather,
        Unsqueeze, Concat, Cast, Div, ConstantOfShape ...; torch.chunk exports its slice bounds
        as Shape -> Gather -> Add -> Div -> Mul, ShuffleNet its channel shuffle's targets as
        Shape -> Gather -> Unsqueeze -> Concat) are evaluated here (onnx.reference) and their
        outputs become initializers; shape inference runs again after each round, so a
        Reshape whose target was folded has a shape for the Shape after it. A symbolic batch
        is taken as 1, and the folding is repeated with a batch of 2: a value that differs
        depends on the batch and may only be a Reshape's target (whose leading dimension is
        then the batch; the converter checks the result against onnxruntime's shapes)."""
        try:
            from onnx.reference import ReferenceEvaluator
        except ImportError:   # onnx before 1.13: nothing is folded
            return
        opset = next((o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx")),
                     13)
        batch = self.input_batch()
        self.folded_by = {}     # folded tensor -> the operator that computed it (messages)
        one = self.fold_pass(ReferenceEvaluator, opset, batch or 1)
        two = one if batch else self.fold_pass(ReferenceEvaluator, opset, 2)
        self.batch_dependent = set()
        for t, v in one.items():
            w = two.get(t)
            if w is None or w.shape != v.shape or not np.array_equal(w, v):
                self.batch_dependent.add(t)
            self.inits[t] = v
            self.origin[t] = f"constant '{t}' (folded {self.folded_by[t]})"
        self.nodes = [n for n in self.nodes if not all(o in one for o in n.output if o)]
        for n in self.nodes:
            for k, t in enumerate(n.input):
                if t in self.batch_dependent and not (n.op_type == "Reshape" and k == 1):
                    fail(f"{node_label(n)}: its input '{t}' is computed from the batch size "
                         "(only a Reshape's target may be: the batch stays the leading "
                         "dimension)")

    def input_batch(self):
        """The graph input's batch dimension when it is fixed, else None."""
        inputs = [i for i in self.model.graph.input if i.name not in self.inits]
        if len(inputs) != 1:
            return None
        dims = inputs[0].type.tensor_type.shape.dim
        return dims[0].dim_value if dims and dims[0].HasField("dim_value") else None

    def fold_pass(self, evaluator, opset, batch):
        """The folded values {tensor: array} for a graph input of batch `batch`: rounds of onnx
        shape inference (on a skeleton of the graph: large initializers stand as typed graph
        inputs) and evaluation, until a round folds nothing."""
        values = {}
        big = {t for t, v in self.inits.items() if v.size > MAX_FOLD_ELEMENTS}

        def known(t):
            return t in values or t in self.inits and t not in big
        while True:
            left = [n for n in self.nodes if not all(o in values for o in n.output if o)]
            shapes = self.skeleton_shapes(left, values, big, batch)
            progress = False
            for n in left:
                ins = [i for i in n.input if i]
                value = None
                if n.domain not in ("", "ai.onnx") or n.op_type in QDQ_OPS or \
                        len(n.output) != 1:
                    continue
                if n.op_type == "Shape" and ins:
                    shape = shapes.get(ins[0])
                    if shape is not None and all(isinstance(d, int) and d > 0 for d in shape):
                        a = attrs(n)
                        value = np.asarray(shape, np.int64)[a.get("start", 0):
                                                            a.get("end", len(shape))]
                elif n.op_type == "Size" and ins:
                    shape = shapes.get(ins[0])
                    if shape is not None and all(isinstance(d, int) and d > 0 for d in shape):
                        value = np.asarray(math.prod(shape), np.int64)
                elif all(known(i) for i in ins) and n.op_type not in ("Constant", "Identity") \
                        and (ins or n.op_type in ("ConstantOfShape", "Range", "EyeLike")):
                    feeds = {i: values[i] if i in values else self.inits[i] for i in ins}
                    try:
                        value = evaluator(n, opsets={"": opset}).run(None, feeds)[0]
                    except Exception:
                        value = None
                    if value is not None and np.asarray(value).size > MAX_FOLD_ELEMENTS:
                        value = None
                if value is not None:
                    values[n.output[0]] = np.asarray(value)
                    self.folded_by[n.output[0]] = n.op_type
                    progress = True
            if not progress:
                return values

    def skeleton_shapes(self, nodes, values, big, batch):
        """{tensor: [dims]} from onnx shape inference of `nodes` with the graph input's batch
        set to `batch`, the folded `values` and the small initializers as initializers and the
        large ones as typed inputs (their values are not needed for shapes)."""
        g = self.model.graph
        inputs = []
        for i in g.input:
            if i.name in self.inits:
                continue
            v = onnx.ValueInfoProto()
            v.CopyFrom(i)
            dims = v.type.tensor_type.shape.dim
            if dims and not dims[0].HasField("dim_value"):
                dims[0].dim_value = batch
            inputs.append(v)
        used = {i for n in nodes for i in n.input if i}
        inits = []
        for t in sorted(used):
            if t in values:
                inits.append(numpy_helper.from_array(values[t], t))
            elif t in big:
                inputs.append(helper.make_tensor_value_info(
                    t, helper.np_dtype_to_tensor_dtype(self.inits[t].dtype),
                    list(self.inits[t].shape)))
            elif t in self.inits:
                inits.append(numpy_helper.from_array(np.asarray(self.inits[t]), t))
        sk = helper.make_graph(nodes, "skeleton", inputs, [], initializer=inits)
        m = helper.make_model(sk, opset_imports=list(self.model.opset_import))
        m.ir_version = self.model.ir_version
        try:
            inferred = onnx.shape_inference.infer_shapes(m)
        except Exception:
            return {}
        shapes = {}
        for v in list(inferred.graph.value_info) + list(inferred.graph.input):
            t = v.type.tensor_type
            if t.HasField("shape"):
                shapes[v.name] = [d.dim_value if d.HasField("dim_value") else None
                                  for d in t.shape.dim]
        return shapes

    def drop_final_softmax(self):
        """A Softmax over the channels that computes the graph output is dropped: the network
        outputs its input, the logits (a monotone map per image: the class, the top-1, is the
        same). A Softmax anywhere else stays, and is refused as an unsupported operator."""
        n = next((m for m in self.nodes if m.op_type == "Softmax" and
                  m.domain in ("", "ai.onnx") and m.output[0] in self.outputs), None)
        if n is None:
            return
        check_attrs(n, {"axis"})
        x = n.input[0]
        shape = self.shape_of(x)
        opset = next((o.version for o in self.model.opset_import if o.domain in ("", "ai.onnx")),
                     13)
        axis = attrs(n).get("axis", -1 if opset >= 13 else 1)
        if shape is None:
            fail(f"{node_label(n)}: the shape of its input '{x}' is unknown (a final Softmax is "
                 "dropped only over the channels of [N, C] or [N, C, 1, 1])")
        rank = len(shape)
        # Before opset 13 a Softmax runs over the input flattened at `axis` to 2-D: over the
        # channels too when axis is 1 and H = W = 1.
        channels = rank >= 2 and -rank <= axis < rank and axis % rank == 1 and \
            all(d == 1 for d in shape[2:])
        if not channels or [m for m in self.consumers.get(x, []) if m is not n]:
            fail(f"{node_label(n)}: a Softmax over axis {axis} of a tensor of shape {shape} "
                 "(only a final Softmax over the channels, axis 1 of [N, C] or [N, C, 1, 1], "
                 "read by nothing else, is dropped; docs/cli.md, strata import)")
        self.nodes = [m for m in self.nodes if m is not n]
        self.consumers[x] = [m for m in self.consumers[x] if m is not n]
        self.outputs = [x if o == n.output[0] else o for o in self.outputs]
        self.notes.append(f"note: {node_label(n)}: the final Softmax is dropped; the network "
                          f"outputs its input '{x}', the logits (the same class, top-1)")

    def shape_of(self, tensor):
        """The static shape of a tensor from the model's shape inference ([N, ...], the batch
        as given), or None."""
        if not hasattr(self, "_shapes"):
            try:
                inferred = onnx.shape_inference.infer_shapes(self.model)
            except Exception:
                inferred = self.model
            self._shapes = {}
            g = inferred.graph
            for v in list(g.value_info) + list(g.output) + list(g.input):
                t = v.type.tensor_type
                if t.HasField("shape"):
                    self._shapes[v.name] = [d.dim_value if d.HasField("dim_value") else
                                            (d.dim_param or None) for d in t.shape.dim]
        return self._shapes.get(tensor)

    def check_finite(self):
        """Every float constant a node reads (weights, biases, BN parameters, Clip bounds, a
        MatMul's bias) holds finite values: a NaN or an infinity would fail deep inside the
        quantisation. A Clip's -inf minimum or +inf maximum means no bound and is kept."""
        for n in self.nodes:
            for k, t in enumerate(n.input):
                v = self.inits.get(t) if t not in self.qinit else None
                if v is None or not np.issubdtype(v.dtype, np.floating):
                    continue
                if n.op_type == "Clip" and k in (1, 2) and v.size == 1 and \
                        float(v.reshape(-1)[0]) == (-math.inf if k == 1 else math.inf):
                    continue
                if np.isnan(v).any():
                    fail(f"{self.origin[t]} of {node_label(n)} holds NaN values")
                if not np.isfinite(v).all():
                    fail(f"{self.origin[t]} of {node_label(n)} holds infinite values")

    def check_qdq_node(self, n):
        """Types, zero points and attributes of one QuantizeLinear / DequantizeLinear node."""
        check_attrs(n, {"axis"})
        if len(n.input) < 2 or n.input[1] not in self.inits:
            fail(f"{node_label(n)}: the scale must be a constant (initializer)")
        s = self.inits[n.input[1]]
        if not np.all(np.isfinite(s)) or np.any(s <= 0):
            fail(f"{node_label(n)}: scale {s.reshape(-1)[:4].tolist()} is not positive and finite")
        if len(n.input) < 3 or not n.input[2]:
            fail(f"{node_label(n)}: uint8 quantisation (no zero point, ONNX's default type) is "
                 "not supported: Strata's values are int8 with zero point 0 (quantise with "
                 "QuantType.QInt8)")
        if n.input[2] not in self.inits:
            fail(f"{node_label(n)}: the zero point must be a constant (initializer)")
        zp = self.inits[n.input[2]]
        if zp.dtype == np.uint8:
            fail(f"{node_label(n)}: uint8 quantisation is not supported: Strata's values are "
                 "int8 with zero point 0 (quantise with QuantType.QInt8)")
        const_in = n.op_type == "DequantizeLinear" and n.input[0] in self.inits
        allowed = (np.int8, np.int32) if const_in else (np.int8,)
        if zp.dtype not in allowed:
            fail(f"{node_label(n)}: type {zp.dtype} is not supported (int8 values, or int32 "
                 "biases)")
        if const_in and self.inits[n.input[0]].dtype != zp.dtype:
            fail(f"{node_label(n)}: the values ({self.inits[n.input[0]].dtype}) and the zero "
                 f"point ({zp.dtype}) differ in type")
        if np.any(zp != 0):
            fail(f"{node_label(n)}: zero point {zp.reshape(-1)[:4].tolist()} is not 0 "
                 "(Strata's int8 values are symmetric: quantise with ActivationSymmetric and "
                 "WeightSymmetric)")
        if s.size != zp.size:
            fail(f"{node_label(n)}: {s.size} scales but {zp.size} zero points")

    def strip_qdq(self):
        """A QDQ model: records the scale of every QuantizeLinear (the scale of the float tensor
        it quantises) and the int8 / int32 values of every DequantizeLinear of a constant, then
        drops the Q/DQ nodes so the float operators read the float tensors directly."""
        qnodes = [n for n in self.nodes if n.op_type in QDQ_OPS]
        for n in qnodes:  # graph order: the first offending node is the one named
            if n.domain not in ("", "ai.onnx"):
                fail(f"{node_label(n)}: only the standard ONNX {n.op_type} is supported")
            self.check_qdq_node(n)
        q_of = {}   # Q output -> (Q node, float tensor, scale)
        for n in qnodes:
            if n.op_type != "QuantizeLinear":
                continue
            x, s = n.input[0], self.inits[n.input[1]].astype(np.float64)
            if x in self.inits:
                fail(f"{node_label(n)}: a QuantizeLinear of a constant is not supported "
                     "(weights are int8 initializers read through a DequantizeLinear)")
            if s.size != 1:
                fail(f"{node_label(n)}: per-channel activation scales are not supported (one "
                     "scale per tensor)")
            s = float(s.reshape(-1)[0])
            if x in self.qscale and not math.isclose(self.qscale[x], s, rel_tol=1e-6):
                fail(f"{node_label(n)}: tensor '{x}' is quantised twice with different scales")
            self.qscale[x] = s
            q_of[n.output[0]] = (n, x, s)
        alias = {}  # DQ output -> the float tensor its Q quantised
        for n in qnodes:
            if n.op_type != "DequantizeLinear":
                continue
            t, s = n.input[0], self.inits[n.input[1]].astype(np.float64)
            if t in self.inits:
                q = self.inits[t]
                axis = attrs(n).get("axis", 1)
                if s.size == 1:
                    f = q.astype(np.float64) * float(s.reshape(-1)[0])
                else:
                    if s.ndim != 1 or q.ndim == 0 or not -q.ndim <= axis < q.ndim \
                            or q.shape[axis] != s.size:
                        fail(f"{node_label(n)}: {s.size} scales do not match axis {axis} of "
                             f"the values' shape {list(q.shape)}")
                    axis %= q.ndim
                    shape = [1] * q.ndim
                    shape[axis] = s.size
                    f = q.astype(np.float64) * s.reshape(shape)
                self.inits[n.output[0]] = f
                self.qinit[n.output[0]] = (q, s, axis, n)
            elif t in q_of:
                qn, x, s_q = q_of[t]
                if s.size != 1 or not math.isclose(float(s.reshape(-1)[0]), s_q, rel_tol=1e-6):
                    fail(f"{node_label(n)}: its scale differs from that of {node_label(qn)}")
                alias[n.output[0]] = x
            else:
                fail(f"{node_label(n)}: dequantises '{t}', neither a constant nor the output "
                     "of a QuantizeLinear")
        readers = {}
        for m in self.nodes:
            for i in m.input:
                readers.setdefault(i, []).append(m)
        for t, (qn, _, _) in q_of.items():
            bad = [m for m in readers.get(t, []) if m.op_type != "DequantizeLinear"]
            if bad or t in self.outputs:
                what = node_label(bad[0]) if bad else "the graph output"
                fail(f"{node_label(qn)}: its int8 output is read by {what}, not by a "
                     "DequantizeLinear (only QuantizeLinear -> DequantizeLinear pairs around "
                     "float operators are supported)")
        nodes = []
        for n in self.nodes:
            if n.op_type in QDQ_OPS:
                continue
            c = onnx.NodeProto()
            c.CopyFrom(n)
            for k, i in enumerate(c.input):
                c.input[k] = alias.get(i, i)
            nodes.append(c)
        self.nodes = nodes
        self.outputs = [alias.get(o, o) for o in self.outputs]

    def quantised(self, node, name, out_axis, cout, weights=True):
        """QDQ weights or bias: (int values, per-output-channel scale [cout]) of the constant
        `name` if it is a DequantizeLinear of an int8 (weights) / int32 or int8 (bias)
        initializer, else None (a float constant: quantised here)."""
        if name not in self.qinit:
            return None
        q, s, axis, dq = self.qinit[name]
        if weights and q.dtype != np.int8:
            fail(f"{node_label(dq)}: {node_label(node)}'s weights are {q.dtype}, not int8")
        if s.size == 1:
            return q, np.full(cout, float(s.reshape(-1)[0]))
        if axis != out_axis or s.size != cout:
            fail(f"{node_label(dq)}: per-channel scales along axis {axis} of {list(q.shape)}; "
                 f"{node_label(node)} needs them along its output channels (axis {out_axis})")
        return q, s.reshape(-1)

    def const(self, node, name, what):
        if name not in self.inits:
            fail(f"{node_label(node)}: {what} '{name}' must be a constant (initializer)")
        return self.inits[name].astype(np.float64)

    def table_region(self, t, shared_ok=False):
        """The elementwise function of tensor `t` that follows it: (nodes in graph order, the
        one tensor they leave for the rest of the graph), or None when there is none beyond a
        chain of Relu / Clip nodes (a clamp). The nodes are TABLE_OPS whose other inputs are
        scalar constants or tensors of the group; the group is the largest prefix (in graph
        order) of them that leaves exactly one tensor read outside it. With shared_ok, `t`
        itself may also be read elsewhere (a standalone activation)."""
        known, region = {t}, []
        for n in self.nodes:
            if n.op_type not in TABLE_OPS or not table_attrs_ok(n):
                continue
            ins = [i for i in n.input if i]
            dyn = [i for i in ins if i not in self.inits]
            consts_ok = all(self.inits[i].size == 1 for i in ins if i in self.inits)
            if dyn and consts_ok and all(i in known for i in dyn) and len(n.output) == 1:
                region.append(n)
                known.add(n.output[0])
        while region:
            ids = {id(n) for n in region}
            made = {t} | {n.output[0] for n in region}
            exits = {x for x in made
                     if x in self.outputs or any(id(c) not in ids for c in self.consumers.get(x, []))}
            inner = exits - {t}
            if len(inner) == 1 and (shared_ok or t not in exits):
                if all(n.op_type in ("Relu", "Clip") for n in region):
                    return None
                return region, inner.pop()
            region.pop()
        return None

    def only_consumer(self, tensor):
        """The one node reading `tensor`, if it is not also the graph output."""
        c = self.consumers.get(tensor, [])
        if len(c) == 1 and tensor not in self.outputs:
            return c[0]
        return None


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def check_attrs(node, allowed):
    for a in node.attribute:
        if a.name not in allowed:
            fail(f"{node_label(node)}: unsupported attribute '{a.name}'")


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def eval_table_node(n, g, v):
    """One TABLE_OPS node on float64 arrays; v: tensor -> array (constants from g.inits)."""
    def arg(k):
        t = n.input[k]
        return v[t] if t in v else g.inits[t].astype(np.float64).reshape(())
    a = attrs(n)
    op = n.op_type
    x = arg(0)
    if op == "Sigmoid":
        return 1.0 / (1.0 + np.exp(-x))
    if op == "Tanh":
        return np.tanh(x)
    if op == "LeakyRelu":
        return np.where(x >= 0, x, a.get("alpha", 0.01) * x)
    if op == "HardSigmoid":
        return np.clip(a.get("alpha", 0.2) * x + a.get("beta", 0.5), 0.0, 1.0)
    if op == "HardSwish":
        return x * np.clip(x / 6.0 + 0.5, 0.0, 1.0)
    if op == "Elu":
        return np.where(x >= 0, x, a.get("alpha", 1.0) * np.expm1(np.minimum(x, 0.0)))
    if op == "Gelu":
        ap = a.get("approximate", b"none")
        ap = ap.decode() if isinstance(ap, bytes) else ap
        if ap == "tanh":
            return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
        return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    if op == "Erf":
        return erf(x)
    if op == "Softplus":
        return np.logaddexp(0.0, x)
    if op == "Relu":
        return np.maximum(x, 0.0)
    if op == "Clip":
        lo, hi = clip_bounds(n, g)
        return np.clip(x, lo, hi)
    y = arg(1)
    return {"Mul": np.multiply, "Div": np.divide, "Sub": np.subtract, "Add": np.add}[op](x, y)


def table_attrs_ok(n):
    """The attributes a TABLE_OPS node may carry (anything else is refused, as elsewhere)."""
    allowed = {"LeakyRelu": {"alpha"}, "HardSigmoid": {"alpha", "beta"}, "Elu": {"alpha"},
               "Gelu": {"approximate"}, "Clip": {"min", "max"}}.get(n.op_type, set())
    return all(a.name in allowed for a in n.attribute)


# ---- calibration ----------------------------------------------------------------

def run_float(model_bytes, g, images, tensors):
    """Runs the float model; returns {tensor: array [N, ...]} for the named tensors."""
    m = onnx.load_from_string(model_bytes)
    have = {o.name for o in m.graph.output}
    for t in tensors:
        if t not in have:
            m.graph.output.append(helper.make_empty_tensor_value_info(t))
    opts = ort.SessionOptions()
    opts.log_severity_level = 4  # its errors reach the user as the exception, in one line
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    per = {n: [] for n in names}
    step = g.batch_fixed or len(images)
    for i in range(0, len(images), step):
        outs = sess.run(names, {g.input.name: images[i:i + step]})
        for n, o in zip(names, outs):
            per[n].append(np.asarray(o, dtype=np.float64))
    return {n: np.concatenate(per[n]) for n in tensors}


def scale_of(x):
    m = float(np.max(np.abs(x))) if x.size else 0.0
    return m / 127.0 if m > 0 else 1.0 / 127.0


def quantise(x, s):
    return np.clip(np.round(x / s), -128, 127).astype(np.int8)


def mult_shift(ratios, node):
    """Per channel M (uint16), S (0..47): M / 2^S ~ ratio, the largest S whose M fits."""
    n = len(ratios)
    ms = np.zeros(n, np.uint16)
    ss = np.zeros(n, np.uint8)
    for c in range(n):
        r = float(ratios[c])
        for sh in range(MAX_SHIFT, -1, -1):
            m = math.floor(r * 2.0 ** sh + 0.5)
            if m <= MAX_MULT:
                ms[c], ss[c] = m, sh
                break
        else:
            fail(f"{node_label(node)}: output channel {c}: scale ratio {r:.6g} needs a "
                 f"multiplier above {MAX_MULT} even with shift 0")
    return ms, ss


def add_mult_shift(ra, rb, node):
    """An add's Ma, Mb (uint16) and S (0..47) for the ratios ra = s_a / s_out, rb = s_b / s_out,
    in the form the PE array runs: Ma = wa * M, Mb = wb * M with int8 weights 0 <= wa, wb <= 127
    (the larger operand's 127, the other round(127 * min / max)) and one requantiser M / 2^S ~
    max(ra, rb) / 127, the largest S whose M keeps 127 * M within 16 bits (M <= 516)."""
    r = max(ra, rb)
    w_small = max(0, min(WEIGHT_MAX, math.floor(WEIGHT_MAX * min(ra, rb) / r + 0.5)))
    wa, wb = (WEIGHT_MAX, w_small) if ra >= rb else (w_small, WEIGHT_MAX)
    limit = MAX_MULT // WEIGHT_MAX
    for sh in range(MAX_SHIFT, -1, -1):
        m = math.floor(r / WEIGHT_MAX * 2.0 ** sh + 0.5)
        if m <= limit:
            return wa * m, wb * m, sh
    fail(f"{node_label(node)}: scale ratio {r:.6g} needs a multiplier above {limit} "
         f"(127 x {limit} <= {MAX_MULT}) even with shift 0")


# ---- conversion -------------------------------------------------------------------

def kernel_geometry(node, g, in_shape, w_shape=None):
    """(kernel, stride, pad) of a Conv / MaxPool / AveragePool node, square windows only."""
    a = attrs(node)
    k = list(a.get("kernel_shape", w_shape[2:] if w_shape is not None else []))
    if len(k) != 2:
        fail(f"{node_label(node)}: needs a 2-D kernel_shape")
    if k[0] != k[1]:
        fail(f"{node_label(node)}: kernel {k[0]}x{k[1]} is not square")
    s = list(a.get("strides", [1, 1]))
    if s[0] != s[1]:
        fail(f"{node_label(node)}: strides {s} differ between H and W")
    if any(d != 1 for d in a.get("dilations", [1, 1])):
        fail(f"{node_label(node)}: dilations {list(a['dilations'])} are not supported")
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("NOTSET", "VALID"):
        p = list(a.get("pads", [0, 0, 0, 0])) if auto == "NOTSET" else [0, 0, 0, 0]
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        p = [0, 0, 0, 0]
        for ax, size in enumerate(in_shape[-2:]):
            total = max((-(-size // s[0]) - 1) * s[0] + k[0] - size, 0)
            small, big = total // 2, total - total // 2
            p[ax], p[ax + 2] = (small, big) if auto == "SAME_UPPER" else (big, small)
    else:
        fail(f"{node_label(node)}: auto_pad {auto} is not supported")
    if len(p) != 4:
        fail(f"{node_label(node)}: pads {p} must have 4 entries")
    check_window_limits(node, int(k[0]), int(s[0]), [int(v) for v in p], in_shape[-2:])
    pad = p[0] if len(set(p)) == 1 else [int(v) for v in p]
    return int(k[0]), int(s[0]), pad


def check_window_limits(node, k, s, pads, hw):
    """The network format's limits on a conv / depthwise / pool window (the reader refuses
    anything else): kernel 1..11, stride 1..8, each pad 0..kernel-1 ([top, left, bottom,
    right]), and a padded input that holds one kernel."""
    if not 1 <= k <= MAX_KERNEL:
        fail(f"{node_label(node)}: kernel {k}x{k} is outside the network format's limit "
             f"1..{MAX_KERNEL} (docs/network-format.md)")
    if not 1 <= s <= MAX_STRIDE:
        fail(f"{node_label(node)}: stride {s} is outside the network format's limit "
             f"1..{MAX_STRIDE} (docs/network-format.md)")
    if any(not 0 <= v < k for v in pads):
        fail(f"{node_label(node)}: pads {pads} ([top, left, bottom, right]) must each be "
             f"smaller than the kernel {k} (the network format's limit, docs/network-format.md)")
    padded = (hw[0] + pads[0] + pads[2], hw[1] + pads[1] + pads[3])
    if min(padded) < k:
        fail(f"{node_label(node)}: kernel {k} is larger than the padded input "
             f"{padded[0]}x{padded[1]}")


def clip_bounds(node, g):
    a = attrs(node)
    lo, hi = a.get("min", -math.inf), a.get("max", math.inf)
    if len(node.input) > 1 and node.input[1]:
        lo = float(g.const(node, node.input[1], "min"))
    if len(node.input) > 2 and node.input[2]:
        hi = float(g.const(node, node.input[2], "max"))
    if math.isnan(lo) or math.isnan(hi) or lo == math.inf or hi == -math.inf:
        fail(f"{node_label(node)}: clip bounds [{lo}, {hi}] are not a range (NaN, or an "
             "infinity on the wrong side)")
    return lo, hi


def clamp_codes(lo, hi, s):
    qlo = -128 if lo == -math.inf else int(np.clip(round(lo / s), -128, 127))
    qhi = 127 if hi == math.inf else int(np.clip(round(hi / s), -128, 127))
    return qlo, qhi


class Converter:
    def __init__(self, g, act, images, shuffle_conv=False, max_kernel=7):
        self.g = g
        self.act = act          # tensor -> float calibration activations [N, ...]
        self.layers = []        # (yaml dict)
        self.files = {}         # file name -> array
        self.names = set(["input"])
        self.src = {g.input.name: "input"}     # ONNX tensor -> strata layer name
        self.scale = {g.input.name: g.qscale[g.input.name] if g.qdq else scale_of(images)}
        self.done = set()
        self.out_tensor = None
        self.pads = {}          # a standalone Pad's output -> (its input, [t, l, b, r], node)
        self.node_of = {}       # strata layer name -> the ONNX node it came from (messages)
        self.tensor_of = {}     # strata layer name -> the ONNX tensor it computes
        self.outputs = []       # the layers of the graph outputs, in order (convert)
        self.shared = {}        # tensor -> the scale its concat group shares (share_scales)
        self.sel = {}           # tensor -> [(layer, channel)] per channel: a channel selection
                                # (a shuffle's permutation) kept as the maps it picks from
        self.inflight = {}      # tensor -> (4-D map, per-image flat indices into it, node):
                                # a Reshape / Transpose on the way to a channel shuffle
        self.bn_fold = {}       # a standalone BN's output -> (input, scale, shift, BN node),
                                # folded into the one Conv reading it
        self.materialised = 0   # selections made into maps by permutation convolutions
        self.shuffle_conv = shuffle_conv    # every shuffle made into a map where it is
        self.max_kernel = max_kernel        # larger conv kernels: space-to-depth
        self.share_scales()

    def fused_into_producer(self, node):
        """Whether a Relu / Clip node becomes the activation of the conv / fc / add before it
        (its input then has no int8 scale of its own: the layer requantises to the output's)."""
        x = node.input[0]
        if self.g.only_consumer(x) is not node:
            return False
        prod = next((m for m in self.g.nodes if x in m.output), None)
        if prod is None:
            return False
        if prod.op_type in ("Relu", "Clip"):
            return self.fused_into_producer(prod)
        return prod.op_type in ("Conv", "BatchNormalization", "Gemm", "MatMul") or \
            prod.op_type == "Add" and not any(i in self.g.inits for i in prod.input)

    def share_scales(self):
        """A concat stacks its inputs' int8 codes, so they and its output need one scale. The
        tensors joined through a Concat or an operator that keeps its input's scale
        (SCALE_KEEPING_OPS, a Relu / Clip that is not fused into a layer) form a group; a
        group with a Concat in it takes one scale, which every conv / fc / add / table layer
        producing one of its tensors requantises to (out_scale). Float model: the largest
        calibrated scale max|x| / 127 of its tensors (the network input's included: its scale
        is then the group's, so that nothing is clipped). QDQ model: the QuantizeLinear scales
        in the group, which must agree (else refused naming the Concat and the scales)."""
        g = self.g
        parent = {}

        def find(t):
            while parent.setdefault(t, t) != t:
                parent[t] = parent[parent[t]]
                t = parent[t]
            return t

        def join(a, b):
            parent[find(a)] = find(b)

        concats = []
        for n in g.nodes:
            keep = n.op_type in SCALE_KEEPING_OPS or \
                n.op_type in ("Relu", "Clip") and not self.fused_into_producer(n)
            if not keep:
                continue
            ins = [i for i in n.input if i and i not in g.inits]
            if n.op_type != "Concat":
                ins = ins[:1]
            if n.op_type == "Concat":
                concats.append(n)
            for t in ins + [o for o in n.output if o]:
                if ins:
                    join(t, ins[0])
        if not concats:
            return
        groups = {}
        for t in list(parent):
            groups.setdefault(find(t), []).append(t)
        for n in concats:
            members = groups[find(n.output[0])]
            if all(t in self.shared for t in members):
                continue
            if g.qdq:
                fixed = sorted({(t, g.qscale[t]) for t in members if t in g.qscale},
                               key=lambda e: e[1])
                if not fixed:
                    fail(f"{node_label(n)}: no QuantizeLinear quantises its inputs or output")
                lo, hi = fixed[0], fixed[-1]
                if not math.isclose(lo[1], hi[1], rel_tol=1e-5):
                    fail(f"{node_label(n)}: its inputs and output must share one int8 scale (a "
                         f"concat stacks int8 codes), but the model quantises '{lo[0]}' with "
                         f"scale {lo[1]:.6g} and '{hi[0]}' with {hi[1]:.6g} (quantise the "
                         "concat's inputs and output with one scale)")
                s = hi[1]
            else:
                for t in members:
                    if not np.all(np.isfinite(self.act[t])):
                        fail(f"{node_label(n)}: the float model's tensor '{t}' holds NaN or "
                             "infinite values on the calibration images")
                s = max(scale_of(self.act[t]) for t in members)
            for t in members:
                self.shared[t] = s
        if g.input.name in self.shared:
            self.scale[g.input.name] = self.shared[g.input.name]

    def out_scale(self, node, tensor):
        """The scale of a conv / fc / add output: its concat group's (share_scales), else its
        QuantizeLinear's in a QDQ model, else max|x| / 127 over the calibration activations."""
        if tensor in self.shared:
            return self.shared[tensor]
        if not self.g.qdq:
            if not np.all(np.isfinite(self.act[tensor])):
                fail(f"{node_label(node)}: the float model's output '{tensor}' holds NaN or "
                     "infinite values on the calibration images")
            return scale_of(self.act[tensor])
        if tensor not in self.g.qscale:
            fail(f"{node_label(node)}: its output '{tensor}' is not quantised (no "
                 "QuantizeLinear follows it)")
        return self.g.qscale[tensor]

    def layer_name(self, node):
        base = re.sub(r"[^A-Za-z0-9_-]", "_", node.name or node.output[0]).strip("_")
        base = base or node.op_type
        if base == "input" or base[0] == "-":
            base = "l_" + base
        return self.fresh_name(base)

    def src_of(self, node, tensor):
        if tensor in self.sel:      # a consumer that cannot take a permutation in its weights
            self.materialise(node, tensor)
        if tensor in self.inflight:
            base, _, prod = self.inflight[tensor]
            fail(f"{node_label(prod)}: rearranges '{base}' of shape "
                 f"{list(self.act[base].shape[1:])} per image into '{tensor}' of shape "
                 f"{list(self.act[tensor].shape[1:])}, which is not a permutation of its "
                 f"channels, and {node_label(node)} reads it (only a channel shuffle, Reshape -> "
                 "Transpose -> Reshape back to [N, C, H, W], is supported)")
        if tensor not in self.src:
            fail(f"{node_label(node)}: input '{tensor}' is not produced by a supported layer")
        return self.src[tensor]

    def emit(self, node, layer, in_tensors, out_tensor, scale):
        srcs = [self.src_of(node, t) for t in in_tensors]
        prev = self.layers[-1]["name"] if self.layers else "input"
        if srcs != [prev]:
            layer["inputs"] = srcs[0] if len(srcs) == 1 else srcs
        self.append(node, layer, out_tensor)
        self.scale[out_tensor] = scale

    def append(self, node, layer, out_tensor):
        self.layers.append(layer)
        self.node_of[layer["name"]] = node
        self.tensor_of[layer["name"]] = out_tensor
        self.src[out_tensor] = layer["name"]
        self.out_tensor = out_tensor

    def fuse_activation(self, out):
        """Follows the chain of Relu / Clip nodes each the only consumer of the one before,
        from `out` (PyTorch exports ReLU6 as Relu then Clip): (last tensor, [nodes])."""
        nodes = []
        nxt = self.g.only_consumer(out)
        while nxt is not None and nxt.op_type in ("Relu", "Clip"):
            self.done.add(id(nxt))
            nodes.append(nxt)
            out = nxt.output[0]
            nxt = self.g.only_consumer(out)
        return out, nodes

    def pre_scale(self, node, tensor):
        """The int8 scale of the tensor a table activation reads: its QuantizeLinear's in a QDQ
        model when it has one, else max|x| / 127 over the calibration activations."""
        if tensor in self.shared:
            return self.shared[tensor]
        if self.g.qdq and tensor in self.g.qscale:
            return self.g.qscale[tensor]
        if not np.all(np.isfinite(self.act[tensor])):
            fail(f"{node_label(node)}: the float model's tensor '{tensor}' holds NaN or infinite "
                 "values on the calibration images")
        return scale_of(self.act[tensor])

    def make_table(self, nodes, t, exit_, s_in, s_out):
        """T[i] = clamp(round(f((i - 128) * s_in) / s_out), -128, 127): the function of the
        nodes evaluated on the 256 int8 codes of `t` (rounded like quantise: half to even)."""
        v = {t: (np.arange(ACT_TABLE_SIZE, dtype=np.float64) - 128.0) * s_in}
        with np.errstate(all="ignore"):
            for n in nodes:
                v[n.output[0]] = np.broadcast_to(eval_table_node(n, self.g, v),
                                                 (ACT_TABLE_SIZE,)).astype(np.float64)
        f = v[exit_]
        if not np.all(np.isfinite(f)):
            fail(f"{node_label(nodes[-1])}: the activation is not finite on the int8 range of "
                 f"'{t}' (scale {s_in:.6g})")
        return np.clip(np.round(f / s_out), -128, 127).astype(np.int8)

    def layer_activation(self, node, out):
        """What follows a conv / fc / add output `out`: a table activation (an elementwise
        function beyond a clamp, docs/cli.md) or a fused Relu / Clip chain. Returns (the tensor
        the layer computes, the scale its requantisation targets, the activation YAML or None,
        the table or None); the caller names the table file."""
        r = self.g.table_region(out)
        if r is None:
            out, act_nodes = self.fuse_activation(out)
            s = self.scale[out] = self.out_scale(node, out)
            return out, s, self.activation_yaml(act_nodes, s), None
        nodes, exit_ = r
        for n in nodes:
            self.done.add(id(n))
        s_pre = self.scale[out] = self.pre_scale(node, out)
        s_out = self.scale[exit_] = self.out_scale(nodes[-1], exit_)
        return exit_, s_pre, "table", self.make_table(nodes, out, exit_, s_pre, s_out)

    def table_layer(self, node):
        """An elementwise activation whose input no conv / fc / add can take (it follows a
        pool, a flatten or the input, or its input is also read elsewhere): a 1x1 depthwise
        layer with weight 1, bias 0, M = 1, S = 0 (exact identity) carrying the table."""
        t = next((i for i in node.input if i and i not in self.g.inits), None)
        r = self.g.table_region(t, shared_ok=True) if t is not None else None
        if r is None or id(node) not in {id(n) for n in r[0]}:
            if node.op_type in ("Relu", "Clip"):
                return self.clamp_layer(node)
            if node.op_type in ("Mul", "Add") and self.channel_affine(node):
                return
            fail(f"{node_label(node)}: {node.op_type} is supported only as part of an "
                 "elementwise activation (a function of one tensor and scalar constants; "
                 "docs/cli.md, Table activations)")
        nodes, exit_ = r
        for n in nodes:
            self.done.add(id(n))
        c = int(self.act[t].shape[1])
        name = self.layer_name(node)
        s_out = self.scale[exit_] = self.out_scale(nodes[-1], exit_)
        self.files[f"{name}_weight.npy"] = np.ones((c, 1, 1, 1), np.int8)
        self.files[f"{name}_bias.npy"] = np.zeros(c, np.int32)
        self.files[f"{name}_mult.npy"] = np.ones(c, np.uint16)
        self.files[f"{name}_shift.npy"] = np.zeros(c, np.uint8)
        self.files[f"{name}_table.npy"] = self.make_table(nodes, t, exit_, self.scale[t], s_out)
        layer = {"name": name, "type": "depthwise", "kernel": 1,
                 "activation": {"table": f"{name}_table.npy"}}
        self.emit(node, layer, [t], exit_, s_out)

    def activation_yaml(self, act_nodes, s_out):
        """The clamp of a chain of Relu / Clip nodes: the intersection of their ranges."""
        if not act_nodes:
            return None
        lo, hi = -math.inf, math.inf
        for n in act_nodes:
            a, b = (0.0, math.inf) if n.op_type == "Relu" else clip_bounds(n, self.g)
            lo, hi = max(lo, a), min(hi, b)
            if lo > hi:
                fail(f"{node_label(n)}: the clip ranges of the activation chain do not overlap")
        lo, hi = clamp_codes(lo, hi, s_out)
        if lo > hi:
            fail(f"{node_label(act_nodes[-1])}: clip range quantises to an empty range "
                 f"[{lo}, {hi}]")
        if (lo, hi) == (0, 127):
            return "relu"
        if (lo, hi) == (-128, 127):
            return None
        return {"clamp": [lo, hi]}

    def set_activation(self, layer, a, table):
        """The layer's `activation`: a clamp (a), or the table written as <name>_table.npy."""
        if table is not None:
            f = f"{layer['name']}_table.npy"
            self.files[f] = table
            layer["activation"] = {"table": f}
        elif a is not None:
            layer["activation"] = a

    def requant_files(self, name, node, w, b, s_in, out, qw=None, qb=None):
        """qw: a QDQ model's (int8 weights shaped like w, s_w[cout]), used as they are;
        qb: its (int32 bias, scale[cout]), used as it is when the scale is s_in * s_w[c]."""
        cout = w.shape[0]
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(b))):
            fail(f"{node_label(node)}: the weights or the bias (after folding batch "
                 "normalisation or Gemm's alpha / beta) are not finite")
        if qw is not None:
            wq, s_w = qw[0].astype(np.int8), qw[1].astype(np.float64)
        else:
            flat = w.reshape(cout, -1)
            s_w = np.max(np.abs(flat), axis=1) / 127.0
            s_w[s_w == 0] = 1.0 / 127.0
            wq = np.clip(np.round(flat / s_w[:, None]), -127, 127).astype(np.int8) \
                .reshape(w.shape)
        if qb is not None and qb[0].dtype == np.int32 and \
                np.allclose(qb[1], s_in * s_w, rtol=1e-5, atol=0):
            bq = qb[0].reshape(-1).astype(np.float64)
        else:
            bq = np.round(b / (s_in * s_w))
        if np.any(np.abs(bq) > 2**31 - 1):
            fail(f"{node_label(node)}: a bias does not fit int32 at the calibrated scales")
        m, s = mult_shift(s_in * s_w / self.scale[out], node)
        self.files[f"{name}_weight.npy"] = wq
        self.files[f"{name}_bias.npy"] = bq.astype(np.int32)
        self.files[f"{name}_mult.npy"] = m
        self.files[f"{name}_shift.npy"] = s

    def fold_pad(self, node, x, pad, k):
        """The standalone Pad whose output `x` node reads (self.pads): the Pad's input, the
        pads of both added up ([top, left, bottom, right]) and the Pad node; refused when a
        side reaches the kernel k."""
        x, extra, pad_node = self.pads[x]
        own = [pad] * 4 if isinstance(pad, int) else pad
        total = [a + b for a, b in zip(own, extra)]
        if any(v >= k for v in total):
            fail(f"{node_label(pad_node)}: its pads {extra} and the pads {own} of "
                 f"{node_label(node)} add up to {total} ([top, left, bottom, right]); each "
                 f"must stay below the kernel {k} (the network format's limit, "
                 "docs/network-format.md)")
        return x, total, pad_node

    def conv(self, node):
        g = self.g
        check_attrs(node, {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"})
        if len(node.input) < 2 or node.input[1] not in g.inits:
            fail(f"{node_label(node)}: the weights must be a constant (initializer)")
        w = g.const(node, node.input[1], "weights")
        has_b = len(node.input) > 2 and node.input[2]
        b = g.const(node, node.input[2], "bias") if has_b else np.zeros(w.shape[0])
        qw = g.quantised(node, node.input[1], 0, w.shape[0])
        qb = g.quantised(node, node.input[2], 0, w.shape[0], False) if has_b else None
        if w.ndim != 4:
            fail(f"{node_label(node)}: only 2-D convolutions are supported")
        x = node.input[0]
        if x in self.bn_fold:   # a standalone BN before it, no nonlinearity between
            x, w, b = self.fold_bn_before(x, w, b)
            qw = None
        cin = self.act[x].shape[1]
        group = attrs(node).get("group", 1)
        depthwise = group != 1 and group == cin and w.shape[0] == cin and w.shape[1] == 1
        if group < 1 or cin % group != 0 or w.shape[0] % group != 0 or \
                w.shape[1] * group != cin:
            fail(f"{node_label(node)}: group {group} does not divide its {cin} input channels "
                 f"and {w.shape[0]} outputs into weights of {w.shape[1]} inputs each")
        k, s, pad = kernel_geometry(node, g, self.act[x].shape, w.shape)
        if x in self.pads:  # a standalone Pad before it: its zeros are the conv's padding
            x, total, _ = self.fold_pad(node, x, pad, k)
            pad = total[0] if len(set(total)) == 1 else total
        permuted = None
        if x in self.sel:   # a channel selection: the permutation goes into the weights
            x, w, b, qw, qb, permuted = self.select_input(node, x, w, b, qw, qb, depthwise,
                                                          group)
        if k > self.max_kernel and group == 1:
            x, w, qw, k, s, pad = self.space_to_depth(node, x, w, qw, k, s, pad)
        out = node.output[0]
        bn = g.only_consumer(out)
        if bn is not None and bn.op_type == "BatchNormalization":
            f, mean, beta = self.bn_params(bn)
            w = w * f[:, None, None, None]
            b = (b - mean) * f + beta
            self.done.add(id(bn))
            out = bn.output[0]
        pre = out
        out, s_req, a, table = self.layer_activation(node, out)
        name = self.layer_name(node)
        layer = {"name": name, "type": "depthwise" if depthwise else "conv"}
        if not depthwise:
            layer["out_channels"] = int(w.shape[0])
            if group != 1:
                layer["groups"] = int(group)
        layer["kernel"] = k
        if s != 1:
            layer["stride"] = s
        if pad != 0:
            layer["pad"] = pad
        self.set_activation(layer, a, table)
        self.requant_files(name, node, w, b, self.scale[x], pre if table is not None else out,
                           qw, qb)
        self.emit(node, layer, [x], out, self.scale[out])
        if permuted is not None:    # a depthwise layer over a view: its channels in view order
            self.select_output(name, out, permuted)

    def fc(self, node, w, b, x, qw=None, qb=None):
        """w: [Cout][K] float; b: [Cout]; qw, qb: a QDQ model's int values (requant_files)."""
        shape = list(self.act[x].shape[1:])
        if len(shape) != 1:
            fail(f"{node_label(node)}: reads '{x}' of shape {shape} per image; an fc layer "
                 "takes a flat [N, features] input (Flatten or Reshape it to [N, -1] first)")
        if shape[0] != w.shape[1]:
            fail(f"{node_label(node)}: weights for {w.shape[1]} input features, but '{x}' has "
                 f"{shape[0]}")
        out = node.output[0]
        bias_add = self.g.only_consumer(out)
        if node.op_type == "MatMul" and bias_add is not None and bias_add.op_type == "Add":
            other = [t for t in bias_add.input if t != out]
            if len(other) == 1 and other[0] in self.g.inits:
                c = self.g.const(bias_add, other[0], "bias").reshape(-1)
                if c.size in (1, w.shape[0]):
                    b = b + c
                    qb = (self.g.quantised(bias_add, other[0], 0, w.shape[0], False)
                          if c.size > 1 else None)
                    self.done.add(id(bias_add))
                    out = bias_add.output[0]
        pre = out
        out, s_req, a, table = self.layer_activation(node, out)
        name = self.layer_name(node)
        layer = {"name": name, "type": "fc", "out_features": int(w.shape[0])}
        self.set_activation(layer, a, table)
        self.requant_files(name, node, w, b, self.scale[x], pre if table is not None else out,
                           qw, qb)
        self.emit(node, layer, [x], out, self.scale[out])

    def gemm(self, node):
        g = self.g
        check_attrs(node, {"alpha", "beta", "transA", "transB"})
        a = attrs(node)
        if a.get("transA", 0):
            fail(f"{node_label(node)}: transA is not supported")
        w = g.const(node, node.input[1], "weights")
        trans_b = a.get("transB", 0)
        cout = w.shape[0] if trans_b else w.shape[1]
        qw = g.quantised(node, node.input[1], 0 if trans_b else 1, cout)
        if not trans_b:
            w = w.T
        alpha = a.get("alpha", 1.0)
        w = w * alpha
        if qw is not None:  # a negative alpha: the weights are requantised from float
            qw = (qw[0] if trans_b else qw[0].T, qw[1] * alpha) if alpha > 0 else None
        b = np.zeros(w.shape[0])
        qb = None
        if len(node.input) > 2 and node.input[2]:
            c = g.const(node, node.input[2], "bias").reshape(-1) * a.get("beta", 1.0)
            b = np.broadcast_to(c, (w.shape[0],)).copy()
            if a.get("beta", 1.0) == 1.0 and c.size == cout:
                qb = g.quantised(node, node.input[2], 0, cout, False)
        self.fc(node, w, b, node.input[0], qw, qb)

    def matmul(self, node):
        w = self.g.const(node, node.input[1], "weights")
        if w.ndim != 2:
            fail(f"{node_label(node)}: only a 2-D constant right operand is supported")
        qw = self.g.quantised(node, node.input[1], 1, w.shape[1])
        self.fc(node, w.T, np.zeros(w.shape[1]), node.input[0],
                None if qw is None else (qw[0].T, qw[1]))

    def pool(self, node, kind):
        check_attrs(node, {"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "auto_pad",
                           "count_include_pad", "storage_order"})
        a = attrs(node)
        if kind == "avgpool" and a.get("count_include_pad", 0) != 0:
            fail(f"{node_label(node)}: count_include_pad = 1 is not supported (Strata's average "
                 "divides by the elements inside the input)")
        if a.get("storage_order", 0) != 0 or len(node.output) > 1 and node.output[1]:
            fail(f"{node_label(node)}: the Indices output / storage_order is not supported")
        x = node.input[0]
        k, s, pad = kernel_geometry(node, self.g, self.act[x].shape)
        if x in self.pads:  # a Pad of non-negative values before a max pool (pad())
            x, total, pad_node = self.fold_pad(node, x, pad, k)
            ceil = bool(a.get("ceil_mode", 0))
            h, w = self.act[x].shape[2:]
            want = tuple(self.act[node.output[0]].shape[2:])
            if (window_out(h, k, s, total[0], total[2], ceil),
                    window_out(w, k, s, total[1], total[3], ceil)) != want:
                fail(f"{node_label(pad_node)}: folded into {node_label(node)} (ceil mode) it "
                     f"gives another output size than {list(want)}: a window would start in "
                     "the Pad's zeros after the input")
            pad = total[0] if len(set(total)) == 1 else total
        layer = {"name": self.layer_name(node), "type": kind, "kernel": k}
        if s != k:
            layer["stride"] = s
        if pad != 0:
            layer["pad"] = pad
        if a.get("ceil_mode", 0):
            layer["ceil_mode"] = True
        self.emit(node, layer, [x], node.output[0], self.scale[x])

    def pad(self, node):
        """A standalone Pad (constant 0, only on H and W, none negative) read by a Conv alone:
        recorded, and folded into that Conv's padding (conv()). Zeros outside the input are
        exactly what a convolution's padding is; a pool's padding is not zeros (a max ignores
        it, an average does not count it), so a Pad before a pool is refused, except before a
        MaxPool: zeros beside non-negative values, or copies of the edge (mode 'edge')."""
        g = self.g
        check_attrs(node, {"mode", "pads", "value"})
        a = attrs(node)
        mode = a.get("mode", b"constant")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        if mode not in ("constant", "edge"):
            fail(f"{node_label(node)}: mode '{mode}' is not supported (only a constant 0 pad, "
                 "folded into the Conv after it, or an edge pad before a MaxPool)")
        x = node.input[0]
        rank = self.act[x].ndim
        if len(node.input) > 1 and node.input[1]:
            pads = [int(v) for v in g.const(node, node.input[1], "pads").reshape(-1)]
        else:
            pads = [int(v) for v in a.get("pads", [])]
        axes = list(range(rank))
        if len(node.input) > 3 and node.input[3]:
            axes = [int(v) for v in g.const(node, node.input[3], "axes").reshape(-1)]
            if any(not -rank <= v < rank for v in axes):
                fail(f"{node_label(node)}: axes {axes} outside the input's {rank} dimensions")
            axes = [v % rank for v in axes]
        if len(pads) != 2 * len(axes):
            fail(f"{node_label(node)}: {len(pads)} pads for {len(axes)} axes")
        full = [0] * (2 * rank)
        for i, ax in enumerate(axes):
            full[ax], full[rank + ax] = pads[i], pads[len(axes) + i]
        value = a.get("value", 0.0)
        if len(node.input) > 2 and node.input[2]:
            v = g.const(node, node.input[2], "constant_value").reshape(-1)
            value = float(v[0]) if v.size else 0.0
        if value != 0 and mode == "constant":
            fail(f"{node_label(node)}: pad value {value} is not supported (only 0, folded into "
                 "the Conv after it)")
        if rank != 4:
            fail(f"{node_label(node)}: pads a tensor of {rank} dimensions (only [N, C, H, W])")
        if any(full[i] != 0 for i in (0, 1, 4, 5)):
            fail(f"{node_label(node)}: pads {full} pad the batch or the channels (only H and W "
                 "may be padded)")
        if any(v < 0 for v in full):
            fail(f"{node_label(node)}: negative pads {full} (cropping) are not supported")
        out = node.output[0]
        if not any(full):   # pads of zeros (PyTorch's AvgPool2d exports one): nothing to do
            return self.passthrough(node)
        readers = g.consumers.get(out, [])
        single = len(readers) == 1 and out not in g.outputs
        if mode == "edge":
            # Copies of the edge beside the input (Darknet's stride-1 max pool, exported from
            # PyTorch): a window that reaches into them also holds the edge value they copy
            # (every side's pads, the pool's own added, stay below the kernel: fold_pad), so
            # a max pool that ignores its padding computes the same maxima.
            if not single or readers[0].op_type != "MaxPool":
                what = "the graph output" if out in g.outputs else \
                    ", ".join(node_label(r) for r in readers) or "nothing"
                fail(f"{node_label(node)}: an edge Pad is folded only into the one MaxPool that "
                     f"reads it; its output is read by {what}")
            self.pads[out] = (x, [full[2], full[3], full[6], full[7]], node)
            return
        if single and readers[0].op_type == "MaxPool" and self.non_negative(x):
            # Zeros beside values >= 0 never exceed a window's largest value inside the input
            # (every window keeps one, the pads staying below the kernel): a max pool that
            # ignores its padding computes the same.
            self.pads[out] = (x, [full[2], full[3], full[6], full[7]], node)
            return
        if not single or readers[0].op_type != "Conv":
            if single and readers[0].op_type in ("MaxPool", "AveragePool"):
                fail(f"{node_label(node)}: a Pad before {node_label(readers[0])} cannot be folded "
                     "exactly: the pool's padding is not zeros (a max ignores it, an average "
                     "does not count it; a Pad before a MaxPool is folded only when its input "
                     "is a Relu's or a Clip's with a minimum >= 0); give the pool its own pads")
            what = "the graph output" if out in g.outputs else \
                ", ".join(node_label(r) for r in readers) or "nothing"
            fail(f"{node_label(node)}: a standalone Pad is folded only into the one Conv that "
                 f"reads it; its output is read by {what}")
        self.pads[out] = (x, [full[2], full[3], full[6], full[7]], node)

    def non_negative(self, tensor):
        """Whether every value of `tensor` is >= 0 by construction: a Relu's output, or a
        Clip's with a minimum >= 0 (their int8 codes are then >= 0 too)."""
        prod = next((m for m in self.g.nodes if tensor in m.output), None)
        if prod is None:
            return False
        if prod.op_type == "Relu":
            return True
        return prod.op_type == "Clip" and clip_bounds(prod, self.g)[0] >= 0

    def add(self, node):
        g = self.g
        if any(t in g.inits for t in node.input):
            fail(f"{node_label(node)}: an Add with a constant operand is not supported "
                 "(only a bias after MatMul, or two tensors)")
        a_t, b_t = node.input
        if self.act[a_t].shape != self.act[b_t].shape:
            fail(f"{node_label(node)}: operands of shapes {list(self.act[a_t].shape[1:])} and "
                 f"{list(self.act[b_t].shape[1:])} (broadcasting is not supported)")
        out, s_req, act, table = self.layer_activation(node, node.output[0])
        name = self.layer_name(node)
        c = self.act[a_t].shape[1]
        ma, mb, s = add_mult_shift(self.scale[a_t] / s_req, self.scale[b_t] / s_req, node)
        self.files[f"{name}_mult_a.npy"] = np.full(c, ma, np.uint16)
        self.files[f"{name}_mult_b.npy"] = np.full(c, mb, np.uint16)
        self.files[f"{name}_shift.npy"] = np.full(c, s, np.uint8)
        layer = {"name": name, "type": "add"}
        self.set_activation(layer, act, table)
        srcs = [self.src_of(node, t) for t in (a_t, b_t)]
        self.append(node, dict(layer, inputs=srcs), out)

    def mul(self, node):
        """A Mul of two tensors that is no part of an elementwise activation: a map [C, H, W]
        times a [C, 1, 1] vector computed in the graph (squeeze-and-excitation, either operand
        order), a mul layer. Its M / 2^S ~ s_map * s_vector / s_out, the product's scale over
        the output's, one value for the layer (docs/cli.md, "Mul")."""
        g = self.g
        if any(t in g.inits for t in node.input):
            fail(f"{node_label(node)}: a Mul by a constant is supported only inside an "
                 "elementwise activation (a function of one tensor; docs/cli.md, Table "
                 "activations)")
        a_t, b_t = node.input
        sa, sb = self.act[a_t].shape[1:], self.act[b_t].shape[1:]

        def is_vector(v, m):
            return len(v) == 3 and len(m) == 3 and tuple(v) == (m[0], 1, 1)

        if is_vector(sb, sa):
            x_t, v_t = a_t, b_t
        elif is_vector(sa, sb):
            x_t, v_t = b_t, a_t
        else:
            fail(f"{node_label(node)}: a Mul of tensors of shapes {list(sa)} and {list(sb)} "
                 "per image is not supported (only a map [C, H, W] times a [C, 1, 1] vector of "
                 "the same C, as in squeeze-and-excitation, or an elementwise activation)")
        out, s_req, act, table = self.layer_activation(node, node.output[0])
        name = self.layer_name(node)
        c = int(self.act[x_t].shape[1])
        m, s = mult_shift(np.full(c, self.scale[x_t] * self.scale[v_t] / s_req), node)
        self.files[f"{name}_mult.npy"] = m
        self.files[f"{name}_shift.npy"] = s
        layer = {"name": name, "type": "mul"}
        self.set_activation(layer, act, table)
        srcs = [self.src_of(node, t) for t in (x_t, v_t)]
        self.append(node, dict(layer, inputs=srcs), out)

    def reduce_mean(self, node):
        """A mean over H and W of [N, C, H, W] (axes [2, 3] or [-2, -1], in any order) is a
        global_avgpool: with keepdims 1 its [N, C, 1, 1], with keepdims 0 the [N, C] a flatten
        of it would be (the map is [C][1][1]: nothing to do)."""
        check_attrs(node, {"axes", "keepdims", "noop_with_empty_axes"})
        a = attrs(node)
        x = node.input[0]
        rank = self.act[x].ndim
        if len(node.input) > 1 and node.input[1]:
            axes = [int(v) for v in self.g.const(node, node.input[1], "axes").reshape(-1)]
        else:
            axes = [int(v) for v in a.get("axes", [])]
        ok = rank == 4 and len(axes) == 2 and all(-rank <= v < rank for v in axes) and \
            sorted(v % rank for v in axes) == [2, 3]
        if not ok:
            shown = "all axes" if not axes else f"axes {axes}"
            fail(f"{node_label(node)}: a mean over {shown} of a tensor of shape "
                 f"{list(self.act[x].shape[1:])} per image is not supported (only over H and "
                 "W, axes [2, 3] or [-2, -1] of [N, C, H, W]: a global_avgpool)")
        self.emit(node, {"name": self.layer_name(node), "type": "global_avgpool"}, [x],
                  node.output[0], self.scale[x])

    def clamp_layer(self, node):
        x = node.input[0]
        s = self.scale[x]
        if node.op_type == "Relu":
            layer = {"name": self.layer_name(node), "type": "relu"}
        else:
            lo, hi = clamp_codes(*clip_bounds(node, self.g), s)
            if lo > hi:
                fail(f"{node_label(node)}: clip range quantises to an empty range [{lo}, {hi}]")
            layer = {"name": self.layer_name(node), "type": "clamp", "lo": lo, "hi": hi}
        self.emit(node, layer, [x], node.output[0], s)

    def flatten(self, node):
        x = node.input[0]
        if node.op_type == "Flatten":
            check_attrs(node, {"axis"})
            if attrs(node).get("axis", 1) != 1:
                fail(f"{node_label(node)}: only axis = 1 is supported")
        else:
            check_attrs(node, {"allowzero"})
            shape = [int(v) for v in self.g.const(node, node.input[1], "shape").reshape(-1)]
            per_image = int(np.prod(self.act[x].shape[1:]))
            if len(shape) != 2 or shape[1] not in (-1, per_image) or shape[0] not in (-1, 0, 1):
                fail(f"{node_label(node)}: only a reshape to [N, -1] is supported, got {shape}")
        if math.prod(self.act[x].shape[2:]) == 1:  # already [C][1][1] or [C]: nothing to do
            self.src[node.output[0]] = self.src_of(node, x)
            self.scale[node.output[0]] = self.scale[x]
            self.out_tensor = node.output[0]
            return
        self.emit(node, {"name": self.layer_name(node), "type": "flatten"}, [x], node.output[0],
                  self.scale[x])

    def concat(self, node):
        """A Concat along the channels (axis 1 or -3 of [N, C, H, W]) -> a concat layer. Its
        inputs share one int8 scale (share_scales); checked here again, never mixed."""
        check_attrs(node, {"axis"})
        out = node.output[0]
        rank = self.act[out].ndim
        axis = attrs(node).get("axis")
        if rank != 4 or axis is None or axis % rank != 1:
            fail(f"{node_label(node)}: a Concat along axis {axis} of a tensor of shape "
                 f"{list(self.act[out].shape[1:])} per image is not supported (only along the "
                 "channels, axis 1 or -3 of [N, C, H, W])")
        consts = [i for i in node.input if i in self.g.inits]
        if consts:
            fail(f"{node_label(node)}: concatenates the constant '{consts[0]}' (only layer "
                 "outputs and the network input)")
        ins = [i for i in node.input if i]
        if len(ins) == 1:
            return self.passthrough(node)
        if len(ins) > MAX_CONCAT_INPUTS:
            fail(f"{node_label(node)}: {len(ins)} inputs, more than the network format's "
                 f"{MAX_CONCAT_INPUTS} (docs/network-format.md)")
        for t in ins:
            if self.act[t].shape[2:] != self.act[ins[0]].shape[2:]:
                fail(f"{node_label(node)}: concatenates '{ins[0]}' of shape "
                     f"{list(self.act[ins[0]].shape[1:])} and '{t}' of shape "
                     f"{list(self.act[t].shape[1:])} per image: a concat needs one H x W")
        scales = [self.scale[t] for t in ins]
        if any(t in self.sel for t in ins) and all(math.isclose(v, scales[0], rel_tol=1e-9)
                                                   for v in scales):
            # joins channel selections: a selection of the same maps (no layer)
            self.set_sources(out, [s for t in ins for s in self.channel_sources(node, t)],
                             scales[0])
            return
        for t in ins:
            self.src_of(node, t)
        if any(not math.isclose(v, scales[0], rel_tol=1e-9) for v in scales):
            k = next(k for k, v in enumerate(scales) if not math.isclose(v, scales[0],
                                                                          rel_tol=1e-9))
            fail(f"{node_label(node)}: its inputs '{ins[0]}' and '{ins[k]}' have int8 scales "
                 f"{scales[0]:.6g} and {scales[k]:.6g}; a concat needs one (docs/cli.md, "
                 "strata import, Concat)")
        self.emit(node, {"name": self.layer_name(node), "type": "concat"}, ins, out, scales[0])

    def slice_layer(self, node, x, out, begin, end):
        """Channels [begin, end) of x as a slice layer (nothing when that is all of them)."""
        c = int(self.act[x].shape[1])
        if x in self.sel:   # a slice of a selection: the selection of those channels
            if not 0 <= begin < end <= c:
                fail(f"{node_label(node)}: output '{out}' takes channels [{begin}, {end}) of {c}: "
                     "empty (a slice needs at least one channel)")
            self.set_sources(out, self.sel[x][begin:end], self.scale[x])
            return
        if (begin, end) == (0, c):
            self.src[out] = self.src_of(node, x)
            self.scale[out] = self.scale[x]
            self.out_tensor = out
            return
        if not 0 <= begin < end <= c:
            fail(f"{node_label(node)}: output '{out}' takes channels [{begin}, {end}) of {c}: "
                 "empty (a slice needs at least one channel)")
        layer = {"name": self.layer_name(node), "type": "slice", "begin": int(begin),
                 "end": int(end)}
        self.emit(node, layer, [x], out, self.scale[x])

    def split(self, node):
        """A Split along the channels -> one slice layer per output that something reads (the
        split sizes from the `split` input or attribute, `num_outputs` or equal parts: taken
        from the outputs' shapes as onnxruntime computed them)."""
        check_attrs(node, {"axis", "split", "num_outputs"})
        x = node.input[0]
        rank = self.act[x].ndim
        axis = attrs(node).get("axis", 0)
        if rank != 4 or not -rank <= axis < rank or axis % rank != 1:
            fail(f"{node_label(node)}: a Split along axis {axis} of a tensor of shape "
                 f"{list(self.act[x].shape[1:])} per image is not supported (only along the "
                 "channels, axis 1 or -3 of [N, C, H, W])")
        begin = 0
        for o in node.output:
            size = int(self.act[o].shape[1]) if o else 0
            if o and (self.g.consumers.get(o) or o in self.g.outputs):
                self.slice_layer(node, x, o, begin, begin + size)
            begin += size

    def slice(self, node):
        """A Slice of the channels (step 1; negative and out-of-range starts and ends as ONNX
        defines them) -> a slice layer; a slice of H or W, or a step other than 1, is refused
        (a Slice that keeps all of an axis with step 1 is no slice of it)."""
        g = self.g
        x, out = node.input[0], node.output[0]
        shape = self.act[x].shape
        rank = len(shape)
        a = attrs(node)
        if len(node.input) > 1:  # opset 10+: starts, ends, axes, steps are inputs
            check_attrs(node, set())

            def arg(k, what):
                if len(node.input) <= k or not node.input[k]:
                    return None
                return [int(v) for v in g.const(node, node.input[k], what).reshape(-1)]
            starts, ends = arg(1, "starts"), arg(2, "ends")
            axes, steps = arg(3, "axes"), arg(4, "steps")
        else:
            check_attrs(node, {"starts", "ends", "axes"})
            starts, ends = list(a.get("starts", [])), list(a.get("ends", []))
            axes, steps = a.get("axes"), None
        axes = list(range(len(starts))) if axes is None else list(axes)
        steps = [1] * len(starts) if steps is None else steps
        if not len(starts) == len(ends) == len(axes) == len(steps):
            fail(f"{node_label(node)}: starts, ends, axes and steps differ in length")
        begin, end = 0, int(shape[1]) if rank > 1 else 0
        for st, en, ax, step in zip(starts, ends, axes, steps):
            if not -rank <= ax < rank:
                fail(f"{node_label(node)}: axis {ax} outside the input's {rank} dimensions")
            ax %= rank
            dim = int(shape[ax])
            st = st + dim if st < 0 else st
            en = en + dim if en < 0 else en
            st, en = min(max(st, 0), dim), min(max(en, 0), dim)
            whole = step == 1 and (st, en) == (0, dim)
            if rank == 4 and ax == 1 and step == 1:
                begin, end = st, en
            elif not whole:
                what = {0: "the batch", 1: "the channels", 2: "H", 3: "W"}.get(ax, f"axis {ax}") \
                    if rank == 4 else f"axis {ax} of a {rank}-D tensor"
                fail(f"{node_label(node)}: a Slice of {what} with step {step} is not supported "
                     "(only channels, axis 1 of [N, C, H, W], with step 1)")
        self.slice_layer(node, x, out, begin, end)

    def resize_factor(self, node, x, out):
        """The integer factor s (2..8) of a nearest upsampling by s on H and W, 1 on N and C,
        from a Resize's or an Upsample's scales or sizes (as constants), or a failure naming
        the node."""
        g = self.g
        a = attrs(node)
        in_shape = list(self.act[x].shape)
        rank = len(in_shape)
        scales = sizes = None
        if node.op_type == "Upsample":
            check_attrs(node, {"mode", "scales"})
            if len(node.input) > 1 and node.input[1]:
                scales = g.const(node, node.input[1], "scales").reshape(-1)
            else:
                scales = np.asarray(a.get("scales", []), np.float64)
        else:
            if len(node.input) == 2:   # opset 10: X, scales
                scales = g.const(node, node.input[1], "scales").reshape(-1)
            else:
                if len(node.input) > 2 and node.input[2]:
                    scales = g.const(node, node.input[2], "scales").reshape(-1)
                if len(node.input) > 3 and node.input[3]:
                    sizes = g.const(node, node.input[3], "sizes").reshape(-1)
            axes = a.get("axes")
            if axes is not None:   # opset 18: scales / sizes of these axes only
                full = np.asarray(in_shape if sizes is not None else [1.0] * rank, np.float64)
                vals = sizes if sizes is not None else scales
                if vals is None or len(vals) != len(axes):
                    fail(f"{node_label(node)}: axes {list(axes)} do not match its scales/sizes")
                for ax, v in zip(axes, vals):
                    full[ax % rank] = v
                if sizes is not None:
                    sizes = full
                else:
                    scales = full
        if scales is not None and scales.size == 0:
            scales = None
        if sizes is not None and sizes.size == 0:
            sizes = None
        if sizes is not None:
            if len(sizes) != rank:
                fail(f"{node_label(node)}: sizes {sizes.tolist()} for a {rank}-D input")
            scales = np.asarray(sizes, np.float64) / np.asarray(in_shape, np.float64)
            scales[0] = 1.0 if sizes[0] == in_shape[0] else scales[0]
            what = f"sizes {[int(v) for v in sizes]} (input {in_shape})"
        elif scales is not None:
            what = f"scales {[float(v) for v in scales]}"
        else:
            fail(f"{node_label(node)}: neither scales nor sizes given")
        sc = [float(v) for v in scales]
        ok = rank == 4 and len(sc) == 4 and sc[0] == 1 and sc[1] == 1 and sc[2] == sc[3] \
            and sc[2] == int(sc[2]) and sc[2] >= 2
        if not ok:
            fail(f"{node_label(node)}: {what}: only the same integer factor of at least 2 on H "
                 "and W and 1 on N and C is supported (an upsample layer)")
        f = int(sc[2])
        if f > MAX_UPSAMPLE:
            fail(f"{node_label(node)}: factor {f} is above the network format's upsample limit "
                 f"{MAX_UPSAMPLE} (docs/network-format.md)")
        return f

    def resize(self, node):
        """A nearest Resize (or Upsample) by an integer factor s on H and W whose pixels are
        those of floor(y / s), floor(x / s) -> an upsample layer. Checked from the coordinate
        transformation and the rounding ONNX defines (asymmetric with floor; half_pixel and
        pytorch_half_pixel with either round_prefer mode; whatever else selects the same
        pixels for this factor and size), and on the calibration images against onnxruntime."""
        a = attrs(node)
        x, out = node.input[0], node.output[0]
        opset = next((o.version for o in self.g.model.opset_import
                      if o.domain in ("", "ai.onnx")), 13)

        def text(v, default):
            v = a.get(v, default)
            return v.decode() if isinstance(v, bytes) else v
        mode = text("mode", "nearest")
        if mode != "nearest":
            fail(f"{node_label(node)}: mode '{mode}' is not supported (only nearest "
                 "upsampling by an integer factor: an upsample layer)")
        if node.op_type == "Resize":
            check_attrs(node, {"mode", "coordinate_transformation_mode", "nearest_mode",
                               "cubic_coeff_a", "exclude_outside", "extrapolation_value",
                               "antialias", "axes", "keep_aspect_ratio_policy"})
            if a.get("exclude_outside", 0) or a.get("antialias", 0):
                fail(f"{node_label(node)}: exclude_outside / antialias are not supported")
        f = self.resize_factor(node, x, out)
        if node.op_type == "Upsample" or opset < 11:
            ctm, nm = "asymmetric", "floor"
        else:
            ctm = text("coordinate_transformation_mode", "half_pixel")
            nm = text("nearest_mode", "round_prefer_floor")
        for n in self.act[x].shape[2:]:
            if not same_as_floor(ctm, nm, f, int(n)):
                fail(f"{node_label(node)}: coordinate_transformation_mode '{ctm}' with "
                     f"nearest_mode '{nm}' does not select pixel floor(y / {f}) for every output "
                     f"pixel of a {n}-pixel axis (an upsample layer's; asymmetric with floor, "
                     "as F.interpolate and nn.Upsample export, does)")
        want = np.repeat(np.repeat(self.act[x], f, axis=2), f, axis=3)
        if want.shape != self.act[out].shape or not np.array_equal(
                want.astype(np.float32), self.act[out].astype(np.float32)):
            fail(f"{node_label(node)}: onnxruntime's output is not the nearest upsampling by "
                 f"{f} (pixel floor(y / {f}), floor(x / {f})) on the calibration images")
        layer = {"name": self.layer_name(node), "type": "upsample", "scale": f}
        self.emit(node, layer, [x], out, self.scale[x])

    def passthrough(self, node):
        if node.input[0] in self.sel:
            self.sel[node.output[0]] = self.sel[node.input[0]]
            self.scale[node.output[0]] = self.scale[node.input[0]]
            self.out_tensor = node.output[0]
            return
        self.src[node.output[0]] = self.src_of(node, node.input[0])
        self.scale[node.output[0]] = self.scale[node.input[0]]
        self.out_tensor = node.output[0]

    # ---- kernels above the hardware's largest: space-to-depth (docs/cli.md, "Large kernels")

    def space_to_depth(self, node, x, w, qw, k, s, pad):
        """A convolution of kernel k > --max-kernel at stride s >= 2 as two exact layers: a
        `phase` conv (kernel s, stride s, weights one-hot, bias 0, M = 1, S = 0: a copy of
        int8 values) that rearranges the input [C, H, W] into s * s * C channels at about
        H / s x W / s, channel (by * s + bx) * C + c holding input pixel (s * Y + by - r,
        s * X + bx - r); then the convolution with kernel ceil(k / s) at stride 1 over it,
        w'[o][(by * s + bx) * C + c][ay][ax] = w[o][c][s * ay + by][s * ax + bx] (0 where
        that tap is beyond k). The same products are summed, in the same int32 accumulator:
        the output is the original layer's bit for bit. Returns the new (x, w, qw, k, s, pad)."""
        kk = -(-k // s)
        if s < 2 or kk > self.max_kernel:   # the format allows it; a target may not
            self.g.notes.append(
                f"note: {node_label(node)}: kernel {k}x{k} at stride {s} is above --max-kernel "
                f"{self.max_kernel} and kept (space-to-depth would leave a {kk}x{kk} kernel); "
                "the compiler refuses it for a target whose max_kernel is smaller")
            return x, w, qw, k, s, pad
        c = int(self.act[x].shape[1])
        pads = [pad] * 4 if isinstance(pad, int) else list(pad)
        out_hw = self.act[node.output[0]].shape[2:]
        phase_pad, conv_pad, size = [0] * 4, [0] * 4, []
        for ax, (n, before, o) in enumerate(zip(self.act[x].shape[2:], pads[:2], out_hw)):
            m, r = divmod(int(before), s)
            need = int(o) + kk - 1 - m          # phase rows the convolution reads
            full = -(-(int(n) + r) // s)        # phase rows that hold an input row
            pick = next(((pb, (n + r + pb - s) // s + 1) for pb in range(s)
                         if (n + r + pb - s) // s + 1 == need), None)
            if pick is None and need > full:
                pick = next((pb, full) for pb in range(s) if (n + r + pb - s) // s + 1 == full)
            pf = need - pick[1] if pick is not None else kk
            if pick is None or m >= kk or pf >= kk or \
                    window_out(int(pick[1]), kk, 1, m, pf) != int(o):
                self.g.notes.append(
                    f"note: {node_label(node)}: kernel {k}x{k} at stride {s} with pads {pads} "
                    f"on {int(n)} pixels has no space-to-depth form and is kept")
                return x, w, qw, k, s, pad
            phase_pad[ax], phase_pad[ax + 2] = r, pick[0]
            conv_pad[ax], conv_pad[ax + 2] = m, pf
            size.append(int(pick[1]))
        base = re.sub(r"[^A-Za-z0-9_-]", "_", node.name or node.output[0]).strip("_") or "conv"
        name = self.fresh_name(f"{base}_s2d")
        cs = c * s * s
        wp = np.zeros((cs, c, s, s), np.int8)
        for by in range(s):
            for bx in range(s):
                for ci in range(c):
                    wp[(by * s + bx) * c + ci, ci, by, bx] = 1
        self.files[f"{name}_weight.npy"] = wp
        self.files[f"{name}_bias.npy"] = np.zeros(cs, np.int32)
        self.files[f"{name}_mult.npy"] = np.ones(cs, np.uint16)
        self.files[f"{name}_shift.npy"] = np.zeros(cs, np.uint8)
        layer = {"name": name, "type": "conv", "out_channels": cs, "kernel": s, "stride": s,
                 "pad": phase_pad[0] if len(set(phase_pad)) == 1 else phase_pad,
                 "inputs": self.src_of(node, x)}
        if layer["pad"] == 0:
            del layer["pad"]
        xa = self.act[x]
        xp = np.pad(xa, ((0, 0), (0, 0), (phase_pad[0], max(0, s * size[0] - phase_pad[0] -
                                                              xa.shape[2])),
                         (phase_pad[1], max(0, s * size[1] - phase_pad[1] - xa.shape[3]))))
        xp = xp[:, :, :s * size[0], :s * size[1]].reshape(len(xa), c, size[0], s, size[1], s)
        t = self.synth(node, layer, xp.transpose(0, 3, 5, 1, 2, 4).reshape(len(xa), cs, *size))
        self.scale[t] = self.scale[x]

        def rearranged(v, dtype):
            out = np.zeros((v.shape[0], cs, kk, kk), dtype)
            for ky in range(k):
                for kx in range(k):
                    ch = ((ky % s) * s + kx % s) * c
                    out[:, ch:ch + c, ky // s, kx // s] = v[:, :, ky, kx]
            return out
        w = rearranged(w, np.float64)
        if qw is not None:
            qw = (rearranged(qw[0], qw[0].dtype), qw[1])
        return t, w, qw, kk, 1, conv_pad[0] if len(set(conv_pad)) == 1 else conv_pad

    # ---- standalone batch normalisation (docs/cli.md, "Standalone BatchNormalization")

    def bn_params(self, bn):
        """A BatchNormalization in eval mode: its per-channel factor f = gamma / sqrt(var + eps),
        mean and beta (y = (x - mean) * f + beta), refused with the node named when it cannot
        be folded."""
        if self.g.qdq:
            fail(f"{node_label(bn)}: in a QDQ model batch normalisation must be folded into "
                 "the convolution before quantisation (onnxruntime.quantization."
                 "quant_pre_process does it)")
        check_attrs(bn, {"epsilon", "momentum", "training_mode", "spatial"})
        if attrs(bn).get("training_mode", 0) or len(bn.output) > 1:
            fail(f"{node_label(bn)}: training-mode batch normalisation is not supported")
        eps = attrs(bn).get("epsilon", 1e-5)
        gamma, beta, mean, var = (self.g.const(bn, t, "BatchNormalization parameter")
                                  for t in bn.input[1:5])
        if np.any(var + eps <= 0):
            fail(f"{node_label(bn)}: variance + epsilon is not positive")
        return gamma / np.sqrt(var + eps), mean, beta

    def bn_affine(self, bn):
        """A BatchNormalization in eval mode as y = f * x + shift per channel."""
        f, mean, beta = self.bn_params(bn)
        return f, beta - mean * f

    def batchnorm(self, node):
        """A BatchNormalization that follows no Conv (DenseNet's, after a Concat): folded into
        the Conv after it when that Conv is its only reader, has groups 1 and no padding (a
        padded tap reads 0 where the BN's shift would be summed: not exact otherwise); else a
        1x1 depthwise layer with weight f (quantised per channel), bias shift, and the Relu /
        Clip / table after it fused."""
        f, shift = self.bn_affine(node)
        self.affine(node, node.input[0], f, shift, node.output[0])

    def per_channel_constant(self, node):
        """(map, its values per channel) of a Mul / Add of a map [N, C, H, W] and a constant
        that varies along C at most, or None."""
        ins = [i for i in node.input if i]
        maps = [i for i in ins if i not in self.g.inits]
        consts = [i for i in ins if i in self.g.inits]
        if self.g.qdq or len(maps) != 1 or len(consts) != 1 or self.act[maps[0]].ndim != 4:
            return None
        shape = (1,) + tuple(self.act[maps[0]].shape[1:])
        v = self.g.inits[consts[0]].astype(np.float64)
        try:
            if np.broadcast_shapes(v.shape, shape) != shape:
                return None
        except ValueError:
            return None
        full = np.broadcast_to(v, shape)
        per = full[0, :, 0, 0]
        return (maps[0], per) if np.array_equal(full, np.broadcast_to(
            per[None, :, None, None], shape)) else None

    def channel_affine(self, node):
        """A Mul of a map by a per-channel constant, optionally followed (as its only reader) by
        an Add of one, or such an Add alone (x * w.view(1, C, 1, 1) + b.view(1, C, 1, 1)):
        y = f * x + shift per channel, converted as a standalone BatchNormalization. False when
        the node is no such form."""
        m = self.per_channel_constant(node)
        if m is None:
            return False
        x, per = m
        f, shift, out = (per, np.zeros_like(per), node.output[0]) if node.op_type == "Mul" \
            else (np.ones_like(per), per, node.output[0])
        nxt = self.g.only_consumer(out)
        if node.op_type == "Mul" and nxt is not None and nxt.op_type == "Add":
            a = self.per_channel_constant(nxt)
            if a is not None and a[0] == out:
                shift, out = a[1], nxt.output[0]
                self.done.add(id(nxt))
        self.affine(node, x, f, shift, out)
        return True

    def affine(self, node, x, f, shift, out):
        """out = f * x + shift per channel (node: the first ONNX node of it)."""
        nxt = self.g.only_consumer(out)
        if nxt is not None and nxt.op_type == "Conv" and self.pad_free_dense(nxt, x):
            self.bn_fold[out] = (x, f, shift, node)
            return
        c = int(self.act[x].shape[1])
        pre = out
        out, _, a, table = self.layer_activation(node, out)
        name = self.layer_name(node)
        layer = {"name": name, "type": "depthwise", "kernel": 1}
        self.set_activation(layer, a, table)
        self.requant_files(name, node, f.reshape(c, 1, 1, 1), shift, self.scale[x],
                           pre if table is not None else out)
        self.emit(node, layer, [x], out, self.scale[out])

    def pad_free_dense(self, conv, x):
        """Whether the Conv node reads its input with groups 1 and no padding."""
        a = attrs(conv)
        if a.get("group", 1) != 1 or len(conv.input) < 2 or conv.input[1] not in self.g.inits:
            return False
        w = self.g.inits[conv.input[1]]
        if w.ndim != 4:
            return False
        _, _, pad = kernel_geometry(conv, self.g, self.act[x].shape, w.shape)
        return pad == 0

    def fold_bn_before(self, x, w, b):
        """conv(f * x + shift) = conv'(x): w'[o][i] = w[o][i] * f[i], b'[o] = b[o] + sum of
        w[o][i][ky][kx] * shift[i] (every tap reads the image: no padding)."""
        x, f, shift, _ = self.bn_fold[x]
        return x, w * f[None, :, None, None], b + np.einsum("oikl,i->o", w, shift)

    # ---- channel shuffles: Reshape / Transpose as channel selections (docs/cli.md, "Channel
    # shuffle")

    def rearranges(self, node):
        """Whether a Reshape is part of a rearrangement (not a flatten to [N, -1])."""
        return node.input[0] in self.inflight or self.act[node.output[0]].ndim != 2

    def rearrange(self, node):
        """A Reshape or Transpose of a map [N, C, H, W] (or of such a node's output): the
        elements each output element takes, as flat indices into the map per image. When the
        result is [N, C, H, W] again and output channel c is input channel p[c] at every pixel,
        it is the selection p of the map's channels (ShuffleNet's channel shuffle); else it
        stays in flight and only another Reshape / Transpose may read it."""
        g = self.g
        x, out = node.input[0], node.output[0]
        if node.op_type == "Reshape":
            check_attrs(node, {"allowzero"})
            if len(node.input) < 2 or node.input[1] not in g.inits:
                fail(f"{node_label(node)}: its target shape '{node.input[1]}' stays unknown at "
                     "import time (neither a constant nor computed from static shapes; "
                     "docs/cli.md, Static shapes)")
        else:
            check_attrs(node, {"perm"})
        xs, ys = self.act[x].shape, self.act[out].shape
        perm = list(attrs(node).get("perm", range(len(xs) - 1, -1, -1)))
        if xs[0] != ys[0] or node.op_type == "Transpose" and perm[0] != 0:
            fail(f"{node_label(node)}: moves the batch (shape {list(xs)} -> {list(ys)} on "
                 f"{xs[0]} images): only rearrangements within each image are supported")
        if x in self.inflight:
            base, idx, _ = self.inflight[x]
        else:
            if len(xs) != 4:
                fail(f"{node_label(node)}: rearranges '{x}' of shape {list(xs[1:])} per image "
                     "(only a map [N, C, H, W] may be reshaped or transposed, toward a channel "
                     "shuffle)")
            base, idx = x, np.arange(math.prod(xs[1:])).reshape(xs[1:])
        if node.op_type == "Reshape":
            idx = idx.reshape(ys[1:])
        else:
            idx = idx.transpose([p - 1 for p in perm[1:]])
        bs = self.act[base].shape
        if len(ys) == 4 and tuple(ys[2:]) == tuple(bs[2:]) and ys[1] == bs[1]:
            c, hw = ys[1], ys[2] * ys[3]
            p = idx[:, 0, 0] // hw
            if np.array_equal(idx, (p[:, None] * hw + np.arange(hw)).reshape(ys[1:])):
                srcs = self.channel_sources(node, base)
                self.set_sources(out, [srcs[int(k)] for k in p], self.scale[base])
                if self.shuffle_conv and out in self.sel:
                    self.materialise(node, out)
                return
        self.inflight[out] = (base, idx, node)
        self.scale[out] = self.scale[base]

    def layer_channels(self, layer):
        return int(self.layer_act(layer).shape[1])

    def layer_act(self, layer):
        return self.act[self.g.input.name if layer == "input" else self.tensor_of[layer]]

    def channel_sources(self, node, t):
        """[(layer, channel)] of each channel of tensor t."""
        if t in self.sel:
            return self.sel[t]
        layer = self.src_of(node, t)
        return [(layer, c) for c in range(int(self.act[t].shape[1]))]

    def set_sources(self, out, sources, scale):
        """Tensor `out` takes `sources`: one whole map in order is that map, else a selection."""
        layer = sources[0][0]
        self.scale[out] = scale
        self.out_tensor = out
        if sources == [(layer, c) for c in range(self.layer_channels(layer))]:
            self.src[out] = layer
        else:
            self.sel[out] = sources

    def synth(self, node, layer, act):
        """Appends a layer the import makes of its own (a view, a permutation): its output
        tensor is a name of its own with these float values."""
        t = f"{layer['name']}#out"
        self.act[t] = act
        self.append(node, layer, t)
        return t

    def fresh_name(self, base):
        name, i = base, 1
        while name in self.names:
            i += 1
            name = f"{base}_{i}"
        self.names.add(name)
        return name

    def view(self, node, sources):
        """The distinct channels of `sources` as slice / concat layers (views, no op of their
        own in the compiler): their runs of consecutive channels of one map, maps in network
        order. Returns (the view's tensor, {source: its channel in the view})."""
        order = {"input": -1} | {l["name"]: i for i, l in enumerate(self.layers)}
        uniq = sorted(set(sources), key=lambda s: (order[s[0]], s[1]))
        runs = []
        for layer, c in uniq:
            if runs and runs[-1][0] == layer and runs[-1][2] == c:
                runs[-1][2] = c + 1
            else:
                runs.append([layer, c, c + 1])
        scales = {self.scale_of_layer(layer) for layer, _, _ in runs}
        if len(scales) != 1:
            fail(f"{node_label(node)}: reads a channel selection of maps with different int8 "
                 "scales (a view stacks int8 codes)")
        s = scales.pop()
        base = re.sub(r"[^A-Za-z0-9_-]", "_", node.name or node.output[0]).strip("_") or "sel"
        parts = []
        for layer, b, e in runs:
            if (b, e) == (0, self.layer_channels(layer)):
                parts.append((layer, self.layer_act(layer)))
                continue
            name = self.fresh_name(f"{base}_pick")
            act = self.layer_act(layer)[:, b:e]
            self.synth(node, {"name": name, "type": "slice", "begin": b, "end": e,
                              "inputs": layer}, act)
            parts.append((name, act))
        if len(parts) > MAX_CONCAT_INPUTS:
            fail(f"{node_label(node)}: reads a channel selection of {len(parts)} runs of "
                 f"channels, more than a concat's {MAX_CONCAT_INPUTS} (docs/network-format.md)")
        if len(parts) == 1:
            t = self.tensor_of.get(parts[0][0], self.g.input.name)
        else:
            name = self.fresh_name(f"{base}_view")
            t = self.synth(node, {"name": name, "type": "concat",
                                  "inputs": [p[0] for p in parts]},
                           np.concatenate([p[1] for p in parts], axis=1))
        self.scale[t] = s
        return t, {src: k for k, src in enumerate(uniq)}

    def scale_of_layer(self, layer):
        return self.scale[self.g.input.name if layer == "input" else self.tensor_of[layer]]

    def select_input(self, node, x, w, b, qw, qb, depthwise, group):
        """A Conv reading the channel selection x: it reads the view of the selected maps
        instead, with its weights permuted to the view's channel order (same products, same
        sums: exact). A dense conv sums the weights of a channel selected twice; a depthwise
        conv permutes its filters (its output is then a selection of its own channels); a
        grouped conv reads the selection made into a map. Returns the new (x, w, b, qw, qb,
        output selection or None)."""
        sources = self.sel[x]
        if depthwise and len(set(sources)) == len(sources):
            t, pos = self.view(node, sources)
            order = [pos[s] for s in sources]       # selection channel -> view channel
            inv = np.argsort(order)                 # view channel -> selection channel
            if qw is not None:
                qw = (qw[0][inv], qw[1][inv])
            if qb is not None:
                qb = (qb[0].reshape(-1)[inv], qb[1][inv])
            return t, w[inv], b[inv], qw, qb, order
        if group != 1 or depthwise:
            self.materialise(node, x)
            return x, w, b, qw, qb, None
        t, pos = self.view(node, sources)
        wv = np.zeros((w.shape[0], len(pos)) + w.shape[2:])
        for ci, s in enumerate(sources):
            wv[:, pos[s]] += w[:, ci]
        if qw is not None and len(pos) == len(sources):
            q = np.zeros(wv.shape, np.int64)
            for ci, s in enumerate(sources):
                q[:, pos[s]] = qw[0][:, ci]
            qw = (q, qw[1])
        else:
            qw = None
        return t, wv, b, qw, qb, None

    def select_output(self, name, out, order):
        """The depthwise layer `name` computed `out` in view order: `out` is the selection of
        its channels `order`."""
        t = self.tensor_of[name]
        act = np.empty_like(self.act[t])
        act[:, order] = self.act[t]
        self.act[f"{name}#out"] = act
        self.tensor_of[name] = f"{name}#out"
        self.src[f"{name}#out"] = name
        self.scale[f"{name}#out"] = self.scale[out]
        del self.src[out]
        self.sel[out] = [(name, k) for k in order]

    def materialise(self, node, t):
        """The selection t made into a map: a 1x1 convolution over its view whose weights are
        the permutation (1 from each view channel to the channels that select it), bias 0,
        M = 1, S = 0, no activation: y = x for every int8 x, exactly."""
        sources = self.sel.pop(t)
        view, pos = self.view(node, sources)
        base = re.sub(r"[^A-Za-z0-9_-]", "_", t).strip("_") or "sel"
        name = self.fresh_name(f"{base}_perm")
        c = len(sources)
        w = np.zeros((c, len(pos), 1, 1), np.int8)
        for k, s in enumerate(sources):
            w[k, pos[s], 0, 0] = 1
        self.files[f"{name}_weight.npy"] = w
        self.files[f"{name}_bias.npy"] = np.zeros(c, np.int32)
        self.files[f"{name}_mult.npy"] = np.ones(c, np.uint16)
        self.files[f"{name}_shift.npy"] = np.zeros(c, np.uint8)
        layer = {"name": name, "type": "conv", "out_channels": c, "kernel": 1,
                 "inputs": self.src[view]}
        self.append(node, layer, t)
        self.materialised += 1

    def convert(self):
        for node in self.g.nodes:
            if id(node) in self.done:
                continue
            op = node.op_type
            if op == "Conv":
                self.conv(node)
            elif op == "Gemm":
                self.gemm(node)
            elif op == "MatMul":
                self.matmul(node)
            elif op == "Mul" and not any(i in self.g.inits for i in node.input) and \
                    self.g.table_region(node.input[0], shared_ok=True) is None and \
                    self.g.table_region(node.input[1], shared_ok=True) is None:
                self.mul(node)
            elif op in TABLE_OPS and op != "Add" or op == "Add" and \
                    any(i in self.g.inits for i in node.input):
                self.table_layer(node)
            elif op == "MaxPool":
                self.pool(node, "maxpool")
            elif op == "AveragePool":
                self.pool(node, "avgpool")
            elif op == "GlobalAveragePool":
                self.emit(node, {"name": self.layer_name(node), "type": "global_avgpool"},
                          [node.input[0]], node.output[0], self.scale[node.input[0]])
            elif op == "ReduceMean":
                self.reduce_mean(node)
            elif op == "Pad":
                self.pad(node)
            elif op == "Add":
                self.add(node)
            elif op == "Transpose" or op == "Reshape" and self.rearranges(node):
                self.rearrange(node)
            elif op in ("Flatten", "Reshape"):
                self.flatten(node)
            elif op in ("Identity", "Dropout"):
                self.passthrough(node)
            elif op == "Concat":
                self.concat(node)
            elif op == "Split":
                self.split(node)
            elif op == "Slice":
                self.slice(node)
            elif op in ("Resize", "Upsample"):
                self.resize(node)
            elif op == "BatchNormalization":
                self.batchnorm(node)
            else:
                unsupported(node)
        # A graph output that is a channel selection (a shuffle no layer has read) becomes a
        # layer of its own; one that is no permutation of channels is refused there.
        for t in self.g.outputs:
            if t in self.sel or t in self.inflight:
                self.src_of(next(n for n in self.g.nodes if t in n.output), t)
        if not self.layers:
            fail(f"graph output '{self.g.outputs[0]}' is not the result of a supported layer")
        # Each graph output is a layer's map, in the graph's order (docs/network-format.md,
        # "Outputs"); the last layer must be one of them.
        self.outputs = []
        for t in self.g.outputs:
            layer = self.src.get(t)
            if layer is None or layer == "input":
                fail(f"graph output '{t}' is not the result of a supported layer")
            if layer in self.outputs:
                k = self.outputs.index(layer)
                fail(f"graph outputs '{self.g.outputs[k]}' and '{t}' are the same layer's map "
                     f"('{layer}'); a network lists each output layer once")
            self.outputs.append(layer)
        if self.layers[-1]["name"] not in self.outputs:
            fail(f"the last layer '{self.layers[-1]['name']}' "
                 f"({node_label(self.node_of[self.layers[-1]['name']])}) computes no graph output")


def same_as_floor(ctm, nearest_mode, f, n):
    """Whether ONNX Resize's nearest sampling with this coordinate transformation and
    nearest_mode, upsampling an n-pixel axis by the integer f, reads input pixel floor(y / f)
    for every output pixel y (the ONNX operator's definition, clamped to the input)."""
    y = np.arange(n * f, dtype=np.float64)
    if ctm == "asymmetric":
        v = y / f
    elif ctm in ("half_pixel", "pytorch_half_pixel", "half_pixel_symmetric"):
        # pytorch_half_pixel differs only for a 1-pixel output; half_pixel_symmetric only for
        # a size that is not scale * input
        v = (y + 0.5) / f - 0.5
    elif ctm == "align_corners":
        v = y * (n - 1) / (n * f - 1)
    elif ctm == "tf_half_pixel_for_nn":
        v = (y + 0.5) / f
    else:
        return False
    if nearest_mode == "floor":
        i = np.floor(v)
    elif nearest_mode == "ceil":
        i = np.ceil(v)
    elif nearest_mode == "round_prefer_floor":
        i = np.where(v - np.floor(v) == 0.5, np.floor(v), np.floor(v + 0.5))
    elif nearest_mode == "round_prefer_ceil":
        i = np.floor(v + 0.5)
    else:
        return False
    i = np.clip(i, 0, n - 1)
    return bool(np.array_equal(i, np.arange(n * f) // f))


# ---- the network format's checks --------------------------------------------------

def window_out(n, k, s, before, after, ceil_mode=False):
    """Output size along one axis (sw/src/numerics.cpp's conv_out_size / pool_out_size)."""
    span = n + before + after - k
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + before:  # the last window starts inside
        out -= 1
    return out


def acc_range(wq, bq):
    """Per output channel, the worst-case accumulator [min, max] of bias + sum(w * x) over
    int8 inputs x (strata::worst_case_acc)."""
    w = wq.reshape(wq.shape[0], -1).astype(np.int64)
    pos = np.where(w > 0, w, 0).sum(axis=1)
    neg = np.where(w < 0, -w, 0).sum(axis=1)
    b = bq.astype(np.int64)
    return b - 128 * pos - 127 * neg, b + 127 * pos + 128 * neg


def check_layer_files(conv, l, node, cout, w_shape):
    """The parameter files of a conv / depthwise / fc / add / mul layer: the shapes the reader
    expects and, for weights, an accumulator that stays inside int32."""
    name = l["name"]
    expect = {f"{name}_mult_a.npy": (cout,), f"{name}_mult_b.npy": (cout,)} \
        if l["type"] == "add" else {f"{name}_mult.npy": (cout,)} if l["type"] == "mul" else \
        {f"{name}_weight.npy": w_shape, f"{name}_bias.npy": (cout,), f"{name}_mult.npy": (cout,)}
    expect[f"{name}_shift.npy"] = (cout,)
    for f, shape in expect.items():
        have = conv.files[f].shape
        if have != tuple(shape):
            fail(f"{node_label(node)}: {f} has shape {list(have)}, the network format expects "
                 f"{list(shape)}")
    if math.prod(w_shape) > MAX_ELEMENTS:
        fail(f"{node_label(node)}: weight tensor {list(w_shape)} exceeds the network "
             f"format's {MAX_ELEMENTS} elements")
    if l["type"] in ("add", "mul"):
        return
    lo, hi = acc_range(conv.files[f"{name}_weight.npy"], conv.files[f"{name}_bias.npy"])
    bad = np.nonzero((lo < -2**31) | (hi > 2**31 - 1))[0]
    if bad.size:
        c = int(bad[0])
        fail(f"{node_label(node)}: output channel {c} can accumulate [{lo[c]}, {hi[c]}] for "
             "int8 inputs, outside int32 (docs/network-format.md, Accumulator range)")


def layer_shape(conv, l, node, shapes):
    """The output [C, H, W] the reader computes for layer l, or a failure naming the node
    where the network format refuses it."""
    c, h, w = shapes[0]
    t = l["type"]
    if t in ("conv", "depthwise", "maxpool", "avgpool"):
        k = l["kernel"]
        s = l.get("stride", k if t in ("maxpool", "avgpool") else 1)
        pads = l.get("pad", 0)
        pads = [pads] * 4 if isinstance(pads, int) else pads
        check_window_limits(node, k, s, pads, (h, w))
        ceil = l.get("ceil_mode", False)
        ho = window_out(h, k, s, pads[0], pads[2], ceil)
        wo = window_out(w, k, s, pads[1], pads[3], ceil)
        if t == "conv":
            cout = l["out_channels"]
            check_layer_files(conv, l, node, cout, (cout, c // l.get("groups", 1), k, k))
            return (cout, ho, wo)
        if t == "depthwise":
            check_layer_files(conv, l, node, c, (c, 1, k, k))
        return (c, ho, wo)
    if t == "fc":
        cout = l["out_features"]
        check_layer_files(conv, l, node, cout, (cout, c * h * w))
        return (cout, 1, 1)
    if t == "add":
        if shapes[0] != shapes[1]:
            fail(f"{node_label(node)}: operands of shapes {list(shapes[0])} and "
                 f"{list(shapes[1])}")
        check_layer_files(conv, l, node, c, (c,))
        return (c, h, w)
    if t == "mul":
        if shapes[1] != (c, 1, 1):
            fail(f"{node_label(node)}: a map of shape {list(shapes[0])} times a vector of shape "
                 f"{list(shapes[1])}, not [{c}, 1, 1]")
        check_layer_files(conv, l, node, c, (c,))
        return (c, h, w)
    if t == "global_avgpool":
        return (c, 1, 1)
    if t == "flatten":
        return (c * h * w, 1, 1)
    if t == "concat":
        return (sum(sh[0] for sh in shapes), h, w)
    if t == "slice":
        return (l["end"] - l["begin"], h, w)
    if t == "upsample":
        return (c, h * l["scale"], w * l["scale"])
    return (c, h, w)  # relu, clamp


def check_format(conv, chw):
    """Checks the layers as sw/src/network.cpp's reader will (docs/network-format.md): the
    window limits, output channels, tensor sizes, the parameter files' shapes, the
    accumulator range, each layer's output shape against onnxruntime's, and that every layer
    but the last is read. Each failure names the ONNX node, so that even with --no-check
    nothing is written that `strata info` / `strata run` would refuse."""
    shapes = {"input": tuple(chw)}
    read = set()
    for i, l in enumerate(conv.layers):
        node = conv.node_of[l["name"]]
        ins = l.get("inputs", conv.layers[i - 1]["name"] if i else "input")
        ins = ins if isinstance(ins, list) else [ins]
        read.update(ins)
        out = layer_shape(conv, l, node, [shapes[n] for n in ins])
        if not 1 <= out[0] <= MAX_DIM:
            fail(f"{node_label(node)}: {out[0]} output channels, outside the network format's "
                 f"1..{MAX_DIM}")
        if math.prod(out) > MAX_ELEMENTS:
            fail(f"{node_label(node)}: output {list(out)} exceeds the network format's "
                 f"{MAX_ELEMENTS} elements")
        onnx_shape = conv.act[conv.tensor_of[l["name"]]].shape[1:]
        if math.prod(onnx_shape) != math.prod(out) or \
                (len(onnx_shape) == 3 and tuple(onnx_shape) != out):
            fail(f"{node_label(node)}: the network format computes an output of shape "
                 f"{list(out)}, onnxruntime {list(onnx_shape)}")
        shapes[l["name"]] = out
    for l in conv.layers[:-1]:
        if l["name"] not in read and l["name"] not in conv.outputs:
            fail(f"{node_label(conv.node_of[l['name']])}: its output never reaches a graph "
                 "output")


# ---- output -----------------------------------------------------------------------

def yaml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(yaml_value(e) for e in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {yaml_value(e)}" for k, e in v.items()) + "}"
    return str(v)


def write_yaml(path, name, chw, weights, layers, source, qdq, scales, outputs):
    """scales: (input, [output, ...]), the real value of one int8 step of the input and of each
    output (docs/network-format.md); a bundle carries them to the driver (docs/bundle.md).
    outputs: the output layers in order; `outputs:` is written when there are several."""
    how = "QDQ int8, the model's own scales" if qdq else "post-training int8"
    out_scales = [float(v) for v in scales[1]]
    out_text = repr(out_scales[0]) if len(out_scales) == 1 else \
        "[" + ", ".join(repr(v) for v in out_scales) + "]"
    lines = [f"# Imported from {os.path.basename(source)} by strata import ({how}).",
             f"name: {name}", f"input: {yaml_value(list(chw))}"]
    if len(outputs) > 1:
        lines.append(f"outputs: {yaml_value(list(outputs))}")
    lines += [f"scales: {{input: {float(scales[0])!r}, output: {out_text}}}",
              f"weights: {weights}", "layers:"]
    for l in layers:
        lines.append(f"  - {yaml_value(l)}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def save_npy(path, arr):
    with open(path, "wb") as f:
        np.save(f, np.ascontiguousarray(arr))


def report(strata, yaml_path, dir_, xq, refs, s_outs, names, qdq):
    """Runs the golden model on the staged network in dir_ (writing calibration_output.npy, or
    calibration_output_<layer>.npy per output of several, there); returns the agreement lines
    to print, one block per output compared with its graph output (`refs`, in order). A golden
    run that fails is an error."""
    outs = [os.path.join(dir_, "calibration_output.npy")] if len(refs) == 1 else \
        [os.path.join(dir_, f"calibration_output_{n}.npy") for n in names]
    cmd = [strata, "run", yaml_path, "--input", xq]
    for o in outs:
        cmd += ["--output", o]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        fail(f"cannot run the golden model '{strata}': {e.strerror} (--no-check skips the "
             "agreement run)")
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
        msg = msg.removeprefix("strata: error: ")
        fail(f"the golden model could not run the imported network: {msg}")
    lines = []
    for out, ref, s_out, layer in zip(outs, refs, s_outs, names):
        y = np.load(out).astype(np.float64) * s_out
        n = ref.shape[0]
        y = y.reshape(n, -1)
        f = ref.reshape(n, -1)
        which = "" if len(refs) == 1 else f"output '{layer}': "
        if y.shape != f.shape:
            fail(f"{which}golden output shape {list(y.shape)} differs from the float model's "
                 f"{list(f.shape)}")
        err = np.abs(y - f)
        rng = float(np.max(np.abs(f))) or 1.0
        what = "onnxruntime (QDQ model)" if qdq else "float"
        lines.append(f"{which}{what} vs int8 on {n} calibration image(s): max abs error "
                     f"{err.max():.4g}, mean {err.mean():.4g} (output range +-{rng:.4g}, output "
                     f"scale {s_out:.4g}" + (f", {err.max() / s_out:.3g} output LSBs)" if qdq
                                             else ")"))
        if f.shape[1] > 1 and len(refs) == 1:
            agree = int(np.sum(np.argmax(y, axis=1) == np.argmax(f, axis=1)))
            lines.append(f"top-1 agreement: {agree}/{n} ({100.0 * agree / n:.1f} %)")
    return lines


def not_a_dir(path):
    return "is a file, not a directory" if os.path.isfile(path) else \
        "exists and is not a directory"


def check_out(out):
    """--out, before any work: an existing directory we may write in, or a path whose nearest
    existing ancestor is one (the missing directories are created when writing)."""
    if not out:
        fail("--out: empty path")
    if os.path.isdir(out):
        if not os.access(out, os.W_OK | os.X_OK):
            fail(f"--out '{out}': cannot write in the directory (permission denied)")
        return
    if os.path.lexists(out):
        fail(f"--out '{out}': {not_a_dir(out)}")
    anc = os.path.dirname(os.path.normpath(out))
    while anc and not os.path.lexists(anc):
        anc = os.path.dirname(anc)
    anc = anc or "."
    if not os.path.isdir(anc):
        fail(f"--out '{out}': '{anc}' {not_a_dir(anc)}")
    if not os.access(anc, os.W_OK | os.X_OK):
        fail(f"--out '{out}': cannot create it in '{anc}' (permission denied)")


def make_out(out):
    """Creates --out and its missing parents; returns the directories created, deepest
    first (removed again if the import then fails)."""
    missing = []
    d = os.path.normpath(out)
    while d and not os.path.isdir(d):
        missing.append(d)
        d = os.path.dirname(d)
    made = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except OSError as e:
            remove_dirs(made[::-1])
            fail(f"--out '{out}': cannot create directory '{d}': {e.strerror}")
        made.append(d)
    return made[::-1]


def remove_dirs(dirs):
    for d in dirs:
        try:
            os.rmdir(d)
        except OSError:
            pass


def output_entries(name):
    """What an import owns in --out: replaced together."""
    return [name, name + ".yaml", "calibration_input.npy", "calibration_output.npy"]


def publish(stage, out, name):
    """Moves the staged outputs into out, all or nothing: an earlier import's entries first
    move into the stage (and are removed with it); on any failure every rename is undone."""
    for e in output_entries(name):
        dst = os.path.join(out, e)
        if os.path.lexists(dst) and os.path.isdir(dst) != (e == name):
            fail(f"--out '{out}': '{dst}' exists and is not a "
                 f"{'directory' if e == name else 'file'} (not replacing it)")
    old = os.path.join(stage, ".old")
    os.mkdir(old)
    done = []   # (from, to) of each rename, to undo
    try:
        for e in output_entries(name):
            dst, src = os.path.join(out, e), os.path.join(stage, e)
            if os.path.lexists(dst):
                os.rename(dst, os.path.join(old, e))
                done.append((dst, os.path.join(old, e)))
            if os.path.lexists(src):
                os.rename(src, dst)
                done.append((src, dst))
    except OSError as err:
        for frm, to in reversed(done):
            try:
                os.rename(to, frm)
            except OSError:
                pass
        fail(f"--out '{out}': cannot move the imported network into place: {err.strerror}")


def write_network(a, name, g, conv, x, refs):
    """Writes <name>.yaml, <name>/ and calibration_input.npy into a staging directory inside
    --out, runs the agreement check there (unless --no-check) and only then moves them into
    place; the stage is removed whatever happens. Returns the report's lines."""
    try:
        stage = tempfile.mkdtemp(prefix=f".{name}.import-", dir=a.out)
    except OSError as e:
        fail(f"--out '{a.out}': cannot write in the directory: {e.strerror}")
    try:
        os.mkdir(os.path.join(stage, name))
        for fname, arr in conv.files.items():
            save_npy(os.path.join(stage, name, fname), arr)
        yaml_path = os.path.join(stage, name + ".yaml")
        write_yaml(yaml_path, name, g.chw, name, conv.layers, a.model, g.qdq,
                   (conv.scale[g.input.name], [conv.scale[t] for t in g.outputs]), conv.outputs)
        xq_path = os.path.join(stage, "calibration_input.npy")
        save_npy(xq_path, quantise(x, conv.scale[g.input.name]))
        lines = []
        if not a.no_check:
            strata = a.strata or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                              "build", "sw", "strata")
            try:
                lines = report(strata, yaml_path, stage, xq_path, refs,
                               [conv.scale[t] for t in g.outputs], conv.outputs, g.qdq)
            except ImportFailure as e:  # name the final paths, not the stage's
                raise ImportFailure(str(e).replace(stage, os.path.normpath(a.out))) from None
        publish(stage, a.out, name)
    except OSError as e:
        fail(f"--out '{a.out}': cannot write the network: {e.strerror or e}")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return lines


def load_calibration(path, g):
    """The calibration images [N][C][H][W] float32, checked against the model's input."""
    try:
        x = np.load(path, allow_pickle=False)
    except Exception as e:
        fail(f"{path}: cannot read .npy: {e}")
    if x.ndim == 3:
        x = x[None]
    if x.ndim == 4 and x.shape[0] == 0:
        fail(f"{path}: the calibration array holds no images (shape {list(x.shape)})")
    if x.ndim != 4 or tuple(x.shape[1:]) != g.chw:
        fail(f"{path}: shape {list(x.shape)}, expected [N, {', '.join(map(str, g.chw))}] "
             "(or one image [C, H, W]) for the model's input")
    if not np.issubdtype(x.dtype, np.floating):
        fail(f"{path}: dtype {x.dtype}, expected float images")
    for what, bad in (("NaN", np.isnan(x)), ("infinite", np.isinf(x))):
        if bad.any():
            img = int(np.nonzero(bad.reshape(len(x), -1).any(axis=1))[0][0])
            fail(f"{path}: the calibration array holds {what} values (first in image {img})")
    if g.batch_fixed and len(x) % g.batch_fixed:
        fail(f"{path}: {len(x)} images, not a multiple of the model's fixed batch "
             f"{g.batch_fixed}")
    return x.astype(np.float32)


def main(argv):
    ap = argparse.ArgumentParser(prog="strata import", description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--calibration", required=True, help="float32 .npy, [N][C][H][W] or [C][H][W]")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--name", help="network name (default: the model file's stem)")
    ap.add_argument("--strata", help="the strata binary for the agreement check")
    ap.add_argument("--no-check", action="store_true", help="skip the float vs int8 agreement run")
    ap.add_argument("--shuffle-conv", action="store_true",
                    help="make each channel shuffle a 1x1 permutation convolution where it is, "
                         "instead of folding it into the layers that read it")
    ap.add_argument("--max-kernel", type=int, default=7,
                    help="a convolution kernel larger than this (at stride >= 2) becomes a "
                         "space-to-depth layer and a smaller kernel (default 7, "
                         "config/default.yaml's max_kernel)")
    a = ap.parse_args(argv)

    name = a.name or re.sub(r"[^A-Za-z0-9_-]", "_", os.path.splitext(os.path.basename(a.model))[0])
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        fail(f"network name '{name}' must match [A-Za-z0-9_-]+")
    check_out(a.out)
    try:
        with open(a.model, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"{a.model}: cannot read file: {e.strerror}")
    try:
        model = onnx.load_from_string(data)
    except Exception as e:  # protobuf DecodeError
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        fail(f"{a.model}: cannot parse the ONNX model (truncated or corrupt file?): {first}")
    try:
        onnx.checker.check_model(model)
    except Exception as e:  # checker ValidationError
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        fail(f"{a.model}: not a valid ONNX model (onnx.checker): {first}")
    g = Graph(model)
    x = load_calibration(a.calibration, g)

    tensors = sorted({o for n in g.nodes for o in n.output if o} | set(g.outputs))
    try:
        act = run_float(data, g, x, tensors)
    except ImportFailure:
        raise
    except Exception as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        fail(f"onnxruntime cannot run the model: {first}")
    act[g.input.name] = x.astype(np.float64)

    if not 1 <= a.max_kernel <= MAX_KERNEL:
        fail(f"--max-kernel {a.max_kernel}: must be in 1..{MAX_KERNEL}")
    conv = Converter(g, act, x, a.shuffle_conv, a.max_kernel)
    conv.convert()
    check_format(conv, g.chw)

    made = make_out(a.out)
    try:
        lines = write_network(a, name, g, conv, x, [act[t] for t in g.outputs])
    except BaseException:
        remove_dirs(made)
        raise
    yaml_path = os.path.join(a.out, name + ".yaml")
    wdir = os.path.join(a.out, name)
    xq_path = os.path.join(a.out, "calibration_input.npy")
    print(f"imported {a.model}: {len(conv.layers)} layers, {len(conv.files)} parameter files")
    out_scales = ", ".join(f"{conv.scale[t]:.6g}" for t in g.outputs)
    print(f"wrote {yaml_path}, {wdir}/, {xq_path} (input scale {conv.scale[g.input.name]:.6g}, "
          f"output scale{'s' if len(g.outputs) > 1 else ''} {out_scales})")
    for line in g.notes + lines:
        print(line)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ImportFailure as e:
        print(f"strata: error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # never a traceback: one line naming what failed
        print(f"strata: error: import failed: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
