//! The llguidance tokenizer environment for a llama.cpp model: drafted from the GGUF header's
//! vocabulary and kept only if llama.cpp spells every token the same, else built from
//! llama.cpp's vocabulary.
//!
//! Token bytes are llama.cpp's; control and user-defined tokens (`<|im_end|>`,
//! `<tool_call>`) are marked special (`0xFF` + text) so free text can never spell them;
//! end-of-generation tokens are registered as EOS. Tokenization is llama.cpp's own, which
//! makes the environment canonical and lets llguidance fast-forward forced text.
//!
//! An environment may start as a *draft* — its trie built from a vocabulary read before the
//! model finished loading — and is *bound* to the model once llama.cpp's spelling of every
//! token has been found equal to the draft's; it refers to the model without keeping it alive
//! (the engine frees its model). This module must not sample or decode, and an unbound
//! environment must not be handed to a session.

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token_type::LlamaTokenAttr;
use llguidance::toktrie::{TokRxInfo, TokTrie, TokenId, TokenizerEnv};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};

/// A vocabulary as llguidance sees it, token by token.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Vocab {
    /// Trie words: special tokens as `0xFF` + text.
    words: Vec<Vec<u8>>,
    /// Display bytes (special tokens as their text, without the marker).
    pieces: Vec<Vec<u8>>,
    /// Special token text → id (control and user-defined tokens).
    specials: HashMap<String, u32>,
}

impl Vocab {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            words: Vec::with_capacity(n),
            pieces: Vec::with_capacity(n),
            specials: HashMap::new(),
        }
    }

    /// Append the next token, spelled `text`; a `special` one with text is marked so free
    /// text can never spell it.
    pub(crate) fn push(&mut self, special: bool, text: Vec<u8>) {
        if special && !text.is_empty() {
            let id = u32::try_from(self.words.len()).unwrap_or(u32::MAX);
            self.specials
                .insert(String::from_utf8_lossy(&text).into_owned(), id);
            let mut w = Vec::with_capacity(text.len() + 1);
            w.push(TokTrie::SPECIAL_TOKEN_MARKER);
            w.extend_from_slice(&text);
            self.words.push(w);
        } else {
            self.words.push(text.clone());
        }
        self.pieces.push(text);
    }

    /// llama.cpp's own spelling of `model`'s vocabulary, and its end-of-generation tokens.
    pub(crate) fn of_model(model: &LlamaModel) -> (Self, Vec<u32>) {
        let vocab = model.vocab();
        let n = u32::try_from(vocab.n_tokens()).unwrap_or(0);
        let mut out = Self::with_capacity(n as usize);
        let mut eog = Vec::new();
        for id in 0..n {
            let t = LlamaToken::new(id as i32);
            let attrs = vocab.attr(t);
            let special = attrs.contains(LlamaTokenAttr::Control)
                || attrs.contains(LlamaTokenAttr::UserDefined);
            if vocab.is_eog(t) {
                eog.push(id);
            }
            out.push(special, vocab.token_to_piece(t, special, None));
        }
        (out, eog)
    }

    fn len(&self) -> u32 {
        u32::try_from(self.words.len()).unwrap_or(u32::MAX)
    }
}

/// llguidance's view of a llama.cpp vocabulary.
pub(crate) struct LlamaTokEnv {
    /// The trie of the vocabulary's words, with the end-of-generation tokens it was built with.
    draft: TokTrie,
    /// Set once: the model, and the trie when its end-of-generation tokens differ from the
    /// draft's.
    bound: OnceLock<Bound>,
    /// Special token text → id (control and user-defined tokens).
    pub specials: HashMap<String, u32>,
    /// Display bytes of every token (special tokens as their text, without the marker).
    pub pieces: Vec<Vec<u8>>,
}

struct Bound {
    /// Not kept alive here: the engine owns its model, and frees it before its backend
    /// (grammars, which hold this environment, may outlive the engine).
    model: Weak<LlamaModel>,
    eog: Vec<u32>,
    trie: Option<TokTrie>,
}

impl LlamaTokEnv {
    /// An unbound environment over `vocab`, `eog` (those in the vocabulary) standing in for
    /// the end-of-generation tokens until [`Self::bind`] (token 0 when none is).
    pub(crate) fn draft(vocab: Vocab, eog: &[u32]) -> Self {
        let eog: Vec<u32> = eog.iter().copied().filter(|&t| t < vocab.len()).collect();
        let eos = eog.first().copied().unwrap_or(0);
        let mut draft = TokTrie::from(&TokRxInfo::new(vocab.len(), eos), &vocab.words);
        if !eog.is_empty() {
            draft = draft.with_eos_tokens(&eog);
        }
        Self {
            draft,
            bound: OnceLock::new(),
            specials: vocab.specials,
            pieces: vocab.pieces,
        }
    }

    /// Whether this environment's tokens are exactly `vocab`'s.
    pub(crate) fn spells(&self, vocab: &Vocab) -> bool {
        self.pieces == vocab.pieces
            && self.specials == vocab.specials
            && vocab.words.len() == self.draft.vocab_size()
            && (0..vocab.len()).all(|i| self.draft.token(i) == vocab.words[i as usize])
    }

    /// Tie the environment to `model`, whose end-of-generation tokens are `eog` (non-empty,
    /// in the vocabulary). Only the first call counts.
    pub(crate) fn bind(&self, model: &Arc<LlamaModel>, eog: Vec<u32>) {
        let trie =
            (self.draft.eos_tokens() != eog.as_slice()).then(|| self.draft.with_eos_tokens(&eog));
        let model = Arc::downgrade(model);
        let _ = self.bound.set(Bound { model, eog, trie });
    }

    /// End-of-generation token ids (empty before [`Self::bind`]).
    pub(crate) fn eog(&self) -> &[u32] {
        self.bound.get().map_or(&[], |b| &b.eog)
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
        self.bound
            .get()
            .and_then(|b| b.trie.as_ref())
            .unwrap_or(&self.draft)
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<TokenId> {
        // Special tokens are spelled with the 0xFF marker by llguidance, never as text,
        // so they are not parsed here. No model (unbound, or freed): no tokenizer.
        let Some(model) = self.bound.get().and_then(|b| b.model.upgrade()) else {
            return Vec::new();
        };
        model
            .vocab()
            .tokenize(s, false, false)
            .into_iter()
            .map(|t| t.0 as u32)
            .collect()
    }
}

/// Every id of `entries` within a vocabulary of `n_vocab` tokens, or the first one outside it.
pub(crate) fn check_bias_ids(
    entries: &[(u32, f32)],
    n_vocab: usize,
) -> Result<(), crate::EngineError> {
    match entries.iter().find(|(id, _)| *id as usize >= n_vocab) {
        Some(&(id, _)) => Err(crate::EngineError::LogitBias { id, n_vocab }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(tokens: &[(bool, &str)]) -> Vocab {
        let mut v = Vocab::with_capacity(tokens.len());
        for (special, text) in tokens {
            v.push(*special, text.as_bytes().to_vec());
        }
        v
    }

    #[test]
    fn a_draft_spells_only_the_vocabulary_it_was_built_from() {
        let read = [
            (false, "a"),
            (false, "</s>"),
            (true, "<|im_end|>"),
            (false, ""),
        ];
        let draft = LlamaTokEnv::draft(vocab(&read), &[2]);
        assert!(draft.spells(&vocab(&read)));
        // llama.cpp making `</s>` a control token changes its trie word, not its piece.
        let loaded = [
            (false, "a"),
            (true, "</s>"),
            (true, "<|im_end|>"),
            (false, ""),
        ];
        assert!(!draft.spells(&vocab(&loaded)));
        assert!(!draft.spells(&vocab(&read[..3])));
        assert_eq!(draft.tok_trie().eos_tokens(), &[2]);
        assert!(draft.eog().is_empty(), "unbound");
        assert!(
            draft.tokenize_bytes(b"a").is_empty(),
            "no model, no tokenizer"
        );
        // A header's end-of-sequence id outside the vocabulary is not taken.
        let corrupt = LlamaTokEnv::draft(vocab(&read), &[99, 1]);
        assert_eq!(corrupt.tok_trie().eos_tokens(), &[1]);
        let none = LlamaTokEnv::draft(vocab(&read), &[99]);
        assert_eq!(none.tok_trie().eos_token(), 0);
    }
}
