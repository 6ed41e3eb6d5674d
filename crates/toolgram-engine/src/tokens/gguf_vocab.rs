//! Read a GGUF file's token list straight from its header, without llama.cpp, so the
//! llguidance token trie and its slices can be built while llama.cpp loads the weights.
//!
//! Only byte-level BPE vocabularies (`tokenizer.ggml.model = "gpt2"`: Qwen, Llama 3,
//! SmolLM2, …) are spelled, each token the way llama.cpp's `token_to_piece` spells it. The
//! result is a guess: the engine compares it with llama.cpp's own spelling of every token and
//! falls back to that on any difference, so this module must not be trusted alone, and it
//! must not panic or allocate without bound on a malformed file (it returns `None`).

use crate::tokenizer::Vocab;
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::Path;

const MAGIC: &[u8; 4] = b"GGUF";
/// Bounds that no real header comes near; a larger count means a corrupt file.
const MAX_KV: u64 = 1 << 20;
const MAX_TOKENS: u64 = 1 << 23;
const MAX_STRING: u64 = 1 << 24;
const MAX_DEPTH: u8 = 4;

/// GGUF value types (the GGUF spec's `gguf_metadata_value_type`).
const T_U32: u32 = 4;
const T_I32: u32 = 5;
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;

/// llama.cpp's token types (`llama_token_type`) that `token_to_piece` spells.
const NORMAL: i32 = 1;
const CONTROL: i32 = 3;
const USER_DEFINED: i32 = 4;

/// Texts llama.cpp makes control (or user-defined) tokens whatever type the GGUF gives them
/// (`llama_vocab::impl::load`: end-of-turn, end-of-generation and fill-in-the-middle tokens,
/// and gpt-oss's four). A llama.cpp that changes this list only costs the early build.
const CONTROL_LOOKING: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<｜end▁of▁sentence｜>",
    "[e~[",
    "<|fim_prefix|>",
    "<fim-prefix>",
    "<fim_prefix>",
    "<｜fim▁begin｜>",
    "<PRE>",
    "▁<PRE>",
    "<|code_prefix|>",
    "<|prefix|>",
    "<|fim_suffix|>",
    "<fim-suffix>",
    "<fim_suffix>",
    "<｜fim▁hole｜>",
    "<SUF>",
    "▁<SUF>",
    "<|code_suffix|>",
    "<|suffix|>",
    "<|fim_middle|>",
    "<fim-middle>",
    "<fim_middle>",
    "<｜fim▁end｜>",
    "<MID>",
    "▁<MID>",
    "<|code_middle|>",
    "<|middle|>",
    "<|fim_pad|>",
    "<fim-pad>",
    "<fim_pad>",
    "<PAD>",
    "[PAD]",
    "<|fim_repo|>",
    "<|repo_name|>",
    "<fim-repo>",
    "<REPO>",
    "<reponame>",
    "<|file_sep|>",
    "<|channel|>",
    "<|message|>",
    "<|start|>",
    "<|constrain|>",
];

/// The vocabulary of the GGUF at `path` and its `eos_token_id`, or `None` when the file is not
/// a readable GGUF with a byte-level BPE vocabulary.
pub(crate) fn read(path: &Path) -> Option<(Vocab, Option<u32>)> {
    read_from(BufReader::with_capacity(1 << 16, File::open(path).ok()?))
}

/// [`read`] over any seekable bytes.
fn read_from(source: impl Read + Seek) -> Option<(Vocab, Option<u32>)> {
    let mut r = Reader(source);
    let mut magic = [0u8; 4];
    r.0.read_exact(&mut magic).ok()?;
    if &magic != MAGIC || !matches!(r.u32()?, 2 | 3) {
        return None;
    }
    let _tensors = r.u64()?;
    let n_kv = r.u64()?;
    if n_kv > MAX_KV {
        return None;
    }
    let (mut model, mut tokens, mut types, mut eos) = (None, None, None, None);
    for _ in 0..n_kv {
        let key = r.string()?;
        let ty = r.u32()?;
        match (key.as_slice(), ty) {
            (b"tokenizer.ggml.model", T_STRING) => model = Some(r.string()?),
            (b"tokenizer.ggml.tokens", T_ARRAY) => tokens = Some(r.strings()?),
            (b"tokenizer.ggml.token_type", T_ARRAY) => types = Some(r.i32s()?),
            (b"tokenizer.ggml.eos_token_id", T_U32 | T_I32) => eos = Some(r.u32()?),
            _ => r.skip(ty, 0)?,
        }
        if model.is_some() && tokens.is_some() && types.is_some() && eos.is_some() {
            break;
        }
    }
    if model.as_deref() != Some(b"gpt2".as_slice()) {
        return None;
    }
    let (tokens, types) = (tokens?, types?);
    if tokens.len() != types.len() {
        return None;
    }
    let mut vocab = Vocab::with_capacity(tokens.len());
    for (text, ty) in tokens.into_iter().zip(types) {
        let control_looking =
            std::str::from_utf8(&text).is_ok_and(|t| CONTROL_LOOKING.contains(&t));
        match ty {
            _ if control_looking => vocab.push(true, text),
            NORMAL => vocab.push(false, byte_level_decode(&text)?),
            CONTROL | USER_DEFINED => vocab.push(true, text),
            _ => vocab.push(false, Vec::new()),
        }
    }
    Some((vocab, eos))
}

/// The bytes a byte-level BPE token stands for: GPT-2's `bytes_to_unicode` read backwards.
/// `None` for a character outside that alphabet (llama.cpp spells those differently).
fn byte_level_decode(text: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(text).ok()?;
    text.chars().map(byte_of).collect()
}

/// Whether GPT-2's byte-to-unicode table spells byte `b` as itself.
const fn printable(b: u32) -> bool {
    matches!(b, 33..=126 | 161..=172 | 174..=255)
}

/// The 68 bytes GPT-2's table spells as U+0100 onwards, in increasing order.
const SHIFTED: [u8; 68] = {
    let mut out = [0u8; 68];
    let (mut b, mut i) = (0u32, 0usize);
    while b < 256 {
        if !printable(b) {
            out[i] = b as u8;
            i += 1;
        }
        b += 1;
    }
    out
};

/// The byte GPT-2's byte-to-unicode table maps to `c`.
fn byte_of(c: char) -> Option<u8> {
    let cp = u32::from(c);
    if printable(cp) {
        return u8::try_from(cp).ok();
    }
    let index = usize::try_from(cp.checked_sub(256)?).ok()?;
    SHIFTED.get(index).copied()
}

struct Reader<R>(R);

impl<R: Read + Seek> Reader<R> {
    fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut b = [0u8; N];
        self.0.read_exact(&mut b).ok()?;
        Some(b)
    }

    fn u32(&mut self) -> Option<u32> {
        self.bytes().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Option<u64> {
        self.bytes().map(u64::from_le_bytes)
    }

    fn string(&mut self) -> Option<Vec<u8>> {
        let n = self.u64()?;
        if n > MAX_STRING {
            return None;
        }
        let mut s = vec![0u8; usize::try_from(n).ok()?];
        self.0.read_exact(&mut s).ok()?;
        Some(s)
    }

    /// An array's element type and length, the length bounded by [`MAX_TOKENS`].
    fn array_header(&mut self) -> Option<(u32, u64)> {
        let ty = self.u32()?;
        let n = self.u64()?;
        (n <= MAX_TOKENS).then_some((ty, n))
    }

    fn strings(&mut self) -> Option<Vec<Vec<u8>>> {
        let (ty, n) = self.array_header()?;
        if ty != T_STRING {
            return None;
        }
        (0..n).map(|_| self.string()).collect()
    }

    fn i32s(&mut self) -> Option<Vec<i32>> {
        let (ty, n) = self.array_header()?;
        if ty != T_I32 {
            return None;
        }
        (0..n)
            .map(|_| self.bytes().map(i32::from_le_bytes))
            .collect()
    }

    /// Move `n` bytes on.
    fn seek(&mut self, n: u64) -> Option<()> {
        self.0.seek_relative(i64::try_from(n).ok()?).ok()
    }

    /// Pass over one value of type `ty`.
    fn skip(&mut self, ty: u32, depth: u8) -> Option<()> {
        if let Some(w) = width(ty) {
            return self.seek(w);
        }
        match ty {
            T_STRING => {
                let n = self.u64()?;
                (n <= MAX_STRING).then_some(())?;
                self.seek(n)
            }
            T_ARRAY if depth < MAX_DEPTH => {
                let (elem, n) = self.array_header()?;
                match width(elem) {
                    Some(w) => self.seek(n.checked_mul(w)?),
                    None => (0..n).try_for_each(|_| self.skip(elem, depth + 1)),
                }
            }
            _ => None,
        }
    }
}

/// The size in bytes of a fixed-size GGUF value type.
fn width(ty: u32) -> Option<u64> {
    match ty {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn byte_level_alphabet_inverts_gpt2_table() {
        assert_eq!(byte_of('A'), Some(b'A'));
        assert_eq!(byte_of('Ġ'), Some(b' ')); // U+0120: the 33rd non-printable byte
        assert_eq!(byte_of('Ċ'), Some(b'\n'));
        assert_eq!(byte_of('\u{100}'), Some(0));
        assert_eq!(byte_of('ÿ'), Some(0xFF));
        assert_eq!(byte_of('\u{143}'), Some(0xAD)); // the 68th: soft hyphen
        assert_eq!(spell(b" \n\x00\xad"), "ĠĊĀŃ");
        assert_eq!(byte_of('\u{144}'), None);
        assert_eq!(byte_of(' '), None);
        let all: Vec<u8> = (0u32..512)
            .filter_map(char::from_u32)
            .filter_map(byte_of)
            .collect();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 256, "every byte exactly once");
        assert_eq!(all.len(), 256);
    }

    /// GPT-2's byte-to-unicode table, forwards.
    fn spell(bytes: &[u8]) -> String {
        bytes
            .iter()
            .map(|&b| match SHIFTED.iter().position(|&x| x == b) {
                Some(i) => char::from_u32(256 + i as u32).unwrap_or('?'),
                None => char::from(b),
            })
            .collect()
    }

    fn string(out: &mut Vec<u8>, s: &[u8]) {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    }

    fn key(out: &mut Vec<u8>, k: &str, ty: u32) {
        string(out, k.as_bytes());
        out.extend_from_slice(&ty.to_le_bytes());
    }

    /// A GGUF header as llama.cpp's converter writes one: other keys first, then the
    /// tokenizer's model, tokens, types, merges and eos id.
    fn header(tokens: &[Vec<u8>], types: &[i32]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(&7u64.to_le_bytes());
        key(&mut out, "general.name", T_STRING);
        string(&mut out, b"test");
        key(&mut out, "general.weights", T_ARRAY);
        out.extend_from_slice(&6u32.to_le_bytes());
        out.extend_from_slice(&2u64.to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        key(&mut out, "tokenizer.ggml.model", T_STRING);
        string(&mut out, b"gpt2");
        key(&mut out, "tokenizer.ggml.tokens", T_ARRAY);
        out.extend_from_slice(&T_STRING.to_le_bytes());
        out.extend_from_slice(&(tokens.len() as u64).to_le_bytes());
        for t in tokens {
            string(&mut out, t);
        }
        key(&mut out, "tokenizer.ggml.token_type", T_ARRAY);
        out.extend_from_slice(&T_I32.to_le_bytes());
        out.extend_from_slice(&(types.len() as u64).to_le_bytes());
        for t in types {
            out.extend_from_slice(&t.to_le_bytes());
        }
        key(&mut out, "tokenizer.ggml.merges", T_ARRAY);
        out.extend_from_slice(&T_STRING.to_le_bytes());
        out.extend_from_slice(&1u64.to_le_bytes());
        string(&mut out, "Ġ t".as_bytes());
        key(&mut out, "tokenizer.ggml.eos_token_id", T_U32);
        out.extend_from_slice(&0u32.to_le_bytes());
        out
    }

    fn token() -> impl Strategy<Value = (Vec<u8>, i32)> {
        prop_oneof![
            (proptest::collection::vec(any::<u8>(), 0..12), Just(NORMAL)),
            (
                "<[a-z_|]{1,10}>",
                prop_oneof![Just(CONTROL), Just(USER_DEFINED)]
            )
                .prop_map(|(t, ty)| (t.into_bytes(), ty)),
            (Just(Vec::new()), Just(2)),
        ]
    }

    proptest! {
        #[test]
        fn tokens_read_back_as_llama_cpp_spells_them(
            tokens in proptest::collection::vec(token(), 1..40),
        ) {
            let spelled: Vec<Vec<u8>> = tokens
                .iter()
                .map(|(b, ty)| if *ty == NORMAL { spell(b).into_bytes() } else { b.clone() })
                .collect();
            prop_assume!(spelled
                .iter()
                .all(|t| !CONTROL_LOOKING.iter().any(|c| c.as_bytes() == t.as_slice())));
            let types: Vec<i32> = tokens.iter().map(|(_, ty)| *ty).collect();
            let mut expected = Vocab::with_capacity(tokens.len());
            for (bytes, ty) in tokens {
                expected.push(ty != NORMAL && ty != 2, bytes);
            }
            let got = read_from(std::io::Cursor::new(header(&spelled, &types)));
            prop_assert_eq!(got, Some((expected, Some(0))));
        }

        #[test]
        fn a_damaged_header_never_panics(
            tokens in proptest::collection::vec(token(), 1..20),
            cut in any::<prop::sample::Index>(),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        ) {
            let spelled: Vec<Vec<u8>> = tokens.iter().map(|(b, _)| b.clone()).collect();
            let types: Vec<i32> = tokens.iter().map(|(_, ty)| *ty).collect();
            let mut bytes = header(&spelled, &types);
            for (at, b) in flips {
                let i = at.index(bytes.len());
                bytes[i] = b;
            }
            bytes.truncate(cut.index(bytes.len() + 1));
            let _ = read_from(std::io::Cursor::new(bytes));
        }
    }

    #[test]
    fn not_a_gguf_is_none() {
        let dir = std::env::temp_dir().join(format!("toolgram-gguf-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        for (name, bytes) in [
            ("empty", Vec::new()),
            ("text", b"not a model".to_vec()),
            (
                "huge-kv",
                [
                    MAGIC.as_slice(),
                    &3u32.to_le_bytes(),
                    &0u64.to_le_bytes(),
                    &u64::MAX.to_le_bytes(),
                ]
                .concat(),
            ),
            ("short", [MAGIC.as_slice(), &3u32.to_le_bytes()].concat()),
        ] {
            let p = dir.join(name);
            std::fs::write(&p, bytes).ok();
            assert!(read(&p).is_none(), "{name}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
