"""Why the default model writes one call where BFCL expects several: a measurement, not a test
(docs/eval.md gives its figures).

Usage: second_call.py LLAMA_SERVER_URL N tag|fence [SYSTEM_PROMPT]

For the first N items of BFCL `parallel` and `parallel_multiple`, renders the prompt with the
server's chat template (`/apply-template`, the tools included), writes the first expected call
after it — as the template asks (`<tool_call>` tags) or as this model writes calls on its own
(a ```json fence) — and reads the next tokens' probabilities (`/completion`, `n_probs`): the
end of the turn against a second call. Token ids are Qwen2.5's. Start llama-server with the
GGUF and `--jinja` (and `--chat-template-file` for another template) first."""
import json, sys, math, httpx
import bfcl
BASE, N, FORM = sys.argv[1], int(sys.argv[2]), sys.argv[3]
SYSTEM = sys.argv[4] if len(sys.argv) > 4 else ""
BF = "testdata/bfcl"
END = {151643, 151645}  # <|endoftext|>, <|im_end|>
c = httpx.Client(base_url=BASE, timeout=120)

def probs(prompt):
    r = c.post("/completion", json={"prompt": prompt, "n_predict": 1, "n_probs": 40, "temperature": 0,
                                     "cache_prompt": True}).json()
    return {t["id"]: math.exp(t["logprob"]) for t in r["completion_probabilities"][0]["top_logprobs"]}, \
        {t["token"]: math.exp(t["logprob"]) for t in r["completion_probabilities"][0]["top_logprobs"]}

def write(call):
    if FORM == "tag":
        return "<tool_call>\n" + json.dumps(call) + "\n</tool_call>"
    return "```json\n" + json.dumps(call, indent=2) + "\n```"

rows = []
for cat in ("parallel", "parallel_multiple"):
    answers = [json.loads(l) for l in open(f"{BF}/possible_answer/BFCL_v4_{cat}.json")]
    for i in range(N):
        q, tools = bfcl.case(BF, cat, i)
        msgs = ([{"role": "system", "content": SYSTEM}] if SYSTEM else []) + [{"role": "user", "content": q}]
        prompt = c.post("/apply-template", json={"messages": msgs, "tools": tools}).json()["prompt"]
        (name, params), = answers[i]["ground_truth"][0].items()
        call = {"name": name.replace(".", "_"), "arguments": {k: v[0] for k, v in params.items() if v and v[0] != ""}}
        text = prompt + write(call)
        ids, _ = probs(text)
        p_end_now = sum(ids.get(t, 0) for t in END)
        # Else the likeliest separator, and what follows it: the end, or a second call.
        sep = "\n" if FORM == "tag" else "\n\n"
        ids2, toks2 = probs(text + sep)
        p_later = 1 - p_end_now
        p_end = p_end_now + p_later * sum(ids2.get(t, 0) for t in END)
        p_next = ids2.get(151657, 0.0) if FORM == "tag" else sum(p for t, p in toks2.items() if t.startswith("```"))
        rows.append((p_end, p_later * p_next))
        print(f"{cat} {i}: P(end)={p_end:.3f} P(second)={p_later * p_next:.3f}", file=sys.stderr, flush=True)
n = len(rows)
print(json.dumps({"form": FORM, "system": bool(SYSTEM), "items": n,
                  "mean_p_end": round(sum(r[0] for r in rows) / n, 3),
                  "mean_p_second_call": round(sum(r[1] for r in rows) / n, 3),
                  "items_second_call_likelier": sum(r[1] > 0.5 for r in rows)}))
