//! The llguidance tokenizer environment built from the llama.cpp vocabulary.
//!
//! Token bytes come from llama.cpp; control and user-defined tokens (`<|im_end|>`,
//! `<tool_call>`) are marked special (`0xFF` + text) so free text can never spell them;
//! end-of-generation tokens are registered as EOS. Tokenization is llama.cpp's own, which
//! makes the environment canonical and lets llguidance fast-forward forced text. This module
//! must not sample or decode.

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token_type::LlamaTokenAttr;
use llguidance::toktrie::{TokRxInfo, TokTrie, TokenId, TokenizerEnv};
use std::collections::HashMap;
use std::sync::Arc;

/// llguidance's view of a llama.cpp vocabulary.
pub(crate) struct LlamaTokEnv {
    model: Arc<LlamaModel>,
    trie: TokTrie,
    /// Special token text → id (control and user-defined tokens).
    pub specials: HashMap<String, u32>,
    /// End-of-generation token ids.
    pub eog: Vec<u32>,
    /// Display bytes of every token (special tokens as their text, without the marker).
    pub pieces: Vec<Vec<u8>>,
}

impl LlamaTokEnv {
    /// Read the vocabulary of `model`.
    pub(crate) fn new(model: Arc<LlamaModel>) -> Self {
        let vocab = model.vocab();
        let n = u32::try_from(vocab.n_tokens()).unwrap_or(0);
        let mut words = Vec::with_capacity(n as usize);
        let mut pieces = Vec::with_capacity(n as usize);
        let mut specials = HashMap::new();
        let mut eog = Vec::new();
        for id in 0..n {
            let t = LlamaToken::new(id as i32);
            let attrs = vocab.attr(t);
            let special = attrs.contains(LlamaTokenAttr::Control)
                || attrs.contains(LlamaTokenAttr::UserDefined);
            let text = vocab.token_to_piece(t, special, None);
            if vocab.is_eog(t) {
                eog.push(id);
            }
            if special && !text.is_empty() {
                specials.insert(String::from_utf8_lossy(&text).into_owned(), id);
                let mut w = vec![TokTrie::SPECIAL_TOKEN_MARKER];
                w.extend_from_slice(&text);
                words.push(w);
            } else {
                words.push(text.clone());
            }
            pieces.push(text);
        }
        let eos = eog.first().copied().unwrap_or(0);
        let trie = TokTrie::from(&TokRxInfo::new(n, eos), &words).with_eos_tokens(&eog);
        Self {
            model,
            trie,
            specials,
            eog,
            pieces,
        }
    }

    /// The display bytes of token `id` (empty for an id outside the vocabulary).
    pub(crate) fn piece(&self, id: u32) -> &[u8] {
        self.pieces
            .get(id as usize)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}

impl TokenizerEnv for LlamaTokEnv {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<TokenId> {
        // Special tokens are spelled with the 0xFF marker by llguidance, never as text,
        // so they are not parsed here.
        self.model
            .vocab()
            .tokenize(s, false, false)
            .into_iter()
            .map(|t| t.0 as u32)
            .collect()
    }
}
