//! Fetching models: the registry of named models and their pinned files, Hugging Face refs
//! (`hf:`), and the cache they are kept in. This group must not load a model: the engine does.

pub mod hf;
pub mod models;
