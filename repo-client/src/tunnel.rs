//! Repositories that live inside a cluster: `portforward://NAMESPACE/KIND/NAME:PORT[/PATH]`
//! URLs, with KIND `svc`, `pod` or `deploy` (kubectl's spellings of them are accepted
//! too) and PORT a number or a port name.
//!
//! Such a URL is the repository's identity everywhere (repositories.yaml, cache keys,
//! the base that relative URLs in its index are resolved against); only the request
//! itself goes elsewhere: [`Tunnels`] gives a local address whose connections reach the
//! target, and the request is sent to `http://127.0.0.1:PORT/PATH`. The client never
//! talks to Kubernetes itself; the command line hands it a [`Tunnels`] built on
//! chartkit-cluster.

use std::net::SocketAddr;

use crate::error::{ClientError, Result};

/// The URL scheme, without `://`.
pub const SCHEME: &str = "portforward";

/// The URL's form, for messages.
pub const FORM: &str = "portforward://NAMESPACE/svc/NAME:PORT[/PATH] (or pod/NAME, deploy/NAME)";

/// What a tunnel reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TunnelKind {
    Service,
    Pod,
    Deployment,
}

impl TunnelKind {
    /// kubectl's short name, as URLs and messages write it.
    pub fn short(self) -> &'static str {
        match self {
            TunnelKind::Service => "svc",
            TunnelKind::Pod => "pod",
            TunnelKind::Deployment => "deploy",
        }
    }

    /// The spellings kubectl accepts for the kinds port-forward reaches.
    fn parse(text: &str) -> Option<TunnelKind> {
        match text {
            "svc" | "service" | "services" => Some(TunnelKind::Service),
            "po" | "pod" | "pods" => Some(TunnelKind::Pod),
            "deploy" | "deployment" | "deployments" => Some(TunnelKind::Deployment),
            _ => None,
        }
    }
}

/// The port of the target: a number, or the name of a service port (for a service) or
/// of a container port (for a pod or deployment).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TunnelPort {
    Number(u16),
    Name(String),
}

impl std::fmt::Display for TunnelPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TunnelPort::Number(n) => write!(f, "{n}"),
            TunnelPort::Name(name) => f.write_str(name),
        }
    }
}

/// The resource a tunnel reaches, and its port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TunnelTarget {
    pub namespace: String,
    pub kind: TunnelKind,
    pub name: String,
    pub port: TunnelPort,
}

impl TunnelTarget {
    /// `svc/NAME`, as kubectl names it.
    pub fn resource(&self) -> String {
        format!("{}/{}", self.kind.short(), self.name)
    }
}

impl std::fmt::Display for TunnelTarget {
    /// `NAMESPACE/KIND/NAME:PORT`, the URL's authority and first segments.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}/{}:{}",
            self.namespace,
            self.kind.short(),
            self.name,
            self.port
        )
    }
}

/// A `portforward://` URL taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TunnelUrl {
    pub target: TunnelTarget,
    /// Everything after the port: the path (empty or starting with `/`), query and
    /// fragment, as written.
    pub rest: String,
}

/// Opens the tunnels `portforward://` URLs need, for as long as it lives: dropping it
/// closes them.
pub trait Tunnels: Send + Sync {
    /// A local address whose connections reach `target`, the tunnel opened on first use
    /// and kept for the next requests. The error says which part of the target is wrong
    /// (namespace, resource, port, no ready pod).
    fn open(&self, target: &TunnelTarget) -> Result<SocketAddr, String>;

    /// Why the latest connection through the tunnel to `target` could not be forwarded,
    /// if one could not; read once. A request whose connection broke without such a
    /// reason (the pod went away mid-transfer) may be tried again: the tunnel picks
    /// another pod for the next connection.
    fn take_failure(&self, target: &TunnelTarget) -> Option<String>;
}

/// Whether `url` is a `portforward://` URL (the scheme compared without case, as URL
/// schemes are).
pub fn is_tunnel_url(url: &str) -> bool {
    url.split_once("://")
        .is_some_and(|(scheme, _)| scheme.eq_ignore_ascii_case(SCHEME))
}

impl TunnelUrl {
    /// Reads a `portforward://` URL; the error names the part that is wrong.
    pub fn parse(url: &str) -> Result<TunnelUrl> {
        let bad = |reason: String| ClientError::BadUrl {
            url: url.to_owned(),
            reason: format!("{reason}; write {FORM}"),
        };
        let Some((scheme, after)) = url.split_once("://") else {
            return Err(bad("it is not a portforward:// URL".into()));
        };
        if !scheme.eq_ignore_ascii_case(SCHEME) {
            return Err(bad(format!("the scheme is {scheme}, not {SCHEME}")));
        }
        let (location, suffix) = match after.find(['?', '#']) {
            Some(i) => after.split_at(i),
            None => (after, ""),
        };
        let mut segments = location.splitn(4, '/');
        let namespace = segments.next().unwrap_or_default();
        if namespace.is_empty() {
            return Err(bad("it names no namespace".into()));
        }
        if !is_dns_label(namespace) {
            return Err(bad(format!(
                "`{namespace}` is not a namespace name (lower-case letters, digits and '-', at most 63)"
            )));
        }
        let kind_text = segments.next().unwrap_or_default();
        if kind_text.is_empty() {
            return Err(bad(format!(
                "it names no resource after the namespace `{namespace}`"
            )));
        }
        let Some(kind) = TunnelKind::parse(kind_text) else {
            return Err(bad(format!(
                "`{kind_text}` is not something chartkit port-forwards to: use svc, pod or deploy"
            )));
        };
        let name_port = segments.next().unwrap_or_default();
        if name_port.is_empty() {
            return Err(bad(format!("`{kind_text}/` names no {}", kind_noun(kind))));
        }
        let Some((name, port)) = name_port.rsplit_once(':') else {
            return Err(bad(format!(
                "`{}/{name_port}` has no port: add `:PORT`, the {} port's number or name",
                kind.short(),
                kind_noun(kind)
            )));
        };
        if name.is_empty() {
            return Err(bad(format!(
                "`{kind_text}/{name_port}` names no {}",
                kind_noun(kind)
            )));
        }
        if !is_dns_subdomain(name) {
            return Err(bad(format!(
                "`{name}` is not a {} name (lower-case letters, digits, '-' and '.')",
                kind_noun(kind)
            )));
        }
        let port = parse_port(port)
            .map_err(|reason| bad(format!("the port of `{}/{name}`: {reason}", kind.short())))?;
        let path = segments.next().map(|p| format!("/{p}")).unwrap_or_default();
        Ok(TunnelUrl {
            target: TunnelTarget {
                namespace: namespace.to_owned(),
                kind,
                name: name.to_owned(),
                port,
            },
            rest: format!("{path}{suffix}"),
        })
    }

    /// `portforward://NAMESPACE/KIND/NAME:PORT`, with nothing after the port.
    pub fn root(&self) -> String {
        format!("{SCHEME}://{}", self.target)
    }

    /// The same URL with `rest` in place of this one's.
    pub fn with_rest(&self, rest: &str) -> String {
        format!("{}{rest}", self.root())
    }

    /// The URL a request through the tunnel listening on `local` goes to.
    pub fn local_url(&self, local: SocketAddr) -> String {
        let rest = if self.rest.starts_with('/') {
            self.rest.clone()
        } else {
            format!("/{}", self.rest)
        };
        format!("http://{local}{rest}")
    }
}

fn kind_noun(kind: TunnelKind) -> &'static str {
    match kind {
        TunnelKind::Service => "service",
        TunnelKind::Pod => "pod",
        TunnelKind::Deployment => "deployment",
    }
}

/// A port number from 1 to 65535, or a port name as Kubernetes allows them
/// (IANA_SVC_NAME: at most 15 lower-case letters, digits and '-', with a letter).
fn parse_port(text: &str) -> std::result::Result<TunnelPort, String> {
    if text.is_empty() {
        return Err("it is empty: give the port's number or name".into());
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return match text.parse::<u16>() {
            Ok(n) if n > 0 => Ok(TunnelPort::Number(n)),
            _ => Err(format!("`{text}` is not between 1 and 65535")),
        };
    }
    let valid_name = text.len() <= 15
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && text.bytes().any(|b| b.is_ascii_lowercase())
        && !text.starts_with('-')
        && !text.ends_with('-')
        && !text.contains("--");
    if valid_name {
        Ok(TunnelPort::Name(text.to_owned()))
    } else {
        Err(format!(
            "`{text}` is neither a number nor a port name (at most 15 lower-case letters, digits and '-')"
        ))
    }
}

/// RFC 1123 label: what namespace names must be.
fn is_dns_label(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 63
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !text.starts_with('-')
        && !text.ends_with('-')
}

/// RFC 1123 subdomain: what pod, service and deployment names must be.
fn is_dns_subdomain(text: &str) -> bool {
    text.len() <= 253 && text.split('.').all(is_dns_label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> TunnelUrl {
        TunnelUrl::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"))
    }

    fn reason(url: &str) -> String {
        match TunnelUrl::parse(url) {
            Ok(parsed) => panic!("{url} parsed as {parsed:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn services_pods_and_deployments_parse() {
        let url = parse("portforward://infra/svc/charts:8879");
        assert_eq!(
            url.target,
            TunnelTarget {
                namespace: "infra".into(),
                kind: TunnelKind::Service,
                name: "charts".into(),
                port: TunnelPort::Number(8879),
            }
        );
        assert_eq!(url.rest, "");
        assert_eq!(url.target.resource(), "svc/charts");
        assert_eq!(url.root(), "portforward://infra/svc/charts:8879");

        let url = parse("portforward://default/pod/web-0:http/charts/stable?token=x");
        assert_eq!(url.target.kind, TunnelKind::Pod);
        assert_eq!(url.target.port, TunnelPort::Name("http".into()));
        assert_eq!(url.rest, "/charts/stable?token=x");

        let url = parse("PortForward://a/deployment/repo.v2:80/");
        assert_eq!(url.target.kind, TunnelKind::Deployment);
        assert_eq!(url.root(), "portforward://a/deploy/repo.v2:80");
        assert_eq!(url.rest, "/");
    }

    #[test]
    fn the_local_url_keeps_path_and_query() {
        let local: SocketAddr = "127.0.0.1:4321".parse().unwrap();
        assert_eq!(
            parse("portforward://d/svc/c:1").local_url(local),
            "http://127.0.0.1:4321/"
        );
        assert_eq!(
            parse("portforward://d/svc/c:1/x/index.yaml?k=v").local_url(local),
            "http://127.0.0.1:4321/x/index.yaml?k=v"
        );
        assert_eq!(
            parse("portforward://d/svc/c:1?k=v").local_url(local),
            "http://127.0.0.1:4321/?k=v"
        );
    }

    #[test]
    fn errors_name_the_part_that_is_wrong() {
        let no_port = reason("portforward://default/svc/charts");
        assert!(no_port.contains("`svc/charts` has no port"), "{no_port}");
        assert!(
            no_port.contains("portforward://NAMESPACE/svc/NAME:PORT"),
            "{no_port}"
        );
        assert!(
            reason("portforward://default/svc/charts:")
                .contains("the port of `svc/charts`: it is empty")
        );
        assert!(
            reason("portforward://default/svc/charts:0").contains("`0` is not between 1 and 65535")
        );
        assert!(
            reason("portforward://default/svc/charts:99999").contains("`99999` is not between")
        );
        assert!(
            reason("portforward://default/svc/charts:Http")
                .contains("neither a number nor a port name")
        );
        assert!(reason("portforward://").contains("it names no namespace"));
        assert!(reason("portforward:///svc/charts:80").contains("it names no namespace"));
        assert!(
            reason("portforward://Infra/svc/charts:80").contains("`Infra` is not a namespace name")
        );
        assert!(reason("portforward://infra").contains("no resource after the namespace `infra`"));
        assert!(
            reason("portforward://infra/ingress/x:80")
                .contains("`ingress` is not something chartkit port-forwards to")
        );
        assert!(reason("portforward://infra/svc").contains("`svc/` names no service"));
        assert!(reason("portforward://infra/svc/:80").contains("names no service"));
        assert!(
            reason("portforward://infra/svc/Charts:80").contains("`Charts` is not a service name")
        );
        assert!(reason("https://infra/svc/c:80").contains("the scheme is https"));
    }

    #[test]
    fn only_portforward_urls_are_tunnel_urls() {
        assert!(is_tunnel_url("portforward://a/svc/b:1"));
        assert!(is_tunnel_url("PORTFORWARD://a/svc/b:1"));
        assert!(!is_tunnel_url("https://portforward/x"));
        assert!(!is_tunnel_url("stable/web"));
    }
}
