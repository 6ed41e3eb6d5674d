//! What a request must show before it is read: on a loopback bind, a loopback `Host` (and
//! `Origin` when one is sent), so a web page cannot reach the server through DNS rebinding or
//! a cross-site POST; the API key, compared in constant time; `Content-Type:
//! application/json` on a body. Each refusal is a typed error naming what was wrong. This
//! module must not read bodies.

use crate::error::ApiError;
use axum::http::{HeaderMap, StatusCode, header};
use std::net::IpAddr;
use subtle::ConstantTimeEq;

/// Whether `host` (a name or an address, without a port) is loopback: `localhost` or a
/// name under it (RFC 6761), `127.0.0.0/8`, `::1`.
pub fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let lower = host.to_ascii_lowercase();
    lower == "localhost"
        || lower.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The host of an authority (`name`, `name:port`, `[v6]`, `[v6]:port`, a bare v6 address).
fn host_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        // A bare IPv6 address has more than one colon.
        Some((host, port)) if !host.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            host
        }
        _ => authority,
    }
}

/// Whether an `Origin` value (`scheme://host[:port]`) names a loopback host; `null` (a
/// sandboxed page, a file) does not.
fn is_loopback_origin(origin: &str) -> bool {
    origin
        .split_once("://")
        .is_some_and(|(_, rest)| is_loopback_name(host_of(rest.split('/').next().unwrap_or(""))))
}

fn forbidden(message: String) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "invalid_request_error",
        "forbidden_host",
        message,
    )
}

/// On a loopback bind: a `Host` (when sent) and an `Origin` (when sent) that name a loopback
/// host, any port; else 403. A page on another site, or one reaching 127.0.0.1 under its own
/// name by DNS rebinding, sends its own name.
pub fn loopback_origin(headers: &HeaderMap) -> Result<(), ApiError> {
    if let Some(host) = headers.get(header::HOST) {
        let host = host.to_str().unwrap_or("");
        if !is_loopback_name(host_of(host)) {
            return Err(forbidden(format!(
                "this server listens on a loopback address and answers requests for localhost, 127.0.0.1 or [::1] only; the Host header names `{}`",
                crate::clip::cut(host, 100)
            )));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !is_loopback_origin(origin) {
            return Err(forbidden(format!(
                "this server listens on a loopback address and answers pages served from localhost only; the Origin header is `{}`",
                crate::clip::cut(origin, 100)
            )));
        }
    }
    Ok(())
}

/// Whether `sent` is `key`, compared in constant time: the time taken does not depend on how
/// many leading bytes match (only on the lengths, which a key's length does not make secret).
pub fn key_matches(sent: Option<&str>, key: &str) -> bool {
    sent.is_some_and(|s| bool::from(s.as_bytes().ct_eq(key.as_bytes())))
}

/// A body's `Content-Type` must be JSON: `application/json`, in any case, with any parameters
/// (`; charset=utf-8`); else 415. A browser sends a cross-site POST without asking first only
/// as `text/plain`, a form or multipart.
pub fn json_content_type(headers: &HeaderMap) -> Result<(), ApiError> {
    let sent = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("(not text)"));
    let essence = sent.map(|t| t.split(';').next().unwrap_or("").trim());
    if essence.is_some_and(|e| e.eq_ignore_ascii_case("application/json")) {
        return Ok(());
    }
    let got = sent.map_or_else(
        || "none was sent".to_owned(),
        |t| format!("got `{}`", crate::clip::cut(t, 100)),
    );
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "invalid_request_error",
        "unsupported_media_type",
        format!("the body must be sent with `Content-Type: application/json`; {got}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    #[test]
    fn loopback_names_with_any_port_pass_and_others_do_not() {
        for ok in [
            "localhost",
            "LOCALHOST:8080",
            "127.0.0.1",
            "127.9.8.7:1",
            "[::1]",
            "[::1]:8080",
            "::1",
            "app.localhost:3000",
        ] {
            assert!(is_loopback_name(host_of(ok)), "{ok}");
        }
        for bad in [
            "attacker.example",
            "attacker.example:8080",
            "localhost.attacker.example",
            "10.0.0.1",
            "[::2]:80",
            "0.0.0.0",
            "",
        ] {
            assert!(!is_loopback_name(host_of(bad)), "{bad}");
        }
    }

    #[test]
    fn host_and_origin_are_checked_when_sent() {
        assert!(loopback_origin(&headers(&[])).is_ok());
        assert!(loopback_origin(&headers(&[(header::HOST, "127.0.0.1:8080")])).is_ok());
        let ok = headers(&[
            (header::HOST, "localhost:8080"),
            (header::ORIGIN, "http://localhost:3000"),
        ]);
        assert!(loopback_origin(&ok).is_ok());
        for (h, o) in [
            ("attacker.example", None),
            ("127.0.0.1:8080", Some("http://attacker.example")),
            ("127.0.0.1:8080", Some("null")),
        ] {
            let mut pairs = vec![(header::HOST, h)];
            pairs.extend(o.map(|o| (header::ORIGIN, o)));
            let err = loopback_origin(&headers(&pairs)).expect_err("refused");
            assert_eq!(err.fields().status, StatusCode::FORBIDDEN);
        }
    }

    #[test]
    fn keys_match_only_when_equal() {
        assert!(key_matches(Some("secret"), "secret"));
        for sent in [
            None,
            Some(""),
            Some("secre"),
            Some("secret!"),
            Some("Secret"),
        ] {
            assert!(!key_matches(sent, "secret"), "{sent:?}");
        }
    }

    #[test]
    fn json_with_any_parameters_and_case_is_json() {
        for ok in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON;charset=UTF-8",
        ] {
            assert!(
                json_content_type(&headers(&[(header::CONTENT_TYPE, ok)])).is_ok(),
                "{ok}"
            );
        }
        for bad in [
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            Some("application/jsonx"),
            None,
        ] {
            let h = headers(
                &bad.map(|b| (header::CONTENT_TYPE, b))
                    .into_iter()
                    .collect::<Vec<_>>(),
            );
            let err = json_content_type(&h).expect_err("refused");
            assert_eq!(err.fields().status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        }
    }
}
