//! The client's address for the audit trail. `X-Forwarded-For` is only believed when the peer is
//! a proxy the configuration names (`COUNTERSIGN_TRUSTED_PROXIES`); otherwise anyone could write
//! any address into the trail.

use std::{net::IpAddr, sync::Arc};

/// The proxies whose `X-Forwarded-For` is believed, as a request extension.
#[derive(Clone, Debug, Default)]
pub struct TrustedProxies(pub Arc<Vec<IpAddr>>);

/// Where a request came from, as [`client_ip`] decides (None only without a peer address).
#[derive(Clone, Debug)]
pub struct ClientIp(pub Option<String>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let peer = parts.extensions.get::<axum::extract::ConnectInfo<crate::stalled_writes::PeerAddr>>().map(|c| c.0.0.ip());
        let forwarded_for = parts.headers.get("x-forwarded-for").and_then(|v| v.to_str().ok());
        let trusted = parts.extensions.get::<TrustedProxies>().map(|t| t.0.clone()).unwrap_or_default();
        Ok(Self(client_ip(peer, forwarded_for, &trusted)))
    }
}

/// The peer's address; behind trusted proxies, the right-most forwarded address that is not one
/// of them (the left part of the header is whatever the client sent).
pub fn client_ip(peer: Option<IpAddr>, forwarded_for: Option<&str>, trusted: &[IpAddr]) -> Option<String> {
    let peer = peer?;
    if !trusted.contains(&peer) {
        return Some(peer.to_string());
    }
    let hops = forwarded_for.unwrap_or_default().split(',').rev().map(str::trim).filter(|h| !h.is_empty());
    for hop in hops {
        match hop.parse::<IpAddr>() {
            Ok(ip) if trusted.contains(&ip) => continue,
            Ok(ip) => return Some(ip.to_string()),
            // Not an address: the chain cannot be followed further.
            Err(_) => break,
        }
    }
    Some(peer.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_forwarded_address_is_believed_only_from_a_trusted_proxy() {
        let proxy = ip("10.0.0.1");
        // From anyone else the header is ignored: this is the attack.
        assert_eq!(client_ip(Some(ip("198.51.100.7")), Some("203.0.113.9"), &[proxy]).as_deref(), Some("198.51.100.7"));
        assert_eq!(client_ip(Some(ip("198.51.100.7")), Some("203.0.113.9"), &[]).as_deref(), Some("198.51.100.7"));
        // Through the proxy: the right-most address it did not add itself.
        assert_eq!(client_ip(Some(proxy), Some("203.0.113.9"), &[proxy]).as_deref(), Some("203.0.113.9"));
        assert_eq!(client_ip(Some(proxy), Some("6.6.6.6, 203.0.113.9"), &[proxy]).as_deref(), Some("203.0.113.9"));
        assert_eq!(client_ip(Some(proxy), Some("203.0.113.9, 10.0.0.1"), &[proxy]).as_deref(), Some("203.0.113.9"));
        assert_eq!(client_ip(Some(proxy), Some("garbage"), &[proxy]).as_deref(), Some("10.0.0.1"));
        assert_eq!(client_ip(Some(proxy), None, &[proxy]).as_deref(), Some("10.0.0.1"));
    }
}
