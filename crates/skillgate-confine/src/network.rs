//! Network policy: the file format, the default-deny ranges, whether one policy covers
//! another, and the Kubernetes `NetworkPolicy` emitter.
//!
//! A policy file is TOML in the shape of [`NetworkPolicy`]:
//!
//! ```toml
//! mode = "none"                  # the default: no network at all
//! ```
//!
//! ```toml
//! mode = "allow_list"
//! [[allow]]
//! cidr = "203.0.113.0/24"        # IP literals and CIDRs only
//! ports = [{ start = 443, end = 443 }]   # empty or absent: every port
//! [[allow]]
//! cidr = "198.51.100.7/32"
//! host = "api.example.com"       # only for platforms that resolve names themselves
//! ```
//!
//! Link-local and metadata addresses, loopback, the private and shared ranges are
//! **denied unless listed explicitly** ([`SENSITIVE`]): a destination that is one of them
//! or lies inside one is explicitly listed and allowed; a broader destination (such as
//! `0.0.0.0/0`) has them cut out. Nothing here resolves a name or contacts an address.
use crate::ConfineError;
use ipnet::IpNet;
use k8s_openapi::api::networking::v1::{
    IPBlock, NetworkPolicy as K8sNetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use skillgate_core::{NetworkDestination, NetworkPolicy, PortRange};
use std::collections::BTreeMap;
use std::path::Path;

/// Ranges a destination never reaches unless it names them (or a range inside them):
/// IPv4 and IPv6 link-local (cloud metadata lives there: 169.254.169.254, and
/// fd00:ec2::254 inside fc00::/7), loopback, RFC 1918 and unique-local private ranges,
/// carrier-grade shared space, "this network", and IPv4-mapped IPv6 (which would reach
/// all of the above through an IPv6 socket).
pub const SENSITIVE: &[&str] = &[
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "::1/128",
    "::ffff:0:0/96",
    "fc00::/7",
    "fd00:ec2::254/128",
    "fe80::/10",
];

fn sensitive() -> impl Iterator<Item = IpNet> {
    SENSITIVE.iter().filter_map(|s| s.parse().ok())
}

/// The sensitive ranges cut out of `cidr`: those strictly inside it. A cidr equal to or
/// inside a sensitive range names it explicitly and keeps it.
///
/// ```
/// use skillgate_confine::network::excepted;
/// let all: ipnet::IpNet = "0.0.0.0/0".parse().unwrap();
/// assert!(excepted(&all).iter().any(|n| n.to_string() == "169.254.0.0/16"));
/// let one: ipnet::IpNet = "10.1.2.3/32".parse().unwrap();
/// assert!(excepted(&one).is_empty()); // listed explicitly
/// ```
pub fn excepted(cidr: &IpNet) -> Vec<IpNet> {
    let mut out: Vec<IpNet> = sensitive()
        .filter(|s| cidr.contains(s) && !s.contains(cidr))
        .collect();
    // Keep only the outermost ranges (fd00:ec2::254 lies inside fc00::/7).
    let copy = out.clone();
    out.retain(|s| !copy.iter().any(|o| o != s && o.contains(s)));
    out
}

/// Checks a policy: ports with `start <= end` and not 0, hostnames that are not empty.
pub fn validate(policy: &NetworkPolicy) -> Result<(), ConfineError> {
    let NetworkPolicy::AllowList(dests) = policy else {
        return Ok(());
    };
    for d in dests {
        for p in &d.ports {
            if p.start == 0 || p.start > p.end {
                return Err(ConfineError::Network(format!(
                    "destination {}: port range {}-{} is invalid (1 to 65535, start <= end)",
                    d.cidr, p.start, p.end
                )));
            }
        }
        if d.host.as_deref().is_some_and(|h| h.trim().is_empty()) {
            return Err(ConfineError::Network(format!(
                "destination {}: `host` is empty",
                d.cidr
            )));
        }
    }
    Ok(())
}

/// Parses a policy file's text; `origin` names it in errors.
///
/// ```
/// let p = skillgate_confine::network::parse_policy("mode = \"none\"", "inline").unwrap();
/// assert!(p.is_none());
/// let err = skillgate_confine::network::parse_policy("mode = \"everything\"", "x.toml").unwrap_err();
/// assert!(err.to_string().contains("x.toml"));
/// ```
pub fn parse_policy(text: &str, origin: &str) -> Result<NetworkPolicy, ConfineError> {
    let policy: NetworkPolicy = toml::from_str(text).map_err(|e| ConfineError::Parse {
        origin: origin.into(),
        message: e.to_string().trim_end().into(),
    })?;
    validate(&policy)?;
    Ok(policy)
}

/// Reads and parses a policy file.
pub fn load_policy(path: &Path) -> Result<NetworkPolicy, ConfineError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfineError::Read {
        path: path.into(),
        source,
    })?;
    parse_policy(&text, &path.display().to_string())
}

fn ports_cover(allowed: &[PortRange], wanted: &[PortRange]) -> bool {
    if allowed.is_empty() {
        return true;
    }
    if wanted.is_empty() {
        return false;
    }
    wanted.iter().all(|w| {
        // Every port of `w` must be in some allowed range; ranges may be adjacent.
        let mut next = u32::from(w.start);
        while next <= u32::from(w.end) {
            match allowed
                .iter()
                .find(|a| u32::from(a.start) <= next && next <= u32::from(a.end))
            {
                Some(a) => next = u32::from(a.end) + 1,
                None => return false,
            }
        }
        true
    })
}

fn destination_covers(allowed: &NetworkDestination, wanted: &NetworkDestination) -> bool {
    if !allowed.cidr.contains(&wanted.cidr) {
        return false;
    }
    if wanted.host.is_some() && wanted.host != allowed.host {
        return false;
    }
    // A range cut out of the allowed destination must be cut out of the wanted one too,
    // or not touched by it.
    let wanted_cut = excepted(&wanted.cidr);
    let ok = excepted(&allowed.cidr)
        .iter()
        .all(|s| !(s.contains(&wanted.cidr) || wanted.cidr.contains(s)) || wanted_cut.contains(s));
    ok && ports_cover(&allowed.ports, &wanted.ports)
}

/// The destinations of `wanted` that `allowed` does not cover (empty: it is covered).
/// `None` covers nothing but itself; a destination is covered when one allowed
/// destination contains its network, ports and hostname, and it reaches no sensitive
/// range that the allowed one cuts out.
///
/// ```
/// use skillgate_confine::network::{parse_policy, uncovered};
/// let allowed = parse_policy("mode = \"allow_list\"\n[[allow]]\ncidr = \"0.0.0.0/0\"\nports = [{ start = 443, end = 443 }]", "cfg").unwrap();
/// let wants = |c: &str| parse_policy(&format!("mode = \"allow_list\"\n[[allow]]\ncidr = \"{c}\"\nports = [{{ start = 443, end = 443 }}]"), "skill").unwrap();
/// assert!(uncovered(&allowed, &wants("203.0.113.5/32")).is_empty());
/// assert_eq!(uncovered(&allowed, &wants("169.254.169.254/32")).len(), 1); // metadata: never implied
/// ```
pub fn uncovered<'a>(
    allowed: &NetworkPolicy,
    wanted: &'a NetworkPolicy,
) -> Vec<&'a NetworkDestination> {
    match (allowed, wanted) {
        (_, NetworkPolicy::None) => Vec::new(),
        (NetworkPolicy::None, NetworkPolicy::AllowList(w)) => w.iter().collect(),
        (NetworkPolicy::AllowList(a), NetworkPolicy::AllowList(w)) => w
            .iter()
            .filter(|d| !a.iter().any(|ad| destination_covers(ad, d)))
            .collect(),
    }
}

/// Options of the Kubernetes emitter.
#[derive(Debug, Clone, Default)]
pub struct K8sOptions {
    /// `metadata.name` (default `skillgate-egress`).
    pub name: Option<String>,
    /// `metadata.namespace`, if any.
    pub namespace: Option<String>,
    /// Labels of the pods it applies to; empty selects every pod of the namespace.
    pub pod_labels: BTreeMap<String, String>,
}

/// The Kubernetes `NetworkPolicy` enforcing `policy` on egress: default-deny (`Egress` in
/// `policyTypes`), plus one rule per destination, its sensitive ranges listed in
/// `except`, its ports for TCP and UDP. Hostnames cannot be expressed (a NetworkPolicy
/// matches IP blocks): a destination with a `host` is refused. Note that default-deny
/// egress also blocks DNS unless a destination allows the resolver.
///
/// ```
/// use skillgate_confine::network::{k8s_network_policy, K8sOptions};
/// let np = k8s_network_policy(&skillgate_core::NetworkPolicy::None, &K8sOptions::default()).unwrap();
/// let spec = np.spec.unwrap();
/// assert_eq!(spec.policy_types.unwrap(), vec!["Egress".to_string()]);
/// assert!(spec.egress.unwrap().is_empty()); // deny all egress
/// ```
pub fn k8s_network_policy(
    policy: &NetworkPolicy,
    options: &K8sOptions,
) -> Result<K8sNetworkPolicy, ConfineError> {
    validate(policy)?;
    let mut egress = Vec::new();
    if let NetworkPolicy::AllowList(dests) = policy {
        for d in dests {
            if let Some(host) = &d.host {
                return Err(ConfineError::Network(format!(
                    "destination {} names host `{host}`: a Kubernetes NetworkPolicy matches IP blocks only, so it cannot be emitted (remove `host` or use a platform that resolves names)",
                    d.cidr
                )));
            }
            let except: Vec<String> = excepted(&d.cidr).iter().map(IpNet::to_string).collect();
            let peer = NetworkPolicyPeer {
                ip_block: Some(IPBlock {
                    cidr: d.cidr.to_string(),
                    except: (!except.is_empty()).then_some(except),
                }),
                ..Default::default()
            };
            let ports = (!d.ports.is_empty()).then(|| {
                ["TCP", "UDP"]
                    .iter()
                    .flat_map(|proto| {
                        d.ports.iter().map(move |p| NetworkPolicyPort {
                            protocol: Some((*proto).into()),
                            port: Some(IntOrString::Int(i32::from(p.start))),
                            end_port: (p.end > p.start).then_some(i32::from(p.end)),
                        })
                    })
                    .collect()
            });
            egress.push(NetworkPolicyEgressRule {
                to: Some(vec![peer]),
                ports,
            });
        }
    }
    Ok(K8sNetworkPolicy {
        metadata: ObjectMeta {
            name: Some(
                options
                    .name
                    .clone()
                    .unwrap_or_else(|| "skillgate-egress".into()),
            ),
            namespace: options.namespace.clone(),
            ..Default::default()
        },
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(LabelSelector {
                match_labels: (!options.pod_labels.is_empty()).then(|| options.pod_labels.clone()),
                ..Default::default()
            }),
            policy_types: Some(vec!["Egress".into()]),
            egress: Some(egress),
            ingress: None,
        }),
    })
}

/// The policy as a Kubernetes `NetworkPolicy` YAML document (with `apiVersion` and
/// `kind`).
pub fn k8s_yaml(policy: &NetworkPolicy, options: &K8sOptions) -> Result<String, ConfineError> {
    let np = k8s_network_policy(policy, options)?;
    // k8s-openapi's Serialize writes apiVersion and kind itself.
    serde_saphyr::to_string(&np).map_err(|e| ConfineError::Emit {
        what: "Kubernetes NetworkPolicy YAML",
        message: e.to_string(),
    })
}
