//! The providers' typed errors. Keys never appear in them.

use thiserror::Error;

/// Why a provider request could not be made or read.
#[derive(Debug, Error)]
pub enum ProviderError {
    /// `toolgram.toml` cannot be read or is wrong.
    #[error("config: {0}")]
    Config(String),
    /// Not a provider toolgram knows.
    #[error("unknown provider `{name}` (providers: {known})")]
    UnknownProvider {
        /// The name asked for.
        name: String,
        /// The registered names, comma-separated.
        known: String,
    },
    /// The request needs a capability the provider lacks and falling back is forbidden.
    #[error("{provider} cannot do {wanted}: {why} (fallback is off)")]
    NoFallback {
        /// The provider.
        provider: String,
        /// The path that was needed.
        wanted: String,
        /// Why not.
        why: String,
    },
    /// The request cannot be expressed for this provider at all.
    #[error("{0}")]
    Unsupported(String),
    /// A schema could not be rendered in the provider's profile.
    #[error(transparent)]
    Profile(#[from] crate::profile::ProfileError),
    /// The pool or choice did not compile.
    #[error("{0}")]
    Compile(String),
    /// Network or HTTP failure after the retries.
    #[error("{0}")]
    Http(String),
    /// The provider answered with something that is not its documented reply shape.
    #[error("unexpected reply from {provider}: {message}")]
    Reply {
        /// The provider.
        provider: String,
        /// What was wrong.
        message: String,
    },
}
