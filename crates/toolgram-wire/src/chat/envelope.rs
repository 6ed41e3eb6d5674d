//! The Chat Completions request's envelope besides its messages and tools: the keys of its
//! token limit, read by the server and written by the providers. This module must not hold a
//! server's limits.

/// The token limit's keys in order of preference: `max_completion_tokens` (OpenAI's current
/// name), then `max_tokens` (the older one, which llama-server, vLLM and SGLang read).
pub const MAX_TOKENS_KEYS: &[&str] = &["max_completion_tokens", "max_tokens"];

/// The key a request is sent its token limit under (every server speaking Chat Completions
/// reads it).
pub const MAX_TOKENS_SENT: &str = "max_tokens";
