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
//!   it stopped (`Range`), a progress bar on stderr, the size and sha256 the hub lists checked
//!   before the blob is renamed and linked from `snapshots/COMMIT/FILE`; `refs/main` names the
//!   commit.
//! - **Trust**: what lands in a cache path is checked first — the commit is 40 lowercase hex
//!   digits, a listed sha256 64, each file name a plain relative path (no `..`, `.`, empty
//!   component, backslash, root, drive prefix or NUL) — from the hub and from the cache alike. A
//!   cached blob is checked against the listed size and sha256 (offline, a blob named by a
//!   sha256 against its name) once, then again only when its size, times or inode change: a
//!   marker under `.toolgram-verified/` in the repo's folder remembers the check. A cached blob
//!   that fails is an error naming it, not replaced: the cache may be another tool's.
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
    /// The hub (or the cache's `refs/main`) names a commit that is not 40 lowercase hex
    /// digits; it would name a cache folder.
    #[error("hf:{repo}: {origin} names the commit `{sha}`, which is not 40 lowercase hex digits")]
    Commit {
        /// `OWNER/REPO`.
        repo: String,
        /// Who named it: the hub or the cache.
        origin: &'static str,
        /// The commit as named.
        sha: String,
    },
    /// The hub (or the cache) names a file by a path that could leave the cache.
    #[error(
        "hf:{repo}: {origin} names the file `{}`, which is not a plain relative path ({why})",
        name.escape_debug()
    )]
    FileName {
        /// `OWNER/REPO`.
        repo: String,
        /// Who named it: the hub or the cache.
        origin: &'static str,
        /// The name.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The hub lists a sha256 that is not 64 lowercase hex digits; it would name a blob.
    #[error(
        "hf:{repo} {file}: the hub lists the sha256 `{}`, which is not 64 lowercase hex digits",
        sha256.escape_debug()
    )]
    Digest {
        /// `OWNER/REPO`.
        repo: String,
        /// The file.
        file: String,
        /// The sha256 as listed.
        sha256: String,
    },
    /// The downloaded bytes are not as many as the hub lists.
    #[error("hf:{repo} {file}: size mismatch: the hub lists {expected} bytes, {actual} came")]
    Size {
        /// `OWNER/REPO`.
        repo: String,
        /// The file.
        file: String,
        /// The hub's LFS size.
        expected: u64,
        /// The bytes that came (past `expected`, where the download was stopped).
        actual: u64,
    },
    /// A cached copy is not the file it should be.
    #[error(
        "hf:{repo} {file}: the cached copy {} {problem}; delete it to fetch the file again",
        path.display()
    )]
    Cached {
        /// `OWNER/REPO`.
        repo: String,
        /// The file.
        file: String,
        /// The blob (or the snapshot's link) at fault.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
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

/// The folder, in a repo's cache folder, of the markers that remember a blob's check.
const VERIFIED: &str = ".toolgram-verified";

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
                && s != "."
                && s != ".."
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if !ok(owner) || !ok(name) {
            return Err(bad());
        }
        let pick = match parts.next() {
            Some(file)
                if quant.is_none() && file.ends_with(".gguf") && unsafe_name(file).is_none() =>
            {
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

/// Why `name` is not a plain relative path that stays inside the folder it is joined to, or
/// `None` when it is: not empty, no NUL, no backslash, not rooted, no drive prefix, and each
/// `/`-separated component a name (not empty, `.` or `..`).
fn unsafe_name(name: &str) -> Option<&'static str> {
    let bytes = name.as_bytes();
    if name.is_empty() {
        Some("it is empty")
    } else if name.contains('\0') {
        Some("it holds a NUL")
    } else if name.contains('\\') {
        Some("it holds a backslash")
    } else if name.starts_with('/') {
        Some("it is absolute")
    } else if bytes.len() > 1 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        Some("it starts with a drive")
    } else {
        name.split('/').find_map(|c| match c {
            "" => Some("it has an empty component"),
            "." => Some("it has a `.` component"),
            ".." => Some("it has a `..` component"),
            _ => None,
        })
    }
}

/// Whether `name` is a plain relative path (see [`unsafe_name`]); the error names it if not.
fn check_name(repo: &str, origin: &'static str, name: &str) -> Result<(), HfError> {
    match unsafe_name(name) {
        None => Ok(()),
        Some(why) => Err(HfError::FileName {
            repo: repo.to_owned(),
            origin,
            name: name.to_owned(),
            why,
        }),
    }
}

/// A commit as the hub and git write it: 40 lowercase hex digits.
fn check_commit(repo: &str, origin: &'static str, sha: &str) -> Result<(), HfError> {
    if is_hex(sha, 40) {
        return Ok(());
    }
    Err(HfError::Commit {
        repo: repo.to_owned(),
        origin,
        sha: sha.to_owned(),
    })
}

/// Whether `s` is `len` lowercase hex digits.
fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
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
            return cached(&dir, r)?.ok_or_else(|| HfError::Hub {
                repo: r.repo.clone(),
                reason: "HF_HUB_OFFLINE is set and the file is not in the cache".into(),
            });
        }
        let info = match self.info(&r.repo) {
            Ok(info) => info,
            Err(e @ HfError::Unreachable { .. }) => {
                return cached(&dir, r)?.ok_or(e);
            }
            Err(e) => return Err(e),
        };
        check_commit(&r.repo, "the hub", &info.sha)?;
        let files = choose(&r.repo, &info.siblings, &r.pick)?;
        for f in &files {
            check_name(&r.repo, "the hub", &f.rfilename)?;
            if let Some(lfs) = &f.lfs
                && !is_hex(&lfs.sha256, 64)
            {
                return Err(HfError::Digest {
                    repo: r.repo.clone(),
                    file: f.rfilename.clone(),
                    sha256: lfs.sha256.clone(),
                });
            }
        }
        let snapshot = dir.join("snapshots").join(&info.sha);
        for f in &files {
            self.place(r, &info.sha, f, &dir, &snapshot.join(&f.rfilename))?;
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

    /// Make `link` lead to `file`'s blob in `dir`: a cached blob checked against the hub's
    /// size and sha256, where it lists them; a missing one downloaded and checked. A file
    /// without them (not LFS) already linked into the blobs is kept as it is.
    fn place(
        &self,
        r: &HfRef,
        commit: &str,
        file: &Sibling,
        dir: &Path,
        link: &Path,
    ) -> Result<(), HfError> {
        let blobs = dir.join("blobs");
        let blob_name = file.lfs.as_ref().map_or_else(
            || format!("{commit}-{}", file.rfilename.replace('/', "_")),
            |l| l.sha256.clone(),
        );
        let blob = blobs.join(&blob_name);
        match &file.lfs {
            None if leads_into(link, &blobs) => return Ok(()),
            None if blob.is_file() => {}
            Some(lfs) if blob.is_file() => {
                verify(
                    &r.repo,
                    &file.rfilename,
                    &blob,
                    &lfs.sha256,
                    Some(lfs.size),
                    dir,
                )?;
            }
            _ => {
                fs::create_dir_all(&blobs).map_err(io(&blobs))?;
                let partial = blobs.join(format!("{blob_name}.incomplete"));
                self.download_blob(r, commit, file, &partial)?;
                fs::rename(&partial, &blob).map_err(io(&blob))?;
                if let Some(lfs) = &file.lfs {
                    remember(dir, &lfs.sha256, &blob);
                }
            }
        }
        let depth = file.rfilename.matches('/').count() + 2;
        let target = PathBuf::from("../".repeat(depth))
            .join("blobs")
            .join(&blob_name);
        if fs::read_link(link).is_ok_and(|t| t == target) {
            return Ok(());
        }
        let parent = link.parent().unwrap_or(dir);
        fs::create_dir_all(parent).map_err(io(parent))?;
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
        let size = file.lfs.as_ref().map(|l| l.size);
        let mut have = fs::metadata(partial).map_or(0, |m| m.len());
        if size.is_some_and(|s| have >= s) {
            // Nothing left to ask for: a leftover at least as long as the file starts over.
            let _ = fs::remove_file(partial);
            have = 0;
        }
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
        let total = size.or_else(|| resp.content_length().map(|n| n + start));
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
        let mut came = start;
        loop {
            let n = resp.read(&mut buf).map_err(|e| HfError::Unreachable {
                endpoint: self.endpoint.clone(),
                reason: format!("the download of {} stopped: {e}", file.rfilename),
            })?;
            if n == 0 {
                break;
            }
            came += n as u64;
            if size.is_some_and(|s| came > s) {
                break;
            }
            out.write_all(&buf[..n]).map_err(io(partial))?;
            hash.update(&buf[..n]);
            bar.inc(n as u64);
        }
        out.sync_all().map_err(io(partial))?;
        bar.finish_and_clear();
        if let Some(expected) = size
            && came != expected
        {
            let _ = fs::remove_file(partial);
            return Err(HfError::Size {
                repo: r.repo.clone(),
                file: file.rfilename.clone(),
                expected,
                actual: came,
            });
        }
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

/// The cached file `r` names, when `refs/main` and its snapshot hold it (`None` when they do
/// not). What the cache says is checked as the hub's word is: the commit and the file's name;
/// the file must be a link into the repo's blobs (or a plain file in the snapshot, as a cache
/// without symlinks holds it), and a blob named by a sha256 (the hub's name for an LFS file)
/// must hash to it.
fn cached(dir: &Path, r: &HfRef) -> Result<Option<PathBuf>, HfError> {
    let Ok(commit) = fs::read_to_string(dir.join("refs").join("main")) else {
        return Ok(None);
    };
    let commit = commit.trim();
    check_commit(&r.repo, "the cache's refs/main", commit)?;
    let snapshot = dir.join("snapshots").join(commit);
    let mut names: Vec<String> = Vec::new();
    let mut stack = vec![snapshot.clone()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            return Ok(None);
        };
        for e in entries.flatten() {
            let p = e.path();
            // A folder is walked only when it is one, not a link to one.
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if p.is_file()
                && let Some(rel) = p.strip_prefix(&snapshot).ok().and_then(Path::to_str)
            {
                names.push(rel.to_owned());
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
    let Ok(files) = choose(&r.repo, &siblings, &r.pick) else {
        return Ok(None);
    };
    for f in &files {
        check_name(&r.repo, "the cache", &f.rfilename)?;
        let link = snapshot.join(&f.rfilename);
        let bad = |path: &Path, problem: String| HfError::Cached {
            repo: r.repo.clone(),
            file: f.rfilename.clone(),
            path: path.to_path_buf(),
            problem,
        };
        let plain = fs::symlink_metadata(&link).is_ok_and(|m| m.is_file());
        if !plain && !leads_into(&link, &dir.join("blobs")) {
            return Err(bad(&link, "leads out of the repo's blobs folder".into()));
        }
        let blob = fs::canonicalize(&link).map_err(io(&link))?;
        if let Some(sha256) = blob
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| is_hex(n, 64))
        {
            verify(&r.repo, &f.rfilename, &blob, sha256, None, dir)?;
        }
    }
    Ok(files.first().map(|f| snapshot.join(&f.rfilename)))
}

/// Whether `link` leads (through any symlinks) to a file inside the folder `blobs`.
fn leads_into(link: &Path, blobs: &Path) -> bool {
    match (fs::canonicalize(link), fs::canonicalize(blobs)) {
        (Ok(file), Ok(blobs)) => file.starts_with(blobs) && file.is_file(),
        _ => false,
    }
}

/// Check the cached `blob` of `file` is `size` bytes (when known) and hashes to `sha256`.
/// The hash is skipped when the blob's marker (under `dir`) says it passed at its present
/// size, times and inode; a pass is remembered.
fn verify(
    repo: &str,
    file: &str,
    blob: &Path,
    sha256: &str,
    size: Option<u64>,
    dir: &Path,
) -> Result<(), HfError> {
    let bad = |problem: String| HfError::Cached {
        repo: repo.to_owned(),
        file: file.to_owned(),
        path: blob.to_path_buf(),
        problem,
    };
    let meta = fs::metadata(blob).map_err(io(blob))?;
    if let Some(size) = size
        && meta.len() != size
    {
        return Err(bad(format!(
            "has {} bytes, not the {size} the hub lists",
            meta.len()
        )));
    }
    let marker = dir.join(VERIFIED).join(sha256);
    if fs::read_to_string(&marker).is_ok_and(|s| s == stamp(&meta)) {
        return Ok(());
    }
    let actual = sha256_file(blob)?;
    if actual != sha256 {
        return Err(bad(format!("hashes to {actual}, not {sha256}")));
    }
    remember(dir, sha256, blob);
    Ok(())
}

/// Remember that `blob` hashed to `sha256` as it is now. A marker that cannot be written
/// only costs the hash again next time.
fn remember(dir: &Path, sha256: &str, blob: &Path) {
    let markers = dir.join(VERIFIED);
    if let Ok(meta) = fs::metadata(blob)
        && fs::create_dir_all(&markers).is_ok()
    {
        let _ = fs::write(markers.join(sha256), stamp(&meta));
    }
}

/// What a change to a file's bytes changes: its size, modification and change times, inode.
fn stamp(meta: &fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    format!(
        "{} {}.{} {}.{} {}",
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
        meta.ino()
    )
}

fn sha256_file(path: &Path) -> Result<String, HfError> {
    let mut f = File::open(path).map_err(io(path))?;
    let mut h = Sha256::new();
    io::copy(&mut f, &mut h).map_err(io(path))?;
    Ok(hex(&h.finalize()))
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
            "hf:a/b//etc/x.gguf",
            "hf:a/b/./x.gguf",
            "hf:a/b/sub\\x.gguf",
            "hf:../b",
            "hf:a/..",
        ] {
            assert!(HfRef::parse(bad).is_err(), "{bad}");
        }
        let dots = HfRef::parse("hf:a/b/m..q8.gguf")
            .expect("valid")
            .expect("hf");
        assert_eq!(dots.pick, Pick::File("m..q8.gguf".into()));
    }

    #[test]
    fn a_name_that_could_leave_the_cache_is_refused() {
        for (bad, why) in [
            ("", "empty"),
            ("a\0.gguf", "NUL"),
            ("sub\\m.gguf", "backslash"),
            ("/etc/m.gguf", "absolute"),
            ("C:m.gguf", "drive"),
            ("sub//m.gguf", "empty component"),
            ("sub/", "empty component"),
            ("./m.gguf", "`.`"),
            ("sub/./m.gguf", "`.`"),
            ("../m.gguf", "`..`"),
            ("sub/../../m.gguf", "`..`"),
        ] {
            let said = check_name("a/b", "the hub", bad)
                .expect_err(bad)
                .to_string();
            assert!(said.contains(why), "{bad:?}: {said}");
            assert!(said.contains("hf:a/b: the hub names the file"), "{said}");
        }
        for good in [
            "m.gguf",
            "sub/m-Q4_K_M.gguf",
            "m..q8.gguf",
            ".m.gguf",
            "ab:c.gguf",
        ] {
            assert!(check_name("a/b", "the hub", good).is_ok(), "{good}");
        }
    }

    #[test]
    fn a_commit_is_40_lowercase_hex_digits_and_a_sha256_64() {
        assert!(check_commit("a/b", "the hub", COMMIT).is_ok());
        for bad in [
            "../../../escape",
            &COMMIT[1..],
            &format!("{COMMIT}0"),
            &COMMIT.to_ascii_uppercase(),
            "012345678901234567890123456789012345678g",
            "",
        ] {
            let e = check_commit("a/b", "the hub", bad).expect_err(bad);
            assert!(
                matches!(&e, HfError::Commit { sha, .. } if sha == bad),
                "{e:?}"
            );
        }
        assert!(is_hex(&"ab".repeat(32), 64));
        assert!(!is_hex(&"AB".repeat(32), 64) && !is_hex(&"ab".repeat(31), 64));
    }

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    /// A fresh scratch folder for one test.
    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("toolgram-hf-unit-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).expect("scratch");
        d
    }

    /// A hub on a loopback port answering each path of `routes` (the request's path and
    /// query) with its body, anything else with a 404; its endpoint.
    fn hub(routes: Vec<(String, Vec<u8>)>) -> String {
        use std::io::{BufRead, BufReader};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
        let addr = listener.local_addr().expect("an address");
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let mut reader = BufReader::new(&conn);
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let mut header = String::from("-");
                while !header.trim().is_empty() {
                    header.clear();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 {
                        break;
                    }
                }
                let path = line.split_whitespace().nth(1).unwrap_or_default();
                let (status, body) = routes
                    .iter()
                    .find(|(p, _)| p == path)
                    .map_or(("404 Not Found", &b"{}"[..]), |(_, b)| ("200 OK", b));
                let mut out = &conn;
                let _ = write!(
                    out,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = out.write_all(body);
            }
        });
        format!("http://{addr}")
    }

    /// Repo `t/r` listing `siblings` at commit `sha`, serving `bytes` as `m.gguf` at COMMIT.
    fn repo_hub(sha: &str, siblings: serde_json::Value, bytes: &[u8]) -> String {
        let info = serde_json::json!({"sha": sha, "siblings": siblings});
        hub(vec![
            (
                "/api/models/t/r/revision/main?blobs=true".into(),
                info.to_string().into_bytes(),
            ),
            (format!("/t/r/resolve/{COMMIT}/m.gguf"), bytes.to_vec()),
        ])
    }

    fn config(endpoint: &str, cache: &Path, offline: bool) -> HubConfig {
        HubConfig {
            endpoint: endpoint.to_owned(),
            token: None,
            cache: cache.to_path_buf(),
            offline,
        }
    }

    fn fetch_r(r: &str, cfg: &HubConfig) -> Result<PathBuf, HfError> {
        fetch_from(&HfRef::parse(r).expect("valid").expect("hf"), cfg)
    }

    fn sha256_hex(bytes: &[u8]) -> String {
        hex(&Sha256::digest(bytes))
    }

    /// Every path under `dir`, relative, sorted.
    fn tree(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(p.clone());
                }
                out.push(p.strip_prefix(dir).expect("under").display().to_string());
            }
        }
        out.sort();
        out
    }

    #[test]
    fn what_the_hub_names_is_checked_before_anything_is_written() {
        let bytes = b"GGUF hostile".to_vec();
        let lfs = serde_json::json!({"sha256": sha256_hex(&bytes), "size": bytes.len()});
        let root = scratch("hostile");
        let cache = root.join("cache");
        let cases: [(&str, serde_json::Value, &str); 5] = [
            (
                "../../../escape",
                serde_json::json!([{"rfilename": "m.gguf", "lfs": lfs}]),
                "the commit `../../../escape`",
            ),
            (
                COMMIT,
                serde_json::json!([{"rfilename": "../../../../escape.gguf", "lfs": lfs}]),
                "`..` component",
            ),
            (
                COMMIT,
                serde_json::json!([{"rfilename": "/tmp/escape.gguf", "lfs": lfs}]),
                "absolute",
            ),
            (
                COMMIT,
                serde_json::json!([{"rfilename": "sub\\escape.gguf", "lfs": lfs}]),
                "backslash",
            ),
            (
                COMMIT,
                serde_json::json!([{"rfilename": "m.gguf",
                    "lfs": {"sha256": "../../../escape", "size": bytes.len()}}]),
                "not 64 lowercase hex digits",
            ),
        ];
        for (sha, siblings, said) in cases {
            let endpoint = repo_hub(sha, siblings, &bytes);
            let e = fetch_r("hf:t/r", &config(&endpoint, &cache, false)).expect_err(said);
            assert!(e.to_string().contains(said), "{e}");
            assert_eq!(tree(&root), Vec::<String>::new(), "nothing written: {e}");
        }
    }

    #[test]
    fn a_download_of_another_size_than_listed_is_refused_and_not_kept() {
        let bytes = b"GGUF sized".to_vec();
        let cache = scratch("size");
        for size in [bytes.len() + 1, bytes.len() - 1] {
            let siblings = serde_json::json!([{"rfilename": "m.gguf",
                "lfs": {"sha256": sha256_hex(&bytes), "size": size}}]);
            let endpoint = repo_hub(COMMIT, siblings, &bytes);
            let e = fetch_r("hf:t/r", &config(&endpoint, &cache, false)).expect_err("size");
            assert!(
                matches!(&e, HfError::Size { expected, .. } if *expected == size as u64),
                "{e:?}"
            );
            let blobs = cache.join("models--t--r/blobs");
            assert_eq!(tree(&blobs), Vec::<String>::new(), "{e}");
        }
    }

    #[test]
    fn a_cached_blob_is_checked_again_when_it_changed_and_refused_if_it_is_not_the_file() {
        let bytes = b"GGUF cached".to_vec();
        let sha = sha256_hex(&bytes);
        let siblings = serde_json::json!([{"rfilename": "m.gguf",
            "lfs": {"sha256": sha, "size": bytes.len()}}]);
        let endpoint = repo_hub(COMMIT, siblings, &bytes);
        let cache = scratch("cached");
        let cfg = config(&endpoint, &cache, false);
        let path = fetch_r("hf:t/r", &cfg).expect("fetched");
        let dir = cache.join("models--t--r");
        let blob = dir.join("blobs").join(&sha);
        let marker = dir.join(VERIFIED).join(&sha);
        let meta = fs::metadata(&blob).expect("a blob");
        assert_eq!(fs::read_to_string(&marker).ok(), Some(stamp(&meta)));
        assert_eq!(fetch_r("hf:t/r", &cfg).expect("cached"), path);
        // The same size, one byte changed, its modification time put back: still found.
        let mut tampered = bytes.clone();
        tampered[0] = b'X';
        fs::write(&blob, &tampered).expect("written");
        File::options()
            .write(true)
            .open(&blob)
            .and_then(|f| f.set_modified(meta.modified()?))
            .expect("mtime put back");
        let e = fetch_r("hf:t/r", &cfg).expect_err("tampered");
        let said = e.to_string();
        assert!(
            matches!(&e, HfError::Cached { path, .. } if *path == blob)
                && said.contains("hashes to")
                && said.contains("delete it"),
            "{said}"
        );
        fs::write(&blob, b"GGUF").expect("written");
        let said = fetch_r("hf:t/r", &cfg).expect_err("short").to_string();
        assert!(
            said.contains(&format!("has 4 bytes, not the {}", bytes.len())),
            "{said}"
        );
        // Deleted, it is fetched again; a snapshot link leading elsewhere is made again.
        fs::remove_file(&blob).expect("deleted");
        fs::remove_file(&path).expect("deleted");
        std::os::unix::fs::symlink("/etc/hostname", &path).expect("a link");
        assert_eq!(fetch_r("hf:t/r", &cfg).expect("again"), path);
        assert_eq!(fs::read(&path).expect("reads"), bytes);
    }

    #[test]
    fn a_marker_spares_the_hash_only_while_the_blob_is_unchanged() {
        let dir = scratch("marker");
        let blob = dir.join("blob");
        let sha = sha256_hex(b"listed");
        fs::write(&blob, b"others").expect("written");
        remember(&dir, &sha, &blob);
        verify("t/r", "m.gguf", &blob, &sha, Some(6), &dir).expect("the marker answers");
        fs::write(&blob, b"others").expect("rewritten");
        let e = verify("t/r", "m.gguf", &blob, &sha, Some(6), &dir).expect_err("changed");
        assert!(matches!(e, HfError::Cached { .. }), "{e:?}");
    }

    #[test]
    fn the_offline_cache_is_checked_as_the_hub_is() {
        let bytes = b"GGUF offline".to_vec();
        let sha = sha256_hex(&bytes);
        let cache = scratch("offline");
        let dir = cache.join("models--t--r");
        let snapshot = dir.join("snapshots").join(COMMIT);
        fs::create_dir_all(dir.join("refs")).expect("refs");
        fs::create_dir_all(dir.join("blobs")).expect("blobs");
        fs::create_dir_all(&snapshot).expect("snapshot");
        fs::write(dir.join("blobs").join(&sha), &bytes).expect("blob");
        let link = snapshot.join("m.gguf");
        std::os::unix::fs::symlink(format!("../../blobs/{sha}"), &link).expect("link");
        // A link to its own folder is not walked into.
        std::os::unix::fs::symlink(".", snapshot.join("loop")).expect("loop");
        let cfg = config("http://127.0.0.1:9", &cache, true);
        fs::write(dir.join("refs/main"), "../../../escape").expect("ref");
        let e = fetch_r("hf:t/r", &cfg).expect_err("bad ref");
        assert!(
            e.to_string()
                .contains("the cache's refs/main names the commit `../../../escape`"),
            "{e}"
        );
        fs::write(dir.join("refs/main"), COMMIT).expect("ref");
        assert_eq!(fetch_r("hf:t/r", &cfg).expect("cached"), link);
        let mut tampered = bytes.clone();
        tampered[0] = b'X';
        fs::write(dir.join("blobs").join(&sha), &tampered).expect("written");
        let said = fetch_r("hf:t/r", &cfg).expect_err("tampered").to_string();
        assert!(
            said.contains("hashes to") && said.contains("delete it"),
            "{said}"
        );
        fs::remove_file(&link).expect("removed");
        std::os::unix::fs::symlink("/etc/hostname", &link).expect("link");
        let said = fetch_r("hf:t/r/m.gguf", &cfg)
            .expect_err("outside")
            .to_string();
        assert!(said.contains("leads out of the repo's blobs"), "{said}");
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
