//! The wire dialects, one module each: how a request in that shape is built and its replies,
//! usage and streams read ([`crate::spec::Dialect`]), each through toolgram-wire's module for
//! its API (the shapes themselves live there, where the server reads and writes them too). OpenAI Chat Completions (`openai_chat`:
//! OpenAI, llama-server, vLLM, SGLang, and the messages and call lists Ollama's share), the
//! OpenAI Responses API (`openai_responses`), Anthropic Messages (`anthropic`), Gemini
//! `generateContent` (`gemini`), Ollama's chat API (`ollama`), and the JSON-object reply under
//! a response schema (`json_object`: llama-server's and Ollama's strict path); the request
//! pieces they share in `request`. A dialect knows request and reply shapes only: it must not name a provider or hold its URL, key or
//! capabilities — those are rows of the registry.

pub(crate) mod anthropic;
pub(crate) mod gemini;
pub(crate) mod json_object;
pub(crate) mod ollama;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;
pub(crate) mod request;
