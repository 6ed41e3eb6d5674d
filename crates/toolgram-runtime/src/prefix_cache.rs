//! The prompt-prefix cache on disk: llama.cpp KV states of evaluated prompt prefixes (system +
//! tools, and conversations so far), so a one-shot call with the same tools evaluates only its
//! new turn, in this process or the next.
//!
//! Layout: `<dir>/<model>/<sha256 of the prefix's token ids>.kv` (llama.cpp's sequence state
//! file) beside a `.json` note of its token count, byte size, sha256 and token ids; a prompt
//! gets the state sharing the longest prefix with it, which the engine cuts to what they
//! share (one changed line keeps every token before it). `<dir>` is
//! `$XDG_CACHE_HOME/toolgram/kv` (or `~/.cache/toolgram/kv`); `<model>` names the model file
//! by its sha256 and the engine settings that shape the state. Files are written under a
//! temporary name and renamed; a file whose size or checksum does not match its note is deleted
//! with a warning and never loaded; the least recently used entries go when the folder is over
//! its size bound. The states hold conversations' token ids, so on Unix the folders are made
//! (and kept) `0700` and the files `0600`. This module must not decode: the engine loads and
//! saves states through [`PrefixStore`].

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use toolgram_engine::{PrefixStore, Stored};

/// Default size bound of the whole cache folder.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;

/// Prefixes shorter than this are not worth a file.
const MIN_TOKENS: usize = 16;

/// Where the cache lives and how large it may grow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixCacheConfig {
    /// The cache folder (all models).
    pub dir: PathBuf,
    /// Size bound of the folder; least recently used entries are removed past it.
    pub max_bytes: u64,
}

impl Default for PrefixCacheConfig {
    fn default() -> Self {
        Self {
            dir: default_dir(),
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// `$XDG_CACHE_HOME/toolgram/kv`, else `~/.cache/toolgram/kv`.
pub fn default_dir() -> PathBuf {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("XDG_CACHE_HOME")
        .or_else(|| env("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("toolgram")
        .join("kv")
}

/// What the `.json` beside a state file says: its token count, size and checksum, and the
/// token ids it holds (so a prompt that shares only part of it finds it; notes written
/// before they were kept have none and match only whole).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Note {
    tokens: usize,
    bytes: u64,
    sha256: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ids: Vec<i32>,
}

/// One stored prefix, as `toolgram cache list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// The model folder it belongs to.
    pub model: String,
    /// Prompt tokens it holds.
    pub tokens: usize,
    /// Size of the state file.
    pub bytes: u64,
    /// The state file.
    pub path: PathBuf,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn tokens_name(tokens: &[i32]) -> String {
    let mut h = Sha256::new();
    for t in tokens {
        h.update(t.to_le_bytes());
    }
    hex(&h.finalize())
}

fn file_sha256(path: &Path) -> io::Result<String> {
    let mut f = fs::File::open(path)?;
    let mut h = Sha256::new();
    io::copy(&mut f, &mut h)?;
    Ok(hex(&h.finalize()))
}

/// Make `dir` readable by its owner only (an existing one is set so), and its missing parents
/// too (an existing parent, perhaps not the user's, is left as it is).
fn private_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
    }
    #[cfg(not(unix))]
    fs::create_dir_all(dir)
}

/// Make `file` readable and writable by its owner only.
fn private_file(file: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(file, fs::Permissions::from_mode(0o600))
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        Ok(())
    }
}

fn remove_entry(kv: &Path) {
    let _ = fs::remove_file(kv);
    let _ = fs::remove_file(kv.with_extension("json"));
}

/// The cache for one model and engine setting.
#[derive(Debug)]
pub struct DiskPrefixCache {
    root: PathBuf,
    dir: PathBuf,
    max_bytes: u64,
}

impl DiskPrefixCache {
    /// The cache of `config` for the model identified by `model` (its sha256 and the engine
    /// settings that shape a state).
    pub fn new(config: &PrefixCacheConfig, model: &str) -> Self {
        Self {
            root: config.dir.clone(),
            dir: config.dir.join(model),
            max_bytes: config.max_bytes,
        }
    }

    /// Every note of this model's folder, with its state file's name.
    fn notes(&self) -> Vec<(String, Note)> {
        fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| {
                let name = e.path().file_stem()?.to_string_lossy().into_owned();
                let note =
                    serde_json::from_str::<Note>(&fs::read_to_string(e.path()).ok()?).ok()?;
                Some((name, note))
            })
            .collect()
    }

    /// Whether the state file matches its note.
    fn intact(&self, kv: &Path, note: &Note) -> Result<(), String> {
        let len = fs::metadata(kv).map_err(|e| e.to_string())?.len();
        if len != note.bytes {
            return Err(format!("{len} bytes where {} were written", note.bytes));
        }
        let sum = file_sha256(kv).map_err(|e| e.to_string())?;
        if sum != note.sha256 {
            return Err("its checksum does not match".into());
        }
        Ok(())
    }

    fn evict(&self) {
        let mut entries = list(&self.root);
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        let used = |e: &Entry| {
            fs::metadata(&e.path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH)
        };
        entries.sort_by_key(used);
        for e in entries {
            if total <= self.max_bytes {
                break;
            }
            remove_entry(&e.path);
            total = total.saturating_sub(e.bytes);
        }
    }
}

impl PrefixStore for DiskPrefixCache {
    fn find(&self, tokens: &[i32]) -> Option<Stored> {
        // How many of `tokens` each state shares: its ids' common prefix with them, or for a
        // note without ids, all of it when its name is that of the prompt's first tokens.
        let mut shared: Vec<(usize, String, Note)> = self
            .notes()
            .into_iter()
            .map(|(name, note)| {
                let shares = if note.ids.is_empty() {
                    let whole =
                        note.tokens <= tokens.len() && tokens_name(&tokens[..note.tokens]) == name;
                    if whole { note.tokens } else { 0 }
                } else {
                    note.ids
                        .iter()
                        .zip(tokens)
                        .take_while(|(a, b)| a == b)
                        .count()
                };
                (shares, name, note)
            })
            .filter(|(shares, _, note)| *shares >= MIN_TOKENS && *shares <= note.tokens)
            .collect();
        shared.sort_by_key(|s| std::cmp::Reverse(s.0));
        for (shares, name, note) in shared {
            let kv = self.dir.join(format!("{name}.kv"));
            match self.intact(&kv, &note) {
                Ok(()) => {
                    // Last use, for eviction.
                    if let Ok(f) = fs::File::options().append(true).open(&kv) {
                        let _ = f.set_modified(SystemTime::now());
                    }
                    return Some(Stored {
                        holds: note.tokens,
                        shares,
                        path: kv,
                    });
                }
                Err(why) => self.reject(&kv, &why),
            }
        }
        None
    }

    fn begin(&self, tokens: &[i32]) -> Option<PathBuf> {
        if tokens.len() < MIN_TOKENS {
            return None;
        }
        private_dir(&self.dir).ok()?;
        let name = tokens_name(tokens);
        Some(self.dir.join(format!(
            ".{name}.{}.{:?}.tmp",
            std::process::id(),
            std::thread::current().id()
        )))
    }

    fn commit(&self, tokens: &[i32], temp: &Path) {
        let name = tokens_name(tokens);
        let kv = self.dir.join(format!("{name}.kv"));
        let written = (|| -> io::Result<()> {
            let note = Note {
                tokens: tokens.len(),
                bytes: fs::metadata(temp)?.len(),
                sha256: file_sha256(temp)?,
                ids: tokens.to_vec(),
            };
            let note_tmp = temp.with_extension("json.tmp");
            fs::write(&note_tmp, serde_json::to_vec(&note)?)?;
            private_file(temp)?;
            private_file(&note_tmp)?;
            fs::rename(temp, &kv)?;
            fs::rename(&note_tmp, kv.with_extension("json"))
        })();
        if let Err(e) = written {
            tracing::warn!(error = %e, "could not store the prompt prefix");
            let _ = fs::remove_file(temp);
            let _ = fs::remove_file(temp.with_extension("json.tmp"));
            return;
        }
        self.evict();
    }

    fn reject(&self, path: &Path, why: &str) {
        tracing::warn!(
            file = %path.display(),
            "ignoring a stored prompt prefix: {why}; it is deleted and the prompt is evaluated"
        );
        remove_entry(path);
    }
}

/// Every stored prefix under `dir`, all models.
pub fn list(dir: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    for model in fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
    {
        let name = model.file_name().to_string_lossy().into_owned();
        for f in fs::read_dir(model.path())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let path = f.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let Some(note) = fs::read_to_string(&path)
                .ok()
                .and_then(|t| serde_json::from_str::<Note>(&t).ok())
            else {
                continue;
            };
            out.push(Entry {
                model: name.clone(),
                tokens: note.tokens,
                bytes: note.bytes,
                path: path.with_extension("kv"),
            });
        }
    }
    out.sort_by(|a, b| (&a.model, a.tokens).cmp(&(&b.model, b.tokens)));
    out
}

/// Remove every stored prefix under `dir`; returns how many were removed.
pub fn clear(dir: &Path) -> io::Result<usize> {
    let n = list(dir).len();
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(n),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(dir: &Path) -> DiskPrefixCache {
        DiskPrefixCache::new(
            &PrefixCacheConfig {
                dir: dir.to_owned(),
                max_bytes: 1000,
            },
            "m",
        )
    }

    fn store(c: &DiskPrefixCache, tokens: &[i32], body: &[u8]) -> PathBuf {
        let temp = c.begin(tokens).expect("long enough");
        fs::write(&temp, body).expect("write");
        c.commit(tokens, &temp);
        c.dir.join(format!("{}.kv", tokens_name(tokens)))
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("toolgram-kv-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    /// The folders are the owner's only, and so are the files (they hold conversations).
    #[cfg(unix)]
    #[test]
    fn folders_and_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let d = scratch("private");
        let c = cache(&d);
        let kv = store(&c, &(0..20).collect::<Vec<i32>>(), b"state");
        let mode = |p: &Path| fs::metadata(p).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode(&d), 0o700);
        assert_eq!(mode(&c.dir), 0o700);
        assert_eq!(mode(&kv), 0o600);
        assert_eq!(mode(&kv.with_extension("json")), 0o600);
    }

    /// The longest stored prefix of the tokens is found; others' prefixes are not.
    #[test]
    fn finds_the_longest_stored_prefix() {
        let d = scratch("find");
        let c = cache(&d);
        let short: Vec<i32> = (0..20).collect();
        let long: Vec<i32> = (0..30).collect();
        store(&c, &short, b"short");
        let long_kv = store(&c, &long, b"long");
        let prompt: Vec<i32> = (0..40).collect();
        let found = |holds, shares, path: &PathBuf| {
            Some(Stored {
                holds,
                shares,
                path: path.clone(),
            })
        };
        assert_eq!(c.find(&prompt), found(30, 30, &long_kv));
        let other: Vec<i32> = (1..41).collect();
        assert_eq!(c.find(&other), None);
        // One token changed after the 25th: the longer state, up to where they part.
        let changed: Vec<i32> = (0..40).map(|t| if t == 25 { -1 } else { t }).collect();
        assert_eq!(c.find(&changed), found(30, 25, &long_kv));
        // Changed before the 16th (too little in common to be worth a load): nothing.
        let early: Vec<i32> = (0..40).map(|t| if t == 10 { -1 } else { t }).collect();
        assert_eq!(c.find(&early), None);
        assert!(c.begin(&prompt[..5]).is_none(), "too short to store");
        assert_eq!(list(&d).len(), 2);
        assert_eq!(clear(&d).ok(), Some(2));
        let _ = fs::remove_dir_all(&d);
    }

    /// A truncated or altered file is never handed out, and is deleted.
    #[test]
    fn damaged_files_are_dropped() {
        let d = scratch("damaged");
        let c = cache(&d);
        let tokens: Vec<i32> = (0..20).collect();
        let kv = store(&c, &tokens, b"0123456789");
        fs::write(&kv, b"01234").expect("truncate");
        assert_eq!(c.find(&tokens), None);
        assert!(!kv.exists() && !kv.with_extension("json").exists());
        let kv = store(&c, &tokens, b"0123456789");
        fs::write(&kv, b"0123456780").expect("alter");
        assert_eq!(c.find(&tokens), None);
        assert!(!kv.exists());
        let _ = fs::remove_dir_all(&d);
    }

    /// Past the size bound, the least recently used entries go first.
    #[test]
    fn eviction_keeps_the_folder_under_its_bound() {
        let d = scratch("evict");
        let c = cache(&d);
        let a: Vec<i32> = (0..20).collect();
        let b: Vec<i32> = (100..120).collect();
        let a_kv = store(&c, &a, &[0u8; 600]);
        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1);
        fs::File::options()
            .append(true)
            .open(&a_kv)
            .and_then(|f| f.set_modified(old))
            .expect("age a");
        let b_kv = store(&c, &b, &[1u8; 600]);
        assert!(!a_kv.exists(), "the older entry is evicted");
        assert!(b_kv.exists());
        let _ = fs::remove_dir_all(&d);
    }
}
