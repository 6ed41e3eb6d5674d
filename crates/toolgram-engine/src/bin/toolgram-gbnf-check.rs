//! Child process for `toolgram_engine::gbnf_check`: `toolgram-gbnf-check MODEL.gguf` reads
//! `{"grammar", "strings"}` JSON lines on stdin and writes one verdict line per job. Not a
//! user command: llama.cpp may abort it, which the parent counts as a failed check.

fn main() -> std::process::ExitCode {
    let Some(model) = std::env::args_os().nth(1) else {
        eprintln!("usage: toolgram-gbnf-check MODEL.gguf < jobs.jsonl");
        return std::process::ExitCode::from(2);
    };
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match toolgram_engine::gbnf_check::run_jobs(std::path::Path::new(&model), stdin, stdout) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
