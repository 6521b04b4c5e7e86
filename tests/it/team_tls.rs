//! Team mode over TLS, against a real PostgreSQL that speaks it: a cluster of the test's own
//! (`Cluster::private_with_tls`) with a certificate from a CA made here, `pg_hba.conf` rules
//! that refuse the test roles any connection without TLS, and a role that logs in only with a
//! client certificate (`cert` authentication). Whatever the suite's backend.

use crate::support::postgres::{Cluster, ServerTls};
use crate::support::project::TestProject;
use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose,
    SanType,
};
use std::path::{Path, PathBuf};

/// A certificate authority made for one test.
struct Ca {
    cert: Certificate,
    key: KeyPair,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// A certificate for `common_name` (a host, or a role for `cert` authentication) with
    /// `ips` and `dns` names, and its key, in PEM.
    fn issue(&self, common_name: &str, ips: &[&str], dns: &[&str]) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(dns.iter().map(|d| d.to_string()).collect::<Vec<_>>()).unwrap();
        for ip in ips {
            params
                .subject_alt_names
                .push(SanType::IpAddress(ip.parse().unwrap()));
        }
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

fn write_private(path: &Path, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.to_path_buf()
}

/// The roles of these tests may log in only over TLS; `gza_cert` only with a client
/// certificate the cluster's CA signed for it.
const HBA: &str = "hostnossl all gza_tls 127.0.0.1/32 reject\n\
                   hostssl all gza_tls 127.0.0.1/32 trust\n\
                   hostnossl all gza_cert 127.0.0.1/32 reject\n\
                   hostssl all gza_cert 127.0.0.1/32 cert\n";

/// A server certificate for 127.0.0.1 from a CA: `sslmode=verify-full` with that CA as
/// `sslrootcert` connects (the server refuses the role without TLS, so the commands that
/// worked went over it), and so does a role that logs in only with its client certificate.
/// Refused, each in one line that says what to do, with nothing stored: no TLS at all, a CA
/// that did not sign the server's certificate, the system's roots alone, and the certificate
/// role without a certificate, with another user's, and with one from a CA the server does
/// not trust. (Every refusal before said to give a password, or to check that the server runs.)
#[test]
fn tls_is_verified_against_the_given_ca_and_client_certificates_log_in() {
    let ca = Ca::new("gza test CA");
    let (cert_pem, key_pem) = ca.issue("127.0.0.1", &["127.0.0.1"], &["localhost"]);
    let cluster = Cluster::private_with_tls(&ServerTls {
        cert_pem,
        key_pem,
        ca_pem: ca.cert.pem(),
        hba_rules: HBA.into(),
    });
    cluster
        .admin()
        .batch_execute("CREATE ROLE gza_tls LOGIN; CREATE ROLE gza_cert LOGIN")
        .unwrap();
    let db = cluster.new_database_owned_by("gza_tls");
    cluster
        .admin()
        .batch_execute("GRANT gza_tls TO gza_cert")
        .unwrap();
    let mut p = TestProject::empty_sqlite();
    let dir = p.scratch().to_path_buf();
    let root = write_private(&dir.join("root.crt"), &ca.cert.pem());
    let other_root = write_private(&dir.join("other.crt"), &Ca::new("another CA").cert.pem());
    let url = |user: &str, query: &str| {
        format!("postgres://{user}@127.0.0.1:{}/{db}?{query}", cluster.port)
    };

    p.set_env(
        "GZA_DATABASE_URL",
        &url(
            "gza_tls",
            &format!("sslmode=verify-full&sslrootcert={}", root.display()),
        ),
    );
    p.ok(&["init"]);
    assert_eq!(p.add(&["carried over TLS"]), 1);
    let status = p.ok(&["db", "status"]);
    assert!(
        status.contains("tls             TLSv1.3 (") && status.contains("as the server sees"),
        "{status}"
    );

    let refused = |p: &mut TestProject, url: String, says: &[&str]| {
        p.unset_env("GZA_DATABASE_URL");
        p.set_env("GZA_DATABASE_URL", &url);
        let err = p.user_error(&["add", "never stored"]);
        assert_eq!(err.lines().count(), 1, "{err}");
        for word in says {
            assert!(err.contains(word), "{url}: expected {word:?} in: {err}");
        }
    };
    // No TLS: the server's rule refuses the role.
    refused(
        &mut p,
        url("gza_tls", "sslmode=disable"),
        &["without TLS", "sslmode=verify-full"],
    );
    // A CA that did not sign the server's certificate.
    refused(
        &mut p,
        url(
            "gza_tls",
            &format!("sslmode=verify-full&sslrootcert={}", other_root.display()),
        ),
        &[
            "certificate is not signed by the CA in sslrootcert",
            "give the CA that signed it as sslrootcert=FILE",
        ],
    );
    // The system's roots do not know the test CA: `require` verifies as the others do, and
    // so does the default (`prefer`) once the server offers TLS.
    for mode in ["sslmode=require", "sslmode=prefer", "connect_timeout=10"] {
        refused(
            &mut p,
            url("gza_tls", mode),
            &["not signed by the system's CAs", "sslrootcert=FILE"],
        );
    }

    // The role that logs in with a certificate: refused without one, let in with it.
    refused(
        &mut p,
        url(
            "gza_cert",
            &format!("sslmode=verify-full&sslrootcert={}", root.display()),
        ),
        &["only with a client certificate", "sslcert=FILE&sslkey=FILE"],
    );
    let with_identity = |cert: &Path, key: &Path| {
        url(
            "gza_cert",
            &format!(
                "sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
                root.display(),
                cert.display(),
                key.display()
            ),
        )
    };
    // A certificate for another user, and one a CA the server does not trust signed.
    let (someone, someones_key) = ca.issue("someone_else", &[], &[]);
    let someone = write_private(&dir.join("someone.crt"), &someone);
    let someones_key = write_private(&dir.join("someone.key"), &someones_key);
    refused(
        &mut p,
        with_identity(&someone, &someones_key),
        &["is not this user's", "common name must be gza_cert"],
    );
    let (stranger, strangers_key) = Ca::new("a stranger's CA").issue("gza_cert", &[], &[]);
    let stranger = write_private(&dir.join("stranger.crt"), &stranger);
    let strangers_key = write_private(&dir.join("stranger.key"), &strangers_key);
    refused(
        &mut p,
        with_identity(&stranger, &strangers_key),
        &["refused the client certificate", "CA the server trusts"],
    );
    let (client_cert, client_key) = ca.issue("gza_cert", &[], &[]);
    let cert = write_private(&dir.join("client.crt"), &client_cert);
    let key = write_private(&dir.join("client.key"), &client_key);
    p.unset_env("GZA_DATABASE_URL");
    p.set_env("GZA_DATABASE_URL", &with_identity(&cert, &key));
    let history = p.ok(&["history"]);
    assert!(!history.contains("never stored"), "{history}");
    let shown = p.ok(&["show", "1"]);
    assert!(shown.contains("carried over TLS"), "{shown}");
}
