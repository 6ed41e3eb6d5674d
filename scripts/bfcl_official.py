"""BFCL's own code, run as BFCL runs it, to cross-check `toolgram eval bfcl` and to measure
what it cannot: the multi-turn categories.

Runs inside the venv `scripts/bfcl-official` makes (bfcl-eval 2026.3.23 without its heavy
optional dependencies). Nothing here re-implements BFCL: the data is BFCL's packaged data
(`load_dataset_entry`, with its language hints), the client is BFCL's OpenAI chat-completions
function-calling handler (`OpenAICompletionsHandler`, temperature 0.001 as `bfcl generate`
defaults, one attempt, no system prompt), and every verdict comes from BFCL's evaluation
functions (`_evaluate_single_ast_entry`, `_evaluate_single_relevance_entry`,
`_evaluate_single_multi_turn_entry`) with the checker settings of the registry entry
`gpt-4o-2024-11-20-FC` (dots in names sent as underscores, as for every OpenAI-style FC
model). A multi-turn item (`multi_turn_base`, `_miss_func`, `_miss_param`, `_long_context`)
is one conversation: BFCL's handler runs every turn and step against BFCL's own executable
APIs (its `inference_multi_turn_FC`, at most 20 steps a turn), and its checker compares the
state and the calls turn by turn.

  run    --base-url URL [--model NAME] --out DIR [--category C,...] [--limit N] [--clients K]
         every item through an OpenAI-compatible server; DIR/replies.jsonl (one line per
         item: BFCL's raw result — for a multi-turn item every turn's steps —, its decoded
         calls, its verdict) and DIR/scores.json (with the multi-turn overall: the mean of the
         four categories, as BFCL's leaderboard takes it, where all four were run).
         Resumable: items already in replies.jsonl are skipped. Categories: BFCL's non-live
         group by default; `multi_turn` names its four. `--clients K` sends K items at once
         (`bfcl generate --num-threads`; lines in the order they finish; each latency then
         includes the others' share of the machine; BFCL's MathAPI.logarithm, which sets
         mpmath's process-global precision, then runs one call at a time). On 2 CPU cores keep
         it at 2: under 4, a 2,048-token reply of the 1.5B outran BFCL's OpenAI client's
         600-s timeout, and the client's two retries made it 30 minutes and an HTTP error.
  check  --records FILE
         BFCL's verdict on calls someone else decoded (toolgram's `items.jsonl`): each
         record's calls handed to BFCL's FC decoder and checker; one JSON line per record.
  tools  the tools BFCL's handler sends for each item (its `_compile_tools`); one JSON
         line per item.
  ground-truth [--category C,...]
         BFCL's multi-turn ground truth sent to its own checker as a model's function calls
         (each turn's calls as one step, through the FC handler's decoder): the checker must
         accept every conversation — a check of this harness and of the venv (an executable
         API whose module cannot be imported fails here in seconds, not hours into a run);
         exit 1 where it does not. It also counts the conversations the checker would reject
         without the calls `serve --repeats forbid` leaves out (as now: repeats of a call made
         since the user's last message or of the latest turn of calls; as before 2026-11-30:
         of any earlier call), and, for every call,
         whether each required string argument is text the conversation had shown before it
         (verbatim, in any case: the user's turns and the results of the calls before it, as
         BFCL's executor returns them) — the screen behind docs/eval.md's "asking for a
         missing value". One JSON line per category.
  scores --out DIR
         the per-category table of DIR/replies.jsonl again.
  compare --out DIR --records FILE
         docs/eval.md's BFCL-comparable table: BFCL's replies in DIR beside the records
         `toolgram eval bfcl --protocol bfcl` wrote to FILE, item for item.
"""

import argparse
import ast
import concurrent.futures
import copy
import json
import os
import re
import sys
import threading
import time

CHECKER_MODEL = "gpt-4o-2024-11-20-FC"
TEMPERATURE = 0.001  # `bfcl generate`'s default


def categories():
    """BFCL's own `non_live` group: its AST categories and irrelevance."""
    from bfcl_eval.constants.category_mapping import NON_LIVE_CATEGORY

    return list(NON_LIVE_CATEGORY)


def multi_turn_categories():
    """BFCL's own `multi_turn` group: base, miss_func, miss_param, long_context."""
    from bfcl_eval.constants.category_mapping import MULTI_TURN_CATEGORY

    return list(MULTI_TURN_CATEGORY)


def named_categories(names):
    """`--category` as given, `multi_turn` and `non_live` opened into BFCL's groups."""
    if not names:
        return categories()
    out = []
    for name in names:
        if name == "multi_turn":
            out += multi_turn_categories()
        elif name == "non_live":
            out += categories()
        else:
            out.append(name)
    return list(dict.fromkeys(out))  # each once: a conversation's state is kept by its id


def bfcl():
    """BFCL's modules, imported late so `--help` works without the venv."""
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.eval_checker import eval_runner
    from bfcl_eval.model_handler.api_inference.openai_completion import (
        OpenAICompletionsHandler,
    )
    from bfcl_eval import utils

    return Language, ReturnFormat, eval_runner, OpenAICompletionsHandler, utils


def spread(items, limit):
    """The same items `toolgram eval bfcl --limit N` takes: N spread evenly over the file."""
    if not limit or limit >= len(items):
        return items
    step = len(items) / max(limit, 1)
    return [items[int(k * step)] for k in range(limit)]


def language_of(category, Language, ReturnFormat):
    if "javascript" in category:
        return Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT
    if "java" in category:
        return Language.JAVA, ReturnFormat.JAVA
    return Language.PYTHON, ReturnFormat.PYTHON


class Verdicts:
    """BFCL's checker over one category: its prompts (without hints, as its evaluator loads
    them) and ground truth by id."""

    def __init__(self, category, handler):
        Language, ReturnFormat, eval_runner, _, utils = bfcl()
        self.category = category
        self.handler = handler
        self.eval_runner = eval_runner
        prompts = utils.load_dataset_entry(
            category, include_prereq=False, include_language_specific_hint=False
        )
        self.prompts = {p["id"]: p for p in prompts}
        self.answers = {}
        if "irrelevance" not in category:
            self.answers = {a["id"]: a for a in utils.load_ground_truth_entry(category)}
        self.language, self.return_format = language_of(category, Language, ReturnFormat)

    def check(self, item_id, result):
        """BFCL's verdict on one raw FC result: `{"valid": bool, "error_type": str?}`."""
        prompt = self.prompts[item_id]
        if self.category.startswith("multi_turn"):
            out = self.eval_runner._evaluate_single_multi_turn_entry(
                self.handler,
                item_id,
                result,
                self.answers[item_id]["ground_truth"],
                copy.deepcopy(prompt),  # the checker deletes its `function`
                CHECKER_MODEL,
                self.category,
            )
            error = out.get("error", {})
            return {"valid": bool(out["valid"]), "error_type": error.get("error_type")}
        if "irrelevance" in self.category:
            out = self.eval_runner._evaluate_single_relevance_entry(
                self.handler, item_id, result, prompt, CHECKER_MODEL, self.category
            )
        else:
            out = self.eval_runner._evaluate_single_ast_entry(
                self.handler,
                item_id,
                result,
                self.answers[item_id]["ground_truth"],
                prompt,
                CHECKER_MODEL,
                self.category,
                language=self.language,
                return_format=self.return_format,
                has_tool_call_tag=False,
            )
        return {"valid": bool(out["valid"]), "error_type": out.get("error_type")}


def make_handler(model):
    # A local server takes any key; BFCL's client refuses to start without one.
    os.environ.setdefault("OPENAI_API_KEY", "none")
    _, _, _, OpenAICompletionsHandler, _ = bfcl()
    return OpenAICompletionsHandler(
        model_name=model,
        temperature=TEMPERATURE,
        registry_name=CHECKER_MODEL,
        is_fc_model=True,
    )


def decoded(handler, category, result):
    Language, ReturnFormat, _, _, _ = bfcl()
    if category.startswith("multi_turn"):
        # Each turn's steps as BFCL's checker decodes them (calls as Python, a step that is
        # not a call left out).
        if not isinstance(result, list):
            return None
        turns = []
        for turn in result:
            steps = []
            for step in turn:
                try:
                    steps.append(handler.decode_execute(step, has_tool_call_tag=False))
                except Exception:
                    continue
            turns.append(steps)
        return turns
    try:
        return handler.decode_ast(result, language_of(category, Language, ReturnFormat)[1], False)
    except Exception:  # BFCL's evaluator reads a failed decode the same way
        return None


def run(args):
    os.environ["OPENAI_BASE_URL"] = args.base_url.rstrip("/") + "/v1"
    _, _, _, _, utils = bfcl()
    handler = make_handler(args.model)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "replies.jsonl")
    done = set()
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    done.add(json.loads(line)["id"])
                except (ValueError, KeyError):
                    pass  # a line cut by a killed run: the item runs again
    todo = []
    for category in named_categories(args.category):
        entries = spread(utils.load_dataset_entry(category, include_prereq=False), args.limit)
        todo += [(category, e) for e in entries if e["id"] not in done]
    total = len(todo)
    checkers = {c: Verdicts(c, handler) for c in {category for category, _ in todo}}
    if args.clients > 1:
        one_logarithm_at_a_time()
    started = time.time()
    lock = threading.Lock()
    finished = 0

    def one(item):
        nonlocal finished
        category, entry = item
        t0 = time.time()
        try:
            result, meta = handler.inference(copy.deepcopy(entry), False, True)
            error = None
        except Exception as e:  # as `bfcl generate` records it
            result, meta = f"Error during inference: {e}", {}
            error = str(e)
        latency = time.time() - t0
        verdict = checkers[category].check(entry["id"], result)
        line = {
            "id": entry["id"],
            "category": category,
            "result": result,
            "decoded": decoded(handler, category, result),
            "valid": verdict["valid"],
            "error_type": verdict["error_type"],
            "http_error": error,
            "latency_s": round(latency, 3),
            "input_tokens": meta.get("input_token_count"),
            "output_tokens": meta.get("output_token_count"),
        }
        with lock:
            out.write(json.dumps(line) + "\n")
            out.flush()
            finished += 1
            rate = (time.time() - started) / finished
            print(
                f"bfcl-official: {finished}/{total} {entry['id']} "
                f"{'ok' if verdict['valid'] else verdict['error_type']} "
                f"({latency:.1f} s; about {rate * (total - finished) / 60:.0f} min left)",
                file=sys.stderr,
                flush=True,
            )

    with open(path, "a") as out:
        # `bfcl generate --num-threads`: one handler, items taken in order by each client.
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(args.clients, 1)) as pool:
            for _ in pool.map(one, todo):
                pass
    scores(args.out)


def scores(folder):
    """Per-category accuracy over replies.jsonl, as BFCL reports it (correct / total)."""
    rows = {}
    errors = 0
    with open(os.path.join(folder, "replies.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            c = rows.setdefault(r["category"], {"n": 0, "correct": 0})
            c["n"] += 1
            c["correct"] += int(r["valid"])
            errors += int(r["http_error"] is not None)
    for c in rows.values():
        c["accuracy"] = round(100.0 * c["correct"] / c["n"], 2)
    report = {"checker": CHECKER_MODEL, "temperature": TEMPERATURE, "http_errors": errors,
              "categories": rows}
    multi = multi_turn_categories()
    if all(m in rows for m in multi):
        # BFCL's leaderboard: the multi-turn overall is the unweighted mean of its four.
        report["multi_turn_overall"] = round(sum(rows[m]["accuracy"] for m in multi) / 4, 2)
    with open(os.path.join(folder, "scores.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    for name, c in rows.items():
        print(f"{name:24} {c['correct']:4}/{c['n']:<4} {c['accuracy']:6.2f} %")
    if "multi_turn_overall" in report:
        print(f"{'multi-turn overall':24} {report['multi_turn_overall']:16.2f} %")
    print(f"HTTP errors: {errors}")


def check(args):
    """BFCL's verdict on each toolgram record's calls, sent through BFCL's FC decoder."""
    handler = make_handler("none")
    checkers = {}
    non_live = categories()
    with open(args.records) as f:
        for line in f:
            r = json.loads(line)
            if r["category"] not in non_live:
                continue
            checker = checkers.setdefault(r["category"], Verdicts(r["category"], handler))
            result = [{c["name"]: json.dumps(c["arguments"])} for c in r["calls"]]
            verdict = checker.check(r["id"], result)
            print(json.dumps({"id": r["id"], "mode": r["mode"], **verdict}))


def tools(args):
    """The tools BFCL's handler compiles for each item, as it sends them."""
    _, _, _, _, utils = bfcl()
    handler = make_handler("none")
    for category in named_categories(args.category):
        for entry in utils.load_dataset_entry(category, include_prereq=False):
            data = handler._compile_tools({}, copy.deepcopy(entry))
            print(json.dumps({"id": entry["id"], "tools": data["tools"]}))


def functions(entry):
    """An item's function docs, with those `multi_turn_miss_func` holds out until a later turn."""
    held_out = [f for docs in entry.get("missed_function", {}).values() for f in docs]
    return entry["function"] + held_out


def ground_truth_steps(entry, calls):
    """One turn's ground-truth calls (Python call strings) as the FC step BFCL's handler
    records: `[{name: arguments}]`, positional arguments named in the function's order."""
    params = {f["name"]: list(f["parameters"]["properties"]) for f in functions(entry)}
    step = []
    for call in calls:
        node = ast.parse(call, mode="eval").body
        name = ast.unparse(node.func)
        arguments = {params[name][i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
        arguments.update({k.arg: ast.literal_eval(k.value) for k in node.keywords})
        step.append({name: arguments})
    return [step] if step else []


def norm(text):
    return re.sub(r"\s+", " ", str(text)).lower()


def replay(entry, turns):
    """The ground truth replayed through BFCL's executor: per call, the required string
    arguments whose value the conversation had not shown before it (the user's turns and the
    results of the calls before it, seen as they come); and what had been shown by the end of
    each turn."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (
        execute_multi_turn_func_call,
    )

    required = {f["name"]: set(f["parameters"].get("required", [])) for f in functions(entry)}
    seen = ""
    unshown = []
    seen_by_turn = []
    for question, calls in zip(entry["question"], turns):
        seen += " " + norm(" ".join(m["content"] for m in question))
        for call, step in zip(calls, ground_truth_steps(entry, calls)[0] if calls else []):
            ((name, arguments),) = step.items()
            missing = [
                k for k, v in arguments.items()
                if k in required.get(name, ()) and isinstance(v, str) and norm(v) not in seen
            ]
            if missing:
                unshown.append({"call": call, "arguments": missing})
            results, _ = execute_multi_turn_func_call(
                [call], entry["initial_config"], entry["involved_classes"],
                "ground_truth_screen", entry["id"], long_context="long_context" in entry["id"],
            )
            seen += " " + norm(" ".join(results))
        seen_by_turn.append(seen)
    return unshown, seen_by_turn


def withheld_value(entry, turns, seen_by_turn):
    """In `multi_turn_miss_param`, the value the user withholds in the (first) turn BFCL answers
    with no call and gives in the next: `unshown` where it is a string no earlier turn had shown (what
    a rule refusing unshown values could turn into a question), `shown` where one had, `not a
    string` where it is a number, a flag or a list."""
    k = next((i for i, calls in enumerate(turns) if not calls), None)
    if k is None or k + 1 >= len(turns):
        return None
    given = norm(" ".join(m["content"] for m in entry["question"][k + 1]))
    values = [
        v
        for call in (ground_truth_steps(entry, turns[k + 1]) or [[]])[0]
        for arguments in call.values()
        for v in arguments.values()
        if isinstance(v, str) and norm(v) in given
    ]
    if not values:
        return "not a string"
    return "unshown" if any(norm(v) not in seen_by_turn[k] for v in values) else "shown"


def without_repeats(entry, turns, latest_only):
    """The ground truth as `serve --repeats forbid` (the default) would leave it, each turn's
    calls sent as one reply after the user's message: each call identical (tool and argument
    values) to a call of the latest earlier turn that made calls left out (the only calls
    between the user's last message and the reply are the reply's own) — or, with
    `latest_only` false, to a call of any earlier turn (the guard before 2026-11-30). A call
    repeating one of its own reply stays, as it would; none of BFCL's answers has one."""
    made = []
    kept = []
    for calls in turns:
        step = (ground_truth_steps(entry, calls) or [[]])[0]
        kept.append([c for c, s in zip(calls, step) if s not in made])
        if step:
            made = step if latest_only else made + step
    return kept


def one_logarithm_at_a_time():
    """BFCL's MathAPI.logarithm sets mpmath's process-global precision, then computes: under
    `--clients K` two conversations' calls could interleave and one compute at the other's
    precision. Each such call runs alone here; BFCL's code is not changed otherwise."""
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import math_api

    logarithm = math_api.MathAPI.logarithm
    if getattr(logarithm, "one_at_a_time", False):
        return
    lock = threading.Lock()

    def alone(self, *args, **kwargs):
        with lock:
            return logarithm(self, *args, **kwargs)

    alone.__doc__, alone.one_at_a_time = logarithm.__doc__, True
    math_api.MathAPI.logarithm = alone


def forget_instances(entry_id):
    """BFCL's executor keeps a conversation's API instances in its module's globals, by model
    name and item: a second check of one item must start again from the initial state."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    names = vars(multi_turn_utils)
    for name in [n for n in names if f"_{entry_id}_" in n and n.endswith("_instance")]:
        del names[name]


def ground_truth(args):
    """BFCL's multi-turn checker on BFCL's own answers, and the values they use unshown."""
    _, _, _, _, utils = bfcl()
    handler = make_handler("none")
    rejected_any = False
    for category in named_categories(args.category):
        if not category.startswith("multi_turn"):
            continue
        checker = Verdicts(category, handler)
        report = {"category": category, "items": 0, "accepted": 0, "rejected": [],
                  "rejected_under_repeats_forbid_latest_turn": 0,
                  "rejected_under_repeats_forbid_any_earlier_turn": 0, "calls": 0, "calls_with_unshown_value": 0,
                  "conversations_with_unshown_value": 0, "examples": []}
        for entry in utils.load_dataset_entry(category, include_prereq=False):
            forget_instances(entry["id"])
            turns = checker.answers[entry["id"]]["ground_truth"]
            result = [ground_truth_steps(entry, calls) for calls in turns]
            verdict = checker.check(entry["id"], result)
            report["items"] += 1
            if verdict["valid"]:
                report["accepted"] += 1
            else:
                report["rejected"].append({"id": entry["id"], "error_type": verdict["error_type"]})
            for rule, latest_only in (("latest_turn", True), ("any_earlier_turn", False)):
                guarded = without_repeats(entry, turns, latest_only)
                if guarded == turns:
                    continue
                forget_instances(entry["id"])
                result = [ground_truth_steps(entry, calls) for calls in guarded]
                key = f"rejected_under_repeats_forbid_{rule}"
                report[key] = report.get(key, 0) + (not checker.check(entry["id"], result)["valid"])
            unshown, seen_by_turn = replay(entry, turns)
            if category == "multi_turn_miss_param":
                kind = withheld_value(entry, turns, seen_by_turn)
                withheld = report.setdefault("withheld_value", {})
                withheld[kind] = withheld.get(kind, 0) + 1
            report["calls"] += sum(len(calls) for calls in turns)
            report["calls_with_unshown_value"] += len(unshown)
            report["conversations_with_unshown_value"] += bool(unshown)
            if unshown and len(report["examples"]) < 5:
                report["examples"].append({"id": entry["id"], **unshown[0]})
        rejected_any |= bool(report["rejected"])
        print(json.dumps(report), flush=True)
    if rejected_any:
        sys.exit(1)


def compare(args):
    """BFCL's replies beside `--protocol bfcl`'s records, as a Markdown table."""
    with open(os.path.join(args.out, "replies.jsonl")) as f:
        off = {r["id"]: r for r in map(json.loads, f)}
    ours = {}
    with open(args.records) as f:
        for r in map(json.loads, f):
            if r.get("protocol") == "bfcl" and r["mode"] == "native":
                ours[r["id"]] = r
    print("| category | BFCL's run: items | BFCL's handler + checker, % | HTTP errors "
          "| items both ran | BFCL, % | `--protocol bfcl`, % | verdicts that differ |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for category in categories():
        rs = [r for r in off.values() if r["category"] == category]
        both = [i for i, r in ours.items() if r["category"] == category and i in off]
        if not rs:
            continue
        ok = sum(r["valid"] for r in rs)
        errors = sum(r["http_error"] is not None for r in rs)
        theirs = sum(off[i]["valid"] for i in both)
        mine = sum(ours[i]["correct"] for i in both)
        differ = sum(off[i]["valid"] != ours[i]["correct"] for i in both)
        pct = lambda k, n: f"{100.0 * k / n:.1f}" if n else "–"
        print(f"| {category} | {len(rs)} | {pct(ok, len(rs))} | {errors} | {len(both)} "
              f"| {pct(theirs, len(both))} | {pct(mine, len(both))} | {differ} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--base-url", required=True)
    r.add_argument("--model", default="toolgram")
    r.add_argument("--out", required=True)
    r.add_argument("--category", type=lambda s: s.split(","))
    r.add_argument("--limit", type=int)
    r.add_argument("--clients", type=int, default=1)
    c = sub.add_parser("check")
    c.add_argument("--records", required=True)
    s = sub.add_parser("scores")
    s.add_argument("--out", required=True)
    m = sub.add_parser("compare")
    m.add_argument("--out", required=True)
    m.add_argument("--records", required=True)
    t = sub.add_parser("tools")
    t.add_argument("--category", type=lambda s: s.split(","))
    g = sub.add_parser("ground-truth")
    g.add_argument("--category", type=lambda s: s.split(","), default=["multi_turn"])
    args = parser.parse_args()
    if getattr(args, "category", "absent") is None:
        args.category = categories()
    if args.command == "run":
        run(args)
    elif args.command == "check":
        check(args)
    elif args.command == "tools":
        tools(args)
    elif args.command == "compare":
        compare(args)
    elif args.command == "ground-truth":
        ground_truth(args)
    else:
        scores(args.out)


if __name__ == "__main__":
    main()
