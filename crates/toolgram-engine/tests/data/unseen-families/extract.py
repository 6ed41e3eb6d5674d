#!/usr/bin/env python3
"""Extract a held-out tool-call parsing test set from vLLM's unit tests.

Source: the vLLM 0.33.0 sdist from PyPI (vllm-0.33.0.tar.gz, built from git
commit 4ba787ec9), unpacked under /tmp/heldout/dl/vllm-0.33.0.

Nothing here imports vLLM. Every model output string and every expectation is
obtained by evaluating the literal Python expressions of the test files with a
tiny AST evaluator (string constants, concatenation, f-strings, dict/list
literals, json.dumps, ToolCall/FunctionCall constructors and a few one-line test
helpers re-implemented verbatim below), so Python itself resolves all escapes.
What the test does NOT assert is marked: content_checked=false,
arguments_checked=false (arguments derived by reading the literal input).
"""

import ast
import json
import os
import shutil
import sys

ROOT = "/tmp/heldout/dl/vllm-0.33.0"
OUT = "/tmp/heldout"
TP = "tests/tool_parsers/"


# --------------------------------------------------------------------------
# Minimal literal evaluator
# --------------------------------------------------------------------------
class Param:
    def __init__(self, values, id=None, marks=None):
        self.values = values
        self.id = id
        self.marks = marks


def fc(name, arguments):
    return {"name": name, "arguments": arguments}


HELPERS = {}


class Ev:
    def __init__(self, path, helpers=None):
        self.path = path
        self.src = open(os.path.join(ROOT, path), encoding="utf-8").read()
        self.tree = ast.parse(self.src)
        self.env = {}
        self.helpers = dict(helpers or {})
        # execute module-level Assign / AugAssign sequentially
        for node in self.tree.body:
            self.exec_stmt(node, self.env, quiet=True)

    def exec_stmt(self, node, env, quiet=False):
        try:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name
            ):
                env[node.targets[0].id] = self.ev(node.value, env)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                env[node.target.id] = self.ev(node.value, env)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                assert isinstance(node.op, ast.Add)
                env[node.target.id] = env[node.target.id] + self.ev(node.value, env)
        except Exception:
            if not quiet:
                raise

    def ev(self, n, env=None):
        env = self.env if env is None else env
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.JoinedStr):
            out = []
            for v in n.values:
                if isinstance(v, ast.Constant):
                    out.append(v.value)
                else:
                    assert isinstance(v, ast.FormattedValue)
                    assert v.format_spec is None and v.conversion == -1
                    out.append(str(self.ev(v.value, env)))
            return "".join(out)
        if isinstance(n, ast.BinOp):
            a, b = self.ev(n.left, env), self.ev(n.right, env)
            if isinstance(n.op, ast.Add):
                return a + b
            if isinstance(n.op, ast.Mult):
                return a * b
            if isinstance(n.op, ast.Pow):
                return a**b
            if isinstance(n.op, ast.Sub):
                return a - b
            raise ValueError(ast.dump(n))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -self.ev(n.operand, env)
        if isinstance(n, ast.Tuple):
            return tuple(self.ev(e, env) for e in n.elts)
        if isinstance(n, ast.List):
            out = []
            for e in n.elts:
                if isinstance(e, ast.Starred):
                    out.extend(self.ev(e.value, env))
                else:
                    out.append(self.ev(e, env))
            return out
        if isinstance(n, ast.Dict):
            return {self.ev(k, env): self.ev(v, env) for k, v in zip(n.keys, n.values)}
        if isinstance(n, ast.Name):
            if n.id in env:
                return env[n.id]
            if n.id in self.env:
                return self.env[n.id]
            raise KeyError(n.id)
        if isinstance(n, ast.Call):
            fname = ast.unparse(n.func)
            args = [self.ev(a, env) for a in n.args]
            kw = {}
            for k in n.keywords:
                if k.arg == "marks":
                    kw["marks"] = ast.unparse(k.value)
                else:
                    kw[k.arg] = self.ev(k.value, env)
            if fname == "json.dumps":
                return json.dumps(*args, **kw)
            if fname == "FunctionCall":
                return fc(*args, **kw)
            if fname == "ToolCall":
                return kw["function"]
            if fname == "pytest.param":
                return Param(args, kw.get("id"), kw.get("marks"))
            if fname == "str":
                return str(*args)
            if fname in self.helpers:
                return self.helpers[fname](*args, **kw)
            raise ValueError("unsupported call " + fname)
        raise ValueError("unsupported node " + ast.dump(n)[:200])

    # -- locating things --------------------------------------------------
    def func(self, name, cls=None):
        body = self.tree.body
        if cls:
            body = [c for c in body if isinstance(c, ast.ClassDef) and c.name == cls][
                0
            ].body
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, ast.FunctionDef) and node.name == name:
                return node
        raise KeyError(name)

    def parametrize(self, fn, index=0, arg=0):
        """Return list of (line, values-tuple) for a parametrize decorator."""
        decs = [
            d
            for d in fn.decorator_list
            if isinstance(d, ast.Call) and ast.unparse(d.func) == "pytest.mark.parametrize"
        ]
        d = decs[index]
        kwargs = {k.arg: k.value for k in d.keywords}
        if "argvalues" in kwargs:
            argvalues = kwargs["argvalues"]
        else:
            argvalues = d.args[1]
        if isinstance(argvalues, ast.Name):
            # module-level list: find its definition to get line numbers
            for node in self.tree.body:
                if (
                    isinstance(node, ast.Assign)
                    and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id == argvalues.id
                ):
                    argvalues = node.value
                    break
        out = []
        for elt in argvalues.elts:
            v = self.ev(elt)
            # line number of the model-output argument (index `arg`)
            if isinstance(v, Param):
                nodes = elt.args
            else:
                nodes = elt.elts if isinstance(elt, ast.Tuple) else [elt]
            line = nodes[min(arg, len(nodes) - 1)].lineno
            if isinstance(v, Param):
                out.append((line, tuple(v.values), v))
            else:
                out.append((line, v if isinstance(v, tuple) else (v,), None))
        return out

    def local(self, fn, var, occurrence=0):
        """Evaluate the n-th assignment to `var` inside function fn."""
        hits = []
        env = dict(self.env)
        for node in ast.walk(fn):
            pass
        for node in fn.body:
            for sub in ast.walk(node):
                if (
                    isinstance(sub, ast.Assign)
                    and isinstance(sub.targets[0], ast.Name)
                    and sub.targets[0].id == var
                ):
                    hits.append(sub)
        hits.sort(key=lambda s: s.lineno)
        node = hits[occurrence]
        return node.value.lineno, self.ev(node.value, env)

    def fn_env(self, fn):
        env = dict(self.env)
        for node in fn.body:
            self.exec_stmt(node, env, quiet=True)
        return env

    def call_arg(self, fn, attr, n=0, argi=0):
        """Evaluate argument `argi` of the n-th call to `.attr(...)` in fn."""
        calls = [c for c in ast.walk(fn) if isinstance(c, ast.Call)
                 and isinstance(c.func, ast.Attribute) and c.func.attr == attr]
        calls.sort(key=lambda c: (c.lineno, c.col_offset))
        c = calls[n]
        node = c.args[argi]
        env = self.fn_env(fn)
        if isinstance(node, ast.Name):
            for sub in ast.walk(fn):
                if (isinstance(sub, ast.Assign) and isinstance(sub.targets[0], ast.Name)
                        and sub.targets[0].id == node.id):
                    return sub.value.lineno, self.ev(node, env)
        return node.lineno, self.ev(node, env)

    def config(self, cls):
        """Evaluate ToolParserTestConfig(...) keyword args in class `cls`."""
        fn = self.func("test_config", cls)
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Call) and ast.unparse(sub.func) == "ToolParserTestConfig":
                out = {}
                for k in sub.keywords:
                    out[k.arg] = (k.value.lineno, self.ev(k.value))
                return out
        raise KeyError(cls)


# --------------------------------------------------------------------------
# Case construction
# --------------------------------------------------------------------------
CASES = []


def norm_args(a):
    if isinstance(a, str):
        a = json.loads(a)
    return json.dumps(a, ensure_ascii=False)


def add(
    ev,
    line,
    family,
    template,
    inp,
    calls,
    content,
    *,
    content_checked=True,
    arguments_checked=True,
    tools=None,
    tool_schemas=None,
    settings=None,
    note=None,
    test=None,
    reasoning=None,
    reasoning_checked=True,
):
    assert isinstance(inp, str)
    calls = [{"name": c["name"], "arguments": norm_args(c["arguments"]), "id": ""} for c in calls]
    case = {
        "source": "vllm/" + ev.path,
        "line": line,
        "family": family,
        "template": template,
        "input": inp,
        "expect": {
            "role": "assistant",
            "content": "" if content is None else content,
            "reasoning_content": "" if reasoning is None else reasoning,
            "tool_calls": calls,
        },
        "settings": settings or {},
        "tools": tools if tools is not None else (list(dict.fromkeys(c["name"] for c in calls)) or None),
        "tool_schemas": tool_schemas,
    }
    if test:
        case["test"] = test
    if not content_checked:
        case["content_checked"] = False
    if not reasoning_checked:
        case["reasoning_checked"] = False
    if not arguments_checked and calls:
        case["arguments_checked"] = False
    if note:
        case["note"] = note
    CASES.append(case)


# ----------------------------- common-config families ---------------------
def config_family(path, cls, family, template, payload, skip=(), notes=None, content_guess=None):
    """payload(text) -> list of {"name","arguments"} derived from the literal JSON."""
    ev = Ev(path)
    cfg = ev.config(cls)
    notes = notes or {}
    content_guess = content_guess or {}
    xfail_ns = cfg.get("xfail_nonstreaming", (0, {}))[1]
    t = lambda k: f"{cls}::{k} (common_tests.py)"

    def xnote(test):
        if test in xfail_ns:
            return f"vLLM marks the non-streaming {test} as strict xfail: {xfail_ns[test]}"
        return None

    seen = set()

    def once(text):
        if text in seen:
            return False
        seen.add(text)
        return True

    # no tool calls: content == input, no calls (fully asserted)
    line, text = cfg["no_tool_calls_output"]
    once(text)
    add(ev, line, family, template, text, [], text, tools=None, test=t("test_no_tool_calls"),
        note=xnote("test_no_tool_calls"))

    # single call: name + each expected arg asserted; content only if configured
    if "single" not in skip:
        line, text = cfg["single_tool_call_output"]
        once(text)
        name = cfg.get("single_tool_call_expected_name", (0, "get_weather"))[1]
        args = cfg.get("single_tool_call_expected_args", (0, {"city": "Tokyo"}))[1]
        derived = payload(text)
        assert len(derived) == 1 and derived[0]["name"] == name
        full = derived[0]["arguments"]
        assert all(full.get(k) == v for k, v in args.items())
        exp_content = cfg.get("single_tool_call_expected_content", (0, None))[1]
        add(ev, line, family, template, text, [{"name": name, "arguments": full}],
            exp_content if exp_content is not None else content_guess.get("single", ""),
            content_checked=exp_content is not None,
            arguments_checked=(full == args),
            test=t("test_single_tool_call_simple_args"),
            note=xnote("test_single_tool_call_simple_args"))

    # parallel: count + names asserted; arguments derived from the literal JSON
    if "parallel" not in skip:
        line, text = cfg["parallel_tool_calls_output"]
        if once(text):
            names = cfg.get("parallel_tool_calls_names", (0, ["get_weather", "get_time"]))[1]
            count = cfg.get("parallel_tool_calls_count", (0, 2))[1]
            derived = payload(text)
            assert [d["name"] for d in derived] == names and len(derived) == count
            add(ev, line, family, template, text, derived, content_guess.get("parallel", ""),
                content_checked=False, arguments_checked=False,
                test=t("test_parallel_tool_calls"), note=xnote("test_parallel_tool_calls"))

    # various data types: 1 call, the 7 typed fields asserted; rest derived
    if "various" not in skip:
        line, text = cfg["various_data_types_output"]
        if once(text):
            derived = payload(text)
            assert len(derived) == 1
            add(ev, line, family, template, text, derived, "",
                content_checked=False, arguments_checked=False,
                test=t("test_various_data_types"),
                note=xnote("test_various_data_types") or
                "test asserts presence and JSON type of string/int/float/bool/null/array/object fields; full arguments derived from the literal")

    # empty arguments: 1 call, arguments "{}" (or "") asserted; name derived
    if "empty" not in skip:
        line, text = cfg["empty_arguments_output"]
        if once(text):
            derived = payload(text)
            assert len(derived) == 1 and derived[0]["arguments"] == {}
            add(ev, line, family, template, text, derived, "",
                content_checked=False, arguments_checked=True,
                test=t("test_empty_arguments"),
                note=xnote("test_empty_arguments") or "test asserts 1 call with arguments '{}' (or ''); name not asserted")

    # surrounding text: >= 1 call asserted only
    if "surrounding" not in skip:
        line, text = cfg["surrounding_text_output"]
        if once(text):
            derived = payload(text)
            add(ev, line, family, template, text, derived, content_guess.get("surrounding"),
                content_checked=False, arguments_checked=False,
                test=t("test_surrounding_text"),
                note=xnote("test_surrounding_text") or
                "test asserts only >=1 tool call; call and content are derived (content is a guess)")

    # escaped strings: 1 call with non-empty parseable args asserted
    if "escaped" not in skip:
        line, text = cfg["escaped_strings_output"]
        if once(text):
            derived = payload(text)
            assert len(derived) == 1
            add(ev, line, family, template, text, derived, "",
                content_checked=False, arguments_checked=False,
                test=t("test_escaped_strings"),
                note=xnote("test_escaped_strings") or
                "test asserts 1 call with non-empty JSON arguments; values derived from the literal JSON")


def json_payload(prefix, suffix, key="arguments", many=None):
    def f(text):
        out = []
        pos = 0
        while True:
            i = text.find(prefix, pos)
            if i < 0:
                break
            j = i + len(prefix)
            while text[j].isspace():
                j += 1
            val, end = json.JSONDecoder().raw_decode(text, j)
            items = val if isinstance(val, list) else [val]
            for it in items:
                out.append({"name": it["name"], "arguments": it[key]})
            pos = end
        return out
    return f


# ----------------------------- templates ----------------------------------
TEMPLATES = {
    "xlam": "tool_chat_template_xlam_llama.jinja",
    "internlm2": "tool_chat_template_internlm2_tool.jinja",
    "phi4_mini_json": "tool_chat_template_phi4_mini.jinja",
    "hunyuan_a13b": "tool_chat_template_hunyuan_a13b.jinja",
    "llama4_pythonic": "tool_chat_template_llama4_pythonic.jinja",
    "pythonic": "tool_chat_template_toolace.jinja",
    "granite_20b_fc": "tool_chat_template_granite_20b_fc.jinja",
    "functiongemma": "tool_chat_template_functiongemma.jinja",
    "jamba": None,
    "ernie45": None,
    "step3": None,
    "longcat": None,
    "olmo3": None,
    "dots": None,
    "k2_horizon": None,
}
EXTRA_TEMPLATES = [  # alternates copied for reference
    "tool_chat_template_xlam_qwen.jinja",
    "tool_chat_template_llama3.2_pythonic.jinja",
    "tool_chat_template_gemma3_pythonic.jinja",
]


def main():
    # ---------------- common_tests config families ----------------
    config_family(TP + "test_internlm2_tool_parser.py", "TestInternLM2ToolParser",
                  "internlm2", TEMPLATES["internlm2"],
                  json_payload("<|action_start|><|plugin|>", "<|action_end|>", key="parameters"),
                  content_guess={"surrounding": "Let me check the weather for you."})
    config_family(TP + "test_phi4mini_tool_parser.py", "TestPhi4MiniToolParser",
                  "phi4_mini_json", TEMPLATES["phi4_mini_json"],
                  json_payload("functools", None),
                  content_guess={"surrounding": "Let me check the weather for you.\n\nWould you like to know more?"})
    config_family(TP + "test_longcat_tool_parser.py", "TestLongCatToolParser",
                  "longcat", TEMPLATES["longcat"],
                  json_payload("<longcat_tool_call>", "</longcat_tool_call>"),
                  content_guess={"surrounding": "Let me check the weather for you.\n\nHere is the result."})
    config_family(TP + "test_granite_20b_fc_tool_parser.py", "TestGranite20bFcToolParser",
                  "granite_20b_fc", TEMPLATES["granite_20b_fc"],
                  json_payload("<function_call>", None),
                  content_guess={"surrounding": "Let me check the weather for you."})

    # ---------------- step3: only the realistic-format cases ----------------
    ev = Ev(TP + "test_step3_tool_parser.py")
    cfg = ev.config("TestStep3ToolParser")
    line, text = cfg["no_tool_calls_output"]
    add(ev, line, "step3", None, text, [], text,
        test="TestStep3ToolParser::test_no_tool_calls (common_tests.py)")
    fn = ev.func("test_parameter_value_with_angle_bracket", "TestStep3ToolParser")
    line, text = ev.local(fn, "model_output")
    add(ev, line, "step3", None, text,
        [{"name": "run_query", "arguments": {"sql": "SELECT * FROM t WHERE a < 5", "html": "<b>hi</b>"}}],
        "", content_checked=False,
        test="TestStep3ToolParser::test_parameter_value_with_angle_bracket")

    # ---------------- xLAM ----------------
    ev = Ev(TP + "test_xlam_tool_parser.py")
    fam, tpl = "xlam", TEMPLATES["xlam"]
    fn = ev.func("test_extract_tool_calls_no_tools")
    line, text = ev.local(fn, "model_output")
    add(ev, line, fam, tpl, text, [], text, test="test_extract_tool_calls_no_tools")
    for name in ["test_extract_tool_calls", "test_extract_tool_calls_list_structure"]:
        for line, (out, calls, content), _ in ev.parametrize(ev.func(name)):
            add(ev, line, fam, tpl, out, calls, content, test=name)
    fn = ev.func("test_extract_tool_calls_non_ascii")
    line, text = ev.local(fn, "model_output")
    add(ev, line, fam, tpl, text,
        [{"name": "get_current_weather", "arguments": {"city": "北京"}},
         {"name": "get_current_weather", "arguments": {"city": "上海"}}],
        "", content_checked=False, arguments_checked=False,
        test="test_extract_tool_calls_non_ascii[False]",
        note="test asserts '北京' appears unescaped (no \\u escapes) in the arguments; calls derived from the literal")

    # ---------------- Jamba ----------------
    ev = Ev(TP + "test_jamba_tool_parser.py")
    fam, tpl = "jamba", TEMPLATES["jamba"]
    fn = ev.func("test_extract_tool_calls_no_tools")
    line, text = ev.local(fn, "model_output")
    add(ev, line, fam, tpl, text, [], text, test="test_extract_tool_calls_no_tools")
    for line, (out, calls, content), _ in ev.parametrize(ev.func("test_extract_tool_calls")):
        add(ev, line, fam, tpl, out, calls, content, test="test_extract_tool_calls")

    # ---------------- Hunyuan A13B ----------------
    ev = Ev(TP + "test_hunyuan_a13b_tool_parser.py",
            helpers={"make_tool_call": lambda n, a: fc(n, json.dumps(a))})
    fam, tpl = "hunyuan_a13b", TEMPLATES["hunyuan_a13b"]
    for line, (out, calls, content), _ in ev.parametrize(ev.func("test_hunyuan_a13b_tool_parser_extract")):
        note = None
        if out.endswith("\nThank you!"):
            note = "vLLM expects text after </tool_calls> to be dropped (content None)"
        add(ev, line, fam, tpl, out, calls, content, test="test_hunyuan_a13b_tool_parser_extract", note=note)
    fn = ev.func("test_hunyuan_a13b_tool_parser_non_ascii")
    line, text = ev.local(fn, "model_output")
    add(ev, line, fam, tpl, text, [{"name": "get_weather", "arguments": {"city": "北京"}}], "",
        content_checked=False, arguments_checked=False,
        test="test_hunyuan_a13b_tool_parser_non_ascii",
        note="test asserts '北京' appears unescaped in the arguments; call derived from the literal")

    # ---------------- ERNIE 4.5 ----------------
    ev = Ev(TP + "test_ernie45_moe_tool_parser.py")
    fam, tpl = "ernie45", TEMPLATES["ernie45"]
    fn = ev.func("test_extract_tool_calls_no_tools")
    line, text = ev.local(fn, "model_output")
    add(ev, line, fam, tpl, text, [], text, test="test_extract_tool_calls_no_tools")
    for line, (out, calls, content), _ in ev.parametrize(ev.func("test_extract_tool_calls")):
        note = None
        if content and "</think>" in content:
            note = ("vLLM's tool parser alone (no reasoning parser) keeps the text before the first "
                    "<tool_call>, incl. '</think>', as content; a parser that also splits reasoning "
                    "would put the first line into reasoning_content instead")
        add(ev, line, fam, tpl, out, calls, content, test="test_extract_tool_calls", note=note)

    # ---------------- Olmo3 ----------------
    ev = Ev(TP + "test_olmo3_tool_parser.py")
    fam, tpl = "olmo3", TEMPLATES["olmo3"]
    fn = ev.func("test_no_tool_call")
    line, text = ev.local(fn, "model_output")
    add(ev, line, fam, tpl, text, [], text, test="test_no_tool_call[False]")
    for line, (streaming, out, calls), p in ev.parametrize(ev.func("test_tool_call"), arg=1):
        if streaming:
            continue
        add(ev, line, fam, tpl, out, calls, None, test=f"test_tool_call[{p.id}]")

    # ---------------- Llama 4 pythonic ----------------
    ev = Ev(TP + "test_llama4_pythonic_tool_parser.py")
    fam, tpl = "llama4_pythonic", TEMPLATES["llama4_pythonic"]
    fn = ev.func("test_no_tool_call")
    line, text = ev.local(fn, "model_output")
    add(ev, line, fam, tpl, text, [], text, test="test_no_tool_call[False]")
    for line, (streaming, out, calls), p in ev.parametrize(ev.func("test_tool_call"), arg=1):
        if streaming:
            continue
        add(ev, line, fam, tpl, out, calls, "", content_checked=False, test=f"test_tool_call[{p.id}]")

    # ---------------- generic pythonic (ToolACE / Llama 3.2 pythonic) ----------------
    ev = Ev(TP + "test_pythonic_tool_parser.py")
    fam, tpl = "pythonic", TEMPLATES["pythonic"]
    fn = ev.func("test_no_tool_call")
    line, text = ev.local(fn, "model_output")
    add(ev, line, fam, tpl, text, [], text, test="test_no_tool_call[False]")
    for line, (streaming, out, calls), p in ev.parametrize(ev.func("test_tool_call"), arg=1):
        if streaming:
            continue
        add(ev, line, fam, tpl, out, calls, None, test=f"test_tool_call[{p.id}]")

    # ---------------- FunctionGemma ----------------
    ev = Ev(TP + "test_functiongemma_tool_parser.py")
    fam, tpl = "functiongemma", TEMPLATES["functiongemma"]
    C = "TestExtractToolCalls"
    line, text = ev.local(ev.func("test_no_tool_calls", C), "model_output")
    add(ev, line, fam, tpl, text, [], text, test=f"{C}::test_no_tool_calls")
    line, text = ev.local(ev.func("test_single_tool_call", C), "model_output")
    add(ev, line, fam, tpl, text, [{"name": "get_weather", "arguments": {"location": "London"}}], "",
        content_checked=False, test=f"{C}::test_single_tool_call",
        note="test asserts name and that arguments contain '\"location\": \"London\"' (the only argument)")
    line, text = ev.local(ev.func("test_multiple_arguments", C), "model_output")
    add(ev, line, fam, tpl, text,
        [{"name": "get_weather", "arguments": {"location": "San Francisco", "unit": "celsius"}}], "",
        content_checked=False, arguments_checked=False, test=f"{C}::test_multiple_arguments",
        note="test asserts name and that 'San Francisco' and 'celsius' appear in the arguments")
    line, text = ev.local(ev.func("test_text_before_tool_call", C), "model_output")
    add(ev, line, fam, tpl, text, [{"name": "get_weather", "arguments": {"location": "Paris"}}],
        "Let me check the weather for you.", arguments_checked=False,
        test=f"{C}::test_text_before_tool_call",
        note="test asserts tools_called and content (trailing space stripped); the call is derived")
    line, text = ev.local(ev.func("test_multiple_tool_calls", C), "model_output")
    add(ev, line, fam, tpl, text,
        [{"name": "get_weather", "arguments": {"location": "London"}},
         {"name": "get_time", "arguments": {"timezone": "UTC"}}], "",
        content_checked=False, arguments_checked=False, test=f"{C}::test_multiple_tool_calls",
        note="test asserts 2 calls and their names")

    # ---------------- dots ----------------
    def _tool(name, properties):
        return {"type": "function", "function": {"name": name, "description": "test tool",
                "parameters": {"type": "object", "properties": properties}}}
    ev = Ev(TP + "test_dots_tool_parser.py", helpers={
        "_tool": _tool,
        "ChatCompletionToolsParam": lambda type, function: {"type": type, "function": function}})
    fam, tpl = "dots", TEMPLATES["dots"]
    fn = ev.func("test_non_stream_xml_converts_schema_types_and_resolves_ref")
    _, tool = ev.local(fn, "tool")
    line, text = ev.local(fn, "text")
    add(ev, line, fam, tpl, text,
        [{"name": "set_location", "arguments": {"location": {"city": "Shanghai"}, "days": 3, "include_weather": True}}],
        "ok", tools=["set_location"], tool_schemas=[tool],
        test="test_non_stream_xml_converts_schema_types_and_resolves_ref",
        note="argument types come from the tool schema (incl. a $ref to $defs)")
    fn = ev.func("test_non_stream_supports_multiple_invokes_and_json_fallback")
    _, tools = ev.local(fn, "tools")
    line, text = ev.local(fn, "text")
    add(ev, line, fam, tpl, text,
        [{"name": "search", "arguments": {"query": "chairs"}},
         {"name": "open", "arguments": {"id": 7}},
         {"name": "search", "arguments": {"query": "tables"}}],
        "", content_checked=False, tools=["search", "open"], tool_schemas=tools,
        test="test_non_stream_supports_multiple_invokes_and_json_fallback")
    fn = ev.func("test_non_stream_unknown_tool_is_left_as_content")
    line, text = ev.local(fn, "text")
    add(ev, line, fam, tpl, text, [], text, tools=["search"],
        tool_schemas=[_tool("search", {"query": {"type": "string"}})],
        test="test_non_stream_unknown_tool_is_left_as_content",
        note="call to a tool not offered in the request is left as content")

    # ---------------- K2 Horizon ----------------
    k2(Ev)
    plamo3(Ev)
    inkling(Ev)
    beam(Ev)

    write()


def k2(Ev):
    path = TP + "test_k2_horizon_tool_parser.py"
    fam, tpl = "k2_horizon", TEMPLATES["k2_horizon"]

    # verbatim re-implementations of the test's helpers (lines 50-89)
    def _group(*calls, prefix="", suffix=""):
        return prefix + "<ifm|tool_calls>" + "\n".join(calls) + "</ifm|tool_calls>" + suffix

    def _json_call(name, arguments):
        payload = json.dumps({"name": name, "arguments": arguments})
        return f"<ifm|tool_call>{payload}</ifm|tool_call>"

    def _xml_call(name, arguments, *, typed=False):
        parts = [f"<ifm|tool_call>{name}"]
        for key, value in arguments:
            parts.append(f"<ifm|arg_key>{key}</ifm|arg_key>")
            if typed:
                arg_type = "integer" if key == "limit" else "string"
                parts.append(f"<ifm|arg_type>{arg_type}</ifm|arg_type>")
            parts.append(f"<ifm|arg_value>{value}</ifm|arg_value>")
        parts.append("</ifm|tool_call>")
        return "".join(parts)

    def _request(tool_format=None, tool_choice="auto"):
        return {"tool_call_format": tool_format, "tool_choice": tool_choice}

    ev = Ev(path, helpers={"_group": _group, "_json_call": _json_call,
                           "_xml_call": _xml_call, "_request": _request})
    TOOLS = ev.env["TOOLS"]
    names = [t["function"]["name"] for t in TOOLS]

    def settings(req):
        s = {}
        if req["tool_call_format"] is not None:
            s["chat_template_kwargs"] = {"tool_call_format": req["tool_call_format"]}
        return s

    common = dict(tools=names, tool_schemas=TOOLS)
    dflt_note = "default tool_call_format (no chat_template_kwargs) is 'xml'; values are coerced with the tool schema"

    fn = ev.func("test_xml_default_parses_multiple_calls_and_coerces_schema")
    call = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and ast.unparse(c.func) == "_group"][0]
    out = ev.ev(call)
    add(ev, call.lineno, fam, tpl, out,
        [{"name": "lookup", "arguments": {"query": "123", "limit": 3}},
         {"name": "ping", "arguments": {}}],
        "Before  after.", arguments_checked=False, settings={}, **common,
        test="test_xml_default_parses_multiple_calls_and_coerces_schema",
        note=dflt_note + "; names of both calls and arguments of the first are asserted, ping's {} is derived")

    for line, (fmt, callstr, expected), _ in ev.parametrize(ev.func("test_request_level_format_overrides"), arg=1):
        add(ev, line, fam, tpl, _group(callstr), [{"name": "lookup", "arguments": expected}], "",
            content_checked=False, settings=settings(_request(fmt)), **common,
            test=f"test_request_level_format_overrides[{fmt}]",
            note="input is _group(call); name not asserted (only one tool matches)")

    # large integer with a {"type": "number"} schema (non-streaming variants)
    import copy
    tools_num = copy.deepcopy(TOOLS)
    tools_num[0]["function"]["parameters"]["properties"]["limit"] = {"type": "number"}
    value = 2**63 - 1
    fn = ev.func("test_number_schema_preserves_large_integer")
    for fmt in ["json", "xml"]:
        out = _group(_json_call("lookup", {"limit": value}) if fmt == "json"
                     else _xml_call("lookup", [("limit", str(value))]))
        add(ev, fn.lineno, fam, tpl, out, [{"name": "lookup", "arguments": {"limit": value}}], "",
            content_checked=False, settings=settings(_request(fmt)), tools=names, tool_schemas=tools_num,
            test=f"test_number_schema_preserves_large_integer[False-{fmt}]",
            note="schema of 'limit' changed to {'type': 'number'}; 2**63-1 must stay an exact integer")

    for line, (req, callstr), _ in ev.parametrize(ev.func("test_mismatched_formats_fail_closed"), arg=1):
        out = _group(callstr)
        add(ev, line, fam, tpl, out, [], out, settings=settings(req), **common,
            test="test_mismatched_formats_fail_closed",
            note="call written in a different format than the requested tool_call_format is left as content")

    for line, (out,), _ in ev.parametrize(ev.func("test_malformed_and_incomplete_input_is_content")):
        add(ev, line, fam, tpl, out, [], out, settings={}, **common,
            test="test_malformed_and_incomplete_input_is_content")

    fn = ev.func("test_whitespace_only_surrounding_content_is_not_preserved")
    call = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and ast.unparse(c.func) == "_group"][0]
    out = ev.ev(call)
    add(ev, call.lineno, fam, tpl, out, [{"name": "ping", "arguments": {}}], None,
        arguments_checked=False, settings={}, **common,
        test="test_whitespace_only_surrounding_content_is_not_preserved",
        note="content asserted None (whitespace-only surroundings dropped); only tools_called asserted for the call")

    fn = ev.func("test_auto_required_and_named_use_ifm_parser")
    call = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and ast.unparse(c.func) == "_group"][0]
    out = ev.ev(call)
    add(ev, call.lineno, fam, tpl, out, [{"name": "lookup", "arguments": {"enabled": True}}], None,
        settings=settings(_request("json")), **common,
        test="test_auto_required_and_named_use_ifm_parser[auto]",
        note="string 'true' coerced to boolean by the schema; name not asserted (derived)")

    fn = ev.func("test_unknown_or_wrong_named_tool_fails_closed")
    call = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and ast.unparse(c.func) == "_group"][0]
    out = ev.ev(call)
    add(ev, call.lineno, fam, tpl, out, [], out, content_checked=False,
        settings=settings(_request("json")), **common,
        test="test_unknown_or_wrong_named_tool_fails_closed (unknown)",
        note="unknown tool name: test asserts no tool call; content not asserted (assumed raw text)")


def plamo3(Ev):
    path = "tests/parser/engine/test_plamo3.py"
    fam, tpl = "plamo3", None
    consts = Ev("vllm/parser/plamo3.py").env      # marker strings of the PLaMo3 format
    C = {k: consts[k] for k in ["BEGIN_THINK", "BEGIN_TOOL_ARGUMENTS", "BEGIN_TOOL_NAME",
                                "BEGIN_TOOL_REQUEST", "BEGIN_TOOL_REQUESTS", "END_THINK",
                                "END_TOOL_ARGUMENTS", "END_TOOL_NAME", "END_TOOL_REQUEST",
                                "END_TOOL_REQUESTS", "EOT"]}

    # verbatim re-implementations of the test helpers (lines 38-49)
    def _tool_header(name="weather"):
        return (C["BEGIN_TOOL_REQUEST"] + C["BEGIN_TOOL_NAME"] + name + C["END_TOOL_NAME"]
                + C["BEGIN_TOOL_ARGUMENTS"])

    def _tool_call(name, arguments):
        return _tool_header(name) + arguments + C["END_TOOL_ARGUMENTS"] + C["END_TOOL_REQUEST"]

    ev = Ev(path, helpers={"_tool_header": _tool_header, "_tool_call": _tool_call})
    ev.env.update(C)
    think = {"enable_thinking": True}
    dnote = ("test passes no chat_template_kwargs; vLLM's PLaMo3 parser then assumes thinking "
             "(generation starts inside reasoning), recorded here as enable_thinking=true")
    T = lambda n: n

    # test_reasoning_mode: 2x2 (lines 100-123), expectations asserted for (reasoning or "", content or "")
    fn = ev.func("test_reasoning_mode")
    for thinking in [False, True]:
        for with_markers in [False, True]:
            output = (C["BEGIN_THINK"] + "Reasoning." + C["END_THINK"] + "Answer."
                      if with_markers else "Answer.")
            if thinking:
                expected = ("Reasoning.", "Answer.") if with_markers else ("Answer.", "")
            else:
                expected = ("", output)
            add(ev, fn.body[0].lineno, fam, tpl, output, [], expected[1], reasoning=expected[0],
                settings={"enable_thinking": thinking}, tools=None,
                test=f"test_reasoning_mode[thinking={thinking},with_markers={with_markers}]",
                note=None if thinking or not with_markers else
                "with enable_thinking=false the think markers are kept verbatim in content")

    fn = ev.func("test_duplicate_think_end_does_not_leak_into_content")
    line, out = ev.local(fn, "output")
    add(ev, line, fam, tpl, out, [], "AB", reasoning=None, settings=think,
        test="test_duplicate_think_end_does_not_leak_into_content",
        note=dnote + "; a second end-think marker inside content is dropped")

    fn = ev.func("test_content_can_start_a_new_reasoning_block")
    line, out = ev.local(fn, "output")
    add(ev, line, fam, tpl, out, [], "A", reasoning="R", settings=think,
        test="test_content_can_start_a_new_reasoning_block", note=dnote)

    fn = ev.func("test_complete_arguments_survive_missing_closers")
    closings = ev.parametrize(fn, index=2)
    for cline, (closing,), _ in closings:
        out = (C["BEGIN_THINK"] + "Reasoning. " + C["END_THINK"] + "Before tools. "
               + C["BEGIN_TOOL_REQUESTS"] + _tool_header() + '{"city":"東京"}' + closing)
        add(ev, cline, fam, tpl, out, [{"name": "weather", "arguments": '{"city":"東京"}'}],
            "Before tools. ", reasoning="Reasoning. ", settings=think,
            test="test_complete_arguments_survive_missing_closers",
            note=dnote + ("; closers missing at end of output" if closing != closings[-1][1][0] else ""))

    fn = ev.func("test_arguments_are_not_rewritten")
    for aline, (arguments,), _ in ev.parametrize(fn):
        try:
            json.loads(arguments)
        except ValueError:
            continue  # raw truncated non-JSON arguments: not representable as a JSON object
        out = C["END_THINK"] + C["BEGIN_TOOL_REQUESTS"] + _tool_header() + arguments
        add(ev, aline, fam, tpl, out, [{"name": "weather", "arguments": arguments}], "",
            reasoning=None, content_checked=False, reasoning_checked=False, settings=think,
            test="test_arguments_are_not_rewritten",
            note=dnote + "; no closing markers at the end of output; arguments text must be passed through unchanged")

    fn = ev.func("test_multiple_calls_keep_indices_ids_and_arguments_separate")
    out = (C["END_THINK"] + C["BEGIN_TOOL_REQUESTS"] + _tool_call("weather", '{"city":"東京"}')
           + _tool_call("clock", '{"timezone":"Asia/Tokyo"}') + C["END_TOOL_REQUESTS"])
    add(ev, fn.body[0].lineno, fam, tpl, out,
        [{"name": "weather", "arguments": '{"city":"東京"}'},
         {"name": "clock", "arguments": '{"timezone":"Asia/Tokyo"}'}],
        "", reasoning=None, reasoning_checked=False, settings=think,
        test="test_multiple_calls_keep_indices_ids_and_arguments_separate[False]", note=dnote)

    fn = ev.func("test_plain_content_is_preserved")
    for tline, (text,), _ in ev.parametrize(fn):
        out = C["END_THINK"] + text + C["EOT"]
        add(ev, tline, fam, tpl, out, [], text, reasoning=None, reasoning_checked=False,
            settings=think, test=f"test_plain_content_is_preserved[{text!r}]",
            note=dnote + "; end-of-turn marker is not content")

    fn = ev.func("test_partial_end_think_is_consistent_between_streaming_and_non_streaming")
    for sline, (suffix,), _ in ev.parametrize(fn):
        out = "visible" + suffix
        add(ev, sline, fam, tpl, out, [], None, reasoning="visible", settings=think,
            test="test_partial_end_think_is_consistent_between_streaming_and_non_streaming",
            note=dnote + "; output ends with an unfinished end-think marker prefix, which is dropped")

    fn = ev.func("test_tool_block_can_end_reasoning_implicitly")
    line, out = ev.local(fn, "output")
    add(ev, line, fam, tpl, out, [{"name": "weather", "arguments": {}}], None, reasoning="reasoning",
        arguments_checked=False, settings=think,
        test="test_tool_block_can_end_reasoning_implicitly",
        note=dnote + "; non-streaming asserts the name, the streaming half asserts arguments '{}'")

    fn = ev.func("test_tool_choice_uses_the_plamo_format")
    line, out = ev.local(fn, "output")
    add(ev, line, fam, tpl, out, [{"name": "weather", "arguments": {}}], "Before tools.",
        reasoning=None, reasoning_checked=False, settings=think, tools=["weather"],
        tool_schemas=[{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}],
        test="test_tool_choice_uses_the_plamo_format[auto]",
        note=dnote + "; non-streaming asserts content and the name, the streaming half asserts arguments '{}'")


def inkling(Ev):
    path = "tests/parser/engine/test_inkling.py"
    fam, tpl = "inkling", None

    def _tool_block(name, args):  # verbatim (line 68)
        return f'{TOOL_JSON}{{"name":"{name}","args":{args}}}{END_MESSAGE}'

    ev = Ev(path, helpers={"_tool_block": _tool_block})
    TOOL_JSON = ev.env["TOOL_JSON"]
    END_MESSAGE = ev.env["END_MESSAGE"]
    N = "TestNonStreaming"
    gp = ("bare text is content because the generation prompt ends with <|message_model|>; "
          "the test's parser starts after the prompt")

    def inp(test, cls, attr="parse", n=0):
        return ev.call_arg(ev.func(test, cls), attr, n)

    fn = ev.func("test_bare_text_after_model_opener", N)
    for sline, (suffix,), _ in ev.parametrize(fn):
        add(ev, sline, fam, tpl, f"hello world{suffix}", [], "hello world", reasoning=None,
            test=f"{N}::test_bare_text_after_model_opener[{suffix!r}]", note=gp)
    line, out = inp("test_plain_text", N)
    add(ev, line, fam, tpl, out, [], "hello world", reasoning=None, test=f"{N}::test_plain_text")
    line, out = ev.local(ev.func("test_reasoning_text_tool", N), "text")
    add(ev, line, fam, tpl, out, [{"name": "get_weather", "arguments": {"city": "SF"}}],
        "Let me check.", reasoning="I should check the weather.", test=f"{N}::test_reasoning_text_tool")
    line, out = ev.local(ev.func("test_tool_header_name_is_not_visible_content", N), "text")
    add(ev, line, fam, tpl, out, [{"name": "get_weather", "arguments": {"city": "SF"}}], None,
        reasoning=None, reasoning_checked=False, arguments_checked=False,
        test=f"{N}::test_tool_header_name_is_not_visible_content",
        note="a bare tool name before the tool block (message header) is not content; arguments derived")
    line, out = ev.local(ev.func("test_parallel_tool_calls", N), "text")
    add(ev, line, fam, tpl, out, [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": [1, 2]}}],
        "", reasoning=None, content_checked=False, reasoning_checked=False,
        test=f"{N}::test_parallel_tool_calls")
    fn = ev.func("test_nested_args", N)
    env = ev.fn_env(fn)
    line, out = inp("test_nested_args", N)
    add(ev, line, fam, tpl, out, [{"name": "f", "arguments": env["args"]}], "", reasoning=None,
        content_checked=False, reasoning_checked=False, test=f"{N}::test_nested_args",
        note="arguments asserted; name derived")
    line, out = inp("test_invoke_tool_text_is_visible_text", N)
    add(ev, line, fam, tpl, out, [], "do something", reasoning=None, reasoning_checked=False,
        test=f"{N}::test_invoke_tool_text_is_visible_text")
    line, out = inp("test_tool_error_is_visible_text", N)
    add(ev, line, fam, tpl, out, [], "boom", reasoning=None, reasoning_checked=False,
        test=f"{N}::test_tool_error_is_visible_text")
    line, out = inp("test_end_sampling_closes_blocks", N)
    add(ev, line, fam, tpl, out, [], "hi", reasoning="hm", test=f"{N}::test_end_sampling_closes_blocks",
        note="tool calls not asserted (none in input)")
    line, out = ev.local(ev.func("test_multiple_reasoning_blocks_concatenate", N), "text")
    add(ev, line, fam, tpl, out, [], "mid", reasoning="onetwo",
        test=f"{N}::test_multiple_reasoning_blocks_concatenate", note="tool calls not asserted (none in input)")
    line, out = ev.local(ev.func("test_text_after_tool_call", N), "text")
    add(ev, line, fam, tpl, out, [{"name": "f", "arguments": {}}], "done", reasoning=None,
        reasoning_checked=False, arguments_checked=False, test=f"{N}::test_text_after_tool_call")
    line, out = inp("test_prose_marker_without_token_ids_is_structural", N)
    add(ev, line, fam, tpl, out, [], "see  token", reasoning=None, reasoning_checked=False,
        test=f"{N}::test_prose_marker_without_token_ids_is_structural",
        note="a text-start marker inside a text block is structural (dropped), even as plain text")

    line, out = ev.local(ev.func("test_tool_choice_none_non_streaming"), "text")
    add(ev, line, fam, tpl, out, [], "visible", reasoning="plan", settings={"tool_choice": "none"},
        tools=["f"], tool_schemas=[{"type": "function", "function": {"name": "f"}}],
        test="test_tool_choice_none_non_streaming",
        note="tool_choice none: the tool block is dropped (neither a call nor content)")

    line, out = ev.call_arg(ev.func("test_adapter_round_trip", "TestRegisteredAdapters"),
                            "extract_tool_calls")
    add(ev, line, fam, tpl, out, [{"name": "f", "arguments": {"a": 1}}], "", reasoning=None,
        content_checked=False, reasoning_checked=False,
        test="TestRegisteredAdapters::test_adapter_round_trip")

    D = "TestDelegatingTwoPass"
    wt = dict(tools=["get_weather"], tool_schemas=[{"type": "function", "function": {
        "name": "get_weather", "parameters": {"type": "object", "properties": {}}}}])
    line, out = inp("test_plain_text_non_streaming", D)
    add(ev, line, fam, tpl, out, [], "The answer is 42.", reasoning=None, reasoning_checked=False,
        test=f"{D}::test_plain_text_non_streaming", **wt)
    line, out = inp("test_reasoning_then_text", D)
    add(ev, line, fam, tpl, out, [], "Let me look.", reasoning="plan",
        test=f"{D}::test_reasoning_then_text", note="tool calls not asserted (none in input)", **wt)
    line, out = inp("test_multi_tool_round_trip", D)
    add(ev, line, fam, tpl, out, [{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {"b": 2}}],
        "", reasoning=None, content_checked=False, reasoning_checked=False, arguments_checked=False,
        test=f"{D}::test_multi_tool_round_trip")
    line, out = inp("test_text_then_tool", D)
    add(ev, line, fam, tpl, out, [{"name": "f", "arguments": {}}], "intro", reasoning=None,
        reasoning_checked=False, arguments_checked=False, test=f"{D}::test_text_then_tool")
    line, out = inp("test_two_tools_then_text", D)
    add(ev, line, fam, tpl, out, [{"name": "f", "arguments": {}}, {"name": "g", "arguments": {}}],
        "after", reasoning=None, reasoning_checked=False, arguments_checked=False,
        test=f"{D}::test_two_tools_then_text")
    line, out = inp("test_reasoning_then_tool_non_streaming", D)
    add(ev, line, fam, tpl, out, [{"name": "f", "arguments": {"x": 1}}], "", reasoning="think",
        content_checked=False, arguments_checked=False, test=f"{D}::test_reasoning_then_tool_non_streaming")
    line, out = inp("test_end_sampling_text_closer_consumed", D)
    add(ev, line, fam, tpl, out, [], "hi", reasoning=None, reasoning_checked=False,
        test=f"{D}::test_end_sampling_text_closer_consumed", **wt)
    line, out = inp("test_end_sampling_tool_closer_round_trips", D)
    add(ev, line, fam, tpl, out, [{"name": "f", "arguments": {}}], "", reasoning=None,
        content_checked=False, reasoning_checked=False, arguments_checked=False,
        test=f"{D}::test_end_sampling_tool_closer_round_trips")


def beam(Ev):
    path = "tests/parser/test_beam_parser.py"
    fam, tpl = "beam", None

    def _tool(name, properties, *, strict=None):
        f = {"name": name, "parameters": {"type": "object", "properties": properties}}
        if strict is not None:
            f["strict"] = strict
        return {"type": "function", "function": f}

    # verbatim re-implementations of the test helpers (lines 132-140)
    def parameter(name, value):
        return f'<rfl:parameter name="{name}">\n{value}\n</rfl:parameter>'

    def call(name, body, *, terminator="<|call|>"):
        return f" to={name}<|channel|>analysis <|constrain|>xml<|message|>{body}{terminator}"

    ev = Ev(path, helpers={"_tool": _tool, "parameter": parameter, "call": call})
    TOOLS = ev.env["TOOLS"]
    common = dict(tools=[t["function"]["name"] for t in TOOLS], tool_schemas=TOOLS)
    pnote = ("the prompt ends with '<|start|>assistant' (generation prompt); format comes from the "
             "checkpoint's response_template (BEAM_RESPONSE_TEMPLATE in the test); "
             "arguments are coerced with the tool schema")

    def parse_arg(fn):
        c = [c for c in ast.walk(fn) if isinstance(c, ast.Call) and ast.unparse(c.func) == "parse"]
        c.sort(key=lambda c: (c.lineno, c.col_offset))
        return c

    def exp(fn, i=0):
        """Evaluate the right side of the i-th `assert parse(...) == (...)`."""
        asserts = [a for a in ast.walk(fn) if isinstance(a, ast.Assert)]
        asserts.sort(key=lambda a: a.lineno)
        return ev.ev(asserts[i].test.comparators[0], ev.fn_env(fn))

    def calls_of(lst):
        return [{"name": n, "arguments": a} for n, a in lst]

    for name in ["test_reasoning_and_final_answer", "test_parallel_calls_are_coerced_to_their_schemas",
                 "test_call_stop_token_removed_from_the_text_still_ends_the_call",
                 "test_call_stop_token_ends_the_answer"]:
        fn = ev.func(name)
        env = ev.fn_env(fn)
        pc = parse_arg(fn)[0]
        node = pc.args[0]
        out = ev.ev(node, env)
        line = node.lineno
        if isinstance(node, ast.Name):
            line = [a for a in ast.walk(fn) if isinstance(a, ast.Assign) and a.targets[0].id == node.id][0].value.lineno
        r, c, k = exp(fn)
        add(ev, line, fam, tpl, out, calls_of(k), c, reasoning=r, test=name, note=pnote, **common)
        CASES[-1]["format_metadata"] = {"response_template": ev.env["BEAM_RESPONSE_TEMPLATE"]}

    fn = ev.func("test_output_cut_before_the_next_message_start_ends_its_region")
    for eline, (end,), _ in ev.parametrize(fn):
        weather = call("get_weather", parameter("city", "Paris"), terminator=end)
        THOUGHT = ev.env["THOUGHT"]
        add(ev, eline, fam, tpl, "<|channel|>analysis<|message|>plan" + end, [], None, reasoning="plan",
            test=f"test_output_cut_before_the_next_message_start_ends_its_region[{end}] (1st assert)",
            note=pnote + "; output stops after <|end|> (e.g. max_tokens)", **common)
        CASES[-1]["format_metadata"] = {"response_template": ev.env["BEAM_RESPONSE_TEMPLATE"]}
        add(ev, eline, fam, tpl, THOUGHT + weather, [{"name": "get_weather", "arguments": {"city": "Paris"}}],
            None, reasoning="plan",
            test=f"test_output_cut_before_the_next_message_start_ends_its_region[{end}] (2nd assert)",
            note=pnote + "; output stops after <|end|> (e.g. max_tokens)", **common)
        CASES[-1]["format_metadata"] = {"response_template": ev.env["BEAM_RESPONSE_TEMPLATE"]}


def write():
    os.makedirs(os.path.join(OUT, "templates"), exist_ok=True)
    for name in set(v for v in TEMPLATES.values() if v) | set(EXTRA_TEMPLATES):
        shutil.copyfile(os.path.join(ROOT, "examples", name), os.path.join(OUT, "templates", name))
    shutil.copyfile(os.path.join(ROOT, "LICENSE"), os.path.join(OUT, "LICENSE"))
    with open(os.path.join(OUT, "cases.jsonl"), "w", encoding="utf-8") as f:
        for c in CASES:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    from collections import Counter
    cnt = Counter(c["family"] for c in CASES)
    for k, v in cnt.items():
        print(f"{k:18s} {v}")
    print("total", len(CASES))


if __name__ == "__main__":
    main()
