//! The run stage on the real test model (SmolLM2-135M, fetched on first use): sessions that
//! outlive a request, streaming that adds up to the unstreamed reply, a runaway call cut
//! from both, and a request's grammar compiled once.

use serde_json::json;
use std::collections::BTreeMap;
use toolgram_core::{ChatMessage, ToolChoice};
use toolgram_runtime::{
    Backend, EmbeddedConfig, Event, EventStream, FinishReason, Ready, Repeats, Request, Response,
    ResponseFormat, RetryPolicy, RunError, Runtime, Sampling, tools_from_json,
};

const WEATHER: &str = include_str!("../../../examples/weather.json");

fn runtime() -> Runtime {
    eprintln!("loading the test model (fetched on first use)…");
    Runtime::new(Backend::Embedded(EmbeddedConfig {
        model: Some("test".into()),
        ..EmbeddedConfig::default()
    }))
    .expect("the test model loads")
}

fn request(tools: &str, user: &str) -> Request {
    let doc = serde_json::from_str(tools).expect("tools are JSON");
    let tools = tools_from_json(doc, ".".as_ref()).expect("tools are valid");
    let mut req = Request::new(
        vec![
            ChatMessage::text("system", "You call tools for the user."),
            ChatMessage::text("user", user),
        ],
        tools,
    );
    req.shape.choice = ToolChoice::Required;
    req.retry = RetryPolicy {
        max_attempts: 1,
        consecutive_blocked: 1,
    };
    req
}

/// Check `req` and run it.
fn run(rt: &Runtime, req: &Request) -> Result<Response, RunError> {
    rt.run(&rt.ready(req.clone())?)
}

/// Check `req` and stream it.
fn stream(rt: &Runtime, req: &Request) -> EventStream {
    let ready = rt.ready(req.clone()).expect("the request checks");
    rt.stream(&ready).expect("stream starts")
}

#[test]
fn a_second_request_with_the_same_tools_evaluates_only_its_new_turn() {
    let rt = runtime();
    let first = run(&rt, &request(WEATHER, "What's the weather in Paris?")).expect("first call");
    let u1 = first.usage.expect("usage");
    assert_eq!(u1.cached_prompt_tokens, 0, "{:?}", first.usage);

    let second = run(&rt, &request(WEATHER, "And in Oslo, in fahrenheit?")).expect("second call");
    let u2 = second.usage.expect("usage");
    let evaluated = u2.prompt_tokens - u2.cached_prompt_tokens;
    eprintln!(
        "second request: {evaluated} of {} prompt tokens evaluated ({} cached)",
        u2.prompt_tokens, u2.cached_prompt_tokens
    );
    assert_eq!(evaluated, second.timings.prompt_evaluated);
    // System + tools (most of the prompt) came from the cache; only the new turn ran.
    assert!(
        u2.cached_prompt_tokens * 4 >= u2.prompt_tokens * 3,
        "cached {} of {}",
        u2.cached_prompt_tokens,
        u2.prompt_tokens
    );
    assert!(
        evaluated < 40,
        "evaluated {evaluated} tokens: more than the new turn"
    );

    // One byte more in a tool description: a different prefix, never reused.
    let changed = WEATHER.replacen("Send an email.", "Send an email!", 1);
    assert_ne!(changed, WEATHER);
    let third = run(&rt, &request(&changed, "And in Oslo, in fahrenheit?")).expect("third call");
    let u3 = third.usage.expect("usage");
    assert_eq!(u3.cached_prompt_tokens, 0, "{u3:?}");
    assert_eq!(third.timings.prompt_evaluated, u3.prompt_tokens);
    let stats = rt.cache_stats().expect("embedded");
    assert_eq!((stats.hits(), stats.misses()), (1, 2));
}

/// What a stream said, gathered.
#[derive(Default, Debug)]
struct Gathered {
    content: String,
    reasoning: String,
    starts: BTreeMap<usize, (String, String)>,
    arguments: BTreeMap<usize, String>,
    ends: Vec<usize>,
    events: usize,
}

fn gather(rt: &Runtime, req: &Request) -> (Gathered, Response) {
    gather_ready(rt, &rt.ready(req.clone()).expect("the request checks"))
}

fn gather_ready(rt: &Runtime, ready: &Ready) -> (Gathered, Response) {
    let mut g = Gathered::default();
    for event in rt.stream(ready).expect("stream starts") {
        g.events += 1;
        match event {
            Event::ContentDelta(t) => g.content.push_str(&t),
            Event::ReasoningDelta(t) => g.reasoning.push_str(&t),
            Event::ToolCallStart {
                index, id, name, ..
            } => {
                g.starts.insert(index, (id, name));
            }
            Event::ToolCallDelta {
                index, arguments, ..
            } => g.arguments.entry(index).or_default().push_str(&arguments),
            Event::ToolCallEnd { index } => g.ends.push(index),
            Event::Retry { attempt } => panic!("attempt {attempt}: no retry expected"),
            Event::ToolStep(s) => panic!("no tool loop here: {s:?}"),
            Event::Done(r) => return (g, *r),
            Event::Failed(e) => panic!("stream failed: {e}"),
        }
    }
    panic!("the stream ended without Done");
}

fn same_reply(a: &Response, b: &Response) {
    assert_eq!(a.content, b.content);
    assert_eq!(a.reasoning, b.reasoning);
    assert_eq!(a.finish_reason, b.finish_reason);
    let calls = |r: &Response| {
        r.tool_calls
            .iter()
            .map(|c| (c.name.clone(), c.arguments_text()))
            .collect::<Vec<_>>()
    };
    assert_eq!(calls(a), calls(b));
    let completion = |r: &Response| r.usage.map(|u| u.completion_tokens);
    assert_eq!(completion(a), completion(b));
    assert_eq!((a.path, a.attempts), (b.path, b.attempts));
}

#[test]
fn a_streamed_run_gives_the_same_reply_and_its_deltas_add_up_to_it() {
    let sampled = Sampling {
        temperature: 0.8,
        seed: Some(7),
        max_tokens: 96,
        ..Sampling::default()
    };
    let mut calls = request(WEATHER, "Weather in Paris and in Rome, please.");
    calls.shape.parallel = true;
    calls.sampling = sampled.clone();
    let mut text = request(WEATHER, "Say hello to Ada in one sentence.");
    text.shape.choice = ToolChoice::None;
    text.sampling = sampled.clone();
    let mut structured = request("[]", "Give a city and its country as JSON.");
    structured.shape.choice = ToolChoice::None;
    structured.sampling = sampled;
    structured.response_format = Some(ResponseFormat::JsonSchema(json!({
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
        "required": ["city", "country"]
    })));

    for req in [&calls, &text, &structured] {
        // Each on a fresh runtime, so both evaluate the same prompt in the same batches (a
        // cached prefix changes llama.cpp's batch shapes, and with them the last bits).
        let plain = run(&runtime(), req).expect("unstreamed run");
        let (g, streamed) = gather(&runtime(), req);
        same_reply(&plain, &streamed);
        assert_eq!(g.content, streamed.content.clone().unwrap_or_default());
        assert_eq!(g.reasoning, streamed.reasoning.clone().unwrap_or_default());
        assert_eq!(g.starts.len(), streamed.tool_calls.len(), "{g:?}");
        for (i, call) in streamed.tool_calls.iter().enumerate() {
            assert_eq!(
                g.starts.get(&i),
                Some(&(call.id.clone(), call.name.clone()))
            );
            assert_eq!(g.arguments.get(&i), Some(&call.arguments_text()), "{g:?}");
            assert!(g.ends.contains(&i));
        }
        // Streamed, not sent whole at the end: several events before Done.
        assert!(g.events > 3, "{g:?}");
    }
}

#[test]
fn a_cancelled_run_stops_decoding_and_says_so() {
    let rt = runtime();
    let mut req = request(WEATHER, "Tell me a long story about the sea.");
    req.shape.choice = ToolChoice::None;
    req.sampling.max_tokens = 400;
    let mut events = stream(&rt, &req);
    let first = events.next();
    assert!(
        matches!(first, Some(Event::ContentDelta(_))),
        "a text delta first: {first:?}"
    );
    req.cancel.cancel();
    let rest: Vec<Event> = events.collect();
    let deltas = rest
        .iter()
        .filter(|e| matches!(e, Event::ContentDelta(_)))
        .count();
    // The flag is read before every step: only the steps decoded while this thread woke up
    // come after it, far from the 400 the run was allowed.
    assert!(deltas < 100, "{deltas} deltas after the cancel");
    match rest.last() {
        Some(Event::Failed(e)) => assert_eq!(e.kind(), "cancelled"),
        other => panic!("the run should end cancelled: {other:?}"),
    }
    // A queued request that was cancelled before it ran never runs.
    let queued = request(WEATHER, "Weather in Paris?");
    queued.cancel.cancel();
    assert!(queued.cancel.is_cancelled());
    match run(&rt, &queued) {
        Err(e) => assert_eq!(e.kind(), "cancelled"),
        Ok(r) => panic!("a cancelled request ran: {r:?}"),
    }
    // The runtime goes on serving.
    run(&rt, &request(WEATHER, "Weather in Paris?")).expect("a request after the cancelled ones");
}

#[test]
fn few_shot_puts_prompt_modes_instructions_under_the_grammar() {
    let rt = runtime();
    let plain = run(&rt, &request(WEATHER, "What's the weather in Paris?")).expect("plain call");
    let mut req = request(WEATHER, "What's the weather in Paris?");
    req.few_shot = true;
    let shown = run(&rt, &req).expect("few-shot call");
    let (p, s) = (
        plain.usage.expect("usage").prompt_tokens,
        shown.usage.expect("usage").prompt_tokens,
    );
    // The instructions hold a rule and one example call per tool (two tools here).
    assert!(s > p + 60, "few-shot prompt {s} tokens, plain {p}");
    // One valid call (the engine's test checks that the grammar still decoded it).
    assert_eq!(shown.tool_calls.len(), 1, "{shown:?}");
}

/// The test model repeats its one call when asked to read "page by page": under
/// `repeats: forbid` the loop guard cuts the repeat, reports it, and a stream never sends it
/// (a later call's events wait until the next call starts or the run ends).
#[test]
fn a_runaway_call_is_cut_and_never_streamed() {
    let pages = r#"[{"type": "function", "function": {"name": "read_page",
        "description": "Read one page of the report.", "parameters": {"type": "object",
        "properties": {"page": {"type": "integer"}}, "required": ["page"]}}}]"#;
    let mut req = request(pages, "Read the report, page by page.");
    req.shape.parallel = true;
    req.repeats = Repeats::Forbid;
    req.sampling.max_tokens = 96;
    let plain = run(&runtime(), &req).expect("unstreamed run");
    let (g, streamed) = gather(&runtime(), &req);
    same_reply(&plain, &streamed);
    let cut = streamed.cut_call.as_ref().expect("the repeat is cut");
    assert_eq!(cut.name, "read_page");
    assert_eq!(cut.reason, "repeats call 0 of this reply", "{streamed:?}");
    assert_eq!(streamed.finish_reason, FinishReason::ToolCalls);
    assert_eq!(g.starts.len(), streamed.tool_calls.len(), "{g:?}");
    assert_eq!(g.arguments.len(), streamed.tool_calls.len(), "{g:?}");
    // Listed, the repeat would have been kept.
    req.repeats = Repeats::List;
    let kept = run(&runtime(), &req).expect("listed run");
    assert_eq!(
        kept.tool_calls.len(),
        streamed.tool_calls.len() + 1,
        "{kept:?}"
    );
    assert_eq!(kept.cut_call, None);
}

/// A tool no call can satisfy: `city` is required, needs `unit`, and excludes it.
const UNSATISFIABLE: &str = r#"[{"type": "function", "function": {"name": "get_weather",
  "description": "Current weather for a city.",
  "parameters": {"type": "object", "required": ["city"], "properties": {
    "city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}},
  "x-toolgram": {"rules": [{"dependent_required": {"city": ["unit"]}},
                           {"mutually_exclusive": ["city", "unit"]}]}}}]"#;

/// A request's call grammar is compiled once: by its check before it is queued, then carried
/// to its stream (which asks whether validation can still fail) and to every attempt of the
/// retry loop.
#[test]
fn a_checked_request_is_compiled_once_for_its_stream_and_every_attempt() {
    let rt = runtime();
    let compiled = |rt: &Runtime| rt.grammar_stats().expect("embedded").calls_compiled;
    let start = compiled(&rt);
    let ready = rt
        .ready(request(WEATHER, "What's the weather in Paris?"))
        .expect("the request checks");
    assert_eq!(compiled(&rt), start + 1, "the check compiles the grammar");
    let (_, reply) = gather_ready(&rt, &ready);
    assert_eq!(reply.tool_calls.len(), 1, "{}", reply.raw);
    assert_eq!(compiled(&rt), start + 1, "the stream compiled it again");

    let mut req = request(UNSATISFIABLE, "What's the weather in Oslo?");
    req.retry = RetryPolicy {
        max_attempts: 3,
        consecutive_blocked: 3,
    };
    let ready = rt.ready(req).expect("the request checks");
    let mut retries = 0;
    for event in rt.stream(&ready).expect("stream starts") {
        match event {
            Event::Retry { .. } => retries += 1,
            Event::Done(r) => panic!("no call satisfies both rules: {}", r.raw),
            _ => {}
        }
    }
    assert_eq!(retries, 2, "three attempts");
    assert_eq!(
        compiled(&rt),
        start + 2,
        "an attempt compiled the grammar again"
    );
}

/// A response format is compiled once per request too: beside tools it is the call
/// grammar's text branch (one call grammar, none of its own); alone (`toolgram generate`) its
/// grammar is compiled by the check and the run decodes under it without compiling again.
#[test]
fn a_response_format_beside_tools_or_alone_is_compiled_once_per_request() {
    let rt = runtime();
    let stats = |rt: &Runtime| {
        let s = rt.grammar_stats().expect("embedded");
        (s.calls_compiled, s.generations_compiled)
    };
    let (calls, generations) = stats(&rt);
    let mut beside = request(WEATHER, "What's the weather in Paris?");
    beside.shape.choice = ToolChoice::Auto;
    beside.sampling.max_tokens = 48;
    beside.response_format = Some(ResponseFormat::JsonSchema(json!({
        "type": "object",
        "properties": {"answer": {"type": "string", "maxLength": 40}},
        "required": ["answer"]
    })));
    let ready = rt.ready(beside).expect("the request checks");
    let _ = rt.run(&ready);
    let _ = gather_ready(&rt, &ready);
    assert_eq!(stats(&rt), (calls + 1, generations), "beside tools");

    let mut alone = request("[]", "Say hello as JSON.");
    alone.shape.choice = ToolChoice::Auto;
    alone.sampling.max_tokens = 24;
    alone.response_format = Some(ResponseFormat::JsonObject);
    let ready = rt.ready(alone).expect("the request checks");
    assert_eq!(
        stats(&rt),
        (calls + 1, generations + 1),
        "the check compiles it"
    );
    let reply = rt.run(&ready).expect("generated");
    assert!(reply.content.is_some_and(|c| c.starts_with('{')));
    let _ = gather_ready(&rt, &ready);
    assert_eq!(
        stats(&rt),
        (calls + 1, generations + 1),
        "a run compiled it again"
    );
}

#[test]
fn votes_cast_their_ballots_on_parallel_lanes_and_return_the_majority_answer() {
    let rt = Runtime::new(Backend::Embedded(EmbeddedConfig {
        model: Some("test".into()),
        parallel: 4,
        ..EmbeddedConfig::default()
    }))
    .expect("the test model loads");
    let mut req = request(WEATHER, "What's the weather in Paris?");
    req.sampling.max_tokens = 64;
    let greedy = run(&rt, &req).expect("one run");
    req.votes = 5;
    let voted = run(&rt, &req).expect("five ballots");
    let tally = voted.votes.clone().expect("a tally");
    assert_eq!((tally.cast, tally.failed), (5, 0), "{tally:?}");
    assert_eq!(tally.answers.iter().sum::<usize>(), 5, "{tally:?}");
    assert!(
        tally.answers.iter().all(|&n| n <= tally.answers[0]),
        "the winner has the most ballots: {tally:?}"
    );
    assert!(!voted.tool_calls.is_empty(), "tool_choice required: a call");
    let (g, v) = (greedy.usage.expect("usage"), voted.usage.expect("usage"));
    assert!(
        v.completion_tokens >= 4 * g.completion_tokens / 2,
        "every ballot's tokens are counted: {g:?} {v:?}"
    );
    assert_eq!(voted.toolgram_json()["votes"]["cast"], 5);
    // A streamed request with votes ends with the same kind of reply.
    let events = stream(&rt, &req);
    let last = events.into_iter().last().expect("events");
    assert!(
        matches!(&last, Event::Done(r) if r.votes.as_ref().is_some_and(|t| t.cast == 5)),
        "the stream ends with the voted reply"
    );
    req.votes = 17;
    assert!(rt.ready(req).is_err(), "more ballots than allowed");
}
