//! Who a request comes from, and over which scheme, when proxies stand in front of the server.
//!
//! The connection's peer is the client, unless the peer is one of the operator's trusted proxies
//! (`--trusted-proxies`). Then the proxies' own account is read: `Forwarded` (RFC 7239) if the
//! request has one, else `X-Forwarded-For` and `X-Forwarded-Proto`. Each proxy appends the address
//! it was reached from, so the list is walked from its right end, past every address that is
//! itself trusted: the first one that is not is the client. Anything to its left was written by
//! the client and is not believed. From a peer that is not trusted these headers are ignored
//! altogether, so nobody can choose the address the limits count them by.

use std::net::IpAddr;
use std::str::FromStr;

use actix_web::http::header::{self, HeaderMap};
use actix_web::{web, HttpMessage, HttpRequest};
use ipnet::IpNet;

/// The operator's trusted proxies: networks (`10.0.0.0/8`) and single addresses (`127.0.0.1`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustedProxies(Vec<IpNet>);

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("`{0}` is not an address or a network (such as 10.0.0.0/8, 127.0.0.1 or ::1)")]
pub struct NotANetwork(String);

impl FromStr for TrustedProxies {
    type Err = NotANetwork;

    /// A comma-separated list (empty: none).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let parse = |item: &str| {
            let net = item
                .parse::<IpNet>()
                .or_else(|_| item.parse::<IpAddr>().map(IpNet::from));
            net.map(|net| net.trunc())
                .map_err(|_| NotANetwork(item.to_owned()))
        };
        let items = text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty());
        Ok(Self(items.map(parse).collect::<Result<_, _>>()?))
    }
}

impl std::fmt::Display for TrustedProxies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let nets: Vec<String> = self.0.iter().map(IpNet::to_string).collect();
        f.write_str(&nets.join(","))
    }
}

/// How requests reach this server: through which trusted proxies, over its own TLS or not,
/// and whether answers carry HSTS (served over TLS, or a public URL that is https).
#[derive(Debug, Clone)]
pub struct Front {
    pub proxies: TrustedProxies,
    pub tls: bool,
    pub hsts: bool,
    /// The public URL the operator gave (`https://games.example.org`, no trailing `/`): the
    /// origin absolute addresses written for a request start with.
    pub public_url: Option<String>,
    /// How long a request's body may take to arrive.
    pub body_time: std::time::Duration,
    /// The origin authors' pages are served at, alone (`api/origins.rs`), if it is not this one.
    pub frontend_origin: Option<String>,
    /// The requests each client behind a trusted proxy has open (see `api/connections.rs`).
    pub proxied_requests: std::sync::Arc<super::connections::ConnectionCounts>,
}

impl Default for Front {
    fn default() -> Self {
        Self {
            proxies: TrustedProxies::default(),
            tls: false,
            hsts: false,
            public_url: None,
            body_time: std::time::Duration::from_secs(10),
            frontend_origin: None,
            proxied_requests: super::connections::ConnectionCounts::new(0),
        }
    }
}

impl Front {
    /// The origin a request reached this server at, for addresses written back to it: the
    /// public URL if the operator gave one, else the request's scheme (as this server or a
    /// trusted proxy served it) and its own `Host` (never a forwarded one, which a client
    /// could set to poison a cache). None when the `Host` is not a plain host name.
    pub fn origin_for(&self, client: Option<&Client>, host: Option<&str>) -> Option<String> {
        if let Some(url) = &self.public_url {
            return Some(url.clone());
        }
        let host = host.and_then(plain_host)?;
        let https = client.map_or(self.tls, |client| client.https);
        Some(format!("{}://{host}", if https { "https" } else { "http" }))
    }
}

/// The origin absolute addresses written for `req` use (see [`Front::origin_for`]).
pub fn request_origin(req: &HttpRequest) -> Option<String> {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|value| value.to_str().ok());
    let client = req.extensions().get::<Client>().copied();
    match req.app_data::<web::Data<Front>>() {
        Some(front) => front.origin_for(client.as_ref(), host),
        None => Front::default().origin_for(None, host),
    }
}

/// Where a request comes from, as far as this server can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Client {
    /// The client's address (none for a connection without one, such as a test's).
    pub address: Option<IpAddr>,
    /// Whether the client reached us over HTTPS: this server's own TLS, or a trusted proxy's.
    pub https: bool,
}

/// One hop of a proxies' list: the address it names (none for `unknown`, an obfuscated name or
/// text that is no address), and the scheme it says the request came in with.
#[derive(Debug, Clone, PartialEq)]
struct Hop {
    address: Option<IpAddr>,
    proto: Option<String>,
}

impl TrustedProxies {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `address` is one of the proxies.
    pub fn trusts(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.0.iter().any(|net| net.contains(&address))
    }

    /// The client of a request from `peer` over a connection that is TLS or not (`tls`), with
    /// `headers`.
    pub fn client(&self, peer: Option<IpAddr>, tls: bool, headers: &HeaderMap) -> Client {
        let peer = peer.map(canonical);
        let direct = Client {
            address: peer,
            https: tls,
        };
        let Some(proxy) = peer.filter(|peer| self.trusts(*peer)) else {
            return direct;
        };
        let hops = match headers.contains_key("forwarded") {
            true => forwarded_hops(headers),
            false => x_forwarded_hops(headers),
        };
        let mut client = Hop {
            address: Some(proxy),
            proto: None,
        };
        for hop in hops.iter().rev() {
            match hop.address {
                Some(address) if self.trusts(address) => client = hop.clone(),
                // The first hop not trusted is the client; a hop that names no address ends the
                // walk at the last proxy known.
                Some(_) => {
                    client = hop.clone();
                    break;
                }
                None => break,
            }
        }
        // The scheme the client used, as the proxy that took its request says; else the one
        // said nearest to this server.
        let proto = (client.proto.as_deref())
            .or_else(|| hops.iter().rev().find_map(|hop| hop.proto.as_deref()));
        Client {
            address: client.address,
            https: match proto {
                Some(proto) => proto.eq_ignore_ascii_case("https"),
                None => tls,
            },
        }
    }
}

/// `host` if it is a plain host name, address or `[IPv6]`, with a port or not: one that can be
/// written into a header or a policy as it is.
pub fn plain_host(host: &str) -> Option<&str> {
    let plain = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.:[]".contains(c));
    plain.then_some(host)
}

/// An IPv4 address written as IPv6 (`::ffff:10.0.0.1`), as the address it is.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

/// The values of every `name` header, split at commas, in order.
fn list<'h>(headers: &'h HeaderMap, name: &str) -> Vec<&'h str> {
    headers
        .get_all(name)
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect()
}

/// `Forwarded: for=192.0.2.60;proto=https, for="[2001:db8::1]:4711"` as hops (RFC 7239 § 4).
fn forwarded_hops(headers: &HeaderMap) -> Vec<Hop> {
    let hop = |element: &str| {
        let mut hop = Hop {
            address: None,
            proto: None,
        };
        for pair in element.split(';') {
            let Some((name, value)) = pair.split_once('=') else {
                continue;
            };
            let value = value.trim().trim_matches('"');
            match name.trim().to_ascii_lowercase().as_str() {
                "for" => hop.address = node_address(value),
                "proto" => hop.proto = Some(value.to_owned()),
                _ => {}
            }
        }
        hop
    };
    list(headers, "forwarded").into_iter().map(hop).collect()
}

/// `X-Forwarded-For: client, proxy1` as hops, the right-most `X-Forwarded-Proto` on the last.
fn x_forwarded_hops(headers: &HeaderMap) -> Vec<Hop> {
    let mut hops: Vec<Hop> = list(headers, "x-forwarded-for")
        .into_iter()
        .map(|item| Hop {
            address: node_address(item),
            proto: None,
        })
        .collect();
    let proto = list(headers, "x-forwarded-proto")
        .last()
        .map(|p| p.to_string());
    match hops.last_mut() {
        Some(last) => last.proto = proto,
        None => hops.push(Hop {
            address: None,
            proto,
        }),
    }
    // A lone `X-Forwarded-Proto` is a hop that names no address: the walk keeps the proxy's,
    // and the scheme is still read from it.
    hops
}

/// The address of a node as proxies write it: `192.0.2.43`, `192.0.2.43:47011`, `[2001:db8::1]`,
/// `[2001:db8::1]:4711` or a bare IPv6 address; none for `unknown` or an obfuscated name.
fn node_address(node: &str) -> Option<IpAddr> {
    let node = node.trim();
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split(']').next()?.parse().ok().map(canonical);
    }
    if let Ok(address) = node.parse::<IpAddr>() {
        return Some(canonical(address));
    }
    let (host, port) = node.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn a_list_of_networks_and_addresses_is_read_and_a_wrong_one_named() {
        let trusted: TrustedProxies = " 10.0.0.0/8, 127.0.0.1,::1 ,".parse().unwrap();
        assert_eq!(trusted.to_string(), "10.0.0.0/8,127.0.0.1/32,::1/128");
        assert!(TrustedProxies::from_str("").unwrap().is_empty());
        assert_eq!(
            TrustedProxies::from_str("10.0.0.0/8,proxy.local").unwrap_err(),
            NotANetwork("proxy.local".into())
        );
        assert!(TrustedProxies::from_str("10.0.0.0/33").is_err());
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_says() {
        let trusted: TrustedProxies = "10.0.0.1".parse().unwrap();
        let forged = headers(&[
            ("x-forwarded-for", "203.0.113.9"),
            ("x-forwarded-proto", "https"),
            ("forwarded", "for=198.51.100.1;proto=https"),
        ]);
        let client = trusted.client(ip("192.0.2.5"), false, &forged);
        assert_eq!(
            client,
            Client {
                address: ip("192.0.2.5"),
                https: false
            }
        );
        let none = TrustedProxies::default();
        assert_eq!(
            none.client(ip("10.0.0.1"), true, &forged).address,
            ip("10.0.0.1")
        );
    }

    #[test]
    fn behind_trusted_proxies_the_right_most_untrusted_address_is_the_client() {
        let trusted: TrustedProxies = "10.0.0.0/8".parse().unwrap();
        // The client wrote 1.2.3.4 itself; the first proxy saw 203.0.113.9; a second proxy,
        // trusted, saw the first.
        let chain = headers(&[
            ("x-forwarded-for", "1.2.3.4, 203.0.113.9"),
            ("x-forwarded-for", "10.1.1.1"),
            ("x-forwarded-proto", "https"),
        ]);
        let client = trusted.client(ip("10.0.0.2"), false, &chain);
        assert_eq!(
            client,
            Client {
                address: ip("203.0.113.9"),
                https: true
            }
        );
        // Every hop trusted: the left-most.
        let inside = headers(&[("x-forwarded-for", "10.9.9.9, 10.1.1.1")]);
        assert_eq!(
            trusted.client(ip("10.0.0.2"), false, &inside).address,
            ip("10.9.9.9")
        );
        // No header: the proxy itself; a proto alone still says the scheme.
        let bare = headers(&[("x-forwarded-proto", "https")]);
        let client = trusted.client(ip("10.0.0.2"), false, &bare);
        assert_eq!(
            client,
            Client {
                address: ip("10.0.0.2"),
                https: true
            }
        );
        // Something that is no address ends the walk at the last proxy known.
        let junk = headers(&[("x-forwarded-for", "203.0.113.9, nonsense, 10.1.1.1")]);
        assert_eq!(
            trusted.client(ip("10.0.0.2"), false, &junk).address,
            ip("10.1.1.1")
        );
    }

    #[test]
    fn forwarded_is_read_as_rfc_7239_writes_it_and_wins_over_x_forwarded_for() {
        let trusted: TrustedProxies = "10.0.0.0/8,2001:db8:cafe::/48".parse().unwrap();
        let both = headers(&[
            ("x-forwarded-for", "198.51.100.77"),
            (
                "forwarded",
                "for=\"[2001:db8::17]:4711\";proto=https;by=10.0.0.1, For=10.2.2.2:8080",
            ),
        ]);
        let client = trusted.client(ip("::ffff:10.0.0.3"), false, &both);
        assert_eq!(
            client,
            Client {
                address: ip("2001:db8::17"),
                https: true
            }
        );
        let obfuscated = headers(&[("forwarded", "for=_hidden;proto=https, for=10.2.2.2")]);
        let client = trusted.client(ip("10.0.0.3"), false, &obfuscated);
        assert_eq!(
            client,
            Client {
                address: ip("10.2.2.2"),
                https: true
            }
        );
        let plain = headers(&[("forwarded", "for=192.0.2.60;proto=http")]);
        let client = trusted.client(ip("10.0.0.3"), true, &plain);
        assert_eq!(
            client,
            Client {
                address: ip("192.0.2.60"),
                https: false
            }
        );
    }
}
