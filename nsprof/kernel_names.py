"""Kernel names, normalized: the one place that says which parts of a demangled name tell kernels
apart and which are noise, for the analysis (joins, diff's matching) and every label drawn.

- `kernel_key`: the name as nsys, ncu and torch.profiler would agree on it (they demangle
  differently: nsys writes `at::native::<unnamed>::f<(int)8>(T1, T2)`, ncu `at::f<8>(int, float)`,
  torch.profiler `at::native::(anonymous namespace)::f<8u>(int, float)`): no namespaces, integer
  casts or suffixes, parameter lists or spacing. The hot-kernel join and diff's pairing of two
  tools' captures compare keys.
- `kernel_label`: the name a person reads: no `void`, namespaces or parameter lists, its template
  arguments kept (they tell `sgemm_v8<128, 128>` from `<64, 64>`). Parameter lists inside template
  arguments go too: a Kokkos-style kernel `par_ranged2d_kernel<PdV_kernel(bool, int, ...)::[lambda
  (int, int) (instance 2)]>` reads `par_ranged2d_kernel<PdV_kernel::[lambda (instance 2)]>`.
- `base_name`: the kernel's own name alone (`gemm_kernel`), for diff's last matching pass and
  for sentences; `short_kernel_name` cuts it to a width.
"""

from __future__ import annotations

import re

from nsprof.shorten import shortened

_VOID = re.compile(r"^void\s+")
# at::native::add -> add; anonymous namespaces as the demanglers write them too
# (at::native::<unnamed>::multi_tensor_apply_kernel -> multi_tensor_apply_kernel)
_LABEL_NAMESPACE = re.compile(r"(?:\b[A-Za-z_]\w*|<unnamed>|\(anonymous namespace\))::(?=[A-Za-z_~<(])")
_KEY_NAMESPACE = re.compile(r"(?:\b[A-Za-z_]\w*|<unnamed>|\(anonymous namespace\))::(?!\[)")
_INTEGER_CAST = re.compile(r"\((?:(?:unsigned|signed) )?(?:char|short|int|long|long long)\)(?=-?\d)")
_BOOL_CAST = {"(bool)1": "true", "(bool)0": "false"}
_CALL_OPERATOR = re.compile(r"operator\s*\(\)")  # its parameter list follows, and goes
_CONST_CALL = re.compile(r"\)\s*const\b")  # a const member's qualifier: operator()() const::
_CONST_AFTER = re.compile(r"\b([A-Za-z_]\w*)\s+const\b")  # float const, as const float
_SPELLING = re.compile(r"\s+(?=[*&])|(?<=>)\s+(?=>)|\bvoid\s+")  # char * / char*, > > / >>, void f / f
_NUMBERED_LAMBDA = re.compile(r"\{lambda#(\d+)\}")  # {lambda(float)#1}, as nsys writes [lambda(float) (instance 1)]
_INTEGER_SUFFIX = re.compile(r"(?<=[\s<,])(-?\d+)(?:ull|ul|ll|u|l)\b", re.IGNORECASE)  # 8u, 64ul
_LIST_OPENS_AFTER = re.compile(r"[A-Za-z_0-9>]")  # a name or its template arguments


def kernel_key(name: str) -> str:
    """A demangled name as every tool would agree on it: namespaces, integer casts and suffixes,
    parameter lists and spacing gone."""
    text = str(name)
    for cast, word in _BOOL_CAST.items():
        text = text.replace(cast, word)
    text = _CONST_CALL.sub(")", _INTEGER_SUFFIX.sub(r"\1", _INTEGER_CAST.sub("", text)))
    text = _KEY_NAMESPACE.sub("", _CALL_OPERATOR.sub("operator", text))
    text = _without_parameter_lists(_SPELLING.sub("", _CONST_AFTER.sub(r"const \1", text)))
    return " ".join(_NUMBERED_LAMBDA.sub(r"[lambda (instance \1)]", text).split())


def kernel_label(name: str) -> str:
    """A demangled kernel name without `void`, namespaces and parameter lists, which seldom tell
    kernels apart (template arguments do, and stay): the module docstring."""
    text = _LABEL_NAMESPACE.sub("", _VOID.sub("", str(name).strip()))
    return _without_parameter_lists(text).strip() or text


def base_name(name: str) -> str:
    """'void ns::gemm_kernel<128, 8>(float*, int)' -> 'gemm_kernel'."""
    text = _VOID.sub("", str(name).strip())
    text = _without_brackets(_without_brackets(text, "(", ")"), "<", ">")
    return text.rsplit("::", 1)[-1].strip() or str(name)


def short_kernel_name(name: str, width: int = 24) -> str:
    """base_name in at most `width` characters, cut between words with an ellipsis."""
    return shortened(base_name(name), width)


def _without_parameter_lists(text: str) -> str:
    """Drop every parenthesized list that follows a name or its template arguments (a function's
    parameters: `f(int, T&)`, `g<8>(float*)`), at any depth; a group after a space, comma or `<`
    stays (`(instance 2)`, `(int)8`)."""
    kept: list[str] = []
    depth = 0  # inside a dropped list
    for at, char in enumerate(text):
        if depth:
            depth += {"(": 1, ")": -1}.get(char, 0)
            continue
        if char == "(" and at and _LIST_OPENS_AFTER.match(text[at - 1]):
            depth = 1
            continue
        kept.append(char)
    return "".join(kept)


def _without_brackets(text: str, opening: str, closing: str) -> str:
    """Drop every bracketed part, nested ones included: f<a<b>>(x) -> f(x) for '<', '>'."""
    depth, kept = 0, []
    for char in text:
        if char == opening:
            depth += 1
        elif char == closing and depth:
            depth -= 1
        elif depth == 0:
            kept.append(char)
    return "".join(kept)
