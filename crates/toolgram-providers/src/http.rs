//! The HTTP round trip: POST JSON with a timeout, retried with exponential backoff on 429
//! and 5xx (and connection errors), honouring `Retry-After`. Keys go in the headers the
//! provider's row names ([`crate::Auth`]) only and are never logged or put into errors.

use crate::error::ProviderError;
use crate::spec::{Auth, Kind};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

/// How to send.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Per-request timeout.
    pub timeout: Duration,
    /// Retries after the first try (429/5xx/connection errors only).
    pub retries: u32,
    /// First backoff; doubled each retry.
    pub backoff: Duration,
    /// API key (from the environment), if the provider needs one.
    pub api_key: Option<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            retries: 3,
            backoff: Duration::from_millis(500),
            api_key: None,
        }
    }
}

/// POST `body` to `url` and return the JSON reply.
pub fn post_json(
    kind: Kind,
    url: &str,
    body: &Value,
    opts: &HttpOptions,
) -> Result<Value, ProviderError> {
    let text = post(kind, url, body, opts)?;
    serde_json::from_str(&text)
        .map_err(|e| ProviderError::Http(format!("{url}: reply is not JSON: {e}")))
}

/// POST `body` to `url` and return the reply's text (a streamed reply in full).
pub(crate) fn post(
    kind: Kind,
    url: &str,
    body: &Value,
    opts: &HttpOptions,
) -> Result<String, ProviderError> {
    post_reading(kind, url, body, opts, &mut |resp| {
        resp.text()
            .map_err(|e| ProviderError::Http(format!("{url}: {e}")))
    })
}

/// POST `body` to `url` and hand each line of the reply to `line` as it arrives (a stream's
/// events as the provider sends them); the whole text is returned too.
pub(crate) fn post_lines(
    kind: Kind,
    url: &str,
    body: &Value,
    opts: &HttpOptions,
    line: &mut dyn FnMut(&str),
) -> Result<String, ProviderError> {
    // The timeout bounds the whole reply, as it does a reply read at once (a read's own
    // timeout bounds only the wait for its bytes).
    let deadline = Instant::now() + opts.timeout;
    post_reading(kind, url, body, opts, &mut |resp| {
        let mut reader = BufReader::new(resp);
        let mut text = String::new();
        let mut bytes = Vec::new();
        loop {
            bytes.clear();
            let n = reader
                .read_until(b'\n', &mut bytes)
                .map_err(|e| ProviderError::Http(format!("{url}: {e}")))?;
            if n == 0 {
                return Ok(text);
            }
            let start = text.len();
            text.push_str(&String::from_utf8_lossy(&bytes));
            line(text[start..].trim_end_matches(['\r', '\n']));
            if Instant::now() > deadline {
                return Err(ProviderError::Http(format!(
                    "{url}: the stream did not end within {} s",
                    opts.timeout.as_secs()
                )));
            }
        }
    })
}

/// POST `body` to `url`, retried as the module says, and `read` a successful reply.
fn post_reading(
    kind: Kind,
    url: &str,
    body: &Value,
    opts: &HttpOptions,
    read: &mut dyn FnMut(reqwest::blocking::Response) -> Result<String, ProviderError>,
) -> Result<String, ProviderError> {
    let client = reqwest::blocking::Client::builder()
        .timeout(opts.timeout)
        .build()
        .map_err(|e| ProviderError::Http(format!("HTTP client: {e}")))?;
    let mut wait = opts.backoff;
    let mut attempt = 0;
    loop {
        let mut req = client.post(url).json(body);
        if let Some(key) = &opts.api_key {
            req = match kind.auth() {
                Auth::Bearer => req.bearer_auth(key),
                Auth::Header { name, extra } => extra
                    .iter()
                    .fold(req.header(name, key), |r, (n, v)| r.header(*n, *v)),
            };
        }
        let retryable = match req.send() {
            Ok(resp) => {
                let status = resp.status();
                if status.is_success() {
                    return read(resp);
                }
                let retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok());
                let text = resp.text().unwrap_or_default();
                if !(status.as_u16() == 429 || status.is_server_error()) || attempt >= opts.retries
                {
                    return Err(ProviderError::Http(format!(
                        "{url}: HTTP {status}: {}",
                        text.chars().take(500).collect::<String>()
                    )));
                }
                retry_after.map(Duration::from_secs)
            }
            Err(e) if attempt < opts.retries && (e.is_connect() || e.is_timeout()) => None,
            Err(e) => return Err(ProviderError::Http(format!("{url}: {e}"))),
        };
        std::thread::sleep(retryable.unwrap_or(wait));
        wait *= 2;
        attempt += 1;
    }
}
