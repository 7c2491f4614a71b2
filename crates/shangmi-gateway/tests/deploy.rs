//! The deployment files name what the gateway accepts: the Kubernetes manifests parse, the
//! ConfigMap's configuration passes `--check` with the Secret's files laid out as the
//! Deployment mounts them, the probes ask the admin listener's /healthz, and the systemd
//! unit and the Dockerfile start the binary on the path they mount.

mod common;

use std::path::Path;

use common::*;
use yaml_rust2::{Yaml, YamlLoader};

fn load(name: &str) -> Vec<Yaml> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/kubernetes")
        .join(name);
    YamlLoader::load_from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn kind<'a>(docs: &'a [Yaml], kind: &str) -> &'a Yaml {
    docs.iter()
        .find(|d| d["kind"].as_str() == Some(kind))
        .unwrap_or_else(|| panic!("no {kind}"))
}

#[test]
fn kubernetes_manifests_lay_out_files_the_configuration_check_accepts() {
    let config_map = load("configmap.yaml");
    let secret = load("secret.yaml");
    let deployment = load("deployment.yaml");
    let toml = kind(&config_map, "ConfigMap")["data"]["gateway.toml"]
        .as_str()
        .unwrap()
        .to_string();
    let secret = kind(&secret, "Secret");
    let files: Vec<String> = secret["stringData"]
        .as_hash()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();

    let dep = kind(&deployment, "Deployment");
    let spec = &dep["spec"]["template"]["spec"];
    let container = &spec["containers"][0];
    let mounts = container["volumeMounts"].as_vec().unwrap();
    let volumes = spec["volumes"].as_vec().unwrap();
    let mount_of = |source: &str, name: &str| -> String {
        let volume = volumes
            .iter()
            .find(|v| {
                v[source]["name"].as_str() == Some(name)
                    || v[source]["secretName"].as_str() == Some(name)
            })
            .unwrap_or_else(|| panic!("no volume from {source} {name}"));
        let vname = volume["name"].as_str().unwrap();
        mounts
            .iter()
            .find(|m| m["name"].as_str() == Some(vname))
            .unwrap()["mountPath"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let config_dir = mount_of("configMap", "shangmi-gateway");
    let tls_dir = mount_of("secret", secret["metadata"]["name"].as_str().unwrap());
    let args: Vec<&str> = container["args"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args, ["--config", &format!("{config_dir}/gateway.toml")]);
    assert!(
        Path::new(&tls_dir).starts_with(Path::new(&config_dir).parent().unwrap()),
        "the configuration names ../tls: both mounts share a parent"
    );

    // The same layout in a temporary directory, with real certificates under the Secret's names.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (config, tls) = (root.join("config"), root.join("tls"));
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(&tls).unwrap();
    pki(&tls);
    for (ours, theirs) in [
        ("ss", "tlcp-sign"),
        ("se", "tlcp-enc"),
        ("sm2", "sm2"),
        ("ecdsa", "ecdsa"),
    ] {
        for ext in ["pem", "key"] {
            std::fs::rename(
                tls.join(format!("{ours}.{ext}")),
                tls.join(format!("{theirs}.{ext}")),
            )
            .unwrap();
        }
    }
    let key = gateway_command().arg("--new-ticket-key").output().unwrap();
    std::fs::write(tls.join("tickets.key"), &key.stdout).unwrap();
    std::fs::write(tls.join("admin.token"), &key.stdout).unwrap();
    for f in &files {
        assert!(
            tls.join(f).exists(),
            "the Secret names {f}, the test made no such file"
        );
    }
    std::fs::write(config.join("gateway.toml"), &toml).unwrap();
    let o = gateway_command()
        .arg("--config")
        .arg(config.join("gateway.toml"))
        .arg("--check")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Every file the configuration reads is in the Secret.
    for f in toml.split('"').filter(|s| s.starts_with("../tls/")) {
        let name = &f["../tls/".len()..];
        assert!(
            files.iter().any(|k| k == name),
            "{name} is not in the Secret"
        );
    }

    // The probes ask /healthz on the admin listener's port.
    let admin_port = toml
        .lines()
        .skip_while(|l| l.trim() != "[admin]")
        .find_map(|l| l.trim().strip_prefix("listen = "))
        .and_then(|v| v.trim_matches('"').rsplit(':').next()?.parse::<i64>().ok())
        .unwrap();
    let ports = container["ports"].as_vec().unwrap();
    let admin = ports
        .iter()
        .find(|p| p["name"].as_str() == Some("admin"))
        .unwrap();
    assert_eq!(admin["containerPort"].as_i64(), Some(admin_port));
    for probe in ["readinessProbe", "livenessProbe"] {
        assert_eq!(
            container[probe]["httpGet"]["path"].as_str(),
            Some("/healthz")
        );
        assert_eq!(container[probe]["httpGet"]["port"].as_str(), Some("admin"));
    }
    let service = kind(&deployment, "Service");
    assert_eq!(
        service["spec"]["selector"]["app"],
        dep["spec"]["template"]["metadata"]["labels"]["app"]
    );
    // The admin port is no Service port.
    for p in service["spec"]["ports"].as_vec().unwrap() {
        assert_ne!(p["targetPort"].as_str(), Some("admin"));
    }

    // Hardened as the anchors' manifests are.
    assert_eq!(spec["automountServiceAccountToken"].as_bool(), Some(false));
    assert_eq!(
        spec["securityContext"]["seccompProfile"]["type"].as_str(),
        Some("RuntimeDefault")
    );
    let sc = &container["securityContext"];
    assert_eq!(sc["allowPrivilegeEscalation"].as_bool(), Some(false));
    assert_eq!(sc["readOnlyRootFilesystem"].as_bool(), Some(true));
    assert_eq!(sc["runAsNonRoot"].as_bool(), Some(true));
    assert_eq!(sc["capabilities"]["drop"][0].as_str(), Some("ALL"));
    assert!(
        container["resources"]["limits"]["memory"]
            .as_str()
            .is_some()
    );
    let tls_volume = volumes
        .iter()
        .find(|v| v["secret"]["secretName"].as_str().is_some())
        .unwrap();
    // 0400 (YAML 1.1, which Kubernetes reads: octal), however this parser reads it.
    let mode = tls_volume["secret"]["defaultMode"].as_i64();
    assert!(matches!(mode, Some(0o400 | 400)), "{mode:?}");
    let pre_stop = container["lifecycle"]["preStop"]["sleep"]["seconds"]
        .as_i64()
        .unwrap();
    let grace = spec["terminationGracePeriodSeconds"].as_i64().unwrap();
    assert!(
        grace > pre_stop + 30,
        "drain_timeout (30 s) must fit after the preStop pause"
    );
    // The admin listener off loopback has a token, and a policy keeps others off its port.
    assert!(
        toml.contains("token_file = \"../tls/admin.token\""),
        "{toml}"
    );
    let policy = load("networkpolicy.yaml");
    let policy = kind(&policy, "NetworkPolicy");
    let rules = policy["spec"]["ingress"].as_vec().unwrap();
    let admin_rule = rules
        .iter()
        .find(|r| r["ports"][0]["port"].as_i64() == Some(admin_port))
        .expect("a rule for the admin port");
    assert!(
        !admin_rule["from"].is_badvalue(),
        "the admin port is open to all"
    );
    assert!(
        rules
            .iter()
            .filter(|r| r["from"].is_badvalue())
            .all(|r| r["ports"][0]["port"].as_i64() != Some(admin_port))
    );
}

#[test]
fn the_systemd_unit_and_dockerfile_start_the_binary_on_the_mounted_configuration() {
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let unit = std::fs::read_to_string(deploy.join("shangmi-gateway.service")).unwrap();
    let config = "--config /etc/shangmi-gateway/config/gateway.toml";
    for want in [
        format!("ExecStartPre=/usr/local/bin/shangmi-gateway {config} --check"),
        format!("ExecStart=/usr/local/bin/shangmi-gateway {config}"),
        "ExecReload=/bin/kill -HUP $MAINPID".to_string(),
        "KillSignal=SIGTERM".to_string(),
    ] {
        assert!(unit.lines().any(|l| l == want), "the unit lacks {want}");
    }
    // Keys as credentials, and the sandbox.
    for key in [
        "tlcp-sign.key",
        "tlcp-enc.key",
        "sm2.key",
        "ecdsa.key",
        "tickets.key",
        "admin.token",
    ] {
        let want = format!("LoadCredential={key}:/etc/shangmi-gateway/tls/{key}");
        assert!(unit.lines().any(|l| l == want), "the unit lacks {want}");
    }
    for want in [
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "PrivateDevices=yes",
        "ProtectKernelModules=yes",
        "RestrictNamespaces=yes",
        "MemoryDenyWriteExecute=yes",
        "SystemCallFilter=@system-service",
        "SystemCallArchitectures=native",
        "CapabilityBoundingSet=CAP_NET_BIND_SERVICE",
        "UMask=0077",
    ] {
        assert!(unit.lines().any(|l| l == want), "the unit lacks {want}");
    }
    let docker = std::fs::read_to_string(deploy.join("Dockerfile")).unwrap();
    assert!(docker.contains("cargo build --release --locked -p shangmi-gateway"));
    assert!(docker.contains(r#"CMD ["--config", "/etc/shangmi-gateway/config/gateway.toml"]"#));
    assert!(
        docker
            .lines()
            .any(|l| l.starts_with("USER ") && !l.contains("root"))
    );
    // BuildKit reads the ignore file beside the Dockerfile: no build output, history or keys
    // in the context.
    let ignore = std::fs::read_to_string(deploy.join("Dockerfile.dockerignore")).unwrap();
    for want in [".git", "target", "**/*.key"] {
        assert!(
            ignore.lines().any(|l| l == want),
            "the context keeps {want}"
        );
    }
}

/// The scripts stop the servers they started, by their pids: never every nginx (or any
/// other process) of the machine by name.
#[test]
fn scripts_stop_only_what_they_started() {
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts");
    for entry in std::fs::read_dir(&scripts).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sh") {
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
                assert!(
                    !line.contains("pkill") && !line.contains("killall"),
                    "{}: {line}",
                    path.display()
                );
            }
        }
    }
}
