//! `generate` under the sample GBNF grammars of llama.cpp (shared grammar-tests): read by our
//! GBNF reader, run under llguidance on the test model; every complete output is accepted
//! by that same grammar in llama.cpp's own engine (child process) and by llguidance; an
//! output cut by the token limit must be a viable prefix of it.

mod common;

use common::*;
use toolgram_core::ChatMessage;
use toolgram_core::define::request::Think;
use toolgram_engine::{
    ByteChecker, FinishReason, GenerateRequest, Sampling, UserGrammar, gbnf_check,
};
use toolgram_grammar::{gbnf, lark};

#[test]
fn every_sample_gbnf_runs_and_its_output_is_accepted_by_llama_cpp() {
    let _g = lock();
    let dir = testdata().join("grammar-tests/llamacpp_grammars");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("sample grammars")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "gbnf"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{} samples", files.len());
    let checker = ByteChecker::new().expect("checker");
    // Most of these grammars admit endless output; a bias towards end-of-generation (OpenAI's
    // `logit_bias`, applied before the mask) lets the model stop wherever the grammar accepts.
    let stop_bias: Vec<(u32, f32)> = engine("test")
        .eog_tokens()
        .iter()
        .map(|&t| (t, 12.0))
        .collect();
    let mut s = engine("test").session().expect("session");
    let mut complete = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        let g = gbnf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let lark_text = lark::emit(&g, lark::LarkDialect::Llguidance);
        let grammar = UserGrammar::Lark(lark_text.clone());
        let stem = f
            .file_stem()
            .map(|x| x.to_string_lossy())
            .unwrap_or_default();
        let messages = [ChatMessage::text(
            "user",
            format!("Write one short example of {stem}, then stop."),
        )];
        let compiled = s
            .engine()
            .grammars()
            .compile_generation(&grammar, Think::Off)
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let r = s
            .generate_text(&GenerateRequest {
                messages: &messages,
                grammar: &compiled,
                sampling: Sampling {
                    max_tokens: 160,
                    logit_bias: stop_bias.clone(),
                    ..Sampling::default()
                },
            })
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let ours = checker.compile(&lark_text).expect("compiles");
        if r.finish_reason != FinishReason::Stop {
            // Cut by the token limit (these grammars admit endless output): every byte
            // written must still be a viable prefix of the grammar.
            assert_eq!(
                checker.accepted_len(&ours, &r.content),
                r.content.len(),
                "{}: {:?}",
                f.display(),
                r.content
            );
            let tail: String = r.content.chars().rev().take(80).collect();
            let tail: String = tail.chars().rev().collect();
            eprintln!(
                "{}: a viable prefix at the token limit (…{tail:?})",
                f.display()
            );
            continue;
        }
        complete += 1;
        assert!(
            checker.accepts(&ours, &r.content),
            "{}: {:?}",
            f.display(),
            r.content
        );
        let v = gbnf_check::check(&test_model_path(), &text, std::slice::from_ref(&r.content))
            .expect("llama.cpp check runs");
        assert!(v.parsed && !v.aborted, "{}", f.display());
        assert_eq!(v.accepted, vec![true], "{}: {:?}", f.display(), r.content);
    }
    eprintln!(
        "{complete} of {} samples produced a complete output",
        files.len()
    );
    // Greedy decoding ends most samples where their grammar accepts. Not all: the 135M model
    // may nest JSON objects without end, which no grammar may cut short (the native build's
    // numerics do that on json.gbnf). If ending where the grammar accepts broke, none would.
    assert!(
        complete * 4 >= files.len() * 3,
        "only {complete} of {} samples ended",
        files.len()
    );
}
