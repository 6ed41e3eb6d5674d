//! The models a front end serves, as declared — `--model` references or a models file
//! (`--models FILE`, TOML) — resolved into [`ModelEntry`]s: each file found (fetched on
//! first use, `hf:` references included), named, and given its own engine options over the
//! front end's. A models file's paths (a `model` that is a path, a `chat_template`) are read
//! relative to the file's folder and must stay inside it — after `..` and symlinks — unless
//! the reader allows paths outside it. This module must not load a model:
//! [`crate::ModelSet`] does, on first use.
//!
//! ```toml
//! [[model]]
//! name = "small"                    # the id clients send (default: the file's name)
//! model = "default"                 # a registry name, a GGUF path or an hf: reference
//!                                   # (a path is relative to this file, inside its folder)
//! aliases = ["gpt-4o-mini"]
//!
//! [[model]]
//! model = "hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF:Q4_K_M"
//! ctx_size = 16384
//! gpu_layers = "all"                # a count, "all" or "auto"
//! chat_template = "qwen.jinja"      # relative to this file, inside its folder
//! syntax = "qwen"
//! ```

use crate::model_set::ModelEntry;
use crate::{Backend, EmbeddedConfig, RunError};
use serde::{Deserialize, Deserializer};
use std::path::{Component, Path, PathBuf};
use toolgram_engine::gpu::GpuLayers;
use toolgram_engine::models;

/// One model to serve, as declared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelDecl {
    /// The id clients send and replies name (default: the GGUF file's name without
    /// `.gguf`).
    pub name: Option<String>,
    /// A registry name or role, a GGUF path, or an `hf:` reference (from a models file, a
    /// path is made absolute, inside the file's folder).
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
    /// A Jinja chat template file overriding the GGUF's (from a models file, made absolute,
    /// inside the file's folder).
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

/// Read a models file: its `[[model]]` tables, each path in them (a `model` that is a path,
/// a `chat_template`) resolved against the file's folder. A path that leaves the folder
/// (through `..`, as an absolute path or through a symlink) is refused with
/// [`RunError::PathOutsideFolder`] unless `allow_outside`.
pub fn read_models_file(path: &Path, allow_outside: bool) -> Result<Vec<ModelDecl>, RunError> {
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
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let folder = std::fs::canonicalize(parent).map_err(|e| {
        RunError::Io(format!(
            "finding the folder of the models file {}: {e}",
            path.display()
        ))
    })?;
    let place = |key, written: &Path| {
        let resolved = real(&folder.join(written));
        if allow_outside || resolved.starts_with(&folder) {
            Ok(resolved)
        } else {
            Err(RunError::PathOutsideFolder {
                key,
                path: written.to_path_buf(),
                resolved,
                folder: folder.clone(),
            })
        }
    };
    file.models
        .into_iter()
        .map(|mut m| {
            if is_model_path(&folder, &m.model) {
                let resolved = place("model", Path::new(&m.model))?;
                m.model = resolved.into_os_string().into_string().map_err(|p| {
                    RunError::InvalidRequest(format!(
                        "the model path {} is not UTF-8",
                        Path::new(&p).display()
                    ))
                })?;
            }
            m.chat_template = m
                .chat_template
                .map(|t| place("chat_template", &t))
                .transpose()?;
            Ok(m)
        })
        .collect()
}

/// Whether a models file's `model` is a path (against `folder`) rather than a name: an `hf:`
/// reference and a registry name or role are names, unless a file of that name lies in
/// `folder` (an existing file comes first, as in [`models::resolve`]); anything else is a
/// path.
fn is_model_path(folder: &Path, model: &str) -> bool {
    if model.starts_with("hf:") {
        return false;
    }
    folder.join(model).is_file() || models::find(model).is_err()
}

/// `path` (absolute) with its `.` and `..` components taken out, then its deepest existing
/// ancestor replaced by its canonical form (symlinks followed): the file it names, as far as
/// the file system can say.
fn real(path: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    let mut rest = Vec::new();
    let mut head = lexical.as_path();
    loop {
        if let Ok(canon) = std::fs::canonicalize(head) {
            return rest.iter().rev().fold(canon, |p, name| p.join(name));
        }
        match (head.parent(), head.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                head = parent;
            }
            _ => return lexical,
        }
    }
}

/// The entries of `decls` on the embedded engine, each over `base`: its file found
/// (fetched if it is not here), its id and names, its engine options. A reference given to
/// several named models (the same file served twice under two names) picks the first of
/// them.
pub fn embedded_entries(
    decls: &[ModelDecl],
    base: &EmbeddedConfig,
) -> Result<Vec<ModelEntry>, RunError> {
    let mut entries: Vec<ModelEntry> = Vec::with_capacity(decls.len());
    for decl in decls {
        let mut entry = embedded_entry(decl, base)?;
        let named_before = |name: &String| {
            entries
                .iter()
                .any(|e| e.id == *name || e.aliases.contains(name))
        };
        if decl.name.is_some() && named_before(&decl.model) {
            entry.aliases.retain(|a| *a != decl.model);
        }
        entries.push(entry);
    }
    Ok(entries)
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

    /// A fresh canonical folder `models` in a scratch folder of its own under the temp dir,
    /// holding `models.toml` with `text`.
    fn models_file(name: &str, text: &str) -> (PathBuf, PathBuf) {
        let root = std::env::temp_dir().join(format!(
            "toolgram-models-file-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("models")).expect("a dir");
        let dir = std::fs::canonicalize(root.join("models")).expect("canonical");
        let path = dir.join("models.toml");
        std::fs::write(&path, text).expect("written");
        (dir, path)
    }

    fn remove(dir: &Path) {
        let _ = std::fs::remove_dir_all(dir.parent().unwrap_or(dir));
    }

    #[test]
    fn a_models_file_reads_each_field_and_refuses_an_unknown_one() {
        let (dir, path) = models_file(
            "fields",
            "[[model]]\nname = \"small\"\nmodel = \"default\"\naliases = [\"fast\"]\n\n[[model]]\npath = \"big.gguf\"\nctx_size = 4096\ngpu_layers = \"all\"\nchat_template = \"t.jinja\"\nsyntax = \"qwen\"\n\n[[model]]\nmodel = \"m\"\ngpu_layers = 12\n",
        );
        let decls = read_models_file(&path, false).expect("read");
        assert_eq!(decls[0].name.as_deref(), Some("small"));
        assert_eq!(decls[0].aliases, ["fast"]);
        assert_eq!(decls[1].model, dir.join("big.gguf").to_string_lossy());
        assert_eq!(decls[1].gpu_layers, Some(GpuLayers::All));
        assert_eq!(decls[1].chat_template, Some(dir.join("t.jinja")));
        assert_eq!(decls[2].gpu_layers, Some(GpuLayers::Count(12)));
        std::fs::write(&path, "[[model]]\nmodel = \"m\"\ncontext = 4\n").expect("written");
        let err = read_models_file(&path, false)
            .expect_err("unknown field")
            .to_string();
        assert!(err.contains("unknown field `context`"), "{err}");
        std::fs::write(&path, "[[model]]\nmodel = \"m\"\ngpu_layers = \"many\"\n")
            .expect("written");
        let err = read_models_file(&path, false)
            .expect_err("bad layers")
            .to_string();
        assert!(err.contains("a layer count, `all` or `auto`"), "{err}");
        std::fs::write(&path, "").expect("written");
        let err = read_models_file(&path, false)
            .expect_err("empty")
            .to_string();
        assert!(err.contains("declares no [[model]]"), "{err}");
        remove(&dir);
    }

    #[test]
    fn names_and_hf_references_are_not_paths_but_a_file_beside_the_models_file_is() {
        let (dir, path) = models_file(
            "names",
            "[[model]]\nmodel = \"default\"\n[[model]]\nmodel = \"test\"\n[[model]]\nmodel = \"hf:Qwen/Qwen2.5-0.5B-GGUF:q8_0\"\n[[model]]\nmodel = \"hf:../../x\"\n[[model]]\nmodel = \"large\"\n[[model]]\nmodel = \"nope\"\n",
        );
        let decls = read_models_file(&path, false).expect("read");
        let models: Vec<&str> = decls.iter().map(|d| d.model.as_str()).collect();
        assert_eq!(
            models,
            [
                "default",
                "test",
                "hf:Qwen/Qwen2.5-0.5B-GGUF:q8_0",
                "hf:../../x",
                "large",
                dir.join("nope").to_str().expect("utf-8")
            ],
            "`nope` is no registry name, so it is a path"
        );
        // A file named like a registry role, beside the models file, is that file.
        std::fs::write(dir.join("test"), "GGUF").expect("written");
        let decls = read_models_file(&path, false).expect("read");
        assert_eq!(decls[1].model, dir.join("test").to_string_lossy());
        remove(&dir);
    }

    #[test]
    fn a_path_that_leaves_the_folder_is_refused_unless_allowed() {
        let (dir, path) = models_file("outside", "");
        let outside = dir.parent().expect("a parent").to_path_buf();
        let secret = outside.join("secret.txt");
        std::fs::write(&secret, "not a template").expect("written");
        // One table: `key = "value"`, with the default model unless `key` names the model.
        let write = |key: &str, value: &str| {
            let model = if key == "chat_template" {
                "model = \"default\"\n"
            } else {
                ""
            };
            std::fs::write(&path, format!("[[model]]\n{model}{key} = \"{value}\"\n"))
                .expect("written");
        };
        let refused = |key: &'static str, value: &str| {
            let err = read_models_file(&path, false).expect_err("outside");
            let RunError::PathOutsideFolder {
                key: k,
                path: p,
                resolved,
                folder,
            } = &err
            else {
                panic!("{err:?}");
            };
            assert_eq!((*k, p.as_path(), folder), (key, Path::new(value), &dir));
            let said = err.to_string();
            assert!(
                said.contains(key)
                    && said.contains(value)
                    && said.contains(&*dir.to_string_lossy()),
                "{said}"
            );
            assert_eq!(err.kind(), "invalid_request");
            resolved.clone()
        };
        write("chat_template", "../../../../../../../../etc/hostname");
        let resolved = refused("chat_template", "../../../../../../../../etc/hostname");
        assert!(resolved.ends_with("etc/hostname"), "{}", resolved.display());
        write("chat_template", "sub/../../secret.txt");
        assert_eq!(refused("chat_template", "sub/../../secret.txt"), secret);
        write("model", "../other.gguf");
        assert_eq!(
            refused("model", "../other.gguf"),
            outside.join("other.gguf")
        );
        let absolute = secret.to_string_lossy();
        write("path", &absolute);
        assert_eq!(refused("model", &absolute), secret);
        // A symlink inside the folder that leads out of it.
        std::os::unix::fs::symlink(&outside, dir.join("up")).expect("a link");
        write("chat_template", "up/secret.txt");
        assert_eq!(refused("chat_template", "up/secret.txt"), secret);
        // Allowed, each is still resolved against the folder.
        let decls = read_models_file(&path, true).expect("allowed");
        assert_eq!(decls[0].chat_template, Some(secret));
        write("model", "../other.gguf");
        let decls = read_models_file(&path, true).expect("allowed");
        assert_eq!(decls[0].model, outside.join("other.gguf").to_string_lossy());
        remove(&dir);
    }

    #[test]
    fn a_path_inside_the_folder_is_accepted_absolute_or_through_dots() {
        let (dir, path) = models_file("inside", "");
        std::fs::create_dir_all(dir.join("sub")).expect("sub");
        std::fs::write(dir.join("sub/t.jinja"), "{{ x }}").expect("written");
        let absolute = dir.join("m.gguf");
        std::fs::write(
            &path,
            format!(
                "[[model]]\nmodel = \"{}\"\nchat_template = \"./sub/../sub/t.jinja\"\n",
                absolute.display()
            ),
        )
        .expect("written");
        let decls = read_models_file(&path, false).expect("inside");
        assert_eq!(decls[0].model, absolute.to_string_lossy());
        assert_eq!(decls[0].chat_template, Some(dir.join("sub/t.jinja")));
        remove(&dir);
    }
}
