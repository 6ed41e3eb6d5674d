//! `generate` under the sample GBNF grammars of llama.cpp (shared grammar-tests): read by our
//! GBNF reader, run under llguidance on the test model; every complete output is accepted
//! by that same grammar in llama.cpp's own engine (child process) and by llguidance.

mod common;

use common::*;
use toolgram_core::ChatMessage;
use toolgram_core::compile::Think;
use toolgram_core::grammar::{gbnf, lark};
use toolgram_engine::{
    ByteChecker, FinishReason, GenerateRequest, Sampling, UserGrammar, gbnf_check,
};

#[test]
fn every_sample_gbnf_runs_and_its_output_is_accepted_by_llama_cpp() {
    let _g = lock();
    let dir = shared_data().join("grammar-tests/llamacpp_grammars");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("sample grammars")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "gbnf"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{} samples", files.len());
    let checker = ByteChecker::new().expect("checker");
    let mut s = engine("test").session().expect("session");
    let mut complete = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        let g = gbnf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let lark_text = lark::emit(&g, lark::LarkDialect::Llguidance);
        let grammar = UserGrammar::Lark(lark_text.clone());
        let messages = [ChatMessage::text("user", "Write a short example.")];
        let r = s
            .generate_text(&GenerateRequest {
                messages: &messages,
                grammar: &grammar,
                think: Think::Off,
                sampling: Sampling {
                    max_tokens: 160,
                    ..Sampling::default()
                },
            })
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if r.finish_reason != FinishReason::Stop {
            eprintln!("{}: stopped at the token limit", f.display());
            continue;
        }
        complete += 1;
        let ours = checker.compile(&lark_text).expect("compiles");
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
    assert!(complete > 0);
}
