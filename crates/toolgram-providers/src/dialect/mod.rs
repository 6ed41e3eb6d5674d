//! The wire dialects, one module each: how a request in that shape is built and its replies,
//! usage and streams read ([`crate::spec::Dialect`]). OpenAI Chat Completions (`openai_chat`:
//! OpenAI, llama-server, vLLM, SGLang, and the messages and call lists Ollama's share), the
//! OpenAI Responses API (`openai_responses`), Anthropic Messages (`anthropic`), Gemini
//! `generateContent` (`gemini`), Ollama's chat API (`ollama`), and the JSON-object reply under
//! a response schema (`json_object`: llama-server's and Ollama's strict path); the pieces they
//! share in `request` and `reply`. A dialect knows
//! request and reply shapes only: it must not name a provider or hold its URL, key or
//! capabilities — those are rows of the registry.

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod json_object;
pub(crate) mod ollama;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;
pub(crate) mod reply;
pub(crate) mod request;
