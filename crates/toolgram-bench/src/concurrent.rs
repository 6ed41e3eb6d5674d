//! `bench concurrent`: throughput with concurrent clients — `toolgram serve` (continuous
//! batching, `--parallel N`) against llama-server `-np N` (its own `--jinja` tool calling, its
//! prompt cache on), the same GGUF, threads, per-sequence context, requests and clients, in one
//! run. For each server and each client count, every client first sends one untimed request
//! (each lane holds the tools afterwards, on both sides), then the same `requests` timed
//! requests are shared out among the clients (client `c` sends requests `c`, `c + clients`, …,
//! each after its previous reply), so every client count does the same work; reported: wall
//! clock, requests and valid calls per second, latency p50/p95 per request.
//!
//! Measurements only; this module must not print. Both servers are child processes, killed
//! when done.

use super::child_server::{Server, http, valid_reply};
use super::{percentile, round_to};
use crate::BenchError;
use crate::peers::Peers;
use serde::Serialize;
use serde_json::{Value, json};
use std::time::Instant;
use toolgram_core::{ToolChoice, ToolSet};
use toolgram_providers::native_chat_body;

/// What `bench concurrent` runs.
pub struct ConcurrentOptions<'a> {
    /// The servers side by side and what they share.
    pub peers: Peers<'a>,
    /// Client counts to run (e.g. 1 and 4); the servers get the largest as lanes.
    pub clients: &'a [usize],
    /// Timed requests, shared out among the clients (the same for every client count).
    pub requests: usize,
    /// The tools file's JSON, sent as it is.
    pub tools_json: &'a Value,
    /// The same tools, read (to judge the calls).
    pub tools: &'a ToolSet,
    /// User prompts; request `r` asks prompt `r mod len`.
    pub prompts: &'a [String],
    /// `tool_choice` as OpenAI spells it (`auto`, `required`).
    pub tool_choice: &'a str,
    /// Most tokens per reply.
    pub max_tokens: usize,
}

/// One server under one number of clients.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Which server.
    pub server: &'static str,
    /// Concurrent clients.
    pub clients: usize,
    /// Timed requests (all clients).
    pub requests: usize,
    /// Replies with 200 and at least one call, every call valid for the pool.
    pub valid_calls: usize,
    /// Replies that were not 200.
    pub errors: usize,
    /// Wall clock of the timed requests, first sent to last answered, s.
    pub wall_s: f64,
    /// Requests answered per second.
    pub requests_per_s: f64,
    /// Valid calls per second.
    pub valid_per_s: f64,
    /// Latency per request, ms.
    pub latency_p50_ms: f64,
    /// 95th percentile latency, ms.
    pub latency_p95_ms: f64,
}

/// What `bench concurrent` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ConcurrentReport {
    /// The model file's name.
    pub model: Option<String>,
    /// CPU threads.
    pub threads: u32,
    /// Where `toolgram serve`'s layers were (its `/health`).
    pub offload: Value,
    /// Context per sequence.
    pub ctx: u32,
    /// Lanes (toolgram `--parallel`) and slots (llama-server `-np`).
    pub lanes: usize,
    /// The tool choice.
    pub tool_choice: String,
    /// toolgram's rows, then llama-server's.
    pub rows: Vec<Row>,
    /// toolgram: valid calls per second with the most clients over one client.
    pub throughput_most_vs_1: Option<f64>,
    /// Valid calls per second with the most clients: toolgram over llama-server (infinite
    /// when llama-server made no valid call).
    pub valid_throughput_vs_llama_server: Option<f64>,
    /// Requests per second with the most clients: toolgram over llama-server.
    pub request_throughput_vs_llama_server: Option<f64>,
}

/// Run both servers under every client count.
pub fn run(
    opts: &ConcurrentOptions<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<ConcurrentReport, BenchError> {
    if opts.prompts.is_empty() || opts.clients.is_empty() {
        return Err(BenchError::Server("no prompts or no client counts".into()));
    }
    let lanes = opts.clients.iter().copied().max().unwrap_or(1).max(1);
    let lanes_u32 = u32::try_from(lanes).map_err(|e| BenchError::Server(e.to_string()))?;
    let (mut rows, mut offload) = (Vec::new(), Value::Null);
    for side in ["toolgram", "llama-server"] {
        progress(&format!("starting {side} with {lanes} lanes"));
        let (model, threads, ctx, gpu) = (
            opts.peers.model,
            opts.peers.threads,
            opts.peers.ctx,
            opts.peers.gpu,
        );
        let server = if side == "toolgram" {
            let server =
                Server::toolgram(opts.peers.toolgram, model, threads, ctx, lanes_u32, gpu)?;
            offload = server.health()["offload"].clone();
            server
        } else {
            Server::llama_server(opts.peers.llama_server, model, threads, ctx, lanes_u32, gpu)?
        };
        for &clients in opts.clients {
            progress(&format!("{side}: {clients} client(s)"));
            rows.push(measure(&server, opts, clients.max(1))?);
        }
    }
    let most = lanes;
    let find = |server: &str, clients: usize| {
        rows.iter()
            .find(|r| r.server == server && r.clients == clients)
    };
    let ratio = |a: f64, b: f64| {
        (b > 0.0)
            .then(|| round_to(a / b, 2))
            .or(Some(f64::INFINITY))
    };
    let ours_most = find("toolgram serve", most);
    let ours_one = find("toolgram serve", 1);
    let peer_most = find("llama-server", most);
    Ok(ConcurrentReport {
        model: opts
            .peers
            .model
            .file_name()
            .map(|n| n.to_string_lossy().into_owned()),
        threads: opts.peers.threads,
        offload,
        ctx: opts.peers.ctx,
        lanes,
        tool_choice: opts.tool_choice.to_owned(),
        throughput_most_vs_1: ours_most
            .zip(ours_one)
            .and_then(|(m, o)| ratio(m.valid_per_s, o.valid_per_s)),
        valid_throughput_vs_llama_server: ours_most
            .zip(peer_most)
            .and_then(|(m, p)| ratio(m.valid_per_s, p.valid_per_s)),
        request_throughput_vs_llama_server: ours_most
            .zip(peer_most)
            .and_then(|(m, p)| ratio(m.requests_per_s, p.requests_per_s)),
        rows,
    })
}

/// One untimed request per client, then the timed requests shared out, all clients at once.
fn measure(
    server: &Server,
    opts: &ConcurrentOptions<'_>,
    clients: usize,
) -> Result<Row, BenchError> {
    let port = server.port();
    let send = |prompt: &str| -> Result<(u16, Value, f64), BenchError> {
        let body = body(opts, prompt).to_string();
        let t0 = Instant::now();
        let (status, text) = http(port, "POST", "/v1/chat/completions", &body)
            .map_err(|e| BenchError::Server(format!("{}: {e}", server.name())))?;
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        Ok((
            status,
            serde_json::from_str(&text).unwrap_or(Value::Null),
            ms,
        ))
    };
    let prompt = |r: usize| opts.prompts[r % opts.prompts.len()].as_str();
    let per_client = |warm: bool| {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..clients)
                .map(|c| {
                    scope.spawn(move || {
                        let mine: Vec<usize> = if warm {
                            vec![opts.requests + c]
                        } else {
                            (c..opts.requests).step_by(clients).collect()
                        };
                        mine.into_iter()
                            .map(|r| send(prompt(r)))
                            .collect::<Result<Vec<_>, _>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .map_err(|_| BenchError::Server("a client thread panicked".into()))?
                })
                .collect::<Result<Vec<_>, _>>()
        })
    };
    per_client(true)?;
    let t0 = Instant::now();
    let replies: Vec<(u16, Value, f64)> = per_client(false)?.into_iter().flatten().collect();
    let wall_s = t0.elapsed().as_secs_f64();
    let mut ms: Vec<f64> = replies.iter().map(|r| r.2).collect();
    ms.sort_by(f64::total_cmp);
    let valid_calls = replies
        .iter()
        .filter(|(status, reply, _)| *status == 200 && valid_reply(opts.tools, reply))
        .count();
    let errors = replies.iter().filter(|(status, ..)| *status != 200).count();
    let n = replies.len();
    Ok(Row {
        server: server.name(),
        clients,
        requests: n,
        valid_calls,
        errors,
        wall_s: round_to(wall_s, 2),
        requests_per_s: round_to(n as f64 / wall_s, 3),
        valid_per_s: round_to(valid_calls as f64 / wall_s, 3),
        latency_p50_ms: round_to(percentile(&ms, 0.5), 0),
        latency_p95_ms: round_to(percentile(&ms, 0.95), 0),
    })
}

/// The same chat-completions body for both servers: greedy, seeded, one call per reply (the
/// OpenAI default allows several, and a small model may then repeat calls to `max_tokens`);
/// llama-server keeps its prompt cache (its default).
fn body(opts: &ConcurrentOptions<'_>, prompt: &str) -> Value {
    let mut body = native_chat_body(
        json!([{"role": "user", "content": prompt}]),
        opts.tools_json,
        &ToolChoice::from_cli(opts.tool_choice),
        false,
        opts.max_tokens,
    );
    body["model"] = json!("default");
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use toolgram_engine::gpu::GpuOptions;

    #[test]
    fn the_body_is_openai_shaped_and_greedy() {
        let tools = json!([{"type": "function", "function": {"name": "f", "parameters": {}}}]);
        let set = ToolSet::new(Vec::new()).expect("empty pool");
        let opts = ConcurrentOptions {
            peers: Peers {
                toolgram: Path::new("toolgram"),
                llama_server: Path::new("llama-server"),
                model: Path::new("m.gguf"),
                threads: 2,
                gpu: &GpuOptions::default(),
                ctx: 4096,
            },
            clients: &[1, 4],
            requests: 2,
            tools_json: &tools,
            tools: &set,
            prompts: &["hi".to_owned()],
            tool_choice: "required",
            max_tokens: 64,
        };
        let b = body(&opts, "What's the weather?");
        assert_eq!(b["messages"][0]["content"], "What's the weather?");
        assert_eq!(b["tool_choice"], "required");
        assert_eq!(b["temperature"], 0.0);
        assert_eq!(b["tools"], tools);
    }
}
