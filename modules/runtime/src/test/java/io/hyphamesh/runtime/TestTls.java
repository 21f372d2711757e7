package io.hyphamesh.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed server certificate for {@code localhost} and {@code 127.0.0.1}, made by the JDK's
 * {@code keytool}: as a PKCS#12 key store, as PEM files, and as a client {@link SSLContext} that
 * trusts it (and nothing else).
 *
 * @param keyStore     the PKCS#12 key store (password {@link #PASSWORD})
 * @param certPem      the certificate, PEM
 * @param keyPem       its private key, PKCS#8 PEM
 * @param trusting     a client context trusting this certificate alone
 */
public record TestTls(Path keyStore, Path certPem, Path keyPem, SSLContext trusting) {
    public static final String PASSWORD = "changeit";

    /** Makes the certificate's files in {@code dir}. */
    public static TestTls create(Path dir) throws IOException, InterruptedException, GeneralSecurityException {
        Path p12 = dir.resolve("server.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2", "-storetype", "PKCS12",
                "-keystore", p12.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD)
                .redirectErrorStream(true).start();
        String out = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + out);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(p12)) {
            ks.load(in, PASSWORD.toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext trusting = SSLContext.getInstance("TLS");
        trusting.init(null, tmf.getTrustManagers(), null);
        // PEM: the chain and the PKCS#8 key, as openssl or a certificate authority writes them
        Path certPem = Files.writeString(dir.resolve("cert.pem"), pem("CERTIFICATE", ks.getCertificate("server").getEncoded()));
        PrivateKey key = (PrivateKey) ks.getKey("server", PASSWORD.toCharArray());
        Path keyPem = Files.writeString(dir.resolve("key.pem"), pem("PRIVATE KEY", key.getEncoded()));
        return new TestTls(p12, certPem, keyPem, trusting);
    }

    /** Server settings that serve TLS from the key store. */
    public Map<String, String> keyStoreSettings() {
        return Map.of("tls.keystore-file", keyStore.toString(), "tls.keystore-password", PASSWORD);
    }

    /** Server settings that serve TLS from the PEM files. */
    public Map<String, String> pemSettings() {
        return Map.of("tls.cert-file", certPem.toString(), "tls.key-file", keyPem.toString());
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
