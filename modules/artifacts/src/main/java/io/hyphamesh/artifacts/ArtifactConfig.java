package io.hyphamesh.artifacts;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The configuration of an {@link ArtifactStore}: which blob provider, where, and the limits of
 * both planes. Built with {@link #builder()}; every key of the table in the module README can be
 * set in code through a typed setter or by name through {@link Builder#set(String, String)} (the
 * runtime maps environment variables onto those names). Immutable; safe to share between threads.
 */
public final class ArtifactConfig {
    /** The blob providers, chosen by configuration only. */
    public enum Provider {
        /** jclouds {@code filesystem} under {@code <data-dir>/blobs}; the embedded default. */
        FILESYSTEM("filesystem"),
        /** Any S3-compatible endpoint (Ceph RGW, MinIO, AWS, R2) through the jclouds {@code s3} API. */
        S3("s3"),
        /** jclouds {@code transient}: in memory, gone with the process. For tests. */
        TRANSIENT("transient");

        private final String key;

        Provider(String key) {
            this.key = key;
        }

        /** The configuration value naming the provider. */
        public String key() {
            return key;
        }

        /** The provider with this configuration value. */
        public static Provider of(String key) {
            for (Provider p : values()) {
                if (p.key.equalsIgnoreCase(key.trim())) {
                    return p;
                }
            }
            throw new IllegalArgumentException("provider must be filesystem, s3 or transient, got '" + key + "'");
        }
    }

    public static final String PROVIDER = "provider";
    public static final String DATA_DIR = "data-dir";
    public static final String PUBLIC_BASE_URL = "public-base-url";
    public static final String UPLOAD_LIFETIME = "upload-lifetime";
    public static final String PRESIGN_TTL = "presign-ttl";
    public static final String MAX_OBJECT_SIZE = "max-object-size";
    public static final String MAX_PART_COUNT = "max-part-count";
    public static final String MIN_PART_SIZE = "min-part-size";
    public static final String MAX_PART_SIZE = "max-part-size";
    public static final String LIST_LIMIT = "list-limit";
    public static final String SIGNING_SECRET = "signing-secret";
    public static final String S3_ENDPOINT = "s3.endpoint";
    public static final String S3_REGION = "s3.region";
    public static final String S3_BUCKET = "s3.bucket";
    public static final String S3_ACCESS_KEY = "s3.access-key";
    public static final String S3_SECRET_KEY = "s3.secret-key";
    public static final String S3_PATH_STYLE = "s3.path-style";
    public static final String S3_CREATE_BUCKET = "s3.create-bucket";

    static final long MIB = 1024L * 1024L;
    /** S3's own bounds; SigV4 presigned URLs live at most seven days. */
    static final Duration MAX_PRESIGN = Duration.ofDays(7);

    private final Provider provider;
    private final Path dataDir;
    private final Path blobDir;
    private final URI publicBaseUrl;
    private final Duration uploadLifetime;
    private final Duration presignTtl;
    private final long maxObjectSize;
    private final int maxPartCount;
    private final long minPartSize;
    private final long maxPartSize;
    private final int listLimit;
    private final byte[] signingSecret;
    private final boolean signingSecretGiven;
    private final Optional<URI> s3Endpoint;
    private final String s3Region;
    private final String s3Bucket;
    private final String s3AccessKey;
    private final String s3SecretKey;
    private final boolean s3PathStyle;
    private final boolean s3CreateBucket;
    private final Clock clock;
    private final java.time.Duration wiringDelay;

    private ArtifactConfig(Builder b) {
        this.provider = b.provider;
        this.dataDir = b.dataDir;
        this.blobDir = b.blobDir != null ? b.blobDir : b.dataDir.resolve("blobs");
        this.publicBaseUrl = b.publicBaseUrl;
        this.uploadLifetime = b.uploadLifetime;
        this.presignTtl = b.presignTtl;
        this.maxObjectSize = b.maxObjectSize;
        this.maxPartCount = b.maxPartCount;
        this.minPartSize = b.minPartSize;
        this.maxPartSize = b.maxPartSize;
        this.listLimit = b.listLimit;
        this.signingSecretGiven = b.signingSecret != null;
        this.signingSecret = b.signingSecret != null ? b.signingSecret.clone() : randomSecret();
        this.s3Endpoint = Optional.ofNullable(b.s3Endpoint);
        this.s3Region = b.s3Region;
        this.s3Bucket = b.s3Bucket;
        this.s3AccessKey = b.s3AccessKey;
        this.s3SecretKey = b.s3SecretKey;
        this.s3PathStyle = b.s3PathStyle;
        this.s3CreateBucket = b.s3CreateBucket;
        this.clock = b.clock;
        this.wiringDelay = b.wiringDelay;
    }

    /** A builder holding the defaults of the README table. */
    public static Builder builder() {
        return new Builder();
    }

    /** The configuration from {@code key -> value} pairs named as in the README; unknown keys fail. */
    public static ArtifactConfig fromMap(Map<String, String> values) {
        Builder b = builder();
        values.forEach(b::set);
        return b.build();
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.provider = provider;
        b.dataDir = dataDir;
        b.blobDir = blobDir.equals(dataDir.resolve("blobs")) ? null : blobDir;
        b.publicBaseUrl = publicBaseUrl;
        b.uploadLifetime = uploadLifetime;
        b.presignTtl = presignTtl;
        b.maxObjectSize = maxObjectSize;
        b.maxPartCount = maxPartCount;
        b.minPartSize = minPartSize;
        b.maxPartSize = maxPartSize;
        b.listLimit = listLimit;
        b.signingSecret = signingSecretGiven ? signingSecret.clone() : null;
        b.s3Endpoint = s3Endpoint.orElse(null);
        b.s3Region = s3Region;
        b.s3Bucket = s3Bucket;
        b.s3AccessKey = s3AccessKey;
        b.s3SecretKey = s3SecretKey;
        b.s3PathStyle = s3PathStyle;
        b.s3CreateBucket = s3CreateBucket;
        b.clock = clock;
        b.wiringDelay = wiringDelay;
        return b;
    }

    public Provider provider() {
        return provider;
    }

    /** The data directory; the filesystem provider keeps blobs in {@code blobs/}, all providers spool in {@code tmp/}. */
    public Path dataDir() {
        return dataDir;
    }

    /**
     * Where the filesystem provider keeps blobs: {@code <data-dir>/blobs} unless set. Servers of a
     * cluster share one (a shared directory), or a workspace's artifacts stay behind on the server
     * that served it when the workspace moves.
     */
    public Path blobDir() {
        return blobDir;
    }

    /** True when the filesystem provider's blobs are under this server's own data directory (the default). */
    public boolean blobDirIsDefault() {
        return blobDir.toAbsolutePath().normalize().equals(dataDir.resolve("blobs").toAbsolutePath().normalize());
    }

    /** The base URL clients reach this server on; the filesystem provider's part and download URLs start with it. */
    public URI publicBaseUrl() {
        return publicBaseUrl;
    }

    /** How long an open multipart upload lives before the janitor aborts it. */
    public Duration uploadLifetime() {
        return uploadLifetime;
    }

    /** The default lifetime of a presigned download URL. */
    public Duration presignTtl() {
        return presignTtl;
    }

    public long maxObjectSize() {
        return maxObjectSize;
    }

    public int maxPartCount() {
        return maxPartCount;
    }

    /** The smallest part of a multipart upload, the last part excepted. */
    public long minPartSize() {
        return minPartSize;
    }

    /** The largest part of a multipart upload, and the largest body the S3 provider sends in one PUT. */
    public long maxPartSize() {
        return maxPartSize;
    }

    /** The largest page {@link ArtifactStore#list} answers; larger requests are cut to it. */
    public int listLimit() {
        return listLimit;
    }

    /** The HMAC key of the filesystem provider's signed URLs (a copy). */
    public byte[] signingSecret() {
        return signingSecret.clone();
    }

    /** False when no secret was configured and a random one was drawn: signed URLs then die with the process. */
    public boolean signingSecretConfigured() {
        return signingSecretGiven;
    }

    public Optional<URI> s3Endpoint() {
        return s3Endpoint;
    }

    public String s3Region() {
        return s3Region;
    }

    public String s3Bucket() {
        return s3Bucket;
    }

    public String s3AccessKey() {
        return s3AccessKey;
    }

    public String s3SecretKey() {
        return s3SecretKey;
    }

    /** True for path-style addressing ({@code http://host/bucket/key}), false for virtual hosts ({@code http://bucket.host/key}). */
    public boolean s3PathStyle() {
        return s3PathStyle;
    }

    public boolean s3CreateBucket() {
        return s3CreateBucket;
    }

    /** The clock of expiry decisions; settable in code only (tests). */
    public Clock clock() {
        return clock;
    }

    /**
     * How long the {@code filesystem} provider waits before it wires jclouds in the background, unless
     * a call needs the store first (code only: a restart's new process, whose returning clients need
     * the CPU more in their first seconds). Zero: at once.
     */
    public java.time.Duration wiringDelay() {
        return wiringDelay;
    }

    @Override
    public String toString() {
        return "ArtifactConfig{provider=" + provider.key()
                + ", data-dir=" + dataDir
                + ", public-base-url=" + publicBaseUrl
                + ", upload-lifetime=" + uploadLifetime
                + ", presign-ttl=" + presignTtl
                + ", max-object-size=" + maxObjectSize
                + ", max-part-count=" + maxPartCount
                + ", min-part-size=" + minPartSize
                + ", max-part-size=" + maxPartSize
                + ", list-limit=" + listLimit
                + ", signing-secret=" + (signingSecretGiven ? "(set)" : "(random)")
                + ", s3.endpoint=" + s3Endpoint.map(URI::toString).orElse("(none)")
                + ", s3.region=" + s3Region
                + ", s3.bucket=" + s3Bucket
                + ", s3.access-key=" + (s3AccessKey.isEmpty() ? "(none)" : "(set)")
                + ", s3.secret-key=" + (s3SecretKey.isEmpty() ? "(none)" : "(set)")
                + ", s3.path-style=" + s3PathStyle
                + ", s3.create-bucket=" + s3CreateBucket + "}";
    }

    private static byte[] randomSecret() {
        byte[] b = new byte[32];
        new SecureRandom().nextBytes(b);
        return b;
    }

    /**
     * Parses a size: a number of bytes, optionally followed by {@code B}, {@code K}/{@code KiB},
     * {@code M}/{@code MiB}, {@code G}/{@code GiB} or {@code T}/{@code TiB} (all binary).
     */
    public static long parseSize(String text) {
        String t = text.trim();
        int i = 0;
        while (i < t.length() && Character.isDigit(t.charAt(i))) {
            i++;
        }
        if (i == 0) {
            throw new IllegalArgumentException("not a size: '" + text + "'");
        }
        long n = Long.parseLong(t.substring(0, i));
        String unit = t.substring(i).trim().toLowerCase(Locale.ROOT);
        long mult = switch (unit) {
            case "", "b" -> 1L;
            case "k", "kib", "kb" -> 1024L;
            case "m", "mib", "mb" -> MIB;
            case "g", "gib", "gb" -> 1024L * MIB;
            case "t", "tib", "tb" -> 1024L * 1024L * MIB;
            default -> throw new IllegalArgumentException("unknown size unit in '" + text + "'");
        };
        return Math.multiplyExact(n, mult);
    }

    /** Parses a duration: ISO-8601 ({@code PT24H}) or a number with {@code ms}, {@code s}, {@code m}, {@code h} or {@code d}. */
    public static Duration parseDuration(String text) {
        String t = text.trim();
        if (t.regionMatches(true, 0, "P", 0, 1)) {
            try {
                return Duration.parse(t);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException("not a duration: '" + text + "'", e);
            }
        }
        int i = 0;
        while (i < t.length() && Character.isDigit(t.charAt(i))) {
            i++;
        }
        if (i == 0) {
            throw new IllegalArgumentException("not a duration: '" + text + "'");
        }
        long n = Long.parseLong(t.substring(0, i));
        return switch (t.substring(i).trim().toLowerCase(Locale.ROOT)) {
            case "ms" -> Duration.ofMillis(n);
            case "s", "" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            case "d" -> Duration.ofDays(n);
            default -> throw new IllegalArgumentException("unknown duration unit in '" + text + "'");
        };
    }

    /** Builds an {@link ArtifactConfig}. Not thread-safe; use from one thread. */
    public static final class Builder {
        private Provider provider = Provider.FILESYSTEM;
        private Path dataDir = Path.of("data");
        private Path blobDir;
        private URI publicBaseUrl = URI.create("http://localhost:8080");
        private Duration uploadLifetime = Duration.ofHours(24);
        private Duration presignTtl = Duration.ofHours(1);
        private long maxObjectSize = 5L * 1024 * 1024 * MIB;
        private int maxPartCount = 10_000;
        private long minPartSize = 5 * MIB;
        private long maxPartSize = 5L * 1024 * MIB;
        private int listLimit = 1000;
        private byte[] signingSecret;
        private URI s3Endpoint;
        private String s3Region = "us-east-1";
        private String s3Bucket = "hypha-artifacts";
        private String s3AccessKey = "";
        private String s3SecretKey = "";
        private boolean s3PathStyle = true;
        private boolean s3CreateBucket = true;
        private Clock clock = Clock.systemUTC();
        private java.time.Duration wiringDelay = java.time.Duration.ZERO;

        private Builder() {
        }

        /** Sets a key of the README table from its text form; an unknown key or bad value is an {@link IllegalArgumentException}. */
        public Builder set(String key, String value) {
            Objects.requireNonNull(value, key);
            try {
                switch (key) {
                    case PROVIDER -> provider(Provider.of(value));
                    case DATA_DIR -> dataDir(Path.of(value));
                    case PUBLIC_BASE_URL -> publicBaseUrl(URI.create(value.trim()));
                    case UPLOAD_LIFETIME -> uploadLifetime(parseDuration(value));
                    case PRESIGN_TTL -> presignTtl(parseDuration(value));
                    case MAX_OBJECT_SIZE -> maxObjectSize(parseSize(value));
                    case MAX_PART_COUNT -> maxPartCount(Integer.parseInt(value.trim()));
                    case MIN_PART_SIZE -> minPartSize(parseSize(value));
                    case MAX_PART_SIZE -> maxPartSize(parseSize(value));
                    case LIST_LIMIT -> listLimit(Integer.parseInt(value.trim()));
                    case SIGNING_SECRET -> signingSecret(decodeSecret(value));
                    case S3_ENDPOINT -> s3Endpoint(URI.create(value.trim()));
                    case S3_REGION -> s3Region(value.trim());
                    case S3_BUCKET -> s3Bucket(value.trim());
                    case S3_ACCESS_KEY -> s3AccessKey(value);
                    case S3_SECRET_KEY -> s3SecretKey(value);
                    case S3_PATH_STYLE -> s3PathStyle(parseBoolean(key, value));
                    case S3_CREATE_BUCKET -> s3CreateBucket(parseBoolean(key, value));
                    default -> throw new IllegalArgumentException("unknown artifact config key '" + key + "'");
                }
            } catch (NumberFormatException | ArithmeticException e) {
                throw new IllegalArgumentException("bad value for " + key + ": '" + value + "'", e);
            }
            return this;
        }

        public Builder provider(Provider provider) {
            this.provider = Objects.requireNonNull(provider);
            return this;
        }

        public Builder dataDir(Path dataDir) {
            this.dataDir = Objects.requireNonNull(dataDir);
            return this;
        }

        /** The filesystem provider's directory; null for {@code <data-dir>/blobs}. */
        public Builder blobDir(Path blobDir) {
            this.blobDir = blobDir;
            return this;
        }

        public Builder publicBaseUrl(URI publicBaseUrl) {
            this.publicBaseUrl = Objects.requireNonNull(publicBaseUrl);
            return this;
        }

        public Builder uploadLifetime(Duration uploadLifetime) {
            this.uploadLifetime = Objects.requireNonNull(uploadLifetime);
            return this;
        }

        public Builder presignTtl(Duration presignTtl) {
            this.presignTtl = Objects.requireNonNull(presignTtl);
            return this;
        }

        public Builder maxObjectSize(long maxObjectSize) {
            this.maxObjectSize = maxObjectSize;
            return this;
        }

        public Builder maxPartCount(int maxPartCount) {
            this.maxPartCount = maxPartCount;
            return this;
        }

        public Builder minPartSize(long minPartSize) {
            this.minPartSize = minPartSize;
            return this;
        }

        public Builder maxPartSize(long maxPartSize) {
            this.maxPartSize = maxPartSize;
            return this;
        }

        public Builder listLimit(int listLimit) {
            this.listLimit = listLimit;
            return this;
        }

        /** The HMAC key of the filesystem provider's signed URLs, at least 16 bytes (copied). */
        public Builder signingSecret(byte[] secret) {
            this.signingSecret = secret.clone();
            return this;
        }

        public Builder s3Endpoint(URI endpoint) {
            this.s3Endpoint = Objects.requireNonNull(endpoint);
            return this;
        }

        public Builder s3Region(String region) {
            this.s3Region = Objects.requireNonNull(region);
            return this;
        }

        public Builder s3Bucket(String bucket) {
            this.s3Bucket = Objects.requireNonNull(bucket);
            return this;
        }

        public Builder s3AccessKey(String accessKey) {
            this.s3AccessKey = Objects.requireNonNull(accessKey);
            return this;
        }

        public Builder s3SecretKey(String secretKey) {
            this.s3SecretKey = Objects.requireNonNull(secretKey);
            return this;
        }

        public Builder s3PathStyle(boolean pathStyle) {
            this.s3PathStyle = pathStyle;
            return this;
        }

        public Builder s3CreateBucket(boolean createBucket) {
            this.s3CreateBucket = createBucket;
            return this;
        }

        /** The clock of expiry decisions (code only; tests move it). */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock);
            return this;
        }

        /** See {@link ArtifactConfig#wiringDelay()} (code only). */
        public Builder wiringDelay(java.time.Duration delay) {
            require(!delay.isNegative(), "wiring delay must not be negative");
            this.wiringDelay = delay;
            return this;
        }

        /** Checks the values against each other and builds; a bad combination is an {@link IllegalArgumentException}. */
        public ArtifactConfig build() {
            require(minPartSize >= 1, "min-part-size must be at least 1 byte");
            require(maxPartSize >= minPartSize, "max-part-size must be at least min-part-size");
            require(maxPartCount >= 1, "max-part-count must be at least 1");
            require(maxObjectSize >= 0, "max-object-size must not be negative");
            require(listLimit >= 1, "list-limit must be at least 1");
            require(!uploadLifetime.isNegative() && !uploadLifetime.isZero(), "upload-lifetime must be positive");
            require(!presignTtl.isNegative() && !presignTtl.isZero(), "presign-ttl must be positive");
            require(signingSecret == null || signingSecret.length >= 16, "signing-secret must hold at least 16 bytes");
            String scheme = publicBaseUrl.getScheme();
            require(("http".equals(scheme) || "https".equals(scheme)) && publicBaseUrl.getHost() != null
                    && publicBaseUrl.getRawQuery() == null && publicBaseUrl.getRawFragment() == null,
                    "public-base-url must be an http(s) URL without query: " + publicBaseUrl);
            if (publicBaseUrl.getRawPath() != null && publicBaseUrl.getRawPath().endsWith("/")) {
                String p = publicBaseUrl.toString();
                publicBaseUrl = URI.create(p.substring(0, p.length() - 1));
            }
            if (provider == Provider.S3) {
                require(s3Endpoint != null, "the s3 provider needs s3.endpoint");
                require(("http".equals(s3Endpoint.getScheme()) || "https".equals(s3Endpoint.getScheme()))
                        && s3Endpoint.getHost() != null, "s3.endpoint must be an http(s) URL: " + s3Endpoint);
                require(s3Endpoint.getRawPath() == null || s3Endpoint.getRawPath().isEmpty()
                        || s3Endpoint.getRawPath().equals("/"), "s3.endpoint must not have a path: " + s3Endpoint);
                require(s3Endpoint.getRawQuery() == null, "s3.endpoint must not have a query: " + s3Endpoint);
                require(!s3AccessKey.isEmpty() && !s3SecretKey.isEmpty(), "the s3 provider needs s3.access-key and s3.secret-key");
                require(s3Bucket.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"), "s3.bucket is not a valid bucket name: " + s3Bucket);
                require(s3Region.matches("[A-Za-z0-9-]{1,64}"), "s3.region is not a region name: " + s3Region);
                try {
                    s3Endpoint = new URI(s3Endpoint.getScheme(), null, s3Endpoint.getHost(), s3Endpoint.getPort(), null, null, null);
                } catch (URISyntaxException e) {
                    throw new IllegalArgumentException("bad s3.endpoint " + s3Endpoint, e);
                }
            }
            return new ArtifactConfig(this);
        }

        private static boolean parseBoolean(String key, String value) {
            return switch (value.trim().toLowerCase(Locale.ROOT)) {
                case "true", "yes", "1", "on" -> true;
                case "false", "no", "0", "off" -> false;
                default -> throw new IllegalArgumentException(key + " must be true or false, got '" + value + "'");
            };
        }

        private static byte[] decodeSecret(String value) {
            try {
                return Base64.getDecoder().decode(value.trim());
            } catch (IllegalArgumentException e) {
                try {
                    return Base64.getUrlDecoder().decode(value.trim());
                } catch (IllegalArgumentException e2) {
                    throw new IllegalArgumentException("signing-secret must be base64", e2);
                }
            }
        }

        private static void require(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
