//! The models a front end serves, as declared — `--model` references or a models file
//! (`--models FILE`, TOML) — resolved into [`ModelEntry`]s: each file found (fetched on
//! first use, `hf:` references included), named, and given its own engine options over the
//! front end's. This module must not load a model: [`crate::ModelSet`] does, on first use.
//!
//! ```toml
//! [[model]]
//! name = "small"                    # the id clients send (default: the file's name)
//! model = "default"                 # a registry name, a GGUF path or an hf: reference
//! aliases = ["gpt-4o-mini"]
//!
//! [[model]]
//! model = "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M"
//! ctx_size = 16384
//! gpu_layers = "all"                # a count, "all" or "auto"
//! chat_template = "qwen.jinja"      # relative to this file
//! syntax = "qwen"
//! ```

use crate::model_set::ModelEntry;
use crate::{Backend, EmbeddedConfig, RunError};
use serde::{Deserialize, Deserializer};
use std::path::{Path, PathBuf};
use toolgram_engine::gpu::GpuLayers;
use toolgram_engine::models;

/// One model to serve, as declared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelDecl {
    /// The id clients send and replies name (default: the GGUF file's name without
    /// `.gguf`).
    pub name: Option<String>,
    /// A registry name or role, a GGUF path, or an `hf:` reference.
    #[serde(alias = "path")]
    pub model: String,
    /// Other names that pick it.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Its context window (default: the front end's).
    pub ctx_size: Option<u32>,
    /// Its layers on the GPU: a count, `all` or `auto` (default: the front end's).
    #[serde(default, deserialize_with = "gpu_layers")]
    pub gpu_layers: Option<GpuLayers>,
    /// A Jinja chat template file overriding the GGUF's (relative to the models file).
    pub chat_template: Option<PathBuf>,
    /// A call syntax overriding detection from the template.
    pub syntax: Option<String>,
}

impl ModelDecl {
    /// A model given by reference alone (`--model REF`).
    pub fn reference(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            ..Self::default()
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelsFile {
    #[serde(rename = "model", default)]
    models: Vec<ModelDecl>,
}

fn gpu_layers<'de, D: Deserializer<'de>>(d: D) -> Result<Option<GpuLayers>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Layers {
        Count(u32),
        Word(String),
    }
    match Option::<Layers>::deserialize(d)? {
        None => Ok(None),
        Some(Layers::Count(n)) => Ok(Some(GpuLayers::Count(n))),
        Some(Layers::Word(w)) => w.parse().map(Some).map_err(serde::de::Error::custom),
    }
}

/// Read a models file: its `[[model]]` tables, chat template paths made relative to it.
pub fn read_models_file(path: &Path) -> Result<Vec<ModelDecl>, RunError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| RunError::Io(format!("reading the models file {}: {e}", path.display())))?;
    let file: ModelsFile = toml::from_str(&text).map_err(|e| {
        RunError::InvalidRequest(format!("the models file {}: {e}", path.display()))
    })?;
    if file.models.is_empty() {
        return Err(RunError::InvalidRequest(format!(
            "the models file {} declares no [[model]]",
            path.display()
        )));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    Ok(file
        .models
        .into_iter()
        .map(|mut m| {
            m.chat_template = m.chat_template.map(|t| dir.join(t));
            m
        })
        .collect())
}

/// The entries of `decls` on the embedded engine, each over `base`: its file found
/// (fetched if it is not here), its id and names, its engine options.
pub fn embedded_entries(
    decls: &[ModelDecl],
    base: &EmbeddedConfig,
) -> Result<Vec<ModelEntry>, RunError> {
    decls.iter().map(|d| embedded_entry(d, base)).collect()
}

fn embedded_entry(decl: &ModelDecl, base: &EmbeddedConfig) -> Result<ModelEntry, RunError> {
    let path = models::resolve(Some(&decl.model))?;
    let file = path
        .file_name()
        .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
    let id = match &decl.name {
        Some(n) => n.clone(),
        None => file.strip_suffix(".gguf").unwrap_or(&file).to_owned(),
    };
    let mut aliases = decl.aliases.clone();
    // A registry name or an hf: reference picks the model it named; a path does not.
    if decl.model != id && !Path::new(&decl.model).is_file() {
        aliases.push(decl.model.clone());
    }
    let mut engine = base.engine.clone();
    if let Some(n) = decl.ctx_size {
        engine.n_ctx = Some(n);
    }
    if let Some(layers) = decl.gpu_layers {
        engine.gpu.layers = layers;
    }
    if let Some(t) = &decl.chat_template {
        let text = std::fs::read_to_string(t).map_err(|e| {
            RunError::Io(format!(
                "reading the chat template {} of `{id}`: {e}",
                t.display()
            ))
        })?;
        engine.chat_template = Some(text);
    }
    if let Some(s) = &decl.syntax {
        engine.syntax = Some(s.clone());
    }
    Ok(ModelEntry {
        id,
        aliases,
        backend: Backend::Embedded(EmbeddedConfig {
            model: Some(path.to_string_lossy().into_owned()),
            engine,
            ..base.clone()
        }),
    })
}

/// Give each `(NAME, MODEL)` of `aliases` to the entry MODEL names (its id, with or without
/// `.gguf`, or one of its names).
pub fn add_aliases(
    entries: &mut [ModelEntry],
    aliases: &[(String, String)],
) -> Result<(), RunError> {
    for (name, model) in aliases {
        let target = model.strip_suffix(".gguf").unwrap_or(model);
        let Some(entry) = entries
            .iter_mut()
            .find(|e| e.id == target || e.aliases.iter().any(|a| a == model))
        else {
            let ids: Vec<String> = entries.iter().map(|e| format!("`{}`", e.id)).collect();
            return Err(RunError::InvalidRequest(format!(
                "--model-alias {name}={model}: this server serves {}, not `{model}`",
                ids.join(", ")
            )));
        };
        entry.aliases.push(name.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_file_reads_each_field_and_refuses_an_unknown_one() {
        let dir = std::env::temp_dir().join(format!("toolgram-models-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a dir");
        let path = dir.join("models.toml");
        std::fs::write(
            &path,
            "[[model]]\nname = \"small\"\nmodel = \"default\"\naliases = [\"fast\"]\n\n[[model]]\npath = \"big.gguf\"\nctx_size = 4096\ngpu_layers = \"all\"\nchat_template = \"t.jinja\"\nsyntax = \"qwen\"\n\n[[model]]\nmodel = \"m\"\ngpu_layers = 12\n",
        )
        .expect("written");
        let decls = read_models_file(&path).expect("read");
        assert_eq!(decls[0].name.as_deref(), Some("small"));
        assert_eq!(decls[0].aliases, ["fast"]);
        assert_eq!(decls[1].model, "big.gguf");
        assert_eq!(decls[1].gpu_layers, Some(GpuLayers::All));
        assert_eq!(decls[1].chat_template, Some(dir.join("t.jinja")));
        assert_eq!(decls[2].gpu_layers, Some(GpuLayers::Count(12)));
        std::fs::write(&path, "[[model]]\nmodel = \"m\"\ncontext = 4\n").expect("written");
        let err = read_models_file(&path)
            .expect_err("unknown field")
            .to_string();
        assert!(err.contains("unknown field `context`"), "{err}");
        std::fs::write(&path, "[[model]]\nmodel = \"m\"\ngpu_layers = \"many\"\n")
            .expect("written");
        let err = read_models_file(&path).expect_err("bad layers").to_string();
        assert!(err.contains("a layer count, `all` or `auto`"), "{err}");
        std::fs::write(&path, "").expect("written");
        let err = read_models_file(&path).expect_err("empty").to_string();
        assert!(err.contains("declares no [[model]]"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
