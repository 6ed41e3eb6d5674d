//! Wire dialects several providers speak, called from their files under `providers/`:
//! OpenAI Chat Completions (`openai_chat`: OpenAI, llama-server, vLLM, SGLang, and the call
//! lists Ollama's replies share) and the JSON-object reply under a response schema
//! (`json_object`: llama-server's and Ollama's strict path). A dialect knows request and reply
//! shapes only: it must not name a provider or hold its URL, key or capabilities.

pub(crate) mod json_object;
pub(crate) mod openai_chat;
