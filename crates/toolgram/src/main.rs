//! The `toolgram` binary: the command line of [`toolgram::main`].

fn main() -> std::process::ExitCode {
    toolgram::main()
}
