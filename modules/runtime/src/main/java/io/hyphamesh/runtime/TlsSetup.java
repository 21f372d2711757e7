package io.hyphamesh.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

import io.helidon.common.tls.Tls;
import io.hyphamesh.runtime.config.HyphaConfig;

/**
 * TLS on the listener, from the configuration: a PEM certificate chain ({@code tls.cert-file}) with
 * its PEM PKCS#8 private key ({@code tls.key-file}), or a PKCS#12 key store
 * ({@code tls.keystore-file}, {@code tls.keystore-password}). With none set the listener is plain
 * HTTP, as before. Everything is read and checked at start: a missing file, a key that is not
 * PKCS#8 or a file without a certificate fail the start naming the setting. Stateless.
 */
final class TlsSetup {
    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----\\s*([A-Za-z0-9+/=\\s]+?)\\s*-----END \\1-----");

    private TlsSetup() {
    }

    /** The listener's TLS, or empty for plain HTTP. */
    static Optional<Tls> of(HyphaConfig config) {
        Optional<String> cert = config.optional("tls.cert-file");
        Optional<String> key = config.optional("tls.key-file");
        Optional<String> store = config.optional("tls.keystore-file");
        if (cert.isEmpty() && key.isEmpty() && store.isEmpty()) {
            return Optional.empty();
        }
        if (store.isPresent() && (cert.isPresent() || key.isPresent())) {
            throw new IllegalArgumentException("set tls.keystore-file, or tls.cert-file with tls.key-file, not both");
        }
        if (store.isEmpty() && (cert.isEmpty() || key.isEmpty())) {
            throw new IllegalArgumentException("tls.cert-file and tls.key-file go together (the PEM chain and its private key)");
        }
        try {
            KeyStore ks;
            char[] password;
            if (store.isPresent()) {
                password = config.string("tls.keystore-password").toCharArray();
                ks = KeyStore.getInstance("PKCS12");
                try (InputStream in = Files.newInputStream(Path.of(store.get()))) {
                    ks.load(in, password);
                }
            } else {
                password = new char[0];
                List<X509Certificate> chain = certificates(Path.of(cert.get()));
                PrivateKey pk = privateKey(Path.of(key.get()), chain.get(0));
                ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                ks.setKeyEntry("server", pk, password, chain.toArray(new Certificate[0]));
            }
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, password);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return Optional.of(Tls.builder().sslContext(ctx).build());
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot set up TLS from "
                    + store.map(s -> "tls.keystore-file " + s).orElse("tls.cert-file " + cert.get() + " and tls.key-file " + key.get())
                    + ": " + e.getMessage(), e);
        }
    }

    private static List<X509Certificate> certificates(Path file) throws IOException, GeneralSecurityException {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        List<X509Certificate> out = new ArrayList<>();
        for (byte[] der : blocks(file, "CERTIFICATE")) {
            out.add((X509Certificate) cf.generateCertificate(new java.io.ByteArrayInputStream(der)));
        }
        if (out.isEmpty()) {
            throw new GeneralSecurityException("no PEM CERTIFICATE block in " + file);
        }
        return out;
    }

    private static PrivateKey privateKey(Path file, X509Certificate leaf) throws IOException, GeneralSecurityException {
        List<byte[]> keys = blocks(file, "PRIVATE KEY");
        if (keys.size() != 1) {
            throw new GeneralSecurityException(file + " must hold one PEM 'PRIVATE KEY' (PKCS#8) block; convert others with"
                    + " 'openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem'");
        }
        String alg = leaf.getPublicKey().getAlgorithm();
        return KeyFactory.getInstance(alg.equals("EC") ? "EC" : alg).generatePrivate(new PKCS8EncodedKeySpec(keys.get(0)));
    }

    private static List<byte[]> blocks(Path file, String type) throws IOException {
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        List<byte[]> out = new ArrayList<>();
        Matcher m = PEM.matcher(text);
        while (m.find()) {
            if (m.group(1).equals(type)) {
                out.add(Base64.getMimeDecoder().decode(m.group(2)));
            }
        }
        return out;
    }
}
