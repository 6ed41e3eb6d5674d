//! Load a GGUF model once: weights, vocabulary (as an llguidance tokenizer environment),
//! chat template and call syntax. An [`Engine`] is shared; each [`crate::Session`] borrows it
//! with its own llama.cpp context and KV cache.
//!
//! This module must not generate: the decode loop lives in `session`.

use crate::backend::Backend;
use crate::client_text::ClientText;
use crate::compiled_call::{Grammars, PoolRequest, compile_pool};
use crate::error::EngineError;
use crate::gpu::{GpuOptions, Offload};
use crate::template::ChatTemplate;
use crate::threads::default_threads;
use crate::tokenizer::{LlamaTokEnv, Vocab};
use crate::tokens::call_starts::CallStarts;
use llama_cpp_2::model::LlamaModel;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::TokEnv;
use llguidance::{Matcher, ParserFactory};
use std::path::Path;
use std::sync::Arc;
use toolgram_core::compile::{CompileOptions, CompiledGrammar};
use toolgram_core::syntax::{self, CallSyntax};
use toolgram_core::{ToolChoice, ToolSet};

/// How to load a model.
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// CPU threads for llama.cpp; `None` picks [`default_threads`].
    pub threads: Option<u32>,
    /// Context window in tokens; `None` = min(model's training context, `default_ctx_cap`).
    pub n_ctx: Option<u32>,
    /// The most a context window chosen for the model may be (`None`: 8192). `serve` raises
    /// it: agents send 10–25k tokens of instructions and tools on every turn.
    pub default_ctx_cap: Option<u32>,
    /// A Jinja chat template overriding the one in the GGUF.
    pub chat_template: Option<String>,
    /// A call syntax name overriding detection from the template.
    pub syntax: Option<String>,
    /// Where the layers go (`--gpu-layers`, `--device`, `--split-mode`).
    pub gpu: GpuOptions,
}

/// The environment and mask factory of the vocabulary read from the GGUF header at `path`,
/// not yet bound to a model; `None` when the header cannot be read that way.
fn early_vocabulary(path: &Path) -> Option<(Arc<LlamaTokEnv>, ParserFactory)> {
    let (vocab, eos) = crate::gguf_vocab::read(path)?;
    let tok = Arc::new(LlamaTokEnv::draft(vocab, eos.as_slice()));
    let factory = mask_factory(&tok).ok()?;
    Some((tok, factory))
}

/// llguidance's parser factory over `tok`, with its default token-set slices (they keep
/// masks fast inside free strings) and the engine's limits.
fn mask_factory(tok: &Arc<LlamaTokEnv>) -> Result<ParserFactory, EngineError> {
    let env: TokEnv = tok.clone();
    let mut factory =
        ParserFactory::new_simple(&env).map_err(|e| EngineError::Grammar(e.to_string()))?;
    factory.quiet();
    raise_item_limit(factory.limits_mut());
    Ok(factory)
}

/// A loaded model, ready to serve sessions.
pub struct Engine {
    pub(crate) model: Arc<LlamaModel>,
    pub(crate) tok: Arc<LlamaTokEnv>,
    pub(crate) template: ChatTemplate,
    pub(crate) syntax: &'static CallSyntax,
    pub(crate) threads: u32,
    pub(crate) n_ctx: u32,
    pub(crate) grammars: Arc<Grammars>,
    /// Keeps special-token strings in client text as text.
    pub(crate) client: ClientText,
    /// The tokens that open a call (for `call_bias`).
    pub(crate) call_starts: CallStarts,
    name: String,
    vocab_early: bool,
    offload: Arc<Offload>,
    /// Held until the model (above: fields drop in order) is freed; contexts borrow the
    /// engine, so they are freed before it.
    pub(crate) backend: Arc<Backend>,
}

impl Engine {
    /// Load the GGUF at `path`.
    pub fn load(path: &Path, opts: &EngineOptions) -> Result<Self, EngineError> {
        let load_err = |reason: String| EngineError::ModelLoad {
            path: path.display().to_string(),
            reason,
        };
        if !path.is_file() {
            return Err(load_err("no such file".into()));
        }
        let backend = crate::backend::backend()?;
        // The fit logic plans for the largest context this load may choose.
        let ctx_plan = opts
            .n_ctx
            .unwrap_or(opts.default_ctx_cap.unwrap_or(8192).max(512));
        let (model, tok, factory, vocab_early, offload) = std::thread::scope(|s| {
            // The trie and mask slices of the vocabulary in the GGUF header are built on a
            // second thread while llama.cpp loads the weights (see `gguf_vocab`).
            let early = s.spawn(|| early_vocabulary(path));
            let (model, offload) = crate::gpu::load(backend.llama(), path, &opts.gpu, ctx_plan)?;
            let (vocab, eog) = Vocab::of_model(&model);
            if eog.is_empty() {
                return Err(load_err(
                    "the vocabulary has no end-of-generation token".into(),
                ));
            }
            let model = Arc::new(model);
            let early = early.join().ok().flatten();
            let (tok, factory, vocab_early) = match early {
                Some((tok, factory)) if tok.spells(&vocab) => (tok, factory, true),
                early => {
                    if early.is_some() {
                        tracing::debug!("the GGUF header's vocabulary differs from llama.cpp's");
                    }
                    let tok = Arc::new(LlamaTokEnv::draft(vocab, &eog));
                    let factory = mask_factory(&tok)?;
                    (tok, factory, false)
                }
            };
            tok.bind(&model, eog);
            Ok((model, tok, factory, vocab_early, offload))
        })?;
        let source = match &opts.chat_template {
            Some(t) => t.clone(),
            None => model
                .chat_template(None)
                .map_err(|e| {
                    load_err(format!(
                        "the GGUF has no chat template ({e}); pass --chat-template FILE"
                    ))
                })?
                .to_string()
                .map_err(|e| load_err(format!("chat template is not UTF-8: {e}")))?,
        };
        let vocab = model.vocab();
        let piece = |t: llama_cpp_2::token::LlamaToken| {
            let id = u32::try_from(t.0).unwrap_or(u32::MAX);
            String::from_utf8_lossy(tok.piece(id)).into_owned()
        };
        let (bos, eos) = (piece(vocab.bos()), piece(vocab.eos()));
        let template = ChatTemplate::new(&source, &bos, &eos).map_err(EngineError::Template)?;
        let syntax = match &opts.syntax {
            Some(name) => syntax::by_name(name)
                .ok_or_else(|| load_err(format!("unknown call syntax `{name}`")))?,
            None => {
                let found = toolgram_core::template::detect(&template, &source);
                if found.notable {
                    tracing::warn!("call syntax: {}", found.how);
                }
                found.syntax
            }
        };
        let client = ClientText::of_model(&model, &source, syntax);
        let call_starts = CallStarts::find(
            tok.pieces.iter().map(Vec::as_slice),
            |t| tok.specials.get(t).copied(),
            syntax,
        );
        let compile_opts = CompileOptions {
            special_tokens: syntax_markers(syntax)
                .chain([syntax::THINK.0.text(), syntax::THINK.1.text()])
                .filter_map(|m| tok.specials.get(m).map(|id| (m.to_owned(), *id)))
                .collect(),
            // A keyword toolgram does not know is an annotation here: left out of the grammar
            // and listed (`CallResponse::ignored`); refusing it is the run stage's check.
            lenient: true,
            ..CompileOptions::default()
        };
        let n_ctx = opts.n_ctx.unwrap_or_else(|| {
            model
                .n_ctx_train()
                .clamp(512, opts.default_ctx_cap.unwrap_or(8192).max(512))
        });
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Self {
            model,
            tok,
            template,
            syntax,
            threads: opts.threads.unwrap_or_else(default_threads),
            n_ctx,
            grammars: Arc::new(Grammars::new(factory, compile_opts, syntax)),
            client,
            call_starts,
            name,
            vocab_early,
            offload: Arc::new(offload),
            backend,
        })
    }

    /// Where the model's layers are.
    pub fn offload(&self) -> &Arc<Offload> {
        &self.offload
    }

    /// The call syntax this engine speaks.
    pub fn syntax(&self) -> &'static CallSyntax {
        self.syntax
    }

    /// Whether the model's chat template writes a reasoning block (it renders an assistant
    /// turn's `reasoning_content`, or speaks harmony's analysis channel): a model trained to
    /// reason before it answers, where `--think optional` is worth offering to clients.
    pub fn template_reasons(&self) -> bool {
        self.syntax.body == toolgram_core::syntax::CallBody::Harmony
            || toolgram_core::template::turn::writes_reasoning(&self.template)
    }

    /// Whether the vocabulary's token trie and mask slices were built from the GGUF header
    /// while llama.cpp loaded the weights (llama.cpp's spelling of every token agreeing), not
    /// after it.
    pub fn vocab_built_early(&self) -> bool {
        self.vocab_early
    }

    /// The model file's name.
    pub fn model_name(&self) -> &str {
        &self.name
    }

    /// Options the compiler needs for this vocabulary (its special marker tokens).
    pub fn compile_options(&self) -> &CompileOptions {
        self.grammars.compile_options()
    }

    /// The grammar compiler for this model's vocabulary: shareable, so a request can be
    /// compiled (and refused) before it is queued, and the run reads what was compiled.
    pub fn grammars(&self) -> &Arc<Grammars> {
        &self.grammars
    }

    /// Context window size.
    pub fn n_ctx(&self) -> u32 {
        self.n_ctx
    }

    /// End-of-generation token ids.
    pub fn eog_tokens(&self) -> &[u32] {
        self.tok.eog()
    }

    /// The prompt of `messages` (client text, see `client_text`) with `tools` as tokens: the
    /// template's markers as special tokens, client text as text, BOS first where the model
    /// wants one.
    pub(crate) fn prompt(
        &self,
        messages: &[toolgram_core::ChatMessage],
        tools: &ToolSet,
    ) -> Result<Vec<llama_cpp_2::token::LlamaToken>, EngineError> {
        let escaped = self.client.escape_messages(messages);
        self.prompt_escaped(&escaped, tools)
    }

    /// [`Self::prompt`] of messages whose client text is already escaped
    /// ([`ClientText::escape_messages`]; text toolgram adds after that keeps its markers).
    pub(crate) fn prompt_escaped(
        &self,
        escaped: &[toolgram_core::ChatMessage],
        tools: &ToolSet,
    ) -> Result<Vec<llama_cpp_2::token::LlamaToken>, EngineError> {
        let prompt = self
            .template
            .render_escaped(escaped, tools, self.syntax, &self.client)
            .map_err(EngineError::Template)?;
        let mut tokens = self.client.tokenize(&self.model, &prompt);
        let vocab = self.model.vocab();
        let bos = vocab.bos();
        if vocab.should_add_bos() && tokens.first() != Some(&bos) {
            tokens.insert(0, bos);
        }
        Ok(tokens)
    }

    /// How many tokens the prompt of `messages` with `tools` has, as a request evaluates it
    /// (special-token strings in client text count as the text they are).
    pub fn prompt_tokens(
        &self,
        messages: &[toolgram_core::ChatMessage],
        tools: &ToolSet,
    ) -> Result<usize, EngineError> {
        Ok(self.prompt(messages, tools)?.len())
    }

    /// How many tokens this model's tokenizer makes of `text` (no BOS, specials as text).
    pub fn count_tokens(&self, text: &str) -> usize {
        self.model
            .vocab()
            .tokenize(text.as_bytes(), false, false)
            .len()
    }
}

fn syntax_markers(s: &CallSyntax) -> impl Iterator<Item = &'static str> {
    s.marker_pieces().into_iter().filter_map(|p| match p {
        syntax::Piece::Token(t) => Some(t),
        syntax::Piece::Text(_) => None,
    })
}

/// Compile and check a request before any model is loaded: [`compile_pool`] with llguidance
/// over a byte-level vocabulary.
pub fn compile_over_bytes(
    tools: &ToolSet,
    choice: &ToolChoice,
    parallel: bool,
    syntax: &CallSyntax,
    opts: &CompileOptions,
) -> Result<CompiledGrammar, EngineError> {
    let request = PoolRequest {
        tools,
        choice,
        parallel,
        syntax,
        opts,
    };
    compile_pool(&request, check_lark).map(|(plan, ())| plan)
}

/// Check a Lark grammar with llguidance before any model is loaded (byte-level vocabulary).
pub fn check_lark(lark: &str) -> Result<(), EngineError> {
    ByteChecker::new()?.compile(lark).map(|_| ())
}

/// llguidance over a byte-level vocabulary: compile grammars and test whole strings against
/// them without a model (grammar checks, acceptance tests, `bench compile`).
pub struct ByteChecker {
    env: TokEnv,
    factory: ParserFactory,
}

/// A grammar compiled by a [`ByteChecker`].
pub struct CompiledCheck {
    parser: llguidance::TokenParser,
}

/// Earley items one mask may build. llguidance's default (50,000, ~2.5 ms) is meant for
/// grammars with long lexemes; our Lark writer spells grammar tools character by character
/// (exactly the language, no lexer-conflict surprises), and a grammar tool inside a JSON
/// string needs up to ~160,000 items for one mask on Qwen's vocabulary (measured on
/// `apply_patch`). The cap still bounds a step (≈50 ms at llguidance's 20k items/ms).
const STEP_MAX_ITEMS: usize = 1_000_000;

/// Earley items one row may hold (llguidance's default 2,000): a long `enum` of strings
/// spelled character by character keeps one item per value alive while their prefixes agree.
const MAX_ITEMS_IN_ROW: usize = 50_000;

fn raise_item_limit(limits: &mut llguidance::api::ParserLimits) {
    limits.step_max_items = limits.step_max_items.max(STEP_MAX_ITEMS);
    limits.max_items_in_row = limits.max_items_in_row.max(MAX_ITEMS_IN_ROW);
}

impl ByteChecker {
    /// A checker with the engine's limits.
    pub fn new() -> Result<Self, EngineError> {
        let env: TokEnv = llguidance::toktrie::ApproximateTokEnv::single_byte_env();
        let mut factory =
            ParserFactory::new_simple(&env).map_err(|e| EngineError::Grammar(e.to_string()))?;
        factory.quiet();
        raise_item_limit(factory.limits_mut());
        Ok(Self { env, factory })
    }

    /// Compile a Lark grammar.
    pub fn compile(&self, lark: &str) -> Result<CompiledCheck, EngineError> {
        self.compile_grammar(TopLevelGrammar::from_lark(lark.to_owned()))
    }

    /// Compile any llguidance grammar (Lark, JSON Schema, several grammars).
    pub fn compile_grammar(&self, g: TopLevelGrammar) -> Result<CompiledCheck, EngineError> {
        self.factory
            .create_parser(g)
            .map(|parser| CompiledCheck { parser })
            .map_err(|e| EngineError::Grammar(e.to_string()))
    }

    /// Whether `grammar` accepts exactly `text`.
    pub fn accepts(&self, grammar: &CompiledCheck, text: &str) -> bool {
        let mut m = Matcher::new(Ok(grammar.parser.deep_clone()));
        let toks = self.env.tokenize_bytes(text.as_bytes());
        matches!(m.try_consume_tokens(&toks), Ok(n) if n == toks.len())
            && m.is_accepting().unwrap_or(false)
    }

    /// How many leading bytes of `text` the grammar accepts as a prefix: where a rejected
    /// text stopped matching.
    pub fn accepted_len(&self, grammar: &CompiledCheck, text: &str) -> usize {
        let mut m = Matcher::new(Ok(grammar.parser.deep_clone()));
        let toks = self.env.tokenize_bytes(text.as_bytes());
        m.try_consume_tokens(&toks).unwrap_or(0)
    }
}
