//! Network policies: the file format, the default-deny ranges, and the Kubernetes
//! NetworkPolicy checked against the k8s-openapi types. Nothing is resolved or contacted.
use k8s_openapi::api::networking::v1::NetworkPolicy as K8sNetworkPolicy;
use skillgate_confine::network::{
    K8sOptions, k8s_network_policy, k8s_yaml, parse_policy, uncovered,
};
use skillgate_core::NetworkPolicy;

fn allow(cidr: &str, ports: &str) -> NetworkPolicy {
    parse_policy(
        &format!("mode = \"allow_list\"\n[[allow]]\ncidr = \"{cidr}\"\nports = [{ports}]\n"),
        "test",
    )
    .unwrap()
}

#[test]
fn the_default_is_none_and_emits_deny_all_egress() {
    let p = parse_policy("", "empty").unwrap_or(NetworkPolicy::None);
    assert!(p.is_none());
    let yaml = k8s_yaml(&NetworkPolicy::None, &K8sOptions::default()).unwrap();
    let np: K8sNetworkPolicy = serde_saphyr::from_str(&yaml).unwrap();
    let spec = np.spec.unwrap();
    assert_eq!(spec.policy_types.unwrap(), vec!["Egress"]);
    assert!(spec.egress.unwrap().is_empty());
    assert!(
        yaml.contains("apiVersion: networking.k8s.io/v1") && yaml.contains("kind: NetworkPolicy"),
        "{yaml}"
    );
}

#[test]
fn broad_destinations_except_metadata_loopback_and_private_ranges() {
    let p = parse_policy(
        "mode = \"allow_list\"\n[[allow]]\ncidr = \"0.0.0.0/0\"\nports = [{ start = 443, end = 443 }]\n[[allow]]\ncidr = \"::/0\"\nports = [{ start = 8000, end = 8080 }]\n",
        "policy.toml",
    )
    .unwrap();
    let options = K8sOptions {
        name: Some("skill-egress".into()),
        namespace: Some("skills".into()),
        pod_labels: [("app".to_string(), "skillgate".to_string())].into(),
    };
    let yaml = k8s_yaml(&p, &options).unwrap();
    let np: K8sNetworkPolicy = serde_saphyr::from_str(&yaml).unwrap();
    assert_eq!(
        np,
        k8s_network_policy(&p, &options).unwrap(),
        "YAML round-trips through the k8s-openapi type"
    );
    assert_eq!(np.metadata.namespace.as_deref(), Some("skills"));
    let spec = np.spec.unwrap();
    assert_eq!(
        spec.pod_selector.unwrap().match_labels.unwrap()["app"],
        "skillgate"
    );
    let egress = spec.egress.unwrap();
    assert_eq!(egress.len(), 2);
    let v4 = egress[0].to.as_ref().unwrap()[0].ip_block.as_ref().unwrap();
    let except = v4.except.as_ref().unwrap();
    for s in [
        "169.254.0.0/16",
        "127.0.0.0/8",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "100.64.0.0/10",
    ] {
        assert!(
            except.contains(&s.to_string()),
            "{s} missing from {except:?}"
        );
    }
    assert!(
        except.iter().all(|e| !e.contains(':')),
        "only IPv4 excepts in an IPv4 block: {except:?}"
    );
    let v6 = egress[1].to.as_ref().unwrap()[0].ip_block.as_ref().unwrap();
    let except6 = v6.except.as_ref().unwrap();
    for s in ["fc00::/7", "fe80::/10", "::1/128", "::ffff:0.0.0.0/96"] {
        assert!(
            except6.contains(&s.to_string()),
            "{s} missing from {except6:?}"
        );
    }
    let ports = egress[1].ports.as_ref().unwrap();
    assert_eq!(ports.len(), 2, "TCP and UDP");
    assert_eq!(ports[0].end_port, Some(8080));
}

#[test]
fn an_explicitly_listed_private_destination_keeps_it() {
    let p = allow("10.20.0.0/16", "{ start = 5432, end = 5432 }");
    let np = k8s_network_policy(&p, &K8sOptions::default()).unwrap();
    let block = np.spec.unwrap().egress.unwrap()[0].to.as_ref().unwrap()[0]
        .ip_block
        .clone()
        .unwrap();
    assert_eq!(block.cidr, "10.20.0.0/16");
    assert_eq!(block.except, None);
}

#[test]
fn hostnames_and_bad_ports_are_refused_with_reasons() {
    let p = parse_policy("mode = \"allow_list\"\n[[allow]]\ncidr = \"198.51.100.7/32\"\nhost = \"api.example.com\"\n", "t").unwrap();
    let err = k8s_network_policy(&p, &K8sOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("api.example.com") && err.contains("IP blocks"),
        "{err}"
    );
    let err = parse_policy("mode = \"allow_list\"\n[[allow]]\ncidr = \"198.51.100.7/32\"\nports = [{ start = 90, end = 80 }]\n", "t").unwrap_err().to_string();
    assert!(err.contains("90-80"), "{err}");
    let err = parse_policy(
        "mode = \"allow_list\"\n[[allow]]\ncidr = \"not-an-ip\"\n",
        "p.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("p.toml"), "{err}");
}

#[test]
fn coverage_respects_cidrs_ports_and_the_sensitive_ranges() {
    let ceiling = allow("0.0.0.0/0", "{ start = 443, end = 443 }");
    assert!(
        uncovered(
            &ceiling,
            &allow("203.0.113.0/24", "{ start = 443, end = 443 }")
        )
        .is_empty()
    );
    assert_eq!(
        uncovered(
            &ceiling,
            &allow("203.0.113.0/24", "{ start = 80, end = 80 }")
        )
        .len(),
        1,
        "port"
    );
    assert_eq!(
        uncovered(&ceiling, &allow("203.0.113.0/24", "")).len(),
        1,
        "every port is more than 443"
    );
    assert_eq!(
        uncovered(
            &ceiling,
            &allow("169.254.169.254/32", "{ start = 443, end = 443 }")
        )
        .len(),
        1,
        "metadata"
    );
    assert_eq!(
        uncovered(
            &ceiling,
            &allow("127.0.0.1/32", "{ start = 443, end = 443 }")
        )
        .len(),
        1,
        "loopback"
    );
    assert_eq!(
        uncovered(
            &ceiling,
            &allow("192.168.1.0/24", "{ start = 443, end = 443 }")
        )
        .len(),
        1,
        "private"
    );
    // A broader request is fine: its own sensitive ranges are cut out the same way.
    assert!(uncovered(&ceiling, &allow("0.0.0.0/0", "{ start = 443, end = 443 }")).is_empty());
    assert_eq!(
        uncovered(&NetworkPolicy::None, &allow("203.0.113.1/32", "")).len(),
        1
    );
    assert!(uncovered(&NetworkPolicy::None, &NetworkPolicy::None).is_empty());
    let private = allow("10.0.0.0/8", "{ start = 1, end = 65535 }");
    assert!(
        uncovered(
            &private,
            &allow("10.1.2.3/32", "{ start = 5432, end = 5432 }")
        )
        .is_empty(),
        "listed explicitly"
    );
}
