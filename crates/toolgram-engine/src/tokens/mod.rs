//! Tokens and text: the model's vocabulary read from its GGUF, the tokenizer llguidance masks
//! with (and the check of a logit bias's token ids), the tokens that open a call, and the escaping of client text so it can never spell a marker token. This group must
//! not render templates or decode.

pub(crate) mod call_starts;
pub(crate) mod client_text;
pub(crate) mod gguf_vocab;
pub(crate) mod tokenizer;
