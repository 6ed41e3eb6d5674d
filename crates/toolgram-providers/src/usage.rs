//! Token usage read from a provider's reply body (the counts in its documented field names
//! come from its dialect) into toolgram's one [`Usage`]. This module must not estimate: a reply
//! without usage fields gives `None`.

use crate::spec::Kind;
use serde_json::Value;
use toolgram_retry::Usage;

/// The usage a reply body reports.
pub fn read_usage(kind: Kind, body: &Value) -> Option<Usage> {
    let (prompt, completion, cached) = kind.dialect.usage(body);
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
    use crate::providers::lookup;
    use serde_json::json;

    fn kind(name: &str) -> Kind {
        lookup(name).expect("registered")
    }

    #[test]
    fn each_provider_s_documented_usage_fields_are_read() {
        let chat = json!({"usage": {"prompt_tokens": 30, "completion_tokens": 7,
            "prompt_tokens_details": {"cached_tokens": 20}}});
        assert_eq!(
            read_usage(kind("openai-chat"), &chat),
            Some(Usage {
                prompt_tokens: 30,
                completion_tokens: 7,
                cached_prompt_tokens: 20
            })
        );
        let llama = json!({"usage": {"prompt_tokens": 30, "completion_tokens": 7},
            "timings": {"cache_n": 12}});
        assert_eq!(
            read_usage(kind("llama-server"), &llama).map(|u| u.cached_prompt_tokens),
            Some(12)
        );
        let anthropic = json!({"usage": {"input_tokens": 10, "output_tokens": 3,
            "cache_read_input_tokens": 90}});
        assert_eq!(
            read_usage(kind("anthropic"), &anthropic).map(|u| u.prompt_tokens),
            Some(100)
        );
        let gemini = json!({"usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2}});
        assert_eq!(
            read_usage(kind("gemini"), &gemini).map(|u| u.completion_tokens),
            Some(2)
        );
        assert_eq!(read_usage(kind("ollama"), &json!({"message": {}})), None);
    }
}
