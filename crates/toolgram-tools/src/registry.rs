//! The built-in grammar tools, by name: the one place a tool is registered.

use crate::apply_patch::ApplyPatch;
use crate::code_search::CodeSearch;
use crate::definition::DynTool;
use crate::math_eval::MathEval;
use crate::regex_tester::RegexTester;
use crate::shell_constrained::ShellConstrained;

/// Names of the built-in tools.
pub fn names() -> &'static [&'static str] {
    &[
        "apply_patch",
        "math_eval",
        "shell_constrained",
        "code_search",
        "regex_tester",
    ]
}

/// A built-in tool by name.
pub fn builtin(name: &str) -> Option<Box<dyn DynTool>> {
    match name {
        "apply_patch" => Some(Box::new(ApplyPatch)),
        "math_eval" => Some(Box::new(MathEval)),
        "code_search" => Some(Box::new(CodeSearch)),
        "regex_tester" => Some(Box::new(RegexTester)),
        "shell_constrained" => Some(Box::new(ShellConstrained)),
        _ => None,
    }
}
