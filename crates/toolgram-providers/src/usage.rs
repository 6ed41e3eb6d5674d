//! Token usage read from a provider's reply body, in each provider's documented field names,
//! into toolgram's one [`Usage`]. This module must not estimate: a reply without usage
//! fields gives `None`.

use crate::capability::Kind;
use serde_json::Value;
use toolgram_retry::Usage;

fn count(v: &Value, pointer: &str) -> Option<usize> {
    v.pointer(pointer)
        .and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}

/// The usage a reply body reports.
pub fn read_usage(kind: Kind, body: &Value) -> Option<Usage> {
    let (prompt, completion, cached) = match kind {
        Kind::OpenAiChat | Kind::LlamaServer | Kind::Vllm | Kind::Sglang => (
            count(body, "/usage/prompt_tokens"),
            count(body, "/usage/completion_tokens"),
            count(body, "/usage/prompt_tokens_details/cached_tokens")
                .or_else(|| count(body, "/timings/cache_n")),
        ),
        Kind::OpenAiResponses => (
            count(body, "/usage/input_tokens"),
            count(body, "/usage/output_tokens"),
            count(body, "/usage/input_tokens_details/cached_tokens"),
        ),
        Kind::Anthropic => {
            let cached = count(body, "/usage/cache_read_input_tokens");
            // Anthropic's input_tokens leaves out the tokens read from its cache.
            (
                count(body, "/usage/input_tokens").map(|n| n + cached.unwrap_or(0)),
                count(body, "/usage/output_tokens"),
                cached,
            )
        }
        Kind::Gemini => (
            count(body, "/usageMetadata/promptTokenCount"),
            count(body, "/usageMetadata/candidatesTokenCount"),
            count(body, "/usageMetadata/cachedContentTokenCount"),
        ),
        Kind::Ollama => (
            count(body, "/prompt_eval_count"),
            count(body, "/eval_count"),
            None,
        ),
    };
    if prompt.is_none() && completion.is_none() {
        return None;
    }
    Some(Usage {
        prompt_tokens: prompt.unwrap_or(0),
        completion_tokens: completion.unwrap_or(0),
        cached_prompt_tokens: cached.unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_provider_s_documented_usage_fields_are_read() {
        let chat = json!({"usage": {"prompt_tokens": 30, "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 20}}});
        assert_eq!(
            read_usage(Kind::OpenAiChat, &chat),
            Some(Usage {
                prompt_tokens: 30,
                completion_tokens: 7,
                cached_prompt_tokens: 20
            })
        );
        let llama = json!({"usage": {"prompt_tokens": 30, "completion_tokens": 7},
            "timings": {"cache_n": 12}});
        assert_eq!(
            read_usage(Kind::LlamaServer, &llama).map(|u| u.cached_prompt_tokens),
            Some(12)
        );
        let anthropic = json!({"usage": {"input_tokens": 10, "output_tokens": 3,
            "cache_read_input_tokens": 90}});
        assert_eq!(
            read_usage(Kind::Anthropic, &anthropic).map(|u| u.prompt_tokens),
            Some(100)
        );
        let gemini = json!({"usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}});
        assert_eq!(
            read_usage(Kind::Gemini, &gemini).map(|u| u.completion_tokens),
            Some(2)
        );
        assert_eq!(read_usage(Kind::Ollama, &json!({"message": {}})), None);
    }
}
