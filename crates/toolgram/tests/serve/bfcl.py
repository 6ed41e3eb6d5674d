"""BFCL test data (shared, written by others) as OpenAI tools: BFCL's type dialect mapped to
JSON Schema the way BFCL maps it (dict→object, float→number, tuple→array, any→string), names
with `.` made valid (`_`)."""

import json

KEEP = ("description", "required", "enum", "maximum", "minimum", "maxItems", "minItems", "pattern")


def schema(s, raw=False):
    """BFCL's types mapped; with `raw`, every other key kept as BFCL wrote it (`optional`, …)."""
    if not isinstance(s, dict):
        return s
    out = {}
    for k, v in s.items():
        if k == "type" and isinstance(v, str):
            out[k] = {"dict": "object", "float": "number", "tuple": "array", "any": "string"}.get(v, v)
        elif k == "properties":
            out[k] = {name: schema(p, raw) for name, p in v.items()}
        elif k in ("items", "additionalProperties"):
            out[k] = schema(v, raw)
        elif k in KEEP or raw:
            out[k] = v
    return out


def case(bfcl_dir, category, index, raw=False):
    """(the user's question, the OpenAI tools) of one BFCL record."""
    lines = open(f"{bfcl_dir}/BFCL_v4_{category}.json").read().splitlines()
    c = json.loads(lines[index % len(lines)])
    tools = [{"type": "function", "function": {"name": f["name"].replace(".", "_"),
              "description": f.get("description", ""), "parameters": schema(f["parameters"], raw)}}
             for f in c["function"]]
    return c["question"][0][-1]["content"], tools
