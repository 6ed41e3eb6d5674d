//! Models from the Hugging Face Hub: `hf:OWNER/REPO[:QUANT]` or `hf:OWNER/REPO/FILE.gguf`,
//! resolved as llama-server's `-hf` resolves them and cached in the hub's own layout, so a file
//! another tool already fetched is used as it is.
//!
//! - **Resolve**: the repo's file list (`/api/models/REPO/revision/main?blobs=true`, with each
//!   LFS file's sha256) picks the file: FILE as named; else the `.gguf` whose name holds QUANT
//!   (case-insensitive; `Q4_K_M`, else the first, when none is given), `mmproj` files left out.
//!   A split GGUF (`…-00001-of-00003.gguf`) is fetched whole; the first part is returned
//!   (llama.cpp loads the rest beside it).
//! - **Fetch**: `REPO/resolve/COMMIT/FILE` into `blobs/SHA256.incomplete`, resumed from where
//!   it stopped (`Range`), a progress bar on stderr, the sha256 checked before the blob is
//!   renamed and linked from `snapshots/COMMIT/FILE`; `refs/main` names the commit.
//! - **Environment**: `HF_ENDPOINT` (default the public hub), `HF_TOKEN` (else the token file
//!   under `HF_HOME`), `HF_HUB_CACHE` / `HF_HOME` / `XDG_CACHE_HOME` for the cache,
//!   `HF_HUB_OFFLINE=1` to use only what is cached; a hub that cannot be reached falls back to
//!   the cache too.
//!
//! This module must not load models or know the registry; it runs its blocking HTTP client on
//! a thread of its own, so an async caller cannot trip over it.

use indicatif::{ProgressBar, ProgressStyle};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// Why an `hf:` reference could not be resolved or fetched.
#[derive(Debug, Error)]
pub enum HfError {
    /// Not a valid reference.
    #[error(
        "`{0}` is not a Hugging Face reference: hf:OWNER/REPO, hf:OWNER/REPO:QUANT or hf:OWNER/REPO/FILE.gguf"
    )]
    Ref(String),
    /// The repo has no file the reference picks.
    #[error("hf:{repo}: {wanted}; its GGUFs: {ggufs}")]
    Pick {
        /// `OWNER/REPO`.
        repo: String,
        /// What was looked for.
        wanted: String,
        /// The repo's GGUF files, comma-separated.
        ggufs: String,
    },
    /// The hub refused or failed a request.
    #[error("hf:{repo}: {reason}")]
    Hub {
        /// `OWNER/REPO`.
        repo: String,
        /// What the hub said, and what to do.
        reason: String,
    },
    /// The hub could not be reached (and the cache did not hold the file).
    #[error(
        "the Hugging Face Hub at {endpoint} could not be reached ({reason}); HF_ENDPOINT names another"
    )]
    Unreachable {
        /// `HF_ENDPOINT` or the public hub.
        endpoint: String,
        /// Why.
        reason: String,
    },
    /// The downloaded bytes are not the file the hub lists.
    #[error("hf:{repo} {file}: sha256 mismatch: expected {expected}, got {actual}")]
    Checksum {
        /// `OWNER/REPO`.
        repo: String,
        /// The file.
        file: String,
        /// The hub's LFS sha256.
        expected: String,
        /// What the bytes hash to.
        actual: String,
    },
    /// File-system trouble in the cache.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        source: io::Error,
    },
}

/// The public hub, where `HF_ENDPOINT` names no other.
const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// The quantization picked when a reference names none (llama-server's default).
const DEFAULT_QUANT: &str = "Q4_K_M";

/// A parsed `hf:` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HfRef {
    /// `OWNER/REPO`.
    pub repo: String,
    /// What picks the file.
    pub pick: Pick,
}

/// How a reference picks its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// The GGUF whose name holds this quantization (`None`: the default one).
    Quant(Option<String>),
    /// This file of the repo.
    File(String),
}

impl HfRef {
    /// `spec` as an `hf:` reference; `None` when it does not start with `hf:`.
    pub fn parse(spec: &str) -> Result<Option<Self>, HfError> {
        let Some(rest) = spec.strip_prefix("hf:") else {
            return Ok(None);
        };
        let bad = || HfError::Ref(spec.to_owned());
        let (path, quant) = match rest.split_once(':') {
            Some((p, q)) if !q.is_empty() && !q.contains('/') => (p, Some(q.to_owned())),
            Some(_) => return Err(bad()),
            None => (rest, None),
        };
        let mut parts = path.splitn(3, '/');
        let (Some(owner), Some(name)) = (parts.next(), parts.next()) else {
            return Err(bad());
        };
        let ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if !ok(owner) || !ok(name) {
            return Err(bad());
        }
        let pick = match parts.next() {
            Some(file) if quant.is_none() && file.ends_with(".gguf") && !file.contains("..") => {
                Pick::File(file.to_owned())
            }
            Some(_) => return Err(bad()),
            None => Pick::Quant(quant),
        };
        Ok(Some(Self {
            repo: format!("{owner}/{name}"),
            pick,
        }))
    }
}

/// A file of a repo as the hub lists it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Sibling {
    /// Path in the repo.
    pub rfilename: String,
    /// LFS metadata (large files): its sha256 and size.
    #[serde(default)]
    pub lfs: Option<Lfs>,
}

/// An LFS file's identity.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Lfs {
    /// sha256 of the content.
    pub sha256: String,
    /// Size in bytes.
    pub size: u64,
}

#[derive(Debug, Deserialize)]
struct RepoInfo {
    sha: String,
    #[serde(default)]
    siblings: Vec<Sibling>,
}

/// The files `pick` names among `siblings`, in order (the parts of a split GGUF, else one);
/// an error lists the repo's GGUFs.
pub fn choose<'s>(
    repo: &str,
    siblings: &'s [Sibling],
    pick: &Pick,
) -> Result<Vec<&'s Sibling>, HfError> {
    let ggufs: Vec<&Sibling> = siblings
        .iter()
        .filter(|s| s.rfilename.ends_with(".gguf") && !s.rfilename.contains("mmproj"))
        .collect();
    let listed = || {
        ggufs
            .iter()
            .map(|s| s.rfilename.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let first = match pick {
        Pick::File(f) => ggufs.iter().find(|s| &s.rfilename == f).copied(),
        Pick::Quant(q) => {
            let holds = |q: &str| {
                let q = q.to_ascii_lowercase();
                let mut hits: Vec<&Sibling> = ggufs
                    .iter()
                    .filter(|s| basename(&s.rfilename).to_ascii_lowercase().contains(&q))
                    .copied()
                    .collect();
                hits.sort_by(|a, b| a.rfilename.cmp(&b.rfilename));
                hits.first().copied()
            };
            match q {
                Some(q) => holds(q),
                None => holds(DEFAULT_QUANT).or_else(|| {
                    let mut all = ggufs.clone();
                    all.sort_by(|a, b| a.rfilename.cmp(&b.rfilename));
                    all.first().copied()
                }),
            }
        }
    };
    let Some(first) = first else {
        let wanted = match pick {
            Pick::File(f) => format!("no file `{f}`"),
            Pick::Quant(Some(q)) => format!("no GGUF whose name holds `{q}`"),
            Pick::Quant(None) => "no GGUF".to_owned(),
        };
        return Err(HfError::Pick {
            repo: repo.to_owned(),
            wanted,
            ggufs: listed(),
        });
    };
    Ok(match split_of(&first.rfilename) {
        Some((stem, total)) => (1..=total)
            .map(|i| {
                let name = format!("{stem}-{i:05}-of-{total:05}.gguf");
                siblings
                    .iter()
                    .find(|s| s.rfilename == name)
                    .ok_or_else(|| HfError::Pick {
                        repo: repo.to_owned(),
                        wanted: format!("part `{name}` of a split GGUF"),
                        ggufs: listed(),
                    })
            })
            .collect::<Result<_, _>>()?,
        None => vec![first],
    })
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `(stem, total)` of a split GGUF's part name (`STEM-00001-of-00003.gguf`).
fn split_of(name: &str) -> Option<(&str, u32)> {
    let body = name.strip_suffix(".gguf")?;
    let (head, total) = body.rsplit_once("-of-")?;
    let (stem, index) = head.rsplit_once('-')?;
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    (digits(index) && digits(total))
        .then(|| total.parse().ok())
        .flatten()
        .map(|t| (stem, t))
}

/// Where the hub's cache is: `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
/// `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`.
pub fn hub_cache() -> PathBuf {
    if let Some(d) = env("HF_HUB_CACHE") {
        return PathBuf::from(d);
    }
    hf_home().join("hub")
}

fn hf_home() -> PathBuf {
    if let Some(d) = env("HF_HOME") {
        return PathBuf::from(d);
    }
    env("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("huggingface")
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.is_empty())
}

fn token() -> Option<String> {
    env("HF_TOKEN").or_else(|| {
        fs::read_to_string(hf_home().join("token"))
            .ok()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
    })
}

/// Where and how to reach the hub.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// The hub's base URL.
    pub endpoint: String,
    /// A token for private and gated repos.
    pub token: Option<String>,
    /// The cache folder (the hub's layout).
    pub cache: PathBuf,
    /// Use only what is cached.
    pub offline: bool,
}

impl HubConfig {
    /// The configuration the environment gives (see the module docs).
    pub fn from_env() -> Self {
        Self {
            endpoint: env("HF_ENDPOINT")
                .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned())
                .trim_end_matches('/')
                .to_owned(),
            token: token(),
            cache: hub_cache(),
            offline: env("HF_HUB_OFFLINE").is_some_and(|v| v != "0" && v != "false"),
        }
    }
}

/// Fetch (or find in the cache) the file `r` names, as the environment configures the hub;
/// the path of its first part.
pub fn fetch(r: &HfRef) -> Result<PathBuf, HfError> {
    fetch_from(r, &HubConfig::from_env())
}

/// [`fetch`] from the hub `cfg` describes.
pub fn fetch_from(r: &HfRef, cfg: &HubConfig) -> Result<PathBuf, HfError> {
    let (r, cfg) = (r.clone(), cfg.clone());
    std::thread::spawn(move || Hub::new(cfg)?.fetch(&r))
        .join()
        .map_err(|_| HfError::Hub {
            repo: String::new(),
            reason: "the download thread panicked".into(),
        })?
}

struct Hub {
    endpoint: String,
    token: Option<String>,
    cache: PathBuf,
    offline: bool,
    client: reqwest::blocking::Client,
}

impl Hub {
    fn new(cfg: HubConfig) -> Result<Self, HfError> {
        let client = reqwest::blocking::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .user_agent(concat!("toolgram/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| HfError::Hub {
                repo: String::new(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            endpoint: cfg.endpoint,
            token: cfg.token,
            cache: cfg.cache,
            offline: cfg.offline,
            client,
        })
    }

    fn get(&self, url: &str) -> reqwest::blocking::RequestBuilder {
        let req = self.client.get(url);
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    fn fetch(&self, r: &HfRef) -> Result<PathBuf, HfError> {
        let dir = self
            .cache
            .join(format!("models--{}", r.repo.replace('/', "--")));
        if self.offline {
            return cached(&dir, r).ok_or_else(|| HfError::Hub {
                repo: r.repo.clone(),
                reason: "HF_HUB_OFFLINE is set and the file is not in the cache".into(),
            });
        }
        let info = match self.info(&r.repo) {
            Ok(info) => info,
            Err(e @ HfError::Unreachable { .. }) => {
                return cached(&dir, r).ok_or(e);
            }
            Err(e) => return Err(e),
        };
        let files = choose(&r.repo, &info.siblings, &r.pick)?;
        let snapshot = dir.join("snapshots").join(&info.sha);
        for f in &files {
            let link = snapshot.join(&f.rfilename);
            if !link.is_file() {
                self.download(r, &info.sha, f, &dir, &link)?;
            }
        }
        let refs = dir.join("refs");
        fs::create_dir_all(&refs).map_err(io(&refs))?;
        fs::write(refs.join("main"), &info.sha).map_err(io(&refs))?;
        Ok(snapshot.join(&files[0].rfilename))
    }

    fn info(&self, repo: &str) -> Result<RepoInfo, HfError> {
        let url = format!(
            "{}/api/models/{repo}/revision/main?blobs=true",
            self.endpoint
        );
        let resp = self.get(&url).send().map_err(|e| HfError::Unreachable {
            endpoint: self.endpoint.clone(),
            reason: e.to_string(),
        })?;
        self.refused(repo, &resp)?;
        resp.json().map_err(|e| HfError::Hub {
            repo: repo.to_owned(),
            reason: format!("the hub's file list could not be read: {e}"),
        })
    }

    /// The hub's refusal of a request, as an error that says what to do.
    fn refused(&self, repo: &str, resp: &reqwest::blocking::Response) -> Result<(), HfError> {
        let status = resp.status();
        if status.is_success() {
            return Ok(());
        }
        let reason = match status.as_u16() {
            401 | 403 if self.token.is_none() => format!(
                "{status}: the repo is private or gated, or does not exist; set HF_TOKEN to a token that may read it"
            ),
            401 | 403 => format!("{status}: HF_TOKEN may not read this repo"),
            404 => format!("{status}: no such repo (or file) on {}", self.endpoint),
            _ => format!("{status} from {}", self.endpoint),
        };
        Err(HfError::Hub {
            repo: repo.to_owned(),
            reason,
        })
    }

    fn download(
        &self,
        r: &HfRef,
        commit: &str,
        file: &Sibling,
        dir: &Path,
        link: &Path,
    ) -> Result<(), HfError> {
        let blobs = dir.join("blobs");
        fs::create_dir_all(&blobs).map_err(io(&blobs))?;
        let blob_name = file.lfs.as_ref().map_or_else(
            || format!("{commit}-{}", file.rfilename.replace('/', "_")),
            |l| l.sha256.clone(),
        );
        let blob = blobs.join(&blob_name);
        if !blob.is_file() {
            let partial = blobs.join(format!("{blob_name}.incomplete"));
            self.download_blob(r, commit, file, &partial)?;
            fs::rename(&partial, &blob).map_err(io(&blob))?;
        }
        let parent = link.parent().unwrap_or(dir);
        fs::create_dir_all(parent).map_err(io(parent))?;
        let depth = file.rfilename.matches('/').count() + 2;
        let target = PathBuf::from("../".repeat(depth))
            .join("blobs")
            .join(&blob_name);
        let _ = fs::remove_file(link);
        std::os::unix::fs::symlink(&target, link).map_err(io(link))
    }

    fn download_blob(
        &self,
        r: &HfRef,
        commit: &str,
        file: &Sibling,
        partial: &Path,
    ) -> Result<(), HfError> {
        let url = format!(
            "{}/{}/resolve/{commit}/{}",
            self.endpoint, r.repo, file.rfilename
        );
        let have = fs::metadata(partial).map_or(0, |m| m.len());
        let mut req = self.get(&url);
        if have > 0 {
            req = req.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let mut resp = req.send().map_err(|e| HfError::Unreachable {
            endpoint: self.endpoint.clone(),
            reason: e.to_string(),
        })?;
        self.refused(&r.repo, &resp)?;
        let resumed = have > 0 && resp.status() == reqwest::StatusCode::PARTIAL_CONTENT;
        let mut hash = Sha256::new();
        let mut out = if resumed {
            let mut f = File::open(partial).map_err(io(partial))?;
            io::copy(&mut f, &mut hash).map_err(io(partial))?;
            OpenOptions::new()
                .append(true)
                .open(partial)
                .map_err(io(partial))?
        } else {
            File::create(partial).map_err(io(partial))?
        };
        let start = if resumed { have } else { 0 };
        let total = file
            .lfs
            .as_ref()
            .map(|l| l.size)
            .or_else(|| resp.content_length().map(|n| n + start));
        let bar = total.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(format!("hf:{} {}", r.repo, file.rfilename));
        bar.set_position(start);
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = resp.read(&mut buf).map_err(|e| HfError::Unreachable {
                endpoint: self.endpoint.clone(),
                reason: format!("the download of {} stopped: {e}", file.rfilename),
            })?;
            if n == 0 {
                break;
            }
            out.write_all(&buf[..n]).map_err(io(partial))?;
            hash.update(&buf[..n]);
            bar.inc(n as u64);
        }
        out.sync_all().map_err(io(partial))?;
        bar.finish_and_clear();
        if let Some(lfs) = &file.lfs {
            let actual = hex(&hash.finalize());
            if actual != lfs.sha256 {
                let _ = fs::remove_file(partial);
                return Err(HfError::Checksum {
                    repo: r.repo.clone(),
                    file: file.rfilename.clone(),
                    expected: lfs.sha256.clone(),
                    actual,
                });
            }
        }
        Ok(())
    }
}

/// The cached file `r` names, when `refs/main` and its snapshot hold it.
fn cached(dir: &Path, r: &HfRef) -> Option<PathBuf> {
    let commit = fs::read_to_string(dir.join("refs").join("main")).ok()?;
    let snapshot = dir.join("snapshots").join(commit.trim());
    let mut names: Vec<String> = Vec::new();
    let mut stack = vec![snapshot.clone()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.is_file()
                && let Ok(rel) = p.strip_prefix(&snapshot)
            {
                names.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    let siblings: Vec<Sibling> = names
        .into_iter()
        .map(|rfilename| Sibling {
            rfilename,
            lfs: None,
        })
        .collect();
    let files = choose(&r.repo, &siblings, &r.pick).ok()?;
    Some(snapshot.join(&files.first()?.rfilename))
}

fn io(path: &Path) -> impl FnOnce(io::Error) -> HfError + '_ {
    move |source| HfError::Io {
        context: path.display().to_string(),
        source,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sib(name: &str) -> Sibling {
        Sibling {
            rfilename: name.to_owned(),
            lfs: None,
        }
    }

    #[test]
    fn references_name_a_repo_and_a_quant_or_a_file() {
        let r = HfRef::parse("hf:Qwen/Qwen2.5-0.5B-GGUF:q8_0").expect("valid");
        assert_eq!(
            r,
            Some(HfRef {
                repo: "Qwen/Qwen2.5-0.5B-GGUF".into(),
                pick: Pick::Quant(Some("q8_0".into()))
            })
        );
        let f = HfRef::parse("hf:a/b/sub/m.gguf")
            .expect("valid")
            .expect("hf");
        assert_eq!(f.pick, Pick::File("sub/m.gguf".into()));
        assert_eq!(HfRef::parse("default").expect("not hf"), None);
        for bad in [
            "hf:",
            "hf:a",
            "hf:a/",
            "hf:a/b:",
            "hf:a/b/c.bin",
            "hf:a b/c",
            "hf:a/b/../x.gguf",
        ] {
            assert!(HfRef::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_quant_picks_the_file_and_a_split_gguf_comes_whole() {
        let files = [
            sib("README.md"),
            sib("m-Q8_0.gguf"),
            sib("mmproj-m-Q4_K_M.gguf"),
            sib("m-Q4_K_M.gguf"),
            sib("big/m-F16-00002-of-00002.gguf"),
            sib("big/m-F16-00001-of-00002.gguf"),
        ];
        let names = |pick: Pick| {
            choose("a/b", &files, &pick)
                .map(|v| v.iter().map(|s| s.rfilename.clone()).collect::<Vec<_>>())
        };
        assert_eq!(
            names(Pick::Quant(None)).expect("default"),
            ["m-Q4_K_M.gguf"]
        );
        assert_eq!(
            names(Pick::Quant(Some("q8_0".into()))).expect("q8"),
            ["m-Q8_0.gguf"]
        );
        assert_eq!(
            names(Pick::Quant(Some("F16".into()))).expect("split"),
            [
                "big/m-F16-00001-of-00002.gguf",
                "big/m-F16-00002-of-00002.gguf"
            ]
        );
        let missing = names(Pick::Quant(Some("IQ2_XS".into()))).expect_err("none");
        let said = missing.to_string();
        assert!(
            said.contains("IQ2_XS") && said.contains("m-Q8_0.gguf"),
            "{said}"
        );
        assert!(!said.contains("mmproj"), "{said}");
    }
}
