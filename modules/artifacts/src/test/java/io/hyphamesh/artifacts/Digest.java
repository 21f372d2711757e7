package io.hyphamesh.artifacts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/** A streamed MD5 and byte count: compares big bodies without holding them. */
record Digest(String md5, long count) {

    static Digest of(InputStream in) {
        MessageDigest md = newMd5();
        byte[] buf = new byte[256 * 1024];
        long n = 0;
        try {
            for (int r; (r = in.read(buf)) >= 0; ) {
                md.update(buf, 0, r);
                n += r;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Digest(HexFormat.of().formatHex(md.digest()), n);
    }

    static Digest of(byte[] bytes) {
        return new Digest(HexFormat.of().formatHex(newMd5().digest(bytes)), bytes.length);
    }

    /** The S3 multipart ETag of parts with these hex MD5s: md5 of the binary md5s, '-', the count. */
    static String multipartEtag(List<String> partMd5s) {
        MessageDigest md = newMd5();
        for (String p : partMd5s) {
            md.update(HexFormat.of().parseHex(p));
        }
        return HexFormat.of().formatHex(md.digest()) + "-" + partMd5s.size();
    }

    static MessageDigest newMd5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
