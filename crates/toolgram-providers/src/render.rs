//! Requests in each provider's documented shape, for a path already chosen
//! ([`crate::choose_path`]): the callable pool worked out here, and the body by the provider's
//! row (its strict path and grammar field) and dialect ([`crate::Dialect`]). It builds JSON
//! only: it must not send anything, and names no provider.

use crate::dialect::json_object;
use crate::error::ProviderError;
use crate::spec::{Kind, RenderInput, Strict};
use serde_json::{Value, json};
use toolgram_core::ToolSet;
use toolgram_core::compile::CompileOptions;
use toolgram_core::compile::ir::compile_ir;
use toolgram_core::define::request::Path;
use toolgram_grammar::gbnf;

/// A request body and where it goes.
#[derive(Debug)]
pub struct Rendered {
    /// Path part of the URL (after the base URL).
    pub endpoint: String,
    /// The JSON body.
    pub body: Value,
    /// What the provider will not enforce and toolgram checks after parsing, and other
    /// facts worth telling the user (never keys).
    pub notes: Vec<String>,
}

/// What a request's body takes from its pool and call shape rather than its messages: the
/// callable pool and, on the grammar path, our GBNF (the whole call shape compiled in) with
/// its notes. Worked out once per shape ([`RenderPlan::new`]); each attempt of the retry loop
/// then renders only its messages around it ([`render_planned`]).
#[derive(Debug)]
pub struct RenderPlan {
    pool: ToolSet,
    grammar: Option<Gbnf>,
}

/// A grammar path's GBNF and what it leaves to the validator.
#[derive(Debug)]
struct Gbnf {
    text: String,
    notes: Vec<String>,
}

impl RenderPlan {
    /// Whether a reply under this plan is made whole by its grammar: a grammar path's GBNF
    /// that leaves no keyword to the validator (what may be streamed as it arrives).
    pub fn final_by_grammar(&self) -> bool {
        self.grammar.as_ref().is_some_and(|g| g.notes.is_empty())
    }

    /// The plan of `input`'s pool, shape and path (its messages are not read).
    pub fn new(input: &RenderInput) -> Result<Self, ProviderError> {
        let compile = |e: &dyn std::fmt::Display| ProviderError::Compile(e.to_string());
        let callable = input
            .shape
            .choice
            .callable(input.tools)
            .map_err(|e| compile(&e))?;
        let pool = input.tools.subset(&callable).map_err(|e| compile(&e))?;
        let grammar = if input.path == Path::Grammar && input.kind.grammar_field.is_some() {
            let ir = compile_ir(
                input.tools,
                &input.shape.choice,
                input.shape.parallel,
                input.syntax,
                &input.shape.options(&CompileOptions::default()),
                false,
            )
            .map_err(|e| compile(&e))?;
            let notes = ir
                .notes
                .iter()
                .map(|(tool, n)| {
                    format!(
                        "tool `{tool}` at {}: `{}` enforced after parsing",
                        n.pointer, n.keyword
                    )
                })
                .collect();
            Some(Gbnf {
                text: gbnf::emit(&ir.grammar),
                notes,
            })
        } else {
            None
        };
        Ok(Self { pool, grammar })
    }
}

/// Render the request (its plan worked out here: [`RenderPlan`]).
pub fn render(input: &RenderInput) -> Result<Rendered, ProviderError> {
    render_planned(input, &RenderPlan::new(input)?)
}

/// Render the request around its `plan`, made by [`RenderPlan::new`] for the same pool, shape
/// and path.
pub fn render_planned(input: &RenderInput, plan: &RenderPlan) -> Result<Rendered, ProviderError> {
    let mut notes = Vec::new();
    let pool = &plan.pool;
    let kind = input.kind;
    let mut body = match (input.path, kind.strict, kind.grammar_field, &plan.grammar) {
        (Path::Prompt, ..) => kind.dialect.prompt(input, pool),
        (Path::StrictJson, Some(Strict::Tools), ..) => {
            kind.dialect.strict_tools(input, pool, &mut notes)?
        }
        (Path::StrictJson, Some(Strict::ResponseSchema(field)), ..) => {
            let (messages, schema) = json_object::request(input, pool, &mut notes)?;
            json!({"messages": messages, field: schema})
        }
        (Path::Grammar, _, Some(field), Some(grammar)) => {
            notes.extend(grammar.notes.iter().cloned());
            let mut body = kind.dialect.grammar(input, pool)?;
            *field.iter().fold(&mut body, |at, key| &mut at[*key]) = json!(grammar.text);
            body
        }
        (path, ..) => return Err(unsupported(kind, path)),
    };
    let endpoint = kind.dialect.finish(input, &mut body);
    Ok(Rendered {
        endpoint,
        body,
        notes,
    })
}

/// The error for a path `kind` does not take.
fn unsupported(kind: Kind, path: Path) -> ProviderError {
    ProviderError::Unsupported(match path {
        Path::Json => format!(
            "json is the embedded engine's path; {} takes strict_json",
            kind.name()
        ),
        _ => format!("{} takes no grammar for the whole reply", kind.name()),
    })
}
